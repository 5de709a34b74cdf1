package api

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minik/internal/registry"
)

// noUndo is the undo of an allocation that reserved nothing.
func noUndo() {}

// allocatorFor returns the allocator of a resource, or nil.
func (s *Server) allocatorFor(gr schema.GroupResource) registry.Allocator {
	if a, ok := s.allocators[gr]; ok {
		return a
	}
	return nil
}

// allocate runs the resource's allocator, if any.
func (h *resourceHandler) allocate(ctx context.Context, obj, old runtime.Object, dryRun bool) (func(), error) {
	if h.alloc == nil {
		return noUndo, nil
	}
	return h.alloc.Allocate(ctx, obj, old, dryRun)
}

// release runs the resource's allocator's release, if any, on a context
// that outlives the request: what was written must be followed through.
func (h *resourceHandler) release(ctx context.Context, old, obj runtime.Object) {
	if h.alloc != nil {
		h.alloc.Release(context.WithoutCancel(ctx), old, obj)
	}
}
