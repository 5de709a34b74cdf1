// Package webhook calls admission webhooks, as kube-apiserver's
// MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins do: the
// admissionregistration.k8s.io/v1 configurations (read from an informer
// cache) select the hooks a request must go through, each is called over
// HTTPS with an admission.k8s.io/v1 AdmissionReview, mutating hooks in
// order with their JSON patches applied (and re-invoked once when a later
// hook changed the object and they asked for it), validating hooks in
// parallel. Denials, call failures (under each hook's failurePolicy) and
// warnings reach the client as kube reports them.
package webhook

import (
	"sort"
	"strconv"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	admissionlisters "k8s.io/client-go/listers/admissionregistration/v1"

	"minik/internal/admission/cel"
)

// defaultTimeout is a hook's timeoutSeconds when it sets none.
const defaultTimeout = 10 * time.Second

// hook is one webhook of a configuration, mutating or validating.
type hook struct {
	// key identifies the hook across passes: configuration name and index.
	key         string
	config      string
	name        string
	client      admissionregistrationv1.WebhookClientConfig
	rules       []admissionregistrationv1.RuleWithOperations
	failure     admissionregistrationv1.FailurePolicyType
	matchPol    *admissionregistrationv1.MatchPolicyType
	nsSelector  *metav1.LabelSelector
	objSelector *metav1.LabelSelector
	sideEffect  admissionregistrationv1.SideEffectClass
	timeout     time.Duration
	reinvoke    bool
	conditions  []cel.Condition
}

func newHook(config string, i int, name string, cc admissionregistrationv1.WebhookClientConfig,
	rules []admissionregistrationv1.RuleWithOperations, fp *admissionregistrationv1.FailurePolicyType,
	mp *admissionregistrationv1.MatchPolicyType, ns, obj *metav1.LabelSelector, se *admissionregistrationv1.SideEffectClass,
	timeout *int32) *hook {
	h := &hook{
		key: config + "/" + strconv.Itoa(i), config: config, name: name, client: cc, rules: rules,
		failure: admissionregistrationv1.Fail, matchPol: mp,
		nsSelector: ns, objSelector: obj,
		sideEffect: admissionregistrationv1.SideEffectClassUnknown, timeout: defaultTimeout,
	}
	if fp != nil {
		h.failure = *fp
	}
	if se != nil {
		h.sideEffect = *se
	}
	if timeout != nil && *timeout > 0 {
		h.timeout = time.Duration(*timeout) * time.Second
	}
	return h
}

// compiledConfig caches the hooks of one configuration version.
type compiledConfig struct {
	resourceVersion string
	hooks           []*hook
}

// source turns the cached configurations into hooks, compiling each
// configuration's match conditions once per version.
type source struct {
	mutating   admissionlisters.MutatingWebhookConfigurationLister
	validating admissionlisters.ValidatingWebhookConfigurationLister
	compiler   *cel.Compiler

	mu    sync.Mutex
	cache map[string]compiledConfig
}

func (s *source) cached(kind, name, rv string, build func() []*hook) []*hook {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cache == nil {
		s.cache = map[string]compiledConfig{}
	}
	key := kind + "/" + name
	if c, ok := s.cache[key]; ok && c.resourceVersion == rv {
		return c.hooks
	}
	hooks := build()
	s.cache[key] = compiledConfig{resourceVersion: rv, hooks: hooks}
	return hooks
}

func (s *source) conditions(mc []admissionregistrationv1.MatchCondition) []cel.Condition {
	if len(mc) == 0 || s.compiler == nil {
		return nil
	}
	names := make([]string, len(mc))
	exprs := make([]string, len(mc))
	for i, c := range mc {
		names[i], exprs[i] = c.Name, c.Expression
	}
	return s.compiler.CompileConditions(names, exprs)
}

// mutatingHooks returns the mutating hooks in kube's order: configurations
// by name, hooks in their order within each.
func (s *source) mutatingHooks() ([]*hook, error) {
	cfgs, err := s.mutating.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	sort.Slice(cfgs, func(i, j int) bool { return cfgs[i].Name < cfgs[j].Name })
	var out []*hook
	for _, c := range cfgs {
		out = append(out, s.cached("mutating", c.Name, c.ResourceVersion, func() []*hook {
			var hs []*hook
			for i, w := range c.Webhooks {
				h := newHook(c.Name, i, w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy,
					w.NamespaceSelector, w.ObjectSelector, w.SideEffects, w.TimeoutSeconds)
				h.reinvoke = w.ReinvocationPolicy != nil && *w.ReinvocationPolicy == admissionregistrationv1.IfNeededReinvocationPolicy
				h.conditions = s.conditions(w.MatchConditions)
				hs = append(hs, h)
			}
			return hs
		})...)
	}
	return out, nil
}

// validatingHooks returns the validating hooks in kube's order.
func (s *source) validatingHooks() ([]*hook, error) {
	cfgs, err := s.validating.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	sort.Slice(cfgs, func(i, j int) bool { return cfgs[i].Name < cfgs[j].Name })
	var out []*hook
	for _, c := range cfgs {
		out = append(out, s.cached("validating", c.Name, c.ResourceVersion, func() []*hook {
			var hs []*hook
			for i, w := range c.Webhooks {
				h := newHook(c.Name, i, w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy,
					w.NamespaceSelector, w.ObjectSelector, w.SideEffects, w.TimeoutSeconds)
				h.conditions = s.conditions(w.MatchConditions)
				hs = append(hs, h)
			}
			return hs
		})...)
	}
	return out, nil
}
