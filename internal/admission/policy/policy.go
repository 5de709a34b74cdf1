// Package policy is the ValidatingAdmissionPolicy admission plugin: the
// admissionregistration.k8s.io/v1 ValidatingAdmissionPolicies and their
// bindings (read from an informer cache) validate requests with CEL
// expressions, without a webhook, as in kube-apiserver.
//
// For each binding whose policy matches a request (the policy's
// matchConstraints, then the binding's matchResources), the policy's
// variables, matchConditions and validations are evaluated with object,
// oldObject, request, namespaceObject and params (each parameter object
// the binding's paramRef selects, or null without a paramKind). A
// validation that is false is acted on as the binding says: Deny refuses
// the request with kube's message ("ValidatingAdmissionPolicy 'p' with
// binding 'b' denied request: <message>", reason Invalid and code 422 unless
// the validation gives a reason), Warn sends a Warning header, Audit is
// logged. Evaluation errors follow the policy's failurePolicy.
package policy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	admissionlisters "k8s.io/client-go/listers/admissionregistration/v1"

	"minik/internal/admission"
	"minik/internal/admission/cel"
	"minik/internal/admission/match"
	"minik/internal/auth"
)

// maxMessageBytes bounds a message computed by messageExpression.
const maxMessageBytes = 5 * 1024

// readyWait bounds how long a request waits for the policy cache.
const readyWait = 10 * time.Second

// ParamSource reads the parameter objects a binding refers to, as their
// JSON form.
type ParamSource interface {
	// Namespaced tells whether a parameter kind is namespaced; an error
	// means the kind is not served (or its cache is not ready).
	Namespaced(ctx context.Context, kind admissionregistrationv1.ParamKind) (bool, error)
	// Get returns one parameter object, or a NotFound error.
	Get(ctx context.Context, kind admissionregistrationv1.ParamKind, namespace, name string) (map[string]any, error)
	// List returns the parameter objects a selector selects, sorted by
	// name.
	List(ctx context.Context, kind admissionregistrationv1.ParamKind, namespace string, sel labels.Selector) ([]map[string]any, error)
}

// Config configures the plugin.
type Config struct {
	// Policies and Bindings read from an informer cache. Required.
	Policies admissionlisters.ValidatingAdmissionPolicyLister
	Bindings admissionlisters.ValidatingAdmissionPolicyBindingLister
	// Namespaces reads namespaces for namespaceSelector and
	// namespaceObject. Required.
	Namespaces match.NamespaceGetter
	// Params reads parameter objects; nil makes every paramKind unknown.
	Params ParamSource
	// Compiler compiles expressions; nil makes one.
	Compiler *cel.Compiler
	// Authorizer answers the expressions' authorizer checks (the server's
	// whole authorizer chain); nil leaves the authorizer variables unset.
	Authorizer auth.Authorizer
	// HasSynced tells whether the caches are filled. Optional.
	HasSynced func() bool
	// Equivalents lists equivalent resources for matchPolicy Equivalent.
	Equivalents match.Equivalents
	// Logger logs Audit decisions; nil means slog.Default().
	Logger *slog.Logger
}

// Plugin is the ValidatingAdmissionPolicy plugin.
type Plugin struct {
	cfg Config

	mu       sync.Mutex
	compiled map[string]*compiled
}

// New validates cfg and builds the plugin.
func New(cfg Config) (*Plugin, error) {
	if cfg.Policies == nil || cfg.Bindings == nil || cfg.Namespaces == nil {
		return nil, errors.New("policy: policy and binding listers and a namespace getter are required")
	}
	if cfg.Compiler == nil {
		c, err := cel.NewCompiler()
		if err != nil {
			return nil, err
		}
		cfg.Compiler = c
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Plugin{cfg: cfg, compiled: map[string]*compiled{}}, nil
}

// Name implements admission.Validator.
func (*Plugin) Name() string { return "ValidatingAdmissionPolicy" }

// compiled is a policy version's compiled expressions.
type compiled struct {
	resourceVersion string
	variables       []cel.Variable
	conditions      []cel.Condition
	validations     []validation
}

// CompileEnv compiles what validating and mutating policies share: the
// policy's variables, declared in an environment of its own, and its
// match conditions. It also returns the compiler of that environment for
// the policy's other expressions, or base with the error when the
// variables do not compile.
func CompileEnv(base *cel.Compiler, variables []admissionregistrationv1.Variable, matches []admissionregistrationv1.MatchCondition) (*cel.Compiler, []cel.Variable, []cel.Condition, error) {
	var names, exprs []string
	for _, v := range variables {
		names, exprs = append(names, v.Name), append(exprs, v.Expression)
	}
	compiler, vs, envErr := base.WithVariables(names, exprs)
	if envErr != nil {
		compiler = base
	}
	names, exprs = nil, nil
	for _, mc := range matches {
		names, exprs = append(names, mc.Name), append(exprs, mc.Expression)
	}
	return compiler, vs, compiler.CompileConditions(names, exprs), envErr
}

type validation struct {
	expression string
	program    *cel.Program
	err        error
	message    string
	msgProgram *cel.Program
	reason     metav1.StatusReason
}

func (p *Plugin) compile(pol *admissionregistrationv1.ValidatingAdmissionPolicy) *compiled {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.compiled[pol.Name]; ok && c.resourceVersion == pol.ResourceVersion {
		return c
	}
	c := &compiled{resourceVersion: pol.ResourceVersion}
	compiler, vars, conds, envErr := CompileEnv(p.cfg.Compiler, pol.Spec.Variables, pol.Spec.MatchConditions)
	c.variables, c.conditions = vars, conds
	for _, v := range pol.Spec.Validations {
		val := validation{expression: v.Expression, message: v.Message, reason: metav1.StatusReasonInvalid}
		val.program, val.err = compiler.Compile(v.Expression)
		if envErr != nil {
			val.program, val.err = nil, envErr
		}
		if v.MessageExpression != "" {
			// A messageExpression that does not compile falls back to the
			// message, as in kube.
			val.msgProgram, _ = compiler.Compile(v.MessageExpression)
		}
		if v.Reason != nil && *v.Reason != "" {
			val.reason = *v.Reason
		}
		c.validations = append(c.validations, val)
	}
	p.compiled[pol.Name] = c
	return c
}

// decision is the outcome of one failed validation (or failed
// evaluation) under one binding.
type decision struct {
	policy  string
	binding string
	message string
	reason  metav1.StatusReason
}

func (p *Plugin) waitForReady(ctx context.Context) bool {
	if p.cfg.HasSynced == nil || p.cfg.HasSynced() {
		return true
	}
	deadline := time.NewTimer(readyWait)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return p.cfg.HasSynced()
		case <-tick.C:
			if p.cfg.HasSynced() {
				return true
			}
		}
	}
}

// Validate implements admission.Validator. Every matching binding is
// evaluated (so that every warning is sent); the first denial, by binding
// name, refuses the request.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if match.Exempt(a) || a.Operation == admission.Connect {
		return nil
	}
	if !p.waitForReady(ctx) {
		return admission.NewForbidden(a, fmt.Errorf("not yet ready to handle request"))
	}
	bindings, err := p.cfg.Bindings.List(labels.Everything())
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if len(bindings) == 0 {
		return nil
	}
	sort.Slice(bindings, func(i, j int) bool { return bindings[i].Name < bindings[j].Name })
	var denials []decision
	var base *cel.Activation
	for _, b := range bindings {
		pol, err := p.cfg.Policies.Get(b.Spec.PolicyName)
		if err != nil {
			continue
		}
		fail := pol.Spec.FailurePolicy == nil || *pol.Spec.FailurePolicy == admissionregistrationv1.Fail
		decide := func(d []decision) {
			for _, x := range d {
				for _, action := range b.Spec.ValidationActions {
					switch action {
					case admissionregistrationv1.Deny:
						denials = append(denials, x)
					case admissionregistrationv1.Warn:
						admission.AddWarning(ctx, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", x.policy, x.binding, x.message))
					case admissionregistrationv1.Audit:
						p.cfg.Logger.Info("validating admission policy failed", "policy", x.policy, "binding", x.binding, "message", x.message)
					}
				}
			}
		}
		failure := func(err error) {
			if fail {
				decide([]decision{{policy: pol.Name, binding: b.Name, message: err.Error(), reason: metav1.StatusReasonInvalid}})
			}
		}
		ok, err := p.matches(ctx, pol, b, a)
		if err != nil {
			failure(err)
			continue
		}
		if !ok {
			continue
		}
		if base == nil {
			if base, err = p.activation(ctx, a); err != nil {
				return apierrors.NewInternalError(err)
			}
		}
		params, err := p.params(ctx, pol, b, a)
		if err != nil {
			failure(fmt.Errorf("failed to configure binding: %w", err))
			continue
		}
		c := p.compile(pol)
		for _, param := range params {
			decide(p.evaluate(pol, b, c, base, param, fail))
		}
	}
	if len(denials) == 0 {
		return nil
	}
	d := denials[0]
	msg := fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", d.policy, d.binding, d.message)
	err = admission.NewForbidden(a, errors.New(msg))
	se, ok := err.(*apierrors.StatusError)
	if !ok {
		return err
	}
	se.ErrStatus.Reason = d.reason
	se.ErrStatus.Code = reasonToCode(d.reason)
	if se.ErrStatus.Details != nil {
		se.ErrStatus.Details.Causes = append(se.ErrStatus.Details.Causes, metav1.StatusCause{Message: msg})
	}
	return se
}

// matches applies the policy's matchConstraints, then the binding's
// matchResources.
func (p *Plugin) matches(ctx context.Context, pol *admissionregistrationv1.ValidatingAdmissionPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, a *admission.Attributes) (bool, error) {
	if pol.Spec.MatchConstraints == nil {
		return false, nil
	}
	ok, err := match.Resources(ctx, pol.Spec.MatchConstraints, a, p.cfg.Namespaces, p.cfg.Equivalents)
	if err != nil || !ok {
		return false, err
	}
	return match.Resources(ctx, b.Spec.MatchResources, a, p.cfg.Namespaces, p.cfg.Equivalents)
}

// activation builds the request's variables, shared by every binding.
func (p *Plugin) activation(ctx context.Context, a *admission.Attributes) (*cel.Activation, error) {
	var ns *corev1.Namespace
	if name := a.Namespace; name != "" {
		got, err := p.cfg.Namespaces(ctx, name)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
		ns = got
	}
	act, err := cel.NewActivation(a, ns)
	if err != nil {
		return nil, err
	}
	act.WithAuthorizer(a, p.cfg.Authorizer)
	return act, nil
}

// params returns the parameter objects to evaluate the policy with: one
// nil without a paramKind (or without a paramRef), else those the paramRef
// selects. None at all means the binding does not apply (Allow), or a
// failure when parameterNotFoundAction is Deny.
func (p *Plugin) params(ctx context.Context, pol *admissionregistrationv1.ValidatingAdmissionPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, a *admission.Attributes) ([]map[string]any, error) {
	return Params(ctx, p.cfg.Params, pol.Spec.ParamKind, b.Spec.ParamRef, a)
}

// Params returns the parameter objects a policy binding evaluates its
// policy with (validating or mutating): one nil without a paramKind (or
// without a paramRef), else those the paramRef selects from src. None at
// all means the binding does not apply, or a failure when
// parameterNotFoundAction is Deny.
func Params(ctx context.Context, src ParamSource, kind *admissionregistrationv1.ParamKind, ref *admissionregistrationv1.ParamRef, a *admission.Attributes) ([]map[string]any, error) {
	if kind == nil || ref == nil {
		return []map[string]any{nil}, nil
	}
	if src == nil {
		return nil, fmt.Errorf("paramKind kind `%s, Kind=%s` not known", kind.APIVersion, kind.Kind)
	}
	namespaced, err := src.Namespaced(ctx, *kind)
	if err != nil {
		return nil, err
	}
	ns := ""
	if namespaced {
		ns = ref.Namespace
		if ns == "" {
			ns = a.Namespace
		}
		if ns == "" {
			return nil, errors.New("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
		}
	}
	var params []map[string]any
	switch {
	case ref.Name != "":
		obj, err := src.Get(ctx, *kind, ns, ref.Name)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, err
		default:
			params = append(params, obj)
		}
	case ref.Selector != nil:
		sel, err := metav1.LabelSelectorAsSelector(ref.Selector)
		if err != nil {
			return nil, err
		}
		if params, err = src.List(ctx, *kind, ns, sel); err != nil {
			return nil, err
		}
	}
	if len(params) == 0 && ref.ParameterNotFoundAction != nil && *ref.ParameterNotFoundAction == admissionregistrationv1.DenyAction {
		return nil, errors.New("no params found for policy binding with `Deny` parameterNotFoundAction")
	}
	return params, nil
}

// evaluate runs a policy's variables, match conditions and validations
// with one parameter object, returning the failures to act on.
func (p *Plugin) evaluate(pol *admissionregistrationv1.ValidatingAdmissionPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, c *compiled, base *cel.Activation, param map[string]any, fail bool) []decision {
	act := *base
	if param != nil {
		act.Params = param
	}
	act.Variables = nil
	budget := int64(cel.RuntimeCostBudget)
	act.Budget = &budget
	cel.EvalVariables(c.variables, &act)
	mk := func(msg string, reason metav1.StatusReason) decision {
		return decision{policy: pol.Name, binding: b.Name, message: msg, reason: reason}
	}
	if len(c.conditions) > 0 {
		ok, err := cel.Match(c.conditions, &act)
		if err != nil {
			if fail {
				return []decision{mk(err.Error(), metav1.StatusReasonInvalid)}
			}
			return nil
		}
		if !ok {
			return nil
		}
	}
	var out []decision
	for _, v := range c.validations {
		if v.err != nil {
			if fail {
				out = append(out, mk(v.err.Error(), metav1.StatusReasonInvalid))
			}
			continue
		}
		res, err := v.program.Eval(&act)
		if err != nil {
			if fail {
				out = append(out, mk(err.Error(), metav1.StatusReasonInvalid))
			}
			if errors.Is(err, cel.ErrOutOfBudget) {
				break
			}
			continue
		}
		if passed, ok := res.Value().(bool); ok && passed {
			continue
		}
		out = append(out, mk(v.failureMessage(&act), v.reason))
	}
	return out
}

// failureMessage is a failed validation's message: its messageExpression's
// (one line, at most 5 KiB), else its message, else "failed expression:
// <expression>".
func (v validation) failureMessage(act *cel.Activation) string {
	if v.msgProgram != nil {
		if s, err := v.msgProgram.EvalString(act); err == nil {
			s = strings.TrimSpace(s)
			if s != "" && len(s) <= maxMessageBytes && !strings.Contains(s, "\n") {
				return s
			}
		}
	}
	if m := strings.TrimSpace(v.message); m != "" {
		return m
	}
	return fmt.Sprintf("failed expression: %v", strings.TrimSpace(v.expression))
}

// reasonToCode is the HTTP code of a denial's reason, as kube maps it.
func reasonToCode(r metav1.StatusReason) int32 {
	switch r {
	case metav1.StatusReasonForbidden:
		return http.StatusForbidden
	case metav1.StatusReasonUnauthorized:
		return http.StatusUnauthorized
	case metav1.StatusReasonRequestEntityTooLarge:
		return http.StatusRequestEntityTooLarge
	default:
		return http.StatusUnprocessableEntity
	}
}
