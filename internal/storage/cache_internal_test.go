package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"minik/internal/etcd"
)

func newCacheTest(t testing.TB, cfg CacheConfig) (*Store, *Cacher, *etcd.Etcd) {
	t.Helper()
	e, err := etcd.Start(context.Background(), etcd.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	s := New(e.Client)
	c, err := NewCacher(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return s, c, e
}

const root = "/registry/things/"

// next reads the next change event (skipping progress), failing the test
// if the stream ends or ctx does.
func next(ctx context.Context, t *testing.T, ch <-chan Event) Event {
	t.Helper()
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatal("watch ended")
			}
			if ev.Type == Progress {
				continue
			}
			return ev
		case <-ctx.Done():
			t.Fatal("no event before the test's deadline")
		}
	}
}

func TestCacheListsAndGetsWhatEtcdDoes(t *testing.T) {
	s, c, _ := newCacheTest(t, CacheConfig{})
	ctx := context.Background()
	for i := range 30 {
		ns := []string{"a", "b", "c"}[i%3]
		if _, err := s.Create(ctx, Key("things", ns, fmt.Sprintf("o%02d", i)), []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	// Another resource's keys are not in this one's cache.
	if _, err := s.Create(ctx, "/registry/thingsx/a/z", []byte("z")); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{root, Key("things", "b", ""), Key("things", "none", "")} {
		for _, limit := range []int64{0, 1, 4, 10, 100} {
			o := ListOptions{Limit: limit}
			var fromCache, fromEtcd []string
			for page := 0; ; page++ {
				cr, err := c.List(ctx, root, prefix, o)
				if err != nil {
					t.Fatal(err)
				}
				er, err := s.List(ctx, prefix, o)
				if err != nil {
					t.Fatal(err)
				}
				if cr.Continue != er.Continue || cr.Remaining != er.Remaining || cr.Revision != er.Revision || len(cr.Items) != len(er.Items) {
					t.Fatalf("%s limit %d page %d: cache %q/%d/%d/%d, etcd %q/%d/%d/%d", prefix, limit, page,
						cr.Continue, cr.Remaining, cr.Revision, len(cr.Items), er.Continue, er.Remaining, er.Revision, len(er.Items))
				}
				for i := range cr.Items {
					fromCache = append(fromCache, fmt.Sprintf("%s=%s@%d", cr.Items[i].Key, cr.Items[i].Value, cr.Items[i].Revision))
					fromEtcd = append(fromEtcd, fmt.Sprintf("%s=%s@%d", er.Items[i].Key, er.Items[i].Value, er.Items[i].Revision))
				}
				if cr.Continue == "" {
					break
				}
				o.Continue = cr.Continue
			}
			if fmt.Sprint(fromCache) != fmt.Sprint(fromEtcd) {
				t.Fatalf("%s limit %d: cache %v, etcd %v", prefix, limit, fromCache, fromEtcd)
			}
		}
	}
	kv, err := c.Get(ctx, root, Key("things", "a", "o00"))
	if err != nil || string(kv.Value) != "0" {
		t.Fatalf("get: %v %+v", err, kv)
	}
	if _, err := c.Get(ctx, root, Key("things", "a", "missing")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get of a missing key: %v", err)
	}
	if _, err := c.List(ctx, root, root, ListOptions{Continue: "!!"}); !errors.Is(err, ErrBadContinue) {
		t.Fatalf("bad continue: %v", err)
	}
}

func TestCacheContinueTokensOutliveLaterWrites(t *testing.T) {
	s, c, _ := newCacheTest(t, CacheConfig{})
	ctx := context.Background()
	for i := range 6 {
		if _, err := s.Create(ctx, Key("things", "", fmt.Sprint(i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	first, err := c.List(ctx, root, root, ListOptions{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	kv, _ := s.Get(ctx, Key("things", "", "4"))
	if _, err := s.Update(ctx, kv.Key, kv.Revision, []byte("changed")); err != nil {
		t.Fatal(err)
	}
	// The cache has seen the update once a consistent read returns.
	if got, _ := c.Get(ctx, root, kv.Key); string(got.Value) != "changed" {
		t.Fatalf("consistent get after update: %q", got.Value)
	}
	rc := c.cacheFor(root)
	rc.mu.RLock()
	snaps := len(rc.snapshots)
	rc.mu.RUnlock()
	if snaps != 1 {
		t.Fatalf("snapshots kept for the continue token: %d", snaps)
	}
	second, err := c.List(ctx, root, root, ListOptions{Continue: first.Continue, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if second.Revision != first.Revision || len(second.Items) != 3 || string(second.Items[1].Value) != "v" {
		t.Fatalf("second page: %+v", second)
	}
}

func TestCacheReadsYourWritesUnderConcurrency(t *testing.T) {
	s, c, _ := newCacheTest(t, CacheConfig{})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				key := Key("things", fmt.Sprint(g), fmt.Sprint(i))
				rev, err := s.Create(ctx, key, []byte("1"))
				if err != nil {
					errs <- err
					return
				}
				kv, err := c.Get(ctx, root, key)
				if err != nil || kv.Revision < rev {
					errs <- fmt.Errorf("get %s after its create at %d: %+v %v", key, rev, kv, err)
					return
				}
				rev, err = s.Update(ctx, key, rev, []byte("2"))
				if err != nil {
					errs <- err
					return
				}
				res, err := c.List(ctx, root, Key("things", fmt.Sprint(g), ""), ListOptions{})
				if err != nil || res.Revision < rev || len(res.Items) != i+1 {
					errs <- fmt.Errorf("list after update of %s at %d: rev %d, %d items, %v", key, rev, res.Revision, len(res.Items), err)
					return
				}
				found := false
				for _, it := range res.Items {
					if it.Key == key {
						found = it.Revision == rev && string(it.Value) == "2"
					}
				}
				if !found {
					errs <- fmt.Errorf("list after update of %s at %d does not hold it", key, rev)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCacheWatchReplaysTheRingAndExpiresOlderRevisions(t *testing.T) {
	s, c, _ := newCacheTest(t, CacheConfig{Capacity: 4})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The cache starts before the writes.
	if _, err := c.List(ctx, root, root, ListOptions{}); err != nil {
		t.Fatal(err)
	}
	var revs []int64
	for i := range 8 {
		rev, err := s.Create(ctx, Key("things", "", fmt.Sprint(i)), []byte(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, rev)
	}
	if _, err := c.Get(ctx, root, Key("things", "", "7")); err != nil {
		t.Fatal(err)
	}
	ev := next(ctx, t, c.Watch(ctx, root, root, revs[1]))
	if ev.Type != Error || !errors.Is(ev.Err, ErrCompacted) || ev.Revision != revs[3] {
		t.Fatalf("watch from a revision out of the ring: %+v", ev)
	}
	ch := c.Watch(ctx, root, root, revs[4])
	for i := 5; i < 8; i++ {
		ev := next(ctx, t, ch)
		if ev.Type != Put || !ev.Created || ev.Revision != revs[i] || string(ev.Object.Value) != fmt.Sprint(i) {
			t.Fatalf("replayed event %d: %+v", i, ev)
		}
	}
	kv, _ := s.Get(ctx, Key("things", "", "2"))
	drev, err := s.Delete(ctx, kv.Key, kv.Revision)
	if err != nil {
		t.Fatal(err)
	}
	ev = next(ctx, t, ch)
	if ev.Type != Deleted || ev.Revision != drev || ev.Prev == nil || string(ev.Object.Value) != "2" {
		t.Fatalf("live delete: %+v", ev)
	}
}

func TestCacheEndsASlowWatcherAndNotTheOthers(t *testing.T) {
	// The fast watcher's reader must keep up within WatcherBlock: a
	// millisecond ended it too on a loaded machine (CI-like run), a
	// second does not, and the slow one still ends after it.
	s, c, _ := newCacheTest(t, CacheConfig{WatcherBuffer: 2, WatcherBlock: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	slow := c.Watch(ctx, root, root, 0)
	fast := c.Watch(ctx, root, root, 0)
	var got int
	done := make(chan struct{})
	go func() {
		defer close(done)
		for got < 20 {
			if next(ctx, t, fast).Type == Put {
				got++
			}
		}
	}()
	for i := range 20 {
		if _, err := s.Create(ctx, Key("things", "", fmt.Sprint(i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	n := 0
	for ev := range slow {
		if ev.Type == Put {
			n++
		}
	}
	if n >= 20 {
		t.Fatalf("the slow watcher got all %d events", n)
	}
}

func TestCacheThousandWatchersReceiveOneEvent(t *testing.T) {
	s, c, _ := newCacheTest(t, CacheConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n = 1000
	chans := make([]<-chan Event, n)
	for i := range chans {
		chans[i] = c.Watch(ctx, root, root, 0)
	}
	rev, err := s.Create(ctx, Key("things", "", "x"), []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	for i, ch := range chans {
		if ev := next(ctx, t, ch); ev.Revision != rev || ev.Type != Put {
			t.Fatalf("watcher %d: %+v", i, ev)
		}
	}
}

// state applies watch events to a map, as an informer would, and checks
// that revisions never go back.
type state struct {
	objs map[string]string
	last int64
}

func (st *state) apply(t *testing.T, ev Event) {
	t.Helper()
	if ev.Revision < st.last {
		t.Fatalf("event at %d after %d: %+v", ev.Revision, st.last, ev)
	}
	st.last = ev.Revision
	switch ev.Type {
	case Put:
		if _, had := st.objs[ev.Object.Key]; had == ev.Created {
			t.Fatalf("put of %s created=%v, had=%v", ev.Object.Key, ev.Created, had)
		}
		st.objs[ev.Object.Key] = string(ev.Object.Value)
	case Deleted:
		if _, had := st.objs[ev.Object.Key]; !had {
			t.Fatalf("delete of %s it did not have", ev.Object.Key)
		}
		delete(st.objs, ev.Object.Key)
	default:
		t.Fatalf("event %+v", ev)
	}
}

func TestCacheResumesItsWatchAndRelistsAfterCompaction(t *testing.T) {
	for _, compact := range []bool{false, true} {
		t.Run(fmt.Sprintf("compacted=%v", compact), func(t *testing.T) {
			s, c, e := newCacheTest(t, CacheConfig{})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for i := range 5 {
				if _, err := s.Create(ctx, Key("things", "", fmt.Sprint(i)), []byte("0")); err != nil {
					t.Fatal(err)
				}
			}
			res, err := c.List(ctx, root, root, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			st := &state{objs: map[string]string{}, last: res.Revision}
			for _, kv := range res.Items {
				st.objs[kv.Key] = string(kv.Value)
			}
			ch := c.Watch(ctx, root, root, res.Revision)

			// The cache's etcd watch ends; it resumes only after the writes
			// (and the compaction) below.
			rc := c.cacheFor(root)
			hold := make(chan struct{})
			rc.mu.Lock()
			rc.beforeResume = func() { <-hold }
			rc.mu.Unlock()
			rc.restart <- struct{}{}
			var changes int
			for i := range 5 {
				key := Key("things", "", fmt.Sprint(i))
				kv, _ := s.Get(ctx, key)
				switch i % 3 {
				case 0:
					_, err = s.Delete(ctx, key, kv.Revision)
				case 1:
					_, err = s.Update(ctx, key, kv.Revision, []byte("1"))
				default:
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				changes++
			}
			if _, err := s.Create(ctx, Key("things", "", "new"), []byte("n")); err != nil {
				t.Fatal(err)
			}
			changes++
			if compact {
				cur, _ := s.CurrentRevision(ctx)
				if _, err := e.Client.Compact(ctx, cur); err != nil {
					t.Fatal(err)
				}
			}
			rc.mu.Lock()
			rc.beforeResume = nil
			rc.mu.Unlock()
			close(hold)

			want, err := s.List(ctx, root, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for range changes {
				st.apply(t, next(ctx, t, ch))
			}
			wantObjs := map[string]string{}
			for _, kv := range want.Items {
				wantObjs[kv.Key] = string(kv.Value)
			}
			if fmt.Sprint(st.objs) != fmt.Sprint(wantObjs) {
				t.Fatalf("watcher's state %v, etcd's %v", st.objs, wantObjs)
			}
			got, err := c.List(ctx, root, root, ListOptions{})
			if err != nil || len(got.Items) != len(want.Items) {
				t.Fatalf("cache after resuming: %v %+v", err, got)
			}
			// Nothing more (no duplicate) arrives before the next change.
			rev, err := s.Create(ctx, Key("things", "", "last"), []byte("l"))
			if err != nil {
				t.Fatal(err)
			}
			if ev := next(ctx, t, ch); ev.Revision != rev {
				t.Fatalf("after the changes, %+v instead of the next create at %d", ev, rev)
			}
		})
	}
}

func TestCacheConsistentReadLearnsProgressFromEtcd(t *testing.T) {
	// No fallback to etcd within the test: the read must be served by
	// the cache, which can only learn of the other resource's writes
	// from etcd's progress notifications.
	s, c, _ := newCacheTest(t, CacheConfig{ReadWait: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Create(ctx, Key("things", "", "a"), []byte("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, root, Key("things", "", "a")); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		rev, err := s.Create(ctx, Key("others", "", fmt.Sprint(i)), []byte("b"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Get(ctx, root, Key("things", "", "a")); err != nil {
			t.Fatal(err)
		}
		rc := c.cacheFor(root)
		rc.mu.RLock()
		got := rc.rev
		rc.mu.RUnlock()
		if got < rev {
			t.Fatalf("cache at %d after a consistent read following a write at %d", got, rev)
		}
	}
}
