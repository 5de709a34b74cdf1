package scheduler_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"minik/internal/testserver"
)

// waitTimeout bounds every wait: scheduling takes milliseconds, a retry
// after a cluster event at most the back-off (1s).
const waitTimeout = 30 * time.Second

// cluster is a running minikd with the scheduler, a namespace "demo" and
// a client.
type cluster struct {
	t  *testing.T
	cs kubernetes.Interface
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	srv := testserver.StartWith(t, testserver.Options{Scheduler: true})
	c := &cluster{t: t, cs: srv.Client(t)}
	if _, err := c.cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return c
}

type nodeSpec struct {
	name   string
	cpu    string
	memory string
	labels map[string]string
	taints []corev1.Taint
}

func (c *cluster) node(n nodeSpec) {
	c.t.Helper()
	if n.cpu == "" {
		n.cpu = "2"
	}
	if n.memory == "" {
		n.memory = "4Gi"
	}
	labels := map[string]string{corev1.LabelHostname: n.name, corev1.LabelOSStable: "linux"}
	for k, v := range n.labels {
		labels[k] = v
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: n.taints},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(n.cpu), corev1.ResourceMemory: resource.MustParse(n.memory),
				corev1.ResourcePods: resource.MustParse("110"),
			},
		},
	}
	if _, err := c.cs.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		c.t.Fatalf("create node %s: %v", n.name, err)
	}
}

// nodes creates minik-node-1..n with the same shape, and returns once
// the scheduler knows them all.
func (c *cluster) nodes(n int, spec nodeSpec) {
	c.t.Helper()
	for i := 1; i <= n; i++ {
		s := spec
		s.name = fmt.Sprintf("minik-node-%d", i)
		c.node(s)
	}
	c.seen(fmt.Sprintf("minik-node-%d", n))
}

// seen returns once the scheduler's node informer has delivered node (and
// so every node created before it): a pod pinned to it gets bound. The
// pod is deleted before seen returns, and the scheduler sees the deletion
// before any pod created afterwards.
func (c *cluster) seen(node string) {
	c.t.Helper()
	name := "barrier-" + node
	c.pod(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			Containers:   []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
			NodeSelector: map[string]string{corev1.LabelHostname: node},
			Tolerations:  []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		},
	})
	c.waitBound(name)
	if err := c.cs.CoreV1().Pods("demo").Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		c.t.Fatal(err)
	}
}

func (c *cluster) pod(p *corev1.Pod) *corev1.Pod {
	c.t.Helper()
	created, err := c.cs.CoreV1().Pods("demo").Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		c.t.Fatalf("create pod %s: %v", p.Name, err)
	}
	return created
}

func webPod(name, cpu string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "nginx", Image: "nginx:1.27",
		}}},
	}
	if cpu != "" {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
	return p
}

// waitPod watches pod demo/name until cond holds, and returns it.
func (c *cluster) waitPod(name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return c.cs.CoreV1().Pods("demo").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return c.cs.CoreV1().Pods("demo").Watch(ctx, o)
		},
	}
	ev, err := watchtools.UntilWithSync(ctx, lw, &corev1.Pod{}, nil, func(ev watch.Event) (bool, error) {
		p, ok := ev.Object.(*corev1.Pod)
		return ok && ev.Type != watch.Deleted && cond(p), nil
	})
	if err != nil {
		p, _ := c.cs.CoreV1().Pods("demo").Get(context.Background(), name, metav1.GetOptions{})
		c.t.Fatalf("pod %s: not %s within %v: %v\nlast seen: nodeName=%q conditions=%+v", name, what, waitTimeout, err, p.Spec.NodeName, p.Status.Conditions)
	}
	return ev.Object.(*corev1.Pod)
}

func (c *cluster) waitBound(name string) *corev1.Pod {
	c.t.Helper()
	return c.waitPod(name, "bound", func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })
}

func (c *cluster) waitUnschedulable(name string) *corev1.Pod {
	c.t.Helper()
	return c.waitPod(name, "unschedulable", func(p *corev1.Pod) bool {
		cond := podScheduled(p)
		return cond != nil && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable
	})
}

// waitEvent watches the events of pod demo/name until one with reason
// and message appears, and returns it.
func (c *cluster) waitEvent(name, reason, message string) *corev1.Event {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	sel := fields.OneTermEqualSelector("involvedObject.name", name).String()
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return c.cs.CoreV1().Events("demo").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return c.cs.CoreV1().Events("demo").Watch(ctx, o)
		},
	}
	ev, err := watchtools.UntilWithSync(ctx, lw, &corev1.Event{}, nil, func(ev watch.Event) (bool, error) {
		e, ok := ev.Object.(*corev1.Event)
		return ok && e.Reason == reason && e.Message == message, nil
	})
	if err != nil {
		list, _ := c.cs.CoreV1().Events("demo").List(context.Background(), metav1.ListOptions{FieldSelector: sel})
		var seen []string
		for _, e := range list.Items {
			seen = append(seen, e.Reason+": "+e.Message)
		}
		c.t.Fatalf("pod %s: no %s event %q within %v: %v\nevents: %q", name, reason, message, waitTimeout, err, seen)
	}
	return ev.Object.(*corev1.Event)
}

func podScheduled(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// expectUnschedulable waits for the pod's PodScheduled=False condition
// and FailedScheduling event, both with message.
func (c *cluster) expectUnschedulable(name, message string) {
	c.t.Helper()
	p := c.waitUnschedulable(name)
	if got := podScheduled(p).Message; got != message {
		c.t.Errorf("PodScheduled message:\n got %q\nwant %q", got, message)
	}
	if p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending {
		c.t.Errorf("pod is %s on %q, want Pending and unassigned", p.Status.Phase, p.Spec.NodeName)
	}
	e := c.waitEvent(name, "FailedScheduling", message)
	if e.Type != corev1.EventTypeWarning || e.Source.Component != "default-scheduler" {
		c.t.Errorf("event is %s from %q, want Warning from default-scheduler", e.Type, e.Source.Component)
	}
}

func TestPodsSpreadOverThreeNodes(t *testing.T) {
	c := newCluster(t)
	c.nodes(3, nodeSpec{cpu: "4", memory: "8Gi"})
	for i := range 6 {
		c.pod(webPod(fmt.Sprintf("web-%d", i), "100m"))
	}
	perNode := map[string]int{}
	for i := range 6 {
		name := fmt.Sprintf("web-%d", i)
		p := c.waitBound(name)
		perNode[p.Spec.NodeName]++
		if cond := podScheduled(p); cond == nil || cond.Status != corev1.ConditionTrue {
			t.Errorf("%s: PodScheduled = %+v, want True", name, cond)
		}
		e := c.waitEvent(name, "Scheduled", fmt.Sprintf("Successfully assigned demo/%s to %s", name, p.Spec.NodeName))
		if e.Type != corev1.EventTypeNormal || e.Source.Component != "default-scheduler" {
			t.Errorf("%s: Scheduled event is %s from %q, want Normal from default-scheduler", name, e.Type, e.Source.Component)
		}
	}
	for i := 1; i <= 3; i++ {
		if n := perNode[fmt.Sprintf("minik-node-%d", i)]; n != 2 {
			t.Errorf("pods per node = %v, want 2 on each of the 3 nodes", perNode)
			break
		}
	}
}

func TestInsufficientCPULeavesThePodPending(t *testing.T) {
	c := newCluster(t)
	c.nodes(3, nodeSpec{cpu: "2"})
	// Fill each node to 1500m: least-allocated scoring puts one per node.
	for i := range 3 {
		c.pod(webPod(fmt.Sprintf("busy-%d", i), "1500m"))
		c.waitBound(fmt.Sprintf("busy-%d", i))
	}
	c.pod(webPod("web-x", "1"))
	c.expectUnschedulable("web-x",
		"0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.")
}

func TestUntoleratedTaintLeavesThePodPending(t *testing.T) {
	c := newCluster(t)
	c.node(nodeSpec{name: "minik-control-plane", taints: []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}})
	c.nodes(2, nodeSpec{taints: []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}})
	c.pod(webPod("web-x", "100m"))
	c.expectUnschedulable("web-x",
		"0/3 nodes are available: 3 node(s) had untolerated taint(s). preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")

	tolerating := webPod("gpu-job", "100m")
	tolerating.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	c.pod(tolerating)
	if p := c.waitBound("gpu-job"); p.Spec.NodeName == "minik-control-plane" {
		t.Errorf("a pod tolerating dedicated=gpu went to the control plane")
	}
}

func TestUnsatisfiableNodeAffinityLeavesThePodPending(t *testing.T) {
	c := newCluster(t)
	c.nodes(3, nodeSpec{labels: map[string]string{corev1.LabelTopologyZone: "zone-a"}})
	p := webPod("web-x", "100m")
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-b"}}},
		}}},
	}}
	c.pod(p)
	c.expectUnschedulable("web-x",
		"0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
}

func TestNodeSelectorPicksTheLabelledNode(t *testing.T) {
	c := newCluster(t)
	c.nodes(3, nodeSpec{})
	if _, err := c.cs.CoreV1().Nodes().Patch(context.Background(), "minik-node-2", "application/merge-patch+json",
		[]byte(`{"metadata":{"labels":{"disktype":"ssd"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		p := webPod(fmt.Sprintf("db-%d", i), "100m")
		p.Spec.NodeSelector = map[string]string{"disktype": "ssd"}
		c.pod(p)
	}
	for i := range 3 {
		if p := c.waitBound(fmt.Sprintf("db-%d", i)); p.Spec.NodeName != "minik-node-2" {
			t.Errorf("db-%d went to %s, want minik-node-2 (disktype=ssd)", i, p.Spec.NodeName)
		}
	}
	p := webPod("db-hdd", "100m")
	p.Spec.NodeSelector = map[string]string{"disktype": "hdd"}
	c.pod(p)
	c.expectUnschedulable("db-hdd",
		"0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
}

func TestPodAntiAffinityByHostnameKeepsReplicasApart(t *testing.T) {
	c := newCluster(t)
	c.nodes(3, nodeSpec{})
	for i := range 4 {
		p := webPod(fmt.Sprintf("web-%d", i), "100m")
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				TopologyKey:   corev1.LabelHostname,
			}},
		}}
		c.pod(p)
	}
	// Three fit, one per node; which three depends on the order the
	// scheduler takes them in.
	ctx := context.Background()
	seen := map[string]string{}
	var pending string
	for i := range 4 {
		name := fmt.Sprintf("web-%d", i)
		p := c.waitPod(name, "bound or unschedulable", func(p *corev1.Pod) bool {
			cond := podScheduled(p)
			return p.Spec.NodeName != "" || (cond != nil && cond.Status == corev1.ConditionFalse)
		})
		if p.Spec.NodeName == "" {
			pending = name
			continue
		}
		if other, dup := seen[p.Spec.NodeName]; dup {
			t.Errorf("%s and %s both on %s", other, name, p.Spec.NodeName)
		}
		seen[p.Spec.NodeName] = name
	}
	if len(seen) != 3 || pending == "" {
		t.Fatalf("bound %v, pending %q; want 3 bound on distinct nodes and 1 pending", seen, pending)
	}
	c.expectUnschedulable(pending,
		"0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.")

	// Deleting a replica frees its node for the pending one.
	var freed string
	for node, name := range seen {
		freed = node
		if err := c.cs.CoreV1().Pods("demo").Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
		break
	}
	if p := c.waitBound(pending); p.Spec.NodeName != freed {
		t.Errorf("%s went to %s, want %s (the freed node)", pending, p.Spec.NodeName, freed)
	}
}

func TestPendingPodIsScheduledWhenAFittingNodeAppears(t *testing.T) {
	c := newCluster(t)
	c.nodes(2, nodeSpec{cpu: "2"})
	c.pod(webPod("big", "8"))
	c.expectUnschedulable("big",
		"0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")

	c.node(nodeSpec{name: "minik-node-big", cpu: "16", memory: "32Gi"})
	p := c.waitBound("big")
	if p.Spec.NodeName != "minik-node-big" {
		t.Errorf("big went to %s, want minik-node-big", p.Spec.NodeName)
	}
	if cond := podScheduled(p); cond == nil || cond.Status != corev1.ConditionTrue {
		t.Errorf("PodScheduled = %+v, want True after binding", cond)
	}
	c.waitEvent("big", "Scheduled", "Successfully assigned demo/big to minik-node-big")
}

func TestPendingPodIsScheduledWhenAPodGoesAway(t *testing.T) {
	c := newCluster(t)
	c.nodes(1, nodeSpec{cpu: "2"})
	c.pod(webPod("first", "1500m"))
	c.waitBound("first")
	c.pod(webPod("second", "1"))
	c.expectUnschedulable("second",
		"0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")
	if err := c.cs.CoreV1().Pods("demo").Delete(context.Background(), "first", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	if p := c.waitBound("second"); p.Spec.NodeName != "minik-node-1" {
		t.Errorf("second went to %s, want minik-node-1", p.Spec.NodeName)
	}
}

func TestNoNodesLeavesThePodPending(t *testing.T) {
	c := newCluster(t)
	c.pod(webPod("lonely", ""))
	c.expectUnschedulable("lonely", "no nodes available to schedule pods")
}

func TestPodsForOtherSchedulersAreLeftAlone(t *testing.T) {
	c := newCluster(t)
	c.nodes(1, nodeSpec{})
	other := webPod("custom", "")
	other.Spec.SchedulerName = "my-scheduler"
	c.pod(other)
	c.pod(webPod("mine", ""))
	c.waitBound("mine")
	// The default scheduler has seen and scheduled a pod created after the
	// custom one: had it taken the custom pod, it would be bound by now.
	p, err := c.cs.CoreV1().Pods("demo").Get(context.Background(), "custom", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName != "" || podScheduled(p) != nil {
		t.Errorf("a pod for my-scheduler was touched: nodeName=%q conditions=%+v", p.Spec.NodeName, p.Status.Conditions)
	}
}
