package api

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// allocator reserves, outside an object's own key, values the object holds
// exclusively across the cluster (a Service's cluster IPs and node ports).
// The generic REST path calls it around its writes, so that the path stays
// the same for every resource: a resource with an allocator is listed in
// Server.allocators.
type allocator interface {
	// allocate reserves what obj needs beyond what old (nil on create)
	// already holds and fills the allocated values into obj. It runs after
	// the strategy's validation and before validating admission. undo
	// releases exactly what this call reserved; the caller runs it when
	// the write does not happen. With dryRun nothing is reserved.
	allocate(ctx context.Context, obj, old runtime.Object, dryRun bool) (undo func(), err error)
	// release frees what old holds and obj (nil once old is deleted) does
	// not. It runs after the write succeeded; failures are logged, and the
	// allocator's repair finds what they leave behind.
	release(ctx context.Context, old, obj runtime.Object)
}

// noUndo is the undo of an allocation that reserved nothing.
func noUndo() {}

// allocatorFor returns the allocator of a resource, or nil.
func (s *Server) allocatorFor(gr schema.GroupResource) allocator {
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
	return h.alloc.allocate(ctx, obj, old, dryRun)
}

// release runs the resource's allocator's release, if any, on a context
// that outlives the request: what was written must be followed through.
func (h *resourceHandler) release(ctx context.Context, old, obj runtime.Object) {
	if h.alloc != nil {
		h.alloc.release(context.WithoutCancel(ctx), old, obj)
	}
}
