package registry

import "k8s.io/apimachinery/pkg/runtime/schema"

// strategyFor returns the strategy of a kind; a kind without one gets the
// empty strategy (generation maintained, no defaulting or validation).
func strategyFor(gk schema.GroupKind) Strategy {
	if f, ok := strategies[gk]; ok {
		return f()
	}
	return Strategy{}
}

// strategies maps each served kind to its strategy's constructor.
var strategies = map[schema.GroupKind]func() Strategy{
	{Kind: "Namespace"}:      namespaceStrategy,
	{Kind: "Pod"}:            podStrategy,
	{Kind: "Service"}:        serviceStrategy,
	{Kind: "ConfigMap"}:      configMapStrategy,
	{Kind: "Secret"}:         secretStrategy,
	{Kind: "ServiceAccount"}: serviceAccountStrategy,
	{Kind: "Event"}:          coreEventStrategy,
	{Kind: "Node"}:           nodeStrategy,
	{Kind: "ResourceQuota"}:  resourceQuotaStrategy,

	{Kind: "PersistentVolume"}:      persistentVolumeStrategy,
	{Kind: "PersistentVolumeClaim"}: persistentVolumeClaimStrategy,

	{Group: "apps", Kind: "Deployment"}:         deploymentStrategy,
	{Group: "apps", Kind: "ReplicaSet"}:         replicaSetStrategy,
	{Group: "apps", Kind: "StatefulSet"}:        statefulSetStrategy,
	{Group: "apps", Kind: "DaemonSet"}:          daemonSetStrategy,
	{Group: "apps", Kind: "ControllerRevision"}: controllerRevisionStrategy,

	{Group: "batch", Kind: "Job"}:     jobStrategy,
	{Group: "batch", Kind: "CronJob"}: cronJobStrategy,

	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}: endpointSliceStrategy,

	{Group: "networking.k8s.io", Kind: "Ingress"}:      ingressStrategy,
	{Group: "networking.k8s.io", Kind: "IngressClass"}: ingressClassStrategy,

	{Group: "policy", Kind: "PodDisruptionBudget"}: podDisruptionBudgetStrategy,

	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               roleStrategy,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        roleBindingStrategy,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        clusterRoleStrategy,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: clusterRoleBindingStrategy,

	{Group: "coordination.k8s.io", Kind: "Lease"}: leaseStrategy,

	{Group: "events.k8s.io", Kind: "Event"}: eventsEventStrategy,

	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}: priorityClassStrategy,

	{Group: "storage.k8s.io", Kind: "StorageClass"}: storageClassStrategy,
}
