// Package scheduler is minik's default-scheduler: a client of the API
// server (user system:kube-scheduler) that assigns pending pods to nodes
// the way kube-scheduler's default profile does.
//
// Shared informers feed a cache of nodes and of the pods assigned to them
// (including pods the scheduler has assumed while their binding is in
// flight) and a queue of the pods it is responsible for: spec.nodeName
// empty, spec.schedulerName "default-scheduler", not terminating, no
// scheduling gates. One loop takes pods off the queue and runs kube's
// filters (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
// NodePorts, NodeResourcesFit, VolumeBinding, PodTopologySpread,
// InterPodAffinity, DynamicResources: claims.go) over the nodes, scores
// the feasible ones (least allocated, balanced, preferred taints and node
// affinity, spreading) and assumes the best; a few workers then bind
// through the pods/binding subresource and record the Scheduled event.
//
// A pod that fits nowhere may preempt pods of lower priority (see
// preemption.go): it is nominated to a node and the victims are evicted.
// Otherwise it gets the PodScheduled=False condition (reason
// Unschedulable) and a FailedScheduling event whose message has kube's
// shape ("0/3 nodes are available: 3 Insufficient cpu. preemption: ...").
// It is retried, after a back-off, when a node is added or changes, or an
// assigned pod goes away: never by polling.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"

	"minik/internal/leaderelect"
	"minik/internal/promstats"
)

// DefaultSchedulerName is the spec.schedulerName this scheduler serves.
const DefaultSchedulerName = corev1.DefaultSchedulerName

// Event reasons the scheduler records on pods.
const (
	EventScheduled        = "Scheduled"
	EventFailedScheduling = "FailedScheduling"
)

// noteLengthLimit bounds an event message, as kube's validation does.
const noteLengthLimit = 1024

// Config configures a Scheduler.
type Config struct {
	// RESTConfig is the API client configuration with the scheduler's
	// identity (system:kube-scheduler). Required.
	RESTConfig *rest.Config
	// SchedulerName is the spec.schedulerName served; empty means
	// "default-scheduler".
	SchedulerName string
	// BindWorkers is how many bindings (and status writes) run at once;
	// zero means 16. A binding is an API round trip, so a few in flight
	// keep the scheduling loop from waiting on the network.
	BindWorkers int
	// QPS and Burst bound each of the scheduler's two clients (one for
	// bindings and status, one for events); zero means 1000 and 2000: the
	// API server is local, and kube's default of 50 would cap throughput
	// at a few dozen pods a second.
	QPS   float32
	Burst int
	// InitialBackoff and MaxBackoff bound the back-off of a pod that could
	// not be scheduled; zero means 1s and 10s, as kube-scheduler.
	InitialBackoff, MaxBackoff time.Duration
	// MaxUnschedulable is how long a pod stays parked with no event before
	// it is tried again anyway; zero means 5 minutes.
	MaxUnschedulable time.Duration
	// LeaderElect runs the scheduler only while it holds the
	// kube-system/kube-scheduler Lease.
	LeaderElect bool
	// Identity names this scheduler in the Lease; empty means host name
	// and process id.
	Identity string
	// LeaderElection is the election's timing; zero fields mean kube's
	// defaults (15 s lease, 10 s renew deadline, 2 s retry period).
	LeaderElection leaderelect.Timing
	// Clock tells the time; nil means the real clock.
	Clock clock.WithTicker
	// Logger logs; nil means slog.Default().
	Logger *slog.Logger
}

// Scheduler assigns pending pods to nodes. Build it with New, run it with
// Start.
type Scheduler struct {
	cfg Config
	log *slog.Logger

	client   kubernetes.Interface
	recorder record.EventRecorder
	pods     corelisters.PodLister
	nsLister corelisters.NamespaceLister

	queue *queue
	// volumes reads claims, volumes and classes (see volumes.go).
	volumes *volumeBinder
	// claims reads resource claims, slices and device classes (see
	// claims.go).
	claims *claimAllocator

	// mu guards the cache and what the scheduling loop keeps between
	// attempts.
	mu        sync.Mutex
	cache     *cache
	scorer    scorer
	nextStart int
	feasible  []*nodeInfo

	// nominated maps pending pods to the node they are nominated to, and
	// nominatedOn the nodes to those pods (kube's nominator); guarded by
	// mu.
	nominated   map[types.UID]string
	nominatedOn map[string]map[types.UID]*podInfo
	// preempting holds the pods whose victims are being evicted; a pod
	// taken off the queue meanwhile is set aside (true) and queued again
	// when the eviction is over. Guarded by mu.
	preempting map[types.UID]bool

	tasks chan func(context.Context)
}

// New validates cfg, fills defaults and returns a Scheduler ready to Start.
func New(cfg Config) (*Scheduler, error) {
	if cfg.RESTConfig == nil {
		return nil, errors.New("scheduler: a REST config is required")
	}
	if cfg.SchedulerName == "" {
		cfg.SchedulerName = DefaultSchedulerName
	}
	if cfg.BindWorkers < 0 {
		return nil, fmt.Errorf("scheduler: bind workers %d: must not be negative", cfg.BindWorkers)
	}
	if cfg.BindWorkers == 0 {
		cfg.BindWorkers = 16
	}
	if cfg.QPS == 0 {
		cfg.QPS = 1000
	}
	if cfg.Burst == 0 {
		cfg.Burst = 2000
	}
	if cfg.InitialBackoff == 0 {
		cfg.InitialBackoff = time.Second
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 10 * time.Second
	}
	if cfg.MaxBackoff < cfg.InitialBackoff {
		return nil, fmt.Errorf("scheduler: max back-off %v is shorter than the initial back-off %v", cfg.MaxBackoff, cfg.InitialBackoff)
	}
	if cfg.MaxUnschedulable == 0 {
		cfg.MaxUnschedulable = 5 * time.Minute
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Identity == "" {
		host, _ := os.Hostname()
		cfg.Identity = fmt.Sprintf("%s_%d", host, os.Getpid())
	}
	return &Scheduler{cfg: cfg, log: cfg.Logger}, nil
}

// Start schedules until ctx is done (with leader election, while this
// scheduler leads). It returns once the scheduling loop and the bind
// workers have stopped; bindings in flight are abandoned with ctx.
func (s *Scheduler) Start(ctx context.Context) error {
	newClient := func(agent string) (kubernetes.Interface, error) {
		rc := rest.CopyConfig(s.cfg.RESTConfig)
		rc.QPS, rc.Burst = s.cfg.QPS, s.cfg.Burst
		rc.UserAgent = agent
		// As kube-scheduler: protobuf is cheaper than JSON to encode and
		// decode, on both sides, for every pod and node.
		rc.ContentType = "application/vnd.kubernetes.protobuf"
		rc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
		cs, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return nil, fmt.Errorf("scheduler: client: %w", err)
		}
		return cs, nil
	}
	cs, err := newClient("minik-scheduler")
	if err != nil {
		return err
	}
	events, err := newClient("minik-scheduler-events")
	if err != nil {
		return err
	}
	if !s.cfg.LeaderElect {
		return s.run(ctx, cs, events)
	}
	return leaderelect.Run(ctx, cs, "kube-scheduler", s.cfg.Identity, s.cfg.LeaderElection, s.log, func(ctx context.Context) error {
		return s.run(ctx, cs, events)
	})
}

// podSelector keeps finished pods out of the scheduler's view, as
// kube-scheduler's pod informer does: they hold no resources.
const podSelector = "status.phase!=" + string(corev1.PodSucceeded) + ",status.phase!=" + string(corev1.PodFailed)

func (s *Scheduler) run(ctx context.Context, cs, events kubernetes.Interface) error {
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: events.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	s.client = cs
	s.recorder = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: s.cfg.SchedulerName})
	s.queue = newQueue(s.cfg.Clock, s.cfg.InitialBackoff, s.cfg.MaxBackoff, s.cfg.MaxUnschedulable)
	s.tasks = make(chan func(context.Context), 4*s.cfg.BindWorkers)

	factory := informers.NewSharedInformerFactory(cs, 0)
	podFactory := informers.NewSharedInformerFactoryWithOptions(cs, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = podSelector }))
	nodeInformer := factory.Core().V1().Nodes().Informer()
	nsInformer := factory.Core().V1().Namespaces()
	podInformer := podFactory.Core().V1().Pods()
	s.pods = podInformer.Lister()
	s.nsLister = nsInformer.Lister()
	s.cache = newCache(s.namespaceLabels)
	s.nominated, s.nominatedOn, s.preempting = nil, nil, map[types.UID]bool{}
	for _, inf := range []toolscache.SharedIndexInformer{podInformer.Informer(), nodeInformer} {
		if err := inf.SetTransform(dropManagedFields); err != nil {
			return fmt.Errorf("scheduler: informer transform: %w", err)
		}
	}
	if _, err := nodeInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.onNode(obj) },
		UpdateFunc: func(_, obj any) { s.onNode(obj) },
		DeleteFunc: s.onNodeDelete,
	}); err != nil {
		return fmt.Errorf("scheduler: node handler: %w", err)
	}
	if _, err := podInformer.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.onPod(nil, obj) },
		UpdateFunc: s.onPod,
		DeleteFunc: s.onPodDelete,
	}); err != nil {
		return fmt.Errorf("scheduler: pod handler: %w", err)
	}
	nsInformer.Informer()
	if err := s.startVolumes(factory); err != nil {
		return err
	}
	if err := s.startClaims(ctx, factory); err != nil {
		return err
	}

	factory.Start(ctx.Done())
	podFactory.Start(ctx.Done())
	defer factory.Shutdown()
	defer podFactory.Shutdown()
	for _, f := range []informers.SharedInformerFactory{factory, podFactory} {
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok && ctx.Err() == nil {
				return fmt.Errorf("scheduler: informer for %v never synced", typ)
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	s.log.Info("scheduler started", "name", s.cfg.SchedulerName)

	var workers sync.WaitGroup
	for range s.cfg.BindWorkers {
		workers.Go(func() {
			for task := range s.tasks {
				task(ctx)
			}
		})
	}
	go s.queue.run(ctx)
	q := s.queue
	promstats.SetPendingPods(func() map[string]int {
		active, backoff, unschedulable := q.pending()
		return map[string]int{"active": active, "backoff": backoff, "unschedulable": unschedulable}
	})
	defer promstats.SetPendingPods(nil)
	for s.scheduleOne() {
	}
	close(s.tasks)
	workers.Wait()
	return nil
}

// dropManagedFields trims what the scheduler never reads from cached
// objects: with thousands of pods it is most of their size.
func dropManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

func (s *Scheduler) namespaceLabels(ns string) labels.Set {
	n, err := s.nsLister.Get(ns)
	if err != nil {
		return nil
	}
	return n.Labels
}

// responsible tells whether pod waits for this scheduler.
func (s *Scheduler) responsible(pod *corev1.Pod) bool {
	name := pod.Spec.SchedulerName
	if name == "" {
		name = DefaultSchedulerName
	}
	return pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil && name == s.cfg.SchedulerName &&
		len(pod.Spec.SchedulingGates) == 0
}

func (s *Scheduler) onNode(obj any) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	s.mu.Lock()
	matters := s.cache.setNode(node)
	s.mu.Unlock()
	if matters {
		s.queue.moveAll(0)
	}
}

func (s *Scheduler) onNodeDelete(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	s.mu.Lock()
	s.cache.removeNode(node.Name)
	s.mu.Unlock()
}

// The filters a change of assigned pods may satisfy: a pod placed (or
// relabelled) can satisfy affinity and even out spreading; a pod gone also
// frees resources and ports and lifts anti-affinity.
const (
	podAddedPlugins   = pluginInterPodAffinity | pluginPodTopologySpread
	podRemovedPlugins = pluginNodeResourcesFit | pluginNodePorts | pluginInterPodAffinity | pluginPodTopologySpread
)

// onPod handles an added (old nil) or updated pod: an assigned pod is
// accounted on its node (confirming an assumption); a pending one is
// queued if this scheduler is responsible for it.
func (s *Scheduler) onPod(oldObj, obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	old, _ := oldObj.(*corev1.Pod)
	if pod.Spec.NodeName != "" {
		s.mu.Lock()
		s.cache.addPod(pod)
		s.forgetNomination(pod)
		s.mu.Unlock()
		switch {
		case old == nil:
			s.queue.moveAll(podAddedPlugins)
		case old.Spec.NodeName == "":
			s.queue.remove(pod.UID)
			s.queue.moveAll(podAddedPlugins)
		case !labels.Equals(old.Labels, pod.Labels):
			s.queue.moveAll(podAddedPlugins)
		}
		return
	}
	responsible := s.responsible(pod)
	if pod.Status.NominatedNodeName != "" || (old != nil && old.Status.NominatedNodeName != "") {
		// Without a nomination in either version there is nothing to
		// follow: a nomination made here stands until the pod is bound or
		// deleted.
		s.mu.Lock()
		if responsible {
			s.updateNomination(old, pod)
		} else {
			s.forgetNomination(pod)
		}
		s.mu.Unlock()
	}
	if responsible {
		s.queue.add(pod)
	} else {
		s.queue.remove(pod.UID)
	}
}

// onPodDelete forgets a pod; a deleted assigned pod frees room, so pods
// rejected for resources, ports, spreading or anti-affinity are retried.
func (s *Scheduler) onPodDelete(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	s.queue.remove(pod.UID)
	s.mu.Lock()
	_, held := s.cache.pods[pod.UID]
	s.cache.removePod(pod.UID)
	s.forgetNomination(pod)
	s.mu.Unlock()
	if held {
		s.queue.moveAll(podRemovedPlugins)
	}
}

// numFeasibleNodesToFind is how many fitting nodes are enough to choose
// from, as kube-scheduler's adaptive percentageOfNodesToScore: all of a
// small cluster, 42% of 1,000 nodes, never fewer than 100.
func numFeasibleNodesToFind(n int) int {
	const minFeasible, minPercentage = 100, 5
	if n < minFeasible {
		return n
	}
	pct := max(50-n/125, minPercentage)
	return max(n*pct/100, minFeasible)
}

// attempt is the outcome of one scheduling attempt: a node, or why none
// (the condition's reason and the message).
type attempt struct {
	node    string
	diag    *diagnosis
	reason  string
	message string
	// preemption is the PostFilter's plan; nil leaves the pod's
	// nomination alone.
	preemption *preemptionPlan
	// claims is what binding the pod to node writes to its resource
	// claims; nil for a pod without any.
	claims *claimPlan
}

// scheduleOne takes one pod off the queue and schedules it. It returns
// false once the queue is closed.
func (s *Scheduler) scheduleOne() bool {
	pod, attempts, ok := s.queue.pop()
	if !ok {
		return false
	}
	s.mu.Lock()
	if _, held := s.cache.pods[pod.UID]; held {
		// Assumed already, or bound and not yet seen as such.
		s.mu.Unlock()
		s.queue.done(pod.UID)
		return true
	}
	if _, ok := s.preempting[pod.UID]; ok {
		// Its victims are still being evicted: it comes back after.
		s.preempting[pod.UID] = true
		s.mu.Unlock()
		s.queue.failed(pod.UID, 0)
		return true
	}
	pi := newPodInfo(pod)
	began := time.Now()
	a := s.findNode(pi)
	if a.node != "" {
		s.cache.assume(pi, a.node)
		s.forgetNomination(pod)
	}
	var nominate *string
	var victims, displaced []*corev1.Pod
	if p := a.preemption; p != nil {
		nominate = &p.node
		s.nominate(pi, p.node)
		if p.node != "" {
			for _, v := range p.victims {
				victims = append(victims, v.pod)
			}
			displaced = s.lowerNominated(p.node, pi)
			if s.preempting != nil {
				s.preempting[pod.UID] = false
			}
		}
	}
	s.mu.Unlock()
	if a.node != "" {
		s.queue.done(pod.UID)
		node, claims := a.node, a.claims
		s.tasks <- func(ctx context.Context) { s.bind(ctx, pod, node, claims, attempts, began) }
		return true
	}
	promstats.ScheduleAttempt("unschedulable", s.cfg.SchedulerName, time.Since(began))
	s.queue.failed(pod.UID, a.diag.plugins)
	reason, msg := a.reason, a.message
	if len(victims) == 0 {
		s.tasks <- func(ctx context.Context) { s.markUnschedulable(ctx, pod, reason, msg, nominate) }
		return true
	}
	// As kube's preemption: evict, then record the failure with the
	// nomination; the pod is retried once its victims are gone.
	promstats.PreemptionAttempt()
	s.tasks <- func(ctx context.Context) {
		s.preempt(ctx, pod, *nominate, victims, displaced)
		s.markUnschedulable(ctx, pod, reason, msg, nominate)
		s.mu.Lock()
		setAside := s.preempting[pod.UID]
		delete(s.preempting, pod.UID)
		s.mu.Unlock()
		if setAside {
			s.queue.activate(pod.UID)
		}
	}
	return true
}

// findNode runs the filters over the nodes and scores the feasible ones.
// The caller holds s.mu.
func (s *Scheduler) findNode(pi *podInfo) attempt {
	all := s.cache.list
	if len(all) == 0 {
		return attempt{diag: &diagnosis{}, reason: corev1.PodReasonUnschedulable, message: ReasonNoNodesAvailable}
	}
	if pi.invalidAffinity {
		// API validation keeps such selectors out; kube-scheduler reports
		// the PreFilter error the same way.
		return attempt{diag: &diagnosis{}, reason: corev1.PodReasonSchedulerError,
			message: fmt.Sprintf("pod %s/%s: invalid label selector in a pod affinity term", pi.pod.Namespace, pi.pod.Name)}
	}
	st := s.cache.preFilter(pi)
	d := &diagnosis{numAllNodes: len(all)}
	fail := func() attempt {
		post, plan := s.postFilter(st, d)
		return attempt{diag: d, reason: corev1.PodReasonUnschedulable, message: d.message(post), preemption: plan}
	}
	if pi.affinityConflict {
		d.preFilter, d.plugins = statusTermsConflict, pluginNodeAffinity
		return fail()
	}
	vols, rejected := s.volumes.preFilter(pi.pod)
	if rejected != nil {
		d.preFilter, d.plugins = rejected, pluginVolumeBinding
		return fail()
	}
	st.volumes = vols
	claims, rejected := s.claims.preFilter(pi.pod)
	if rejected != nil {
		d.preFilter, d.plugins = rejected, pluginDynamicResources
		return fail()
	}
	st.claims = claims
	nodes := all
	if pi.namesFromAffinity != nil {
		nodes = make([]*nodeInfo, 0, len(pi.namesFromAffinity))
		for _, name := range sets.List(pi.namesFromAffinity) {
			if n := s.cache.nodes[name]; n != nil && n.index >= 0 {
				nodes = append(nodes, n)
			}
		}
		d.absent, d.absentCount = statusNotPinned, len(all)-len(nodes)
		d.plugins |= pluginNodeAffinity
		if len(nodes) == 0 {
			return fail()
		}
	}
	want := numFeasibleNodesToFind(len(nodes))
	feasible := s.feasible[:0]
	start := s.nextStart % len(nodes)
	visited := 0
	for i := 0; i < len(nodes) && len(feasible) < want; i++ {
		n := nodes[(start+i)%len(nodes)]
		visited++
		if status := s.filterWithNominated(st, n); status != nil {
			d.add(n, status)
			continue
		}
		feasible = append(feasible, n)
	}
	s.nextStart = (s.nextStart + visited) % len(all)
	s.feasible = feasible
	if len(feasible) == 0 {
		return fail()
	}
	node := s.scorer.pick(st, feasible).name
	return attempt{node: node, claims: st.claims.reserve(node)}
}

// bind binds pod to node through the pods/binding subresource, once its
// volumes and resource claims are (PreBind), then records the Scheduled
// event. A failed binding forgets the assumption (and the claims'
// reservation) and queues the pod again after a back-off.
func (s *Scheduler) bind(ctx context.Context, pod *corev1.Pod, node string, claims *claimPlan, attempts int, began time.Time) {
	err := s.bindVolumes(ctx, pod, node)
	if err == nil {
		err = s.bindClaims(ctx, pod, claims)
	}
	if err == nil {
		err = s.client.CoreV1().Pods(pod.Namespace).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: node},
		}, metav1.CreateOptions{})
	}
	if err == nil {
		promstats.ScheduleAttempt("scheduled", s.cfg.SchedulerName, time.Since(began))
		s.recorder.Eventf(pod, corev1.EventTypeNormal, EventScheduled, "Successfully assigned %s/%s to %s", pod.Namespace, pod.Name, node)
		return
	}
	s.unreserve(ctx, pod, claims)
	s.mu.Lock()
	s.cache.forgetAssumed(pod.UID)
	s.mu.Unlock()
	s.queue.moveAll(podRemovedPlugins)
	if ctx.Err() != nil || apierrors.IsNotFound(err) {
		return
	}
	promstats.ScheduleAttempt("error", s.cfg.SchedulerName, time.Since(began))
	err = fmt.Errorf("bind pod %s/%s to node %s: %w", pod.Namespace, pod.Name, node, err)
	s.log.Error("binding failed", "pod", podKey(pod.Namespace, pod.Name), "err", err)
	cur, gerr := s.pods.Pods(pod.Namespace).Get(pod.Name)
	if gerr != nil || cur.UID != pod.UID || !s.responsible(cur) {
		return
	}
	s.queue.retry(cur, attempts)
	s.markUnschedulable(ctx, cur, corev1.PodReasonSchedulerError, err.Error(), nil)
}

// markUnschedulable records a FailedScheduling event and sets the
// PodScheduled=False condition with reason and message, and with nominate
// set, status.nominatedNodeName, unless the pod is gone, bound meanwhile,
// or already says so.
func (s *Scheduler) markUnschedulable(ctx context.Context, pod *corev1.Pod, reason, msg string, nominate *string) {
	s.recorder.Event(pod, corev1.EventTypeWarning, EventFailedScheduling, truncate(msg))
	tries := 0
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		// The informer's copy first; after a conflict, the API's.
		var cur *corev1.Pod
		var err error
		if tries == 0 {
			cur, err = s.pods.Pods(pod.Namespace).Get(pod.Name)
		}
		if tries > 0 || err != nil {
			cur, err = s.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		}
		tries++
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if cur.UID != pod.UID || cur.Spec.NodeName != "" {
			return nil
		}
		cond := corev1.PodCondition{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: reason, Message: msg,
			ObservedGeneration: cur.Generation,
		}
		next := cur.DeepCopy()
		changed := setCondition(&next.Status, cond, metav1.NewTime(s.cfg.Clock.Now()))
		if nominate != nil && next.Status.NominatedNodeName != *nominate {
			next.Status.NominatedNodeName = *nominate
			changed = true
		}
		if !changed {
			return nil
		}
		_, err = s.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
		return err
	})
	if err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) {
		s.log.Error("update pod condition", "pod", podKey(pod.Namespace, pod.Name),
			"err", fmt.Errorf("update status of pod %s/%s: %w", pod.Namespace, pod.Name, err))
	}
}

// setCondition sets cond in st as kube's UpdatePodCondition does: the
// transition time moves only when the status flips. It reports whether
// anything changed.
func setCondition(st *corev1.PodStatus, cond corev1.PodCondition, now metav1.Time) bool {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != cond.Type {
			continue
		}
		if c.Status == cond.Status && c.Reason == cond.Reason && c.Message == cond.Message &&
			c.ObservedGeneration == cond.ObservedGeneration {
			return false
		}
		cond.LastTransitionTime = c.LastTransitionTime
		if c.Status != cond.Status || cond.LastTransitionTime.IsZero() {
			cond.LastTransitionTime = now
		}
		cond.LastProbeTime = c.LastProbeTime
		*c = cond
		return true
	}
	cond.LastTransitionTime = now
	st.Conditions = append(st.Conditions, cond)
	return true
}

// truncate shortens an event message to what the API accepts, as
// kube-scheduler does.
func truncate(msg string) string {
	if len(msg) <= noteLengthLimit {
		return msg
	}
	const suffix = " ..."
	return strings.ToValidUTF8(msg[:noteLengthLimit-len(suffix)], "") + suffix
}

// podKey names a pod in logs.
func podKey(ns, name string) string { return types.NamespacedName{Namespace: ns, Name: name}.String() }
