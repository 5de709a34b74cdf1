// Package ctrltest helps tests of controllers that run against a real
// minik API server. It stands in for what components that do not exist yet
// would write (a kubelet's pod status), and waits on observed state with a
// deadline instead of sleeping.
//
// It is for tests only: no production package may import it.
package ctrltest

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Timeout is how long Wait waits before it fails the test.
var Timeout = 30 * time.Second

// Wait polls cond every few milliseconds until it returns true, and fails
// the test if that has not happened within Timeout. what names the awaited
// state in the failure message ("3 pods ready").
func Wait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", Timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// MarkPodsReady writes, as a kubelet would, the status of a running and
// ready pod (phase Running; conditions PodScheduled, Initialized,
// ContainersReady and Ready True, transitioned now) on every pod of
// namespace matching the label selector that is neither ready already nor
// being deleted. It returns how many pods it marked.
func MarkPodsReady(ctx context.Context, t testing.TB, client kubernetes.Interface, namespace, selector string) int {
	t.Helper()
	pods, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatalf("list pods %s/%s: %v", namespace, selector, err)
	}
	marked := 0
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.DeletionTimestamp != nil || isReady(pod) {
			continue
		}
		if err := MarkPodReady(ctx, client, pod, time.Now()); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			t.Fatal(err)
		}
		marked++
	}
	return marked
}

// MarkPodReady writes the status of a running pod that became ready at
// since (its Ready condition's lastTransitionTime), retrying on conflict.
func MarkPodReady(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod, since time.Time) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		at := metav1.NewTime(since)
		cur.Status.Phase = corev1.PodRunning
		if cur.Status.StartTime == nil {
			cur.Status.StartTime = &at
		}
		cur.Status.Conditions = nil
		for _, ct := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			cur.Status.Conditions = append(cur.Status.Conditions, corev1.PodCondition{Type: ct, Status: corev1.ConditionTrue, LastTransitionTime: at})
		}
		if _, err := client.CoreV1().Pods(cur.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("mark pod %s/%s ready: %w", cur.Namespace, cur.Name, err)
		}
		return nil
	})
}

func isReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
