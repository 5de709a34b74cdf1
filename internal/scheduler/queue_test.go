package scheduler

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func newTestQueue() (*queue, *clocktesting.FakeClock) {
	c := clocktesting.NewFakeClock(time.Unix(1000, 0))
	return newQueue(c, time.Second, 10*time.Second, 5*time.Minute), c
}

// popName pops a pod that must be there.
func popName(t *testing.T, q *queue) *corev1.Pod {
	t.Helper()
	active, _, _ := q.pending()
	if active == 0 {
		t.Fatal("no active pod to pop")
	}
	p, _, ok := q.pop()
	if !ok {
		t.Fatal("queue closed")
	}
	return p
}

func where(q *queue, p *corev1.Pod) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	qp := q.pods[p.UID]
	if qp == nil {
		return "gone"
	}
	return [...]string{"active", "backoff", "unschedulable", "in flight"}[qp.place]
}

func TestQueue(t *testing.T) {
	t.Run("higher priority pops first, then the oldest", func(t *testing.T) {
		q, c := newTestQueue()
		high := int32(10)
		a, b := testPod("a"), testPod("b")
		urgent := testPod("urgent", func(p *corev1.Pod) { p.Spec.Priority = &high })
		q.add(a)
		c.Step(time.Millisecond)
		q.add(b)
		q.add(urgent)
		for _, want := range []string{"urgent", "a", "b"} {
			if got := popName(t, q); got.Name != want {
				t.Fatalf("popped %s, want %s", got.Name, want)
			}
		}
	})
	t.Run("a failed pod is parked until an event concerning its filters", func(t *testing.T) {
		q, c := newTestQueue()
		p := testPod("web")
		q.add(p)
		popName(t, q)
		q.failed(p.UID, pluginNodeResourcesFit)
		if w := where(q, p); w != "unschedulable" {
			t.Fatalf("pod is %s, want unschedulable", w)
		}
		q.moveAll(pluginInterPodAffinity)
		if w := where(q, p); w != "unschedulable" {
			t.Fatalf("after an affinity event the pod is %s, want unschedulable", w)
		}
		q.moveAll(pluginNodeResourcesFit)
		if w := where(q, p); w != "backoff" {
			t.Fatalf("after a resources event within the back-off the pod is %s, want backoff", w)
		}
		c.Step(time.Second)
		q.flush()
		if w := where(q, p); w != "active" {
			t.Fatalf("after the back-off the pod is %s, want active", w)
		}
	})
	t.Run("a node event moves every parked pod", func(t *testing.T) {
		q, c := newTestQueue()
		p := testPod("web")
		q.add(p)
		popName(t, q)
		q.failed(p.UID, pluginInterPodAffinity)
		c.Step(2 * time.Second)
		q.moveAll(0)
		if w := where(q, p); w != "active" {
			t.Fatalf("pod is %s, want active", w)
		}
	})
	t.Run("a pod whose attempt overlapped a relevant event backs off instead of parking", func(t *testing.T) {
		q, _ := newTestQueue()
		p := testPod("web")
		q.add(p)
		popName(t, q)
		q.moveAll(pluginNodeResourcesFit)
		q.failed(p.UID, pluginNodeResourcesFit)
		if w := where(q, p); w != "backoff" {
			t.Fatalf("pod is %s, want backoff", w)
		}
	})
	t.Run("an irrelevant event during the attempt still parks the pod", func(t *testing.T) {
		q, _ := newTestQueue()
		p := testPod("web")
		q.add(p)
		popName(t, q)
		q.moveAll(pluginInterPodAffinity)
		q.failed(p.UID, pluginNodeAffinity)
		if w := where(q, p); w != "unschedulable" {
			t.Fatalf("pod is %s, want unschedulable", w)
		}
	})
	t.Run("back-off doubles from 1s up to 10s", func(t *testing.T) {
		q, _ := newTestQueue()
		var got []time.Duration
		for attempts := 1; attempts <= 6; attempts++ {
			got = append(got, q.backoffFor(attempts))
		}
		want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("back-offs = %v, want %v", got, want)
			}
		}
	})
	t.Run("a status-only update leaves a parked pod parked, a spec change moves it", func(t *testing.T) {
		q, c := newTestQueue()
		p := testPod("web", requests("4", ""))
		q.add(p)
		popName(t, q)
		q.failed(p.UID, pluginNodeResourcesFit)
		c.Step(2 * time.Second)
		withCondition := p.DeepCopy()
		withCondition.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse}}
		q.add(withCondition)
		if w := where(q, p); w != "unschedulable" {
			t.Fatalf("after a status update the pod is %s, want unschedulable", w)
		}
		smaller := withCondition.DeepCopy()
		smaller.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		q.add(smaller)
		if w := where(q, p); w != "active" {
			t.Fatalf("after a spec update the pod is %s, want active", w)
		}
	})
	t.Run("a pod parked too long is tried again", func(t *testing.T) {
		q, c := newTestQueue()
		p := testPod("web")
		q.add(p)
		popName(t, q)
		q.failed(p.UID, pluginNodeAffinity)
		c.Step(5 * time.Minute)
		q.flush()
		if w := where(q, p); w != "active" {
			t.Fatalf("pod is %s, want active", w)
		}
	})
	t.Run("a removed pod is gone from every place", func(t *testing.T) {
		q, _ := newTestQueue()
		p := testPod("web")
		q.add(p)
		q.remove(p.UID)
		if a, b, u := q.pending(); a+b+u != 0 || where(q, p) != "gone" {
			t.Fatalf("queue holds %d/%d/%d pods after remove", a, b, u)
		}
	})
	t.Run("a closed queue wakes pop", func(t *testing.T) {
		q, _ := newTestQueue()
		done := make(chan bool)
		go func() {
			_, _, ok := q.pop()
			done <- ok
		}()
		q.close()
		if ok := <-done; ok {
			t.Fatal("pop returned a pod from a closed, empty queue")
		}
	})
}
