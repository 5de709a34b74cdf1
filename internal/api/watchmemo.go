package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"minik/internal/storage"
)

// An event of the watch cache reaches every watcher of the resource; the
// watchers that want the object as it is (no selector, no table, no
// metadata-only view) share its decoding and encoding, as kube's cacher
// shares an event's serialization (cachingObject): a thousand watchers
// cost one decode and one encode per event and media type, not a
// thousand. Streamed lists without a selector share their items' JSON the
// same way, keyed by key and revision (a stored revision never changes).

// eventMemoMax bounds the encodings kept per resource; past it the memo
// starts afresh (an entry is only useful while its event is dispatched).
const eventMemoMax = 4096

// eventMemo keeps a resource's shared event encodings.
type eventMemo struct {
	mu sync.Mutex
	m  map[eventMemoKey]*memoEntry
}

type eventMemoKey struct {
	key    string
	rev    int64
	media  string
	pretty bool
}

type memoEntry struct {
	once sync.Once
	raw  []byte
	err  error
}

func (m *eventMemo) entry(k eventMemoKey) *memoEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= eventMemoMax {
		m.m = make(map[eventMemoKey]*memoEntry)
	}
	e := m.m[k]
	if e == nil {
		e = &memoEntry{}
		m.m[k] = e
	}
	return e
}

// sharedEvent is the watch event of ev for a stream that wants objects as
// they are, encoded once for all such streams; ok is false for other
// streams and events (they go through watchEvent and send).
func (ws *watchStream) sharedEvent(ev storage.Event, sel selection) (typ watch.EventType, raw []byte, ok bool, err error) {
	if !sel.empty() || ws.o.table != nil || ws.o.partial != nil {
		return "", nil, false, nil
	}
	switch {
	case ev.Type == storage.Deleted:
		typ = watch.Deleted
	case ev.Type != storage.Put:
		return "", nil, false, nil
	case ev.Prev != nil && !ev.Created:
		typ = watch.Modified
	default:
		typ = watch.Added
	}
	e := ws.h.memo.entry(eventMemoKey{key: ev.Object.Key, rev: ev.Revision, media: ws.o.info.MediaType, pretty: ws.o.pretty})
	e.once.Do(func() {
		obj, err := ws.h.codec.decode(ev.Object)
		if err != nil {
			e.err = apierrors.NewInternalError(err)
			return
		}
		var buf bytes.Buffer
		if err := ws.embedded.Encode(obj, &buf); err != nil {
			e.err = fmt.Errorf("encode watch event: %w", err)
			return
		}
		e.raw = buf.Bytes()
	})
	return typ, e.raw, true, e.err
}

// sendRaw writes a watch event whose object is already encoded.
func (ws *watchStream) sendRaw(typ watch.EventType, raw []byte) error {
	if err := ws.outer.Encode(&metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: raw}}); err != nil {
		return err
	}
	if ws.flusher != nil {
		ws.flusher.Flush()
	}
	return nil
}

// listItem is the JSON of a stored object as a streamed list's item (as
// json.Encoder writes it, without its newline), shared among lists.
func (h *resourceHandler) listItem(kv storage.KV) ([]byte, error) {
	e := h.memo.entry(eventMemoKey{key: kv.Key, rev: kv.Revision, media: "list-item"})
	e.once.Do(func() {
		obj, err := h.codec.decode(kv)
		if err != nil {
			e.err = err
			return
		}
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(obj); err != nil {
			e.err = err
			return
		}
		e.raw = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	})
	return e.raw, e.err
}
