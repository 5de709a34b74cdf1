package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/btree"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"
)

// The watch cache, as kube-apiserver's cacher, over the byte-level Store:
// per resource (a key prefix such as /registry/pods/) one etcd watch feeds
// an ordered in-memory copy of the resource's keys and a bounded ring of
// its recent events. Watches are served from the ring and fanned out
// without an etcd watch each; gets and lists are served from the copy.
//
// Reads with no resourceVersion are consistent as kube's consistent reads
// from cache: the cache reads etcd's current revision (one point lookup),
// asks etcd for a progress notification on its watch stream, and waits
// until it has applied everything up to that revision; past ReadWait it
// reads etcd instead. Reads that accept any state (resourceVersion "0",
// NotOlderThan) are served at once. Exact revisions and continue tokens
// are served from the cache while it still holds that revision's state
// (the current one, or a snapshot kept for a continue token it issued),
// otherwise from etcd.
//
// A watch from a revision older than the ring is answered ErrCompacted
// (the API's 410 "too old resource version"), except a revision older than
// the cache itself (it started lazily after it), which is watched in etcd
// directly, as is one from a revision etcd has compacted (so that its
// 410 follows etcd's compaction as without the cache; one point read of
// etcd per watch from a past revision tells). A watcher whose buffer stays full for WatcherBlock is ended,
// as kube ends slow watchers instead of blocking the others; its client
// resumes from the last revision it saw.
//
// When the cache's etcd watch ends it resumes after the last revision it
// applied; when that revision was compacted it re-lists, sends its
// watchers the difference between what it had and what it read (so they
// neither miss nor repeat a change), and starts its ring afresh.

// CacheConfig configures a Cacher; zero fields take the defaults.
type CacheConfig struct {
	// Capacity is the most events a resource's ring keeps (1024).
	Capacity int
	// Sizes overrides Capacity by resource (the storage name, as
	// kube's --watch-cache-sizes "pods#5000").
	Sizes map[string]int
	// MaxBytes bounds the bytes of the events a ring keeps (32 MiB).
	MaxBytes int64
	// WatcherBuffer is how many events a watcher may have pending (256).
	WatcherBuffer int
	// WatcherBlock is how long a dispatch waits for a full watcher before
	// ending it (100 ms for all full watchers of one event together).
	WatcherBlock time.Duration
	// ReadWait is how long a read waits for the cache before it reads
	// etcd instead (3 s, as kube's consistent reads).
	ReadWait time.Duration
	// Snapshots is how many past states are kept for continue tokens (8).
	Snapshots int
	// Logger receives the cache's warnings.
	Logger *slog.Logger
}

// Cacher holds a watch cache per resource, each started on first use.
// It is safe for concurrent use.
type Cacher struct {
	store  *Store
	cfg    CacheConfig
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	caches map[string]*resourceCache
}

// NewCacher returns a cacher over store; Stop ends it.
func NewCacher(store *Store, cfg CacheConfig) (*Cacher, error) {
	if cfg.Capacity == 0 {
		cfg.Capacity = 1024
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = 32 << 20
	}
	if cfg.WatcherBuffer == 0 {
		cfg.WatcherBuffer = 256
	}
	if cfg.WatcherBlock == 0 {
		cfg.WatcherBlock = 100 * time.Millisecond
	}
	if cfg.ReadWait == 0 {
		cfg.ReadWait = 3 * time.Second
	}
	if cfg.Snapshots == 0 {
		cfg.Snapshots = 8
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Capacity < 1 || cfg.MaxBytes < 1 || cfg.WatcherBuffer < 1 || cfg.Snapshots < 1 {
		return nil, errors.New("storage: watch cache sizes must be positive")
	}
	for res, n := range cfg.Sizes {
		if n < 1 {
			return nil, fmt.Errorf("storage: watch cache size of %s must be positive, not %d", res, n)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Cacher{store: store, cfg: cfg, ctx: ctx, cancel: cancel, caches: map[string]*resourceCache{}}, nil
}

// Stop ends every cache's etcd watch and every watch served from them, and
// waits for their goroutines. It is safe to call more than once; reads
// after it go to etcd.
func (c *Cacher) Stop() {
	c.cancel()
	c.wg.Wait()
}

// watchContext is the context of a resource's etcd watch and its progress
// requests: metadata of their own put them on a gRPC watch stream of
// their own, as etcd answers a progress request only when every watch of
// the stream has caught up.
func (rc *resourceCache) watchContext(ctx context.Context) context.Context {
	return clientv3.WithRequireLeader(metadata.AppendToOutgoingContext(ctx, "minik-watch-cache", rc.root))
}

// requestProgress sends etcd a progress request each time one is asked
// for; asks arriving meanwhile are served by the next one.
func (rc *resourceCache) requestProgress(ctx context.Context) {
	wctx := rc.watchContext(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-rc.progress:
		}
		if err := rc.c.store.client.RequestProgress(wctx); err != nil && ctx.Err() == nil {
			rc.c.cfg.Logger.Debug("watch cache progress request", "prefix", rc.root, "err", err)
		}
	}
}

// cacheFor returns the cache of a resource, starting it on first use; nil
// once the cacher is stopped.
func (c *Cacher) cacheFor(root string) *resourceCache {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx.Err() != nil {
		return nil
	}
	rc := c.caches[root]
	if rc == nil {
		capacity := c.cfg.Capacity
		if n, ok := c.cfg.Sizes[strings.TrimSuffix(strings.TrimPrefix(root, "/registry/"), "/")]; ok {
			capacity = n
		}
		rc = newResourceCache(c, root, capacity)
		c.caches[root] = rc
		c.wg.Add(2)
		go func() { defer c.wg.Done(); rc.run(c.ctx) }()
		go func() { defer c.wg.Done(); rc.requestProgress(c.ctx) }()
	}
	return rc
}

// currentRevision reads etcd's revision with a point lookup of a key that
// does not exist.
func (c *Cacher) currentRevision(ctx context.Context) (int64, error) {
	r, err := c.store.client.Get(ctx, "/registry/\x00revision", clientv3.WithKeysOnly())
	if err != nil {
		return 0, fmt.Errorf("storage: read revision: %w", err)
	}
	return r.Header.Revision, nil
}

// Get returns the object at key, a key of the resource whose keys start
// with root, as of etcd's current revision.
func (c *Cacher) Get(ctx context.Context, root, key string) (KV, error) {
	rc := c.cacheFor(root)
	if rc == nil || !rc.waitConsistent(ctx) {
		return c.store.Get(ctx, key)
	}
	rc.mu.RLock()
	kv, ok := rc.tree.Get(&KV{Key: key})
	rc.mu.RUnlock()
	if !ok {
		return KV{}, ErrNotFound
	}
	return *kv, nil
}

// Cached returns the cache's copy of the object at key, a key of the
// resource whose keys start with root, without asking etcd: it may be
// stale. ok is false when the cache does not hold the key or is not
// ready. A write may start from it, as kube's GuaranteedUpdate starts
// from its watch cache's copy: its compare-and-swap fails if it is stale,
// and the writer then reads etcd.
func (c *Cacher) Cached(root, key string) (kv KV, ok bool) {
	rc := c.cacheFor(root)
	if rc == nil {
		return KV{}, false
	}
	select {
	case <-rc.ready:
	default:
		return KV{}, false
	}
	rc.mu.RLock()
	got, ok := rc.tree.Get(&KV{Key: key})
	rc.mu.RUnlock()
	if !ok {
		return KV{}, false
	}
	return *got, true
}

// List reads the objects under prefix, within the resource whose keys
// start with root, as Store.List does (the same pages, continue tokens and
// errors), from the cache when it can (see above).
func (c *Cacher) List(ctx context.Context, root, prefix string, o ListOptions) (ListResult, error) {
	rc := c.cacheFor(root)
	if rc == nil || !strings.HasPrefix(prefix, root) {
		return c.store.List(ctx, prefix, o)
	}
	start, rev, err := decodeContinue(prefix, o.Continue)
	if err != nil {
		return ListResult{}, err
	}
	if rev == 0 {
		rev = o.Revision
	}
	if rev > 0 {
		if res, ok := rc.listAt(prefix, start, rev, o.Limit); ok {
			return res, nil
		}
		return c.store.List(ctx, prefix, o)
	}
	if o.Stale && rc.reached(o.MinRevision) {
		res, _ := rc.listAt(prefix, start, 0, o.Limit)
		return res, nil
	}
	if !rc.waitConsistent(ctx) {
		return c.store.List(ctx, prefix, o)
	}
	res, _ := rc.listAt(prefix, start, 0, o.Limit)
	return res, nil
}

// Watch streams the changes under prefix, within the resource whose keys
// start with root, after revision fromRev (zero: from the cache's current
// revision), as Store.Watch does.
func (c *Cacher) Watch(ctx context.Context, root, prefix string, fromRev int64) <-chan Event {
	rc := c.cacheFor(root)
	if rc == nil || !strings.HasPrefix(prefix, root) || !rc.waitReady(ctx) {
		return c.store.Watch(ctx, prefix, fromRev)
	}
	return rc.watch(ctx, prefix, fromRev)
}

// progressRetry is how often a waiting read asks etcd for progress again.
const progressRetry = 20 * time.Millisecond

// byKey orders a resource's objects by key, as etcd's ranges are.
func byKey(a, b *KV) bool { return a.Key < b.Key }

// snapshot is a resource's state at a revision, kept for continue tokens.
type snapshot struct {
	rev  int64
	tree *btree.BTreeG[*KV]
}

// resourceCache is the watch cache of one resource.
type resourceCache struct {
	c        *Cacher
	root     string
	capacity int

	// ready is closed once the first list is in.
	ready chan struct{}

	mu   sync.RWMutex
	tree *btree.BTreeG[*KV]
	// rev: every change up to it is applied; lastChange is the revision of
	// the last change applied (the tree is the state at every revision in
	// [lastChange, rev]).
	rev, lastChange int64
	// firstRev is the revision of the first list; ringStart: the ring
	// holds every event after it.
	firstRev, ringStart int64
	ring                []*Event
	ringBytes           int64
	snapshots           []snapshot
	watchers            map[*cacheWatcher]struct{}
	// advanced is closed and replaced each time rev grows.
	advanced chan struct{}
	// progress asks requestProgress for one etcd progress request.
	progress chan struct{}

	// beforeResume, when set (tests), runs before the etcd watch resumes.
	beforeResume func()
	// restart, when sent to (tests), ends the current etcd watch.
	restart chan struct{}
}

func newResourceCache(c *Cacher, root string, capacity int) *resourceCache {
	return &resourceCache{
		c: c, root: root, capacity: capacity,
		ready:    make(chan struct{}),
		tree:     btree.NewG(32, byKey),
		watchers: map[*cacheWatcher]struct{}{},
		advanced: make(chan struct{}),
		progress: make(chan struct{}, 1),
		restart:  make(chan struct{}),
	}
}

// waitReady waits for the first list, at most ReadWait.
func (rc *resourceCache) waitReady(ctx context.Context) bool {
	select {
	case <-rc.ready:
		return true
	default:
	}
	t := time.NewTimer(rc.c.cfg.ReadWait)
	defer t.Stop()
	select {
	case <-rc.ready:
		return true
	case <-t.C:
	case <-ctx.Done():
	case <-rc.c.ctx.Done():
	}
	return false
}

// reached tells whether the cache is ready and has applied everything up
// to rev.
func (rc *resourceCache) reached(rev int64) bool {
	select {
	case <-rc.ready:
	default:
		return false
	}
	rc.mu.RLock()
	defer rc.mu.RUnlock()
	return rc.rev >= rev
}

// waitConsistent waits until the cache has applied everything up to
// etcd's current revision; false when it has not within ReadWait (or etcd
// could not be asked), and the read should go to etcd.
func (rc *resourceCache) waitConsistent(ctx context.Context) bool {
	if !rc.waitReady(ctx) {
		return false
	}
	target, err := rc.c.currentRevision(ctx)
	if err != nil {
		return false
	}
	var t *time.Timer
	var again *time.Ticker
	for {
		rc.mu.RLock()
		rev, advanced := rc.rev, rc.advanced
		rc.mu.RUnlock()
		if rev >= target {
			return true
		}
		if t == nil {
			t = time.NewTimer(rc.c.cfg.ReadWait)
			defer t.Stop()
			// etcd drops a progress request while the watch catches up:
			// ask again until the cache is there.
			again = time.NewTicker(progressRetry)
			defer again.Stop()
		}
		select {
		case rc.progress <- struct{}{}:
		default:
		}
		select {
		case <-advanced:
		case <-again.C:
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		case <-rc.c.ctx.Done():
			return false
		}
	}
}

// listAt reads a page from the state at rev (zero: the current one); false
// when the cache does not hold that state.
func (rc *resourceCache) listAt(prefix, start string, rev, limit int64) (ListResult, bool) {
	rc.mu.RLock()
	tree := rc.tree
	at := rc.rev
	if rev > 0 {
		if rev < rc.lastChange || rev > rc.rev {
			tree = nil
			for _, s := range rc.snapshots {
				if s.rev == rev {
					tree = s.tree
				}
			}
		}
		at = rev
	}
	if tree == nil {
		rc.mu.RUnlock()
		return ListResult{}, false
	}
	res := ListResult{Revision: at}
	more := false
	tree.AscendGreaterOrEqual(&KV{Key: start}, func(kv *KV) bool {
		if !strings.HasPrefix(kv.Key, prefix) {
			return false
		}
		if limit > 0 && int64(len(res.Items)) == limit {
			more = true
			res.Remaining++
			return true
		}
		res.Items = append(res.Items, *kv)
		return true
	})
	current := tree == rc.tree
	rc.mu.RUnlock()
	if !more {
		res.Remaining = 0
		return res, true
	}
	res.Continue = encodeContinue(at, prefix, res.Items[len(res.Items)-1].Key)
	if current {
		rc.keepSnapshot(at)
	}
	return res, true
}

// keepSnapshot keeps the current state for the continue tokens issued at
// rev, if it is still the state at rev.
func (rc *resourceCache) keepSnapshot(rev int64) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rev < rc.lastChange || rev > rc.rev {
		return
	}
	for _, s := range rc.snapshots {
		if s.rev == rev {
			return
		}
	}
	if len(rc.snapshots) == rc.c.cfg.Snapshots {
		rc.snapshots = append(rc.snapshots[:0], rc.snapshots[1:]...)
	}
	rc.snapshots = append(rc.snapshots, snapshot{rev: rev, tree: rc.tree.Clone()})
}

// run fills the cache and keeps it up to date until ctx is done; then it
// ends its watchers.
func (rc *resourceCache) run(ctx context.Context) {
	defer rc.endWatchers()
	// A closed etcd client ends the cache too.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(rc.c.store.client.Ctx(), cancel)
	defer stop()
	for ctx.Err() == nil {
		if err := rc.relist(ctx); err != nil {
			if ctx.Err() == nil {
				rc.c.cfg.Logger.Warn("watch cache list", "prefix", rc.root, "err", err)
			}
			if !sleepCtx(ctx, time.Second) {
				return
			}
			continue
		}
		// Resume after the last revision applied until the watch's start
		// revision is compacted; then list again.
		for {
			err := rc.follow(ctx)
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, ErrCompacted) {
				break
			}
			if err != nil {
				rc.c.cfg.Logger.Warn("watch cache watch ended; resuming", "prefix", rc.root, "err", err)
				if !sleepCtx(ctx, 100*time.Millisecond) {
					return
				}
			}
			rc.mu.RLock()
			hook := rc.beforeResume
			rc.mu.RUnlock()
			if hook != nil {
				hook()
			}
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// relist reads the resource at one revision and replaces the cache's
// state with it. After the first list, the watchers are sent the
// difference, and the ring starts afresh at the list's revision.
func (rc *resourceCache) relist(ctx context.Context) error {
	tree := btree.NewG(32, byKey)
	o := ListOptions{Limit: 500}
	var rev int64
	for {
		res, err := rc.c.store.List(ctx, rc.root, o)
		if err != nil {
			return err
		}
		for i := range res.Items {
			kv := res.Items[i]
			tree.ReplaceOrInsert(&kv)
		}
		rev = res.Revision
		if res.Continue == "" {
			break
		}
		o = ListOptions{Limit: 500, Continue: res.Continue}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	first := rc.firstRev == 0
	if first {
		rc.firstRev = rev
	} else {
		rc.dispatch(diff(rc.tree, tree, rev))
	}
	rc.tree = tree
	rc.ring, rc.ringBytes, rc.snapshots = nil, 0, nil
	rc.ringStart, rc.lastChange = rev, rev
	rc.advance(rev)
	if first {
		close(rc.ready)
	}
	return nil
}

// diff is the changes from state old to state cur (read at rev): puts at
// their objects' revisions in revision order, then deletions at rev.
func diff(old, cur *btree.BTreeG[*KV], rev int64) []*Event {
	var puts, dels []*Event
	cur.Ascend(func(kv *KV) bool {
		prev, ok := old.Get(kv)
		switch {
		case !ok:
			puts = append(puts, &Event{Type: Put, Object: *kv, Revision: kv.Revision, Created: true})
		case prev.Revision != kv.Revision:
			puts = append(puts, &Event{Type: Put, Object: *kv, Prev: prev, Revision: kv.Revision})
		}
		return true
	})
	old.Ascend(func(kv *KV) bool {
		if !cur.Has(kv) {
			obj := *kv
			obj.Revision = rev
			dels = append(dels, &Event{Type: Deleted, Object: obj, Prev: kv, Revision: rev})
		}
		return true
	})
	sort.SliceStable(puts, func(i, j int) bool { return puts[i].Revision < puts[j].Revision })
	return append(puts, dels...)
}

// advance records that every change up to rev is applied.
func (rc *resourceCache) advance(rev int64) {
	if rev < rc.rev {
		return
	}
	rc.rev = rev
	close(rc.advanced)
	rc.advanced = make(chan struct{})
}

// follow applies the etcd watch's changes after the cache's revision until
// the watch ends: ErrCompacted when that revision is compacted.
func (rc *resourceCache) follow(ctx context.Context) error {
	rc.mu.RLock()
	from := rc.rev
	rc.mu.RUnlock()
	wctx, cancel := context.WithCancel(rc.watchContext(ctx))
	defer cancel()
	wch := rc.c.store.client.Watch(wctx, rc.root, clientv3.WithPrefix(), clientv3.WithRev(from+1), clientv3.WithProgressNotify())
	for {
		var resp clientv3.WatchResponse
		var ok bool
		select {
		case resp, ok = <-wch:
		case <-rc.restart:
			return nil
		}
		if !ok {
			if err := ctx.Err(); err != nil {
				return err
			}
			return fmt.Errorf("watch %s: channel closed", rc.root)
		}
		if resp.CompactRevision != 0 {
			return ErrCompacted
		}
		if err := resp.Err(); err != nil {
			return fmt.Errorf("watch %s: %w", rc.root, err)
		}
		if resp.IsProgressNotify() {
			rc.progressTo(resp.Header.Revision)
			continue
		}
		rc.apply(resp.Events)
	}
}

// progressTo records etcd's word that every change up to rev was sent,
// and tells the watchers.
func (rc *resourceCache) progressTo(rev int64) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rev <= rc.rev {
		return
	}
	rc.advance(rev)
	ev := &Event{Type: Progress, Revision: rev}
	for w := range rc.watchers {
		select {
		case w.in <- ev:
		default:
		}
	}
}

// apply applies etcd events to the tree and the ring, and sends them to
// the watchers.
func (rc *resourceCache) apply(evs []*clientv3.Event) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make([]*Event, 0, len(evs))
	for _, ev := range evs {
		rev := ev.Kv.ModRevision
		if rev <= rc.rev {
			continue // already applied (a resumed watch)
		}
		key := string(ev.Kv.Key)
		prev, had := rc.tree.Get(&KV{Key: key})
		e := &Event{Revision: rev}
		if had {
			e.Prev = prev
		}
		switch ev.Type {
		case mvccpb.PUT:
			kv := &KV{Key: key, Value: ev.Kv.Value, Revision: rev}
			e.Type, e.Object, e.Created = Put, *kv, !had
			rc.tree.ReplaceOrInsert(kv)
		case mvccpb.DELETE:
			if !had {
				continue
			}
			rc.tree.Delete(prev)
			e.Type, e.Object = Deleted, *prev
			e.Object.Revision = rev
		}
		out = append(out, e)
		rc.lastChange = rev
		rc.advance(rev)
	}
	rc.dispatch(out)
}

// eventBytes is what an event holds in the ring.
func eventBytes(e *Event) int64 {
	n := int64(len(e.Object.Key) + len(e.Object.Value) + 64)
	if e.Prev != nil {
		n += int64(len(e.Prev.Value))
	}
	return n
}

// dispatch appends events to the ring and sends them to the watchers;
// rc.mu is held.
func (rc *resourceCache) dispatch(evs []*Event) {
	for _, e := range evs {
		rc.ring = append(rc.ring, e)
		rc.ringBytes += eventBytes(e)
	}
	drop := 0
	for len(rc.ring)-drop > rc.capacity || (rc.ringBytes > rc.c.cfg.MaxBytes && len(rc.ring)-drop > 1) {
		rc.ringBytes -= eventBytes(rc.ring[drop])
		rc.ringStart = rc.ring[drop].Revision
		drop++
	}
	if drop > 0 {
		n := copy(rc.ring, rc.ring[drop:])
		clear(rc.ring[n:])
		rc.ring = rc.ring[:n]
	}
	if len(evs) == 0 || len(rc.watchers) == 0 {
		return
	}
	var budget *time.Timer
	defer func() {
		if budget != nil {
			budget.Stop()
		}
	}()
	for _, e := range evs {
		for w := range rc.watchers {
			if e.Revision <= w.from || !strings.HasPrefix(e.Object.Key, w.prefix) {
				continue
			}
			select {
			case w.in <- e:
				continue
			default:
			}
			if budget == nil {
				budget = time.NewTimer(rc.c.cfg.WatcherBlock)
			}
			select {
			case w.in <- e:
			case <-budget.C:
				// Out of patience for this event: end every full watcher.
				budget.Reset(0)
				rc.endWatcher(w)
			}
		}
	}
}

// endWatcher ends a watcher: it sends what it has, then its stream ends.
// rc.mu is held.
func (rc *resourceCache) endWatcher(w *cacheWatcher) {
	delete(rc.watchers, w)
	close(w.in)
}

func (rc *resourceCache) endWatchers() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for w := range rc.watchers {
		rc.endWatcher(w)
	}
}

// compacted tells whether etcd has compacted the revision after fromRev,
// which a watch from fromRev replays: the ring outlives etcd's history,
// but a client resuming from a compacted revision is told to re-list, as
// it is without the cache.
func (rc *resourceCache) compacted(ctx context.Context, fromRev int64) bool {
	rc.mu.RLock()
	past := fromRev < rc.rev
	rc.mu.RUnlock()
	if !past {
		return false
	}
	_, err := rc.c.store.client.Get(ctx, rc.root, clientv3.WithRev(fromRev+1), clientv3.WithKeysOnly())
	return errors.Is(err, rpctypes.ErrCompacted)
}

// cacheWatcher is one watch served from a ring.
type cacheWatcher struct {
	prefix string
	// from: events at or before it are not for this watcher.
	from int64
	in   chan *Event
}

// watch serves a watch from the ring (see the package's comment above).
func (rc *resourceCache) watch(ctx context.Context, prefix string, fromRev int64) <-chan Event {
	if fromRev > 0 && rc.compacted(ctx, fromRev) {
		// etcd's history ends after fromRev: its watch answers as an
		// etcd watch does (ErrCompacted with the compacted revision).
		return rc.c.store.Watch(ctx, prefix, fromRev)
	}
	rc.mu.Lock()
	if fromRev == 0 {
		fromRev = rc.rev
	}
	if fromRev < rc.ringStart {
		start, first := rc.ringStart, rc.firstRev
		rc.mu.Unlock()
		if fromRev < first {
			return rc.c.store.Watch(ctx, prefix, fromRev)
		}
		out := make(chan Event, 1)
		out <- Event{Type: Error, Err: ErrCompacted, Revision: start}
		close(out)
		return out
	}
	var replay []*Event
	i := sort.Search(len(rc.ring), func(i int) bool { return rc.ring[i].Revision > fromRev })
	for _, e := range rc.ring[i:] {
		if strings.HasPrefix(e.Object.Key, prefix) {
			replay = append(replay, e)
		}
	}
	w := &cacheWatcher{prefix: prefix, from: fromRev, in: make(chan *Event, rc.c.cfg.WatcherBuffer)}
	rc.watchers[w] = struct{}{}
	rc.mu.Unlock()

	out := make(chan Event)
	go func() {
		defer close(out)
		send := func(e *Event) bool {
			select {
			case out <- *e:
				return true
			case <-ctx.Done():
				return false
			}
		}
		defer func() {
			rc.mu.Lock()
			delete(rc.watchers, w)
			rc.mu.Unlock()
		}()
		for _, e := range replay {
			if !send(e) {
				return
			}
		}
		for {
			select {
			case e, ok := <-w.in:
				if !ok || !send(e) {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
