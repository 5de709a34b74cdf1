package registry

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minik/internal/tables"
)

var (
	coreV1         = schema.GroupVersion{Version: "v1"}
	appsV1         = schema.GroupVersion{Group: "apps", Version: "v1"}
	discoveryV1    = schema.GroupVersion{Group: "discovery.k8s.io", Version: "v1"}
	networkingV1   = schema.GroupVersion{Group: "networking.k8s.io", Version: "v1"}
	rbacV1         = schema.GroupVersion{Group: "rbac.authorization.k8s.io", Version: "v1"}
	coordinationV1 = schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}
	eventsV1       = schema.GroupVersion{Group: "events.k8s.io", Version: "v1"}
	schedulingV1   = schema.GroupVersion{Group: "scheduling.k8s.io", Version: "v1"}

	admissionregistrationV1 = schema.GroupVersion{Group: "admissionregistration.k8s.io", Version: "v1"}

	gatewayV1 = schema.GroupVersion{Group: "gateway.networking.k8s.io", Version: "v1"}
)

// All returns the descriptors of every served resource, in discovery order.
// The returned slice is freshly built; callers may keep it.
func All() []*Resource {
	rs := []*Resource{
		{GroupVersion: coreV1, Name: "namespaces", SingularName: "namespace", Kind: "Namespace", ShortNames: []string{"ns"}, HasStatus: true, Subresources: namespaceSubresources, DeleteReturnsObject: true},
		{GroupVersion: coreV1, Name: "pods", SingularName: "pod", Kind: "Pod", Namespaced: true, ShortNames: []string{"po"}, Categories: []string{"all"}, HasStatus: true, Subresources: podSubresources, DeleteReturnsObject: true},
		{GroupVersion: coreV1, Name: "services", SingularName: "service", Kind: "Service", Namespaced: true, ShortNames: []string{"svc"}, Categories: []string{"all"}, HasStatus: true, Subresources: serviceSubresources, NewAllocator: newServiceAllocator, Maintain: serviceMaintenance, DeleteReturnsObject: true},
		{GroupVersion: coreV1, Name: "configmaps", SingularName: "configmap", Kind: "ConfigMap", Namespaced: true, ShortNames: []string{"cm"}},
		{GroupVersion: coreV1, Name: "secrets", SingularName: "secret", Kind: "Secret", Namespaced: true, SecretBearing: true},
		{GroupVersion: coreV1, Name: "serviceaccounts", SingularName: "serviceaccount", Kind: "ServiceAccount", Namespaced: true, ShortNames: []string{"sa"}, Subresources: serviceAccountSubresources, DeleteReturnsObject: true},
		{GroupVersion: coreV1, Name: "events", SingularName: "event", Kind: "Event", Namespaced: true, ShortNames: []string{"ev"}},
		{GroupVersion: coreV1, Name: "nodes", SingularName: "node", Kind: "Node", ShortNames: []string{"no"}, HasStatus: true, Subresources: nodeSubresources},
		{GroupVersion: coreV1, Name: "resourcequotas", SingularName: "resourcequota", Kind: "ResourceQuota", Namespaced: true, ShortNames: []string{"quota"}, HasStatus: true, DeleteReturnsObject: true},
		{GroupVersion: coreV1, Name: "limitranges", SingularName: "limitrange", Kind: "LimitRange", Namespaced: true, ShortNames: []string{"limits"}},
		{GroupVersion: coreV1, Name: "persistentvolumes", SingularName: "persistentvolume", Kind: "PersistentVolume", ShortNames: []string{"pv"}, HasStatus: true},
		{GroupVersion: coreV1, Name: "persistentvolumeclaims", SingularName: "persistentvolumeclaim", Kind: "PersistentVolumeClaim", Namespaced: true, ShortNames: []string{"pvc"}, HasStatus: true},
		{GroupVersion: appsV1, Name: "deployments", SingularName: "deployment", Kind: "Deployment", Namespaced: true, ShortNames: []string{"deploy"}, Categories: []string{"all"}, HasStatus: true, HasScale: true},
		{GroupVersion: appsV1, Name: "replicasets", SingularName: "replicaset", Kind: "ReplicaSet", Namespaced: true, ShortNames: []string{"rs"}, Categories: []string{"all"}, HasStatus: true, HasScale: true},
		{GroupVersion: appsV1, Name: "statefulsets", SingularName: "statefulset", Kind: "StatefulSet", Namespaced: true, ShortNames: []string{"sts"}, Categories: []string{"all"}, HasStatus: true, HasScale: true},
		{GroupVersion: appsV1, Name: "daemonsets", SingularName: "daemonset", Kind: "DaemonSet", Namespaced: true, ShortNames: []string{"ds"}, Categories: []string{"all"}, HasStatus: true},
		{GroupVersion: appsV1, Name: "controllerrevisions", SingularName: "controllerrevision", Kind: "ControllerRevision", Namespaced: true},
		{GroupVersion: batchV1, Name: "cronjobs", SingularName: "cronjob", Kind: "CronJob", Namespaced: true, ShortNames: []string{"cj"}, Categories: []string{"all"}, HasStatus: true},
		{GroupVersion: batchV1, Name: "jobs", SingularName: "job", Kind: "Job", Namespaced: true, Categories: []string{"all"}, HasStatus: true},
		{GroupVersion: discoveryV1, Name: "endpointslices", SingularName: "endpointslice", Kind: "EndpointSlice", Namespaced: true},
		{GroupVersion: networkingV1, Name: "ingresses", SingularName: "ingress", Kind: "Ingress", Namespaced: true, ShortNames: []string{"ing"}, HasStatus: true},
		{GroupVersion: networkingV1, Name: "ingressclasses", SingularName: "ingressclass", Kind: "IngressClass"},
		{GroupVersion: policyV1, Name: "poddisruptionbudgets", SingularName: "poddisruptionbudget", Kind: "PodDisruptionBudget", Namespaced: true, ShortNames: []string{"pdb"}, HasStatus: true},
		{GroupVersion: rbacV1, Name: "roles", SingularName: "role", Kind: "Role", Namespaced: true},
		{GroupVersion: rbacV1, Name: "rolebindings", SingularName: "rolebinding", Kind: "RoleBinding", Namespaced: true},
		{GroupVersion: rbacV1, Name: "clusterroles", SingularName: "clusterrole", Kind: "ClusterRole"},
		{GroupVersion: rbacV1, Name: "clusterrolebindings", SingularName: "clusterrolebinding", Kind: "ClusterRoleBinding"},
		{GroupVersion: coordinationV1, Name: "leases", SingularName: "lease", Kind: "Lease", Namespaced: true},
		{GroupVersion: eventsV1, Name: "events", SingularName: "event", Kind: "Event", Namespaced: true, ShortNames: []string{"ev"}, StoredAs: eventsV1View},
		{GroupVersion: schedulingV1, Name: "priorityclasses", SingularName: "priorityclass", Kind: "PriorityClass", ShortNames: []string{"pc"}},
		{GroupVersion: storageV1, Name: "storageclasses", SingularName: "storageclass", Kind: "StorageClass", ShortNames: []string{"sc"}},

		// Admission (issue 6): webhook configurations and validating
		// admission policies. Strategies in strategy_admissionregistration.go.
		{GroupVersion: admissionregistrationV1, Name: "mutatingwebhookconfigurations", SingularName: "mutatingwebhookconfiguration", Kind: "MutatingWebhookConfiguration", Categories: []string{"api-extensions"}},
		{GroupVersion: admissionregistrationV1, Name: "validatingwebhookconfigurations", SingularName: "validatingwebhookconfiguration", Kind: "ValidatingWebhookConfiguration", Categories: []string{"api-extensions"}},
		{GroupVersion: admissionregistrationV1, Name: "validatingadmissionpolicies", SingularName: "validatingadmissionpolicy", Kind: "ValidatingAdmissionPolicy", Categories: []string{"api-extensions"}, HasStatus: true},
		{GroupVersion: admissionregistrationV1, Name: "validatingadmissionpolicybindings", SingularName: "validatingadmissionpolicybinding", Kind: "ValidatingAdmissionPolicyBinding", Categories: []string{"api-extensions"}},
		{GroupVersion: apiextensionsV1, Name: "customresourcedefinitions", SingularName: "customresourcedefinition", Kind: "CustomResourceDefinition", ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"}, HasStatus: true},
	}
	// Gateway API (issue 7): gateway.networking.k8s.io/v1, served as
	// built-in kinds (minik has no CRDs) and implemented by
	// internal/dataplane. Strategies in strategy_gateway.go.
	rs = append(rs,
		&Resource{GroupVersion: gatewayV1, Name: "gatewayclasses", SingularName: "gatewayclass", Kind: "GatewayClass", ShortNames: []string{"gc"}, Categories: []string{"gateway-api"}, HasStatus: true},
		&Resource{GroupVersion: gatewayV1, Name: "gateways", SingularName: "gateway", Kind: "Gateway", Namespaced: true, ShortNames: []string{"gtw"}, Categories: []string{"gateway-api"}, HasStatus: true},
		&Resource{GroupVersion: gatewayV1, Name: "httproutes", SingularName: "httproute", Kind: "HTTPRoute", Namespaced: true, Categories: []string{"gateway-api"}, HasStatus: true},
		&Resource{GroupVersion: gatewayV1, Name: "referencegrants", SingularName: "referencegrant", Kind: "ReferenceGrant", Namespaced: true, ShortNames: []string{"refgrant"}, Categories: []string{"gateway-api"}},
	)
	for _, r := range rs {
		r.Strategy = strategyFor(r.GroupVersionKind().GroupKind())
		if r.Strategy.Table == nil {
			r.Strategy.Table = tables.For(r.GroupVersionKind().GroupKind())
		}
	}
	return rs
}

// ---- Create-only virtual resources (authentication and authorization) ----

var (
	authenticationV1 = schema.GroupVersion{Group: "authentication.k8s.io", Version: "v1"}
	authorizationV1  = schema.GroupVersion{Group: "authorization.k8s.io", Version: "v1"}
)

// CreateOnly returns the descriptors of the create-only virtual resources:
// a client creates one and gets it back answered (an access review, a
// token review); nothing is stored, no other verb is served, and they have
// no list kind. internal/api answers them; they are not part of All, which
// lists stored resources.
func CreateOnly() []*Resource {
	return []*Resource{
		{GroupVersion: authenticationV1, Name: "selfsubjectreviews", SingularName: "selfsubjectreview", Kind: "SelfSubjectReview", Answer: answerSelfSubjectReview},
		{GroupVersion: authenticationV1, Name: "tokenreviews", SingularName: "tokenreview", Kind: "TokenReview", SecretBearing: true, Answer: answerTokenReview},
		{GroupVersion: authorizationV1, Name: "localsubjectaccessreviews", SingularName: "localsubjectaccessreview", Kind: "LocalSubjectAccessReview", Namespaced: true, Answer: answerLocalSubjectAccessReview},
		{GroupVersion: authorizationV1, Name: "selfsubjectaccessreviews", SingularName: "selfsubjectaccessreview", Kind: "SelfSubjectAccessReview", Answer: answerSelfSubjectAccessReview},
		{GroupVersion: authorizationV1, Name: "selfsubjectrulesreviews", SingularName: "selfsubjectrulesreview", Kind: "SelfSubjectRulesReview", Answer: answerSelfSubjectRulesReview},
		{GroupVersion: authorizationV1, Name: "subjectaccessreviews", SingularName: "subjectaccessreview", Kind: "SubjectAccessReview", Answer: answerSubjectAccessReview},
	}
}
