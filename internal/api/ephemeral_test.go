package api_test

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
)

// TestEphemeralContainersAsConformanceDrivesThem follows the conformance
// spec "should update the ephemeral containers in an existing pod": a
// strategic merge patch of pods/ephemeralcontainers adds one (the pod's
// generation goes from 1 to 2), a GET of the subresource shows it, and an
// update of the subresource adds a second.
func TestEphemeralContainersAsConformanceDrivesThem(t *testing.T) {
	srv, cs := connectCluster(t)
	ctx := context.Background()
	pod, err := cs.CoreV1().Pods("demo").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Generation != 1 {
		t.Errorf("generation %d before, want 1", pod.Generation)
	}
	podJS, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	ecPod := pod.DeepCopy()
	ecPod.Spec.EphemeralContainers = append(ecPod.Spec.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debugger", Image: "busybox:1.36", Command: []string{"/bin/sh", "-c", "while true; do echo polo; sleep 2; done"}, Stdin: true, TTY: true,
	}})
	ecJS, err := json.Marshal(ecPod)
	if err != nil {
		t.Fatal(err)
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(podJS, ecJS, pod)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("demo").Patch(ctx, "web", types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "ephemeralcontainers"); err != nil {
		t.Fatalf("patch ephemeralcontainers: %v", err)
	}
	if pod, err = cs.CoreV1().Pods("demo").Get(ctx, "web", metav1.GetOptions{}); err != nil || pod.Generation != 2 {
		t.Fatalf("after the patch: generation %d, %v; want 2", pod.Generation, err)
	}
	dyn, err := dynamic.NewForConfig(srv.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	count := func() int {
		t.Helper()
		u, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace("demo").Get(ctx, "web", metav1.GetOptions{}, "ephemeralcontainers")
		if err != nil {
			t.Fatalf("get pods/ephemeralcontainers: %v", err)
		}
		var p corev1.Pod
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p); err != nil {
			t.Fatal(err)
		}
		return len(p.Spec.EphemeralContainers)
	}
	if n := count(); n != 1 {
		t.Errorf("%d ephemeral containers after the patch, want 1", n)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := cs.CoreV1().Pods("demo").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: "debugger2", Image: "registry.k8s.io/e2e-test-images/agnhost:2.66.1", ImagePullPolicy: corev1.PullIfNotPresent, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		}})
		_, err = cs.CoreV1().Pods("demo").UpdateEphemeralContainers(ctx, "web", pod, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("update ephemeralcontainers: %v", err)
	}
	if n := count(); n != 2 {
		t.Errorf("%d ephemeral containers after the update, want 2", n)
	}
}
