package server

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
)

// trace records what the parts of a test do, in order.
type trace struct {
	mu     sync.Mutex
	events []string
}

func (t *trace) add(e string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, e)
}

func (t *trace) get() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.events)
}

// holding is a part that records its start, is ready, and records its
// stop once ctx is done.
func holding(tr *trace, name string) component {
	return component{name: name, start: func(ctx context.Context, ready func()) error {
		tr.add("start " + name)
		ready()
		<-ctx.Done()
		tr.add("stop " + name)
		return nil
	}}
}

func TestSupervisorStartsInOrderAndStopsInReverse(t *testing.T) {
	tr := &trace{}
	ctx, cancel := context.WithCancel(context.Background())
	// The last part ends the run once every part before it is ready.
	last := component{name: "c", start: func(pctx context.Context, ready func()) error {
		tr.add("start c")
		ready()
		cancel()
		<-pctx.Done()
		tr.add("stop c")
		return nil
	}}
	err := supervise(ctx, []component{holding(tr, "a"), holding(tr, "b"), last}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("supervise = %v after a clean stop, want nil", err)
	}
	want := []string{"start a", "start b", "start c", "stop c", "stop b", "stop a"}
	if got := tr.get(); !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

func TestSupervisorStopsWhatStartedWhenAPartCannotStart(t *testing.T) {
	tr := &trace{}
	boom := errors.New("listen on 127.0.0.1:6443: address already in use")
	failing := component{name: "b", start: func(context.Context, func()) error { return boom }}
	never := component{name: "c", start: func(context.Context, func()) error {
		tr.add("start c")
		return nil
	}}
	err := supervise(context.Background(), []component{holding(tr, "a"), failing, never}, slog.New(slog.DiscardHandler))
	if !errors.Is(err, boom) {
		t.Fatalf("supervise = %v, want the failing part's error", err)
	}
	if got, want := tr.get(), []string{"start a", "stop a"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

func TestSupervisorStopsWhenARequiredPartStopsAfterReady(t *testing.T) {
	tr := &trace{}
	stopped := component{name: "b", start: func(_ context.Context, ready func()) error {
		ready()
		return nil
	}}
	err := supervise(context.Background(), []component{holding(tr, "a"), stopped}, slog.New(slog.DiscardHandler))
	if err == nil || err.Error() != "b stopped" {
		t.Fatalf("supervise = %v, want %q", err, "b stopped")
	}
	if got, want := tr.get(), []string{"start a", "stop a"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

func TestSupervisorLogsAnOptionalPartThatStopsAndRunsOn(t *testing.T) {
	tr := &trace{}
	var logs bytes.Buffer
	h := &errorSeen{Handler: slog.NewTextHandler(&logs, nil), seen: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	optional := component{name: "scheduler", optional: true, start: func(_ context.Context, ready func()) error {
		ready()
		return errors.New("lost the API")
	}}
	// The last part ends the run once the optional one's failure is
	// logged.
	last := component{name: "c", start: func(pctx context.Context, ready func()) error {
		ready()
		select {
		case <-h.seen:
			cancel()
		case <-pctx.Done():
		}
		<-pctx.Done()
		return nil
	}}
	if err := supervise(ctx, []component{holding(tr, "a"), optional, last}, slog.New(h)); err != nil {
		t.Fatalf("supervise = %v, want nil: an optional part's failure does not stop minikd", err)
	}
	if !strings.Contains(logs.String(), `msg="component stopped" component=scheduler err="lost the API"`) {
		t.Fatalf("log %q does not name the stopped part and its error", logs.String())
	}
	if got, want := tr.get(), []string{"start a", "stop a"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

// errorSeen closes seen once it has handled a record at level Error.
type errorSeen struct {
	slog.Handler
	once sync.Once
	seen chan struct{}
}

func (h *errorSeen) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level == slog.LevelError {
		h.once.Do(func() { close(h.seen) })
	}
	return err
}
