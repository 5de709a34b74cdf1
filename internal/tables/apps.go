package tables

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Tables of apps/v1 kinds. kube-apiserver takes these descriptions from the
// extensions/v1beta1 types, so we do too.

// Deployment is kubectl's table of apps/v1 Deployments.
var Deployment = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Ready", "string", "Number of the pod with ready state"),
		col("Up-to-date", "string", extensionsv1beta1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]),
		col("Available", "string", extensionsv1beta1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]),
		ageColumn(),
		wide("Containers", "string", containersDescription),
		wide("Images", "string", imagesDescription),
		wide("Selector", "string", extensionsv1beta1.DeploymentSpec{}.SwaggerDoc()["selector"]),
	},
	func(d *appsv1.Deployment, now time.Time) []interface{} {
		names, images := containerCells(d.Spec.Template.Spec.Containers)
		return []interface{}{
			d.Name,
			fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, replicas(d.Spec.Replicas)),
			int64(d.Status.UpdatedReplicas),
			int64(d.Status.AvailableReplicas),
			age(d.CreationTimestamp, now),
			names,
			images,
			selectorString(d.Spec.Selector),
		}
	},
)

// ReplicaSet is kubectl's table of apps/v1 ReplicaSets.
var ReplicaSet = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Desired", "integer", extensionsv1beta1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]),
		col("Current", "integer", extensionsv1beta1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]),
		col("Ready", "integer", extensionsv1beta1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]),
		ageColumn(),
		wide("Containers", "string", containersDescription),
		wide("Images", "string", imagesDescription),
		wide("Selector", "string", extensionsv1beta1.ReplicaSetSpec{}.SwaggerDoc()["selector"]),
	},
	func(rs *appsv1.ReplicaSet, now time.Time) []interface{} {
		names, images := containerCells(rs.Spec.Template.Spec.Containers)
		return []interface{}{
			rs.Name,
			int64(replicas(rs.Spec.Replicas)),
			int64(rs.Status.Replicas),
			int64(rs.Status.ReadyReplicas),
			age(rs.CreationTimestamp, now),
			names,
			images,
			metav1.FormatLabelSelector(rs.Spec.Selector),
		}
	},
)

// replicas dereferences a spec.replicas; nil (not yet defaulted) reads as
// 0, as kube's conversion to its internal types does.
func replicas(r *int32) int32 {
	if r == nil {
		return 0
	}
	return *r
}
