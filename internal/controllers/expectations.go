package controllers

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// ExpectationsTimeout is how long a controller waits for the watch events
// of the pods it created or deleted before it syncs anyway (a dropped event
// must not put an owner to sleep for ever).
const ExpectationsTimeout = 5 * time.Minute

// Expectations remember, per owner key (namespace/name), the pod creations
// and deletions a controller has made and its informer has not shown yet.
// While any are outstanding the owner's pods are not managed: its pod cache
// is known to be behind, and acting on it would create or delete twice.
// kube's UIDTrackingControllerExpectations, with an injected clock; the
// ReplicaSet and Job controllers share it.
type Expectations struct {
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

// NewExpectations returns empty expectations timed by c.
func NewExpectations(c clock.PassiveClock) *Expectations {
	if c == nil {
		c = clock.RealClock{}
	}
	return &Expectations{clock: c, m: map[string]*expectation{}}
}

// Satisfied tells whether the owner may manage its pods: nothing is
// outstanding, or the expectations expired.
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	exp, ok := e.m[key]
	if !ok {
		return true
	}
	return (exp.add <= 0 && exp.del <= 0) || e.clock.Since(exp.at) > ExpectationsTimeout
}

// ExpectCreations records n creations about to be made, replacing what was
// expected before.
func (e *Expectations) ExpectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[key] = &expectation{add: n, at: e.clock.Now()}
}

// ExpectDeletions records the deletion of the pods with these keys.
func (e *Expectations) ExpectDeletions(key string, podKeys []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	exp := &expectation{del: len(podKeys), deleting: map[string]bool{}, at: e.clock.Now()}
	for _, k := range podKeys {
		exp.deleting[k] = true
	}
	e.m[key] = exp
}

// CreationObserved counts one expected creation as seen (or as never
// going to be seen, when the create failed).
func (e *Expectations) CreationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if exp, ok := e.m[key]; ok {
		exp.add--
	}
}

// DeletionObserved counts the deletion of the pod podKey as seen, once.
func (e *Expectations) DeletionObserved(key, podKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if exp, ok := e.m[key]; ok && exp.deleting[podKey] {
		delete(exp.deleting, podKey)
		exp.del--
	}
}

// Forget drops the owner's expectations (it was deleted).
func (e *Expectations) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}
