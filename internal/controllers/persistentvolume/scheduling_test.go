package persistentvolume_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"minik/internal/controllers/ctrltest"
	pvctrl "minik/internal/controllers/persistentvolume"
	"minik/internal/testserver"
)

func podWithClaim(name, claim string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "nginx", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
			}}},
		},
	}
}

func scheduledCondition(ctx context.Context, cs kubernetes.Interface, name string) (*corev1.Pod, *corev1.PodCondition) {
	pod, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil
	}
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodScheduled {
			return pod, &pod.Status.Conditions[i]
		}
	}
	return pod, nil
}

func TestPodsWithClaims(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{pvctrl.Name}, Scheduler: true, Nodes: 3})
	cs := srv.Client(t)
	ctx := t.Context()

	t.Run("a claim of the default class is provisioned on the pod's node and the pod runs", func(t *testing.T) {
		if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim("web-data", "1Gi", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, podWithClaim("web", "web-data"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var pod *corev1.Pod
		ctrltest.Wait(t, "pod web Running", func() bool {
			var err error
			pod, err = cs.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
			return err == nil && pod.Status.Phase == corev1.PodRunning
		})
		pvc := waitClaim(ctx, t, cs, "web-data", corev1.ClaimBound)
		if got := pvc.Annotations[pvctrl.AnnSelectedNode]; got != pod.Spec.NodeName {
			t.Errorf("selected-node = %q, pod runs on %q", got, pod.Spec.NodeName)
		}
		pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		terms := pv.Spec.NodeAffinity.Required.NodeSelectorTerms
		if len(terms) != 1 || terms[0].MatchExpressions[0].Values[0] != pod.Spec.NodeName || pv.Spec.StorageClassName != "standard" {
			t.Errorf("volume = class %q, node affinity %+v", pv.Spec.StorageClassName, pv.Spec.NodeAffinity)
		}
	})

	t.Run("a pod using a missing claim stays Pending with kube's message, then runs once it exists", func(t *testing.T) {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, podWithClaim("orphan", "data"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		want := `0/3 nodes are available: persistentvolumeclaim "data" not found. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.`
		ctrltest.Wait(t, "orphan unschedulable", func() bool {
			_, c := scheduledCondition(ctx, cs, "orphan")
			return c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable && c.Message == want
		})
		if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim("data", "1Gi", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "orphan Running", func() bool {
			pod, err := cs.CoreV1().Pods(ns).Get(ctx, "orphan", metav1.GetOptions{})
			return err == nil && pod.Status.Phase == corev1.PodRunning
		})
	})

	t.Run("an unbound Immediate claim keeps the pod Pending", func(t *testing.T) {
		if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim("nothing", "1Gi", new("")), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, podWithClaim("stuck", "nothing"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		want := "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
		ctrltest.Wait(t, "stuck unschedulable", func() bool {
			_, c := scheduledCondition(ctx, cs, "stuck")
			return c != nil && c.Status == corev1.ConditionFalse && c.Message == want
		})
	})
}
