package registry

import (
	"context"
	"net/netip"
	"net/url"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minik/internal/auth"
)

// Subresource is one subresource of a resource beyond status and scale,
// as an object: what discovery says of it and what serves it. Exactly one
// of Update, Create and Connect is set.
type Subresource struct {
	// Name is the subresource's name ("binding").
	Name string
	// GroupVersion is the group version of Kind when it is not the
	// resource's own (policy/v1 for pods/eviction).
	GroupVersion schema.GroupVersion
	// Kind is the kind a client sends or reads ("Binding").
	Kind string
	// Verbs are the verbs discovery lists for it.
	Verbs metav1.Verbs

	// Update makes the subresource a writable view of the object (get,
	// update, patch) that changes only what Merge copies.
	Update *SubresourceStrategy
	// Create answers a POST of Kind. The API layer decodes the body and
	// writes what Create returns with 201 Created (or the code of a
	// returned Status). Writes Create makes through Store.Update with the
	// subresource's name are the API server's own narrow writes: the
	// kind's defaulting and update strategy do not apply to them.
	Create CreateFunc
	// Connect tells where a streaming or proxied request goes; the API
	// layer proxies it there.
	Connect ConnectFunc
	// SecretBearing tells that the subresource's bodies carry credentials
	// (serviceaccounts/token): audit never records them.
	SecretBearing bool
	// UpgradeNeedsCreate asks that a GET (as WebSocket clients send) be
	// also allowed to create, as kube 1.37 asks for exec, attach and
	// portforward.
	UpgradeNeedsCreate bool
}

// Subresource returns the resource's subresource of that name, or nil.
func (r *Resource) Subresource(name string) *Subresource {
	for i := range r.Subresources {
		if r.Subresources[i].Name == name {
			return &r.Subresources[i]
		}
	}
	return nil
}

// CreateFunc serves a create on a subresource of the object ns/name. obj
// is the decoded body; the result is written back to the client.
type CreateFunc func(ctx context.Context, env Env, ns, name string, obj runtime.Object, dryRun bool) (runtime.Object, error)

// ConnectFunc tells where a connect request on the object named in req
// goes, or why it cannot.
type ConnectFunc func(ctx context.Context, env Env, req ConnectRequest) (*Location, error)

// ConnectRequest is a request on a connect subresource.
type ConnectRequest struct {
	// Namespace and Name name the object; Name keeps any scheme and port
	// a proxy request gives ("https:web:8443").
	Namespace, Name string
	// Query is the request's query.
	Query url.Values
}

// ProxyMode is how the API layer carries a connect request to its
// Location.
type ProxyMode int

const (
	// ProxyPath proxies the request's path below the subresource, query
	// and all, rewriting links in HTML answers (the proxy subresources).
	ProxyPath ProxyMode = iota
	// ProxyStream upgrades the request to the location's remote command
	// stream (exec, attach), translating WebSocket clients to SPDY.
	ProxyStream
	// ProxyTunnel upgrades the request to the location's port-forward
	// stream, tunnelling WebSocket clients.
	ProxyTunnel
	// ProxyGet reads the location once and copies the answer to the
	// client as it comes (logs).
	ProxyGet
)

// Location is where a connect request goes.
type Location struct {
	// URL is the target, with its path and query.
	URL *url.URL
	// Mode is how the request is carried there.
	Mode ProxyMode
	// Stdin, Stdout, Stderr and TTY are the streams of a ProxyStream.
	Stdin, Stdout, Stderr, TTY bool
	// ContentType is the answer's type for ProxyGet.
	ContentType string
}

// Store is what a kind's hooks and subresources may do with the objects
// of one served resource: the API server's own read and write paths,
// with admission, strategy and storage.
type Store interface {
	// Get reads one object.
	Get(ctx context.Context, ns, name string) (runtime.Object, error)
	// List reads the objects of a namespace ("" for all) that sel selects.
	List(ctx context.Context, ns string, sel labels.Selector) ([]runtime.Object, error)
	// Update applies mut to the stored object through the update path of
	// the subresource sub ("" for the object itself), retrying on
	// conflicts unless mut's result names a resourceVersion.
	Update(ctx context.Context, ns, name, sub string, dryRun bool, mut func(current runtime.Object) (runtime.Object, error)) (runtime.Object, error)
	// Create admits, validates and stores a new object.
	Create(ctx context.Context, ns string, obj runtime.Object, dryRun bool) (runtime.Object, error)
	// Delete deletes an object, or marks it for deletion; deleted tells
	// which.
	Delete(ctx context.Context, ns, name string, opts *metav1.DeleteOptions) (obj runtime.Object, deleted bool, err error)
}

// Env is what the API server offers to subresources.
type Env interface {
	// Store is the store of a served resource, or nil.
	Store(gr schema.GroupResource) Store
	// Allocator is the allocator of a served resource, or nil.
	Allocator(gr schema.GroupResource) Allocator
	// APIEndpoint is the address the API server serves on.
	APIEndpoint() netip.AddrPort
	// Now is the server's clock.
	Now() time.Time
	// TokenIssuer signs service account tokens; nil when there is none.
	TokenIssuer() auth.TokenIssuer
	// Admit runs the admission chain on obj, created through the
	// subresource sub of the object ns/name of resource gvr.
	Admit(ctx context.Context, gvr schema.GroupVersionResource, ns, name, sub string, obj runtime.Object, dryRun bool) error
}
