// Package disruption is kube-controller-manager's "disruption" controller:
// it keeps the status of every PodDisruptionBudget in line with the pods
// its selector matches.
//
// For each budget it counts the healthy pods (Ready, not being deleted,
// not recently evicted), the pods it expects (the matching pods for an
// integer minAvailable, else the scale of their controllers:
// Deployments, and ReplicaSets not owned by one), and from those the
// desired healthy count and the disruptions allowed now, with the
// DisruptionAllowed condition (SufficientPods, InsufficientPods, or
// SyncFailed when the expected count cannot be computed). Entries of
// status.disruptedPods — pods the eviction subresource let go — are kept
// until the pod is seen being deleted, and dropped as stale after
// DeletionTimeout; the budget is looked at again then.
//
// Pod, budget, Deployment and ReplicaSet informers feed a rate-limited
// workqueue of budget keys; each sync is at most one status write.
package disruption

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/kubectl/pkg/util/podutils"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
)

// Name is the controller's name in --controllers, as kube's.
const Name = "disruption"

// DeletionTimeout is how long an eviction recorded in
// status.disruptedPods is trusted to be followed by the pod's deletion.
const DeletionTimeout = 2 * time.Minute

// Event reasons, as kube's.
const (
	ReasonNoPods                          = "NoPods"
	ReasonCalculateExpectedPodCountFailed = "CalculateExpectedPodCountFailed"
	ReasonUnmanagedPods                   = "UnmanagedPods"
	ReasonNotDeleted                      = "NotDeleted"
)

// Controller is the disruption controller.
type Controller struct {
	client   kubernetes.Interface
	clock    clock.WithTicker
	log      *slog.Logger
	recorder record.EventRecorder

	pdbs       policylisters.PodDisruptionBudgetLister
	pdbsSynced cache.InformerSynced
	pods       corelisters.PodLister
	podsSynced cache.InformerSynced
	rss        appslisters.ReplicaSetLister
	rssSynced  cache.InformerSynced
	deps       appslisters.DeploymentLister
	depsSynced cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[types.NamespacedName]
}

// New builds the controller on cc's shared informers. It implements
// controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	return NewController(cc)
}

// NewController is New with the concrete type.
func NewController(cc *controllers.Context) (*Controller, error) {
	c := &Controller{client: cc.Client, clock: cc.Clock, log: cc.Logger}
	if c.clock == nil {
		c.clock = clock.RealClock{}
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if cc.Recorder != nil {
		c.recorder = cc.Recorder("controllermanager")
	}
	c.queue = controllers.NewQueue(Name, c.clock, workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](5*time.Millisecond, 30*time.Second))

	pdbInf := cc.Informers.Policy().V1().PodDisruptionBudgets()
	if _, err := pdbInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueuePDB,
		UpdateFunc: func(_, cur any) { c.enqueuePDB(cur) },
		DeleteFunc: c.enqueuePDB,
	}); err != nil {
		return nil, fmt.Errorf("disruption controller: watch poddisruptionbudgets: %w", err)
	}
	podInf := cc.Informers.Core().V1().Pods()
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueuePodBudgets,
		UpdateFunc: func(old, cur any) {
			c.enqueuePodBudgets(cur)
			if o, ok := old.(*corev1.Pod); ok {
				if p, ok := cur.(*corev1.Pod); ok && !labels.Equals(o.Labels, p.Labels) {
					c.enqueuePodBudgets(old)
				}
			}
		},
		DeleteFunc: c.enqueuePodBudgets,
	}); err != nil {
		return nil, fmt.Errorf("disruption controller: watch pods: %w", err)
	}
	// A controller's scale is the expected count of maxUnavailable and
	// percentage budgets: its changes matter even before its pods change.
	rsInf := cc.Informers.Apps().V1().ReplicaSets()
	if _, err := rsInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*appsv1.ReplicaSet)
			n, ok2 := cur.(*appsv1.ReplicaSet)
			if ok1 && ok2 && !apiequality.Semantic.DeepEqual(o.Spec.Replicas, n.Spec.Replicas) {
				c.enqueueNamespace(n.Namespace)
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("disruption controller: watch replicasets: %w", err)
	}
	depInf := cc.Informers.Apps().V1().Deployments()
	if _, err := depInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*appsv1.Deployment)
			n, ok2 := cur.(*appsv1.Deployment)
			if ok1 && ok2 && !apiequality.Semantic.DeepEqual(o.Spec.Replicas, n.Spec.Replicas) {
				c.enqueueNamespace(n.Namespace)
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("disruption controller: watch deployments: %w", err)
	}
	c.pdbs, c.pdbsSynced = pdbInf.Lister(), pdbInf.Informer().HasSynced
	c.pods, c.podsSynced = podInf.Lister(), podInf.Informer().HasSynced
	c.rss, c.rssSynced = rsInf.Lister(), rsInf.Informer().HasSynced
	c.deps, c.depsSynced = depInf.Lister(), depInf.Informer().HasSynced
	return c, nil
}

func (c *Controller) enqueuePDB(obj any) {
	if pdb, ok := controllers.Deleted[*policyv1.PodDisruptionBudget](obj); ok {
		c.queue.Add(types.NamespacedName{Namespace: pdb.Namespace, Name: pdb.Name})
	}
}

// enqueuePodBudgets enqueues the budgets whose selector matches the pod.
func (c *Controller) enqueuePodBudgets(obj any) {
	pod, ok := controllers.Deleted[*corev1.Pod](obj)
	if !ok {
		return
	}
	pdbs, err := c.pdbs.PodDisruptionBudgets(pod.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, pdb := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		c.queue.Add(types.NamespacedName{Namespace: pdb.Namespace, Name: pdb.Name})
	}
}

func (c *Controller) enqueueNamespace(ns string) {
	pdbs, err := c.pdbs.PodDisruptionBudgets(ns).List(labels.Everything())
	if err != nil {
		return
	}
	for _, pdb := range pdbs {
		c.queue.Add(types.NamespacedName{Namespace: pdb.Namespace, Name: pdb.Name})
	}
}

// Run reconciles until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllers.Workers[types.NamespacedName]{
		Synced:    []cache.InformerSynced{c.pdbsSynced, c.podsSynced, c.rssSynced, c.depsSynced},
		Queue:     c.queue,
		Reconcile: c.sync,
		OnError: func(key types.NamespacedName, err error) {
			if apierrors.IsConflict(err) {
				c.log.Debug("pod disruption budget changed during its sync, retrying", "pdb", key.String())
				return
			}
			c.log.Warn("sync of pod disruption budget failed, retrying", "pdb", key.String(), "err", err)
		},
	}.Run(ctx, workers)
}

// sync computes one budget's status. A failure other than a write
// conflict leaves the budget fail-safe: no disruption allowed, condition
// SyncFailed.
func (c *Controller) sync(ctx context.Context, key types.NamespacedName) error {
	pdb, err := c.pdbs.PodDisruptionBudgets(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	err = c.trySync(ctx, pdb)
	if err == nil || apierrors.IsConflict(err) || apierrors.IsNotFound(err) || ctx.Err() != nil {
		return err
	}
	if ferr := c.failSafe(ctx, pdb, err); ferr != nil {
		return fmt.Errorf("%w (and failed to mark the budget fail-safe: %v)", err, ferr)
	}
	return err
}

func (c *Controller) event(obj *policyv1.PodDisruptionBudget, typ, reason, format string, args ...any) {
	if c.recorder != nil {
		c.recorder.Eventf(obj, typ, reason, format, args...)
	}
}

func (c *Controller) trySync(ctx context.Context, pdb *policyv1.PodDisruptionBudget) error {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return err
	}
	pods, err := c.pods.Pods(pdb.Namespace).List(sel)
	if err != nil {
		return err
	}
	if len(pods) == 0 {
		c.event(pdb, corev1.EventTypeNormal, ReasonNoPods, "No matching pods found")
	}
	expected, desired, unmanaged, err := c.expectedPodCount(pdb, pods)
	if err != nil {
		c.event(pdb, corev1.EventTypeWarning, ReasonCalculateExpectedPodCountFailed, "Failed to calculate the number of expected pods: %v", err)
		return err
	}
	if len(unmanaged) > 0 {
		c.event(pdb, corev1.EventTypeWarning, ReasonUnmanagedPods, "Pods selected by this PodDisruptionBudget (selector: %v) were found "+
			"to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. "+
			"To account for these pods please set \".spec.minAvailable\" field of the PDB to an integer value.", sel)
	}
	now := c.clock.Now()
	disrupted, recheck := c.disruptedPods(pdb, pods, now)
	healthy := countHealthy(pods, disrupted, now)
	if err := c.updateStatus(ctx, pdb, healthy, desired, expected, disrupted); err != nil {
		return err
	}
	if recheck != nil {
		c.queue.AddAfter(types.NamespacedName{Namespace: pdb.Namespace, Name: pdb.Name}, recheck.Sub(now))
	}
	return nil
}

// expectedPodCount returns how many pods the budget expects and how many
// it wants healthy, as kube computes them, with the names of matching pods
// no controller owns (which count for nothing in a scale).
func (c *Controller) expectedPodCount(pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod) (expected, desired int32, unmanaged []string, err error) {
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		if expected, unmanaged, err = c.expectedScale(pods); err != nil {
			return 0, 0, nil, err
		}
		maxUnavailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return 0, 0, nil, err
		}
		desired = max(expected-int32(maxUnavailable), 0)
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.Int:
		desired = pdb.Spec.MinAvailable.IntVal
		expected = int32(len(pods))
	case pdb.Spec.MinAvailable != nil:
		if expected, unmanaged, err = c.expectedScale(pods); err != nil {
			return 0, 0, nil, err
		}
		minAvailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expected), true)
		if err != nil {
			return 0, 0, nil, err
		}
		desired = int32(minAvailable)
	}
	return expected, desired, unmanaged, nil
}

// expectedScale adds up the scale of the controllers of the pods, each
// controller once.
func (c *Controller) expectedScale(pods []*corev1.Pod) (int32, []string, error) {
	scales := map[types.UID]int32{}
	var unmanaged []string
	for _, pod := range pods {
		ref := metav1.GetControllerOf(pod)
		if ref == nil {
			unmanaged = append(unmanaged, pod.Name)
			continue
		}
		if _, seen := scales[ref.UID]; seen {
			continue
		}
		uid, scale, found, err := c.controllerScale(ref, pod.Namespace)
		if err != nil {
			return 0, nil, err
		}
		if !found {
			return 0, nil, fmt.Errorf("found no controllers for pod %q", pod.Name)
		}
		scales[uid] = scale
	}
	var total int32
	for _, n := range scales {
		total += n
	}
	return total, unmanaged, nil
}

// controllerScale finds the scale of a pod's controller: a ReplicaSet's
// replicas, or those of the Deployment owning it.
func (c *Controller) controllerScale(ref *metav1.OwnerReference, ns string) (types.UID, int32, bool, error) {
	if ref.Kind != "ReplicaSet" || groupOf(ref.APIVersion) != appsv1.GroupName {
		return "", 0, false, nil
	}
	rs, err := c.rss.ReplicaSets(ns).Get(ref.Name)
	if apierrors.IsNotFound(err) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, err
	}
	if rs.UID != ref.UID {
		return "", 0, false, nil
	}
	owner := metav1.GetControllerOf(rs)
	if owner == nil || owner.Kind != "Deployment" || groupOf(owner.APIVersion) != appsv1.GroupName {
		return rs.UID, replicas(rs.Spec.Replicas), true, nil
	}
	d, err := c.deps.Deployments(ns).Get(owner.Name)
	if apierrors.IsNotFound(err) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, err
	}
	if d.UID != owner.UID {
		return "", 0, false, nil
	}
	return d.UID, replicas(d.Spec.Replicas), true, nil
}

func groupOf(apiVersion string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return ""
	}
	return gv.Group
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// disruptedPods keeps the entries of status.disruptedPods whose pod is
// still there, not being deleted, and evicted less than DeletionTimeout
// ago; it returns when the oldest kept entry expires.
func (c *Controller) disruptedPods(pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod, now time.Time) (map[string]metav1.Time, *time.Time) {
	result := map[string]metav1.Time{}
	var recheck *time.Time
	if pdb.Status.DisruptedPods == nil {
		return result, nil
	}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		at, ok := pdb.Status.DisruptedPods[pod.Name]
		if !ok {
			continue
		}
		expires := at.Add(DeletionTimeout)
		if expires.Before(now) {
			c.log.Info("pod was expected to be deleted but was not", "pod", pod.Namespace+"/"+pod.Name, "pdb", pdb.Namespace+"/"+pdb.Name, "expected", expires)
			if c.recorder != nil {
				c.recorder.Eventf(pod, corev1.EventTypeWarning, ReasonNotDeleted, "Pod was expected by PDB %s/%s to be deleted but it wasn't", pdb.Namespace, pdb.Name)
			}
			continue
		}
		if recheck == nil || expires.Before(*recheck) {
			recheck = &expires
		}
		result[pod.Name] = at
	}
	return result, recheck
}

// countHealthy counts the Ready pods that are neither being deleted nor
// recently evicted.
func countHealthy(pods []*corev1.Pod, disrupted map[string]metav1.Time, now time.Time) int32 {
	var n int32
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if at, ok := disrupted[pod.Name]; ok && at.Add(DeletionTimeout).After(now) {
			continue
		}
		if podutils.IsPodReady(pod) {
			n++
		}
	}
	return n
}

// updateStatus writes the budget's status when it changed. No disruption
// is allowed while nothing is expected, so that a budget whose first pods
// appear is safe until it is synced.
func (c *Controller) updateStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget, healthy, desired, expected int32, disrupted map[string]metav1.Time) error {
	allowed := healthy - desired
	if expected <= 0 || allowed <= 0 {
		allowed = 0
	}
	st := pdb.Status
	if st.CurrentHealthy == healthy && st.DesiredHealthy == desired && st.ExpectedPods == expected &&
		st.DisruptionsAllowed == allowed && apiequality.Semantic.DeepEqual(st.DisruptedPods, disrupted) &&
		st.ObservedGeneration == pdb.Generation && conditionUpToDate(pdb) {
		return nil
	}
	next := pdb.DeepCopy()
	next.Status = policyv1.PodDisruptionBudgetStatus{
		CurrentHealthy: healthy, DesiredHealthy: desired, ExpectedPods: expected, DisruptionsAllowed: allowed,
		DisruptedPods: disrupted, ObservedGeneration: pdb.Generation, Conditions: next.Status.Conditions,
	}
	c.setAllowedCondition(next)
	_, err := c.client.PolicyV1().PodDisruptionBudgets(next.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
	return err
}

// setAllowedCondition sets DisruptionAllowed from disruptionsAllowed.
func (c *Controller) setAllowedCondition(pdb *policyv1.PodDisruptionBudget) {
	cond := metav1.Condition{
		Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse, Reason: policyv1.InsufficientPodsReason,
		ObservedGeneration: pdb.Status.ObservedGeneration, LastTransitionTime: metav1.NewTime(c.clock.Now()),
	}
	if pdb.Status.DisruptionsAllowed > 0 {
		cond.Status, cond.Reason = metav1.ConditionTrue, policyv1.SufficientPodsReason
	}
	if pdb.Status.Conditions == nil {
		pdb.Status.Conditions = []metav1.Condition{}
	}
	apimeta.SetStatusCondition(&pdb.Status.Conditions, cond)
}

// conditionUpToDate tells whether DisruptionAllowed agrees with
// disruptionsAllowed and the generation was observed.
func conditionUpToDate(pdb *policyv1.PodDisruptionBudget) bool {
	cond := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	if cond == nil || pdb.Status.ObservedGeneration != pdb.Generation {
		return false
	}
	if pdb.Status.DisruptionsAllowed > 0 {
		return cond.Status == metav1.ConditionTrue && cond.Reason == policyv1.SufficientPodsReason
	}
	return cond.Status == metav1.ConditionFalse && cond.Reason == policyv1.InsufficientPodsReason
}

// failSafe allows no disruption and reports why in the condition.
func (c *Controller) failSafe(ctx context.Context, pdb *policyv1.PodDisruptionBudget, cause error) error {
	next := pdb.DeepCopy()
	next.Status.DisruptionsAllowed = 0
	if next.Status.Conditions == nil {
		next.Status.Conditions = []metav1.Condition{}
	}
	apimeta.SetStatusCondition(&next.Status.Conditions, metav1.Condition{
		Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse, Reason: policyv1.SyncFailedReason,
		Message: cause.Error(), ObservedGeneration: next.Status.ObservedGeneration, LastTransitionTime: metav1.NewTime(c.clock.Now()),
	})
	if apiequality.Semantic.DeepEqual(next.Status, pdb.Status) {
		return nil
	}
	_, err := c.client.PolicyV1().PodDisruptionBudgets(next.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
