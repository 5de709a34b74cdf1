// Package statefulset is the StatefulSet controller: it runs the pods
// <name>-0 … <name>-(N-1) of each StatefulSet, with stable names and
// hostnames, creating them in order and each only once the ones before it
// are Running and Ready (podManagementPolicy OrderedReady) or all at once
// (Parallel); it scales down from the highest ordinal, rolls template
// changes out in reverse ordinal order down to the partition, records each
// template in a ControllerRevision and reports the StatefulSet's status,
// as kube-controller-manager's controller of that name does.
//
// Each volumeClaimTemplate gives every pod its own PersistentVolumeClaim,
// <template>-<pod>, created before the pod and kept when the pod or the
// StatefulSet goes (persistentVolumeClaimRetentionPolicy Retain; the
// Delete policies are not implemented), so a pod recreated under its name
// finds its claim again.
package statefulset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/kubectl/pkg/util/podutils"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
	"minik/internal/controllers/history"
)

// Name is the controller's name in --controllers.
const Name = "statefulset"

// Component is the source of the controller's events.
const Component = "statefulset-controller"

// Event reasons.
const (
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonFailedCreate     = "FailedCreate"
	ReasonSuccessfulDelete = "SuccessfulDelete"
	ReasonFailedDelete     = "FailedDelete"
)

var controllerKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")

// Controller is the StatefulSet controller.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	clock    clock.WithTicker
	log      *slog.Logger

	setLister       appslisters.StatefulSetLister
	setsSynced      cache.InformerSynced
	podLister       corelisters.PodLister
	podsSynced      cache.InformerSynced
	revisionLister  appslisters.ControllerRevisionLister
	revisionsSynced cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

// New builds the controller on cc's shared StatefulSet, Pod and
// ControllerRevision informers. It implements controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	c := &Controller{
		client:   cc.Client,
		recorder: cc.Recorder(Component),
		clock:    cc.Clock,
		log:      cc.Logger,
		queue:    controllers.NewQueue[string](Name, cc.Clock, nil),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	sets := cc.Informers.Apps().V1().StatefulSets()
	if _, err := sets.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj interface{}) { c.enqueue(obj) },
		DeleteFunc: c.enqueueDeleted,
	}); err != nil {
		return nil, fmt.Errorf("statefulset controller: watch statefulsets: %w", err)
	}
	c.setLister, c.setsSynced = sets.Lister(), sets.Informer().HasSynced

	pods := cc.Informers.Core().V1().Pods()
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.podChanged,
		UpdateFunc: func(old, cur interface{}) { c.podChanged(old); c.podChanged(cur) },
		DeleteFunc: c.podChanged,
	}); err != nil {
		return nil, fmt.Errorf("statefulset controller: watch pods: %w", err)
	}
	c.podLister, c.podsSynced = pods.Lister(), pods.Informer().HasSynced

	revs := cc.Informers.Apps().V1().ControllerRevisions()
	if _, err := revs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.ownerChanged,
		UpdateFunc: func(_, cur interface{}) { c.ownerChanged(cur) },
		DeleteFunc: c.ownerChanged,
	}); err != nil {
		return nil, fmt.Errorf("statefulset controller: watch controllerrevisions: %w", err)
	}
	c.revisionLister, c.revisionsSynced = revs.Lister(), revs.Informer().HasSynced
	return c, nil
}

// Run reconciles with workers goroutines until ctx is done, then shuts the
// queue down and returns once every worker has stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllers.Workers[string]{
		Synced:    []cache.InformerSynced{c.setsSynced, c.podsSynced, c.revisionsSynced},
		Queue:     c.queue,
		Reconcile: c.sync,
		OnError: func(key string, err error) {
			c.log.Info("sync failed, will retry", "statefulset", key, "err", err)
		},
	}.Run(ctx, workers)
}

func (c *Controller) enqueue(obj interface{}) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) enqueueDeleted(obj interface{}) {
	if set, ok := controllers.Deleted[*appsv1.StatefulSet](obj); ok {
		c.enqueue(set)
	}
}

// podChanged wakes the StatefulSet that controls a pod, or, for an orphan,
// those whose selector matches it (which may adopt it).
func (c *Controller) podChanged(obj interface{}) {
	pod, ok := controllers.Deleted[*corev1.Pod](obj)
	if !ok {
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if ref.Kind == controllerKind.Kind {
			c.queue.Add(pod.Namespace + "/" + ref.Name)
		}
		return
	}
	sets, err := c.setLister.GetPodStatefulSets(pod)
	if err != nil {
		return
	}
	for _, s := range sets {
		c.enqueue(s)
	}
}

func (c *Controller) ownerChanged(obj interface{}) {
	m, ok := controllers.Deleted[metav1.Object](obj)
	if !ok {
		return
	}
	if ref := metav1.GetControllerOf(m); ref != nil && ref.Kind == controllerKind.Kind {
		c.queue.Add(m.GetNamespace() + "/" + ref.Name)
	}
}

// sync reconciles one StatefulSet. It is never called twice at once for a
// key.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	set, err := c.setLister.StatefulSets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get statefulset %s: %w", key, err)
	}
	set = set.DeepCopy()
	selector, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		c.log.Error("statefulset has an invalid selector", "statefulset", key, "err", err)
		return nil
	}
	pods, err := c.claimPods(ctx, set, selector)
	if err != nil {
		return err
	}
	revs, err := c.ownedRevisions(set)
	if err != nil {
		return err
	}
	collisionCount := int32(0)
	if set.Status.CollisionCount != nil {
		collisionCount = *set.Status.CollisionCount
	}
	current, update, revs, err := c.revisions(ctx, set, revs, &collisionCount)
	if err != nil {
		return err
	}
	r := &reconciler{c: c, set: set, current: current, update: update}
	if err := r.init(pods); err != nil {
		return err
	}
	var manageErr error
	if set.DeletionTimestamp == nil {
		manageErr = r.manage(ctx)
	}
	status := r.status(pods, collisionCount)
	if err := c.updateStatus(ctx, set, status); err != nil {
		return errors.Join(manageErr, err)
	}
	keep := map[string]bool{status.CurrentRevision: true, status.UpdateRevision: true}
	for _, p := range pods {
		keep[p.Labels[appsv1.ControllerRevisionHashLabelKey]] = true
	}
	limit := 10
	if set.Spec.RevisionHistoryLimit != nil {
		limit = int(*set.Spec.RevisionHistoryLimit)
	}
	if err := history.Truncate(ctx, c.client, revs, keep, limit); err != nil {
		return errors.Join(manageErr, err)
	}
	if manageErr == nil && r.requeueAfter > 0 {
		return &controllers.RequeueAfter{Delay: r.requeueAfter}
	}
	return manageErr
}

// claimPods returns the pods set controls, adopting orphans its selector
// matches and releasing those it controls that no longer match
// (controllers.RefManager); as in kube, a pod must also be named as one of
// the set's ordinals to match.
func (c *Controller) claimPods(ctx context.Context, set *appsv1.StatefulSet, selector labels.Selector) ([]*corev1.Pod, error) {
	all, err := c.podLister.Pods(set.Namespace).List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list pods of statefulset %s/%s: %w", set.Namespace, set.Name, err)
	}
	m := &controllers.RefManager[*corev1.Pod]{
		Controller: set,
		Kind:       controllerKind,
		Match: func(p *corev1.Pod) bool {
			return selector.Matches(labels.Set(p.Labels)) && parentName(p) == set.Name
		},
		CanAdopt: controllers.RecheckDeletionTimestamp(set, func(ctx context.Context) (metav1.Object, error) {
			return c.client.AppsV1().StatefulSets(set.Namespace).Get(ctx, set.Name, metav1.GetOptions{})
		}),
		Patch: func(ctx context.Context, p *corev1.Pod, patch []byte) error {
			_, err := c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
			return err
		},
	}
	return m.Claim(ctx, all)
}

// ownedRevisions returns the ControllerRevisions set controls, sorted.
func (c *Controller) ownedRevisions(set *appsv1.StatefulSet) ([]*appsv1.ControllerRevision, error) {
	all, err := c.revisionLister.ControllerRevisions(set.Namespace).List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list controllerrevisions of statefulset %s/%s: %w", set.Namespace, set.Name, err)
	}
	var out []*appsv1.ControllerRevision
	for _, r := range all {
		if metav1.IsControlledBy(r, set) {
			out = append(out, r)
		}
	}
	history.Sort(out)
	return out, nil
}

// revisions returns the current revision (the one status.currentRevision
// names, or the update revision when none) and the update revision (the
// template of the spec, created or renumbered as the latest), and the
// revisions with any new one.
func (c *Controller) revisions(ctx context.Context, set *appsv1.StatefulSet, revs []*appsv1.ControllerRevision, collisionCount *int32) (current, update *appsv1.ControllerRevision, _ []*appsv1.ControllerRevision, _ error) {
	want, err := history.New(set, controllerKind.Kind, &set.Spec.Template, history.Next(revs))
	if err != nil {
		return nil, nil, nil, err
	}
	var equal []*appsv1.ControllerRevision
	for _, r := range revs {
		if history.Equal(r, want) {
			equal = append(equal, r)
		}
	}
	switch {
	case len(equal) > 0 && equal[len(equal)-1].Name == revs[len(revs)-1].Name:
		update = equal[len(equal)-1]
	case len(equal) > 0:
		// Back to an earlier template: that revision becomes the latest.
		update, err = history.Bump(ctx, c.client, equal[len(equal)-1], want.Revision)
		if err != nil {
			return nil, nil, nil, err
		}
		for i, r := range revs {
			if r.Name == update.Name {
				revs[i] = update
			}
		}
		history.Sort(revs)
	default:
		update, err = history.Create(ctx, c.client, set.Name, history.HashLabel, want, collisionCount)
		if err != nil {
			return nil, nil, nil, err
		}
		revs = append(revs, update)
	}
	for _, r := range revs {
		if r.Name == set.Status.CurrentRevision {
			current = r
		}
	}
	if current == nil {
		current = update
	}
	return current, update, revs, nil
}

// ordinalOf parses the ordinal of a pod named <parent>-<ordinal>; -1 when
// the name has no ordinal.
func ordinalOf(p *corev1.Pod) int {
	i := strings.LastIndexByte(p.Name, '-')
	if i < 0 {
		return -1
	}
	n, err := strconv.Atoi(p.Name[i+1:])
	if err != nil || n < 0 {
		return -1
	}
	return n
}

func parentName(p *corev1.Pod) string {
	i := strings.LastIndexByte(p.Name, '-')
	if i < 0 || ordinalOf(p) < 0 {
		return ""
	}
	return p.Name[:i]
}

func podName(set *appsv1.StatefulSet, ordinal int) string {
	return fmt.Sprintf("%s-%d", set.Name, ordinal)
}

// updateStatus writes status if it differs from set's.
func (c *Controller) updateStatus(ctx context.Context, set *appsv1.StatefulSet, status appsv1.StatefulSetStatus) error {
	if equalStatus(set.Status, status) {
		return nil
	}
	set.Status = status
	_, err := c.client.AppsV1().StatefulSets(set.Namespace).UpdateStatus(ctx, set, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("update status of statefulset %s/%s: %w", set.Namespace, set.Name, err)
	}
	return nil
}

func equalStatus(a, b appsv1.StatefulSetStatus) bool {
	return a.ObservedGeneration == b.ObservedGeneration && a.Replicas == b.Replicas && a.ReadyReplicas == b.ReadyReplicas &&
		a.CurrentReplicas == b.CurrentReplicas && a.UpdatedReplicas == b.UpdatedReplicas && a.AvailableReplicas == b.AvailableReplicas &&
		a.CurrentRevision == b.CurrentRevision && a.UpdateRevision == b.UpdateRevision &&
		ptrEq(a.CollisionCount, b.CollisionCount)
}

func ptrEq(a, b *int32) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// Pod state helpers, as kube's stateful_set_utils.go.

func isCreated(p *corev1.Pod) bool     { return p.Status.Phase != "" }
func isTerminating(p *corev1.Pod) bool { return p.DeletionTimestamp != nil }
func isFailed(p *corev1.Pod) bool      { return p.Status.Phase == corev1.PodFailed }
func isSucceeded(p *corev1.Pod) bool   { return p.Status.Phase == corev1.PodSucceeded }

// isRunningAndReady and isRunningAndAvailable are kube's StatefulSet
// predicates: Running and Ready (for minReadySeconds at now).
func isRunningAndReady(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && podutils.IsPodReady(p)
}

func isRunningAndAvailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	return p.Status.Phase == corev1.PodRunning && podutils.IsPodAvailable(p, minReadySeconds, metav1.NewTime(now))
}

func isHealthy(p *corev1.Pod) bool { return isRunningAndReady(p) && !isTerminating(p) }

func revisionOf(p *corev1.Pod) string { return p.Labels[appsv1.ControllerRevisionHashLabelKey] }

func byOrdinal(pods []*corev1.Pod) {
	sort.Slice(pods, func(i, j int) bool { return ordinalOf(pods[i]) < ordinalOf(pods[j]) })
}
