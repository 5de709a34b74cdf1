package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minik/internal/storage"
)

// A whole collection in JSON (a list without limit, also as a Table) is
// streamed: read from etcd listPageSize objects at a time, all pages at
// the revision of the first, and each object encoded and written as it is
// decoded, so that a list holds one page, not the collection twice (its
// objects and its encoding). The bytes are those the whole list would
// encode to, as kube's streaming collection encoder writes them. 200
// concurrent lists of 5,000 2 KiB ConfigMaps took minikd to 11.6 GiB RSS
// before, 1.4 GiB with pages of 500 (see internal/server's TestListLoad):
// a page is held several times over (etcd's response, its gRPC copy, the
// decoded objects), so pages are small.
//
// Once the status line is out, an error (the context ending, the
// revision compacted between pages) can only cut the response: the stream
// is aborted, and the client sees a truncated body, never a valid list.

// listPageSize is how many objects a streamed list reads from etcd at a
// time (a variable for tests).
var listPageSize int64 = 100

// streamable tells whether a list request is served by streamList: JSON
// (not pretty), no limit, a built-in resource.
func (h *resourceHandler) streamable(o output, lo storage.ListOptions) bool {
	return o.info.MediaType == mediaJSON && !o.pretty && lo.Limit == 0 && h.custom == nil && o.partial == nil
}

// streamList serves a list request (see above).
func (h *resourceHandler) streamList(w http.ResponseWriter, r *http.Request, o output, ns string, sel selection, lo storage.ListOptions) {
	ctx := r.Context()
	prefix := h.collectionPrefix(ns)
	res, err := h.storeList(ctx, prefix, storage.ListOptions{Revision: lo.Revision, Continue: lo.Continue, Limit: listPageSize, Stale: lo.Stale, MinRevision: lo.MinRevision})
	if err != nil {
		writeError(w, r, h.listError(err))
		return
	}
	lm := metav1.ListMeta{ResourceVersion: strconv.FormatInt(res.Revision, 10)}
	head, tail, err := h.listFrame(r, o, lm)
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", o.info.MediaType)
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 32<<10)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	first := true
	// put writes one item: its JSON, without the encoder's newline.
	put := func(v any) error {
		buf.Reset()
		if !first {
			buf.WriteByte(',')
		}
		first = false
		if err := enc.Encode(v); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1)
		_, err := bw.Write(buf.Bytes())
		return err
	}
	// putRaw writes one item already encoded.
	putRaw := func(raw []byte) error {
		if !first {
			if err := bw.WriteByte(','); err != nil {
				return err
			}
		}
		first = false
		_, err := bw.Write(raw)
		return err
	}
	if _, err := bw.Write(head); err != nil {
		return
	}
	for {
		objs := make([]runtime.Object, 0, len(res.Items))
		if o.table == nil && sel.empty() {
			// Items as they are: their encodings are shared (watchmemo.go).
			for _, kv := range res.Items {
				raw, err := h.listItem(kv)
				if err == nil {
					err = putRaw(raw)
				}
				if err != nil {
					h.abortList(r, err)
				}
			}
			res.Items = nil
		}
		for _, kv := range res.Items {
			obj, err := h.codec.decode(kv)
			if err != nil {
				h.abortList(r, err)
			}
			if h.matches(sel, obj) {
				objs = append(objs, obj)
			}
		}
		if o.table != nil {
			t, err := h.toTable(r, objs, lm)
			if err != nil {
				h.abortList(r, err)
			}
			for i := range t.Rows {
				if err := put(&t.Rows[i]); err != nil {
					h.abortList(r, err)
				}
			}
		} else {
			for _, obj := range objs {
				if err := put(obj); err != nil {
					h.abortList(r, err)
				}
			}
		}
		if res.Continue == "" {
			break
		}
		res, err = h.storeList(ctx, prefix, storage.ListOptions{Continue: res.Continue, Limit: listPageSize})
		if err != nil {
			h.abortList(r, err)
		}
	}
	if _, err := bw.Write(tail); err != nil {
		return
	}
	_ = bw.Flush()
}

// abortList cuts a streamed list that cannot go on.
func (h *resourceHandler) abortList(r *http.Request, err error) {
	if r.Context().Err() == nil {
		h.s.log.Warn("list stream cut", "resource", h.res.GroupVersionResource(), "path", r.URL.Path, "err", err)
	}
	panic(http.ErrAbortHandler)
}

// listFrame is what comes before and after the items of a streamed list:
// the encoding of the empty list (or Table) split at its empty items (or
// rows) array.
func (h *resourceHandler) listFrame(r *http.Request, o output, lm metav1.ListMeta) (head, tail []byte, err error) {
	var empty runtime.Object
	var gv schema.GroupVersion
	if o.table != nil {
		t, err := h.toTable(r, nil, lm)
		if err != nil {
			return nil, nil, err
		}
		empty, gv = t, *o.table
	} else {
		list := h.codec.NewList()
		if err := meta.SetList(list, []runtime.Object{}); err != nil {
			return nil, nil, apierrors.NewInternalError(err)
		}
		la, err := meta.ListAccessor(list)
		if err != nil {
			return nil, nil, apierrors.NewInternalError(err)
		}
		la.SetResourceVersion(lm.ResourceVersion)
		empty, gv = list, h.res.GroupVersion
	}
	var buf bytes.Buffer
	if err := o.encoder(gv).Encode(empty, &buf); err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	data := buf.Bytes()
	at := bytes.LastIndex(data, []byte("[]}"))
	if at < 0 {
		return nil, nil, apierrors.NewInternalError(fmt.Errorf("list frame of %s: no empty items in %q", h.res.GroupVersionResource(), data))
	}
	return data[:at+1], data[at+1:], nil
}
