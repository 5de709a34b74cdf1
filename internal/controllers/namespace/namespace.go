// Package namespace is the namespace controller: once a namespace is
// marked for deletion (the API server sets its deletionTimestamp and phase
// Terminating), it deletes everything in it, then removes the "kubernetes"
// finalizer from spec.finalizers through the finalize subresource, after
// which the API server removes the namespace. It reports progress in the
// namespace's conditions as kube-controller-manager's controller does
// (NamespaceDeletionDiscoveryFailure, NamespaceDeletionGroupVersionParsingFailure,
// NamespaceDeletionContentFailure, NamespaceContentRemaining,
// NamespaceFinalizersRemaining).
//
// Content is found by discovery (every namespaced resource that can be
// deleted) and removed with one deletecollection per resource, or item by
// item where that is not served. Content that stays (pods in their grace
// period, objects with finalizers) makes the controller look again after
// about half the time it expects that to take.
package namespace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
)

// Name is the controller's name in --controllers.
const Name = "namespace"

const (
	// deletionGracePeriod is how long after a namespace is marked the
	// controller starts emptying it, so that creations admitted just
	// before the mark (by any API server, whose namespace cache may lag)
	// have landed. kube waits 5s; minik's API servers are local, their
	// caches milliseconds behind etcd, and `kubectl delete namespace`
	// waits for the whole of it.
	deletionGracePeriod = time.Second
	// finalizerEstimateSeconds is how long objects held by finalizers are
	// expected to take to go.
	finalizerEstimateSeconds int64 = 15
)

// Controller is the namespace controller.
type Controller struct {
	client    kubernetes.Interface
	meta      metadata.Interface
	discovery discovery.DiscoveryInterface
	clock     clock.WithTicker
	log       *slog.Logger

	nsLister corelisters.NamespaceLister
	nsSynced cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

// New builds the controller on cc's shared Namespace informer. It
// implements controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	c := &Controller{
		client:    cc.Client,
		discovery: cc.Client.Discovery(),
		meta:      cc.Metadata,
		clock:     cc.Clock,
		log:       cc.Logger,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 60*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: Name, Clock: cc.Clock},
		),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	inf := cc.Informers.Core().V1().Namespaces()
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj interface{}) { c.enqueue(obj) },
	}); err != nil {
		return nil, fmt.Errorf("namespace controller: watch namespaces: %w", err)
	}
	c.nsLister = inf.Lister()
	c.nsSynced = inf.Informer().HasSynced
	return c, nil
}

func (c *Controller) enqueue(obj interface{}) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok || ns.DeletionTimestamp == nil {
		return
	}
	c.queue.AddAfter(ns.Name, deletionGracePeriod)
}

// Run reconciles with workers goroutines until ctx is done, then returns
// once every worker has stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllers.Workers[string]{
		Synced:    []cache.InformerSynced{c.nsSynced},
		Queue:     c.queue,
		Reconcile: c.reconcile,
		OnError: func(key string, err error) {
			c.log.Info("namespace deletion failed, will retry", "namespace", key, "err", err)
		},
	}.Run(ctx, workers)
}

// reconcile deletes one namespace's content; while some remains, it looks
// again after half the estimated time.
func (c *Controller) reconcile(ctx context.Context, key string) error {
	err := c.sync(ctx, key)
	var remaining *remainingError
	if errors.As(err, &remaining) {
		return &controllers.RequeueAfter{Delay: time.Duration(remaining.estimate/2+1) * time.Second}
	}
	return err
}

type remainingError struct{ estimate int64 }

func (e *remainingError) Error() string {
	return fmt.Sprintf("some content remains in the namespace, estimate %d seconds before it is removed", e.estimate)
}

// sync empties and finalizes one namespace being deleted.
func (c *Controller) sync(ctx context.Context, name string) error {
	if cached, err := c.nsLister.Get(name); apierrors.IsNotFound(err) || (err == nil && cached.DeletionTimestamp == nil) {
		return nil
	}
	// Read it fresh: other controllers may be editing it too.
	ns, err := c.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get namespace %s: %w", name, err)
	}
	if ns.DeletionTimestamp == nil {
		return nil
	}
	if ns.Status.Phase != corev1.NamespaceTerminating {
		ns = ns.DeepCopy()
		ns.Status.Phase = corev1.NamespaceTerminating
		if ns, err = c.client.CoreV1().Namespaces().UpdateStatus(ctx, ns, metav1.UpdateOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("mark namespace %s terminating: %w", name, err)
		}
	}
	if !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		// Ours is done; the API server removes the namespace once the
		// other finalizers are.
		return nil
	}
	estimate, err := c.deleteAllContent(ctx, ns)
	if err != nil {
		return err
	}
	if estimate > 0 {
		return &remainingError{estimate: estimate}
	}
	return c.finalize(ctx, ns)
}

// finalize removes the kubernetes finalizer through /finalize.
func (c *Controller) finalize(ctx context.Context, ns *corev1.Namespace) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := c.client.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.UID != ns.UID {
			return apierrors.NewNotFound(corev1.Resource("namespaces"), ns.Name)
		}
		cur.Spec.Finalizers = slices.DeleteFunc(cur.Spec.Finalizers, func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
		_, err = c.client.CoreV1().Namespaces().Finalize(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("finalize namespace %s: %w", ns.Name, err)
	}
	c.log.Debug("namespace finalized", "namespace", ns.Name)
	return nil
}

// contentTotals counts what remains after a pass.
type contentTotals struct {
	byResource  map[schema.GroupVersionResource]int
	byFinalizer map[string]int
}

// deleteAllContent deletes every namespaced object in ns and returns how
// many seconds what remains should take to go (0: nothing remains). It
// records the outcome in ns's conditions.
func (c *Controller) deleteAllContent(ctx context.Context, ns *corev1.Namespace) (int64, error) {
	var (
		errs     []error
		conds    []corev1.NamespaceCondition
		failures []string
		estimate int64
		totals   = contentTotals{byResource: map[schema.GroupVersionResource]int{}, byFinalizer: map[string]int{}}
		now      = metav1.NewTime(c.clock.Now())
	)
	lists, err := discovery.ServerPreferredNamespacedResources(c.discovery)
	if err != nil {
		// Not fatal: delete what was discovered, and come back.
		errs = append(errs, err)
		msg := err.Error()
		var gerr *discovery.ErrGroupDiscoveryFailed
		if errors.As(err, &gerr) {
			msg = fmt.Sprintf("Discovery failed for some groups, %d failing: %v", len(gerr.Groups), err)
		}
		conds = append(conds, corev1.NamespaceCondition{Type: corev1.NamespaceDeletionDiscoveryFailure, Status: corev1.ConditionTrue,
			LastTransitionTime: now, Reason: "DiscoveryFailed", Message: msg})
	}
	lists = discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"delete"}}, lists)
	gvrs, err := discovery.GroupVersionResources(lists)
	if err != nil {
		errs = append(errs, err)
		conds = append(conds, corev1.NamespaceCondition{Type: corev1.NamespaceDeletionGVParsingFailure, Status: corev1.ConditionTrue,
			LastTransitionTime: now, Reason: "GroupVersionParsingFailed", Message: err.Error()})
	}
	verbs := map[schema.GroupVersionResource][]string{}
	for _, l := range lists {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		for _, r := range l.APIResources {
			verbs[gv.WithResource(r.Name)] = r.Verbs
		}
	}
	for gvr := range gvrs {
		if strings.Contains(gvr.Resource, "/") {
			continue
		}
		r, err := c.deleteResource(ctx, gvr, verbs[gvr], ns)
		if err != nil {
			errs = append(errs, err)
			failures = append(failures, err.Error())
		}
		estimate = max(estimate, r.estimate)
		if r.remaining > 0 {
			totals.byResource[gvr] = r.remaining
			for f, n := range r.finalizers {
				totals.byFinalizer[f] += n
			}
		}
	}
	if len(failures) > 0 {
		sort.Strings(failures)
		conds = append(conds, corev1.NamespaceCondition{Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionTrue,
			LastTransitionTime: now, Reason: "ContentDeletionFailed",
			Message: fmt.Sprintf("Failed to delete all resource types, %d remaining: %v", len(failures), strings.Join(failures, ", "))})
	}
	conds = append(conds, totals.conditions(now)...)
	c.updateConditions(ctx, ns, conds)
	return estimate, errors.Join(errs...)
}

// resourceResult is what remains of one resource after a pass.
type resourceResult struct {
	estimate   int64
	remaining  int
	finalizers map[string]int
}

// deleteResource deletes every object of gvr in ns and lists what remains.
func (c *Controller) deleteResource(ctx context.Context, gvr schema.GroupVersionResource, verbs []string, ns *corev1.Namespace) (resourceResult, error) {
	var estimate int64
	if gvr.Group == "" && gvr.Resource == "pods" {
		e, err := c.podsEstimate(ctx, ns)
		if err != nil {
			return resourceResult{}, err
		}
		estimate = e
	}
	// The namespace goes as a whole: dependents are deleted with it, never
	// orphaned.
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &background}
	deleted := false
	if slices.Contains(verbs, "deletecollection") {
		err := c.meta.Resource(gvr).Namespace(ns.Name).DeleteCollection(ctx, opts, metav1.ListOptions{})
		switch {
		case err == nil:
			deleted = true
		case apierrors.IsMethodNotSupported(err) || apierrors.IsNotFound(err):
		default:
			return resourceResult{estimate: estimate}, fmt.Errorf("delete %s in namespace %s: %w", gvr.GroupResource(), ns.Name, err)
		}
	}
	if !slices.Contains(verbs, "list") {
		return resourceResult{}, nil
	}
	list, err := c.meta.Resource(gvr).Namespace(ns.Name).List(ctx, metav1.ListOptions{})
	if apierrors.IsMethodNotSupported(err) || apierrors.IsNotFound(err) {
		return resourceResult{}, nil
	}
	if err != nil {
		return resourceResult{estimate: estimate}, fmt.Errorf("list %s in namespace %s: %w", gvr.GroupResource(), ns.Name, err)
	}
	if !deleted {
		for i := range list.Items {
			item := &list.Items[i]
			if item.GetDeletionTimestamp() != nil {
				continue
			}
			if err := c.meta.Resource(gvr).Namespace(ns.Name).Delete(ctx, item.GetName(), opts); err != nil && !apierrors.IsNotFound(err) {
				return resourceResult{estimate: estimate}, fmt.Errorf("delete %s %s/%s: %w", gvr.GroupResource(), ns.Name, item.GetName(), err)
			}
		}
		if list, err = c.meta.Resource(gvr).Namespace(ns.Name).List(ctx, metav1.ListOptions{}); err != nil {
			return resourceResult{estimate: estimate}, fmt.Errorf("list %s in namespace %s: %w", gvr.GroupResource(), ns.Name, err)
		}
	}
	if len(list.Items) == 0 {
		return resourceResult{}, nil
	}
	r := resourceResult{estimate: estimate, remaining: len(list.Items), finalizers: map[string]int{}}
	for _, item := range list.Items {
		for _, f := range item.GetFinalizers() {
			r.finalizers[f]++
		}
	}
	if r.estimate > 0 {
		return r, nil
	}
	if len(r.finalizers) > 0 {
		r.estimate = finalizerEstimateSeconds
		return r, nil
	}
	// Nothing should hold these: something was created meanwhile.
	return r, fmt.Errorf("unexpected items still remain in namespace: %s for gvr: %v", ns.Name, gvr)
}

// podsEstimate is the longest grace period of the namespace's running pods,
// less the time since the namespace was marked.
func (c *Controller) podsEstimate(ctx context.Context, ns *corev1.Namespace) (int64, error) {
	pods, err := c.client.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("list pods in namespace %s: %w", ns.Name, err)
	}
	var estimate int64
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.Spec.NodeName == "" {
			// Finished pods and pods on no node go at once.
			continue
		}
		grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
		if p.Spec.TerminationGracePeriodSeconds != nil {
			grace = *p.Spec.TerminationGracePeriodSeconds
		}
		estimate = max(estimate, grace)
	}
	if c.clock.Since(ns.DeletionTimestamp.Time) >= time.Duration(estimate)*time.Second {
		return 0, nil
	}
	return estimate, nil
}

// conditions reports what remains, as kube words it.
func (t contentTotals) conditions(now metav1.Time) []corev1.NamespaceCondition {
	var out []corev1.NamespaceCondition
	if len(t.byResource) > 0 {
		var parts []string
		for gvr, n := range t.byResource {
			parts = append(parts, fmt.Sprintf("%s.%s has %d resource instances", gvr.Resource, gvr.Group, n))
		}
		sort.Strings(parts)
		out = append(out, corev1.NamespaceCondition{Type: corev1.NamespaceContentRemaining, Status: corev1.ConditionTrue,
			LastTransitionTime: now, Reason: "SomeResourcesRemain",
			Message: fmt.Sprintf("Some resources are remaining: %s", strings.Join(parts, ", "))})
	}
	if len(t.byFinalizer) > 0 {
		var parts []string
		for f, n := range t.byFinalizer {
			parts = append(parts, fmt.Sprintf("%s in %d resource instances", f, n))
		}
		sort.Strings(parts)
		out = append(out, corev1.NamespaceCondition{Type: corev1.NamespaceFinalizersRemaining, Status: corev1.ConditionTrue,
			LastTransitionTime: now, Reason: "SomeFinalizersRemain",
			Message: fmt.Sprintf("Some finalizers are remaining: %s", strings.Join(parts, ", "))})
	}
	return out
}

// conditionTypes are the conditions the controller maintains, each False
// with its "ok" reason and message when nothing is wrong.
var conditionTypes = []struct {
	typ             corev1.NamespaceConditionType
	okReason, okMsg string
}{
	{corev1.NamespaceDeletionDiscoveryFailure, "ResourcesDiscovered", "All resources successfully discovered"},
	{corev1.NamespaceDeletionGVParsingFailure, "ParsedGroupVersions", "All legacy kube types successfully parsed"},
	{corev1.NamespaceDeletionContentFailure, "ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
	{corev1.NamespaceContentRemaining, "ContentRemoved", "All content successfully removed"},
	{corev1.NamespaceFinalizersRemaining, "ContentHasNoFinalizers", "All content-preserving finalizers finished"},
}

// updateConditions writes the pass's conditions to ns's status when they
// differ from those stored. A failure is logged: the next pass tries again.
func (c *Controller) updateConditions(ctx context.Context, ns *corev1.Namespace, conds []corev1.NamespaceCondition) {
	ns = ns.DeepCopy()
	changed := false
	for _, ct := range conditionTypes {
		want := corev1.NamespaceCondition{Type: ct.typ, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(c.clock.Now()),
			Reason: ct.okReason, Message: ct.okMsg}
		if i := slices.IndexFunc(conds, func(nc corev1.NamespaceCondition) bool { return nc.Type == ct.typ }); i >= 0 {
			want = conds[i]
		}
		i := slices.IndexFunc(ns.Status.Conditions, func(nc corev1.NamespaceCondition) bool { return nc.Type == ct.typ })
		if i < 0 {
			ns.Status.Conditions = append(ns.Status.Conditions, want)
			changed = true
			continue
		}
		cur := &ns.Status.Conditions[i]
		if cur.Status != want.Status || cur.Reason != want.Reason || cur.Message != want.Message {
			if cur.Status != want.Status {
				cur.LastTransitionTime = want.LastTransitionTime
			}
			cur.Status, cur.Reason, cur.Message = want.Status, want.Reason, want.Message
			changed = true
		}
	}
	if !changed {
		return
	}
	if _, err := c.client.CoreV1().Namespaces().UpdateStatus(ctx, ns, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		c.log.Info("could not update namespace conditions", "namespace", ns.Name, "err", err)
	}
}
