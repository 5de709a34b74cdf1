package tables

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// tables maps each kind with a specific table to its description. Kinds
// served by several groups (core/v1 and events.k8s.io/v1 Event) share
// columns and differ only in how a row reads the object.
var tables = map[schema.GroupKind]table{
	{Group: "", Kind: "Namespace"}:      namespaceTable,
	{Group: "", Kind: "Pod"}:            podTable,
	{Group: "", Kind: "Service"}:        serviceTable,
	{Group: "", Kind: "ConfigMap"}:      configMapTable,
	{Group: "", Kind: "Secret"}:         secretTable,
	{Group: "", Kind: "ServiceAccount"}: serviceAccountTable,
	{Group: "", Kind: "Event"}:          coreEventTable,
	{Group: "", Kind: "Node"}:           nodeTable,
	{Group: "", Kind: "ResourceQuota"}:  resourceQuotaTable,

	{Group: "", Kind: "PersistentVolume"}:      persistentVolumeTable,
	{Group: "", Kind: "PersistentVolumeClaim"}: persistentVolumeClaimTable,

	{Group: "apps", Kind: "Deployment"}:         deploymentTable,
	{Group: "apps", Kind: "ReplicaSet"}:         replicaSetTable,
	{Group: "apps", Kind: "StatefulSet"}:        statefulSetTable,
	{Group: "apps", Kind: "DaemonSet"}:          daemonSetTable,
	{Group: "apps", Kind: "ControllerRevision"}: controllerRevisionTable,

	{Group: "batch", Kind: "Job"}:     jobTable,
	{Group: "batch", Kind: "CronJob"}: cronJobTable,

	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}: endpointSliceTable,

	{Group: "networking.k8s.io", Kind: "Ingress"}:      ingressTable,
	{Group: "networking.k8s.io", Kind: "IngressClass"}: ingressClassTable,

	{Group: "policy", Kind: "PodDisruptionBudget"}: podDisruptionBudgetTable,

	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               createdAtTable,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        createdAtTable,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        roleBindingTable,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: clusterRoleBindingTable,

	{Group: "coordination.k8s.io", Kind: "Lease"}: leaseTable,

	{Group: "events.k8s.io", Kind: "Event"}: eventsV1EventTable,

	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}: priorityClassTable,

	{Group: "storage.k8s.io", Kind: "StorageClass"}: storageClassTable,
}

// metaTable builds a table whose cells need only the object's metadata, so
// it accepts objects of any kind.
func metaTable(columns []metav1.TableColumnDefinition, row func(m metav1.Object, now time.Time) []interface{}) table {
	return table{
		columns: columns,
		row: func(obj runtime.Object, now time.Time) ([]interface{}, error) {
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil, fmt.Errorf("print %T as a table: %w", obj, err)
			}
			return row(m, now), nil
		},
	}
}

// defaultTable is the Name/Age table that custom resources without printer
// columns get from kube-apiextensions-apiserver: an Age column of type
// "date" whose cells are short human durations.
var defaultTable = metaTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Age", "date", objectMetaDoc["creationTimestamp"]),
	},
	func(m metav1.Object, now time.Time) []interface{} {
		return []interface{}{m.GetName(), age(m.GetCreationTimestamp(), now)}
	},
)

// createdAtTable is kube-apiserver's generic table for built-in kinds that
// have no printer (rbac Role and ClusterRole among those we serve): Name and
// "Created At", an RFC 3339 UTC timestamp of type "date".
var createdAtTable = metaTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Created At", "date", objectMetaDoc["creationTimestamp"]),
	},
	func(m metav1.Object, _ time.Time) []interface{} {
		return []interface{}{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)}
	},
)
