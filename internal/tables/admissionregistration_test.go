package tables

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Fixtures of the admissionregistration tables.

func mutatingWebhookFixtures() []runtime.Object {
	return []runtime.Object{
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: clusterMeta("sidecar-injector", 3*time.Hour),
			Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "a.example.com"}, {Name: "b.example.com"}}},
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: clusterMeta("empty", 45*time.Second)},
	}
}

func validatingWebhookFixtures() []runtime.Object {
	return []runtime.Object{
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: clusterMeta("policy-check", 26*time.Hour),
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "check.example.com"}}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "no-timestamp"}},
	}
}

func validatingAdmissionPolicyFixtures() []runtime.Object {
	return []runtime.Object{
		&admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: clusterMeta("replica-limit", 2*time.Hour),
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				ParamKind:   &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
				Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 5"}, {Expression: "true"}},
			}},
		&admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: clusterMeta("no-params", 5*time.Minute),
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{Validations: []admissionregistrationv1.Validation{{Expression: "true"}}}},
	}
}

func validatingAdmissionPolicyBindingFixtures() []runtime.Object {
	binding := func(name, policy string, ref *admissionregistrationv1.ParamRef) runtime.Object {
		return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: clusterMeta(name, time.Hour),
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy, ParamRef: ref}}
	}
	return []runtime.Object{
		binding("namespaced-param", "replica-limit", &admissionregistrationv1.ParamRef{Name: "limits", Namespace: "demo"}),
		binding("named-param", "replica-limit", &admissionregistrationv1.ParamRef{Name: "limits"}),
		binding("selected-params", "replica-limit", &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{
			MatchLabels:      map[string]string{"tier": "web"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod"}}},
		}}),
		binding("no-param", "no-params", nil),
	}
}
