package api

import (
	"context"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
)

// exchange carries what a write handler decoded and answered to the
// stages around it (audit, trail), so that they need not decode the
// request and response bodies again: a create's request body and its
// response are each decoded (or encoded) once. The handler may run on
// another goroutine than the stages and, after a timeout, outlive them:
// the fields are atomic.
type exchange struct {
	// request is the reference of the object a create or update sent,
	// taken when it was decoded (before the server changed it).
	request atomic.Pointer[AuditObjectReference]
	// response is the object a successful write answered with.
	response atomic.Pointer[runtime.Object]
}

type exchangeKey struct{}

// withExchange returns ctx carrying ex.
func withExchange(ctx context.Context, ex *exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, ex)
}

// noteRequestObject records the object a request body decoded to: its
// name, namespace, uid and resourceVersion as sent, which is what kube's
// audit takes from it (audit.LogRequestObject).
func noteRequestObject(ctx context.Context, obj runtime.Object) {
	ex, _ := ctx.Value(exchangeKey{}).(*exchange)
	if ex == nil {
		return
	}
	if ref := referenceOf(obj); ref != nil {
		ex.request.Store(ref)
	}
}

// noteResponseObject records the object a write answered with; the
// handler must not change it afterwards.
func noteResponseObject(ctx context.Context, obj runtime.Object) {
	if ex, _ := ctx.Value(exchangeKey{}).(*exchange); ex != nil {
		ex.response.Store(&obj)
	}
}
