package etcd

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// liveWatch is a watch the burst test keeps open: the highest revision it
// has delivered.
type liveWatch struct {
	name string
	seen atomic.Int64
}

// TestWatchesKeepDeliveringThroughBurstsOfOpensAndCancels reproduces the
// conformance suite's load that stopped every watch of minikd (issue 18):
// hundreds of watches opened and cancelled at once, from many goroutines,
// on the one gRPC stream all of the API server's watches share, while
// writers keep thousands of events flowing. Every watch still open must
// deliver the writes made after it opened.
//
// Over etcd's in-process adapter (v3client.New) the client's stream loop,
// sending a create or cancel, and the server's send loop, sending events,
// wait on each other forever; over a real gRPC connection they do not.
func TestWatchesKeepDeliveringThroughBurstsOfOpensAndCancels(t *testing.T) {
	e, err := Start(context.Background(), Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	const (
		rounds     = 6
		goroutines = 50
		perRound   = 10 // watches each goroutine opens per round
		keepEvery  = 10 // one in keepEvery stays open, the rest are cancelled
		writers    = 4
		prefix     = "/burst/"
	)
	// Every watch carries the metadata the storage layer's do
	// (WithRequireLeader), so they share one gRPC stream as theirs do.
	base, stopAll := context.WithCancel(clientv3.WithRequireLeader(context.Background()))
	defer stopAll()

	var writes, delivered atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; base.Err() == nil; n++ {
				if _, err := e.Client.Put(base, fmt.Sprintf("%sw%d/%d", prefix, w, n%200), fmt.Sprint(n)); err == nil {
					writes.Add(1)
				}
			}
		}()
	}
	// Closing the client ends the watches even when their stream is stuck.
	defer func() { stopAll(); e.Close(); wg.Wait() }()

	var (
		mu   sync.Mutex
		live []*liveWatch
	)
	watch := func(ctx context.Context, lw *liveWatch) {
		for resp := range e.Client.Watch(ctx, prefix, clientv3.WithPrefix()) {
			delivered.Add(int64(len(resp.Events)))
			for _, ev := range resp.Events {
				if rev := ev.Kv.ModRevision; rev > lw.seen.Load() {
					lw.seen.Store(rev)
				}
			}
		}
	}
	for round := 0; round < rounds; round++ {
		var burst sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			burst.Add(1)
			go func() {
				defer burst.Done()
				for i := 0; i < perRound; i++ {
					lw := &liveWatch{name: fmt.Sprintf("round %d goroutine %d watch %d", round, g, i)}
					if i%keepEvery == 0 {
						mu.Lock()
						live = append(live, lw)
						mu.Unlock()
						wg.Add(1)
						go func() { defer wg.Done(); watch(base, lw) }()
						continue
					}
					// Opened, then cancelled as soon as etcd confirms it: a
					// create and a cancel on the shared stream.
					ctx, cancel := context.WithCancel(base)
					wch := e.Client.Watch(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCreatedNotify())
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range wch {
							cancel()
						}
					}()
				}
			}()
		}
		opened := make(chan struct{})
		go func() { burst.Wait(); close(opened) }()
		select {
		case <-opened:
		case <-time.After(60 * time.Second):
			t.Fatalf("round %d: opening %d watches did not finish in 60s (%d writes so far): the watch stream is stuck",
				round, goroutines*perRound, writes.Load())
		}
		// A write after every watch of the round opened; each open watch
		// (from this round and earlier ones) must get to it.
		r, err := e.Client.Put(context.Background(), prefix+"marker", fmt.Sprint(round))
		if err != nil {
			t.Fatal(err)
		}
		marker := r.Header.Revision
		deadline := time.Now().Add(60 * time.Second)
		for {
			mu.Lock()
			var stalled []string
			for _, lw := range live {
				if lw.seen.Load() < marker {
					stalled = append(stalled, lw.name)
				}
			}
			mu.Unlock()
			if len(stalled) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d of %d open watches stopped short of revision %d (%d writes so far), e.g. %v",
					round, len(stalled), len(live), marker, writes.Load(), stalled[0])
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Logf("%d rounds of %d opens, %d watches open at the end, %d writes, %d events delivered",
		rounds, goroutines*perRound, len(live), writes.Load(), delivered.Load())
}
