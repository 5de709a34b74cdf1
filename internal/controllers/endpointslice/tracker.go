package endpointslice

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	typeddiscoveryv1 "k8s.io/client-go/kubernetes/typed/discovery/v1"
	"k8s.io/client-go/tools/cache"
)

// deletionExpected marks a slice this controller deleted.
const deletionExpected = -1

// Tracker remembers, per Service, the generation of every slice a
// controller wrote, and the slices it deleted, until its informer shows
// them. A Service whose cached slices are behind is not synced: acting on
// them would create or delete twice. kube's endpointSliceTracker; the
// endpointslice and endpointslice-mirroring controllers each keep one.
// Slices are grouped by their kubernetes.io/service-name label.
type Tracker struct {
	mu sync.Mutex
	// generations maps a Service key to its slices' expected generations.
	generations map[string]map[types.UID]int64
}

// NewTracker returns an empty tracker.
func NewTracker() *Tracker {
	return &Tracker{generations: map[string]map[types.UID]int64{}}
}

func serviceKeyOf(s *discoveryv1.EndpointSlice) string {
	return s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName]
}

// Handler is the slice informer's handler of a controller whose slices
// carry the endpointslice.kubernetes.io/managed-by label managedBy: it
// calls enqueue with "<namespace>/<service name>" for a managed slice the
// tracker did not expect (written or deleted by someone else, or this
// controller's own write now observed), and for a slice taken away from
// the controller (its label changed).
func (t *Tracker) Handler(managedBy string, enqueue func(serviceKey string)) cache.ResourceEventHandler {
	managed := func(obj any) (*discoveryv1.EndpointSlice, bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		s, ok := obj.(*discoveryv1.EndpointSlice)
		return s, ok && s.Labels[discoveryv1.LabelManagedBy] == managedBy && s.Labels[discoveryv1.LabelServiceName] != ""
	}
	changed := func(obj any) {
		if s, ok := managed(obj); ok && t.ShouldSync(s) {
			enqueue(serviceKeyOf(s))
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: changed,
		UpdateFunc: func(oldObj, obj any) {
			if old, ok := managed(oldObj); ok {
				if _, still := managed(obj); !still {
					enqueue(serviceKeyOf(old))
					return
				}
			}
			changed(obj)
		},
		DeleteFunc: func(obj any) {
			if s, ok := managed(obj); ok && t.ObserveDeletion(s) {
				enqueue(serviceKeyOf(s))
			}
		},
	}
}

// Apply writes a plan through api, recording each write: creations,
// updates, then deletions, so that endpoints moving between slices are
// never missing. owner names the object the slices are for in errors. In a
// terminating namespace the creations are given up, as kube's reconciler
// does: the namespace's deletion removes the rest.
func (t *Tracker) Apply(ctx context.Context, api typeddiscoveryv1.EndpointSliceInterface, owner string, create, update, remove []*discoveryv1.EndpointSlice) error {
	var errs []error
	for _, s := range create {
		out, err := api.Create(ctx, s, metav1.CreateOptions{})
		if err != nil {
			if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				return nil
			}
			errs = append(errs, fmt.Errorf("create endpointslice for %s: %w", owner, err))
			continue
		}
		t.Written(out)
	}
	for _, s := range update {
		out, err := api.Update(ctx, s, metav1.UpdateOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("update endpointslice %s/%s: %w", s.Namespace, s.Name, err))
			continue
		}
		t.Written(out)
	}
	for _, s := range remove {
		err := api.Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete endpointslice %s/%s: %w", s.Namespace, s.Name, err))
			continue
		}
		t.Deleted(s)
	}
	return errors.Join(errs...)
}

// Written records a slice this controller created or updated.
func (t *Tracker) Written(s *discoveryv1.EndpointSlice) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := serviceKeyOf(s)
	if t.generations[key] == nil {
		t.generations[key] = map[types.UID]int64{}
	}
	t.generations[key][s.UID] = s.Generation
}

// Deleted records a slice this controller deleted.
func (t *Tracker) Deleted(s *discoveryv1.EndpointSlice) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if gens := t.generations[serviceKeyOf(s)]; gens != nil {
		gens[s.UID] = deletionExpected
	}
}

// ShouldSync tells whether an observed slice is news: one this controller
// did not write, or a newer generation than it wrote. It also tells true
// for the observation of a write a sync may be waiting for.
func (t *Tracker) ShouldSync(s *discoveryv1.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	gen, ok := t.generations[serviceKeyOf(s)][s.UID]
	return !ok || gen == deletionExpected || s.Generation >= gen
}

// ObserveDeletion forgets a deleted slice; it tells whether the deletion
// was not this controller's own.
func (t *Tracker) ObserveDeletion(s *discoveryv1.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	gens := t.generations[serviceKeyOf(s)]
	gen, ok := gens[s.UID]
	delete(gens, s.UID)
	return !ok || gen != deletionExpected
}

// Stale tells whether the cached slices of a Service are behind this
// controller's writes: a written slice missing or at an older generation,
// or a deleted one still there.
func (t *Tracker) Stale(serviceKey string, cached []*discoveryv1.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	gens := t.generations[serviceKey]
	seen := map[types.UID]bool{}
	for _, s := range cached {
		seen[s.UID] = true
		gen, ok := gens[s.UID]
		if ok && (gen == deletionExpected || s.Generation < gen) {
			return true
		}
	}
	for uid, gen := range gens {
		if gen != deletionExpected && !seen[uid] {
			return true
		}
	}
	return false
}

// Forget drops a Service whose slices are gone.
func (t *Tracker) Forget(serviceKey string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.generations, serviceKey)
}
