package job

import (
	"strconv"
	"sync"

	batchv1 "k8s.io/api/batch/v1"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
)

// expectations are the pod creations and deletions a Job's informer has
// not shown yet (controllers.Expectations, shared with the ReplicaSet
// controller), plus, per pod UID, the tracking finalizers the controller
// has removed but not seen go, so that a finished pod is never counted
// twice from a stale cache (kube's uidTrackingExpectations).
type expectations struct {
	*controllers.Expectations

	mu       sync.Mutex
	removing map[types.UID]bool
}

func newExpectations(c clock.PassiveClock) *expectations {
	return &expectations{Expectations: controllers.NewExpectations(c), removing: map[types.UID]bool{}}
}

// finalizerRemoved records that the pod's tracking finalizer is gone (and
// the pod counted) although the cache may still show it.
func (e *expectations) finalizerRemoved(uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.removing[uid] = true
}

// finalizerGoneObserved is told that the cache shows the pod without the
// finalizer, or deleted.
func (e *expectations) finalizerGoneObserved(uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.removing, uid)
}

// finalizerRemovalPending tells whether the pod's finalizer was removed by
// us and the cache has not caught up.
func (e *expectations) finalizerRemovalPending(uid types.UID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.removing[uid]
}

// writtenStore remembers the resourceVersion of each Job's last status
// write, so that a sync does not work from a cache older than its own
// write (kube's consistency store): the informer's update event queues
// the Job again once the cache has caught up.
type writtenStore struct {
	mu      sync.Mutex
	written map[string]written
}

type written struct {
	uid types.UID
	rv  uint64
}

func newWrittenStore() *writtenStore { return &writtenStore{written: map[string]written{}} }

func (w *writtenStore) wrote(key string, j *batchv1.Job) {
	rv, err := strconv.ParseUint(j.ResourceVersion, 10, 64)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.written[key] = written{uid: j.UID, rv: rv}
}

// stale tells whether the cached Job is older than our last write of it.
func (w *writtenStore) stale(key string, cached *batchv1.Job) bool {
	rv, err := strconv.ParseUint(cached.ResourceVersion, 10, 64)
	if err != nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.written[key]
	if !ok || last.uid != cached.UID {
		return false
	}
	if rv >= last.rv {
		delete(w.written, key)
		return false
	}
	return true
}

func (w *writtenStore) forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.written, key)
}
