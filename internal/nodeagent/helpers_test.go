package nodeagent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"minik/internal/testserver"
)

// cluster starts minikd with n simulated nodes (fast timing) and waits
// for them to be Ready.
func cluster(t *testing.T, n int) (*testserver.Server, kubernetes.Interface) {
	t.Helper()
	srv := testserver.StartWith(t, testserver.Options{Nodes: n})
	cs := srv.Client(t)
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("minik-node-%d", i)
		waitFor(t, 30*time.Second, "node "+name+" Ready", func(ctx context.Context) (bool, error) {
			node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
	}
	return srv, cs
}

// waitFor polls the API until cond holds, failing the test at the
// deadline.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, timeout, true, cond)
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// waitPod waits until the pod satisfies cond and returns it.
func waitPod(t *testing.T, cs kubernetes.Interface, ns, name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = p
		return cond(p), nil
	})
	if err != nil {
		t.Fatalf("waiting for pod %s/%s %s: %v\nstatus: %s", ns, name, what, err, statusSummary(last))
	}
	return last
}

func statusSummary(p *corev1.Pod) string {
	if p == nil {
		return "<none>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%s ip=%s", p.Status.Phase, p.Status.PodIP)
	for _, c := range p.Status.Conditions {
		fmt.Fprintf(&b, " %s=%s(%s)", c.Type, c.Status, c.Reason)
	}
	for _, c := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		fmt.Fprintf(&b, "\n  %s restarts=%d ready=%v state=%+v last=%+v", c.Name, c.RestartCount, c.Ready, c.State, c.LastTerminationState)
	}
	return b.String()
}

// loadPod reads a pod manifest from testdata/failures.
func loadPod(t *testing.T, file string) *corev1.Pod {
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

// runPod creates a pod bound to a node, as the scheduler would bind it.
func runPod(t *testing.T, cs kubernetes.Interface, pod *corev1.Pod, node string) *corev1.Pod {
	t.Helper()
	if pod.Namespace == "" {
		pod.Namespace = "default"
	}
	pod.Spec.NodeName = node
	created, err := cs.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s: %v", pod.Name, err)
	}
	return created
}

// podEvents lists the events of a pod (and its containers).
func podEvents(t *testing.T, cs kubernetes.Interface, pod *corev1.Pod) []corev1.Event {
	t.Helper()
	list, err := cs.CoreV1().Events(pod.Namespace).List(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.name", pod.Name).String(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// waitEvent waits for an event of the pod with the reason and a message
// containing msg; it returns it.
func waitEvent(t *testing.T, cs kubernetes.Interface, pod *corev1.Pod, typ, reason, msg string) corev1.Event {
	t.Helper()
	var found corev1.Event
	var seen []string
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		seen = seen[:0]
		for _, e := range podEvents(t, cs, pod) {
			seen = append(seen, fmt.Sprintf("%s %s %q (%s/%s)", e.Type, e.Reason, e.Message, e.Source.Component, e.Source.Host))
			if e.Reason == reason && e.Type == typ && strings.Contains(e.Message, msg) {
				found = e
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no %s event %s %q for pod %s; events:\n  %s", typ, reason, msg, pod.Name, strings.Join(seen, "\n  "))
	}
	if found.Source.Component != "kubelet" || found.Source.Host != pod.Spec.NodeName {
		t.Errorf("event %s from %+v, want kubelet on %s", reason, found.Source, pod.Spec.NodeName)
	}
	return found
}

func condition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func isReady(p *corev1.Pod) bool {
	c := condition(p, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

func containerStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

func waitingReason(p *corev1.Pod, name string) string {
	if c := containerStatus(p, name); c != nil && c.State.Waiting != nil {
		return c.State.Waiting.Reason
	}
	return ""
}
