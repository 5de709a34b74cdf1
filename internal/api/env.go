package api

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minik/internal/admission"
	"minik/internal/auth"
	"minik/internal/registry"
	"minik/internal/storage"
)

// serverEnv is what the server offers the registry's subresources
// (registry.Env).
type serverEnv struct{ s *Server }

var _ registry.Env = serverEnv{}

// Store implements registry.Env: the store of the first served version
// of the resource.
func (e serverEnv) Store(gr schema.GroupResource) registry.Store {
	handlers := e.s.routes.Load().handlers
	if h, ok := handlers[gr.WithVersion("v1")]; ok && h.res.StoredAs == nil {
		return handlerStore{h}
	}
	for gvr, h := range handlers {
		if gvr.GroupResource() == gr && h.res.StoredAs == nil {
			return handlerStore{h}
		}
	}
	return nil
}

// Allocator implements registry.Env.
func (e serverEnv) Allocator(gr schema.GroupResource) registry.Allocator { return e.s.allocatorFor(gr) }

// APIEndpoint implements registry.Env.
func (e serverEnv) APIEndpoint() netip.AddrPort { return e.s.apiEndpoint }

// Now implements registry.Env.
func (e serverEnv) Now() time.Time { return e.s.clock.Now() }

// Authorizer implements registry.Env.
func (e serverEnv) Authorizer() auth.Union { return e.s.authorizer() }

// Authenticators implements registry.Env.
func (e serverEnv) Authenticators() []auth.Authenticator { return e.s.cfg.Authenticators }

// TokenIssuer implements registry.Env.
func (e serverEnv) TokenIssuer() auth.TokenIssuer { return e.s.cfg.TokenIssuer }

// Admit implements registry.Env: the chain's mutating then validating
// admission of a create through a subresource.
func (e serverEnv) Admit(ctx context.Context, gvr schema.GroupVersionResource, ns, name, sub string, obj runtime.Object, dryRun bool) error {
	gvks, _, err := Scheme.ObjectKinds(obj)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("admit %s/%s of %s %s/%s: %w", gvr.Resource, sub, gvr.Resource, ns, name, err))
	}
	attrs := &admission.Attributes{
		Operation: admission.Create, Kind: gvks[0], Resource: gvr, Subresource: sub,
		Namespace: ns, Name: name, Object: obj, DryRun: dryRun, User: auth.UserFrom(ctx),
	}
	if err := e.s.chain.Admit(ctx, attrs); err != nil {
		return err
	}
	return e.s.chain.Validate(ctx, attrs)
}

// handlerStore is a resource handler's read and write paths as a
// registry.Store.
type handlerStore struct{ h *resourceHandler }

// Get implements registry.Store.
func (st handlerStore) Get(ctx context.Context, ns, name string) (runtime.Object, error) {
	return st.h.get(ctx, ns, name)
}

// List implements registry.Store.
func (st handlerStore) List(ctx context.Context, ns string, sel labels.Selector) ([]runtime.Object, error) {
	if sel == nil {
		sel = labels.Everything()
	}
	items, _, err := st.h.list(ctx, ns, selection{labels: sel, fields: fields.Everything()}, storage.ListOptions{})
	return items, err
}

// Update implements registry.Store.
func (st handlerStore) Update(ctx context.Context, ns, name, sub string, dryRun bool, mut func(runtime.Object) (runtime.Object, error)) (runtime.Object, error) {
	return st.h.update(ctx, ns, name, sub, dryRun, mutation(mut))
}

// Create implements registry.Store.
func (st handlerStore) Create(ctx context.Context, ns string, obj runtime.Object, dryRun bool) (runtime.Object, error) {
	return st.h.create(ctx, ns, obj, dryRun)
}

// Delete implements registry.Store.
func (st handlerStore) Delete(ctx context.Context, ns, name string, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	return st.h.delete(ctx, ns, name, opts)
}

// lazyStore is the store of a resource looked up at each use, for what is
// built before the server routes (the default admission chain).
type lazyStore struct {
	s  *Server
	gr schema.GroupResource
}

// Get reads one object of the resource.
func (l lazyStore) Get(ctx context.Context, ns, name string) (runtime.Object, error) {
	st := serverEnv{l.s}.Store(l.gr)
	if st == nil {
		return nil, apierrors.NewNotFound(l.gr, name)
	}
	return st.Get(ctx, ns, name)
}
