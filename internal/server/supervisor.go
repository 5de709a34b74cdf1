package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// A component is one long-running part of minikd: etcd, the API server,
// a controller manager, the nodes… Server.Start declares them in order
// and supervise runs them.
type component struct {
	// name names the part in logs and errors.
	name string
	// start runs the part until ctx is done and returns nil after a clean
	// stop. It calls ready once the part serves what the parts after it
	// need (at most once; later calls do nothing): the next part starts
	// only then. Returning before ready means the part could not start,
	// which stops minikd.
	start func(ctx context.Context, ready func()) error
	// optional parts run beside the API server: once ready, an error they
	// return is logged and minikd runs on without them, as it always ran
	// on without a controller manager that stopped. A part that is not
	// optional stopping on its own stops minikd.
	optional bool
}

// readyUntilDone is the tail of a part with nothing left to run once it
// has done its work (written a file, taken a lock): it is ready, and holds
// what it has until ctx is done.
func readyUntilDone(ctx context.Context, ready func()) error {
	ready()
	<-ctx.Done()
	return nil
}

// running is a started component.
type running struct {
	component
	stop  context.CancelFunc
	ready chan struct{}
	done  chan struct{}
	err   error
}

func (r *running) isReady() bool {
	select {
	case <-r.ready:
		return true
	default:
		return false
	}
}

// failure is what r returning on its own, while minikd runs, means: nil
// for an optional part that was ready (logged), else the error that stops
// minikd.
func (r *running) failure(log *slog.Logger) error {
	if r.optional && r.isReady() {
		if r.err != nil {
			log.Error("component stopped", "component", r.name, "err", r.err)
		}
		return nil
	}
	if r.err != nil {
		return r.err
	}
	return fmt.Errorf("%s stopped", r.name)
}

// supervise starts parts in order, each once the one before is ready,
// and runs them until ctx is done or one fails (see component.optional);
// then it stops the started ones in reverse order, each once the one
// after it has returned, so that the first part (etcd, the data dir's
// lock) stops last. It returns the failure, or nil when ctx ended it.
// Every part gets a context of its own, cancelled only by this reverse
// stop; values of ctx pass to it.
func supervise(ctx context.Context, parts []component, log *slog.Logger) error {
	exited := make(chan *running, len(parts))
	var started []*running
	var err error
	// wait waits for until, or for ctx to end (false), or for a part's
	// failure (false, err set); a part that returns once ctx is done is
	// stopping, not failing.
	wait := func(until <-chan struct{}) bool {
		for {
			select {
			case <-until:
				return true
			case <-ctx.Done():
				return false
			case r := <-exited:
				if ctx.Err() != nil {
					return false
				}
				if err = r.failure(log); err != nil {
					return false
				}
			}
		}
	}
	for _, c := range parts {
		pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		r := &running{component: c, stop: cancel, ready: make(chan struct{}), done: make(chan struct{})}
		started = append(started, r)
		var once sync.Once
		t0 := time.Now()
		markReady := func() {
			once.Do(func() {
				close(r.ready)
				log.Debug("component ready", "component", r.name, "took", time.Since(t0))
			})
		}
		go func() {
			defer func() { close(r.done); exited <- r }()
			r.err = c.start(pctx, markReady)
		}()
		if !wait(r.ready) {
			break
		}
	}
	if err == nil && ctx.Err() == nil {
		wait(nil)
	}
	for i := len(started) - 1; i >= 0; i-- {
		started[i].stop()
		<-started[i].done
	}
	return err
}
