// Package admission is the third stage of the API server's handler chain:
// mutating plugins, then (in the API layer) schema validation, then
// validating plugins. Plugins see the object a request would store and may
// change it (mutating) or refuse it (both), with a Kubernetes Status error.
package admission

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"minik/internal/auth"
)

// Operation is the kind of write being admitted.
type Operation string

// The operations, as kube names them.
const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT"
)

// Attributes describe the request being admitted.
type Attributes struct {
	Operation   Operation
	Kind        schema.GroupVersionKind
	Resource    schema.GroupVersionResource
	Subresource string
	Namespace   string
	Name        string
	// Object is the object the request would store (nil for Delete); a
	// mutating plugin may change it in place.
	Object runtime.Object
	// OldObject is the stored object for Update and Delete.
	OldObject runtime.Object
	User      *auth.User
	DryRun    bool
	// UID identifies the request to admission webhooks; the webhook
	// dispatchers set it on first use, so that the mutating and the
	// validating calls of one request share it.
	UID types.UID
}

// Mutator is a mutating admission plugin.
type Mutator interface {
	// Name is the plugin's name ("NamespaceLifecycle").
	Name() string
	// Admit may change a.Object, or refuse the request with an error.
	Admit(ctx context.Context, a *Attributes) error
}

// Validator is a validating admission plugin.
type Validator interface {
	// Name is the plugin's name.
	Name() string
	// Validate refuses the request with an error, or returns nil.
	Validate(ctx context.Context, a *Attributes) error
}

// Chain runs admission plugins in order.
type Chain struct {
	Mutators   []Mutator
	Validators []Validator
}

// Admit runs every mutating plugin in order, stopping at the first error.
func (c *Chain) Admit(ctx context.Context, a *Attributes) error {
	for _, m := range c.Mutators {
		if err := m.Admit(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// Validate runs every validating plugin in order, stopping at the first
// error.
func (c *Chain) Validate(ctx context.Context, a *Attributes) error {
	for _, v := range c.Validators {
		if err := v.Validate(ctx, a); err != nil {
			return err
		}
	}
	return nil
}
