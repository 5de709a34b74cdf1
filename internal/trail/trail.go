// Package trail is minik's write trail: every request that asks the API
// server to change an object (who, verb, resource and subresource,
// namespace and name, the object's uid, resourceVersion and controller
// owner after the write, the response code and a failure's Status, when,
// and the writing manager's fields as a managedFields-style set), and the
// watches each change was sent to (the first delivery per identity, from
// api.TrailWatchSink). It is what `minikctl journey` reads to tell a
// rollout's story.
//
// The API server hands it each write once answered (api.TrailSink); the
// trail keeps the last Config.Capacity records in a ring in memory and
// appends them, from a background flusher, to a JSON-lines file in
// Config.Dir once FlushDelay old (so that their deliveries go with them),
// rotated into one previous file at Config.MaxFileBytes, so the disk
// holds at most twice that. On start it reloads the files: the
// trail survives a restart, up to the flusher's last interval.
//
// It is served, read-only, as the namespaced resource records of
// trail.minik.dev/v1alpha1 (api.LocalResource: get and list with label and
// field selectors, limit and continue), behind RBAC like any resource; the
// ClusterRole of Roles aggregates get, list and watch of it into view,
// edit and admin.
//
// Left out, because they are heartbeats rather than changes anyone
// follows: Lease writes and Node status renewals. Dry runs change nothing
// and are not recorded. With several minikd on one etcd, each records the
// writes it served.
package trail

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"minik/internal/api"
	"minik/internal/registry"
	"minik/internal/tables"
	v1 "minik/internal/trail/v1alpha1"
)

// The API's names, for the server's side.
type (
	// Record is one recorded write.
	Record = v1.Record
	// ObjectRef names the object a write wrote.
	ObjectRef = v1.ObjectRef
)

// GroupVersion, Resource and the labels are the API's.
var GroupVersion = v1.GroupVersion

// Resource is the plural name of records.
const (
	Resource      = v1.Resource
	LabelResource = v1.LabelResource
	LabelVerb     = v1.LabelVerb
)

func init() {
	if err := v1.AddToScheme(api.Scheme); err != nil {
		panic(fmt.Sprintf("trail.minik.dev types: %v", err))
	}
}

// Defaults of Config.
const (
	DefaultCapacity      = 50000
	DefaultMaxFileBytes  = 32 << 20
	DefaultFlushInterval = 200 * time.Millisecond
)

// File names in Config.Dir.
const (
	currentFile  = "trail.jsonl"
	previousFile = "trail.1.jsonl"
)

// Config configures a Trail.
type Config struct {
	// Dir is where the trail is persisted; empty keeps it in memory only.
	Dir string
	// Capacity is the number of records kept in memory; zero means
	// DefaultCapacity.
	Capacity int
	// MaxFileBytes is the size at which the file is rotated; zero means
	// DefaultMaxFileBytes.
	MaxFileBytes int64
	// FlushInterval is how often records are appended to the file; zero
	// means DefaultFlushInterval.
	FlushInterval time.Duration
	// Logger logs; nil means slog.Default().
	Logger *slog.Logger
}

// Trail records writes and serves them. Build it with New; Start persists
// them; it is safe for concurrent use.
type Trail struct {
	cfg Config

	mu     sync.Mutex
	ring   []*Record // oldest first from start
	start  int
	n      int
	byName map[string]*Record
	byRV   map[int64]*Record
	// early are deliveries of changes not recorded yet, by revision,
	// oldest first in earlyOrder.
	early      map[int64][]v1.Delivery
	earlyOrder []int64
	seq        uint64
	pending    []*Record

	fileMu sync.Mutex // serializes appends
	size   int64      // bytes in the current file
}

// New validates and defaults cfg and loads what Dir holds.
func New(cfg Config) (*Trail, error) {
	if cfg.Capacity < 0 || cfg.MaxFileBytes < 0 || cfg.FlushInterval < 0 {
		return nil, errors.New("trail: capacity, file size and interval must not be negative")
	}
	if cfg.Capacity == 0 {
		cfg.Capacity = DefaultCapacity
	}
	if cfg.MaxFileBytes == 0 {
		cfg.MaxFileBytes = DefaultMaxFileBytes
	}
	if cfg.FlushInterval == 0 {
		cfg.FlushInterval = DefaultFlushInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	t := &Trail{cfg: cfg, ring: make([]*Record, cfg.Capacity), byName: map[string]*Record{}, byRV: map[int64]*Record{}, early: map[int64][]v1.Delivery{}}
	if cfg.Dir != "" {
		if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("trail dir %s: %w", cfg.Dir, err)
		}
		for _, name := range []string{previousFile, currentFile} {
			if err := t.load(filepath.Join(cfg.Dir, name)); err != nil {
				return nil, err
			}
		}
		if fi, err := os.Stat(filepath.Join(cfg.Dir, currentFile)); err == nil {
			t.size = fi.Size()
		}
	}
	return t, nil
}

// load adds the records of one file; a torn last line (a crash during an
// append) is skipped.
func (t *Trail) load(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("trail: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			continue
		}
		if n, err := strconv.ParseUint(rec.Name, 10, 64); err == nil && n > t.seq {
			t.seq = n
		}
		t.add(&rec)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("trail: read %s: %w", path, err)
	}
	return nil
}

// add puts rec in the ring, evicting the oldest. t.mu is held (or t is not
// shared yet).
func (t *Trail) add(rec *Record) {
	if t.n == len(t.ring) {
		old := t.ring[t.start]
		delete(t.byName, old.Name)
		if rv, err := strconv.ParseInt(old.ObjectRef.ResourceVersion, 10, 64); err == nil && t.byRV[rv] == old {
			delete(t.byRV, rv)
		}
		t.ring[t.start] = rec
		t.start = (t.start + 1) % len(t.ring)
	} else {
		t.ring[(t.start+t.n)%len(t.ring)] = rec
		t.n++
	}
	t.byName[rec.Name] = rec
	if rec.Code < 300 {
		if rv, err := strconv.ParseInt(rec.ObjectRef.ResourceVersion, 10, 64); err == nil {
			t.byRV[rv] = rec
			for _, d := range t.early[rv] {
				rec.Deliveries = addDelivery(rec.Deliveries, d)
			}
			delete(t.early, rv)
		}
	}
}

// maxDeliveries bounds the deliveries kept per record.
const maxDeliveries = 32

// Delivered records that the change of resourceVersion rv was sent to
// user's watch; it implements api.TrailWatchSink. Only the first delivery
// per identity is kept. A delivery after the record reached the disk is
// kept in memory only.
func (t *Trail) Delivered(user string, rv int64, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := v1.Delivery{User: user, Time: metav1.NewMicroTime(at)}
	rec := t.byRV[rv]
	if rec == nil {
		// A watch may be sent a change before its write's response
		// ends and the write is recorded: keep it for the record.
		if _, ok := t.early[rv]; !ok {
			if len(t.earlyOrder) == maxEarly {
				delete(t.early, t.earlyOrder[0])
				t.earlyOrder = t.earlyOrder[1:]
			}
			t.earlyOrder = append(t.earlyOrder, rv)
		}
		t.early[rv] = addDelivery(t.early[rv], d)
		return
	}
	rec.Deliveries = addDelivery(rec.Deliveries, d)
}

// maxEarly bounds the deliveries kept for writes not recorded yet (and
// for changes the trail never records: heartbeats, writes of other
// minikd).
const maxEarly = 4096

// addDelivery adds d unless its identity has one or the list is full.
func addDelivery(ds []v1.Delivery, d v1.Delivery) []v1.Delivery {
	if len(ds) >= maxDeliveries {
		return ds
	}
	for _, x := range ds {
		if x.User == d.User {
			return ds
		}
	}
	return append(ds, d)
}

// skipped tells the heartbeats the trail leaves out.
func skipped(w *api.WriteRecord) bool {
	switch {
	case w.APIGroup == "coordination.k8s.io" && w.Resource == "leases":
		return true
	case w.APIGroup == "" && w.Resource == "nodes" && w.Subresource == "status":
		return true
	}
	return false
}

// Observe records one write; it implements api.TrailSink.
func (t *Trail) Observe(w *api.WriteRecord) {
	if skipped(w) {
		return
	}
	rec := recordOf(w)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	rec.Name = fmt.Sprintf("%012d", t.seq)
	t.add(rec)
	if t.cfg.Dir != "" {
		t.pending = append(t.pending, rec)
	}
}

// recordOf turns an answered write into a Record.
func recordOf(w *api.WriteRecord) *Record {
	rec := &Record{
		TypeMeta:  metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: "Record"},
		UserAgent: w.UserAgent,
		Verb:      w.Verb,
		ObjectRef: ObjectRef{
			APIGroup: w.APIGroup, APIVersion: w.APIVersion, Resource: w.Resource,
			Subresource: w.Subresource, Namespace: w.Namespace, Name: w.Name,
		},
		Code: int32(w.Code),
		Time: metav1.NewMicroTime(w.Received),
	}
	if w.User != nil {
		rec.User = w.User.Name
		rec.Groups = append([]string(nil), w.User.Groups...)
	}
	switch obj := w.Object.(type) {
	case nil:
	case *metav1.Status:
		if obj.Status != metav1.StatusSuccess {
			rec.Reason, rec.Message = obj.Reason, obj.Message
		}
		if d := obj.Details; d != nil {
			if rec.ObjectRef.Name == "" {
				rec.ObjectRef.Name = d.Name
			}
			rec.ObjectRef.UID = d.UID
		}
	default:
		if m, err := meta.Accessor(obj); err == nil && w.Code < 300 {
			if rec.ObjectRef.Name == "" {
				rec.ObjectRef.Name = m.GetName()
			}
			rec.ObjectRef.UID = m.GetUID()
			rec.ObjectRef.ResourceVersion = m.GetResourceVersion()
			rec.ObjectRef.Generation = m.GetGeneration()
			if ref := metav1.GetControllerOfNoCopy(m); ref != nil {
				rec.Owner = ref.DeepCopy()
			}
			rec.Manager, rec.Fields = managerFields(m.GetManagedFields(), w.FieldManager, w.Subresource)
		}
	}
	rec.CreationTimestamp = metav1.NewTime(w.Received)
	rec.Namespace = rec.ObjectRef.Namespace
	rec.Labels = map[string]string{
		LabelResource: v1.ResourceLabel(w.APIGroup, w.Resource),
		LabelVerb:     w.Verb,
	}
	return rec
}

// managerFields picks the managedFields entry this write made: the named
// manager's, or else the most recent entry for the subresource written.
func managerFields(entries []metav1.ManagedFieldsEntry, manager, subresource string) (string, *metav1.FieldsV1) {
	var best *metav1.ManagedFieldsEntry
	for i := range entries {
		e := &entries[i]
		if manager != "" {
			if e.Manager == manager && e.Subresource == subresource {
				best = e
			}
			continue
		}
		if e.Subresource != subresource {
			continue
		}
		if best == nil || e.Time != nil && (best.Time == nil || !e.Time.Before(best.Time)) {
			best = e
		}
	}
	if best == nil {
		return "", nil
	}
	return best.Manager, best.FieldsV1.DeepCopy()
}

// Start appends the records to the file every FlushInterval (those older
// than FlushDelay) until ctx is done, then all; it blocks until then. Without Dir it only waits.
func (t *Trail) Start(ctx context.Context) error {
	if t.cfg.Dir == "" {
		<-ctx.Done()
		return nil
	}
	tick := time.NewTicker(t.cfg.FlushInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return t.Flush()
		case now := <-tick.C:
			if err := t.flush(now.Add(-FlushDelay)); err != nil {
				t.cfg.Logger.Error("trail not persisted", "err", err)
			}
		}
	}
}

// FlushDelay is how old a record must be before the periodic flush
// writes it, so that its watch deliveries are on disk with it.
const FlushDelay = time.Second

// Flush appends every record not yet persisted, rotating the file when it
// has grown past MaxFileBytes.
func (t *Trail) Flush() error { return t.flush(time.Time{}) }

// flush appends the records not yet persisted that arrived before cutoff
// (zero: all).
func (t *Trail) flush(cutoff time.Time) error {
	if t.cfg.Dir == "" {
		return nil
	}
	t.mu.Lock()
	n := 0
	for n < len(t.pending) && (cutoff.IsZero() || t.pending[n].Time.Time.Before(cutoff)) {
		n++
	}
	var buf []byte
	for _, rec := range t.pending[:n] {
		b, err := json.Marshal(rec)
		if err != nil {
			t.mu.Unlock()
			return fmt.Errorf("trail: encode record %s: %w", rec.Name, err)
		}
		buf = append(append(buf, b...), '\n')
	}
	t.pending = t.pending[n:]
	t.mu.Unlock()
	if len(buf) == 0 {
		return nil
	}
	cur := filepath.Join(t.cfg.Dir, currentFile)
	t.fileMu.Lock()
	defer t.fileMu.Unlock()
	if t.size > 0 && t.size+int64(len(buf)) > t.cfg.MaxFileBytes {
		if err := os.Rename(cur, filepath.Join(t.cfg.Dir, previousFile)); err != nil {
			return fmt.Errorf("trail: rotate: %w", err)
		}
		t.size = 0
	}
	f, err := os.OpenFile(cur, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("trail: %w", err)
	}
	n2, err := f.Write(buf)
	t.size += int64(n2)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("trail: append: %w", err)
	}
	return nil
}

// Len is the number of records in memory.
func (t *Trail) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// Get returns one record by namespace and name.
func (t *Trail) Get(_ context.Context, namespace, name string) (runtime.Object, error) {
	t.mu.Lock()
	rec := t.byName[name]
	t.mu.Unlock()
	if rec == nil || rec.Namespace != namespace {
		return nil, apierrors.NewNotFound(GroupVersion.WithResource(Resource).GroupResource(), name)
	}
	return rec.DeepCopy(), nil
}

// List returns the records of a namespace ("": all), oldest first.
func (t *Trail) List(_ context.Context, namespace string) ([]runtime.Object, error) {
	t.mu.Lock()
	out := make([]runtime.Object, 0, t.n)
	for i := 0; i < t.n; i++ {
		rec := t.ring[(t.start+i)%len(t.ring)]
		if namespace == "" || rec.Namespace == namespace {
			out = append(out, rec)
		}
	}
	t.mu.Unlock()
	// Copies, so that serving (which sets kinds) never touches the ring.
	for i, o := range out {
		out[i] = o.(*Record).DeepCopy()
	}
	if namespace == "" {
		sort.SliceStable(out, func(i, j int) bool {
			return out[i].(*Record).Namespace < out[j].(*Record).Namespace
		})
	}
	return out, nil
}

// Resources are the group's resources for api.Config.Local, answered by t.
func (t *Trail) Resources() []api.LocalResource {
	return []api.LocalResource{{Resource: Descriptor(), Get: t.Get, List: t.List}}
}

// Descriptor describes records for routing, discovery, OpenAPI and tables.
func Descriptor() *registry.Resource {
	return &registry.Resource{
		GroupVersion: GroupVersion, Name: Resource, Kind: "Record", Namespaced: true,
		Strategy: registry.Strategy{Table: recordTable, Fields: recordFields},
	}
}

// recordFields are the field-selector fields of a record.
func recordFields(obj runtime.Object) fields.Set {
	rec, ok := obj.(*Record)
	if !ok {
		return fields.Set{}
	}
	owner := ""
	if rec.Owner != nil {
		owner = string(rec.Owner.UID)
	}
	return fields.Set{
		"verb":                  rec.Verb,
		"user":                  rec.User,
		"objectRef.resource":    rec.ObjectRef.Resource,
		"objectRef.subresource": rec.ObjectRef.Subresource,
		"objectRef.name":        rec.ObjectRef.Name,
		"objectRef.uid":         string(rec.ObjectRef.UID),
		"owner.uid":             owner,
		"code":                  strconv.Itoa(int(rec.Code)),
	}
}

// recordTable is the table of records: when, who, what, and the answer.
var recordTable = &tables.TableConvertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "Sequence number of the write"},
		{Name: "Time", Type: "string", Description: "When the request arrived"},
		{Name: "User", Type: "string", Description: "Whom the request acted as"},
		{Name: "Verb", Type: "string", Description: "The request's verb"},
		{Name: "Object", Type: "string", Description: "The object written"},
		{Name: "Code", Type: "integer", Description: "The response's status code"},
	},
	Row: func(obj runtime.Object) ([]interface{}, error) {
		rec, ok := obj.(*Record)
		if !ok {
			return nil, fmt.Errorf("trail table: unexpected %T", obj)
		}
		what := v1.ResourceLabel(rec.ObjectRef.APIGroup, rec.ObjectRef.Resource)
		if rec.ObjectRef.Subresource != "" {
			what += "/" + rec.ObjectRef.Subresource
		}
		if rec.ObjectRef.Name != "" {
			what += " " + rec.ObjectRef.Name
		}
		return []interface{}{rec.Name, rec.Time.UTC().Format("15:04:05.000"), rec.User, rec.Verb, what, int64(rec.Code)}, nil
	},
}
