package registry

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
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
)

// builtins are the stored kinds, in discovery order. Each is the literal
// of its kind_<group>.go file.
var builtins = []*Resource{
	namespaces, pods, services, configMaps, secrets, serviceAccounts, coreEvents, nodes,
	resourceQuotas, limitRanges, persistentVolumes, persistentVolumeClaims,
	// The other core/v1 kinds, in kube's /api/v1 (alphabetical) order.
	endpoints, podTemplates, replicationControllers,
	// apiregistration.k8s.io first of the groups, as kube-aggregator
	// lists its own group.
	apiServices,
	deployments, replicaSets, statefulSets, daemonSets, controllerRevisions,
	// autoscaling: v2 (stored, preferred) before its v1 view.
	horizontalPodAutoscalers, horizontalPodAutoscalersV1,
	cronJobs, jobs,
	certificateSigningRequests, clusterTrustBundles, podCertificateRequests,
	endpointSlices,
	ingressClasses, ingresses, ipAddresses, networkPolicies, serviceCIDRs,
	podDisruptionBudgets,
	roles, roleBindings, clusterRoles, clusterRoleBindings,
	leases,
	runtimeClasses,
	deviceClasses, deviceTaintRules, resourceClaims, resourceClaimTemplates, resourceSlices,
	eventsEvents,
	priorityClasses,
	csiDrivers, csiNodes, csiStorageCapacities, storageClasses, volumeAttachments, volumeAttributesClasses,
	// Admission (issue 6): webhook configurations and validating
	// admission policies.
	mutatingWebhookConfigurations, validatingWebhookConfigurations, validatingAdmissionPolicies, validatingAdmissionPolicyBindings,
	mutatingAdmissionPolicies, mutatingAdmissionPolicyBindings,
	customResourceDefinitions,
	// API Priority and Fairness configuration and storage version
	// migrations.
	flowSchemas, priorityLevelConfigurations,
	storageVersionMigrations,
}

// All returns the descriptors of every served resource, in discovery order,
// each strategy completed with the metadata checks every resource gets
// (withGenericChecks, scoped by the descriptor's Namespaced). The returned
// descriptors are fresh copies; callers may keep and modify them.
func All() []*Resource {
	out := make([]*Resource, len(builtins))
	for i, r := range builtins {
		c := r.clone()
		if !c.Strategy.validatesMetadata {
			c.Strategy = withGenericChecks(c)
		}
		out[i] = c
	}
	return out
}

// ---- Create-only virtual resources (authentication and authorization) ----

// createOnly are the create-only kinds, in discovery order.
var createOnly = []*Resource{
	bindings,
	selfSubjectReviews, tokenReviews,
	localSubjectAccessReviews, selfSubjectAccessReviews, selfSubjectRulesReviews, subjectAccessReviews,
}

// CreateOnly returns the descriptors of the create-only virtual resources:
// a client creates one and gets it back answered (an access review, a
// token review); nothing is stored, no other verb is served, and they have
// no list kind. internal/api answers them; they are not part of All, which
// lists stored resources. The returned descriptors are fresh copies.
func CreateOnly() []*Resource {
	out := make([]*Resource, len(createOnly))
	for i, r := range createOnly {
		out[i] = r.clone()
	}
	return out
}

// clone returns a copy of r that shares nothing a caller could modify:
// its slices, subresources, upkeep, storage view and table convertor are
// copied too.
func (r *Resource) clone() *Resource {
	c := *r
	c.ShortNames = slices.Clone(r.ShortNames)
	c.Categories = slices.Clone(r.Categories)
	c.UnservedVerbs = slices.Clone(r.UnservedVerbs)
	c.Subresources = slices.Clone(r.Subresources)
	for i, sub := range c.Subresources {
		if sub.Update != nil {
			u := *sub.Update
			c.Subresources[i].Update = &u
		}
	}
	c.Maintain = slices.Clone(r.Maintain)
	if r.StoredAs != nil {
		v := *r.StoredAs
		c.StoredAs = &v
	}
	if r.Strategy.Status != nil {
		s := *r.Strategy.Status
		c.Strategy.Status = &s
	}
	if r.Strategy.Table != nil {
		t := *r.Strategy.Table
		t.Columns = slices.Clone(t.Columns)
		c.Strategy.Table = &t
	}
	return &c
}
