package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// failureMessage schedules pod against nodes (with existing pods placed
// by node name) and returns the FailedScheduling message, or "" when the
// pod fits somewhere.
func failureMessage(t *testing.T, nodes []*corev1.Node, existing map[string][]*corev1.Pod, pod *corev1.Pod) string {
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
	a := s.findNode(newPodInfo(pod))
	if a.node != "" {
		return ""
	}
	return a.message
}

func TestFailedSchedulingMessage(t *testing.T) {
	controlPlane := taint("node-role.kubernetes.io/control-plane", "", corev1.TaintEffectNoSchedule)
	never := corev1.PreemptNever
	tests := []struct {
		name     string
		nodes    []*corev1.Node
		existing map[string][]*corev1.Pod
		pod      *corev1.Pod
		want     string
	}{
		{
			name:  "insufficient cpu on every node leaves no preemption victims",
			nodes: []*corev1.Node{testNode("minik-node-1", "2", "4Gi"), testNode("minik-node-2", "2", "4Gi"), testNode("minik-node-3", "2", "4Gi")},
			existing: map[string][]*corev1.Pod{
				"minik-node-1": {testPod("a", requests("1500m", ""))},
				"minik-node-2": {testPod("b", requests("1500m", ""))},
				"minik-node-3": {testPod("c", requests("1500m", ""))},
			},
			pod:  testPod("web", requests("1", "")),
			want: "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
		},
		{
			name:  "a request larger than any node is not helped by preemption",
			nodes: []*corev1.Node{testNode("minik-node-1", "2", "4Gi"), testNode("minik-node-2", "2", "4Gi"), testNode("minik-node-3", "2", "4Gi")},
			pod:   testPod("web", requests("64", "")),
			want:  "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
		},
		{
			name: "a tainted control plane and busy workers are counted apart",
			nodes: []*corev1.Node{
				testNode("cp", "2", "4Gi", controlPlane),
				testNode("w1", "2", "4Gi"), testNode("w2", "2", "4Gi"),
			},
			existing: map[string][]*corev1.Pod{
				"w1": {testPod("a", requests("1500m", ""))},
				"w2": {testPod("b", requests("1500m", ""))},
			},
			pod: testPod("web", requests("1", "")),
			want: "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. " +
				"preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.",
		},
		{
			name:  "reasons sort as strings, so 10 comes before 2",
			nodes: append(nodeRange("big", 10, "2", "4Gi", controlPlane), nodeRange("small", 2, "2", "4Gi", nodeLabels("disktype", "hdd"))...),
			pod:   testPod("web", withNodeSelector("disktype", "ssd")),
			want: "0/12 nodes are available: 10 node(s) had untolerated taint(s), 2 node(s) didn't match Pod's node affinity/selector. " +
				"preemption: 0/12 nodes are available: 12 Preemption is not helpful for scheduling.",
		},
		{
			name:  "one node with two insufficient resources counts both",
			nodes: []*corev1.Node{testNode("n1", "1", "1Gi")},
			pod:   testPod("web", requests("2", "2Gi")),
			want:  "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
		},
		{
			name:  "an unsatisfiable node affinity rejects every node",
			nodes: []*corev1.Node{testNode("n1", "2", "4Gi"), testNode("n2", "2", "4Gi")},
			pod: testPod("web", requiredNodeAffinity(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"mars"}},
			}})),
			want: "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
		},
		{
			name:  "a pod pinned to one node by name counts the others as not satisfying NodeAffinity",
			nodes: []*corev1.Node{testNode("n1", "1", "4Gi"), testNode("n2", "2", "4Gi"), testNode("n3", "2", "4Gi")},
			pod: testPod("ds", requests("2", ""), requiredNodeAffinity(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{
				{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}},
			}})),
			want: "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
		},
		{
			name:  "terms pinning no common node conflict before any node is visited",
			nodes: []*corev1.Node{testNode("n1", "2", "4Gi"), testNode("n2", "2", "4Gi")},
			pod: testPod("ds", requiredNodeAffinity(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{
				{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}},
				{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n2"}},
			}})),
			want: "0/2 nodes are available: pod affinity terms conflict. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
		},
		{
			name:  "anti-affinity by hostname on every node may be helped by preemption",
			nodes: []*corev1.Node{testNode("n1", "2", "4Gi"), testNode("n2", "2", "4Gi")},
			existing: map[string][]*corev1.Pod{
				"n1": {testPod("web-1", withLabels("app", "web"))},
				"n2": {testPod("web-2", withLabels("app", "web"))},
			},
			pod:  testPod("web-3", withLabels("app", "web"), antiAffinity(corev1.LabelHostname, "app", "web")),
			want: "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
		},
		{
			name: "a spread constraint and a full node are counted apart",
			nodes: []*corev1.Node{
				testNode("n1", "2", "4Gi", nodeLabels(corev1.LabelTopologyZone, "a")),
				testNode("n2", "500m", "4Gi", nodeLabels(corev1.LabelTopologyZone, "b")),
			},
			existing: map[string][]*corev1.Pod{"n1": {testPod("web-1", withLabels("app", "web"))}},
			pod:      testPod("web-2", withLabels("app", "web"), requests("1", ""), spreadBy(corev1.LabelTopologyZone, 1, "app", "web")),
			want: "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology spread constraints. " +
				"preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
		},
		{
			name:  "a cordoned node is unschedulable",
			nodes: []*corev1.Node{testNode("n1", "2", "4Gi", cordoned)},
			pod:   testPod("web"),
			want:  "0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
		},
		{
			name:  "a pod that never preempts says so",
			nodes: []*corev1.Node{testNode("n1", "1", "4Gi")},
			existing: map[string][]*corev1.Pod{
				"n1": {testPod("a", requests("1", ""))},
			},
			pod:  testPod("web", requests("1", ""), func(p *corev1.Pod) { p.Spec.PreemptionPolicy = &never }),
			want: "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.",
		},
		{
			name:  "no node at all",
			nodes: nil,
			pod:   testPod("web"),
			want:  "no nodes available to schedule pods",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := failureMessage(t, tc.nodes, tc.existing, tc.pod); got != tc.want {
				t.Errorf("message:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestPreemptionDryRunFiltersAgainWithoutVictims(t *testing.T) {
	high := int32(1000)
	node := testNode("n1", "1", "4Gi")
	low := testPod("low", requests("100m", ""))
	pod := testPod("web", requests("2", "64Mi"), func(p *corev1.Pod) { p.Spec.Priority = &high })
	got := failureMessage(t, []*corev1.Node{node}, map[string][]*corev1.Pod{"n1": {low}}, pod)
	want := "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
	if got != want {
		t.Errorf("message:\n got %q\nwant %q", got, want)
	}
	// A pod that fits once the lower-priority pod is gone preempts it:
	// the message then has no preemption verdict, as kube's.
	pod = testPod("web", requests("950m", ""), func(p *corev1.Pod) { p.Spec.Priority = &high })
	got = failureMessage(t, []*corev1.Node{node}, map[string][]*corev1.Pod{"n1": {low}}, pod)
	want = "0/1 nodes are available: 1 Insufficient cpu."
	if got != want {
		t.Errorf("message:\n got %q\nwant %q", got, want)
	}
}

func TestHistogramSortsAsKubeDoes(t *testing.T) {
	h := histogram{"Insufficient cpu": 2, "node(s) had untolerated taint(s)": 1, "Insufficient memory": 2, "node(s) were unschedulable": 10}
	want := "1 node(s) had untolerated taint(s), 10 node(s) were unschedulable, 2 Insufficient cpu, 2 Insufficient memory"
	if got := h.String(); got != want {
		t.Errorf("histogram:\n got %q\nwant %q", got, want)
	}
}

func TestTruncateKeepsEventsWithinTheNoteLimit(t *testing.T) {
	long := make([]byte, 2000)
	for i := range long {
		long[i] = 'x'
	}
	got := truncate(string(long))
	if len(got) != noteLengthLimit || got[len(got)-4:] != " ..." {
		t.Errorf("truncate gave %d bytes ending %q", len(got), got[len(got)-4:])
	}
}

func TestSetCondition(t *testing.T) {
	t0 := metav1.Unix(100, 0)
	t1 := metav1.Unix(200, 0)
	st := corev1.PodStatus{}
	cond := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "a"}
	t.Run("a new condition is added with the transition time", func(t *testing.T) {
		if !setCondition(&st, cond, t0) || st.Conditions[0].LastTransitionTime != t0 {
			t.Fatalf("conditions = %+v", st.Conditions)
		}
	})
	t.Run("the same condition changes nothing", func(t *testing.T) {
		if setCondition(&st, cond, t1) {
			t.Fatal("reported a change")
		}
	})
	t.Run("a new message keeps the transition time", func(t *testing.T) {
		c := cond
		c.Message = "b"
		if !setCondition(&st, c, t1) || st.Conditions[0].LastTransitionTime != t0 || st.Conditions[0].Message != "b" {
			t.Fatalf("conditions = %+v", st.Conditions)
		}
	})
}

func nodeRange(prefix string, n int, cpu, mem string, opts ...nodeOpt) []*corev1.Node {
	var out []*corev1.Node
	for i := range n {
		out = append(out, testNode(prefix+"-"+string(rune('a'+i)), cpu, mem, opts...))
	}
	return out
}
