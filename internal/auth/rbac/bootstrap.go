package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
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
	legacyGroup         = ""
	appsGroup           = "apps"
	authenticationGroup = "authentication.k8s.io"
	authorizationGroup  = "authorization.k8s.io"
	autoscalingGroup    = "autoscaling"
	batchGroup          = "batch"
	certificatesGroup   = "certificates.k8s.io"
	coordinationGroup   = "coordination.k8s.io"
	discoveryGroup      = "discovery.k8s.io"
	eventsGroup         = "events.k8s.io"
	extensionsGroup     = "extensions"
	gatewayGroup        = "gateway.networking.k8s.io"
	networkingGroup     = "networking.k8s.io"
	nodeGroup           = "node.k8s.io"
	policyGroup         = "policy"
	rbacGroup           = rbacv1.GroupName
	storageGroup        = "storage.k8s.io"
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
	return newRule("create", "update", "patch").groups(legacyGroup, eventsGroup).resources("events").rule()
}

// NodeRules are the permissions of a node (kube's system:node role). The
// node authorizer (internal/auth/node) grants them to each node, narrowing
// secrets, configmaps, claims, volumes and service account tokens to
// those its pods reference and leases to the node's own; the
// NodeRestriction admission plugin narrows writes to the node's own Node
// and to the pods bound to it.
func NodeRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		newRule("create").groups(authenticationGroup).resources("tokenreviews").rule(),
		newRule("create").groups(authorizationGroup).resources("subjectaccessreviews", "localsubjectaccessreviews").rule(),
		newRule(Read...).groups(legacyGroup).resources("services").rule(),
		newRule("create", "get", "list", "watch").groups(legacyGroup).resources("nodes").rule(),
		newRule("update", "patch").groups(legacyGroup).resources("nodes/status").rule(),
		newRule("update", "patch").groups(legacyGroup).resources("nodes").rule(),
		eventsRule(),
		newRule(Read...).groups(legacyGroup).resources("pods").rule(),
		newRule("create", "delete").groups(legacyGroup).resources("pods").rule(),
		newRule("update", "patch").groups(legacyGroup).resources("pods/status").rule(),
		newRule("create").groups(legacyGroup).resources("pods/eviction").rule(),
		newRule("get", "list", "watch").groups(legacyGroup).resources("secrets", "configmaps").rule(),
		newRule("get").groups(legacyGroup).resources("persistentvolumeclaims", "persistentvolumes").rule(),
		newRule("get").groups(legacyGroup).resources("endpoints").rule(),
		newRule("create", "get", "list", "watch").groups(certificatesGroup).resources("certificatesigningrequests").rule(),
		newRule("get", "create", "update", "patch", "delete").groups(coordinationGroup).resources("leases").rule(),
		newRule("get").groups(storageGroup).resources("volumeattachments").rule(),
		newRule("get", "update", "patch").groups(legacyGroup).resources("persistentvolumeclaims/status").rule(),
		newRule("create").groups(legacyGroup).resources("serviceaccounts/token").rule(),
		newRule("get", "watch", "list").groups(storageGroup).resources("csidrivers").rule(),
		newRule("get", "create", "update", "patch", "delete").groups(storageGroup).resources("csinodes").rule(),
		newRule("get", "list", "watch").groups(nodeGroup).resources("runtimeclasses").rule(),
	}
}

func clusterRole(name string, labels map[string]string, rules ...rbacv1.PolicyRule) rbacv1.ClusterRole {
	return rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules}
}

func aggregated(name string, labels map[string]string, selectorLabel string) rbacv1.ClusterRole {
	r := clusterRole(name, labels)
	r.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{selectorLabel: "true"}}}}
	return r
}

// ClusterRoles returns the bootstrap ClusterRoles: kube's user-facing and
// discovery roles, the roles of the control plane's components, and one
// role per controller (system:controller:<name>).
func ClusterRoles() []rbacv1.ClusterRole {
	roles := []rbacv1.ClusterRole{
		clusterRole("cluster-admin", nil,
			newRule("*").groups("*").resources("*").rule(),
			newRule("*").urls("*").rule()),
		clusterRole("system:discovery", nil,
			newRule("get").urls("/livez", "/readyz", "/healthz", "/version", "/version/",
				"/openapi", "/openapi/*", "/api", "/api/*", "/apis", "/apis/*").rule()),
		clusterRole("system:basic-user", nil,
			newRule("create").groups(authorizationGroup).resources("selfsubjectaccessreviews", "selfsubjectrulesreviews").rule(),
			newRule("create").groups(authenticationGroup).resources("selfsubjectreviews").rule()),
		clusterRole("system:public-info-viewer", nil,
			newRule("get").urls("/livez", "/readyz", "/healthz", "/version", "/version/").rule()),
		clusterRole("system:monitoring", nil,
			newRule("get").urls("/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz", "/livez/*", "/readyz/*", "/healthz/*").rule()),

		aggregated("admin", nil, AggregateToAdmin),
		aggregated("edit", map[string]string{AggregateToAdmin: "true"}, AggregateToEdit),
		aggregated("view", map[string]string{AggregateToEdit: "true"}, AggregateToView),
		clusterRole("system:aggregate-to-admin", map[string]string{AggregateToAdmin: "true"},
			newRule("create").groups(authorizationGroup).resources("localsubjectaccessreviews").rule(),
			newRule(ReadWrite...).groups(rbacGroup).resources("roles", "rolebindings").rule()),
		clusterRole("system:aggregate-to-edit", map[string]string{AggregateToEdit: "true"},
			newRule(Read...).groups(legacyGroup).resources("pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets", "services/proxy").rule(),
			newRule("impersonate").groups(legacyGroup).resources("serviceaccounts").rule(),
			newRule(Write...).groups(legacyGroup).resources("pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward").rule(),
			newRule("create").groups(legacyGroup).resources("pods/eviction").rule(),
			newRule(Write...).groups(legacyGroup).resources("replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
				"services", "services/proxy", "persistentvolumeclaims", "configmaps", "secrets").rule(),
			newRule("create").groups(legacyGroup).resources("serviceaccounts/token").rule(),
			newRule(Write...).groups(appsGroup).resources("statefulsets", "statefulsets/scale", "daemonsets",
				"deployments", "deployments/scale", "deployments/rollback", "replicasets", "replicasets/scale").rule(),
			newRule(Write...).groups(autoscalingGroup).resources("horizontalpodautoscalers").rule(),
			newRule(Write...).groups(batchGroup).resources("jobs", "cronjobs").rule(),
			newRule(Write...).groups(extensionsGroup).resources("daemonsets", "deployments", "deployments/scale", "deployments/rollback",
				"ingresses", "replicasets", "replicasets/scale", "replicationcontrollers/scale", "networkpolicies").rule(),
			newRule(Write...).groups(policyGroup).resources("poddisruptionbudgets").rule(),
			newRule(Write...).groups(networkingGroup).resources("networkpolicies", "ingresses").rule(),
			newRule(Write...).groups(gatewayGroup).resources("gateways", "httproutes").rule()),
		clusterRole("system:aggregate-to-view", map[string]string{AggregateToView: "true"},
			newRule(Read...).groups(legacyGroup).resources("pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
				"services", "services/status", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "configmaps").rule(),
			newRule(Read...).groups(legacyGroup).resources("limitranges", "resourcequotas", "bindings", "events",
				"pods/status", "resourcequotas/status", "namespaces/status", "replicationcontrollers/status", "pods/log").rule(),
			newRule(Read...).groups(legacyGroup).resources("namespaces").rule(),
			newRule(Read...).groups(discoveryGroup).resources("endpointslices").rule(),
			newRule(Read...).groups(appsGroup).resources("controllerrevisions", "statefulsets", "statefulsets/status", "statefulsets/scale",
				"daemonsets", "daemonsets/status", "deployments", "deployments/status", "deployments/scale",
				"replicasets", "replicasets/status", "replicasets/scale").rule(),
			newRule(Read...).groups(autoscalingGroup).resources("horizontalpodautoscalers", "horizontalpodautoscalers/status").rule(),
			newRule(Read...).groups(batchGroup).resources("jobs", "cronjobs", "cronjobs/status", "jobs/status").rule(),
			newRule(Read...).groups(extensionsGroup).resources("daemonsets", "daemonsets/status", "deployments", "deployments/scale",
				"deployments/status", "ingresses", "ingresses/status", "replicasets", "replicasets/scale", "replicasets/status",
				"replicationcontrollers/scale", "networkpolicies").rule(),
			newRule(Read...).groups(policyGroup).resources("poddisruptionbudgets", "poddisruptionbudgets/status").rule(),
			newRule(Read...).groups(networkingGroup).resources("networkpolicies", "ingresses", "ingresses/status").rule(),
			newRule(Read...).groups(gatewayGroup).resources("gateways", "gateways/status", "httproutes", "httproutes/status", "gatewayclasses").rule()),

		clusterRole("system:node", nil, NodeRules()...),
		clusterRole("system:node-proxier", nil,
			newRule("list", "watch").groups(legacyGroup).resources("services", "endpoints").rule(),
			newRule(Read...).groups(legacyGroup).resources("nodes").rule(),
			newRule("list", "watch").groups(discoveryGroup).resources("endpointslices").rule(),
			eventsRule()),
		clusterRole("system:auth-delegator", nil,
			newRule("create").groups(authenticationGroup).resources("tokenreviews").rule(),
			newRule("create").groups(authorizationGroup).resources("subjectaccessreviews").rule()),
		clusterRole("system:kube-controller-manager", nil,
			eventsRule(),
			newRule("create").groups(coordinationGroup).resources("leases").rule(),
			newRule("get", "update").groups(coordinationGroup).resources("leases").names("kube-controller-manager").rule(),
			newRule("create").groups(legacyGroup).resources("secrets", "serviceaccounts").rule(),
			newRule("delete").groups(legacyGroup).resources("secrets").rule(),
			newRule("get").groups(legacyGroup).resources("namespaces", "secrets", "serviceaccounts", "configmaps").rule(),
			newRule("update").groups(legacyGroup).resources("secrets", "serviceaccounts").rule(),
			newRule("create").groups(authenticationGroup).resources("tokenreviews").rule(),
			newRule("create").groups(authorizationGroup).resources("subjectaccessreviews").rule(),
			newRule("list", "watch").groups("*").resources("*").rule(),
			newRule("create").groups(legacyGroup).resources("serviceaccounts/token").rule()),
		clusterRole("system:kube-scheduler", nil,
			eventsRule(),
			newRule("create").groups(coordinationGroup).resources("leases").rule(),
			newRule("get", "update").groups(coordinationGroup).resources("leases").names("kube-scheduler").rule(),
			newRule(Read...).groups(legacyGroup).resources("nodes").rule(),
			newRule("get", "list", "watch", "delete").groups(legacyGroup).resources("pods").rule(),
			newRule("create").groups(legacyGroup).resources("pods/binding", "bindings").rule(),
			newRule("patch", "update").groups(legacyGroup).resources("pods/status").rule(),
			newRule(Read...).groups(legacyGroup).resources("services", "replicationcontrollers").rule(),
			newRule(Read...).groups(appsGroup, extensionsGroup).resources("replicasets").rule(),
			newRule(Read...).groups(appsGroup).resources("statefulsets").rule(),
			newRule(Read...).groups(policyGroup).resources("poddisruptionbudgets").rule(),
			newRule(Read...).groups(legacyGroup).resources("persistentvolumeclaims", "persistentvolumes").rule(),
			newRule("create").groups(authenticationGroup).resources("tokenreviews").rule(),
			newRule("create").groups(authorizationGroup).resources("subjectaccessreviews").rule(),
			newRule(Read...).groups(storageGroup).resources("csinodes", "csidrivers", "csistoragecapacities").rule(),
			newRule(Read...).groups(legacyGroup).resources("namespaces").rule(),
			newRule(Read...).groups(legacyGroup).resources("configmaps").rule()),
		clusterRole("system:volume-scheduler", nil,
			newRule("get", "list", "watch", "update", "patch").groups(legacyGroup).resources("persistentvolumes").rule(),
			newRule(Read...).groups(storageGroup).resources("storageclasses").rule(),
			newRule("get", "list", "watch", "update", "patch").groups(legacyGroup).resources("persistentvolumeclaims").rule()),
	}
	for _, c := range ControllerRoles() {
		roles = append(roles, c.role)
	}
	for i := range roles {
		addBootstrapMetadata(&roles[i].ObjectMeta)
	}
	return roles
}

// ControllerRole is the role of one controller (system:controller:<name>),
// granted to its service account kube-system/<name> as kube does, and to
// system:kube-controller-manager, the one identity minik's controller
// manager runs all its controllers with.
type ControllerRole struct {
	ServiceAccount string
	role           rbacv1.ClusterRole
}

func controllerRole(sa string, rules ...rbacv1.PolicyRule) ControllerRole {
	return ControllerRole{ServiceAccount: sa, role: clusterRole("system:controller:"+sa, nil, rules...)}
}

// ControllerRoles returns kube's roles of the controllers minik runs or
// plans to, plus minik's gateway controller. Together with
// system:kube-controller-manager they are the controller manager's
// permissions: the union is generous (the garbage collector and the
// namespace controller may read and delete anything), as it is in kube.
func ControllerRoles() []ControllerRole {
	return []ControllerRole{
		controllerRole("clusterrole-aggregation-controller",
			newRule("escalate", "get", "list", "patch", "update", "watch").groups(rbacGroup).resources("clusterroles").rule()),
		controllerRole("daemon-set-controller",
			newRule("get", "list", "watch").groups(extensionsGroup, appsGroup).resources("daemonsets").rule(),
			newRule("update").groups(extensionsGroup, appsGroup).resources("daemonsets/status").rule(),
			newRule("update").groups(extensionsGroup, appsGroup).resources("daemonsets/finalizers").rule(),
			newRule("list", "watch").groups(legacyGroup).resources("nodes").rule(),
			newRule("list", "watch", "create", "delete", "patch").groups(legacyGroup).resources("pods").rule(),
			newRule("create").groups(legacyGroup).resources("pods/binding").rule(),
			newRule("get", "list", "watch", "create", "delete", "update", "patch").groups(appsGroup).resources("controllerrevisions").rule(),
			eventsRule()),
		controllerRole("deployment-controller",
			newRule("get", "list", "watch", "update").groups(appsGroup, extensionsGroup).resources("deployments").rule(),
			newRule("update").groups(appsGroup, extensionsGroup).resources("deployments/status").rule(),
			newRule("create", "delete", "get", "list", "patch", "update", "watch").groups(appsGroup, extensionsGroup).resources("replicasets").rule(),
			newRule("get", "list", "watch", "update").groups(legacyGroup).resources("pods").rule(),
			eventsRule()),
		controllerRole("disruption-controller",
			newRule(Read...).groups(extensionsGroup, appsGroup).resources("deployments").rule(),
			newRule(Read...).groups(appsGroup, extensionsGroup).resources("replicasets").rule(),
			newRule(Read...).groups(legacyGroup).resources("replicationcontrollers").rule(),
			newRule(Read...).groups(policyGroup).resources("poddisruptionbudgets").rule(),
			newRule(Read...).groups(appsGroup).resources("statefulsets").rule(),
			newRule("update").groups(policyGroup).resources("poddisruptionbudgets/status").rule(),
			newRule("patch", "update").groups(legacyGroup).resources("pods/status").rule(),
			newRule("get").groups("*").resources("*/scale").rule(),
			eventsRule()),
		controllerRole("replicaset-controller",
			newRule("get", "list", "watch", "update").groups(appsGroup, extensionsGroup).resources("replicasets").rule(),
			newRule("update").groups(appsGroup, extensionsGroup).resources("replicasets/status").rule(),
			newRule("update").groups(appsGroup, extensionsGroup).resources("replicasets/finalizers").rule(),
			newRule("list", "watch", "patch", "create", "delete").groups(legacyGroup).resources("pods").rule(),
			eventsRule()),
		controllerRole("statefulset-controller",
			newRule("list", "watch").groups(legacyGroup).resources("pods").rule(),
			newRule("get", "list", "watch").groups(appsGroup).resources("statefulsets").rule(),
			newRule("update").groups(appsGroup).resources("statefulsets/status").rule(),
			newRule("update").groups(appsGroup).resources("statefulsets/finalizers").rule(),
			newRule("get", "create", "delete", "update", "patch").groups(legacyGroup).resources("pods").rule(),
			newRule("get", "create", "delete", "update", "patch", "list", "watch").groups(appsGroup).resources("controllerrevisions").rule(),
			newRule("get", "create").groups(legacyGroup).resources("persistentvolumeclaims").rule(),
			eventsRule()),
		controllerRole("job-controller",
			newRule("get", "list", "watch", "update", "patch").groups(batchGroup).resources("jobs").rule(),
			newRule("update").groups(batchGroup).resources("jobs/status").rule(),
			newRule("update").groups(batchGroup).resources("jobs/finalizers").rule(),
			newRule("list", "watch", "create", "delete", "patch").groups(legacyGroup).resources("pods").rule(),
			eventsRule()),
		controllerRole("cronjob-controller",
			newRule("get", "list", "watch", "update").groups(batchGroup).resources("cronjobs").rule(),
			newRule("get", "list", "watch", "create", "update", "delete", "patch").groups(batchGroup).resources("jobs").rule(),
			newRule("update").groups(batchGroup).resources("cronjobs/status").rule(),
			newRule("update").groups(batchGroup).resources("cronjobs/finalizers").rule(),
			newRule("list", "delete").groups(legacyGroup).resources("pods").rule(),
			eventsRule()),
		controllerRole("ttl-after-finished-controller",
			newRule("get", "list", "watch", "delete").groups(batchGroup).resources("jobs").rule(),
			eventsRule()),
		controllerRole("endpoint-controller",
			newRule("get", "list", "watch").groups(legacyGroup).resources("services", "pods").rule(),
			newRule("get", "list", "watch", "create", "update", "delete").groups(legacyGroup).resources("endpoints").rule(),
			newRule("create").groups(legacyGroup).resources("endpoints/restricted").rule(),
			eventsRule()),
		controllerRole("endpointslice-controller",
			newRule("get", "list", "watch").groups(legacyGroup).resources("services", "pods", "nodes").rule(),
			newRule("update").groups(legacyGroup).resources("services/finalizers").rule(),
			newRule("get", "list", "create", "update", "delete").groups(discoveryGroup).resources("endpointslices").rule(),
			eventsRule()),
		controllerRole("namespace-controller",
			newRule("get", "list", "watch", "delete").groups(legacyGroup).resources("namespaces").rule(),
			newRule("update").groups(legacyGroup).resources("namespaces/finalize", "namespaces/status").rule(),
			newRule("get", "list", "delete", "deletecollection").groups("*").resources("*").rule()),
		controllerRole("generic-garbage-collector",
			newRule("get", "list", "watch", "patch", "update", "delete").groups("*").resources("*").rule()),
		controllerRole("node-controller",
			newRule("get", "list", "update", "delete", "patch").groups(legacyGroup).resources("nodes").rule(),
			newRule("patch", "update").groups(legacyGroup).resources("nodes/status").rule(),
			newRule("patch", "update").groups(legacyGroup).resources("pods/status").rule(),
			newRule("list", "delete").groups(legacyGroup).resources("pods").rule(),
			newRule(Read...).groups(coordinationGroup).resources("leases").rule(),
			eventsRule()),
		controllerRole("pod-garbage-collector",
			newRule("list", "watch", "delete").groups(legacyGroup).resources("pods").rule(),
			newRule("get", "list").groups(legacyGroup).resources("nodes").rule(),
			newRule("patch").groups(legacyGroup).resources("pods/status").rule()),
		controllerRole("resourcequota-controller",
			newRule("list", "watch").groups("*").resources("*").rule(),
			newRule("update").groups(legacyGroup).resources("resourcequotas/status").rule(),
			eventsRule()),
		controllerRole("taint-eviction-controller",
			newRule("patch", "update").groups(legacyGroup).resources("pods/status").rule(),
			newRule("delete", "get", "list", "watch").groups(legacyGroup).resources("pods").rule(),
			newRule("get", "list", "watch").groups(legacyGroup).resources("nodes").rule(),
			eventsRule()),
		controllerRole("service-account-controller",
			newRule("create").groups(legacyGroup).resources("serviceaccounts").rule(),
			eventsRule()),
		controllerRole("persistent-volume-binder",
			newRule("get", "list", "watch", "update", "create", "delete").groups(legacyGroup).resources("persistentvolumes").rule(),
			newRule("update").groups(legacyGroup).resources("persistentvolumes/status").rule(),
			newRule("get", "list", "watch", "update").groups(legacyGroup).resources("persistentvolumeclaims").rule(),
			newRule("update").groups(legacyGroup).resources("persistentvolumeclaims/status").rule(),
			newRule("list", "watch", "get", "create", "delete").groups(legacyGroup).resources("pods").rule(),
			newRule("get", "list", "watch").groups(storageGroup).resources("storageclasses").rule(),
			newRule("get", "list").groups(legacyGroup).resources("nodes").rule(),
			newRule("watch").groups(legacyGroup).resources("events").rule(),
			eventsRule()),
		controllerRole("root-ca-cert-publisher",
			newRule("create", "update").groups(legacyGroup).resources("configmaps").rule(),
			eventsRule()),
		controllerRole("gateway-controller",
			newRule(Read...).groups(networkingGroup).resources("ingresses", "ingressclasses").rule(),
			newRule("update", "patch").groups(networkingGroup).resources("ingresses/status").rule(),
			newRule(Read...).groups(gatewayGroup).resources("*").rule(),
			newRule("update", "patch").groups(gatewayGroup).resources("*/status").rule(),
			newRule(Read...).groups(legacyGroup).resources("services", "endpoints", "pods", "secrets").rule(),
			newRule(Read...).groups(discoveryGroup).resources("endpointslices").rule(),
			eventsRule()),
	}
}

func binding(name, role string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
	b := rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   subjects,
	}
	return b
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

// ClusterRoleBindings returns the bootstrap ClusterRoleBindings.
func ClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	bs := []rbacv1.ClusterRoleBinding{
		binding("cluster-admin", "cluster-admin", group(auth.GroupMasters)),
		binding("system:discovery", "system:discovery", group(auth.GroupAuthenticated)),
		binding("system:basic-user", "system:basic-user", group(auth.GroupAuthenticated)),
		binding("system:public-info-viewer", "system:public-info-viewer", group(auth.GroupAuthenticated), group(auth.GroupUnauthenticated)),
		binding("system:monitoring", "system:monitoring", group("system:monitoring")),
		binding("system:node-proxier", "system:node-proxier", user("system:kube-proxy")),
		binding("system:kube-controller-manager", "system:kube-controller-manager", user(auth.UserControllerManager)),
		binding("system:kube-scheduler", "system:kube-scheduler", user(auth.UserScheduler)),
		binding("system:volume-scheduler", "system:volume-scheduler", user(auth.UserScheduler)),
		// Nodes get their permissions from the node authorizer, which
		// narrows them to each node's own objects; the binding is kept
		// without subjects, as kube keeps it.
		binding("system:node", "system:node"),
	}
	for _, c := range ControllerRoles() {
		bs = append(bs, binding(c.role.Name, c.role.Name, serviceAccount("kube-system", c.ServiceAccount), user(auth.UserControllerManager)))
	}
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
