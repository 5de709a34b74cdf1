package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"minik/internal/syncwait"
)

// Workers is the reconcile loop every controller shares, after
// sample-controller's processNextWorkItem: each key taken from the queue
// is reconciled once at a time; on success it is forgotten, on error it is
// requeued with the queue's rate limit, and a RequeueAfter error asks for
// it again after a delay. A reconcile that panics is recovered (as
// controller-runtime's RecoverPanic does): the panic is logged at error
// with its stack and counts as a failure, so the key is retried with
// back-off and the process goes on.
type Workers[T comparable] struct {
	// Queue holds the keys to reconcile.
	Queue workqueue.TypedRateLimitingInterface[T]
	// Reconcile brings the world in line with one key. Required.
	Reconcile func(ctx context.Context, key T) error
	// OnError is told of each failed reconcile, except while shutting
	// down; nil means nobody is.
	OnError func(key T, err error)
	// Synced are the informer caches to wait for (polled every few
	// milliseconds, see syncwait) before the first reconcile; Run returns
	// at once if ctx ends first.
	Synced []cache.InformerSynced
	// MaxRetries, when above zero, drops a key after that many failures in
	// a row (kube's controllers use 15); an event on the object brings it
	// back.
	MaxRetries int
	// Logger logs recovered panics; nil means slog.Default().
	Logger *slog.Logger
}

// PanicError is the failure of a reconcile that panicked.
type PanicError struct {
	// Value is what the reconcile panicked with.
	Value any
	// Stack is the panicking goroutine's stack.
	Stack []byte
}

func (p *PanicError) Error() string { return fmt.Sprintf("reconcile panicked: %v", p.Value) }

// RequeueAfter is an error asking for the key to be reconciled again after
// Delay, without counting as a failure (for example while a namespace's
// content is still going away).
type RequeueAfter struct{ Delay time.Duration }

func (r *RequeueAfter) Error() string { return "requeue after " + r.Delay.String() }

// Run waits for the Synced caches, then reconciles on n goroutines until ctx is done, then shuts the queue
// down and returns once every worker has stopped.
func (w Workers[T]) Run(ctx context.Context, n int) {
	if len(w.Synced) > 0 && !syncwait.Synced(ctx, w.Synced...) {
		w.Queue.ShutDown()
		return
	}
	n = max(n, 1)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w.next(ctx) {
			}
		}()
	}
	<-ctx.Done()
	w.Queue.ShutDown()
	wg.Wait()
}

// next reconciles one key; it returns false once the queue is shut down.
func (w Workers[T]) next(ctx context.Context) bool {
	key, quit := w.Queue.Get()
	if quit {
		return false
	}
	defer w.Queue.Done(key)
	err := w.reconcile(ctx, key)
	var again *RequeueAfter
	switch {
	case err == nil:
		w.Queue.Forget(key)
	case errors.As(err, &again):
		w.Queue.Forget(key)
		w.Queue.AddAfter(key, again.Delay)
	case ctx.Err() != nil:
		// Shutting down: the error is the cancellation's.
	default:
		if w.OnError != nil {
			w.OnError(key, err)
		}
		if w.MaxRetries > 0 && w.Queue.NumRequeues(key) >= w.MaxRetries {
			w.Queue.Forget(key)
			return true
		}
		w.Queue.AddRateLimited(key)
	}
	return true
}

// reconcile runs Reconcile, turning a panic into a *PanicError logged at
// error with its stack.
func (w Workers[T]) reconcile(ctx context.Context, key T) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		pe := &PanicError{Value: r, Stack: debug.Stack()}
		log := w.Logger
		if log == nil {
			log = slog.Default()
		}
		log.ErrorContext(ctx, "reconcile panicked; retrying with back-off", "key", key, "panic", fmt.Sprint(r), "stack", string(pe.Stack))
		err = pe
	}()
	return w.Reconcile(ctx, key)
}

// Deleted returns the object of an informer's delete notification, which
// is either the object itself or, when the watch missed the deletion, a
// tombstone holding its last known state.
func Deleted[T any](obj interface{}) (T, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	v, ok := obj.(T)
	return v, ok
}

// NewQueue returns the rate-limited work queue a controller keys its work
// on, named name and timed by clk (nil means the real clock). A nil
// limiter means client-go's default controller limiter (per-item
// exponential back-off from 5 ms, within an overall token bucket).
func NewQueue[T comparable](name string, clk clock.WithTicker, limiter workqueue.TypedRateLimiter[T]) workqueue.TypedRateLimitingInterface[T] {
	if limiter == nil {
		limiter = workqueue.DefaultTypedControllerRateLimiter[T]()
	}
	return workqueue.NewTypedRateLimitingQueueWithConfig(limiter, workqueue.TypedRateLimitingQueueConfig[T]{Name: name, Clock: clk})
}

// SlowStartBatch calls fn count times, in concurrent batches of
// initialBatchSize, then twice as many after each batch that fully
// succeeds. The first failing batch ends it. It returns how many calls
// succeeded and the first error. A quota or admission refusal thus costs
// one request, not count. kube's ReplicaSet and Job controllers
// create pods this way.
func SlowStartBatch(count, initialBatchSize int, fn func() error) (int, error) {
	remaining, successes := count, 0
	for batch := min(remaining, initialBatchSize); batch > 0; batch = min(2*batch, remaining) {
		errs := make(chan error, batch)
		var wg sync.WaitGroup
		for i := 0; i < batch; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := fn(); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		successes += batch - len(errs)
		if len(errs) > 0 {
			return successes, <-errs
		}
		remaining -= batch
	}
	return successes, nil
}
