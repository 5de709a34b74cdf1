// Package tainteviction is kube's taint-eviction-controller (the "taint
// manager", run apart from node lifecycle since kube 1.29): it deletes the
// pods bound to a node tainted NoExecute unless they tolerate the taints.
//
// A pod that does not tolerate every NoExecute taint of its node is
// deleted at once. A pod that tolerates them all, some for a bounded
// tolerationSeconds, is deleted when the first of those runs out, counted
// from its taint's timeAdded (or, for a taint without one, from when the
// controller first saw the pod tainted). Tolerations without
// tolerationSeconds keep the pod forever. A scheduled deletion is dropped,
// with the event "Cancelling deletion of Pod NS/NAME", when the taint goes
// or the pod comes to tolerate it forever; it is dropped silently when the
// pod goes away.
//
// Before deleting, the controller sets the pod condition DisruptionTarget
// (reason DeletionByTaintManager) through pods/status and records the
// event TaintManagerEviction, as kube does. The pod is deleted with its
// own grace period; its ReplicaSet replaces it, and the scheduler places
// the replacement on a node without the taint.
//
// Timed deletions are the workqueue's: a pod whose toleration runs out
// later is requeued for that moment (controllers.RequeueAfter), and its
// reconcile decides afresh from the informers' state then.
package tainteviction

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
	"minik/internal/podutil"
)

// Name is the controller's name in --controllers, and the component its
// events report as.
const Name = "taint-eviction-controller"

// Event reasons and the condition kube's taint manager writes.
const (
	// ReasonTaintManagerEviction is the reason of the events marking a pod
	// for deletion ("Marking for deletion Pod NS/NAME") and cancelling that
	// ("Cancelling deletion of Pod NS/NAME").
	ReasonTaintManagerEviction = "TaintManagerEviction"
	// ReasonDeletionByTaintManager is the reason of the DisruptionTarget
	// condition set on a pod before it is deleted.
	ReasonDeletionByTaintManager = "DeletionByTaintManager"
	// MessageDeletionByTaintManager is that condition's message.
	MessageDeletionByTaintManager = "Taint manager: deleting due to NoExecute taint"

	markForDeletionForm = "Marking for deletion Pod %s"
	cancelDeletionForm  = "Cancelling deletion of Pod %s"

	// nodeNameIndex indexes pods by spec.nodeName.
	nodeNameIndex = "tainteviction.nodeName"
)

// scheduled is a deletion waiting for a toleration to run out.
type scheduled struct {
	uid types.UID
	// since is when the controller first saw the pod on a node whose
	// taints it tolerates for a while: the start for taints without
	// timeAdded.
	since time.Time
}

// Controller is the taint eviction controller.
type Controller struct {
	client   kubernetes.Interface
	clock    clock.WithTicker
	log      *slog.Logger
	recorder record.EventRecorder

	pods        corelisters.PodLister
	podsSynced  cache.InformerSynced
	podIndexer  cache.Indexer
	nodes       corelisters.NodeLister
	nodesSynced cache.InformerSynced

	mu        sync.Mutex
	scheduled map[types.NamespacedName]scheduled

	queue workqueue.TypedRateLimitingInterface[types.NamespacedName]
}

// New builds the controller on cc's shared Pod and Node informers. It
// implements controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	return NewController(cc)
}

// NewController is New with the concrete type.
func NewController(cc *controllers.Context) (*Controller, error) {
	c := &Controller{
		client: cc.Client, clock: cc.Clock, log: cc.Logger, scheduled: map[types.NamespacedName]scheduled{},
	}
	if c.clock == nil {
		c.clock = clock.RealClock{}
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if cc.Recorder != nil {
		c.recorder = cc.Recorder(Name)
	}
	c.queue = controllers.NewQueue(Name, c.clock, workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](5*time.Millisecond, 30*time.Second))

	pods := cc.Informers.Core().V1().Pods()
	podInformer := pods.Informer()
	if _, ok := podInformer.GetIndexer().GetIndexers()[nodeNameIndex]; !ok {
		if err := podInformer.AddIndexers(cache.Indexers{nodeNameIndex: indexByNodeName}); err != nil {
			return nil, fmt.Errorf("taint eviction controller: index pods by node: %w", err)
		}
	}
	if _, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueuePod,
		UpdateFunc: c.updatePod,
		DeleteFunc: func(obj any) {
			if p, ok := controllers.Deleted[*corev1.Pod](obj); ok {
				c.queue.Add(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("taint eviction controller: watch pods: %w", err)
	}
	nodes := cc.Informers.Core().V1().Nodes()
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if n, ok := obj.(*corev1.Node); ok && len(noExecute(n.Spec.Taints)) > 0 {
				c.enqueueNodePods(n.Name)
			}
		},
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*corev1.Node)
			n, ok2 := cur.(*corev1.Node)
			if ok1 && ok2 && !apiequality.Semantic.DeepEqual(noExecute(o.Spec.Taints), noExecute(n.Spec.Taints)) {
				c.enqueueNodePods(n.Name)
			}
		},
		DeleteFunc: func(obj any) {
			if n, ok := controllers.Deleted[*corev1.Node](obj); ok {
				c.enqueueNodePods(n.Name)
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("taint eviction controller: watch nodes: %w", err)
	}
	c.pods, c.podsSynced, c.podIndexer = pods.Lister(), podInformer.HasSynced, podInformer.GetIndexer()
	c.nodes, c.nodesSynced = nodes.Lister(), nodes.Informer().HasSynced
	return c, nil
}

func indexByNodeName(obj any) ([]string, error) {
	if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
		return []string{p.Spec.NodeName}, nil
	}
	return nil, nil
}

func (c *Controller) enqueuePod(obj any) {
	if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
		c.queue.Add(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
	}
}

// updatePod enqueues a pod whose binding or tolerations changed: status
// updates, the bulk of pod writes, change nothing here.
func (c *Controller) updatePod(old, cur any) {
	o, ok1 := old.(*corev1.Pod)
	p, ok2 := cur.(*corev1.Pod)
	if !ok1 || !ok2 {
		return
	}
	if o.UID == p.UID && o.Spec.NodeName == p.Spec.NodeName &&
		apiequality.Semantic.DeepEqual(o.Spec.Tolerations, p.Spec.Tolerations) {
		return
	}
	c.queue.Add(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
}

// enqueueNodePods enqueues every pod bound to the node.
func (c *Controller) enqueueNodePods(node string) {
	objs, err := c.podIndexer.ByIndex(nodeNameIndex, node)
	if err != nil {
		c.log.Error("list pods of node", "node", node, "err", err)
		return
	}
	for _, obj := range objs {
		if p, ok := obj.(*corev1.Pod); ok {
			c.queue.Add(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
		}
	}
}

// Run reconciles until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllers.Workers[types.NamespacedName]{
		Synced:    []cache.InformerSynced{c.podsSynced, c.nodesSynced},
		Queue:     c.queue,
		Reconcile: c.sync,
		OnError: func(key types.NamespacedName, err error) {
			c.log.Warn("taint eviction failed, retrying", "pod", key.String(), "err", err)
		},
	}.Run(ctx, workers)
}

// sync decides the fate of one pod from its node's NoExecute taints: no
// deletion, a deletion now, or one later (a RequeueAfter for that moment).
func (c *Controller) sync(ctx context.Context, key types.NamespacedName) error {
	pod, err := c.pods.Pods(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		c.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil {
		c.forget(key)
		return nil
	}
	var taints []corev1.Taint
	switch node, err := c.nodes.Get(pod.Spec.NodeName); {
	case err == nil:
		taints = noExecute(node.Spec.Taints)
	case !apierrors.IsNotFound(err):
		return err
	}
	now := c.clock.Now()
	c.mu.Lock()
	s, ok := c.scheduled[key]
	if !ok || s.uid != pod.UID {
		s = scheduled{uid: pod.UID, since: now}
	}
	c.mu.Unlock()
	at, forever := evictionTime(taints, pod.Spec.Tolerations, s.since)
	if forever {
		c.cancel(pod)
		return nil
	}
	if at.After(now) {
		c.mu.Lock()
		c.scheduled[key] = s
		c.mu.Unlock()
		return &controllers.RequeueAfter{Delay: at.Sub(now)}
	}
	if err := c.evict(ctx, pod); err != nil {
		return err
	}
	c.forget(key)
	return nil
}

// evictionTime is when a pod with tolerations must leave a node with the
// NoExecute taints, or forever when it may stay. Each taint is matched
// with the first toleration that tolerates it, as kube matches them: a
// taint no toleration tolerates, or one tolerated for zero seconds or
// less, means now (the zero time); one tolerated for n seconds means n
// seconds after its timeAdded (since, when it has none); one tolerated
// without tolerationSeconds, never. The earliest deadline wins.
func evictionTime(taints []corev1.Taint, tolerations []corev1.Toleration, since time.Time) (at time.Time, forever bool) {
	forever = true
	for i := range taints {
		t := &taints[i]
		tol := matchingToleration(tolerations, t)
		if tol == nil {
			return time.Time{}, false
		}
		if tol.TolerationSeconds == nil {
			continue
		}
		if *tol.TolerationSeconds <= 0 {
			return time.Time{}, false
		}
		start := since
		if t.TimeAdded != nil {
			start = t.TimeAdded.Time
		}
		deadline := start.Add(time.Duration(*tol.TolerationSeconds) * time.Second)
		if forever || deadline.Before(at) {
			at, forever = deadline, false
		}
	}
	return at, forever
}

// matchingToleration is the first toleration that tolerates the taint, or
// nil. Lt and Gt compare values as integers, as the scheduler does (kube's
// getMatchingTolerations, one toleration at a time: the first one decides
// the taint's tolerationSeconds).
func matchingToleration(tolerations []corev1.Toleration, taint *corev1.Taint) *corev1.Toleration {
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(logr.Discard(), taint, podutil.TolerationComparisonOperators) {
			return &tolerations[i]
		}
	}
	return nil
}

// noExecute returns the NoExecute taints.
func noExecute(taints []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// forget drops a scheduled deletion silently.
func (c *Controller) forget(key types.NamespacedName) {
	c.mu.Lock()
	delete(c.scheduled, key)
	c.mu.Unlock()
}

// cancel drops the pod's scheduled deletion, if it has one, telling so in
// an event.
func (c *Controller) cancel(pod *corev1.Pod) {
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	c.mu.Lock()
	_, had := c.scheduled[key]
	delete(c.scheduled, key)
	c.mu.Unlock()
	if !had {
		return
	}
	c.log.Info("cancelling deletion of pod", "pod", key.String(), "node", pod.Spec.NodeName)
	if c.recorder != nil {
		c.recorder.Eventf(pod, corev1.EventTypeNormal, ReasonTaintManagerEviction, cancelDeletionForm, key.String())
	}
}

// evict marks the pod as a disruption target and deletes it. A pod that
// is gone, replaced (another UID) or already being deleted is left alone.
func (c *Controller) evict(ctx context.Context, pod *corev1.Pod) error {
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	podsAPI := c.client.CoreV1().Pods(pod.Namespace)
	cur, err := podsAPI.Get(ctx, pod.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get pod %s: %w", key, err)
	}
	if cur.UID != pod.UID || cur.DeletionTimestamp != nil {
		return nil
	}
	c.log.Info("deleting pod", "pod", key.String(), "node", cur.Spec.NodeName)
	if c.recorder != nil {
		c.recorder.Eventf(cur, corev1.EventTypeNormal, ReasonTaintManagerEviction, markForDeletionForm, key.String())
	}
	if patch, err := disruptionPatch(cur, metav1.NewTime(c.clock.Now())); err != nil {
		return err
	} else if patch != nil {
		if _, err := podsAPI.Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("mark pod %s as a disruption target: %w", key, err)
		}
	}
	err = podsAPI.Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(pod.UID))})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete pod %s: %w", key, err)
	}
	return nil
}

// disruptionPatch is the strategic merge patch of a pod's status that sets
// its DisruptionTarget condition (conditions merge by type), or nil when
// the condition is set already. The transition time moves only when the
// status does, as kube's UpdatePodCondition has it.
func disruptionPatch(pod *corev1.Pod, now metav1.Time) ([]byte, error) {
	for _, c := range pod.Status.Conditions {
		if c.Type != corev1.DisruptionTarget {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			if c.Reason == ReasonDeletionByTaintManager && c.Message == MessageDeletionByTaintManager {
				return nil, nil
			}
			now = c.LastTransitionTime
		}
	}
	cond := map[string]any{
		"type": corev1.DisruptionTarget, "status": corev1.ConditionTrue,
		"reason": ReasonDeletionByTaintManager, "message": MessageDeletionByTaintManager,
		"lastTransitionTime": now,
	}
	return json.Marshal(map[string]any{"status": map[string]any{"conditions": []any{cond}}})
}
