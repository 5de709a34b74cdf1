package cli

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
)

// describeStatefulSet is kubectl's StatefulSetDescriber.
func describeStatefulSet(ctx context.Context, d *describer, obj runtime.Object) (string, error) {
	sts := obj.(*appsv1.StatefulSet)
	selector, err := metav1.LabelSelectorAsSelector(sts.Spec.Selector)
	if err != nil {
		return "", err
	}
	running, waiting, succeeded, failed, podErr := d.podStatusForController(ctx, sts.Namespace, selector, sts.UID)
	if podErr != nil {
		return "", podErr
	}
	events := d.events(ctx, sts)
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "Name:\t%s\n", sts.Name)
		w.Write(level0, "Namespace:\t%s\n", sts.Namespace)
		w.Write(level0, "CreationTimestamp:\t%s\n", rfc1123z(sts.CreationTimestamp))
		w.Write(level0, "Selector:\t%s\n", selector)
		printLabelsMultiline(w, "Labels", sts.Labels)
		printAnnotationsMultiline(w, "Annotations", sts.Annotations)
		w.Write(level0, "Replicas:\t%d desired | %d total\n", replicasOf(sts.Spec.Replicas), sts.Status.Replicas)
		w.Write(level0, "Update Strategy:\t%s\n", sts.Spec.UpdateStrategy.Type)
		if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
			w.Write(level1, "Partition:\t%d\n", *ru.Partition)
			if ru.MaxUnavailable != nil {
				w.Write(level1, "MaxUnavailable:\t%s\n", ru.MaxUnavailable.String())
			}
		}
		w.Write(level0, "Pods Status:\t%d Running / %d Waiting / %d Succeeded / %d Failed\n", running, waiting, succeeded, failed)
		describePodTemplate(&sts.Spec.Template, w)
		describeVolumeClaimTemplates(sts.Spec.VolumeClaimTemplates, w)
		d.printEvents(ctx, w, events)
		return nil
	})
}

func describeVolumeClaimTemplates(templates []corev1.PersistentVolumeClaim, w *prefixWriter) {
	if len(templates) == 0 {
		w.Write(level0, "Volume Claims:\t<none>\n")
		return
	}
	w.Write(level0, "Volume Claims:\n")
	for _, pvc := range templates {
		w.Write(level1, "Name:\t%s\n", pvc.Name)
		class := ""
		if pvc.Spec.StorageClassName != nil {
			class = *pvc.Spec.StorageClassName
		} else if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
			class = c
		}
		w.Write(level1, "StorageClass:\t%s\n", class)
		printLabelsMultilineWithIndent(w, "  ", "Labels", "\t", pvc.Labels, sets.New[string]())
		printLabelsMultilineWithIndent(w, "  ", "Annotations", "\t", pvc.Annotations, sets.New[string]())
		if capacity, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
			w.Write(level1, "Capacity:\t%s\n", capacity.String())
		} else {
			w.Write(level1, "Capacity:\t%s\n", "<default>")
		}
		w.Write(level1, "Access Modes:\t%s\n", pvc.Spec.AccessModes)
	}
}

// describeDaemonSet is kubectl's DaemonSetDescriber.
func describeDaemonSet(ctx context.Context, d *describer, obj runtime.Object) (string, error) {
	ds := obj.(*appsv1.DaemonSet)
	selector, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return "", err
	}
	running, waiting, succeeded, failed, podErr := d.podStatusForController(ctx, ds.Namespace, selector, ds.UID)
	if podErr != nil {
		return "", podErr
	}
	events := d.events(ctx, ds)
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "Name:\t%s\n", ds.Name)
		w.Write(level0, "Namespace:\t%s\n", ds.Namespace)
		w.Write(level0, "Selector:\t%s\n", selector)
		w.Write(level0, "Node-Selector:\t%s\n", labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector))
		printLabelsMultiline(w, "Labels", ds.Labels)
		printAnnotationsMultiline(w, "Annotations", ds.Annotations)
		w.Write(level0, "Desired Number of Nodes Scheduled: %d\n", ds.Status.DesiredNumberScheduled)
		w.Write(level0, "Current Number of Nodes Scheduled: %d\n", ds.Status.CurrentNumberScheduled)
		w.Write(level0, "Number of Nodes Scheduled with Up-to-date Pods: %d\n", ds.Status.UpdatedNumberScheduled)
		w.Write(level0, "Number of Nodes Scheduled with Available Pods: %d\n", ds.Status.NumberAvailable)
		w.Write(level0, "Number of Nodes Misscheduled: %d\n", ds.Status.NumberMisscheduled)
		w.Write(level0, "Pods Status:\t%d Running / %d Waiting / %d Succeeded / %d Failed\n", running, waiting, succeeded, failed)
		describePodTemplate(&ds.Spec.Template, w)
		d.printEvents(ctx, w, events)
		return nil
	})
}
