// Package mutatingpolicy is the MutatingAdmissionPolicy admission
// plugin: the admissionregistration.k8s.io/v1 MutatingAdmissionPolicies
// and their bindings (read from an informer cache) change the objects of
// create and update requests with CEL, without a webhook, as in
// kube-apiserver.
//
// For each binding (by name) whose policy matches a request (the
// policy's matchConstraints, then the binding's matchResources), and for
// each parameter object its paramRef selects, the policy's variables and
// matchConditions are evaluated, then its mutations in order, each on the
// object as the mutations before it left it: a JSONPatch expression's
// patch is applied to the object's JSON (a failed "test" leaves the
// object as it is), an ApplyConfiguration expression's Object is merged
// into it with structured-merge-diff over the built-in kinds' schemas.
// Evaluation errors follow the policy's failurePolicy: Fail refuses the
// request with kube's message ("policy 'p' with binding 'b' denied
// request: ..."), Ignore skips the binding.
//
// A policy with reinvocationPolicy IfNeeded runs once more when a policy
// after it changed the object. Differences from kube: that reinvocation
// is within the policies (kube also reinvokes them after a mutating
// webhook's change), and an ApplyConfiguration mutation of a custom
// resource merges by the values' shapes (lists whole) where kube reads
// the definition's schema.
package mutatingpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"sync"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"google.golang.org/protobuf/types/known/structpb"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/cel/mutation"
	"k8s.io/apiserver/pkg/cel/mutation/dynamic"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	admissionlisters "k8s.io/client-go/listers/admissionregistration/v1"

	"minik/internal/admission"
	"minik/internal/admission/cel"
	"minik/internal/admission/match"
	"minik/internal/admission/policy"
	"minik/internal/auth"
)

// Name is the plugin's name, as kube's.
const Name = "MutatingAdmissionPolicy"

// Config configures the plugin.
type Config struct {
	// Policies and Bindings read from an informer cache. Required.
	Policies admissionlisters.MutatingAdmissionPolicyLister
	Bindings admissionlisters.MutatingAdmissionPolicyBindingLister
	// Namespaces reads namespaces for namespaceSelector and
	// namespaceObject. Required.
	Namespaces match.NamespaceGetter
	// Params reads parameter objects; nil makes every paramKind unknown.
	Params policy.ParamSource
	// Compiler compiles expressions; nil makes one.
	Compiler *cel.Compiler
	// Authorizer answers the expressions' authorizer checks; nil leaves
	// the authorizer variables unset.
	Authorizer auth.Authorizer
	// HasSynced tells whether the caches are filled. Optional.
	HasSynced func() bool
	// Equivalents lists equivalent resources for matchPolicy Equivalent.
	Equivalents match.Equivalents
	// Default re-applies a resource's defaults to an object a policy
	// changed, as kube defaults after each mutation; nil does not.
	Default func(obj runtime.Object)
}

// Plugin is the MutatingAdmissionPolicy plugin.
type Plugin struct {
	cfg Config

	mu       sync.Mutex
	compiled map[string]*compiled
}

// New validates cfg and builds the plugin.
func New(cfg Config) (*Plugin, error) {
	if cfg.Policies == nil || cfg.Bindings == nil || cfg.Namespaces == nil {
		return nil, errors.New("mutatingpolicy: policy and binding listers and a namespace getter are required")
	}
	if cfg.Compiler == nil {
		c, err := cel.NewCompiler()
		if err != nil {
			return nil, err
		}
		cfg.Compiler = c
	}
	return &Plugin{cfg: cfg, compiled: map[string]*compiled{}}, nil
}

// Name implements admission.Mutator.
func (*Plugin) Name() string { return Name }

// typeConverter converts the built-in kinds to structured values, for
// ApplyConfiguration mutations; built once, when first needed.
var typeConverter = sync.OnceValue(func() managedfields.TypeConverter {
	return applyconfigurations.NewTypeConverter(clientgoscheme.Scheme)
})

// compiled is a policy version's compiled expressions.
type compiled struct {
	resourceVersion string
	variables       []cel.Variable
	conditions      []cel.Condition
	mutations       []compiledMutation
}

type compiledMutation struct {
	jsonPatch bool
	program   *cel.Program
	err       error
}

func (p *Plugin) compile(pol *admissionregistrationv1.MutatingAdmissionPolicy) *compiled {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.compiled[pol.Name]; ok && c.resourceVersion == pol.ResourceVersion {
		return c
	}
	c := &compiled{resourceVersion: pol.ResourceVersion}
	compiler, vars, conds, envErr := policy.CompileEnv(p.cfg.Compiler, pol.Spec.Variables, pol.Spec.MatchConditions)
	c.variables, c.conditions = vars, conds
	for _, m := range pol.Spec.Mutations {
		cm := compiledMutation{jsonPatch: m.PatchType == admissionregistrationv1.PatchTypeJSONPatch}
		switch {
		case envErr != nil:
			cm.err = envErr
		case cm.jsonPatch && m.JSONPatch != nil:
			cm.program, cm.err = compiler.CompileMutation(m.JSONPatch.Expression, true)
		case !cm.jsonPatch && m.ApplyConfiguration != nil:
			cm.program, cm.err = compiler.CompileMutation(m.ApplyConfiguration.Expression, false)
		default:
			cm.err = fmt.Errorf("mutation of patch type %q has no expression", m.PatchType)
		}
		c.mutations = append(c.mutations, cm)
	}
	p.compiled[pol.Name] = c
	return c
}

// policyError is a binding's failure, as kube's PolicyError reads.
type policyError struct {
	policy, binding string
	err             error
}

func (e policyError) Error() string {
	return fmt.Sprintf("policy '%s' with binding '%s' denied request: %s", e.policy, e.binding, e.err.Error())
}

// invocation is a matching binding's policy with one parameter object.
type invocation struct {
	c        *compiled
	param    map[string]any
	fail     func(error)
	ifNeeded bool
}

// Admit implements admission.Mutator.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Object == nil || match.Exempt(a) || (a.Operation != admission.Create && a.Operation != admission.Update) {
		return nil
	}
	if p.cfg.HasSynced != nil && !p.cfg.HasSynced() {
		return admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	bindings, err := p.cfg.Bindings.List(labels.Everything())
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if len(bindings) == 0 {
		return nil
	}
	sort.Slice(bindings, func(i, j int) bool { return bindings[i].Name < bindings[j].Name })
	var failures []policyError
	var invocations []invocation
	var ns *corev1.Namespace
	nsRead := false
	for _, b := range bindings {
		pol, err := p.cfg.Policies.Get(b.Spec.PolicyName)
		if err != nil {
			continue
		}
		fail := func(err error) {
			if pol.Spec.FailurePolicy == nil || *pol.Spec.FailurePolicy != admissionregistrationv1.Ignore {
				failures = append(failures, policyError{policy: pol.Name, binding: b.Name, err: err})
			}
		}
		ok, err := p.matches(ctx, pol, b, a)
		if err != nil {
			fail(err)
			continue
		}
		if !ok {
			continue
		}
		if !nsRead && a.Namespace != "" && a.Kind.Kind != "Namespace" {
			got, err := p.cfg.Namespaces(ctx, a.Namespace)
			if err != nil && !apierrors.IsNotFound(err) {
				return apierrors.NewInternalError(err)
			}
			ns, nsRead = got, true
		}
		params, err := policy.Params(ctx, p.cfg.Params, pol.Spec.ParamKind, b.Spec.ParamRef, a)
		if err != nil {
			fail(fmt.Errorf("failed to configure binding: %w", err))
			continue
		}
		c := p.compile(pol)
		ifNeeded := pol.Spec.ReinvocationPolicy == admissionregistrationv1.IfNeededReinvocationPolicy
		for _, param := range params {
			invocations = append(invocations, invocation{c: c, param: param, fail: fail, ifNeeded: ifNeeded})
		}
	}
	// The invocations run in order; one whose policy asks to be
	// reinvoked IfNeeded runs once more, after the others, when an
	// invocation after it changed the object, as kube reinvokes it.
	var invoked []int
	reinvoke := map[int]bool{}
	run := func(i int) error {
		inv := invocations[i]
		before := a.Object.DeepCopyObject()
		if err := p.mutate(a, ns, inv.c, inv.param); err != nil {
			var se *apierrors.StatusError
			if errors.As(err, &se) {
				return se
			}
			inv.fail(err)
			return nil
		}
		if !apiequality.Semantic.DeepEqual(before, a.Object) {
			for _, j := range invoked {
				reinvoke[j] = true
			}
		}
		return nil
	}
	for i, inv := range invocations {
		if err := run(i); err != nil {
			return err
		}
		if inv.ifNeeded {
			invoked = append(invoked, i)
		}
	}
	invoked = nil
	for i := range invocations {
		if reinvoke[i] {
			if err := run(i); err != nil {
				return err
			}
		}
	}
	if len(failures) == 0 {
		return nil
	}
	err = admission.NewForbidden(a, errors.New("admission request denied by policy"))
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		return err
	}
	se.ErrStatus.Message = failures[0].Error()
	return se
}

func (p *Plugin) matches(ctx context.Context, pol *admissionregistrationv1.MutatingAdmissionPolicy, b *admissionregistrationv1.MutatingAdmissionPolicyBinding, a *admission.Attributes) (bool, error) {
	if pol.Spec.MatchConstraints == nil {
		return false, nil
	}
	ok, err := match.Resources(ctx, pol.Spec.MatchConstraints, a, p.cfg.Namespaces, p.cfg.Equivalents)
	if err != nil || !ok {
		return false, err
	}
	return match.Resources(ctx, b.Spec.MatchResources, a, p.cfg.Namespaces, p.cfg.Equivalents)
}

// mutate evaluates one invocation (a binding with one parameter object)
// and applies its mutations to a.Object.
func (p *Plugin) mutate(a *admission.Attributes, ns *corev1.Namespace, c *compiled, param map[string]any) error {
	act, err := cel.NewActivation(a, ns)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	act.WithAuthorizer(a, p.cfg.Authorizer)
	if param != nil {
		act.Params = param
	}
	budget := int64(cel.RuntimeCostBudget)
	act.Budget = &budget
	cel.EvalVariables(c.variables, act)
	if len(c.conditions) > 0 {
		ok, err := cel.Match(c.conditions, act)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
	}
	for _, m := range c.mutations {
		if m.err != nil {
			return m.err
		}
		out, err := m.program.Eval(act)
		if err != nil {
			return err
		}
		cur, ok := act.Object.(map[string]any)
		if !ok {
			return nil
		}
		var next map[string]any
		if m.jsonPatch {
			next, err = applyJSONPatch(cur, out)
		} else {
			next, err = applyConfiguration(cur, out)
		}
		if err != nil {
			return err
		}
		act.Object = next
	}
	if err := setObject(a.Object, act.Object.(map[string]any)); err != nil {
		return err
	}
	if p.cfg.Default != nil {
		p.cfg.Default(a.Object)
	}
	return nil
}

// applyJSONPatch is kube's JSONPatch mutation: the list of JSONPatch
// values as an RFC 6902 patch of the object's JSON.
func applyJSONPatch(obj map[string]any, out ref.Val) (map[string]any, error) {
	list, ok := out.(traits.Lister)
	if !ok {
		return nil, errors.New("type mismatch: JSONPatchType.expression should evaluate to array")
	}
	var ops jsonpatch.Patch
	for it := list.Iterator(); it.HasNext() == types.True; {
		v, err := it.Next().ConvertToNative(reflect.TypeOf(&mutation.JSONPatchVal{}))
		if err != nil {
			return nil, fmt.Errorf("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch: %w", err)
		}
		op, ok := v.(*mutation.JSONPatchVal)
		if !ok {
			return nil, fmt.Errorf("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, got element of %T", v)
		}
		raw := func(s string) *json.RawMessage { m := json.RawMessage(strconv.Quote(s)); return &m }
		o := jsonpatch.Operation{"op": raw(op.Op), "path": raw(op.Path)}
		if op.From != "" {
			o["from"] = raw(op.From)
		}
		if op.Val != nil {
			if ov, ok := op.Val.(*dynamic.ObjectVal); ok {
				if err := ov.CheckTypeNamesMatchFieldPathNames(); err != nil {
					return nil, fmt.Errorf("type mismatch: %w", err)
				}
			}
			native, err := op.Val.ConvertToNative(reflect.TypeOf(&structpb.Value{}))
			if err != nil {
				return nil, fmt.Errorf("JSONPath valueExpression evaluated to a type that could not marshal to JSON: %w", err)
			}
			b, err := json.Marshal(native)
			if err != nil {
				return nil, fmt.Errorf("JSONPath valueExpression evaluated to a type that could not marshal to JSON: %w", err)
			}
			m := json.RawMessage(b)
			o["value"] = &m
		}
		ops = append(ops, o)
	}
	doc, err := json.Marshal(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	patched, err := ops.Apply(doc)
	if errors.Is(err, jsonpatch.ErrTestFailed) {
		// A failed test leaves the object as it is.
		return obj, nil
	}
	if err != nil {
		return nil, fmt.Errorf("JSON Patch: %w", err)
	}
	var next map[string]any
	if err := json.Unmarshal(patched, &next); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return next, nil
}

// applyConfiguration is kube's ApplyConfiguration mutation: the Object
// value merged into the object with structured-merge-diff.
func applyConfiguration(obj map[string]any, out ref.Val) (map[string]any, error) {
	ov, ok := out.(*dynamic.ObjectVal)
	if !ok {
		return nil, fmt.Errorf("unsupported return type from ApplyConfiguration expression: %v", out.Type())
	}
	if err := ov.CheckTypeNamesMatchFieldPathNames(); err != nil {
		return nil, fmt.Errorf("type mismatch: %w", err)
	}
	value, ok := ov.Value().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("invalid return type: %T", out)
	}
	live := &unstructured.Unstructured{Object: obj}
	po := &unstructured.Unstructured{Object: value}
	po.SetGroupVersionKind(live.GroupVersionKind())
	tc := typeConverter()
	if !clientgoscheme.Scheme.Recognizes(live.GroupVersionKind()) {
		// A custom resource: its fields are merged as deduced from
		// the values (maps field by field, lists whole).
		tc = managedfields.NewDeducedTypeConverter()
	}
	merged, err := patch.ApplyStructuredMergeDiff(tc, live, po)
	if err != nil {
		return nil, fmt.Errorf("error applying patch: %w", err)
	}
	next, err := runtime.DefaultUnstructuredConverter.ToUnstructured(merged)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return next, nil
}

// setObject writes the mutated JSON form back into the request's object,
// in place.
func setObject(obj runtime.Object, value map[string]any) error {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		u.Object = value
		return nil
	}
	fresh := reflect.New(reflect.TypeOf(obj).Elem())
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(value, fresh.Interface()); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("convert the mutated object: %w", err))
	}
	// The object's kind stays what the request's was.
	tm := obj.GetObjectKind().GroupVersionKind()
	reflect.ValueOf(obj).Elem().Set(fresh.Elem())
	obj.GetObjectKind().SetGroupVersionKind(tm)
	return nil
}
