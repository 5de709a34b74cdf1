package scheduler_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"minik/internal/testserver"
)

// failurePod reads a Pod manifest from testdata/failures.
func failurePod(t *testing.T, file string) *corev1.Pod {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "failures", file))
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		t.Fatalf("%s: a %T, not a Pod", file, obj)
	}
	return pod
}

// unschedulable waits for the pod's PodScheduled=False condition and a
// FailedScheduling event that both start with want. The scheduler may first
// judge the pod against fewer nodes than the API holds (its cache trails the
// API); a node it learns of later moves the pod back and it is judged again,
// so the test waits for the verdict to converge, as a user watching would.
func unschedulable(t *testing.T, cs kubernetes.Interface, pod *corev1.Pod, want string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for {
		p, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending {
			t.Fatalf("pod bound to %q in phase %s", p.Spec.NodeName, p.Status.Phase)
		}
		var cond *corev1.PodCondition
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.PodScheduled {
				cond = &p.Status.Conditions[i]
			}
		}
		evs, err := cs.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
			"involvedObject.name": pod.Name, "reason": "FailedScheduling",
		}.String()})
		if err != nil {
			t.Fatal(err)
		}
		condOK := cond != nil && cond.Status == corev1.ConditionFalse &&
			cond.Reason == corev1.PodReasonUnschedulable && strings.HasPrefix(cond.Message, want)
		eventOK := false
		for _, ev := range evs.Items {
			if ev.Type == corev1.EventTypeWarning && ev.Source.Component == "default-scheduler" && strings.HasPrefix(ev.Message, want) {
				eventOK = true
			}
		}
		if condOK && eventOK {
			return
		}
		last = fmt.Sprintf("condition %+v, %d FailedScheduling event(s)", cond, len(evs.Items))
		for _, ev := range evs.Items {
			last += fmt.Sprintf("; %s from %s: %q", ev.Type, ev.Source.Component, ev.Message)
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s: want an Unschedulable condition and a Warning FailedScheduling event from default-scheduler reading %q...; after 30s: %s", pod.Name, want, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFailureManifestsStayPending applies the scheduling failures of
// testdata/failures to a cluster of three simulated nodes, as the seed's
// "Pod 一直 Pending" checkpoint: each stays Pending, and its condition and
// FailedScheduling event read as kube-scheduler's.
func TestFailureManifestsStayPending(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Scheduler: true, Nodes: 3})
	cs := srv.Client(t)
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err == nil && len(nodes.Items) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("3 nodes did not register")
		}
		time.Sleep(20 * time.Millisecond)
	}
	create := func(file string) *corev1.Pod {
		t.Helper()
		pod := failurePod(t, file)
		pod.Namespace = "default"
		out, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	t.Run("a pod asking for more cpu than any node has stays Pending", func(t *testing.T) {
		unschedulable(t, cs, create("insufficient-cpu.yaml"), "0/3 nodes are available: 3 Insufficient cpu.")
	})
	t.Run("a pod whose node affinity no node satisfies stays Pending", func(t *testing.T) {
		unschedulable(t, cs, create("unsatisfiable-affinity.yaml"), "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.")
	})
	t.Run("a pod that tolerates no taint of the tainted nodes stays Pending", func(t *testing.T) {
		testserver.TaintNodes(t, cs, corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule})
		unschedulable(t, cs, create("untolerated-taint.yaml"), "0/3 nodes are available: 3 node(s) had untolerated taint(s).")
	})
}
