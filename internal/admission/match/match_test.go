package match

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minik/internal/admission"
)

func rule(ops []admissionregistrationv1.OperationType, groups, versions, resources []string, scope admissionregistrationv1.ScopeType) admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{
		APIGroups: groups, APIVersions: versions, Resources: resources, Scope: &scope,
	}}
}

var (
	create = []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	all    = []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll}
)

func TestRule(t *testing.T) {
	deploy := &admission.Attributes{Operation: admission.Create, Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace: "demo", Name: "web"}
	scale := &admission.Attributes{Operation: admission.Update, Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Subresource: "scale", Namespace: "demo", Name: "web"}
	node := &admission.Attributes{Operation: admission.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, Name: "n1"}
	ns := &admission.Attributes{Operation: admission.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Name: "demo"}
	tests := []struct {
		name string
		r    admissionregistrationv1.RuleWithOperations
		a    *admission.Attributes
		want bool
	}{
		{"an exact rule matches", rule(create, []string{"apps"}, []string{"v1"}, []string{"deployments"}, "*"), deploy, true},
		{"another operation does not", rule([]admissionregistrationv1.OperationType{admissionregistrationv1.Delete}, []string{"apps"}, []string{"v1"}, []string{"deployments"}, "*"), deploy, false},
		{"another group does not", rule(create, []string{""}, []string{"v1"}, []string{"deployments"}, "*"), deploy, false},
		{"another version does not", rule(create, []string{"apps"}, []string{"v1beta1"}, []string{"deployments"}, "*"), deploy, false},
		{"wildcards match everything", rule(all, []string{"*"}, []string{"*"}, []string{"*"}, "*"), deploy, true},
		{"'*' does not match a subresource", rule(all, []string{"*"}, []string{"*"}, []string{"*"}, "*"), scale, false},
		{"'*/*' matches a subresource", rule(all, []string{"*"}, []string{"*"}, []string{"*/*"}, "*"), scale, true},
		{"'deployments/*' matches a subresource", rule(all, []string{"apps"}, []string{"v1"}, []string{"deployments/*"}, "*"), scale, true},
		{"'*/scale' matches a subresource", rule(all, []string{"apps"}, []string{"v1"}, []string{"*/scale"}, "*"), scale, true},
		{"'deployments' does not match its scale", rule(all, []string{"apps"}, []string{"v1"}, []string{"deployments"}, "*"), scale, false},
		{"Namespaced scope matches a namespaced object", rule(all, []string{"*"}, []string{"*"}, []string{"*"}, admissionregistrationv1.NamespacedScope), deploy, true},
		{"Namespaced scope does not match a node", rule(all, []string{"*"}, []string{"*"}, []string{"*"}, admissionregistrationv1.NamespacedScope), node, false},
		{"Cluster scope matches a node", rule(all, []string{"*"}, []string{"*"}, []string{"*"}, admissionregistrationv1.ClusterScope), node, true},
		{"Cluster scope matches a namespace", rule(all, []string{"*"}, []string{"*"}, []string{"*"}, admissionregistrationv1.ClusterScope), ns, true},
		{"Cluster scope does not match a deployment", rule(all, []string{"*"}, []string{"*"}, []string{"*"}, admissionregistrationv1.ClusterScope), deploy, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Rule(tt.r, tt.a); got != tt.want {
				t.Errorf("Rule = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSelectors(t *testing.T) {
	ctx := context.Background()
	get := func(_ context.Context, name string) (*corev1.Namespace, error) {
		if name == "demo" {
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo", Labels: map[string]string{"env": "prod"}}}, nil
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
	}
	prod := &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	pod := func(ns string, labels map[string]string) *admission.Attributes {
		return &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Namespace: ns, Name: "web",
			Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: labels}}}
	}
	if ok, err := Namespace(ctx, prod, pod("demo", nil), get); !ok || err != nil {
		t.Errorf("namespace labels: %v %v", ok, err)
	}
	if _, err := Namespace(ctx, prod, pod("gone", nil), get); !apierrors.IsNotFound(err) {
		t.Errorf("missing namespace: %v", err)
	}
	node := &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("nodes"), Name: "n1"}
	if ok, _ := Namespace(ctx, prod, node, get); !ok {
		t.Error("a cluster-scoped object is not exempted from namespaceSelector")
	}
	nsCreate := &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("namespaces"), Name: "new",
		Object: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "new", Labels: map[string]string{"env": "prod"}}}}
	if ok, err := Namespace(ctx, prod, nsCreate, get); !ok || err != nil {
		t.Errorf("a namespace is matched on its own labels: %v %v", ok, err)
	}
	web := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	if ok, _ := Object(web, pod("demo", map[string]string{"app": "web"})); !ok {
		t.Error("object labels")
	}
	upd := pod("demo", nil)
	upd.OldObject = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}
	if ok, _ := Object(web, upd); !ok {
		t.Error("old object labels")
	}
	if ok, _ := Object(web, pod("demo", nil)); ok {
		t.Error("matched an unlabelled object")
	}
}

func TestResources(t *testing.T) {
	ctx := context.Background()
	get := func(context.Context, string) (*corev1.Namespace, error) { return &corev1.Namespace{}, nil }
	deploy := &admission.Attributes{Operation: admission.Create, Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace: "demo", Name: "web"}
	named := func(names ...string) admissionregistrationv1.NamedRuleWithOperations {
		return admissionregistrationv1.NamedRuleWithOperations{ResourceNames: names, RuleWithOperations: rule(all, []string{"apps"}, []string{"v1"}, []string{"deployments"}, "*")}
	}
	tests := []struct {
		name string
		m    *admissionregistrationv1.MatchResources
		want bool
	}{
		{"no match resources selects everything", nil, true},
		{"empty resource rules select everything", &admissionregistrationv1.MatchResources{}, true},
		{"a resource rule selects", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{named()}}, true},
		{"resource names restrict", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{named("api")}}, false},
		{"exclusion wins", &admissionregistrationv1.MatchResources{
			ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{named()}, ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{named("web")}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resources(ctx, tt.m, deploy, get, nil)
			if err != nil || got != tt.want {
				t.Errorf("Resources = %v, %v, want %v", got, err, tt.want)
			}
		})
	}
	cfg := &admission.Attributes{Operation: admission.Create, Resource: admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"), Name: "x"}
	if !Exempt(cfg) || Exempt(deploy) {
		t.Error("Exempt")
	}
}
