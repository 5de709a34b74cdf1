package api

import (
	"context"

	"minik/internal/storage"
)

// The read paths (get, list, watch) go through the server's watch cache
// when it has one, the write paths always to etcd. The cache is keyed by
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
