package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"minik/internal/podutil"
)

// Builders for pods and nodes in unit tests.

type podOpt func(*corev1.Pod)

var podSeq int

func testPod(name string, opts ...podOpt) *corev1.Pod {
	podSeq++
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "demo", UID: types.UID(fmt.Sprintf("uid-%s-%d", name, podSeq))},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func requests(cpu, mem string) podOpt {
	return func(p *corev1.Pod) {
		rl := corev1.ResourceList{}
		if cpu != "" {
			rl[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			rl[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		p.Spec.Containers[0].Resources.Requests = rl
	}
}

func withLabels(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		p.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func toleration(t corev1.Toleration) podOpt {
	return func(p *corev1.Pod) { p.Spec.Tolerations = append(p.Spec.Tolerations, t) }
}

func withNodeSelector(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Spec.NodeSelector[kv[i]] = kv[i+1]
		}
	}
}

func requiredNodeAffinity(terms ...corev1.NodeSelectorTerm) podOpt {
	return func(p *corev1.Pod) {
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &corev1.Affinity{}
		}
		p.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
		}
	}
}

func antiAffinity(key string, kv ...string) podOpt {
	return func(p *corev1.Pod) {
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &corev1.Affinity{}
		}
		sel := &metav1.LabelSelector{MatchLabels: map[string]string{}}
		for i := 0; i+1 < len(kv); i += 2 {
			sel.MatchLabels[kv[i]] = kv[i+1]
		}
		p.Spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{LabelSelector: sel, TopologyKey: key}},
		}
	}
}

func podAffinity(key string, kv ...string) podOpt {
	return func(p *corev1.Pod) {
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &corev1.Affinity{}
		}
		sel := &metav1.LabelSelector{MatchLabels: map[string]string{}}
		for i := 0; i+1 < len(kv); i += 2 {
			sel.MatchLabels[kv[i]] = kv[i+1]
		}
		p.Spec.Affinity.PodAffinity = &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{LabelSelector: sel, TopologyKey: key}},
		}
	}
}

func spreadBy(key string, maxSkew int32, kv ...string) podOpt {
	return func(p *corev1.Pod) {
		sel := &metav1.LabelSelector{MatchLabels: map[string]string{}}
		for i := 0; i+1 < len(kv); i += 2 {
			sel.MatchLabels[kv[i]] = kv[i+1]
		}
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
			MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel,
		})
	}
}

type nodeOpt func(*corev1.Node)

func testNode(name string, cpu, mem string, opts ...nodeOpt) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(cpu),
			corev1.ResourceMemory: resource.MustParse(mem),
			corev1.ResourcePods:   resource.MustParse("110"),
		}},
	}
	for _, o := range opts {
		o(n)
	}
	return n
}

func taint(key, value string, effect corev1.TaintEffect) nodeOpt {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	}
}

func nodeLabels(kv ...string) nodeOpt {
	return func(n *corev1.Node) {
		for i := 0; i+1 < len(kv); i += 2 {
			n.Labels[kv[i]] = kv[i+1]
		}
	}
}

func cordoned(n *corev1.Node) { n.Spec.Unschedulable = true }

func allocatable(name corev1.ResourceName, q string) nodeOpt {
	return func(n *corev1.Node) { n.Status.Allocatable[name] = resource.MustParse(q) }
}

// bound places pod on node in c as if the informer had seen it bound.
func bound(c *cache, pod *corev1.Pod, node string) {
	p := pod.DeepCopy()
	p.Spec.NodeName = node
	c.addPod(p)
}

func reasonsOf(s *status) string {
	if s == nil {
		return "fits"
	}
	return strings.Join(s.reasons, ", ")
}

func TestFilters(t *testing.T) {
	tests := []struct {
		name     string
		node     *corev1.Node
		others   []*corev1.Node // empty nodes beside node
		existing []*corev1.Pod
		pod      *corev1.Pod
		want     string
		code     code
	}{
		{
			name: "a pod without requests fits an empty node",
			node: testNode("n1", "2", "4Gi"),
			pod:  testPod("web"),
			want: "fits",
		},
		{
			name: "a pod asking more cpu than is left is rejected for cpu",
			node: testNode("n1", "2", "4Gi"),
			existing: []*corev1.Pod{
				testPod("a", requests("1500m", "")),
			},
			pod:  testPod("web", requests("1", "")),
			want: "Insufficient cpu", code: codeUnschedulable,
		},
		{
			name: "a pod asking more than the whole node is unresolvable",
			node: testNode("n1", "2", "4Gi"),
			pod:  testPod("web", requests("3", "")),
			want: "Insufficient cpu", code: codeUnresolvable,
		},
		{
			name: "every insufficient resource is a reason",
			node: testNode("n1", "1", "1Gi"),
			existing: []*corev1.Pod{
				testPod("a", requests("800m", "800Mi")),
			},
			pod:  testPod("web", requests("500m", "500Mi")),
			want: "Insufficient cpu, Insufficient memory", code: codeUnschedulable,
		},
		{
			name: "a full node has too many pods",
			node: testNode("n1", "2", "4Gi", allocatable(corev1.ResourcePods, "1")),
			existing: []*corev1.Pod{
				testPod("a"),
			},
			pod:  testPod("web"),
			want: "Too many pods", code: codeUnschedulable,
		},
		{
			name: "ephemeral storage is compared too",
			node: testNode("n1", "2", "4Gi", allocatable(corev1.ResourceEphemeralStorage, "1Gi")),
			pod: testPod("web", func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("2Gi")}
			}),
			want: "Insufficient ephemeral-storage", code: codeUnresolvable,
		},
		{
			name: "an init container larger than the containers sets the request",
			node: testNode("n1", "2", "4Gi"),
			pod: testPod("web", requests("500m", ""), func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2500m")},
				}}}
			}),
			want: "Insufficient cpu", code: codeUnresolvable,
		},
		{
			name: "pod overhead is added to the request",
			node: testNode("n1", "1", "4Gi"),
			pod: testPod("web", requests("900m", ""), func(p *corev1.Pod) {
				p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}
			}),
			want: "Insufficient cpu", code: codeUnresolvable,
		},
		{
			name: "a NoSchedule taint the pod does not tolerate rejects the node",
			node: testNode("cp", "2", "4Gi", taint("node-role.kubernetes.io/control-plane", "", corev1.TaintEffectNoSchedule)),
			pod:  testPod("web"),
			want: ReasonUntoleratedTaint, code: codeUnresolvable,
		},
		{
			name: "a toleration with Exists tolerates the taint",
			node: testNode("cp", "2", "4Gi", taint("node-role.kubernetes.io/control-plane", "", corev1.TaintEffectNoSchedule)),
			pod:  testPod("web", toleration(corev1.Toleration{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists})),
			want: "fits",
		},
		{
			name: "a toleration for another value does not tolerate the taint",
			node: testNode("gpu", "2", "4Gi", taint("dedicated", "gpu", corev1.TaintEffectNoExecute)),
			pod:  testPod("web", toleration(corev1.Toleration{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoExecute})),
			want: ReasonUntoleratedTaint, code: codeUnresolvable,
		},
		{
			name: "a PreferNoSchedule taint does not filter",
			node: testNode("n1", "2", "4Gi", taint("soft", "", corev1.TaintEffectPreferNoSchedule)),
			pod:  testPod("web"),
			want: "fits",
		},
		{
			name: "a cordoned node is unschedulable",
			node: testNode("n1", "2", "4Gi", cordoned),
			pod:  testPod("web"),
			want: ReasonNodeUnschedulable, code: codeUnresolvable,
		},
		{
			name: "a pod tolerating the unschedulable taint goes to a cordoned node",
			node: testNode("n1", "2", "4Gi", cordoned),
			pod:  testPod("ds", toleration(corev1.Toleration{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})),
			want: "fits",
		},
		{
			name: "a nodeSelector the node's labels do not satisfy rejects it",
			node: testNode("n1", "2", "4Gi", nodeLabels("disktype", "hdd")),
			pod:  testPod("web", withNodeSelector("disktype", "ssd")),
			want: ReasonNodeAffinity, code: codeUnresolvable,
		},
		{
			name: "a nodeSelector the node's labels satisfy fits",
			node: testNode("n1", "2", "4Gi", nodeLabels("disktype", "ssd")),
			pod:  testPod("web", withNodeSelector("disktype", "ssd")),
			want: "fits",
		},
		{
			name: "required node affinity with In matches a listed value",
			node: testNode("n1", "2", "4Gi", nodeLabels("zone", "b")),
			pod: testPod("web", requiredNodeAffinity(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}},
			}})),
			want: "fits",
		},
		{
			name: "required node affinity with NotIn rejects a listed value",
			node: testNode("n1", "2", "4Gi", nodeLabels("zone", "b")),
			pod: testPod("web", requiredNodeAffinity(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "zone", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"b"}},
			}})),
			want: ReasonNodeAffinity, code: codeUnresolvable,
		},
		{
			name: "required node affinity terms are ORed",
			node: testNode("n1", "2", "4Gi", nodeLabels("zone", "b")),
			pod: testPod("web", requiredNodeAffinity(
				corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}},
				corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpExists}}},
			)),
			want: "fits",
		},
		{
			name: "required node affinity with Gt compares integers",
			node: testNode("n1", "2", "4Gi", nodeLabels("cores", "8")),
			pod: testPod("web", requiredNodeAffinity(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "cores", Operator: corev1.NodeSelectorOpGt, Values: []string{"16"}},
			}})),
			want: ReasonNodeAffinity, code: codeUnresolvable,
		},
		{
			name: "required node affinity on metadata.name matches the node by name",
			node: testNode("n1", "2", "4Gi"),
			pod: testPod("web", requiredNodeAffinity(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{
				{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}},
			}})),
			want: "fits",
		},
		{
			name: "an empty node selector term matches no node",
			node: testNode("n1", "2", "4Gi"),
			pod:  testPod("web", requiredNodeAffinity(corev1.NodeSelectorTerm{})),
			want: ReasonNodeAffinity, code: codeUnresolvable,
		},
		{
			name: "a pod naming another node is rejected by NodeName",
			node: testNode("n1", "2", "4Gi"),
			pod:  testPod("web", func(p *corev1.Pod) { p.Spec.NodeName = "n2" }),
			want: ReasonNodeName, code: codeUnresolvable,
		},
		{
			name: "a taint is reported before an unmatched node affinity",
			node: testNode("cp", "2", "4Gi", taint("node-role.kubernetes.io/control-plane", "", corev1.TaintEffectNoSchedule)),
			pod:  testPod("web", withNodeSelector("disktype", "ssd"), requests("4", "")),
			want: ReasonUntoleratedTaint, code: codeUnresolvable,
		},
		{
			name: "a host port in use rejects the node",
			node: testNode("n1", "2", "4Gi"),
			existing: []*corev1.Pod{testPod("a", func(p *corev1.Pod) {
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
			})},
			pod: testPod("web", func(p *corev1.Pod) {
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
			}),
			want: ReasonNodePorts, code: codeUnschedulable,
		},
		{
			name: "anti-affinity by hostname rejects a node running a matching pod",
			node: testNode("n1", "2", "4Gi"),
			existing: []*corev1.Pod{
				testPod("web-1", withLabels("app", "web")),
			},
			pod:  testPod("web-2", withLabels("app", "web"), antiAffinity(corev1.LabelHostname, "app", "web")),
			want: ReasonPodAntiAffinity, code: codeUnschedulable,
		},
		{
			name: "an existing pod's anti-affinity rejects a pod it selects",
			node: testNode("n1", "2", "4Gi"),
			existing: []*corev1.Pod{
				testPod("db", withLabels("app", "db"), antiAffinity(corev1.LabelHostname, "app", "web")),
			},
			pod:  testPod("web", withLabels("app", "web")),
			want: ReasonExistingPodsAntiAffinity, code: codeUnschedulable,
		},
		{
			name: "pod affinity rejects a node without a matching pod",
			node: testNode("n1", "2", "4Gi"),
			existing: []*corev1.Pod{
				testPod("cache", withLabels("app", "cache")),
			},
			pod:  testPod("web", withLabels("app", "web"), podAffinity(corev1.LabelHostname, "app", "db")),
			want: ReasonPodAffinity, code: codeUnresolvable,
		},
		{
			name:     "spreading by hostname rejects the node that would be two ahead",
			node:     testNode("n1", "2", "4Gi"),
			others:   []*corev1.Node{testNode("n2", "2", "4Gi")},
			existing: []*corev1.Pod{testPod("web-1", withLabels("app", "web"))},
			pod:      testPod("web-2", withLabels("app", "web"), spreadBy(corev1.LabelHostname, 1, "app", "web")),
			want:     ReasonTopologySpread, code: codeUnschedulable,
		},
		{
			name:     "spreading with a larger skew allows the busier node",
			node:     testNode("n1", "2", "4Gi"),
			others:   []*corev1.Node{testNode("n2", "2", "4Gi")},
			existing: []*corev1.Pod{testPod("web-1", withLabels("app", "web"))},
			pod:      testPod("web-2", withLabels("app", "web"), spreadBy(corev1.LabelHostname, 2, "app", "web")),
			want:     "fits",
		},
		{
			name: "spreading over a key the node lacks is unresolvable",
			node: testNode("n1", "2", "4Gi"),
			pod:  testPod("web", withLabels("app", "web"), spreadBy(corev1.LabelTopologyZone, 1, "app", "web")),
			want: ReasonTopologySpreadLabel, code: codeUnresolvable,
		},
		{
			name: "the first pod of a group with affinity to itself fits",
			node: testNode("n1", "2", "4Gi"),
			pod:  testPod("web", withLabels("app", "web"), podAffinity(corev1.LabelHostname, "app", "web")),
			want: "fits",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCache(nil)
			c.setNode(tc.node)
			for _, n := range tc.others {
				c.setNode(n)
			}
			for _, p := range tc.existing {
				bound(c, p, tc.node.Name)
			}
			st := c.preFilter(newPodInfo(tc.pod))
			got := filter(st, c.nodes[tc.node.Name])
			if reasonsOf(got) != tc.want {
				t.Fatalf("filter = %q, want %q", reasonsOf(got), tc.want)
			}
			if got != nil && got.code != tc.code {
				t.Errorf("code = %d, want %d", got.code, tc.code)
			}
		})
	}
}

func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	tests := []struct {
		name    string
		pod     *corev1.Pod
		nonZero bool
		cpu     int64
		mem     int64
	}{
		{name: "containers add up", pod: testPod("p", func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{
				{Name: "a", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}},
				{Name: "b", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}},
			}
		}), cpu: 350},
		{name: "the largest init container wins over smaller containers", pod: testPod("p", requests("100m", "64Mi"), func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{
				{Name: "i1", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m")}}},
				{Name: "i2", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}},
			}
		}), cpu: 300, mem: 128 << 20},
		{name: "sidecars run beside the containers", pod: testPod("p", requests("100m", ""), func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{
				{Name: "proxy", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}}},
			}
		}), cpu: 150},
		{name: "scoring counts defaults for containers without requests", pod: testPod("p"), nonZero: true, cpu: defaultMilliCPURequest, mem: defaultMemoryRequest},
		{name: "pod-level requests replace the containers' cpu", pod: testPod("p", requests("100m", ""), func(p *corev1.Pod) {
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
		}), cpu: 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := podRequests(tc.pod, tc.nonZero)
			if r.milliCPU != tc.cpu || r.memory != tc.mem {
				t.Errorf("requests = %dm cpu, %d memory; want %dm, %d", r.milliCPU, r.memory, tc.cpu, tc.mem)
			}
		})
	}
}

func TestTolerations(t *testing.T) {
	tests := []struct {
		name  string
		tol   corev1.Toleration
		taint corev1.Taint
		want  bool
	}{
		{"an empty key with Exists tolerates every taint", corev1.Toleration{Operator: corev1.TolerationOpExists}, corev1.Taint{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}, true},
		{"Equal compares the values", corev1.Toleration{Key: "k", Value: "v"}, corev1.Taint{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}, true},
		{"another effect does not tolerate", corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}, corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoSchedule}, false},
		{"Lt tolerates a smaller taint value", corev1.Toleration{Key: "k", Operator: corev1.TolerationOpLt, Value: "10"}, corev1.Taint{Key: "k", Value: "3", Effect: corev1.TaintEffectNoSchedule}, true},
		{"Gt does not tolerate a smaller taint value", corev1.Toleration{Key: "k", Operator: corev1.TolerationOpGt, Value: "10"}, corev1.Taint{Key: "k", Value: "3", Effect: corev1.TaintEffectNoSchedule}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := podutil.ToleratesTaint([]corev1.Toleration{tc.tol}, &tc.taint); got != tc.want {
				t.Errorf("ToleratesTaint = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestScoringSpreadsPodsOfOneGroup(t *testing.T) {
	c := newCache(nil)
	for _, name := range []string{"n1", "n2", "n3"} {
		c.setNode(testNode(name, "4", "8Gi"))
	}
	var placed []string
	for i := range 6 {
		pi := newPodInfo(testPod(fmt.Sprintf("web-%d", i), withLabels("app", "web"), requests("100m", "64Mi")))
		st := c.preFilter(pi)
		var s scorer
		n := s.pick(st, c.list)
		c.assume(pi, n.name)
		placed = append(placed, n.name)
	}
	want := []string{"n1", "n2", "n3", "n1", "n2", "n3"}
	if !slices.Equal(placed, want) {
		t.Errorf("placed on %v, want %v", placed, want)
	}
}

func TestScoringPrefersTheLeastAllocatedNode(t *testing.T) {
	c := newCache(nil)
	c.setNode(testNode("busy", "4", "8Gi"))
	c.setNode(testNode("idle", "4", "8Gi"))
	bound(c, testPod("other", requests("3", "6Gi")), "busy")
	pi := newPodInfo(testPod("web", requests("100m", "64Mi")))
	var s scorer
	if n := s.pick(c.preFilter(pi), c.list); n.name != "idle" {
		t.Errorf("picked %s, want idle", n.name)
	}
}

func TestNumFeasibleNodesToFind(t *testing.T) {
	for _, tc := range []struct{ nodes, want int }{{3, 3}, {99, 99}, {100, 100}, {1000, 420}, {5000, 500}, {50000, 2500}} {
		t.Run(fmt.Sprintf("%d nodes are sampled down to %d", tc.nodes, tc.want), func(t *testing.T) {
			if got := numFeasibleNodesToFind(tc.nodes); got != tc.want {
				t.Errorf("numFeasibleNodesToFind(%d) = %d, want %d", tc.nodes, got, tc.want)
			}
		})
	}
}
