package tables

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// ReplicationController is kubectl's table of core/v1
// ReplicationControllers: a ReplicaSet's columns, described from the
// core/v1 types, with the selector printed as a label set.
var ReplicationController = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Desired", "integer", corev1.ReplicationControllerSpec{}.SwaggerDoc()["replicas"]),
		col("Current", "integer", corev1.ReplicationControllerStatus{}.SwaggerDoc()["replicas"]),
		col("Ready", "integer", corev1.ReplicationControllerStatus{}.SwaggerDoc()["readyReplicas"]),
		ageColumn(),
		wide("Containers", "string", containersDescription),
		wide("Images", "string", imagesDescription),
		wide("Selector", "string", corev1.ReplicationControllerSpec{}.SwaggerDoc()["selector"]),
	},
	func(rc *corev1.ReplicationController, now time.Time) []interface{} {
		var containers []corev1.Container
		if rc.Spec.Template != nil {
			containers = rc.Spec.Template.Spec.Containers
		}
		names, images := containerCells(containers)
		return []interface{}{
			rc.Name,
			int64(replicas(rc.Spec.Replicas)),
			int64(rc.Status.Replicas),
			int64(rc.Status.ReadyReplicas),
			age(rc.CreationTimestamp, now),
			names,
			images,
			labels.FormatLabels(rc.Spec.Selector),
		}
	},
)
