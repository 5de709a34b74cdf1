package registry

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minik/internal/printers"
)

var (
	coreV1         = schema.GroupVersion{Version: "v1"}
	appsV1         = schema.GroupVersion{Group: "apps", Version: "v1"}
	discoveryV1    = schema.GroupVersion{Group: "discovery.k8s.io", Version: "v1"}
	networkingV1   = schema.GroupVersion{Group: "networking.k8s.io", Version: "v1"}
	rbacV1         = schema.GroupVersion{Group: "rbac.authorization.k8s.io", Version: "v1"}
	coordinationV1 = schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}
	eventsV1       = schema.GroupVersion{Group: "events.k8s.io", Version: "v1"}
)

// All returns the descriptors of every served resource, in discovery order.
// The returned slice is freshly built; callers may keep it.
func All() []*Resource {
	rs := []*Resource{
		{GroupVersion: coreV1, Name: "namespaces", SingularName: "namespace", Kind: "Namespace", ShortNames: []string{"ns"}, HasStatus: true},
		{GroupVersion: coreV1, Name: "pods", SingularName: "pod", Kind: "Pod", Namespaced: true, ShortNames: []string{"po"}, Categories: []string{"all"}, HasStatus: true, ExtraSubresources: []string{"binding", "log"}},
		{GroupVersion: coreV1, Name: "services", SingularName: "service", Kind: "Service", Namespaced: true, ShortNames: []string{"svc"}, Categories: []string{"all"}, HasStatus: true},
		{GroupVersion: coreV1, Name: "configmaps", SingularName: "configmap", Kind: "ConfigMap", Namespaced: true, ShortNames: []string{"cm"}},
		{GroupVersion: coreV1, Name: "secrets", SingularName: "secret", Kind: "Secret", Namespaced: true},
		{GroupVersion: coreV1, Name: "serviceaccounts", SingularName: "serviceaccount", Kind: "ServiceAccount", Namespaced: true, ShortNames: []string{"sa"}},
		{GroupVersion: coreV1, Name: "events", SingularName: "event", Kind: "Event", Namespaced: true, ShortNames: []string{"ev"}},
		{GroupVersion: coreV1, Name: "nodes", SingularName: "node", Kind: "Node", ShortNames: []string{"no"}, HasStatus: true},
		{GroupVersion: coreV1, Name: "resourcequotas", SingularName: "resourcequota", Kind: "ResourceQuota", Namespaced: true, ShortNames: []string{"quota"}, HasStatus: true},
		{GroupVersion: appsV1, Name: "deployments", SingularName: "deployment", Kind: "Deployment", Namespaced: true, ShortNames: []string{"deploy"}, Categories: []string{"all"}, HasStatus: true, HasScale: true},
		{GroupVersion: appsV1, Name: "replicasets", SingularName: "replicaset", Kind: "ReplicaSet", Namespaced: true, ShortNames: []string{"rs"}, Categories: []string{"all"}, HasStatus: true, HasScale: true},
		{GroupVersion: discoveryV1, Name: "endpointslices", SingularName: "endpointslice", Kind: "EndpointSlice", Namespaced: true},
		{GroupVersion: networkingV1, Name: "ingresses", SingularName: "ingress", Kind: "Ingress", Namespaced: true, ShortNames: []string{"ing"}, HasStatus: true},
		{GroupVersion: networkingV1, Name: "ingressclasses", SingularName: "ingressclass", Kind: "IngressClass"},
		{GroupVersion: rbacV1, Name: "roles", SingularName: "role", Kind: "Role", Namespaced: true},
		{GroupVersion: rbacV1, Name: "rolebindings", SingularName: "rolebinding", Kind: "RoleBinding", Namespaced: true},
		{GroupVersion: rbacV1, Name: "clusterroles", SingularName: "clusterrole", Kind: "ClusterRole"},
		{GroupVersion: rbacV1, Name: "clusterrolebindings", SingularName: "clusterrolebinding", Kind: "ClusterRoleBinding"},
		{GroupVersion: coordinationV1, Name: "leases", SingularName: "lease", Kind: "Lease", Namespaced: true},
		{GroupVersion: eventsV1, Name: "events", SingularName: "event", Kind: "Event", Namespaced: true, ShortNames: []string{"ev"}},
	}
	for _, r := range rs {
		r.Strategy = strategyFor(r.GroupVersionKind().GroupKind())
		if r.Strategy.Table == nil {
			r.Strategy.Table = printers.For(r.GroupVersionKind().GroupKind())
		}
	}
	return rs
}
