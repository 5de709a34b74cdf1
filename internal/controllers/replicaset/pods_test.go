package replicaset

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type podOpt func(*corev1.Pod)

func node(n string) podOpt            { return func(p *corev1.Pod) { p.Spec.NodeName = n } }
func phase(ph corev1.PodPhase) podOpt { return func(p *corev1.Pod) { p.Status.Phase = ph } }
func created(ago time.Duration) podOpt {
	return func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(now.Add(-ago)) }
}
func readyFor(ago time.Duration) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
			Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-ago)),
		})
	}
}
func restarts(n int32) podOpt {
	return func(p *corev1.Pod) {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{RestartCount: n})
	}
}
func cost(v string) podOpt {
	return func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.PodDeletionCost: v} }
}

func pod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "demo", UID: types.UID("uid-" + name),
		CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}}
	p.Status.Phase = corev1.PodRunning
	for _, o := range opts {
		o(p)
	}
	return p
}

func TestDeletionPreference(t *testing.T) {
	tests := []struct {
		name       string
		pods       []*corev1.Pod
		related    []*corev1.Pod
		wantFirst  string
		wantSecond string
	}{
		{
			name:      "an unassigned pod goes before an assigned one",
			pods:      []*corev1.Pod{pod("assigned", node("n1"), phase(corev1.PodPending)), pod("unassigned", readyFor(time.Hour))},
			wantFirst: "unassigned",
		},
		{
			name:      "a pending pod goes before an unknown one, which goes before a running one",
			pods:      []*corev1.Pod{pod("running"), pod("unknown", phase(corev1.PodUnknown)), pod("pending", phase(corev1.PodPending))},
			wantFirst: "pending", wantSecond: "unknown",
		},
		{
			name:      "a pod that is not ready goes before a ready one",
			pods:      []*corev1.Pod{pod("ready", readyFor(time.Minute)), pod("not-ready", created(time.Hour*24))},
			wantFirst: "not-ready",
		},
		{
			name:      "a lower pod deletion cost goes first",
			pods:      []*corev1.Pod{pod("cheap", readyFor(time.Hour), cost("-5")), pod("dear", readyFor(time.Minute), cost("10"))},
			wantFirst: "cheap",
		},
		{
			name:      "a pod on a node crowded with its siblings goes first",
			pods:      []*corev1.Pod{pod("alone", node("n1"), readyFor(time.Minute)), pod("crowded", node("n2"), readyFor(time.Hour))},
			related:   []*corev1.Pod{pod("s1", node("n2")), pod("s2", node("n2"))},
			wantFirst: "crowded",
		},
		{
			name:      "the pod ready for the shorter time goes first",
			pods:      []*corev1.Pod{pod("old-ready", readyFor(10*time.Hour)), pod("new-ready", readyFor(time.Minute))},
			wantFirst: "new-ready",
		},
		{
			name:      "the pod whose containers restarted more goes first",
			pods:      []*corev1.Pod{pod("steady"), pod("flapping", restarts(4))},
			wantFirst: "flapping",
		},
		{
			name:      "the newest pod goes first",
			pods:      []*corev1.Pod{pod("oldest", created(48*time.Hour)), pod("newest", created(time.Minute)), pod("middle", created(2*time.Hour))},
			wantFirst: "newest", wantSecond: "middle",
		},
		{
			name:      "pods of about the same age are told apart by UID",
			pods:      []*corev1.Pod{pod("b", created(time.Hour+time.Second)), pod("a", created(time.Hour))},
			wantFirst: "a",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			related := append(append([]*corev1.Pod(nil), tt.pods...), tt.related...)
			want := 1
			if tt.wantSecond != "" {
				want = 2
			}
			got := podsToDelete(tt.pods, related, want, now)
			if got[0].Name != tt.wantFirst {
				t.Errorf("first victim = %s, want %s", got[0].Name, tt.wantFirst)
			}
			if tt.wantSecond != "" && got[1].Name != tt.wantSecond {
				t.Errorf("second victim = %s, want %s", got[1].Name, tt.wantSecond)
			}
		})
	}
}

func TestPodNamePrefix(t *testing.T) {
	if got := podNamePrefix("web-6d4cf56db6"); got != "web-6d4cf56db6-" {
		t.Errorf("prefix = %q", got)
	}
}
