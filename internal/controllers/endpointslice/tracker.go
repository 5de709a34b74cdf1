package endpointslice

import (
	"sync"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
)

// deletionExpected marks a slice this controller deleted.
const deletionExpected = -1

// tracker remembers, per Service, the generation of every slice this
// controller wrote, and the slices it deleted, until its informer shows
// them. A Service whose cached slices are behind is not synced: acting on
// them would create or delete twice. kube's endpointSliceTracker.
type tracker struct {
	mu sync.Mutex
	// generations maps a Service key to its slices' expected generations.
	generations map[string]map[types.UID]int64
}

func newTracker() *tracker {
	return &tracker{generations: map[string]map[types.UID]int64{}}
}

func serviceKeyOf(s *discoveryv1.EndpointSlice) string {
	return s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName]
}

// written records a slice this controller created or updated.
func (t *tracker) written(s *discoveryv1.EndpointSlice) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := serviceKeyOf(s)
	if t.generations[key] == nil {
		t.generations[key] = map[types.UID]int64{}
	}
	t.generations[key][s.UID] = s.Generation
}

// deleted records a slice this controller deleted.
func (t *tracker) deleted(s *discoveryv1.EndpointSlice) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if gens := t.generations[serviceKeyOf(s)]; gens != nil {
		gens[s.UID] = deletionExpected
	}
}

// shouldSync tells whether an observed slice is news: one this controller
// did not write, or a newer generation than it wrote. It also tells true
// for the observation of a write a sync may be waiting for.
func (t *tracker) shouldSync(s *discoveryv1.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	gen, ok := t.generations[serviceKeyOf(s)][s.UID]
	return !ok || gen == deletionExpected || s.Generation >= gen
}

// observeDeletion forgets a deleted slice; it tells whether the deletion
// was not this controller's own.
func (t *tracker) observeDeletion(s *discoveryv1.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	gens := t.generations[serviceKeyOf(s)]
	gen, ok := gens[s.UID]
	delete(gens, s.UID)
	return !ok || gen != deletionExpected
}

// stale tells whether the cached slices of a Service are behind this
// controller's writes: a written slice missing or at an older generation,
// or a deleted one still there.
func (t *tracker) stale(serviceKey string, cached []*discoveryv1.EndpointSlice) bool {
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

// forget drops a deleted Service.
func (t *tracker) forget(serviceKey string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.generations, serviceKey)
}
