package job

import (
	"sync"

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
