package api

import (
	"context"

	"minik/internal/storage"
)

// The read paths (get, list, watch) go through the server's watch cache
// when it has one, the write paths to etcd; an update starts from the
// cache's copy of its object, possibly stale (updateStart). The cache is keyed by
// the resource's own prefix, so that a namespace's list or watch is
// served from the resource's one cache.

// storeGet reads one object, consistently (as of etcd's current revision).
func (h *objectStore) storeGet(ctx context.Context, key string) (storage.KV, error) {
	if h.s.cache == nil {
		return h.s.store.Get(ctx, key)
	}
	return h.s.cache.Get(ctx, h.collectionPrefix(""), key)
}

// storeList reads a page of the collection under prefix.
func (h *objectStore) storeList(ctx context.Context, prefix string, o storage.ListOptions) (storage.ListResult, error) {
	if h.s.cache == nil {
		return h.s.store.List(ctx, prefix, o)
	}
	return h.s.cache.List(ctx, h.collectionPrefix(""), prefix, o)
}

// storeWatch streams the changes under prefix after revision from.
func (h *objectStore) storeWatch(ctx context.Context, prefix string, from int64) <-chan storage.Event {
	if h.s.cache == nil {
		return h.s.store.Watch(ctx, prefix, from)
	}
	return h.s.cache.Watch(ctx, h.collectionPrefix(""), prefix, from)
}

// updateStart reads the object an update starts from: the watch cache's
// copy, when fromCache and the cache holds one (stale tells so: the
// compare-and-swap will tell whether it still is the current one), else
// etcd's.
func (h *objectStore) updateStart(ctx context.Context, key string, fromCache bool) (kv storage.KV, stale bool, err error) {
	if fromCache && h.s.cache != nil {
		if kv, ok := h.s.cache.Cached(h.collectionPrefix(""), key); ok {
			return kv, true, nil
		}
	}
	kv, err = h.s.store.Get(ctx, key)
	return kv, false, err
}
