package registry

import (
	"fmt"
	"k8s.io/apimachinery/pkg/runtime"
	"net/url"
	"regexp"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/admission/cel"

	"minik/internal/tables"
)

// This file holds the admissionregistration.k8s.io/v1 kinds: the webhook
// configurations and the ValidatingAdmissionPolicies with their bindings.
// All are cluster-scoped and keep metadata.generation; defaults and
// validation follow kube's (pkg/apis/admissionregistration), CEL
// expressions being compiled on create and update so that a policy that
// cannot run is refused up front.

var mutatingWebhookConfigurations = &Resource{
	GroupVersion: admissionregistrationV1, Name: "mutatingwebhookconfigurations", SingularName: "mutatingwebhookconfiguration", Kind: "MutatingWebhookConfiguration",
	Categories: []string{"api-extensions"},
	Strategy:   configurationStrategy(defaultMutatingWebhookConfiguration, validateMutatingWebhookConfiguration, tables.MutatingWebhookConfiguration),
}

var validatingWebhookConfigurations = &Resource{
	GroupVersion: admissionregistrationV1, Name: "validatingwebhookconfigurations", SingularName: "validatingwebhookconfiguration", Kind: "ValidatingWebhookConfiguration",
	Categories: []string{"api-extensions"},
	Strategy:   configurationStrategy(defaultValidatingWebhookConfiguration, validateValidatingWebhookConfiguration, tables.ValidatingWebhookConfiguration),
}

var validatingAdmissionPolicies = &Resource{
	GroupVersion: admissionregistrationV1, Name: "validatingadmissionpolicies", SingularName: "validatingadmissionpolicy", Kind: "ValidatingAdmissionPolicy",
	Categories: []string{"api-extensions"}, HasStatus: true,
	Strategy: configurationStrategy(defaultValidatingAdmissionPolicy, validateValidatingAdmissionPolicy, tables.ValidatingAdmissionPolicy),
}

var validatingAdmissionPolicyBindings = &Resource{
	GroupVersion: admissionregistrationV1, Name: "validatingadmissionpolicybindings", SingularName: "validatingadmissionpolicybinding", Kind: "ValidatingAdmissionPolicyBinding",
	Categories: []string{"api-extensions"},
	Strategy:   configurationStrategy(defaultValidatingAdmissionPolicyBinding, validateValidatingAdmissionPolicyBinding, tables.ValidatingAdmissionPolicyBinding),
}

// configurationStrategy is the strategy of a cluster-scoped
// admissionregistration kind: an update is checked by the create rules
// plus the metadata update rules; table is the kind's kube table.
func configurationStrategy[T interface {
	runtime.Object
	metav1.Object
}](def func(T), validate func(T) field.ErrorList, table tables.Table) Strategy {
	return Strategy{
		Default:  defaulter(def),
		Validate: validator(validate),
		ValidateUpdate: updateValidator(func(obj, old T) field.ErrorList {
			return append(validate(obj), validateObjectMetaUpdate(objectMeta(obj), objectMeta(old))...)
		}),
		Table: table.Convertor(nil),
	}
}

// objectMeta is a typed object's embedded ObjectMeta.
func objectMeta(obj metav1.Object) *metav1.ObjectMeta {
	return obj.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
}

// Defaults, as kube's admissionregistration/v1 defaulters set them.

func defaultRules(rules []admissionregistrationv1.RuleWithOperations) {
	for i := range rules {
		if rules[i].Scope == nil {
			s := admissionregistrationv1.AllScopes
			rules[i].Scope = &s
		}
	}
}

func defaultClientConfig(cc *admissionregistrationv1.WebhookClientConfig) {
	if cc.Service != nil && cc.Service.Port == nil {
		port := int32(443)
		cc.Service.Port = &port
	}
}

func defaultSelectors(ns, obj **metav1.LabelSelector) {
	if *ns == nil {
		*ns = &metav1.LabelSelector{}
	}
	if *obj == nil {
		*obj = &metav1.LabelSelector{}
	}
}

func defaultWebhookCommon(fp **admissionregistrationv1.FailurePolicyType, mp **admissionregistrationv1.MatchPolicyType, timeout **int32) {
	if *fp == nil {
		f := admissionregistrationv1.Fail
		*fp = &f
	}
	if *mp == nil {
		m := admissionregistrationv1.Equivalent
		*mp = &m
	}
	if *timeout == nil {
		t := int32(10)
		*timeout = &t
	}
}

func defaultMutatingWebhookConfiguration(c *admissionregistrationv1.MutatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		defaultWebhookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.TimeoutSeconds)
		defaultSelectors(&w.NamespaceSelector, &w.ObjectSelector)
		if w.ReinvocationPolicy == nil {
			r := admissionregistrationv1.NeverReinvocationPolicy
			w.ReinvocationPolicy = &r
		}
		defaultRules(w.Rules)
		defaultClientConfig(&w.ClientConfig)
	}
}

func defaultValidatingWebhookConfiguration(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		defaultWebhookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.TimeoutSeconds)
		defaultSelectors(&w.NamespaceSelector, &w.ObjectSelector)
		defaultRules(w.Rules)
		defaultClientConfig(&w.ClientConfig)
	}
}

func defaultMatchResources(m *admissionregistrationv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		p := admissionregistrationv1.Equivalent
		m.MatchPolicy = &p
	}
	defaultSelectors(&m.NamespaceSelector, &m.ObjectSelector)
	for _, rules := range [][]admissionregistrationv1.NamedRuleWithOperations{m.ResourceRules, m.ExcludeResourceRules} {
		for i := range rules {
			if rules[i].Scope == nil {
				s := admissionregistrationv1.AllScopes
				rules[i].Scope = &s
			}
		}
	}
}

func defaultValidatingAdmissionPolicy(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
	if p.Spec.FailurePolicy == nil {
		f := admissionregistrationv1.Fail
		p.Spec.FailurePolicy = &f
	}
	defaultMatchResources(p.Spec.MatchConstraints)
}

func defaultValidatingAdmissionPolicyBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	defaultMatchResources(b.Spec.MatchResources)
}

// Validation.

var (
	supportedOperations = sets.New(string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Create),
		string(admissionregistrationv1.Update), string(admissionregistrationv1.Delete), string(admissionregistrationv1.Connect))
	supportedScopes             = sets.New(string(admissionregistrationv1.ClusterScope), string(admissionregistrationv1.NamespacedScope), string(admissionregistrationv1.AllScopes))
	supportedFailurePolicies    = sets.New(string(admissionregistrationv1.Ignore), string(admissionregistrationv1.Fail))
	supportedMatchPolicies      = sets.New(string(admissionregistrationv1.Exact), string(admissionregistrationv1.Equivalent))
	supportedSideEffects        = sets.New(string(admissionregistrationv1.SideEffectClassNone), string(admissionregistrationv1.SideEffectClassNoneOnDryRun))
	supportedReinvocation       = sets.New(string(admissionregistrationv1.NeverReinvocationPolicy), string(admissionregistrationv1.IfNeededReinvocationPolicy))
	supportedReviewVersions     = []string{"v1", "v1beta1"}
	supportedValidationActions  = sets.New(string(admissionregistrationv1.Deny), string(admissionregistrationv1.Warn), string(admissionregistrationv1.Audit))
	supportedValidationReasons  = sets.New(string(metav1.StatusReasonForbidden), string(metav1.StatusReasonInvalid), string(metav1.StatusReasonRequestEntityTooLarge), string(metav1.StatusReasonUnauthorized))
	celIdentifier               = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*$`)
	admissionCompiler, errCompi = cel.NewCompiler()
)

// commonWebhook is what mutating and validating webhooks share.
type commonWebhook struct {
	name       string
	cc         *admissionregistrationv1.WebhookClientConfig
	rules      []admissionregistrationv1.RuleWithOperations
	fp         *admissionregistrationv1.FailurePolicyType
	mp         *admissionregistrationv1.MatchPolicyType
	ns, obj    *metav1.LabelSelector
	se         *admissionregistrationv1.SideEffectClass
	timeout    *int32
	versions   []string
	conditions []admissionregistrationv1.MatchCondition
}

func validateWebhook(w commonWebhook, p *field.Path) field.ErrorList {
	errs := validation.IsFullyQualifiedName(p.Child("name"), w.name)
	errs = append(errs, validateReviewVersions(w.versions, p.Child("admissionReviewVersions"))...)
	for i := range w.rules {
		errs = append(errs, validateRuleWithOperations(&w.rules[i], p.Child("rules").Index(i))...)
	}
	if w.fp != nil && !supportedFailurePolicies.Has(string(*w.fp)) {
		errs = append(errs, field.NotSupported(p.Child("failurePolicy"), *w.fp, sets.List(supportedFailurePolicies)))
	}
	if w.mp != nil && !supportedMatchPolicies.Has(string(*w.mp)) {
		errs = append(errs, field.NotSupported(p.Child("matchPolicy"), *w.mp, sets.List(supportedMatchPolicies)))
	}
	if w.se == nil {
		errs = append(errs, field.Required(p.Child("sideEffects"), fmt.Sprintf("must specify one of %v", strings.Join(sets.List(supportedSideEffects), ", "))))
	} else if !supportedSideEffects.Has(string(*w.se)) {
		errs = append(errs, field.NotSupported(p.Child("sideEffects"), *w.se, sets.List(supportedSideEffects)))
	}
	if w.timeout != nil && (*w.timeout > 30 || *w.timeout < 1) {
		errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), *w.timeout, "the timeout value must be between 1 and 30 seconds"))
	}
	if w.ns != nil {
		errs = append(errs, validateLabelSelector(w.ns, p.Child("namespaceSelector"))...)
	}
	if w.obj != nil {
		errs = append(errs, validateLabelSelector(w.obj, p.Child("objectSelector"))...)
	}
	errs = append(errs, validateClientConfig(w.cc, p)...)
	return append(errs, validateMatchConditionsIn(admissionCompiler, w.conditions, p.Child("matchConditions"))...)
}

func validateReviewVersions(versions []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	ok := false
	seen := sets.New[string]()
	for i, v := range versions {
		if seen.Has(v) {
			errs = append(errs, field.Duplicate(p.Index(i), v))
		}
		seen.Insert(v)
		for _, s := range supportedReviewVersions {
			if v == s {
				ok = true
			}
		}
	}
	if !ok {
		errs = append(errs, field.Required(p, fmt.Sprintf("must include at least one of %v", strings.Join(supportedReviewVersions, ", "))))
	}
	return errs
}

func hasWildcard(items []string) bool {
	for _, it := range items {
		if it == "*" {
			return true
		}
	}
	return false
}

func validateRuleWithOperations(r *admissionregistrationv1.RuleWithOperations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	ops := make([]string, len(r.Operations))
	for i, o := range r.Operations {
		ops[i] = string(o)
	}
	if len(ops) == 0 {
		errs = append(errs, field.Required(p.Child("operations"), ""))
	}
	if len(ops) > 1 && hasWildcard(ops) {
		errs = append(errs, field.Invalid(p.Child("operations"), r.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, o := range ops {
		if !supportedOperations.Has(o) {
			errs = append(errs, field.NotSupported(p.Child("operations").Index(i), o, sets.List(supportedOperations)))
		}
	}
	return append(errs, validateRule(&r.Rule, p)...)
}

func validateRule(r *admissionregistrationv1.Rule, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), ""))
	}
	if len(r.APIGroups) > 1 && hasWildcard(r.APIGroups) {
		errs = append(errs, field.Invalid(p.Child("apiGroups"), r.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	if len(r.APIVersions) == 0 {
		errs = append(errs, field.Required(p.Child("apiVersions"), ""))
	}
	if len(r.APIVersions) > 1 && hasWildcard(r.APIVersions) {
		errs = append(errs, field.Invalid(p.Child("apiVersions"), r.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, v := range r.APIVersions {
		if v == "" {
			errs = append(errs, field.Required(p.Child("apiVersions").Index(i), ""))
		}
	}
	errs = append(errs, validateRuleResources(r.Resources, p.Child("resources"))...)
	if r.Scope != nil && !supportedScopes.Has(string(*r.Scope)) {
		errs = append(errs, field.NotSupported(p.Child("scope"), *r.Scope, sets.List(supportedScopes)))
	}
	return errs
}

func validateRuleResources(resources []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(resources) == 0 {
		errs = append(errs, field.Required(p, ""))
	}
	wildSub := sets.New[string]()
	wildRes := sets.New[string]()
	double, single, plain := false, false, false
	for i, rs := range resources {
		if rs == "" {
			errs = append(errs, field.Required(p.Index(i), ""))
			continue
		}
		if rs == "*/*" {
			double = true
		}
		if rs == "*" {
			single = true
		}
		res, sub, found := strings.Cut(rs, "/")
		if !found {
			plain = plain || rs != "*"
			continue
		}
		if wildSub.Has(res) {
			errs = append(errs, field.Invalid(p.Index(i), rs, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, rs)))
		}
		if wildRes.Has(sub) {
			errs = append(errs, field.Invalid(p.Index(i), rs, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, rs)))
		}
		if sub == "*" {
			wildSub.Insert(res)
		}
		if res == "*" {
			wildRes.Insert(sub)
		}
	}
	if len(resources) > 1 && double {
		errs = append(errs, field.Invalid(p, resources, "if '*/*' is present, must not specify other resources"))
	}
	if single && plain {
		errs = append(errs, field.Invalid(p, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	return errs
}

func validateClientConfig(cc *admissionregistrationv1.WebhookClientConfig, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	cp := p.Child("clientConfig")
	if (cc.URL == nil) == (cc.Service == nil) {
		errs = append(errs, field.Required(cp, "exactly one of url or service is required"))
	}
	if cc.URL != nil {
		errs = append(errs, validateWebhookURL(*cc.URL, cp.Child("url"))...)
	}
	if s := cc.Service; s != nil {
		sp := cp.Child("service")
		if s.Name == "" {
			errs = append(errs, field.Required(sp.Child("name"), "service name is required"))
		}
		if s.Namespace == "" {
			errs = append(errs, field.Required(sp.Child("namespace"), "service namespace is required"))
		}
		if s.Port != nil {
			if msgs := validation.IsValidPortNum(int(*s.Port)); len(msgs) > 0 {
				errs = append(errs, field.Invalid(sp.Child("port"), *s.Port, "port is not valid: "+strings.Join(msgs, ", ")))
			}
		}
		if s.Path != nil {
			errs = append(errs, validateServicePath(*s.Path, sp.Child("path"))...)
		}
	}
	return errs
}

func validateWebhookURL(raw string, p *field.Path) field.ErrorList {
	const form = "; desired format: https://host[/path]"
	u, err := url.Parse(raw)
	if err != nil {
		return field.ErrorList{field.Required(p, "url must be a valid URL: "+err.Error()+form)}
	}
	var errs field.ErrorList
	if u.Scheme != "https" {
		errs = append(errs, field.Invalid(p, u.Scheme, "'https' is the only allowed URL scheme"+form))
	}
	if u.Host == "" {
		errs = append(errs, field.Invalid(p, u.Host, "host must be specified"+form))
	}
	if u.User != nil {
		errs = append(errs, field.Invalid(p, u.User.String(), "user information is not permitted in the URL"))
	}
	if u.Fragment != "" {
		errs = append(errs, field.Invalid(p, u.Fragment, "fragments are not permitted in the URL"))
	}
	if u.RawQuery != "" {
		errs = append(errs, field.Invalid(p, u.RawQuery, "query parameters are not permitted in the URL"))
	}
	return errs
}

func validateServicePath(path string, p *field.Path) field.ErrorList {
	if path == "/" || path == "" {
		return nil
	}
	if path == "//" {
		return field.ErrorList{field.Invalid(p, path, "segment[0] may not be empty")}
	}
	var errs field.ErrorList
	if !strings.HasPrefix(path, "/") {
		errs = append(errs, field.Invalid(p, path, "must start with a '/'"))
	}
	check := strings.TrimSuffix(strings.TrimPrefix(path, "/"), "/")
	for i, step := range strings.Split(check, "/") {
		if step == "" {
			errs = append(errs, field.Invalid(p, path, fmt.Sprintf("segment[%d] may not be empty", i)))
			continue
		}
		for _, msg := range validation.IsDNS1123Subdomain(step) {
			errs = append(errs, field.Invalid(p, path, fmt.Sprintf("segment[%d]: %v", i, msg)))
		}
	}
	return errs
}

func validateMatchConditionsIn(c *cel.Compiler, mcs []admissionregistrationv1.MatchCondition, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	if len(mcs) > 64 {
		errs = append(errs, field.TooMany(p, len(mcs), 64))
	}
	for i, mc := range mcs {
		ip := p.Index(i)
		if mc.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			errs = append(errs, validateQualifiedName(mc.Name, ip.Child("name"))...)
			if seen.Has(mc.Name) {
				errs = append(errs, field.Duplicate(ip.Child("name"), mc.Name))
			}
			seen.Insert(mc.Name)
		}
		errs = append(errs, validateExpressionIn(c, mc.Expression, ip.Child("expression"))...)
	}
	return errs
}

// validateExpressionIn checks a CEL expression is given and compiles with
// c (a policy's compiler declares its variables).
func validateExpressionIn(c *cel.Compiler, expr string, p *field.Path) field.ErrorList {
	if strings.TrimSpace(expr) == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if errCompi != nil {
		return field.ErrorList{field.InternalError(p, errCompi)}
	}
	if _, err := c.Compile(expr); err != nil {
		return field.ErrorList{field.Invalid(p, expr, err.Error())}
	}
	return nil
}

func webhookNames(p *field.Path, names []string) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, n := range names {
		if seen.Has(n) {
			errs = append(errs, field.Duplicate(p.Index(i).Child("name"), n))
		}
		seen.Insert(n)
	}
	return errs
}

func validateMutatingWebhookConfiguration(c *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
	errs := validateObjectMeta(&c.ObjectMeta, false, nameIsDNSSubdomain)
	p := field.NewPath("webhooks")
	var names []string
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		names = append(names, w.Name)
		errs = append(errs, validateWebhook(commonWebhook{
			name: w.Name, cc: &w.ClientConfig, rules: w.Rules, fp: w.FailurePolicy, mp: w.MatchPolicy,
			ns: w.NamespaceSelector, obj: w.ObjectSelector, se: w.SideEffects, timeout: w.TimeoutSeconds,
			versions: w.AdmissionReviewVersions, conditions: w.MatchConditions,
		}, p.Index(i))...)
		if w.ReinvocationPolicy != nil && !supportedReinvocation.Has(string(*w.ReinvocationPolicy)) {
			errs = append(errs, field.NotSupported(p.Index(i).Child("reinvocationPolicy"), *w.ReinvocationPolicy, sets.List(supportedReinvocation)))
		}
	}
	return append(errs, webhookNames(p, names)...)
}

func validateValidatingWebhookConfiguration(c *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
	errs := validateObjectMeta(&c.ObjectMeta, false, nameIsDNSSubdomain)
	p := field.NewPath("webhooks")
	var names []string
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		names = append(names, w.Name)
		errs = append(errs, validateWebhook(commonWebhook{
			name: w.Name, cc: &w.ClientConfig, rules: w.Rules, fp: w.FailurePolicy, mp: w.MatchPolicy,
			ns: w.NamespaceSelector, obj: w.ObjectSelector, se: w.SideEffects, timeout: w.TimeoutSeconds,
			versions: w.AdmissionReviewVersions, conditions: w.MatchConditions,
		}, p.Index(i))...)
	}
	return append(errs, webhookNames(p, names)...)
}

func validateNamedRules(rules []admissionregistrationv1.NamedRuleWithOperations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range rules {
		rp := p.Index(i)
		seen := sets.New[string]()
		for j, n := range rules[i].ResourceNames {
			if seen.Has(n) {
				errs = append(errs, field.Duplicate(rp.Child("resourceNames").Index(j), n))
			}
			seen.Insert(n)
			errs = append(errs, validateName(n, nameIsPathSegment, false, rp.Child("resourceNames").Index(j))...)
		}
		errs = append(errs, validateRuleWithOperations(&rules[i].RuleWithOperations, rp)...)
	}
	return errs
}

func validateMatchResources(m *admissionregistrationv1.MatchResources, p *field.Path, policy bool) field.ErrorList {
	var errs field.ErrorList
	if m.MatchPolicy != nil && !supportedMatchPolicies.Has(string(*m.MatchPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("matchPolicy"), *m.MatchPolicy, sets.List(supportedMatchPolicies)))
	}
	if m.NamespaceSelector != nil {
		errs = append(errs, validateLabelSelector(m.NamespaceSelector, p.Child("namespaceSelector"))...)
	}
	if m.ObjectSelector != nil {
		errs = append(errs, validateLabelSelector(m.ObjectSelector, p.Child("objectSelector"))...)
	}
	if policy && len(m.ResourceRules) == 0 {
		errs = append(errs, field.Required(p.Child("resourceRules"), ""))
	}
	errs = append(errs, validateNamedRules(m.ResourceRules, p.Child("resourceRules"))...)
	return append(errs, validateNamedRules(m.ExcludeResourceRules, p.Child("excludeResourceRules"))...)
}

func validateValidatingAdmissionPolicy(pol *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	errs := validateObjectMeta(&pol.ObjectMeta, false, nameIsDNSSubdomain)
	spec := &pol.Spec
	if fp := spec.FailurePolicy; fp != nil && !supportedFailurePolicies.Has(string(*fp)) {
		errs = append(errs, field.NotSupported(specPath.Child("failurePolicy"), *fp, sets.List(supportedFailurePolicies)))
	}
	if pk := spec.ParamKind; pk != nil {
		errs = append(errs, validateParamKind(pk, specPath.Child("paramKind"))...)
	}
	if spec.MatchConstraints == nil {
		errs = append(errs, field.Required(specPath.Child("matchConstraints"), ""))
	} else {
		errs = append(errs, validateMatchResources(spec.MatchConstraints, specPath.Child("matchConstraints"), true)...)
	}
	if len(spec.Validations) == 0 && len(spec.AuditAnnotations) == 0 {
		errs = append(errs, field.Required(specPath.Child("validations"), "validations or auditAnnotations must contain at least one item"))
	}
	compiler, varErrs := policyCompiler(spec.Variables)
	if compiler == nil {
		return append(errs, field.InternalError(specPath.Child("variables"), errCompi))
	}
	errs = append(errs, validateMatchConditionsIn(compiler, spec.MatchConditions, specPath.Child("matchConditions"))...)
	errs = append(errs, validateVariables(spec.Variables, varErrs, specPath.Child("variables"))...)
	for i, v := range spec.Validations {
		vp := specPath.Child("validations").Index(i)
		errs = append(errs, validateExpressionIn(compiler, v.Expression, vp.Child("expression"))...)
		if strings.Contains(v.Message, "\n") {
			errs = append(errs, field.Invalid(vp.Child("message"), v.Message, "message must not contain line breaks"))
		}
		if v.MessageExpression != "" {
			errs = append(errs, validateExpressionIn(compiler, v.MessageExpression, vp.Child("messageExpression"))...)
		}
		if v.Reason != nil && !supportedValidationReasons.Has(string(*v.Reason)) {
			errs = append(errs, field.NotSupported(vp.Child("reason"), *v.Reason, sets.List(supportedValidationReasons)))
		}
	}
	for i, a := range spec.AuditAnnotations {
		ap := specPath.Child("auditAnnotations").Index(i)
		if a.Key == "" {
			errs = append(errs, field.Required(ap.Child("key"), ""))
		}
		errs = append(errs, validateExpressionIn(compiler, a.ValueExpression, ap.Child("valueExpression"))...)
	}
	return errs
}

// validateParamKind is kube's check of a policy's paramKind.
func validateParamKind(pk *admissionregistrationv1.ParamKind, pp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pk.Kind == "" {
		errs = append(errs, field.Required(pp.Child("kind"), ""))
	}
	if pk.APIVersion == "" {
		errs = append(errs, field.Required(pp.Child("apiVersion"), ""))
	} else if gv, err := schema.ParseGroupVersion(pk.APIVersion); err != nil {
		errs = append(errs, field.Invalid(pp.Child("apiVersion"), pk.APIVersion, err.Error()))
	} else if gv.Version == "" {
		errs = append(errs, field.Invalid(pp.Child("apiVersion"), pk.APIVersion, "version must be specified"))
	}
	return errs
}

// policyCompiler returns a policy's compiler, which declares its
// variables, each compiled in order for the expressions after them, and
// each variable's compile error (nil when it compiles). It returns a nil
// compiler when the admission environment could not be built (errCompi)
// or the policy's could not.
func policyCompiler(variables []admissionregistrationv1.Variable) (*cel.Compiler, []error) {
	if errCompi != nil {
		return nil, nil
	}
	var names, exprs []string
	for _, v := range variables {
		names, exprs = append(names, v.Name), append(exprs, v.Expression)
	}
	c, vars, err := admissionCompiler.WithVariables(names, exprs)
	if err != nil {
		return nil, nil
	}
	varErrs := make([]error, len(vars))
	for i, v := range vars {
		varErrs[i] = v.Err
	}
	return c, varErrs
}

// validateVariables checks a policy's variables: each named by a CEL
// identifier, once, with an expression that compiled (varErrs, from
// policyCompiler).
func validateVariables(variables []admissionregistrationv1.Variable, varErrs []error, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, v := range variables {
		vp := p.Index(i)
		switch {
		case v.Name == "":
			errs = append(errs, field.Required(vp.Child("name"), ""))
		case !celIdentifier.MatchString(v.Name):
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, "name is not a valid CEL identifier"))
		case seen.Has(v.Name):
			errs = append(errs, field.Duplicate(vp.Child("name"), v.Name))
		}
		seen.Insert(v.Name)
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(vp.Child("expression"), ""))
		} else if i < len(varErrs) && varErrs[i] != nil {
			errs = append(errs, field.Invalid(vp.Child("expression"), v.Expression, varErrs[i].Error()))
		}
	}
	return errs
}

func validateValidatingAdmissionPolicyBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	errs := validateObjectMeta(&b.ObjectMeta, false, nameIsDNSSubdomain)
	spec := &b.Spec
	if spec.PolicyName == "" {
		errs = append(errs, field.Required(specPath.Child("policyName"), ""))
	} else {
		errs = append(errs, validateName(spec.PolicyName, nameIsDNSSubdomain, false, specPath.Child("policyName"))...)
	}
	errs = append(errs, validateParamRef(spec.ParamRef, specPath.Child("paramRef"))...)
	if spec.MatchResources != nil {
		errs = append(errs, validateMatchResources(spec.MatchResources, specPath.Child("matchResources"), false)...)
	}
	ap := specPath.Child("validationActions")
	if len(spec.ValidationActions) == 0 {
		errs = append(errs, field.Required(ap, ""))
	}
	seen := sets.New[string]()
	for i, a := range spec.ValidationActions {
		if seen.Has(string(a)) {
			errs = append(errs, field.Duplicate(ap.Index(i), a))
		}
		seen.Insert(string(a))
		if !supportedValidationActions.Has(string(a)) {
			errs = append(errs, field.NotSupported(ap.Index(i), a, sets.List(supportedValidationActions)))
		}
	}
	if seen.HasAll(string(admissionregistrationv1.Deny), string(admissionregistrationv1.Warn)) {
		errs = append(errs, field.Invalid(ap, spec.ValidationActions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	return errs
}
