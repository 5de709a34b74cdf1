package rbac

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/auth"
)

// Verb sets of the bootstrap policy, as kube names them.
var (
	Read      = []string{"get", "list", "watch"}
	Write     = []string{"create", "update", "patch", "delete", "deletecollection"}
	ReadWrite = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
)

// Bootstrap metadata: every bootstrap object carries the label, and the
// annotation lets reconciliation add what later versions grant.
const (
	BootstrapLabel      = "kubernetes.io/bootstrapping"
	BootstrapLabelValue = "rbac-defaults"
)

const (
	legacyGroup     = ""
	discoveryGroup  = "discovery.k8s.io"
	eventsGroup     = "events.k8s.io"
	gatewayGroup    = "gateway.networking.k8s.io"
	networkingGroup = "networking.k8s.io"
	rbacGroup       = rbacv1.GroupName
)

// Aggregation labels of the user-facing roles.
const (
	AggregateToAdmin = "rbac.authorization.k8s.io/aggregate-to-admin"
	AggregateToEdit  = "rbac.authorization.k8s.io/aggregate-to-edit"
	AggregateToView  = "rbac.authorization.k8s.io/aggregate-to-view"
)

// ruleBuilder builds a PolicyRule: newRule(verbs...).groups(...).resources(...).
type ruleBuilder struct{ r rbacv1.PolicyRule }

func newRule(verbs ...string) *ruleBuilder {
	return &ruleBuilder{r: rbacv1.PolicyRule{Verbs: verbs}}
}

func (b *ruleBuilder) groups(g ...string) *ruleBuilder    { b.r.APIGroups = g; return b }
func (b *ruleBuilder) resources(r ...string) *ruleBuilder { b.r.Resources = r; return b }
func (b *ruleBuilder) names(n ...string) *ruleBuilder     { b.r.ResourceNames = n; return b }
func (b *ruleBuilder) urls(u ...string) *ruleBuilder      { b.r.NonResourceURLs = u; return b }
func (b *ruleBuilder) rule() rbacv1.PolicyRule            { return b.r }

func eventsRule() rbacv1.PolicyRule {
	return newRule("create", "patch", "update").groups(legacyGroup, eventsGroup).resources("events").rule()
}

// NodeRules are the permissions of a node: the rules of kube's system:node
// role. The node authorizer (internal/auth/node) grants them to each node,
// narrowing secrets, configmaps, claims, volumes and service account
// tokens to those its pods reference and leases to the node's own; the
// NodeRestriction admission plugin narrows writes to the node's own Node
// and to the pods bound to it.
func NodeRules() []rbacv1.PolicyRule {
	for _, r := range kubeClusterRoles() {
		if r.Name == "system:node" {
			return r.Rules
		}
	}
	panic("rbac: kube's bootstrap policy has no system:node role")
}

func clusterRole(name string, labels map[string]string, rules ...rbacv1.PolicyRule) rbacv1.ClusterRole {
	return rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules}
}

func aggregated(name string, labels map[string]string, selectorLabel string) rbacv1.ClusterRole {
	r := clusterRole(name, labels)
	r.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{selectorLabel: "true"}}}}
	return r
}

func role(namespace, name string, rules ...rbacv1.PolicyRule) rbacv1.Role {
	return rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Rules: rules}
}

// ClusterRoles returns the bootstrap ClusterRoles: kube's (policy.go),
// the roles of kube's controllers (system:controller:<name>), then
// minik's own (MinikClusterRoles).
func ClusterRoles() []rbacv1.ClusterRole {
	roles := kubeClusterRoles()
	for _, c := range kubeControllerRoles() {
		roles = append(roles, c.role)
	}
	roles = append(roles, MinikClusterRoles()...)
	for i := range roles {
		addBootstrapMetadata(&roles[i].ObjectMeta)
	}
	return roles
}

// ControllerRole is the role of one of kube-controller-manager's
// controllers (system:controller:<name>), bound to its service account
// kube-system/<name> as kube binds it.
type ControllerRole struct {
	ServiceAccount string
	role           rbacv1.ClusterRole
}

func controllerRole(sa string, rules ...rbacv1.PolicyRule) ControllerRole {
	return ControllerRole{ServiceAccount: sa, role: clusterRole("system:controller:"+sa, nil, rules...)}
}

// ControllerManagerRole names minik's ClusterRole of its controller
// manager. kube-controller-manager runs each controller with its own
// service account's credentials (--use-service-account-credentials);
// minik's runs every controller as system:kube-controller-manager, so
// that user is granted, through this role, the union of the controllers'
// roles and of minik's own controllers', leaving kube's bindings as kube
// makes them.
const ControllerManagerRole = "system:minik:controller-manager"

// minikControllerRules are the rules of minik's controllers kube does
// not have: the gateway controller (Ingress and Gateway API status), and
// the simulated CSI external-attacher (a VolumeAttachment's finalizer and
// status).
func minikControllerRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		newRule(Read...).groups(networkingGroup).resources("ingresses", "ingressclasses").rule(),
		newRule("update", "patch").groups(networkingGroup).resources("ingresses/status").rule(),
		newRule(Read...).groups(gatewayGroup).resources("*").rule(),
		newRule("update", "patch").groups(gatewayGroup).resources("*/status").rule(),
		newRule(Read...).groups(legacyGroup).resources("services", "endpoints", "pods", "secrets").rule(),
		newRule(Read...).groups(discoveryGroup).resources("endpointslices").rule(),
		newRule("update", "patch").groups("storage.k8s.io").resources("volumeattachments", "volumeattachments/status").rule(),
		eventsRule(),
	}
}

// MinikClusterRoles are the ClusterRoles minik adds to kube's, each
// named system:minik:*: its controller manager's role, and the Gateway
// API's rules aggregated into edit (and so admin) and view, as a Gateway
// API implementation's manifest would ship them.
func MinikClusterRoles() []rbacv1.ClusterRole {
	var rules []rbacv1.PolicyRule
	for _, c := range kubeControllerRoles() {
		for _, r := range c.role.Rules {
			if !slices.ContainsFunc(rules, func(x rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(x, r) }) {
				rules = append(rules, r)
			}
		}
	}
	rules = append(rules, minikControllerRules()...)
	return []rbacv1.ClusterRole{
		clusterRole(ControllerManagerRole, nil, rules...),
		clusterRole("system:minik:gateway-aggregate-to-edit", map[string]string{AggregateToEdit: "true"},
			newRule(Write...).groups(gatewayGroup).resources("gateways", "httproutes").rule()),
		clusterRole("system:minik:gateway-aggregate-to-view", map[string]string{AggregateToView: "true"},
			newRule(Read...).groups(gatewayGroup).resources("gateways", "gateways/status", "httproutes", "httproutes/status", "gatewayclasses").rule()),
	}
}

func binding(name, role string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
	return rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   subjects,
	}
}

func roleBinding(namespace, name, role string, subjects ...rbacv1.Subject) rbacv1.RoleBinding {
	return rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
		Subjects:   subjects,
	}
}

func group(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}

func user(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}

func serviceAccount(ns, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
}

// ClusterRoleBindings returns the bootstrap ClusterRoleBindings: kube's,
// each controller's role bound to its service account in kube-system,
// then minik's controller manager's.
func ClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	bs := kubeClusterRoleBindings()
	for _, c := range kubeControllerRoles() {
		bs = append(bs, binding(c.role.Name, c.role.Name, serviceAccount("kube-system", c.ServiceAccount)))
	}
	bs = append(bs, binding(ControllerManagerRole, ControllerManagerRole, user(auth.UserControllerManager)))
	for i := range bs {
		addBootstrapMetadata(&bs[i].ObjectMeta)
	}
	return bs
}

// NamespaceRoles returns kube's bootstrap Roles of kube-system and
// kube-public.
func NamespaceRoles() []rbacv1.Role {
	roles := kubeNamespaceRoles()
	for i := range roles {
		addBootstrapMetadata(&roles[i].ObjectMeta)
	}
	return roles
}

// NamespaceRoleBindings returns kube's bootstrap RoleBindings of
// kube-system and kube-public.
func NamespaceRoleBindings() []rbacv1.RoleBinding {
	bs := kubeNamespaceRoleBindings()
	for i := range bs {
		addBootstrapMetadata(&bs[i].ObjectMeta)
	}
	return bs
}

func addBootstrapMetadata(m *metav1.ObjectMeta) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[BootstrapLabel] = BootstrapLabelValue
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[rbacv1.AutoUpdateAnnotationKey] = "true"
}
