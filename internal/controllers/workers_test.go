package controllers

import (
	"errors"
	"sync/atomic"
	"testing"
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
