package controllers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
)

func TestSlowStartBatch(t *testing.T) {
	t.Run("batches double while every call succeeds", func(t *testing.T) {
		var calls atomic.Int32
		n, err := SlowStartBatch(10, 1, func() error { calls.Add(1); return nil })
		if n != 10 || err != nil || calls.Load() != 10 {
			t.Fatalf("got %d successes, %d calls, err %v; want 10, 10, nil", n, calls.Load(), err)
		}
	})
	t.Run("a refusal stops after its batch, so 10 refused creations cost one request", func(t *testing.T) {
		var calls atomic.Int32
		refused := errors.New("forbidden")
		n, err := SlowStartBatch(10, 1, func() error { calls.Add(1); return refused })
		if n != 0 || !errors.Is(err, refused) || calls.Load() != 1 {
			t.Fatalf("got %d successes, %d calls, err %v; want 0, 1, forbidden", n, calls.Load(), err)
		}
	})
	t.Run("a refusal in the third batch leaves the rest untried", func(t *testing.T) {
		var calls atomic.Int32
		n, err := SlowStartBatch(10, 1, func() error {
			if calls.Add(1) > 4 {
				return errors.New("quota exceeded")
			}
			return nil
		})
		// Batches of 1, 2, then 4 of which 3 fail: 7 calls, 4 successes.
		if n != 4 || err == nil || calls.Load() != 7 {
			t.Fatalf("got %d successes, %d calls, err %v; want 4, 7, an error", n, calls.Load(), err)
		}
	})
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestWorkersRecoverAPanickingReconcile(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	queue := NewQueue("panics", nil, workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, 10*time.Millisecond))
	var logs syncBuffer
	var calls atomic.Int32
	var failures []error
	var mu sync.Mutex
	reconciled := make(chan string, 10)
	w := Workers[string]{
		Queue: queue,
		Reconcile: func(_ context.Context, key string) error {
			if key == "bad" && calls.Add(1) == 1 {
				var m map[string]int
				//lint:ignore SA5000 the panic is the point of the test
				m["boom"]++ // a nil map: the kind of bug a bad object meets
			}
			reconciled <- key
			return nil
		},
		OnError: func(key string, err error) {
			mu.Lock()
			defer mu.Unlock()
			failures = append(failures, err)
		},
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx, 1) // one worker: it must outlive the panic
	}()
	queue.Add("bad")
	select {
	case key := <-reconciled:
		if key != "bad" {
			t.Fatalf("reconciled %q first, want bad", key)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the panicking key was not reconciled again")
	}
	queue.Add("good")
	select {
	case key := <-reconciled:
		if key != "good" {
			t.Fatalf("reconciled %q, want good", key)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the worker stopped after a panic")
	}
	cancel()
	<-done

	mu.Lock()
	defer mu.Unlock()
	var pe *PanicError
	if len(failures) != 1 || !errors.As(failures[0], &pe) || !strings.Contains(pe.Error(), "assignment to entry in nil map") {
		t.Fatalf("OnError was told %v, want one PanicError", failures)
	}
	var rec struct {
		Level, Msg, Key, Panic, Stack string
	}
	if err := json.Unmarshal([]byte(strings.SplitN(logs.String(), "\n", 2)[0]), &rec); err != nil {
		t.Fatalf("log %q: %v", logs.String(), err)
	}
	if rec.Level != "ERROR" || rec.Key != "bad" || !strings.Contains(rec.Stack, "workers_test.go") {
		t.Fatalf("logged %+v, want an error naming the key with the stack", rec)
	}
}
