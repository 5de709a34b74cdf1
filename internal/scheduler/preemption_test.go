package scheduler

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func priority(v int32) podOpt { return func(p *corev1.Pod) { p.Spec.Priority = &v } }

func startedAgo(d time.Duration) podOpt {
	return func(p *corev1.Pod) { t := metav1.NewTime(time.Now().Add(-d)); p.Status.StartTime = &t }
}

// preemptionAttempt schedules pod against nodes (with existing pods bound
// by node name) and returns the attempt.
func preemptionAttempt(t *testing.T, nodes []*corev1.Node, existing map[string][]*corev1.Pod, pod *corev1.Pod) (*Scheduler, attempt) {
	t.Helper()
	s := &Scheduler{cache: newCache(nil)}
	for _, n := range nodes {
		s.cache.setNode(n)
	}
	for node, pods := range existing {
		for _, p := range pods {
			bound(s.cache, p, node)
		}
	}
	return s, s.findNode(newPodInfo(pod))
}

func victimNames(p *preemptionPlan) []string {
	var out []string
	for _, v := range p.victims {
		out = append(out, v.pod.Name)
	}
	return out
}

func TestPreemptionChoosesNodeAndVictimsAsKube(t *testing.T) {
	twoNodes := []*corev1.Node{testNode("n1", "2", "4Gi"), testNode("n2", "2", "4Gi")}
	tests := []struct {
		name     string
		nodes    []*corev1.Node
		existing map[string][]*corev1.Pod
		pod      *corev1.Pod
		node     string
		victims  []string
	}{
		{
			name:  "the node whose most important victim is least important wins",
			nodes: twoNodes,
			existing: map[string][]*corev1.Pod{
				"n1": {testPod("mid", requests("2", ""), priority(50))},
				"n2": {testPod("low", requests("2", ""), priority(10))},
			},
			pod:     testPod("web", requests("1", ""), priority(100)),
			node:    "n2",
			victims: []string{"low"},
		},
		{
			name:  "with equal top priorities the smaller sum of priorities wins",
			nodes: twoNodes,
			existing: map[string][]*corev1.Pod{
				"n1": {testPod("a", requests("1", ""), priority(10)), testPod("b", requests("1", ""), priority(10))},
				"n2": {testPod("c", requests("1", ""), priority(10)), testPod("d", requests("1", ""), priority(-5))},
			},
			pod:     testPod("web", requests("2", ""), priority(100)),
			node:    "n2",
			victims: []string{"c", "d"},
		},
		{
			name:  "then the fewer victims",
			nodes: twoNodes,
			existing: map[string][]*corev1.Pod{
				"n1": {testPod("a", requests("1", ""), priority(0)), testPod("b", requests("1", ""), priority(0))},
				"n2": {testPod("c", requests("2", ""), priority(0))},
			},
			pod:     testPod("web", requests("2", ""), priority(100)),
			node:    "n2",
			victims: []string{"c"},
		},
		{
			name:  "then the node whose victims started last",
			nodes: twoNodes,
			existing: map[string][]*corev1.Pod{
				"n1": {testPod("young", requests("2", ""), startedAgo(time.Minute))},
				"n2": {testPod("old", requests("2", ""), startedAgo(time.Hour))},
			},
			pod:     testPod("web", requests("2", ""), priority(100)),
			node:    "n1",
			victims: []string{"young"},
		},
		{
			name:  "the most important pods are given back when the pod fits without them",
			nodes: []*corev1.Node{testNode("n1", "4", "4Gi")},
			existing: map[string][]*corev1.Pod{"n1": {
				testPod("keep", requests("1", ""), priority(50)),
				testPod("evict", requests("2", ""), priority(10)),
				testPod("also-kept", requests("1", ""), priority(5)),
			}},
			pod:     testPod("web", requests("2", ""), priority(100)),
			node:    "n1",
			victims: []string{"evict"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, a := preemptionAttempt(t, tc.nodes, tc.existing, tc.pod)
			if a.node != "" {
				t.Fatalf("pod fits on %s", a.node)
			}
			if a.preemption == nil || a.preemption.node != tc.node || !slices.Equal(victimNames(a.preemption), tc.victims) {
				t.Fatalf("plan = %+v (victims %v), want node %s victims %v; message %q", a.preemption, victimNames(a.preemption), tc.node, tc.victims, a.message)
			}
		})
	}
}

func TestPreemptionIsNotAttempted(t *testing.T) {
	never := corev1.PreemptNever
	node := []*corev1.Node{testNode("n1", "1", "4Gi")}
	t.Run("pods of equal priority are no victims", func(t *testing.T) {
		_, a := preemptionAttempt(t, node, map[string][]*corev1.Pod{"n1": {testPod("a", requests("1", ""), priority(100))}},
			testPod("web", requests("1", ""), priority(100)))
		want := "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
		if a.message != want || a.preemption == nil || a.preemption.node != "" {
			t.Errorf("message %q, plan %+v; want %q and a cleared nomination", a.message, a.preemption, want)
		}
	})
	t.Run("a pod that never preempts leaves its nomination alone", func(t *testing.T) {
		_, a := preemptionAttempt(t, node, map[string][]*corev1.Pod{"n1": {testPod("a", requests("1", ""))}},
			testPod("web", requests("1", ""), priority(100), func(p *corev1.Pod) { p.Spec.PreemptionPolicy = &never }))
		want := "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."
		if a.message != want || a.preemption != nil {
			t.Errorf("message %q, plan %+v; want %q and no plan", a.message, a.preemption, want)
		}
	})
	t.Run("a pod waits for the victims terminating on its nominated node", func(t *testing.T) {
		now := metav1.Now()
		victim := testPod("victim", requests("1", ""), func(p *corev1.Pod) {
			p.DeletionTimestamp = &now
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonPreemptionByScheduler}}
		})
		_, a := preemptionAttempt(t, node, map[string][]*corev1.Pod{"n1": {victim}},
			testPod("web", requests("1", ""), priority(100), func(p *corev1.Pod) { p.Status.NominatedNodeName = "n1" }))
		want := "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to a terminating pod on the nominated node."
		if a.message != want || a.preemption != nil {
			t.Errorf("message %q, plan %+v; want %q and no plan", a.message, a.preemption, want)
		}
	})
}

func TestNominatedPodsKeepTheirRoom(t *testing.T) {
	s := &Scheduler{cache: newCache(nil)}
	s.cache.setNode(testNode("n1", "2", "4Gi"))
	high := testPod("high", requests("2", ""), priority(100))
	s.nominate(newPodInfo(high), "n1")

	if a := s.findNode(newPodInfo(testPod("low", requests("1", ""), priority(10)))); a.node != "" {
		t.Errorf("a pod of lower priority took the room of a nominated one on %s", a.node)
	}
	if a := s.findNode(newPodInfo(testPod("peer", requests("1", ""), priority(200)))); a.node != "n1" {
		t.Errorf("a pod of higher priority was kept off by a nominated one: %q", a.message)
	}
	if a := s.findNode(newPodInfo(high)); a.node != "n1" {
		t.Errorf("the nominated pod does not fit its own room: %q", a.message)
	}
	s.forgetNomination(high)
	if len(s.nominated) != 0 || len(s.nominatedOn) != 0 {
		t.Errorf("nomination not forgotten: %v %v", s.nominated, s.nominatedOn)
	}
}
