package scheduler

import (
	"container/heap"
	"context"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// where a queued pod is.
type place uint8

const (
	inActive place = iota
	inBackoff
	inUnschedulable
	inFlight
)

// queuedPod is a pod waiting for (or going through) a scheduling attempt.
type queuedPod struct {
	pod      *corev1.Pod
	place    place
	index    int // in its heap
	attempts int
	// enqueued orders pods of equal priority in the active queue.
	enqueued time.Time
	// backoffUntil: a failed pod is not retried before this.
	backoffUntil time.Time
	// since: when the pod was parked as unschedulable.
	since time.Time
	// rejectedBy are the filters that rejected the pod last time; only
	// events that concern them move it back (zero: any event).
	rejectedBy plugin
	// updated is set when the pod changed during its attempt.
	updated bool
}

type activeHeap []*queuedPod

func (h activeHeap) Len() int { return len(h) }
func (h activeHeap) Less(i, j int) bool {
	pi, pj := priorityOf(h[i].pod), priorityOf(h[j].pod)
	if pi != pj {
		return pi > pj
	}
	return h[i].enqueued.Before(h[j].enqueued)
}
func (h activeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *activeHeap) Push(x any)   { q := x.(*queuedPod); q.index = len(*h); *h = append(*h, q) }
func (h *activeHeap) Pop() any {
	old := *h
	q := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return q
}

type backoffHeap []*queuedPod

func (h backoffHeap) Len() int           { return len(h) }
func (h backoffHeap) Less(i, j int) bool { return h[i].backoffUntil.Before(h[j].backoffUntil) }
func (h backoffHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *backoffHeap) Push(x any)        { q := x.(*queuedPod); q.index = len(*h); *h = append(*h, q) }
func (h *backoffHeap) Pop() any {
	old := *h
	q := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return q
}

func priorityOf(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// queue is kube-scheduler's scheduling queue, reduced: an active heap
// (priority, then age), a backoff heap of pods waiting out their back-off,
// and the pods parked as unschedulable until a cluster event concerning
// the filters that rejected them (or maxUnschedulable) moves them back.
// A pod whose attempt overlapped such an event goes to back-off rather
// than being parked, so that no event is missed.
type queue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	clock clock.WithTicker

	initialBackoff, maxBackoff, maxUnschedulable time.Duration

	pods          map[types.UID]*queuedPod
	active        activeHeap
	backoff       backoffHeap
	unschedulable map[types.UID]*queuedPod
	closed        bool
	// moved and movedAll record the move requests (see moveAll) made while
	// the pod in flight was being scheduled: only the scheduling loop takes
	// pods, one at a time.
	moved    plugin
	movedAll bool
	// wake tells the flusher that the earliest back-off may have changed.
	wake chan struct{}
}

func newQueue(c clock.WithTicker, initialBackoff, maxBackoff, maxUnschedulable time.Duration) *queue {
	q := &queue{
		clock: c, initialBackoff: initialBackoff, maxBackoff: maxBackoff, maxUnschedulable: maxUnschedulable,
		pods: map[types.UID]*queuedPod{}, unschedulable: map[types.UID]*queuedPod{},
		wake: make(chan struct{}, 1),
	}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// add queues a new pending pod, or updates a queued one.
func (q *queue) add(pod *corev1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if qp := q.pods[pod.UID]; qp != nil {
		q.updateLocked(qp, pod)
		return
	}
	qp := &queuedPod{pod: pod, enqueued: q.clock.Now()}
	q.pods[pod.UID] = qp
	q.pushActive(qp)
}

// updateLocked records a newer version of a queued pod. A change of spec
// or labels can make a parked pod schedulable, so it moves it back, and so
// does the resourceclaim controller naming the pod's claims in its status
// (kube's DynamicResources hint); another status change (such as the
// scheduler's own condition) does not.
func (q *queue) updateLocked(qp *queuedPod, pod *corev1.Pod) {
	changed := !maps.Equal(qp.pod.Labels, pod.Labels) || !equality.Semantic.DeepEqual(qp.pod.Spec, pod.Spec) ||
		!equality.Semantic.DeepEqual(qp.pod.Status.ResourceClaimStatuses, pod.Status.ResourceClaimStatuses)
	qp.pod = pod
	if !changed {
		return
	}
	switch qp.place {
	case inFlight:
		qp.updated = true
	case inUnschedulable:
		q.moveLocked(qp)
	}
}

// remove forgets a pod: deleted, bound, or no longer this scheduler's.
func (q *queue) remove(uid types.UID) {
	q.mu.Lock()
	defer q.mu.Unlock()
	qp := q.pods[uid]
	if qp == nil {
		return
	}
	delete(q.pods, uid)
	switch qp.place {
	case inActive:
		heap.Remove(&q.active, qp.index)
	case inBackoff:
		heap.Remove(&q.backoff, qp.index)
	case inUnschedulable:
		delete(q.unschedulable, uid)
	}
}

// pop blocks until a pod is active (or the queue closes: ok is false) and
// returns it, in flight, with the number of its past attempts.
func (q *queue) pop() (pod *corev1.Pod, attempts int, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.active) == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return nil, 0, false
	}
	qp := heap.Pop(&q.active).(*queuedPod)
	qp.place, qp.updated = inFlight, false
	q.moved, q.movedAll = 0, false
	return qp.pod, qp.attempts, true
}

// done ends the attempt of a pod that was scheduled (or skipped).
func (q *queue) done(uid types.UID) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if qp := q.pods[uid]; qp != nil && qp.place == inFlight {
		delete(q.pods, uid)
	}
}

// failed ends an attempt that found no node: the pod backs off and is
// parked until an event concerning rejectedBy, unless such an event (or
// an update of the pod) came during the attempt: then it only backs off.
func (q *queue) failed(uid types.UID, rejectedBy plugin) {
	q.mu.Lock()
	defer q.mu.Unlock()
	qp := q.pods[uid]
	if qp == nil || qp.place != inFlight {
		return
	}
	now := q.clock.Now()
	qp.attempts++
	qp.backoffUntil = now.Add(q.backoffFor(qp.attempts))
	qp.rejectedBy = rejectedBy
	if qp.updated || q.movedAll || q.moved&rejectedBy != 0 || (rejectedBy == 0 && q.moved != 0) {
		q.pushBackoff(qp)
		return
	}
	qp.place, qp.since = inUnschedulable, now
	q.unschedulable[uid] = qp
}

// activate moves a parked or backing-off pod to the active queue at once
// (kube's Activate).
func (q *queue) activate(uid types.UID) {
	q.mu.Lock()
	defer q.mu.Unlock()
	qp := q.pods[uid]
	if qp == nil {
		return
	}
	switch qp.place {
	case inUnschedulable:
		delete(q.unschedulable, uid)
	case inBackoff:
		heap.Remove(&q.backoff, qp.index)
	default:
		return
	}
	qp.enqueued = q.clock.Now()
	q.pushActive(qp)
}

// retry queues again, after a back-off, a pod whose binding failed.
func (q *queue) retry(pod *corev1.Pod, attempts int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pods[pod.UID] != nil {
		return
	}
	qp := &queuedPod{pod: pod, attempts: attempts + 1, enqueued: q.clock.Now()}
	qp.backoffUntil = qp.enqueued.Add(q.backoffFor(qp.attempts))
	q.pods[pod.UID] = qp
	q.pushBackoff(qp)
}

func (q *queue) backoffFor(attempts int) time.Duration {
	d := q.initialBackoff
	for i := 1; i < attempts && d < q.maxBackoff; i++ {
		d *= 2
	}
	return min(d, q.maxBackoff)
}

// moveAll moves back the parked pods that a cluster event concerning
// plugins may help (plugins zero: every parked pod).
func (q *queue) moveAll(plugins plugin) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if plugins == 0 {
		q.movedAll = true
	}
	q.moved |= plugins
	for _, qp := range q.unschedulable {
		if plugins == 0 || qp.rejectedBy == 0 || qp.rejectedBy&plugins != 0 {
			q.moveLocked(qp)
		}
	}
}

// moveLocked moves a parked pod to the active queue, or to back-off if
// its back-off has not elapsed.
func (q *queue) moveLocked(qp *queuedPod) {
	delete(q.unschedulable, qp.pod.UID)
	if q.clock.Now().Before(qp.backoffUntil) {
		q.pushBackoff(qp)
		return
	}
	qp.enqueued = q.clock.Now()
	q.pushActive(qp)
}

func (q *queue) pushActive(qp *queuedPod) {
	qp.place = inActive
	heap.Push(&q.active, qp)
	q.cond.Signal()
}

func (q *queue) pushBackoff(qp *queuedPod) {
	qp.place = inBackoff
	heap.Push(&q.backoff, qp)
	if qp.index == 0 {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// flush moves the pods whose back-off has elapsed to the active queue, and
// the pods parked longer than maxUnschedulable back too. It returns when
// the next back-off ends (zero: none pending).
func (q *queue) flush() time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	for len(q.backoff) > 0 && !now.Before(q.backoff[0].backoffUntil) {
		qp := heap.Pop(&q.backoff).(*queuedPod)
		qp.enqueued = now
		q.pushActive(qp)
	}
	for _, qp := range q.unschedulable {
		if now.Sub(qp.since) >= q.maxUnschedulable {
			q.moveLocked(qp)
		}
	}
	if len(q.backoff) > 0 {
		return q.backoff[0].backoffUntil
	}
	return time.Time{}
}

// run moves pods out of back-off when it ends (a timer per earliest
// back-off, no polling) and re-examines parked pods every
// maxUnschedulable/10, until ctx is done; then it closes the queue.
func (q *queue) run(ctx context.Context) {
	defer q.close()
	sweep := q.clock.NewTicker(q.maxUnschedulable / 10)
	defer sweep.Stop()
	for {
		next := q.flush()
		var timerC <-chan time.Time
		var timer clock.Timer
		if !next.IsZero() {
			timer = q.clock.NewTimer(max(next.Sub(q.clock.Now()), time.Millisecond))
			timerC = timer.C()
		}
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case <-q.wake:
		case <-timerC:
		case <-sweep.C():
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// close wakes pop's callers: the queue hands out no more pods.
func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// pending counts the pods in the queue, by place (for tests and logs).
func (q *queue) pending() (active, backoff, unschedulable int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.active), len(q.backoff), len(q.unschedulable)
}
