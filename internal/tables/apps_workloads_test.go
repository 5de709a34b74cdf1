package tables

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func statefulSetFixtures() []runtime.Object {
	return []runtime.Object{
		&appsv1.StatefulSet{
			ObjectMeta: objMeta("web", 3*time.Minute+10*time.Second),
			Spec: appsv1.StatefulSetSpec{
				Replicas: ptrTo[int32](3), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: podTemplate(corev1.Container{Name: "nginx", Image: "nginx:1.28"}),
			},
			Status: appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 2},
		},
		&appsv1.StatefulSet{
			ObjectMeta: objMeta("db", 12*24*time.Hour),
			Spec: appsv1.StatefulSetSpec{
				Replicas: ptrTo[int32](1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
				Template: podTemplate(corev1.Container{Name: "postgres", Image: "postgres:17"}, corev1.Container{Name: "exporter", Image: "postgres-exporter:0.15"}),
			},
			Status: appsv1.StatefulSetStatus{Replicas: 1, ReadyReplicas: 1},
		},
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "not-defaulted", Namespace: "demo"}},
	}
}

func daemonSetFixtures() []runtime.Object {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}
	agent := podTemplate(corev1.Container{Name: "agent", Image: "fluent-bit:3.1"})
	linux := podTemplate(corev1.Container{Name: "proxy", Image: "kube-proxy:v1.34"}, corev1.Container{Name: "sidecar", Image: "busybox:1.36"})
	linux.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
	return []runtime.Object{
		&appsv1.DaemonSet{
			ObjectMeta: objMeta("log-agent", 40*time.Minute),
			Spec:       appsv1.DaemonSetSpec{Selector: sel, Template: agent},
			Status:     appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 2, UpdatedNumberScheduled: 1, NumberAvailable: 2},
		},
		&appsv1.DaemonSet{
			ObjectMeta: objMeta("kube-proxy", 30*24*time.Hour),
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-proxy"}, MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}},
				Template: linux,
			},
			Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 2, CurrentNumberScheduled: 2, NumberReady: 2, UpdatedNumberScheduled: 2, NumberAvailable: 2},
		},
	}
}

func controllerRevisionFixtures() []runtime.Object {
	owned := objMeta("web-6d4b8c7f9", 3*time.Minute)
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web", UID: "u1", Controller: ptrTo(true)}}
	ds := objMeta("log-agent-5f7c9d8b6", 40*time.Minute)
	ds.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "log-agent", UID: "u2", Controller: ptrTo(true)}}
	return []runtime.Object{
		&appsv1.ControllerRevision{ObjectMeta: owned, Revision: 2},
		&appsv1.ControllerRevision{ObjectMeta: ds, Revision: 1},
		&appsv1.ControllerRevision{ObjectMeta: objMeta("orphan-7c5d", 5*24*time.Hour), Revision: 7},
	}
}
