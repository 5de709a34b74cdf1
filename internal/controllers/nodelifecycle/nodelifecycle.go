// Package nodelifecycle is the heartbeat half of kube's node lifecycle
// controller. A node whose kubelet stops renewing its Lease in
// kube-node-lease (and posting its status) for the grace period
// (--node-monitor-grace-period, 40s) gets its kubelet conditions (Ready,
// MemoryPressure, DiskPressure, PIDPressure) set to Unknown, "Kubelet
// stopped posting node status.", and the taints
// node.kubernetes.io/unreachable:NoExecute and :NoSchedule; a node that
// posts Ready=False gets node.kubernetes.io/not-ready instead. The pods on
// a node gone Unknown are marked not Ready, so that their endpoints stop
// receiving traffic. When the kubelet is back and posts Ready, the taints
// go. An unschedulable node (spec.unschedulable) is tainted
// node.kubernetes.io/unschedulable:NoSchedule, as kube's taint-by-condition
// does.
//
// Deleting the pods of a node tainted NoExecute once their toleration runs
// out is the taint-eviction-controller's job (package tainteviction).
package nodelifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	coordlisters "k8s.io/client-go/listers/coordination/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
)

// Name is the controller's name in --controllers.
const Name = "nodelifecycle"

// Event reasons and condition wording.
const (
	ReasonNodeNotReady    = "NodeNotReady"
	ReasonStatusUnknown   = "NodeStatusUnknown"
	MessageStatusUnknown  = "Kubelet stopped posting node status."
	ReasonNeverUpdated    = "NodeStatusNeverUpdated"
	MessageNeverUpdated   = "Kubelet never posted node status."
	defaultGracePeriod    = 40 * time.Second
	defaultMonitorPeriod  = 5 * time.Second
	leaseNamespace        = corev1.NamespaceNodeLease
	podNotReadyEventMsg   = "Node is not ready"
	nodeNotReadyEventForm = "Node %s status is now: NodeNotReady"
)

// kubeletConditions are the conditions the kubelet posts, set Unknown
// when it stops.
var kubeletConditions = []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure}

// Config tunes the controller.
type Config struct {
	// GracePeriod is how long a node may go without a heartbeat before it
	// is Unknown; zero means 40s.
	GracePeriod time.Duration
	// MonitorPeriod is how often every node is checked; zero means 5s.
	MonitorPeriod time.Duration
}

// health is what the controller observed of a node's heartbeats: when it
// last saw one change (its own clock, as kube does, so that clock skew
// does not matter).
type health struct {
	probe     time.Time
	renew     metav1.MicroTime
	heartbeat metav1.Time
}

// Controller is the node lifecycle controller.
type Controller struct {
	cfg      Config
	client   kubernetes.Interface
	clock    clock.WithTicker
	log      *slog.Logger
	recorder record.EventRecorder

	nodes       corelisters.NodeLister
	nodesSynced cache.InformerSynced
	leases      coordlisters.LeaseLister
	leaseSynced cache.InformerSynced
	pods        corelisters.PodLister
	podsSynced  cache.InformerSynced

	mu     sync.Mutex
	health map[string]*health

	queue workqueue.TypedRateLimitingInterface[string]
}

// New builds the controller with kube's defaults. It implements
// controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	return NewWithConfig(cc, Config{})
}

// NewWithConfig builds the controller on cc's shared Node, Lease and Pod
// informers.
func NewWithConfig(cc *controllers.Context, cfg Config) (*Controller, error) {
	if cfg.GracePeriod <= 0 {
		cfg.GracePeriod = defaultGracePeriod
	}
	if cfg.MonitorPeriod <= 0 {
		cfg.MonitorPeriod = defaultMonitorPeriod
	}
	c := &Controller{
		cfg: cfg, client: cc.Client, clock: cc.Clock, log: cc.Logger, health: map[string]*health{},
		queue: controllers.NewQueue(Name, cc.Clock, workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 30*time.Second)),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.clock == nil {
		c.clock = clock.RealClock{}
	}
	if cc.Recorder != nil {
		c.recorder = cc.Recorder("node-controller")
	}
	nodes := cc.Informers.Core().V1().Nodes()
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueNode,
		UpdateFunc: func(_, obj any) { c.enqueueNode(obj) },
		DeleteFunc: c.forgetNode,
	}); err != nil {
		return nil, fmt.Errorf("node lifecycle controller: watch nodes: %w", err)
	}
	leases := cc.Informers.Coordination().V1().Leases()
	if _, err := leases.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueLease,
		UpdateFunc: func(_, obj any) { c.enqueueLease(obj) },
	}); err != nil {
		return nil, fmt.Errorf("node lifecycle controller: watch leases: %w", err)
	}
	pods := cc.Informers.Core().V1().Pods()
	c.nodes, c.nodesSynced = nodes.Lister(), nodes.Informer().HasSynced
	c.leases, c.leaseSynced = leases.Lister(), leases.Informer().HasSynced
	c.pods, c.podsSynced = pods.Lister(), pods.Informer().HasSynced
	return c, nil
}

func (c *Controller) enqueueNode(obj any) {
	if n, ok := obj.(*corev1.Node); ok {
		c.queue.Add(n.Name)
	}
}

func (c *Controller) enqueueLease(obj any) {
	if l, ok := obj.(*coordinationv1.Lease); ok && l.Namespace == leaseNamespace {
		c.queue.Add(l.Name)
	}
}

func (c *Controller) forgetNode(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if n, ok := obj.(*corev1.Node); ok {
		c.mu.Lock()
		delete(c.health, n.Name)
		c.mu.Unlock()
	}
}

// Run checks every node each monitor period, and a node whenever it or its
// Lease changes, until ctx is done. One worker is enough: a check is a
// few comparisons, and writes happen only on transitions.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer c.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), c.nodesSynced, c.leaseSynced, c.podsSynced) {
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		controllers.Workers[string]{
			Queue:     c.queue,
			Reconcile: c.sync,
			OnError: func(name string, err error) {
				c.log.Warn("node health check failed, retrying", "node", name, "err", err)
			},
		}.Run(ctx, min(workers, 2))
	}()
	tick := c.clock.NewTicker(c.cfg.MonitorPeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-tick.C():
			nodes, err := c.nodes.List(labels.Everything())
			if err != nil {
				continue
			}
			for _, n := range nodes {
				c.queue.Add(n.Name)
			}
		}
	}
}

func (c *Controller) sync(ctx context.Context, name string) error {
	node, err := c.nodes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	now := c.clock.Now()
	c.mu.Lock()
	h := c.health[name]
	if h == nil {
		// A node met for the first time (or after a restart of the
		// controller) has the whole grace period from now.
		h = &health{probe: now}
		c.health[name] = h
	}
	if lease, err := c.leases.Leases(leaseNamespace).Get(name); err == nil && lease.Spec.RenewTime != nil && !lease.Spec.RenewTime.Equal(&h.renew) {
		h.renew, h.probe = *lease.Spec.RenewTime, now
	}
	if ready := condition(node, corev1.NodeReady); ready != nil && !ready.LastHeartbeatTime.Equal(&h.heartbeat) {
		if !h.heartbeat.IsZero() {
			h.probe = now
		}
		h.heartbeat = ready.LastHeartbeatTime
	}
	lapsed := now.Sub(h.probe) > c.cfg.GracePeriod
	c.mu.Unlock()

	if lapsed {
		if err := c.markUnknown(ctx, node, now); err != nil {
			return err
		}
		if node, err = c.nodes.Get(name); err != nil {
			return nil
		}
	} else {
		// Check again when the grace period would end.
		c.queue.AddAfter(name, c.cfg.GracePeriod-now.Sub(h.probe)+time.Millisecond)
	}
	return c.reconcileTaints(ctx, node, now)
}

func condition(n *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// markUnknown sets the kubelet's conditions to Unknown, once, and marks
// the node's pods not Ready.
func (c *Controller) markUnknown(ctx context.Context, node *corev1.Node, now time.Time) error {
	if r := condition(node, corev1.NodeReady); r != nil && r.Status == corev1.ConditionUnknown {
		return nil
	}
	upd := node.DeepCopy()
	ts := metav1.NewTime(now)
	for _, t := range kubeletConditions {
		cur := condition(upd, t)
		switch {
		case cur == nil:
			upd.Status.Conditions = append(upd.Status.Conditions, corev1.NodeCondition{
				Type: t, Status: corev1.ConditionUnknown, Reason: ReasonNeverUpdated, Message: MessageNeverUpdated,
				LastHeartbeatTime: node.CreationTimestamp, LastTransitionTime: ts,
			})
		case cur.Status != corev1.ConditionUnknown:
			cur.Status, cur.Reason, cur.Message, cur.LastTransitionTime = corev1.ConditionUnknown, ReasonStatusUnknown, MessageStatusUnknown, ts
		}
	}
	if _, err := c.client.CoreV1().Nodes().UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("mark node %s unknown: %w", node.Name, err)
	}
	c.log.Info("node stopped posting status", "node", node.Name, "grace", c.cfg.GracePeriod)
	if c.recorder != nil {
		ref := &corev1.ObjectReference{Kind: "Node", Name: node.Name, UID: node.UID}
		c.recorder.Eventf(ref, corev1.EventTypeNormal, ReasonNodeNotReady, nodeNotReadyEventForm, node.Name)
	}
	return c.markPodsNotReady(ctx, node.Name)
}

// markPodsNotReady sets the Ready condition of the node's pods to False,
// as kube's MarkPodsNotReady does.
func (c *Controller) markPodsNotReady(ctx context.Context, nodeName string) error {
	pods, err := c.pods.List(labels.Everything())
	if err != nil {
		return err
	}
	for _, p := range pods {
		if p.Spec.NodeName != nodeName || p.DeletionTimestamp != nil {
			continue
		}
		i := slices.IndexFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.PodReady })
		if i < 0 || p.Status.Conditions[i].Status == corev1.ConditionFalse {
			continue
		}
		upd := p.DeepCopy()
		upd.Status.Conditions[i].Status = corev1.ConditionFalse
		upd.Status.Conditions[i].LastTransitionTime = metav1.NewTime(c.clock.Now())
		if _, err := c.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("mark pod %s/%s not ready: %w", p.Namespace, p.Name, err)
		}
		if c.recorder != nil {
			c.recorder.Event(upd, corev1.EventTypeWarning, ReasonNodeNotReady, podNotReadyEventMsg)
		}
	}
	return nil
}

// wantTaints are the controller's taints a node should carry, by its
// Ready condition and spec.unschedulable.
func wantTaints(node *corev1.Node, now time.Time) []corev1.Taint {
	var out []corev1.Taint
	ts := metav1.NewTime(now)
	if r := condition(node, corev1.NodeReady); r != nil {
		switch r.Status {
		case corev1.ConditionUnknown:
			out = append(out,
				corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
				corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &ts})
		case corev1.ConditionFalse:
			out = append(out,
				corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
				corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute, TimeAdded: &ts})
		}
	}
	if node.Spec.Unschedulable {
		out = append(out, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
	}
	return out
}

// managed tells whether a taint is one this controller owns.
func managed(t corev1.Taint) bool {
	switch t.Key {
	case corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady:
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	case corev1.TaintNodeUnschedulable:
		return t.Effect == corev1.TaintEffectNoSchedule
	}
	return false
}

// taintsFor is the node's taints with the controller's made right:
// everyone else's kept, the time a taint was first added kept. changed
// tells whether they differ from the node's.
func taintsFor(node *corev1.Node, now time.Time) ([]corev1.Taint, bool) {
	var taints []corev1.Taint
	for _, t := range node.Spec.Taints {
		if !managed(t) {
			taints = append(taints, t)
		}
	}
	for _, w := range wantTaints(node, now) {
		if i := slices.IndexFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == w.Key && t.Effect == w.Effect }); i >= 0 {
			w = node.Spec.Taints[i]
		}
		taints = append(taints, w)
	}
	if len(taints) == len(node.Spec.Taints) {
		same := true
		for _, t := range taints {
			if !slices.ContainsFunc(node.Spec.Taints, func(o corev1.Taint) bool { return apiequality.Semantic.DeepEqual(o, t) }) {
				same = false
			}
		}
		if same {
			return node.Spec.Taints, false
		}
	}
	return taints, true
}

// reconcileTaints adds and removes the controller's taints, retrying on
// conflicts with a fresh copy of the node.
func (c *Controller) reconcileTaints(ctx context.Context, node *corev1.Node, now time.Time) error {
	if _, changed := taintsFor(node, now); !changed {
		return nil
	}
	return wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		cur, err := c.client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("taint node %s: %w", node.Name, err)
		}
		taints, changed := taintsFor(cur, now)
		if !changed {
			return true, nil
		}
		upd := cur.DeepCopy()
		upd.Spec.Taints = taints
		if _, err := c.client.CoreV1().Nodes().Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
			if apierrors.IsConflict(err) {
				return false, nil
			}
			return false, fmt.Errorf("taint node %s: %w", node.Name, err)
		}
		return true, nil
	})
}
