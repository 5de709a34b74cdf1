package tables

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	appsv1beta1 "k8s.io/api/apps/v1beta1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Tables of StatefulSets, DaemonSets and ControllerRevisions, with
// kube-apiserver's columns and descriptions.

// StatefulSet is kubectl's table of apps/v1 StatefulSets.
var StatefulSet = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Ready", "string", "Number of the pod with ready state"),
		ageColumn(),
		wide("Containers", "string", containersDescription),
		wide("Images", "string", imagesDescription),
	},
	func(s *appsv1.StatefulSet, now time.Time) []interface{} {
		names, images := containerCells(s.Spec.Template.Spec.Containers)
		return []interface{}{
			s.Name,
			fmt.Sprintf("%d/%d", s.Status.ReadyReplicas, replicas(s.Spec.Replicas)),
			age(s.CreationTimestamp, now),
			names,
			images,
		}
	},
)

var daemonSetStatusDoc = extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()

// DaemonSet is kubectl's table of apps/v1 DaemonSets.
var DaemonSet = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Desired", "integer", daemonSetStatusDoc["desiredNumberScheduled"]),
		col("Current", "integer", daemonSetStatusDoc["currentNumberScheduled"]),
		col("Ready", "integer", daemonSetStatusDoc["numberReady"]),
		col("Up-to-date", "integer", daemonSetStatusDoc["updatedNumberScheduled"]),
		col("Available", "integer", daemonSetStatusDoc["numberAvailable"]),
		col("Node Selector", "string", corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]),
		ageColumn(),
		wide("Containers", "string", containersDescription),
		wide("Images", "string", imagesDescription),
		wide("Selector", "string", extensionsv1beta1.DaemonSetSpec{}.SwaggerDoc()["selector"]),
	},
	func(d *appsv1.DaemonSet, now time.Time) []interface{} {
		names, images := containerCells(d.Spec.Template.Spec.Containers)
		return []interface{}{
			d.Name,
			int64(d.Status.DesiredNumberScheduled),
			int64(d.Status.CurrentNumberScheduled),
			int64(d.Status.NumberReady),
			int64(d.Status.UpdatedNumberScheduled),
			int64(d.Status.NumberAvailable),
			labels.FormatLabels(d.Spec.Template.Spec.NodeSelector),
			age(d.CreationTimestamp, now),
			names,
			images,
			metav1.FormatLabelSelector(d.Spec.Selector),
		}
	},
)

// ControllerRevision is kubectl's table of apps/v1 ControllerRevisions.
var ControllerRevision = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Controller", "string", "Controller of the object"),
		col("Revision", "string", appsv1beta1.ControllerRevision{}.SwaggerDoc()["revision"]),
		ageColumn(),
	},
	func(r *appsv1.ControllerRevision, now time.Time) []interface{} {
		controller := "<none>"
		if ref := metav1.GetControllerOfNoCopy(r); ref != nil {
			// kubectl's "kind.group/name" form ("statefulset.apps/web").
			gv, err := schema.ParseGroupVersion(ref.APIVersion)
			if err == nil {
				controller = strings.ToLower(gv.WithKind(ref.Kind).GroupKind().String()) + "/" + ref.Name
			}
		}
		return []interface{}{r.Name, controller, r.Revision, age(r.CreationTimestamp, now)}
	},
)
