package leaderelect_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"minik/internal/leaderelect"
	"minik/internal/testserver"
)

func TestTimingDefaultsToKubesAndRefusesWhatCannotWork(t *testing.T) {
	if got := (leaderelect.Timing{}).WithDefaults(); got != (leaderelect.Timing{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}) {
		t.Fatalf("defaults %+v, want kube's 15s/10s/2s", got)
	}
	for _, bad := range []leaderelect.Timing{
		{LeaseDuration: 5 * time.Second},
		{RenewDeadline: 2 * time.Second, RetryPeriod: 2 * time.Second},
	} {
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "must be longer") {
			t.Errorf("Validate(%+v) = %v, want an error", bad, err)
		}
	}
}

// TestOneRunAtATimeAndTheOtherTakesOver runs two candidates for one Lease:
// only one runs; when it stops (releasing the Lease) the other runs.
func TestOneRunAtATimeAndTheOtherTakesOver(t *testing.T) {
	srv := testserver.Start(t)
	cs := srv.Client(t)
	timing := leaderelect.Timing{LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 200 * time.Millisecond}
	var running, overlaps atomic.Int32
	leading := make(chan string, 2)
	start := func(identity string) (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = leaderelect.Run(ctx, cs, "test-lease", identity, timing, slog.Default(), func(ctx context.Context) error {
				if running.Add(1) > 1 {
					overlaps.Add(1)
				}
				defer running.Add(-1)
				leading <- identity
				<-ctx.Done()
				return nil
			})
		}()
		return func() { cancel(); <-done }
	}
	next := func() string {
		select {
		case id := <-leading:
			return id
		case <-time.After(30 * time.Second):
			t.Fatal("no candidate took the Lease in 30s")
			return ""
		}
	}
	stops := map[string]func(){"a": start("a"), "b": start("b")}
	first := next()
	stops[first]()
	second := next()
	if second == first {
		t.Fatalf("%s led twice", first)
	}
	for id, stop := range stops {
		if id != first {
			stop()
		}
	}
	if n := overlaps.Load(); n != 0 {
		t.Fatalf("%d runs overlapped", n)
	}
}
