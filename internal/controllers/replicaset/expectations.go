package replicaset

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// expectationsTimeout is how long a ReplicaSet waits for the watch events
// of the pods it created or deleted before it syncs anyway (a dropped event
// must not put it to sleep for ever).
const expectationsTimeout = 5 * time.Minute

// expectations remember, per ReplicaSet key, the pod creations and
// deletions the controller has made and its informer has not shown yet.
// While any are outstanding the ReplicaSet's replicas are not managed: its
// pod cache is known to be behind, and acting on it would create or delete
// twice. kube's UIDTrackingControllerExpectations, with an injected clock.
type expectations struct {
	clock clock.PassiveClock

	mu sync.Mutex
	m  map[string]*expectation
}

type expectation struct {
	add, del int
	// deleting holds the keys (namespace/name) of the pods whose deletion
	// is expected, so that a pod seen first with a deletionTimestamp and
	// then gone is counted once.
	deleting map[string]bool
	at       time.Time
}

func newExpectations(c clock.PassiveClock) *expectations {
	return &expectations{clock: c, m: map[string]*expectation{}}
}

// satisfied tells whether the ReplicaSet may manage its replicas: nothing
// is outstanding, or the expectations expired.
func (e *expectations) satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	exp, ok := e.m[key]
	if !ok {
		return true
	}
	return (exp.add <= 0 && exp.del <= 0) || e.clock.Since(exp.at) > expectationsTimeout
}

// expectCreations records n creations about to be made, replacing what was
// expected before.
func (e *expectations) expectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[key] = &expectation{add: n, at: e.clock.Now()}
}

// expectDeletions records the deletion of the pods with these keys.
func (e *expectations) expectDeletions(key string, podKeys []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	exp := &expectation{del: len(podKeys), deleting: map[string]bool{}, at: e.clock.Now()}
	for _, k := range podKeys {
		exp.deleting[k] = true
	}
	e.m[key] = exp
}

// creationObserved counts one expected creation as seen (or as never
// going to be seen, when the create failed).
func (e *expectations) creationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if exp, ok := e.m[key]; ok {
		exp.add--
	}
}

// deletionObserved counts the deletion of the pod podKey as seen, once.
func (e *expectations) deletionObserved(key, podKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if exp, ok := e.m[key]; ok && exp.deleting[podKey] {
		delete(exp.deleting, podKey)
		exp.del--
	}
}

// forget drops the ReplicaSet's expectations (it was deleted).
func (e *expectations) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}
