package registry

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func admissionStrategy(t *testing.T, gr schema.GroupResource) Strategy {
	t.Helper()
	for _, r := range All() {
		if r.GroupResource() == gr {
			return r.Strategy
		}
	}
	t.Fatalf("%s not served", gr)
	return Strategy{}
}

// errorsOf defaults and validates obj, returning the error messages.
func errorsOf(t *testing.T, gr schema.GroupResource, obj runtime.Object) string {
	t.Helper()
	s := admissionStrategy(t, gr)
	if s.Default != nil {
		s.Default(obj)
	}
	var msgs []string
	for _, e := range s.Validate(context.Background(), obj) {
		msgs = append(msgs, e.Error())
	}
	return strings.Join(msgs, "\n")
}

func TestAdmissionResourcesKeepGeneration(t *testing.T) {
	for _, r := range All() {
		if r.GroupVersion != admissionregistrationV1 && r.Name != "limitranges" {
			continue
		}
		wantGeneration := r.GroupVersion == admissionregistrationV1
		if got := !r.Strategy.NoGeneration; got != wantGeneration || r.Strategy.KeepStatusOnCreate {
			t.Errorf("%s: generation %v (want %v), keep status %v", r.Name, got, wantGeneration, r.Strategy.KeepStatusOnCreate)
		}
	}
}

var (
	mwcGR = schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}
	vapGR = schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}
	vpbGR = schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}
	lrGR  = schema.GroupResource{Resource: "limitranges"}
)

func TestWebhookConfigurationValidation(t *testing.T) {
	none := admissionregistrationv1.SideEffectClassNone
	url := "https://hooks.example.com/mutate"
	good := func() *admissionregistrationv1.MutatingWebhookConfiguration {
		return &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "hooks"}, Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "pods.hooks.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url},
			SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{"CREATE"},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods", "pods/status"}},
			}},
		}}}
	}
	tests := []struct {
		name   string
		change func(c *admissionregistrationv1.MutatingWebhookConfiguration)
		want   string
	}{
		{"a valid configuration", func(*admissionregistrationv1.MutatingWebhookConfiguration) {}, ""},
		{"the hook name must be a three-segment domain", func(c *admissionregistrationv1.MutatingWebhookConfiguration) { c.Webhooks[0].Name = "hook" },
			`webhooks[0].name: Invalid value: "hook": should be a domain with at least three segments separated by dots`},
		{"sideEffects is required", func(c *admissionregistrationv1.MutatingWebhookConfiguration) { c.Webhooks[0].SideEffects = nil },
			"webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"},
		{"admissionReviewVersions must include v1 or v1beta1", func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
			c.Webhooks[0].AdmissionReviewVersions = []string{"v2"}
		},
			"webhooks[0].admissionReviewVersions: Required value: must include at least one of v1, v1beta1"},
		{"exactly one of url and service", func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
			c.Webhooks[0].ClientConfig.Service = &admissionregistrationv1.ServiceReference{Name: "s", Namespace: "n"}
		}, "webhooks[0].clientConfig: Required value: exactly one of url or service is required"},
		{"the url must be https without a query", func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
			u := "http://hooks.example.com/x?a=b"
			c.Webhooks[0].ClientConfig.URL = &u
		}, `webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]` + "\n" +
			`webhooks[0].clientConfig.url: Invalid value: "a=b": query parameters are not permitted in the URL`},
		{"the timeout is between 1 and 30 seconds", func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
			s := int32(31)
			c.Webhooks[0].TimeoutSeconds = &s
		}, "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds"},
		{"'*' stands alone among resources", func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
			c.Webhooks[0].Rules[0].Resources = []string{"*/*", "pods"}
		}, `webhooks[0].rules[0].resources: Invalid value: ["*/*","pods"]: if '*/*' is present, must not specify other resources`},
		{"hook names are unique", func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
			c.Webhooks = append(c.Webhooks, c.Webhooks[0])
		}, `webhooks[1].name: Duplicate value: "pods.hooks.example.com"`},
		{"match conditions must compile", func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
			c.Webhooks[0].MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "bad", Expression: "object.metadata.name =="}}
		}, `webhooks[0].matchConditions[0].expression: Invalid value: "object.metadata.name ==": compilation failed: ERROR: <input>:1:24: Syntax error: mismatched input '<EOF>'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good()
			tt.change(c)
			got := errorsOf(t, mwcGR, c)
			if tt.want == "" && got != "" || tt.want != "" && !strings.HasPrefix(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
	t.Run("defaults are kube's", func(t *testing.T) {
		c := good()
		svc := admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Name: "s", Namespace: "n"}}
		c.Webhooks[0].ClientConfig = svc
		if got := errorsOf(t, mwcGR, c); got != "" {
			t.Fatal(got)
		}
		w := c.Webhooks[0]
		if *w.FailurePolicy != "Fail" || *w.MatchPolicy != "Equivalent" || *w.TimeoutSeconds != 10 || *w.ReinvocationPolicy != "Never" ||
			*w.Rules[0].Scope != "*" || *w.ClientConfig.Service.Port != 443 || w.NamespaceSelector == nil || w.ObjectSelector == nil {
			t.Errorf("defaulted webhook = %+v", w)
		}
	})
}

func TestValidatingAdmissionPolicyValidation(t *testing.T) {
	rules := &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
		RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{"CREATE"},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
		},
	}}}
	tests := []struct {
		name string
		spec admissionregistrationv1.ValidatingAdmissionPolicySpec
		want string
	}{
		{"a valid policy", admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: rules,
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 5"}}}, ""},
		{"matchConstraints are required", admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "true"}}}, "spec.matchConstraints: Required value"},
		{"some validation is required", admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: rules},
			"spec.validations: Required value: validations or auditAnnotations must contain at least one item"},
		{"expressions must compile", admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: rules,
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <"}}},
			`spec.validations[0].expression: Invalid value: "object.spec.replicas <": compilation failed: ERROR: <input>:1:23:`},
		{"messages are one line", admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: rules,
			Validations: []admissionregistrationv1.Validation{{Expression: "true", Message: "a\nb"}}},
			`spec.validations[0].message: Invalid value: "a\nb": message must not contain line breaks`},
		{"variable names are CEL identifiers", admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: rules,
			Validations: []admissionregistrationv1.Validation{{Expression: "true"}}, Variables: []admissionregistrationv1.Variable{{Name: "a-b", Expression: "1"}}},
			`spec.variables[0].name: Invalid value: "a-b": name is not a valid CEL identifier`},
		{"validations read the policy's variables and kube's libraries", admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: rules,
			Variables:   []admissionregistrationv1.Variable{{Name: "limit", Expression: "quantity('1Gi')"}},
			Validations: []admissionregistrationv1.Validation{{Expression: "quantity('512Mi').isLessThan(variables.limit)", MessageExpression: "'over ' + string(variables.limit.asInteger())"}}}, ""},
		{"a variable the policy does not declare does not compile", admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: rules,
			Validations: []admissionregistrationv1.Validation{{Expression: "variables.missing"}}},
			`spec.validations[0].expression: Invalid value: "variables.missing": compilation failed: ERROR: <input>:1:10: undefined field 'missing'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: *tt.spec.DeepCopy()}
			got := errorsOf(t, vapGR, p)
			if tt.want == "" && got != "" || tt.want != "" && !strings.HasPrefix(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", got, tt.want)
			}
			if tt.want == "" && (*p.Spec.FailurePolicy != "Fail" || *p.Spec.MatchConstraints.MatchPolicy != "Equivalent") {
				t.Errorf("defaults: %+v", p.Spec)
			}
		})
	}
}

func TestValidatingAdmissionPolicyBindingValidation(t *testing.T) {
	deny := admissionregistrationv1.DenyAction
	tests := []struct {
		name string
		spec admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec
		want string
	}{
		{"a valid binding", admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{"Deny"}}, ""},
		{"validationActions are required", admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p"}, "spec.validationActions: Required value"},
		{"Deny and Warn do not go together", admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{"Deny", "Warn"}},
			`spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)`},
		{"a paramRef names one of name or selector", admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{"Audit"},
			ParamRef: &admissionregistrationv1.ParamRef{ParameterNotFoundAction: &deny}}, "spec.paramRef: Required value: one of name or selector must be specified"},
		{"a paramRef needs parameterNotFoundAction", admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{"Audit"},
			ParamRef: &admissionregistrationv1.ParamRef{Name: "x"}}, "spec.paramRef.parameterNotFoundAction: Required value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: tt.spec}
			got := errorsOf(t, vpbGR, b)
			if tt.want == "" && got != "" || tt.want != "" && !strings.HasPrefix(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestLimitRangeStrategy(t *testing.T) {
	q := func(kv ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	lr := func(items ...corev1.LimitRangeItem) *corev1.LimitRange {
		return &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "demo"}, Spec: corev1.LimitRangeSpec{Limits: items}}
	}
	t.Run("Container defaults come from max, then default, then min", func(t *testing.T) {
		l := lr(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: q("cpu", "1"), Min: q("memory", "64Mi")})
		if got := errorsOf(t, lrGR, l); got != "" {
			t.Fatal(got)
		}
		item := l.Spec.Limits[0]
		if item.Default.Cpu().String() != "1" || item.DefaultRequest.Cpu().String() != "1" || item.DefaultRequest.Memory().String() != "64Mi" {
			t.Errorf("item = %+v", item)
		}
	})
	tests := []struct {
		name string
		item corev1.LimitRangeItem
		want string
	}{
		{"min above max", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Min: q("cpu", "2"), Max: q("cpu", "1")},
			`spec.limits[0][cpu]: Invalid value: "2": min value 2 is greater than max value 1`},
		{"a ratio below 1", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: q("cpu", "500m")},
			`spec.limits[0][cpu]: Invalid value: "500m": ratio 500m is less than 1`},
		{"a Pod item with defaults", corev1.LimitRangeItem{Type: corev1.LimitTypePod, Default: q("cpu", "1")},
			"spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"},
		{"an unknown container resource", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: q("pods", "1")},
			`spec.limits[0].max[pods]: Invalid value: "pods": must be a standard resource for containers`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := errorsOf(t, lrGR, lr(tt.item))
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
