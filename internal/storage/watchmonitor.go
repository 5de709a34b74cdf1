package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// HeartbeatKey is the key WatchMonitor writes. Every minikd sharing an etcd
// writes the same key; each waits for its own writes' revisions.
const HeartbeatKey = "/minik/watch-heartbeat"

// WatchMonitorConfig configures a WatchMonitor.
type WatchMonitorConfig struct {
	// Interval is how often a heartbeat is written; zero means 2 seconds.
	Interval time.Duration
	// StallAfter is how long a written heartbeat may go undelivered before
	// the watch stream counts as stalled; zero means 10 seconds.
	StallAfter time.Duration
	// Clock tells the time and ticks; nil means the real clock.
	Clock clock.WithTicker
	// Logger logs stalls (at error) and recoveries; nil means
	// slog.Default().
	Logger *slog.Logger
}

// WatchMonitor tells whether the store's watches still deliver: it writes
// HeartbeatKey every Interval and watches it through Store.Watch, on the
// gRPC stream every other watch of the store shares, so a stream that
// stops delivering (while etcd still answers reads and writes) shows as a
// heartbeat that never arrives. Build it with Store.NewWatchMonitor and run
// Start; CheckWatch and CheckEtcd are readiness checks.
type WatchMonitor struct {
	store *Store
	cfg   WatchMonitorConfig
	clock clock.WithTicker
	log   *slog.Logger

	mu sync.Mutex
	// pending are the heartbeats written and not yet delivered, oldest
	// first.
	pending []heartbeat
	// written and delivered are the revisions of the last heartbeat
	// written and the highest one the watch delivered (or reported
	// progress to).
	written, delivered int64
	// lastWrite is when a heartbeat write last succeeded; writeErr is the
	// error of the last failed one since then.
	lastWrite time.Time
	writeErr  error
	// stalled is set while a stall is logged, to log it once.
	stalled bool
}

type heartbeat struct {
	rev  int64
	sent time.Time
}

// maxPending bounds the heartbeats remembered while none is delivered; the
// oldest one is what decides a stall.
const maxPending = 64

// NewWatchMonitor returns a monitor of s's watches; Start runs it.
func (s *Store) NewWatchMonitor(cfg WatchMonitorConfig) *WatchMonitor {
	if cfg.Interval <= 0 {
		cfg.Interval = 2 * time.Second
	}
	if cfg.StallAfter <= 0 {
		cfg.StallAfter = 10 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &WatchMonitor{store: s, cfg: cfg, clock: cfg.Clock, log: cfg.Logger, lastWrite: cfg.Clock.Now()}
}

// WatchStatus is a monitor's progress.
type WatchStatus struct {
	// Written is the revision of the last heartbeat written.
	Written int64
	// Delivered is the highest revision the monitor's watch delivered.
	Delivered int64
}

// Status returns the monitor's progress.
func (m *WatchMonitor) Status() WatchStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	return WatchStatus{Written: m.written, Delivered: m.delivered}
}

// Start writes heartbeats and watches them until ctx is done; it returns
// nil then. A watch that ends (etcd lost its leader, the connection
// broke) is opened again from the last revision it delivered.
func (m *WatchMonitor) Start(ctx context.Context) error {
	from, err := m.store.CurrentRevision(ctx)
	for err != nil {
		// etcd is not serving yet: CheckEtcd says so; try again each tick.
		m.wroteHeartbeat(0, err)
		if !m.wait(ctx) {
			return nil
		}
		from, err = m.store.CurrentRevision(ctx)
	}
	m.mu.Lock()
	m.delivered = from
	m.mu.Unlock()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		m.watch(ctx, from)
	}()
	for m.wait(ctx) {
		m.beat(ctx)
		m.logTransitions()
	}
	return nil
}

// wait waits one Interval; false once ctx is done.
func (m *WatchMonitor) wait(ctx context.Context) bool {
	t := m.clock.NewTicker(m.cfg.Interval)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// beat writes one heartbeat.
func (m *WatchMonitor) beat(ctx context.Context) {
	wctx, cancel := context.WithTimeout(ctx, m.cfg.StallAfter)
	defer cancel()
	r, err := m.store.client.Put(wctx, HeartbeatKey, m.clock.Now().UTC().Format(time.RFC3339Nano))
	if err != nil {
		if ctx.Err() == nil {
			m.wroteHeartbeat(0, fmt.Errorf("write %s: %w", HeartbeatKey, err))
		}
		return
	}
	m.wroteHeartbeat(r.Header.Revision, nil)
}

func (m *WatchMonitor) wroteHeartbeat(rev int64, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.writeErr = err
		return
	}
	m.writeErr = nil
	m.lastWrite = m.clock.Now()
	m.written = rev
	if rev > m.delivered && len(m.pending) < maxPending {
		m.pending = append(m.pending, heartbeat{rev: rev, sent: m.lastWrite})
	}
}

// watch follows HeartbeatKey from revision from until ctx is done,
// reopening the watch when it ends.
func (m *WatchMonitor) watch(ctx context.Context, from int64) {
	for ctx.Err() == nil {
		for ev := range m.store.Watch(ctx, HeartbeatKey, from) {
			if ev.Type == Error {
				if errors.Is(ev.Err, ErrCompacted) {
					// History is gone: start over from now, forgetting
					// what was pending (its events are lost, not late).
					rev, err := m.store.CurrentRevision(ctx)
					if err == nil {
						m.reset(rev)
						from = rev
					}
				}
				break
			}
			m.deliveredTo(ev.Revision)
			from = max(from, ev.Revision)
		}
		// The watch ended (etcd's error, or ctx): open it again after a
		// tick, not in a tight loop.
		if !m.wait(ctx) {
			return
		}
	}
}

func (m *WatchMonitor) deliveredTo(rev int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if rev <= m.delivered {
		return
	}
	m.delivered = rev
	i := 0
	for i < len(m.pending) && m.pending[i].rev <= rev {
		i++
	}
	m.pending = m.pending[i:]
}

func (m *WatchMonitor) reset(rev int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.delivered = max(m.delivered, rev)
	m.pending = nil
}

// CheckWatch is the etcd-watch readiness check: an error once a heartbeat
// written StallAfter ago has still not been delivered.
func (m *WatchMonitor) CheckWatch(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.watchErr()
}

func (m *WatchMonitor) watchErr() error {
	if len(m.pending) == 0 {
		return nil
	}
	oldest := m.pending[0]
	if late := m.clock.Since(oldest.sent); late >= m.cfg.StallAfter {
		return fmt.Errorf("storage: the watch stream has delivered nothing past revision %d for %s, though heartbeat revision %d was written (%d heartbeats undelivered)",
			m.delivered, late.Truncate(time.Second), oldest.rev, len(m.pending))
	}
	return nil
}

// CheckEtcd is the etcd readiness check: an error once no heartbeat could
// be written for StallAfter.
func (m *WatchMonitor) CheckEtcd(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.writeErr != nil && m.clock.Since(m.lastWrite) >= m.cfg.StallAfter {
		return fmt.Errorf("storage: no write to etcd succeeded for %s: %w", m.clock.Since(m.lastWrite).Truncate(time.Second), m.writeErr)
	}
	return nil
}

// logTransitions logs a stall once, at error, and its end.
func (m *WatchMonitor) logTransitions() {
	m.mu.Lock()
	err := m.watchErr()
	was := m.stalled
	m.stalled = err != nil
	delivered := m.delivered
	m.mu.Unlock()
	switch {
	case err != nil && !was:
		m.log.Error("etcd watch stream stalled: watches deliver no events", "err", err)
	case err == nil && was:
		m.log.Info("etcd watch stream delivers again", "revision", delivered)
	}
}
