package storage_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	clocktesting "k8s.io/utils/clock/testing"

	"minik/internal/storage"
)

// stallingWatcher is an etcd client's Watcher with an injected fault: while
// stalled, no watch of the client gets a response (they are held, not
// lost), as when the client's watch stream is stuck while reads and
// writes still work.
type stallingWatcher struct {
	clientv3.Watcher

	mu      sync.Mutex
	release chan struct{} // non-nil while stalled
}

func (w *stallingWatcher) stall() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.release == nil {
		w.release = make(chan struct{})
	}
}

func (w *stallingWatcher) resume() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.release != nil {
		close(w.release)
		w.release = nil
	}
}

func (w *stallingWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	in := w.Watcher.Watch(ctx, key, opts...)
	out := make(chan clientv3.WatchResponse)
	go func() {
		defer close(out)
		for resp := range in {
			w.mu.Lock()
			release := w.release
			w.mu.Unlock()
			if release != nil {
				select {
				case <-release:
				case <-ctx.Done():
					return
				}
			}
			select {
			case out <- resp:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// eventually steps the fake clock by step whenever the monitor waits on
// it, until cond holds; it fails the test after a generous real-time
// bound (a loaded machine), never waiting a fixed time.
func eventually(t *testing.T, what string, clk *clocktesting.FakeClock, step time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		if clk.HasWaiters() {
			clk.Step(step)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestWatchMonitorTurnsRedWhenTheWatchStreamStopsDelivering(t *testing.T) {
	_, e := newStore(t)
	faulty := &stallingWatcher{Watcher: e.Client.Watcher}
	e.Client.Watcher = faulty
	s := storage.New(e.Client)

	const interval, stallAfter = time.Second, 10 * time.Second
	clk := clocktesting.NewFakeClock(time.Now())
	m := s.NewWatchMonitor(storage.WatchMonitorConfig{Interval: interval, StallAfter: stallAfter, Clock: clk})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	defer func() { cancel(); <-done }()

	// Healthy: heartbeats are written and delivered; the checks pass all
	// along, however long the clock runs.
	// The fake clock moves on only once the stream has delivered what was
	// written: a loaded machine may take real time to deliver, and the
	// clock must not outrun it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := m.Status()
		if err := m.CheckWatch(ctx); err != nil {
			t.Fatalf("healthy stream: %v", err)
		}
		if st.Written >= 3 && st.Delivered >= st.Written {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for three heartbeats delivered: %+v", st)
		}
		if st.Delivered >= st.Written && clk.HasWaiters() {
			clk.Step(interval)
		}
		time.Sleep(time.Millisecond)
	}
	if err := m.CheckEtcd(ctx); err != nil {
		t.Fatalf("etcd check on a serving etcd: %v", err)
	}

	// The stream stops delivering; writes go on. The check turns red once
	// the first undelivered heartbeat is StallAfter old, not before.
	faulty.stall()
	stalledAt := m.Status().Written
	var firstLate time.Time
	eventually(t, "the etcd-watch check to fail", clk, interval, func() bool {
		st := m.Status()
		if firstLate.IsZero() && st.Written > stalledAt && st.Delivered < st.Written {
			firstLate = clk.Now()
		}
		return m.CheckWatch(ctx) != nil
	})
	err := m.CheckWatch(ctx)
	if firstLate.IsZero() || clk.Since(firstLate) < stallAfter-interval {
		t.Fatalf("check failed %s after the first undelivered heartbeat, want about %s: %v", clk.Since(firstLate), stallAfter, err)
	}
	if !strings.Contains(err.Error(), "watch stream has delivered nothing past revision") {
		t.Fatalf("check error %q does not say the stream stalled", err)
	}
	if err := m.CheckEtcd(ctx); err != nil {
		t.Fatalf("etcd still takes writes, but its check says %v", err)
	}

	// The stream delivers again: the held events arrive and the check
	// passes.
	faulty.resume()
	eventually(t, "the etcd-watch check to pass again", clk, interval, func() bool { return m.CheckWatch(ctx) == nil })
}

func TestWatchMonitorEtcdCheckFailsWhenEtcdTakesNoWrites(t *testing.T) {
	s, e := newStore(t)
	const interval, stallAfter = time.Second, 10 * time.Second
	clk := clocktesting.NewFakeClock(time.Now())
	m := s.NewWatchMonitor(storage.WatchMonitorConfig{Interval: interval, StallAfter: stallAfter, Clock: clk})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	defer func() { cancel(); <-done }()
	eventually(t, "a heartbeat delivered", clk, interval, func() bool { st := m.Status(); return st.Written > 0 && st.Delivered >= st.Written })

	// The client is closed: every write fails from now on.
	e.Client.Close()
	eventually(t, "the etcd check to fail", clk, interval, func() bool { return m.CheckEtcd(ctx) != nil })
}
