// Package cel compiles and evaluates the CEL expressions of admission:
// ValidatingAdmissionPolicy validations, message expressions, variables
// and match conditions, and the match conditions of admission webhooks.
//
// The environment declares the variables kube's admission CEL declares —
// object, oldObject, request, params, namespaceObject and variables — with
// dynamic types: objects are their JSON form (maps, lists, strings, int64,
// double, bool, null), so `object.spec.replicas <= 5`,
// `has(object.metadata.labels)` and `object.metadata.name.startsWith("x")`
// work as on a cluster. Expressions are checked when compiled, but field
// names and types are checked only when evaluated (kube checks them
// against the kind's OpenAPI schema and reports warnings).
//
// Libraries: CEL's standard functions, optional types, and cel-go's
// strings (version 2), sets, lists, math, base64 encoders and two-variable
// comprehensions. Kubernetes' own libraries (quantity(), url(), ip(),
// cidr(), isSorted(), authorizer) are not available.
package cel

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minik/internal/admission"
)

// PerCallLimit bounds the cost of evaluating one expression, as kube's
// runtime cost budget per call does.
const PerCallLimit = 1000000

// Names of the variables an expression may read.
const (
	VarObject          = "object"
	VarOldObject       = "oldObject"
	VarRequest         = "request"
	VarParams          = "params"
	VarNamespaceObject = "namespaceObject"
	VarVariables       = "variables"
)

// Compiler compiles expressions in the admission environment. It is safe
// for concurrent use.
type Compiler struct {
	env *cel.Env
}

// NewCompiler builds the admission environment.
func NewCompiler() (*Compiler, error) {
	env, err := cel.NewEnv(
		cel.Variable(VarObject, cel.DynType),
		cel.Variable(VarOldObject, cel.DynType),
		cel.Variable(VarRequest, cel.DynType),
		cel.Variable(VarParams, cel.DynType),
		cel.Variable(VarNamespaceObject, cel.DynType),
		cel.Variable(VarVariables, cel.MapType(cel.StringType, cel.DynType)),
		cel.HomogeneousAggregateLiterals(),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		ext.Lists(),
		ext.Math(),
		ext.Encoders(),
		ext.TwoVarComprehensions(),
	)
	if err != nil {
		return nil, fmt.Errorf("build CEL environment: %w", err)
	}
	return &Compiler{env: env}, nil
}

// Program is a compiled expression.
type Program struct {
	// Expression is the source text.
	Expression string
	prg        cel.Program
}

// Compile compiles and plans an expression. Its error reads as kube's:
// "compilation failed: ERROR: <input>:1:7: ...".
func (c *Compiler) Compile(expr string) (*Program, error) {
	ast, iss := c.env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, fmt.Errorf("compilation failed: %s", iss.Err())
	}
	prg, err := c.env.Program(ast, cel.CostLimit(PerCallLimit), cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return nil, fmt.Errorf("compilation failed: %w", err)
	}
	return &Program{Expression: expr, prg: prg}, nil
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
}

func (a *Activation) vars() map[string]any {
	m := map[string]ref.Val{}
	for k, v := range a.Variables {
		m[k] = v
	}
	return map[string]any{
		VarObject:          nullable(a.Object),
		VarOldObject:       nullable(a.OldObject),
		VarRequest:         nullable(a.Request),
		VarParams:          nullable(a.Params),
		VarNamespaceObject: nullable(a.NamespaceObject),
		VarVariables:       variablesMap(m),
	}
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

// Eval evaluates a program. Its error reads as kube's: "expression
// '<expr>' resulted in error: <cause>".
func (p *Program) Eval(a *Activation) (ref.Val, error) {
	out, _, err := p.prg.Eval(a.vars())
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
