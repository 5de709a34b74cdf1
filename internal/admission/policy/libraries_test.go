package policy

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"

	"minik/internal/admission"
	"minik/internal/auth"
	"minik/internal/auth/rbac"
)

// webDeployment is a Deployment with the annotations, labels and memory
// limit the library policies read.
func webDeployment(annotations map[string]string, team, memory string, user *auth.User) *admission.Attributes {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo", Annotations: annotations, Labels: map[string]string{"team": team}},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "web", Image: "nginx",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memory)}},
		}}}}},
	}
	return &admission.Attributes{
		Operation: admission.Create, Kind: appsv1.SchemeGroupVersion.WithKind("Deployment"), Resource: appsv1.SchemeGroupVersion.WithResource("deployments"),
		Namespace: "demo", Name: "web", Object: d, User: user,
	}
}

// denial is kube's message for a Deny binding's failed validation.
func denial(policy, binding, message string) string {
	return `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy '` + policy + `' with binding '` + binding + `' denied request: ` + message
}

func TestKubernetesLibraries(t *testing.T) {
	ctx := context.Background()
	good := map[string]string{"docs": "https://docs.example.com/web", "egress": "10.1.2.3"}
	cases := []struct {
		name       string
		validation admissionregistrationv1.Validation
		pass, fail *admission.Attributes
		want       string
	}{{
		name: "quantity() compares a memory limit",
		validation: admissionregistrationv1.Validation{
			Expression:        "object.spec.template.spec.containers.all(c, quantity(c.resources.limits.memory).isLessThan(quantity('1Gi')))",
			MessageExpression: "'memory limit ' + object.spec.template.spec.containers[0].resources.limits.memory + ' is not below 1Gi'",
		},
		pass: webDeployment(good, "web", "512Mi", nil),
		fail: webDeployment(good, "web", "2Gi", nil),
		want: "memory limit 2Gi is not below 1Gi",
	}, {
		name: "url() reads a documentation link's scheme",
		validation: admissionregistrationv1.Validation{
			Expression: "isURL(object.metadata.annotations.docs) && url(object.metadata.annotations.docs).getScheme() == 'https'",
			Message:    "docs must be an https URL",
		},
		pass: webDeployment(good, "web", "1Mi", nil),
		fail: webDeployment(map[string]string{"docs": "http://docs.example.com", "egress": "10.1.2.3"}, "web", "1Mi", nil),
		want: "docs must be an https URL",
	}, {
		name: "ip() and cidr() place an address in a network",
		validation: admissionregistrationv1.Validation{
			Expression:        "isIP(object.metadata.annotations.egress) && cidr('10.0.0.0/8').containsIP(ip(object.metadata.annotations.egress))",
			MessageExpression: "'egress ' + object.metadata.annotations.egress + ' is outside ' + string(cidr('10.0.0.0/8'))",
		},
		pass: webDeployment(good, "web", "1Mi", nil),
		fail: webDeployment(map[string]string{"docs": "https://x", "egress": "192.168.1.1"}, "web", "1Mi", nil),
		want: "egress 192.168.1.1 is outside 10.0.0.0/8",
	}, {
		name: "format validates a label value with kube's own message",
		validation: admissionregistrationv1.Validation{
			Expression:        "!format.dns1123Label().validate(object.metadata.labels.team).hasValue()",
			MessageExpression: "'team: ' + format.dns1123Label().validate(object.metadata.labels.team).value().join('; ')",
		},
		pass: webDeployment(good, "web", "1Mi", nil),
		fail: webDeployment(good, "Web_Team", "1Mi", nil),
		want: "team: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPlugin(t, nil, policy("p", c.validation), binding("b", "p", admissionregistrationv1.Deny))
			if err := p.Validate(ctx, c.pass); err != nil {
				t.Fatalf("refused a valid deployment: %v", err)
			}
			err := p.Validate(ctx, c.fail)
			if want := denial("p", "b", c.want); err == nil || err.Error() != want {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
		})
	}
}

// rbacAuthorizer is minik's RBAC authorizer over these objects.
func rbacAuthorizer(objs ...runtime.Object) *rbac.Authorizer {
	var roles, bindings []runtime.Object
	for _, o := range objs {
		switch o.(type) {
		case *rbacv1.ClusterRole:
			roles = append(roles, o)
		case *rbacv1.ClusterRoleBinding:
			bindings = append(bindings, o)
		}
	}
	byNamespace := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	return rbac.NewFromListers(rbaclisters.NewRoleLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, byNamespace)),
		rbaclisters.NewRoleBindingLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, byNamespace)),
		rbaclisters.NewClusterRoleLister(indexer(roles...)), rbaclisters.NewClusterRoleBindingLister(indexer(bindings...)))
}

func TestAuthorizerChecks(t *testing.T) {
	ctx := context.Background()
	authz := rbacAuthorizer(
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "deployment-approver"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"approve"}},
				{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"create"}, ResourceNames: []string{"web"}},
			},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "alice-approves"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "deployment-approver"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
		},
	)
	alice := &auth.User{Name: "alice", Groups: []string{auth.GroupAuthenticated}}
	bob := &auth.User{Name: "bob", Groups: []string{auth.GroupAuthenticated}}
	cases := []struct {
		name       string
		validation admissionregistrationv1.Validation
		want       string
	}{{
		name: "authorizer.group().resource().check()",
		validation: admissionregistrationv1.Validation{
			Expression:        "authorizer.group('apps').resource('deployments').namespace(object.metadata.namespace).check('approve').allowed()",
			MessageExpression: "'user ' + request.userInfo.username + ' may not approve deployments'",
		},
		want: "user bob may not approve deployments",
	}, {
		name: "authorizer.requestResource with the request's own name",
		validation: admissionregistrationv1.Validation{
			// Two checks: each costs what kube charges an authorizer call,
			// and a third would pass the per-call cost limit.
			Expression: "authorizer.requestResource.check('create').allowed() && !authorizer.requestResource.name('db').check('create').allowed()",
			Message:    "only named creates are delegated",
		},
		want: "only named creates are delegated",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPlugin(t, nil, policy("approval", c.validation), binding("approval-binding", "approval", admissionregistrationv1.Deny))
			p.cfg.Authorizer = authz
			if err := p.Validate(ctx, webDeployment(nil, "web", "1Mi", alice)); err != nil {
				t.Fatalf("refused alice, who holds the permission: %v", err)
			}
			err := p.Validate(ctx, webDeployment(nil, "web", "1Mi", bob))
			if want := denial("approval", "approval-binding", c.want); err == nil || err.Error() != want {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
		})
	}
	t.Run("without an authorizer the variable is missing and failurePolicy decides", func(t *testing.T) {
		p := newPlugin(t, nil, policy("approval", cases[0].validation), binding("approval-binding", "approval", admissionregistrationv1.Deny))
		err := p.Validate(ctx, webDeployment(nil, "web", "1Mi", alice))
		if err == nil {
			t.Fatal("admitted without an authorizer to ask")
		}
	})
}
