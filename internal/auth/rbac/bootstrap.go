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
// minik's own (MinikClusterRoles, with the roles of minik's controllers).
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

// minikControllerRoles are the roles of minik's controllers kube runs
// elsewhere, named system:minik:controller:<service account> and bound to
// kube-system/<service account>: the CustomResourceDefinition controller
// (kube's apiextensions-apiserver runs it inside the API server, as the
// loopback client) names, establishes and finalizes definitions, deleting
// their custom resources; and the simulated CSI external-attacher, which
// the attach/detach controller runs as its own service account (a
// VolumeAttachment's finalizer and status).
func minikControllerRoles() []ControllerRole {
	return []ControllerRole{{
		ServiceAccount: "attachdetach-controller",
		role: clusterRole("system:minik:controller:csi-attacher", nil,
			newRule("get", "list", "watch", "update", "patch").groups("storage.k8s.io").resources("volumeattachments").rule(),
			newRule("update", "patch").groups("storage.k8s.io").resources("volumeattachments/status").rule(),
			newRule("get", "list", "watch").groups("storage.k8s.io").resources("csidrivers").rule(),
			newRule("create", "patch", "update").groups(legacyGroup, eventsGroup).resources("events").rule(),
		),
	}, {
		ServiceAccount: "crd-controller",
		role: clusterRole("system:minik:controller:crd-controller", nil,
			newRule("get", "list", "watch", "patch").groups("apiextensions.k8s.io").resources("customresourcedefinitions").rule(),
			newRule("update").groups("apiextensions.k8s.io").resources("customresourcedefinitions/status").rule(),
			newRule("list", "deletecollection").groups("*").resources("*").rule(),
		),
	}}
}

// ControllerServiceAccounts are the service accounts in kube-system the
// bootstrap policy grants a controller role to (kube's and minik's), each
// the identity of a controller run with
// --use-service-account-credentials.
func ControllerServiceAccounts() []string {
	var out []string
	for _, c := range append(kubeControllerRoles(), minikControllerRoles()...) {
		if !slices.Contains(out, c.ServiceAccount) {
			out = append(out, c.ServiceAccount)
		}
	}
	return out
}

// ControllerManagerRole names the ClusterRole, and its binding to
// system:kube-controller-manager, that a controller manager running every
// controller with its own credentials (--use-service-account-credentials
// =false) needs, as kube's documentation asks of whoever turns that off:
// the union of every controller's role. It is no bootstrap policy; minikd
// ensures it only in that mode (ControllerManagerGrant) and removes the
// binding otherwise.
const ControllerManagerRole = "system:minik:controller-manager"

// ControllerManagerGrant returns the ClusterRole ControllerManagerRole and
// its binding to system:kube-controller-manager.
func ControllerManagerGrant() (*rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding) {
	var rules []rbacv1.PolicyRule
	for _, c := range append(kubeControllerRoles(), minikControllerRoles()...) {
		for _, r := range c.role.Rules {
			if !slices.ContainsFunc(rules, func(x rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(x, r) }) {
				rules = append(rules, r)
			}
		}
	}
	role := clusterRole(ControllerManagerRole, nil, rules...)
	b := binding(ControllerManagerRole, ControllerManagerRole, user(auth.UserControllerManager))
	return &role, &b
}

// MinikClusterRoles are the ClusterRoles minik adds to kube's, each
// named system:minik:*: the roles of its own controllers, and the Gateway
// API's rules aggregated into edit (and so admin) and view, as a Gateway
// API implementation's manifest would ship them.
func MinikClusterRoles() []rbacv1.ClusterRole {
	var roles []rbacv1.ClusterRole
	for _, c := range minikControllerRoles() {
		roles = append(roles, c.role)
	}
	return append(roles,
		clusterRole("system:minik:gateway-aggregate-to-edit", map[string]string{AggregateToEdit: "true"},
			newRule(Write...).groups(gatewayGroup).resources("gateways", "httproutes").rule()),
		clusterRole("system:minik:gateway-aggregate-to-view", map[string]string{AggregateToView: "true"},
			newRule(Read...).groups(gatewayGroup).resources("gateways", "gateways/status", "httproutes", "httproutes/status", "gatewayclasses").rule()),
	)
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
// then each controller's role (kube's, then minik's) bound to its service
// account in kube-system.
func ClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	bs := kubeClusterRoleBindings()
	for _, c := range append(kubeControllerRoles(), minikControllerRoles()...) {
		bs = append(bs, binding(c.role.Name, c.role.Name, serviceAccount("kube-system", c.ServiceAccount)))
	}
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
