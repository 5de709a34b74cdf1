package admission

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/clock"

	"minik/internal/admission/quota"
)

// quotaRetries is how many times a charge is retried after a quota's
// status changed under it.
const quotaRetries = 5

// ResourceQuota enforces the ResourceQuotas of a request's namespace, as
// kube's plugin of that name does. It runs last in the validating phase:
// a request that would take a quota's usage past its hard limit is refused
// with kube's 403 ("exceeded quota: q, requested: pods=1, used: pods=2,
// limited: pods=2"); one that fits is charged by raising the quota's
// status.used before the object is stored.
//
// The charge is a compare-and-swap: the status is written with the
// resourceVersion it was computed from, so two API servers (or the quota
// controller) racing on one quota cannot both spend the same headroom; the
// loser re-reads the quota and checks again. Within one API server the
// charges of a namespace are serialized, so concurrent requests do not
// conflict with each other at all.
//
// Usage is charged at admission and given back by the quota controller,
// which recomputes status.used from the objects that exist (a request
// refused after it was charged is corrected at the controller's next
// sync). Dry-run requests are checked but not charged.
type ResourceQuota struct {
	// Lister reads ResourceQuotas from an informer cache. Required.
	Lister corelisters.ResourceQuotaLister
	// Client writes quota status and reads quotas live. Required.
	Client kubernetes.Interface
	// Registry holds the evaluators; nil means quota.NewRegistry(Clock).
	Registry *quota.Registry
	// Clock tells the time; nil means the real clock.
	Clock clock.PassiveClock

	once    sync.Once
	mu      sync.Mutex
	locks   map[string]*sync.Mutex
	updated map[string]*corev1.ResourceQuota
	live    map[string]liveQuotas
}

type liveQuotas struct {
	expiry time.Time
	items  []*corev1.ResourceQuota
}

// Name implements Validator.
func (*ResourceQuota) Name() string { return "ResourceQuota" }

func (q *ResourceQuota) init() {
	q.once.Do(func() {
		if q.Clock == nil {
			q.Clock = clock.RealClock{}
		}
		if q.Registry == nil {
			q.Registry = quota.NewRegistry(q.Clock)
		}
		q.locks = map[string]*sync.Mutex{}
		q.updated = map[string]*corev1.ResourceQuota{}
		q.live = map[string]liveQuotas{}
	})
}

// Validate implements Validator.
func (q *ResourceQuota) Validate(ctx context.Context, a *Attributes) error {
	if a.Subresource != "" || a.Namespace == "" || (a.Operation != Create && a.Operation != Update) || a.Object == nil {
		return nil
	}
	q.init()
	e := q.Registry.Get(a.Resource.GroupResource())
	if !e.Handles(string(a.Operation)) {
		return nil
	}
	// Most namespaces have no quota: they need no lock.
	quotas, err := q.quotas(ctx, a.Namespace)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("read quotas of %s: %w", a.Namespace, err))
	}
	if len(quotas) == 0 {
		return nil
	}
	lock := q.namespaceLock(a.Namespace)
	lock.Lock()
	defer lock.Unlock()
	// Read again under the lock: another request may have charged them.
	if quotas, err = q.quotas(ctx, a.Namespace); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("read quotas of %s: %w", a.Namespace, err))
	}
	var lastErr error
	for attempt := 0; attempt <= quotaRetries; attempt++ {
		charged, err := checkRequest(quotas, a, e)
		if err != nil {
			return err
		}
		if a.DryRun {
			return nil
		}
		var failed []string
		for i := range charged {
			if quota.Equals(quotas[i].Status.Used, charged[i].Status.Used) {
				continue
			}
			out, err := q.Client.CoreV1().ResourceQuotas(a.Namespace).UpdateStatus(ctx, charged[i], metav1.UpdateOptions{})
			if err != nil {
				failed = append(failed, charged[i].Name)
				lastErr = err
				continue
			}
			q.remember(out)
		}
		if len(failed) == 0 {
			return nil
		}
		// Someone else changed these quotas: re-read them and charge
		// them again (the others are charged already).
		quotas = quotas[:0]
		for _, name := range failed {
			fresh, err := q.Client.CoreV1().ResourceQuotas(a.Namespace).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return apierrors.NewInternalError(fmt.Errorf("read quota %s/%s: %w", a.Namespace, name, err))
			}
			quotas = append(quotas, fresh)
		}
		if len(quotas) == 0 {
			return nil
		}
	}
	return lastErr
}

func (q *ResourceQuota) namespaceLock(ns string) *sync.Mutex {
	q.mu.Lock()
	defer q.mu.Unlock()
	l, ok := q.locks[ns]
	if !ok {
		l = &sync.Mutex{}
		q.locks[ns] = l
	}
	return l
}

// remember keeps the status this server wrote last, which the informer
// cache may not have yet.
func (q *ResourceQuota) remember(rq *corev1.ResourceQuota) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.updated[rq.Namespace+"/"+rq.Name] = rq
}

// quotas returns deep copies of a namespace's quotas, sorted by name: from
// the cache (or a live list, reused 30 seconds, when the cache has none),
// each replaced by the status this server wrote last when that is newer.
func (q *ResourceQuota) quotas(ctx context.Context, ns string) ([]*corev1.ResourceQuota, error) {
	items, err := q.Lister.ResourceQuotas(ns).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		if items, err = q.liveLookup(ctx, ns); err != nil {
			return nil, err
		}
	}
	out := make([]*corev1.ResourceQuota, 0, len(items))
	q.mu.Lock()
	for _, item := range items {
		key := item.Namespace + "/" + item.Name
		if mine, ok := q.updated[key]; ok {
			if newerOrSame(item.ResourceVersion, mine.ResourceVersion) {
				delete(q.updated, key)
			} else {
				item = mine
			}
		}
		out = append(out, item.DeepCopy())
	}
	q.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// newerOrSame compares resourceVersions, which are etcd revisions.
func newerOrSame(a, b string) bool {
	x, err1 := strconv.ParseInt(a, 10, 64)
	y, err2 := strconv.ParseInt(b, 10, 64)
	return err1 == nil && err2 == nil && x >= y
}

func (q *ResourceQuota) liveLookup(ctx context.Context, ns string) ([]*corev1.ResourceQuota, error) {
	now := q.Clock.Now()
	q.mu.Lock()
	entry, ok := q.live[ns]
	q.mu.Unlock()
	if ok && now.Before(entry.expiry) {
		return entry.items, nil
	}
	list, err := q.Client.CoreV1().ResourceQuotas(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list quotas: %w", err)
	}
	entry = liveQuotas{expiry: now.Add(liveLookupTTL)}
	for i := range list.Items {
		entry.items = append(entry.items, &list.Items[i])
	}
	q.mu.Lock()
	q.live[ns] = entry
	q.mu.Unlock()
	return entry.items, nil
}

// checkRequest computes the quotas' usage after the request, refusing it
// when a quota it matches would be exceeded, as kube's CheckRequest does.
// The returned quotas are copies; those the request charges have a new
// status.used.
func checkRequest(quotas []*corev1.ResourceQuota, a *Attributes, e quota.Evaluator) ([]*corev1.ResourceQuota, error) {
	var interesting []int
	for i, rq := range quotas {
		match, err := quota.Matches(rq, a.Object, e)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("match quota %s: %w", rq.Name, err))
		}
		if !match {
			continue
		}
		restricted := e.MatchingResources(quota.ResourceNames(rq.Status.Hard))
		if err := e.Constraints(restricted, a.Object); err != nil {
			return nil, NewForbidden(a, fmt.Errorf("failed quota: %s: %w", rq.Name, err))
		}
		if !hasUsageStats(rq, restricted) {
			return nil, NewForbidden(a, fmt.Errorf("status unknown for quota: %s, resources: %s", rq.Name, quota.PrettyPrintNames(restricted)))
		}
		interesting = append(interesting, i)
	}
	out := make([]*corev1.ResourceQuota, len(quotas))
	for i := range quotas {
		out[i] = quotas[i].DeepCopy()
	}
	if len(interesting) == 0 {
		return out, nil
	}
	delta, err := e.Usage(a.Object)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if neg := quota.IsNegative(delta); len(neg) > 0 {
		return nil, NewForbidden(a, fmt.Errorf("quota usage is negative for resource(s): %s", quota.PrettyPrintNames(neg)))
	}
	if a.Operation == Update {
		if a.OldObject == nil {
			return nil, NewForbidden(a, fmt.Errorf("unable to get previous usage since prior version of object was not found"))
		}
		if m, err := meta.Accessor(a.OldObject); err == nil && m.GetResourceVersion() != "" {
			prev, err := e.Usage(a.OldObject)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			delta = quota.SubtractWithNonNegativeResult(delta, prev)
		}
	}
	delta = quota.RemoveZeros(delta)
	if len(delta) == 0 {
		return out, nil
	}
	for _, i := range interesting {
		rq := out[i]
		hard := quota.ResourceNames(rq.Status.Hard)
		requested := quota.Mask(delta, hard)
		used := quota.Add(rq.Status.Used, requested)
		if ok, exceeded := quota.LessThanOrEqual(quota.Mask(used, quota.ResourceNames(requested)), rq.Status.Hard); !ok {
			return nil, NewForbidden(a, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
				rq.Name,
				quota.PrettyPrint(quota.Mask(requested, exceeded)),
				quota.PrettyPrint(quota.Mask(rq.Status.Used, exceeded)),
				quota.PrettyPrint(quota.Mask(rq.Status.Hard, exceeded))))
		}
		rq.Status.Used = used
	}
	return out, nil
}

// hasUsageStats tells whether the quota controller has computed the usage
// of every resource of interest.
func hasUsageStats(rq *corev1.ResourceQuota, interesting []corev1.ResourceName) bool {
	want := map[corev1.ResourceName]bool{}
	for _, n := range interesting {
		want[n] = true
	}
	for name := range rq.Status.Hard {
		if !want[name] {
			continue
		}
		if _, ok := rq.Status.Used[name]; !ok {
			return false
		}
	}
	return true
}
