package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"

	"minik/internal/promstats"
	"minik/internal/storage"
)

// watchStream writes watch events to a client in its negotiated format.
type watchStream struct {
	h        *resourceHandler
	r        *http.Request
	o        output
	w        http.ResponseWriter
	flusher  http.Flusher
	outer    streaming.Encoder
	embedded runtime.Encoder
	buf      bytes.Buffer
}

func (ws *watchStream) send(typ watch.EventType, obj runtime.Object) error {
	ws.buf.Reset()
	if ws.o.table != nil && typ != watch.Bookmark && typ != watch.Error {
		m, _ := meta.Accessor(obj)
		t, err := ws.h.toTable(ws.r, []runtime.Object{obj}, metav1.ListMeta{ResourceVersion: m.GetResourceVersion()})
		if err != nil {
			return err
		}
		obj = t
	}
	if ws.o.partial != nil && typ != watch.Error {
		// Bookmarks too: a metadata client decodes every event as one.
		obj = partialOf(obj)
	}
	if err := ws.embeddedEncoder(typ, obj).Encode(obj, &ws.buf); err != nil {
		return fmt.Errorf("encode watch event: %w", err)
	}
	ev := &metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: ws.buf.Bytes()}}
	if err := ws.outer.Encode(ev); err != nil {
		return err
	}
	gv := ws.h.res.GroupVersion
	promstats.WatchEvent(gv.Group, gv.Version, ws.h.res.Name)
	if ws.flusher != nil {
		ws.flusher.Flush()
	}
	return nil
}

func (ws *watchStream) embeddedEncoder(typ watch.EventType, obj runtime.Object) runtime.Encoder {
	switch obj.(type) {
	case *metav1.Status:
		return ws.o.encoder(statusGV)
	case *metav1.Table:
		return ws.o.encoder(*ws.o.table)
	case *metav1.PartialObjectMetadata:
		return ws.o.encoder(*ws.o.partial)
	}
	return ws.embedded
}

// watchParams are a watch request's parameters.
type watchParams struct {
	rv                int64
	rvSet             bool
	sendInitialEvents bool
	bookmarks         bool
	timeout           time.Duration
}

func parseWatchParams(r *http.Request) (watchParams, error) {
	q := r.URL.Query()
	var p watchParams
	if rv := q.Get("resourceVersion"); rv != "" && rv != "0" {
		n, err := strconv.ParseInt(rv, 10, 64)
		if err != nil || n < 0 {
			return p, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q", rv))
		}
		p.rv, p.rvSet = n, true
	}
	p.bookmarks = isTrue(q.Get("allowWatchBookmarks"))
	if v := q.Get("sendInitialEvents"); v != "" {
		p.sendInitialEvents = isTrue(v)
		var errs field.ErrorList
		if q.Get("resourceVersionMatch") != string(metav1.ResourceVersionMatchNotOlderThan) {
			errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
		}
		if p.sendInitialEvents && !p.bookmarks {
			errs = append(errs, field.Forbidden(field.NewPath("allowWatchBookmarks"), "sendInitialEvents requires setting allowWatchBookmarks to true"))
		}
		if len(errs) > 0 {
			return p, apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "", errs)
		}
	}
	if ts := q.Get("timeoutSeconds"); ts != "" {
		n, err := strconv.ParseInt(ts, 10, 64)
		if err != nil || n < 0 {
			return p, apierrors.NewBadRequest(fmt.Sprintf("invalid timeoutSeconds %q", ts))
		}
		p.timeout = time.Duration(n) * time.Second
	}
	if p.timeout == 0 {
		// kube-apiserver ends watches after 30 to 60 minutes.
		p.timeout = 30*time.Minute + time.Duration(rand.Int64N(int64(30*time.Minute)))
	}
	return p, nil
}

func (h *resourceHandler) serveWatch(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	o, err := negotiateFor(r, objectTransforms)
	if err != nil {
		writeError(w, r, err)
		return
	}
	sel, err := h.parseSelection(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	p, err := parseWatchParams(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), p.timeout)
	defer cancel()
	if p.rvSet {
		if err := h.waitForRevision(ctx, p.rv); err != nil {
			writeError(w, r, err)
			return
		}
	}

	// Initial state, when the client asked for it (no resourceVersion, "0",
	// or sendInitialEvents), is read first; the watch starts after it.
	var initial []runtime.Object
	from := p.rv
	if !p.rvSet || p.sendInitialEvents {
		items, lm, err := h.list(ctx, info.Namespace, sel, storage.ListOptions{})
		if err != nil {
			writeError(w, r, err)
			return
		}
		initial = items
		from, _ = strconv.ParseInt(lm.ResourceVersion, 10, 64)
	}
	events := h.storeWatch(ctx, h.collectionPrefix(info.Namespace), from)

	sinfo := o.info.StreamSerializer
	if sinfo == nil {
		writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("no stream serialization for %s", o.info.MediaType)))
		return
	}
	outerGV := h.res.GroupVersion
	if o.table != nil || o.partial != nil {
		outerGV = metaV1
	}
	mediaType := o.info.MediaType
	if mediaType != mediaJSON {
		mediaType += ";stream=watch"
	}
	w.Header().Set("Content-Type", mediaType)
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	ws := &watchStream{
		h: h, r: r, o: o, w: w, flusher: flusher,
		outer:    streaming.NewEncoder(sinfo.Framer.NewFrameWriter(w), Codecs.WithoutConversion().EncoderForVersion(sinfo.Serializer, outerGV)),
		embedded: o.encoder(h.res.GroupVersion),
	}
	for _, obj := range initial {
		if ws.send(watch.Added, obj) != nil {
			return
		}
	}
	last := from
	if p.sendInitialEvents {
		if ws.send(watch.Bookmark, h.bookmark(last, true)) != nil {
			return
		}
	}
	// The watch is initialized: under API Priority and Fairness its seat
	// is free from here (kube's cacher signals at the same point).
	utilflowcontrol.WatchInitialized(r.Context())
	var tick <-chan time.Time
	if p.bookmarks {
		t := time.NewTicker(h.s.cfg.BookmarkInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.s.stopping:
			return
		case <-h.gone:
			return
		case <-tick:
			if ws.send(watch.Bookmark, h.bookmark(last, false)) != nil {
				return
			}
		case ev, ok := <-events:
			if !ok {
				return
			}
			if typ, raw, ok, err := ws.sharedEvent(ev, sel); ok {
				if err != nil {
					_ = ws.send(watch.Error, errorToStatus(err))
					return
				}
				last = max(last, ev.Revision)
				if ws.sendRaw(typ, raw) != nil {
					return
				}
				h.trailDelivered(r, ev.Revision)
				continue
			}
			typ, obj, err := h.watchEvent(ev, sel, from)
			if err != nil {
				_ = ws.send(watch.Error, errorToStatus(err))
				return
			}
			if ev.Revision > last {
				last = ev.Revision
			}
			if obj == nil {
				continue
			}
			if ws.send(typ, obj) != nil {
				return
			}
			h.trailDelivered(r, ev.Revision)
		}
	}
}

// bookmark is the object of a BOOKMARK event: an empty object of the kind
// with only a resourceVersion (and, closing the initial events of a
// watch-list, kube's annotation saying so).
func (h *resourceHandler) bookmark(rev int64, initialEnd bool) runtime.Object {
	obj := h.codec.New()
	m, _ := meta.Accessor(obj)
	m.SetResourceVersion(strconv.FormatInt(rev, 10))
	if initialEnd {
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return obj
}

// watchEvent converts a storage event to a watch event for a client with
// selection sel: an object entering the selection is ADDED, one leaving
// it DELETED. A nil object means the event is not for this client.
func (h *resourceHandler) watchEvent(ev storage.Event, sel selection, from int64) (watch.EventType, runtime.Object, error) {
	switch ev.Type {
	case storage.Error:
		if errors.Is(ev.Err, storage.ErrCompacted) {
			return "", nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, ev.Revision))
		}
		return "", nil, apierrors.NewInternalError(ev.Err)
	case storage.Progress:
		return "", nil, nil
	}
	obj, err := h.codec.decode(ev.Object)
	if err != nil {
		return "", nil, apierrors.NewInternalError(err)
	}
	if ev.Type == storage.Deleted {
		if !h.matches(sel, obj) {
			return "", nil, nil
		}
		return watch.Deleted, obj, nil
	}
	now := h.matches(sel, obj)
	before := false
	if ev.Prev != nil && !ev.Created {
		if sel.empty() {
			before = true
		} else if prev, err := h.codec.decode(*ev.Prev); err == nil {
			before = h.matches(sel, prev)
		}
	}
	switch {
	case now && before:
		return watch.Modified, obj, nil
	case now:
		return watch.Added, obj, nil
	case before:
		return watch.Deleted, obj, nil
	}
	return "", nil, nil
}

// tooLargeWait is how long a watch from a resourceVersion etcd has not
// reached yet waits for it before it is answered 504, as kube's watch
// cache waits (3 s); a variable for tests.
var tooLargeWait = 3 * time.Second

// revisionPoll is how often that wait looks at etcd's revision.
const revisionPoll = 50 * time.Millisecond

// waitForRevision returns once etcd's revision has reached rv, or, after
// tooLargeWait, kube's 504 "Too large resource version" (reason Timeout,
// retryAfterSeconds 1, cause ResourceVersionTooLarge): an etcd watch from
// a future revision would otherwise wait silently for it.
func (h *resourceHandler) waitForRevision(ctx context.Context, rv int64) error {
	deadline := time.Now().Add(tooLargeWait)
	for {
		cur, err := h.s.store.CurrentRevision(ctx)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		if cur >= rv {
			return nil
		}
		if !time.Now().Before(deadline) {
			return tooLargeResourceVersion(rv, cur)
		}
		select {
		case <-ctx.Done():
			return apierrors.NewTimeoutError(ctx.Err().Error(), 1)
		case <-time.After(revisionPoll):
		}
	}
}

// tooLargeResourceVersion is kube's storage.NewTooLargeResourceVersionError.
func tooLargeResourceVersion(rv, current int64) error {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", rv, current), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
	return err
}
