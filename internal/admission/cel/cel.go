// Package cel compiles and evaluates the CEL expressions of admission:
// ValidatingAdmissionPolicy validations, message expressions, variables
// and match conditions, and the match conditions of admission webhooks.
//
// Expressions are compiled by k8s.io/apiserver's admission CEL compiler
// (admission/plugin/cel) over kube's base environment (cel/environment)
// for the default compatibility version of kube-apiserver v1.37, in its
// stored-expressions mode, as kube-apiserver evaluates policies: the same
// libraries (quantity(), url(), ip(), cidr(), format.*, isSorted() and the
// list functions, regex, semver, cel-go's strings, sets, lists and
// two-variable comprehensions), the same declarations (object, oldObject
// and params dynamic; request and namespaceObject typed; authorizer and
// authorizer.requestResource; variables typed by their expressions), the
// same per-call cost limit. Objects are their JSON form (maps, lists,
// strings, int64, double, bool, null), as kube's schemaless values.
//
// What is minik's own is the evaluation: the activation is built from
// minik's admission.Attributes (kube's evaluator reads k8s.io/apiserver's
// admission.Attributes and VersionedAttributes, which minik's REST layer
// does not produce), variables are evaluated eagerly, in order, each once,
// and the runtime cost budget of a binding is kept by the caller (Budget).
package cel

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"

	"minik/internal/admission"
	"minik/internal/auth"
)

// PerCallLimit bounds the cost of evaluating one expression: kube's
// runtime cost limit per call (set by the base environment).
const PerCallLimit = celconfig.PerCallLimit

// RuntimeCostBudget bounds the cost of evaluating one binding's
// expressions, as kube's RuntimeCELCostBudget does.
const RuntimeCostBudget = celconfig.RuntimeCELCostBudget

// Names of the variables an expression may read.
const (
	VarObject          = plugincel.ObjectVarName
	VarOldObject       = plugincel.OldObjectVarName
	VarRequest         = plugincel.RequestVarName
	VarParams          = plugincel.ParamsVarName
	VarNamespaceObject = plugincel.NamespaceVarName
	VarVariables       = plugincel.VariableVarName
	VarAuthorizer      = plugincel.AuthorizerVarName
	// VarRequestResource is authorizer.requestResource.
	VarRequestResource = plugincel.RequestResourceAuthorizerVarName
)

// declarations are the optional variables every expression may read, as
// a ValidatingAdmissionPolicy's: params (null without a paramKind) and the
// authorizer.
var declarations = plugincel.OptionalVariableDeclarations{HasParams: true, HasAuthorizer: true}

// Compiler compiles expressions in the admission environment. It is safe
// for concurrent use.
type Compiler struct {
	base *environment.EnvSet
	comp *plugincel.CompositedCompiler
}

// NewCompiler builds the admission environment, with no variables
// declared.
func NewCompiler() (*Compiler, error) {
	base := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	comp, err := plugincel.NewCompositedCompiler(base)
	if err != nil {
		return nil, fmt.Errorf("build CEL environment: %w", err)
	}
	return &Compiler{base: base, comp: comp}, nil
}

// expression is an expression to compile, of any result type (kube
// requires bool of validations only when the policy is written, which
// the registry's validation checks).
type expression struct {
	name, expr string
}

func (e expression) GetExpression() string      { return e.expr }
func (e expression) ReturnTypes() []*celgo.Type { return []*celgo.Type{celgo.AnyType} }
func (e expression) GetName() string            { return e.name }

// WithVariables returns a compiler for one policy, whose environment
// declares its variables, compiled in order (each may read those before
// it), as variables.<name> typed by its expression; and the variables.
// A variable that does not compile keeps its error.
func (c *Compiler) WithVariables(names, exprs []string) (*Compiler, []Variable, error) {
	comp, err := plugincel.NewCompositedCompiler(c.base)
	if err != nil {
		return nil, nil, fmt.Errorf("build CEL environment: %w", err)
	}
	vars := make([]Variable, len(names))
	for i, name := range names {
		res := comp.CompileAndStoreVariable(expression{name: name, expr: exprs[i]}, declarations, environment.StoredExpressions)
		p, err := program(exprs[i], res)
		vars[i] = Variable{Name: name, Program: p, Err: err}
	}
	return &Compiler{base: c.base, comp: comp}, vars, nil
}

// Compile compiles and plans an expression. Its error reads as kube's:
// "compilation failed: ERROR: <input>:1:7: ...".
func (c *Compiler) Compile(expr string) (*Program, error) {
	res := c.comp.CompileCELExpression(expression{expr: expr}, declarations, environment.StoredExpressions)
	return program(expr, res)
}

// CompileMutation compiles a MutatingAdmissionPolicy's mutation: with
// jsonPatch, a JSONPatch expression (a list of JSONPatch values), else an
// ApplyConfiguration expression (an Object value), both with the patch
// types (Object{...}, JSONPatch{...}) declared, as kube checks them when
// a policy is written. Its error reads as Compile's.
func (c *Compiler) CompileMutation(expr string, jsonPatch bool) (*Program, error) {
	var acc plugincel.ExpressionAccessor = &patch.ApplyConfigurationCondition{Expression: expr}
	if jsonPatch {
		acc = &patch.JSONPatchCondition{Expression: expr}
	}
	opts := declarations
	opts.HasPatchTypes = true
	return program(expr, c.comp.CompileCELExpression(acc, opts, environment.StoredExpressions))
}

func program(expr string, res plugincel.CompilationResult) (*Program, error) {
	if res.Error != nil {
		return nil, res.Error
	}
	return &Program{Expression: expr, prg: res.Program}, nil
}

// Program is a compiled expression.
type Program struct {
	// Expression is the source text.
	Expression string
	prg        celgo.Program
}

// Activation holds the values of the variables for one evaluation. A nil
// field reads as null.
type Activation struct {
	Object          any
	OldObject       any
	Request         any
	Params          any
	NamespaceObject any
	// Variables are the policy's variables, evaluated in order (see
	// EvalVariables).
	Variables map[string]ref.Val
	// Authorizer and RequestResource are the authorizer and
	// authorizer.requestResource variables (see WithAuthorizer); unset,
	// an expression reading them fails.
	Authorizer, RequestResource ref.Val
	// Budget, when set, is the runtime cost left to the evaluations that
	// share it (a binding's); each evaluation spends its actual cost.
	Budget *int64
}

// WithAuthorizer sets the authorizer variables: authorizer asks minik's
// authorizer about the requesting user, authorizer.requestResource about
// the request's own resource, as in kube.
func (a *Activation) WithAuthorizer(attrs *admission.Attributes, authz auth.Authorizer) {
	if authz == nil {
		return
	}
	k := auth.KubeAuthorizer{Authorizer: authz}
	user := attrs.User.Info()
	a.Authorizer = library.NewAuthorizerVal(user, k)
	a.RequestResource = library.NewResourceAuthorizerVal(user, k, requestResource{attrs})
}

// requestResource is the request's resource as the authorizer library
// reads it.
type requestResource struct{ a *admission.Attributes }

func (r requestResource) GetName() string                          { return r.a.Name }
func (r requestResource) GetNamespace() string                     { return r.a.Namespace }
func (r requestResource) GetResource() schema.GroupVersionResource { return r.a.Resource }
func (r requestResource) GetSubresource() string                   { return r.a.Subresource }

func (a *Activation) vars() map[string]any {
	m := map[string]ref.Val{}
	for k, v := range a.Variables {
		m[k] = v
	}
	vars := map[string]any{
		VarObject:          nullable(a.Object),
		VarOldObject:       nullable(a.OldObject),
		VarRequest:         nullable(a.Request),
		VarParams:          nullable(a.Params),
		VarNamespaceObject: nullable(a.NamespaceObject),
		VarVariables:       variablesMap(m),
	}
	if a.Authorizer != nil {
		vars[VarAuthorizer] = a.Authorizer
		vars[VarRequestResource] = a.RequestResource
	}
	return vars
}

func nullable(v any) any {
	if v == nil {
		return types.NullValue
	}
	return v
}

func variablesMap(m map[string]ref.Val) ref.Val {
	vals := make(map[ref.Val]ref.Val, len(m))
	for k, v := range m {
		vals[types.String(k)] = v
	}
	return types.NewRefValMap(types.DefaultTypeAdapter, vals)
}

// ErrOutOfBudget reports that the evaluations sharing a budget spent it.
var ErrOutOfBudget = errors.New("validation failed due to running out of cost budget, no further validation rules will be run")

// Eval evaluates a program, spending its cost from a.Budget. Its error
// reads as kube's: "expression '<expr>' resulted in error: <cause>".
func (p *Program) Eval(a *Activation) (ref.Val, error) {
	out, details, err := p.prg.Eval(a.vars())
	if a.Budget != nil && details != nil && details.ActualCost() != nil {
		cost := *details.ActualCost()
		if cost > uint64(max(*a.Budget, 0)) {
			*a.Budget = -1
			return nil, ErrOutOfBudget
		}
		*a.Budget -= int64(cost)
	}
	if err != nil {
		return nil, fmt.Errorf("expression '%s' resulted in error: %w", p.Expression, err)
	}
	return out, nil
}

// EvalBool evaluates a program that should yield a boolean; anything else
// counts as false.
func (p *Program) EvalBool(a *Activation) (bool, error) {
	out, err := p.Eval(a)
	if err != nil {
		return false, err
	}
	return out == types.True, nil
}

// EvalString evaluates a program that must yield a string.
func (p *Program) EvalString(a *Activation) (string, error) {
	out, err := p.Eval(a)
	if err != nil {
		return "", err
	}
	s, ok := out.Value().(string)
	if !ok {
		return "", fmt.Errorf("expression '%s' resulted in error: got %s, want string", p.Expression, out.Type().TypeName())
	}
	return s, nil
}

// Variable is a named, compiled variable.
type Variable struct {
	Name    string
	Program *Program
	// Err is the compile error, when the variable did not compile.
	Err error
}

// EvalVariables evaluates variables in order into a.Variables, each seeing
// those before it. A variable that fails holds its error, which surfaces
// only in an expression that reads it (kube evaluates variables lazily).
func EvalVariables(vars []Variable, a *Activation) {
	if a.Variables == nil {
		a.Variables = map[string]ref.Val{}
	}
	for _, v := range vars {
		if v.Err != nil {
			a.Variables[v.Name] = types.WrapErr(v.Err)
			continue
		}
		out, err := v.Program.Eval(a)
		if err != nil {
			a.Variables[v.Name] = types.WrapErr(err)
			continue
		}
		a.Variables[v.Name] = out
	}
}

// ErrNotBool reports a match condition that did not yield a boolean.
var ErrNotBool = errors.New("expression did not evaluate to a boolean")

// Condition is a named, compiled match condition.
type Condition struct {
	Name    string
	Program *Program
	// Err is the compile error, when the condition did not compile.
	Err error
}

// CompileConditions compiles match conditions; one that does not compile
// keeps its error, reported when it is evaluated.
func (c *Compiler) CompileConditions(names, exprs []string) []Condition {
	out := make([]Condition, len(names))
	for i := range names {
		p, err := c.Compile(exprs[i])
		out[i] = Condition{Name: names[i], Program: p, Err: err}
	}
	return out
}

// Match evaluates match conditions as kube does: any condition that is
// false means no match (whatever the others' errors); otherwise an error
// of any condition is returned, and the caller applies its failure
// policy; otherwise all are true and it is a match.
func Match(conds []Condition, a *Activation) (bool, error) {
	var errs []error
	for _, c := range conds {
		if c.Err != nil {
			errs = append(errs, fmt.Errorf("matchCondition '%s': %w", c.Name, c.Err))
			continue
		}
		out, err := c.Program.Eval(a)
		if err != nil {
			errs = append(errs, fmt.Errorf("matchCondition '%s': %w", c.Name, err))
			continue
		}
		b, ok := out.Value().(bool)
		if !ok {
			errs = append(errs, fmt.Errorf("matchCondition '%s': %w", c.Name, ErrNotBool))
			continue
		}
		if !b {
			return false, nil
		}
	}
	if len(errs) > 0 {
		return false, errors.Join(errs...)
	}
	return true, nil
}

// ObjectValue is an object as CEL sees it: its JSON form with apiVersion
// and kind, integers as int64. A nil object is null.
func ObjectValue(obj runtime.Object, gvk schema.GroupVersionKind) (any, error) {
	if obj == nil || reflect.ValueOf(obj).IsNil() {
		return nil, nil
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %s for CEL: %w", gvk.Kind, err)
	}
	if !gvk.Empty() {
		u["apiVersion"], u["kind"] = gvk.GroupVersion().String(), gvk.Kind
	}
	return u, nil
}

// RequestValue is the request variable: the AdmissionRequest of the
// request without its objects.
func RequestValue(a *admission.Attributes) (any, error) {
	req, err := admission.AdmissionRequest(a)
	if err != nil {
		return nil, err
	}
	var opts map[string]any
	if len(req.Options.Raw) > 0 {
		_ = json.Unmarshal(req.Options.Raw, &opts)
	}
	req.Object, req.OldObject, req.Options = runtime.RawExtension{}, runtime.RawExtension{}, runtime.RawExtension{}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(req)
	if err != nil {
		return nil, fmt.Errorf("convert the request for CEL: %w", err)
	}
	delete(u, "object")
	delete(u, "oldObject")
	if opts != nil {
		u["options"] = opts
	} else {
		delete(u, "options")
	}
	return u, nil
}

// NewActivation builds the variables of a request: object, oldObject,
// request and namespaceObject (nil for cluster-scoped requests).
func NewActivation(a *admission.Attributes, ns *corev1.Namespace) (*Activation, error) {
	obj, err := ObjectValue(a.Object, a.Kind)
	if err != nil {
		return nil, err
	}
	old, err := ObjectValue(a.OldObject, a.Kind)
	if err != nil {
		return nil, err
	}
	req, err := RequestValue(a)
	if err != nil {
		return nil, err
	}
	act := &Activation{Object: obj, OldObject: old, Request: req}
	if ns != nil {
		if act.NamespaceObject, err = ObjectValue(ns, corev1.SchemeGroupVersion.WithKind("Namespace")); err != nil {
			return nil, err
		}
	}
	return act, nil
}
