// Package storage keeps API objects in etcd as kube-apiserver does: one key
// per object under /registry, the complete object as the value, the etcd
// mod revision as its resourceVersion, compare-and-swap transactions for
// writes and etcd watches for change streams.
//
// The store deals in encoded objects; the API layer encodes and decodes.
package storage

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"minik/internal/promstats"
)

// Errors returned by the store; the API layer maps them to Status reasons.
var (
	// ErrNotFound: the key does not exist.
	ErrNotFound = errors.New("storage: not found")
	// ErrExists: create found the key already present.
	ErrExists = errors.New("storage: already exists")
	// ErrConflict: the key's mod revision is not the expected one.
	ErrConflict = errors.New("storage: revision conflict")
	// ErrCompacted: the requested revision has been compacted away.
	ErrCompacted = errors.New("storage: revision compacted")
	// ErrFutureRevision: the requested revision is newer than etcd's.
	ErrFutureRevision = errors.New("storage: revision in the future")
	// ErrBadContinue: a continue token could not be decoded.
	ErrBadContinue = errors.New("storage: invalid continue token")
)

// KV is one stored object: its key, encoded value and mod revision.
type KV struct {
	Key      string
	Value    []byte
	Revision int64
}

// Store is an etcd-backed object store. It is safe for concurrent use.
type Store struct {
	client *clientv3.Client
}

// New returns a store over an etcd client.
func New(client *clientv3.Client) *Store {
	return &Store{client: client}
}

// Key returns the etcd key of an object: /registry/<resource>/<namespace>/<name>,
// without the namespace part for cluster-scoped objects. An empty name gives
// the prefix of the collection (with a trailing slash).
func Key(resource, namespace, name string) string {
	var b strings.Builder
	b.WriteString("/registry/")
	b.WriteString(resource)
	b.WriteByte('/')
	if namespace != "" {
		b.WriteString(namespace)
		b.WriteByte('/')
	}
	b.WriteString(name)
	return b.String()
}

// Create stores value at key if the key does not exist and returns the new
// revision, or ErrExists.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	start := time.Now()
	r, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(value))).
		Commit()
	promstats.ObserveEtcd("create", key, err, time.Since(start))
	if err != nil {
		return 0, fmt.Errorf("storage: create %s: %w", key, err)
	}
	if !r.Succeeded {
		return 0, ErrExists
	}
	return r.Header.Revision, nil
}

// Get returns the object at key, or ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) (KV, error) {
	start := time.Now()
	r, err := s.client.Get(ctx, key)
	promstats.ObserveEtcd("get", key, err, time.Since(start))
	if err != nil {
		return KV{}, fmt.Errorf("storage: get %s: %w", key, err)
	}
	if len(r.Kvs) == 0 {
		return KV{}, ErrNotFound
	}
	kv := r.Kvs[0]
	return KV{Key: string(kv.Key), Value: kv.Value, Revision: kv.ModRevision}, nil
}

// Update replaces the object at key if its mod revision is still rev and
// returns the new revision; ErrConflict if it changed, ErrNotFound if it is
// gone.
func (s *Store) Update(ctx context.Context, key string, rev int64, value []byte) (int64, error) {
	start := time.Now()
	r, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
		Then(clientv3.OpPut(key, string(value))).
		Else(clientv3.OpGet(key, clientv3.WithKeysOnly())).
		Commit()
	promstats.ObserveEtcd("update", key, err, time.Since(start))
	if err != nil {
		return 0, fmt.Errorf("storage: update %s: %w", key, err)
	}
	if !r.Succeeded {
		if len(r.Responses) > 0 && len(r.Responses[0].GetResponseRange().Kvs) == 0 {
			return 0, ErrNotFound
		}
		return 0, ErrConflict
	}
	return r.Header.Revision, nil
}

// Delete removes the object at key if its mod revision is still rev and
// returns the revision of the deletion.
func (s *Store) Delete(ctx context.Context, key string, rev int64) (int64, error) {
	start := time.Now()
	r, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
		Then(clientv3.OpDelete(key)).
		Else(clientv3.OpGet(key, clientv3.WithKeysOnly())).
		Commit()
	promstats.ObserveEtcd("delete", key, err, time.Since(start))
	if err != nil {
		return 0, fmt.Errorf("storage: delete %s: %w", key, err)
	}
	if !r.Succeeded {
		if len(r.Responses) > 0 && len(r.Responses[0].GetResponseRange().Kvs) == 0 {
			return 0, ErrNotFound
		}
		return 0, ErrConflict
	}
	return r.Header.Revision, nil
}

// ListOptions selects a page of a collection.
type ListOptions struct {
	// Revision reads the collection as of that revision; zero reads the
	// latest.
	Revision int64
	// Limit caps the number of objects returned; zero means no limit.
	Limit int64
	// Continue is a token returned by a previous page.
	Continue string
	// Stale accepts any state at or after MinRevision (resourceVersion
	// "0" or NotOlderThan): a watch cache serves it without asking etcd.
	// The Store itself always reads the latest.
	Stale       bool
	MinRevision int64
}

// ListResult is a page of a collection.
type ListResult struct {
	Items []KV
	// Revision is the revision the page was read at.
	Revision int64
	// Continue is the token of the next page, empty on the last one.
	Continue string
	// Remaining counts the objects after this page, when there is a next one.
	Remaining int64
}

type continueToken struct {
	APIVersion string `json:"v"`
	Revision   int64  `json:"rv"`
	Start      string `json:"start"`
}

// List reads the objects under prefix (which must end with "/").
// Pages share the revision of the first page, as kube's continue tokens do.
func (s *Store) List(ctx context.Context, prefix string, o ListOptions) (ListResult, error) {
	start, rev, err := decodeContinue(prefix, o.Continue)
	if err != nil {
		return ListResult{}, err
	}
	if rev == 0 {
		rev = o.Revision
	}
	end := clientv3.GetPrefixRangeEnd(prefix)
	opts := []clientv3.OpOption{clientv3.WithRange(end)}
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	if o.Limit > 0 {
		opts = append(opts, clientv3.WithLimit(o.Limit))
	}
	began := time.Now()
	r, err := s.client.Get(ctx, start, opts...)
	promstats.ObserveEtcd("list", prefix, err, time.Since(began))
	if err != nil {
		return ListResult{}, wrapRevisionError(err, "list "+prefix)
	}
	res := ListResult{Revision: r.Header.Revision, Items: make([]KV, 0, len(r.Kvs))}
	if rev > 0 {
		res.Revision = rev
	}
	for _, kv := range r.Kvs {
		res.Items = append(res.Items, KV{Key: string(kv.Key), Value: kv.Value, Revision: kv.ModRevision})
	}
	if r.More && len(r.Kvs) > 0 {
		res.Continue = encodeContinue(res.Revision, prefix, string(r.Kvs[len(r.Kvs)-1].Key))
		res.Remaining = r.Count - int64(len(r.Kvs))
	}
	return res, nil
}

// CurrentRevision returns etcd's current revision.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	start := time.Now()
	r, err := s.client.Get(ctx, "/registry/", clientv3.WithCountOnly(), clientv3.WithLimit(1))
	promstats.ObserveEtcd("getCurrentResourceVersion", "", err, time.Since(start))
	if err != nil {
		return 0, fmt.Errorf("storage: read revision: %w", err)
	}
	return r.Header.Revision, nil
}

// Count returns how many objects are stored under prefix (which must end
// with "/"), with a count-only range: etcd sends no values.
func (s *Store) Count(ctx context.Context, prefix string) (int64, error) {
	start := time.Now()
	r, err := s.client.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	promstats.ObserveEtcd("count", prefix, err, time.Since(start))
	if err != nil {
		return 0, fmt.Errorf("storage: count %s: %w", prefix, err)
	}
	return r.Count, nil
}

// decodeContinue reads a continue token of a list under prefix: the key
// to start at and the revision of the first page (zero with no token).
func decodeContinue(prefix, token string) (start string, rev int64, err error) {
	if token == "" {
		return prefix, 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, ErrBadContinue
	}
	var tok continueToken
	if err := json.Unmarshal(raw, &tok); err != nil || tok.APIVersion != "meta.k8s.io/v1" || tok.Revision == 0 {
		return "", 0, ErrBadContinue
	}
	if strings.Contains(tok.Start, "..") || strings.HasPrefix(tok.Start, "/") {
		return "", 0, ErrBadContinue
	}
	return prefix + tok.Start, tok.Revision, nil
}

// encodeContinue is the continue token of the page after key last, read
// at rev.
func encodeContinue(rev int64, prefix, last string) string {
	tok, _ := json.Marshal(continueToken{APIVersion: "meta.k8s.io/v1", Revision: rev, Start: strings.TrimPrefix(last, prefix) + "\x00"})
	return base64.RawURLEncoding.EncodeToString(tok)
}

func wrapRevisionError(err error, what string) error {
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return ErrCompacted
	case errors.Is(err, rpctypes.ErrFutureRev):
		return ErrFutureRevision
	}
	return fmt.Errorf("storage: %s: %w", what, err)
}

// EventType says what happened to a key.
type EventType int

// The kinds of watch event.
const (
	Put EventType = iota
	Deleted
	// Progress carries only a revision: everything up to it has been sent.
	Progress
	// Error ends the stream; Err tells why (ErrCompacted when the start
	// revision is too old).
	Error
)

// Event is one change of a watched prefix.
type Event struct {
	Type EventType
	// Object is the object after the change (for Deleted: before it).
	Object KV
	// Prev is the object before a Put, if it existed.
	Prev *KV
	// Revision is the revision of the change.
	Revision int64
	// Created tells whether a Put created the key.
	Created bool
	Err     error
}

// Watch streams the changes under prefix after revision fromRev (zero:
// from now) until ctx is done or an Error event is sent; the channel is then
// closed. Progress events arrive when etcd reports progress.
func (s *Store) Watch(ctx context.Context, prefix string, fromRev int64) <-chan Event {
	out := make(chan Event, 100)
	opts := []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithPrevKV(), clientv3.WithProgressNotify()}
	if fromRev > 0 {
		opts = append(opts, clientv3.WithRev(fromRev+1))
	}
	wctx := clientv3.WithRequireLeader(ctx)
	wch := s.client.Watch(wctx, prefix, opts...)
	go func() {
		defer close(out)
		send := func(e Event) bool {
			select {
			case out <- e:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for resp := range wch {
			if resp.CompactRevision != 0 {
				send(Event{Type: Error, Err: ErrCompacted, Revision: resp.CompactRevision})
				return
			}
			if err := resp.Err(); err != nil {
				send(Event{Type: Error, Err: fmt.Errorf("storage: watch %s: %w", prefix, err)})
				return
			}
			if resp.IsProgressNotify() {
				if !send(Event{Type: Progress, Revision: resp.Header.Revision}) {
					return
				}
				continue
			}
			for _, ev := range resp.Events {
				e := Event{Revision: ev.Kv.ModRevision}
				if ev.PrevKv != nil {
					e.Prev = &KV{Key: string(ev.PrevKv.Key), Value: ev.PrevKv.Value, Revision: ev.PrevKv.ModRevision}
				}
				switch ev.Type {
				case mvccpb.PUT:
					e.Type = Put
					e.Created = ev.IsCreate()
					e.Object = KV{Key: string(ev.Kv.Key), Value: ev.Kv.Value, Revision: ev.Kv.ModRevision}
				case mvccpb.DELETE:
					if e.Prev == nil {
						continue
					}
					e.Type = Deleted
					e.Object = *e.Prev
					e.Object.Revision = ev.Kv.ModRevision
				}
				if !send(e) {
					return
				}
			}
		}
	}()
	return out
}
