package registry

import "context"

// Request is what a strategy may know of the client request it serves
// beyond the objects: the server's environment (to read other objects or
// ask the authorizer, as kube's strategies do for checks that depend on
// them) and the request's verb.
type Request struct {
	// Env is the server's environment.
	Env Env
	// Verb is the request's authorization verb ("create", "update",
	// "patch", ...).
	Verb string
}

type requestKey struct{}

// WithRequest returns ctx carrying the request r; the API layer sets it
// on every client request.
func WithRequest(ctx context.Context, r Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// RequestFrom returns the request ctx carries, if any: the API server's
// own writes (upkeep, subresources' narrow writes) carry none.
func RequestFrom(ctx context.Context) (Request, bool) {
	r, ok := ctx.Value(requestKey{}).(Request)
	return r, ok && r.Env != nil
}
