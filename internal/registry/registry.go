// Package registry describes every resource the API server serves: its
// group, version and names, and the strategy (defaulting, validation,
// create/update preparation, table columns, field selectors) that the one
// generic REST implementation in internal/api applies to it.
//
// Each kind is one *Resource literal in the kind_<group>.go file of its
// group: descriptor, strategy and table together. Scope is stated once, by
// Namespaced: All adds the metadata checks every resource gets, scoped by
// it. Adding a resource is writing its literal and listing it in All
// (resources.go), never a new handler.
package registry

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// Resource is the descriptor of one served resource.
type Resource struct {
	// GroupVersion is the API group and version the resource is served at.
	GroupVersion schema.GroupVersion
	// Name is the lower-case plural resource name ("deployments").
	Name string
	// SingularName is the lower-case singular name ("deployment").
	SingularName string
	// Kind is the object kind ("Deployment"); its list kind is Kind+"List".
	Kind string
	// Namespaced tells whether objects live in a namespace.
	Namespaced bool
	// ShortNames are the discovery short names ("deploy").
	ShortNames []string
	// Categories are the discovery categories ("all").
	Categories []string
	// HasStatus tells whether the resource has a status subresource; when it
	// does, writes to the main resource keep the stored status and writes to
	// /status keep everything but the status.
	HasStatus bool
	// HasScale tells whether the resource has a scale subresource.
	HasScale bool
	// Subresources are the resource's subresources beyond status and
	// scale, in discovery order.
	Subresources []Subresource
	// SecretBearing tells that the resource's bodies carry credentials
	// (Secrets, TokenReviews): audit never records them.
	SecretBearing bool
	// DeleteReturnsObject tells whether DELETE answers with the deleted
	// object rather than a Status, as kube's registries for this resource do.
	DeleteReturnsObject bool
	// UnservedVerbs are the verbs of a stored resource that kube's
	// registry for it does not serve (a Namespace has no
	// "deletecollection"): discovery does not list them, OpenAPI has no
	// operation for them and a request for one is answered 405.
	UnservedVerbs metav1.Verbs
	// Strategy holds the per-type behaviour.
	Strategy Strategy
	// Defines, for a kind whose objects define further resources (a
	// CustomResourceDefinition), tells what one object defines; the API
	// server serves it.
	Defines func(obj runtime.Object) (*Definition, error)
	// Answer, for a create-only kind (an access review, a token review),
	// answers a create; nothing is stored and no other verb is served.
	Answer AnswerFunc
	// StoredAs, when set, says the resource is a view of another stored
	// kind (events.k8s.io Events are core Events in storage).
	StoredAs *StorageView
	// NewAllocator, when set, makes the allocator of what the resource's
	// objects hold exclusively across the cluster (a Service's cluster
	// IPs and node ports).
	NewAllocator func(AllocatorConfig) (Allocator, error)
	// Maintain is the API server's own upkeep of the resource's objects,
	// run when it starts serving and then periodically.
	Maintain []Maintenance
}

// StorageView converts between a served kind and the kind it is stored
// as, when the two differ, so that both APIs show the same objects.
type StorageView struct {
	// Resource is the stored resource's name in storage keys.
	Resource string
	// New returns an empty stored object.
	New func() runtime.Object
	// ToStored converts a served object to its stored form.
	ToStored func(runtime.Object) runtime.Object
	// FromStored converts a stored object to its served form.
	FromStored func(runtime.Object) runtime.Object
}

// Serves tells whether the resource serves verb, one of a stored
// resource's verbs ("deletecollection").
func (r *Resource) Serves(verb string) bool {
	return !slices.Contains(r.UnservedVerbs, verb)
}

// GroupResource returns the descriptor's group and resource, as used in
// error messages ("deployments.apps").
func (r *Resource) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.GroupVersion.Group, Resource: r.Name}
}

// GroupVersionKind returns the descriptor's kind with its group and version.
func (r *Resource) GroupVersionKind() schema.GroupVersionKind {
	return r.GroupVersion.WithKind(r.Kind)
}

// GroupVersionResource returns the descriptor's resource with its group and version.
func (r *Resource) GroupVersionResource() schema.GroupVersionResource {
	return r.GroupVersion.WithResource(r.Name)
}

// Strategy is the per-type behaviour of a resource. Every function field is
// optional; a nil field means "nothing to do" (or, for Fields, only the
// metadata fields every resource has).
type Strategy struct {
	// Default fills defaults into a typed object, as Kubernetes' generated
	// defaulters do for the built-in types.
	Default func(obj runtime.Object)
	// PrepareForCreate adjusts a new object before validation, for example
	// resetting its status or setting a Pod's phase to Pending.
	PrepareForCreate func(ctx context.Context, obj runtime.Object)
	// PrepareForUpdate adjusts an updated object before validation, given the
	// stored one.
	PrepareForUpdate func(ctx context.Context, obj, old runtime.Object)
	// Validate validates a new object, returning kube's field errors.
	Validate func(ctx context.Context, obj runtime.Object) field.ErrorList
	// ValidateUpdate validates an update of old to obj.
	ValidateUpdate func(ctx context.Context, obj, old runtime.Object) field.ErrorList
	// ValidateStatus validates the status of an object written through
	// the status subresource, in addition to ValidateUpdate, as kube's
	// status strategies do (ReplicaSets' and ReplicationControllers'
	// replica counts).
	ValidateStatus func(ctx context.Context, obj runtime.Object) field.ErrorList
	// NoGeneration is true for resources whose metadata.generation is not
	// maintained (ConfigMaps, Secrets, Events, ...). Otherwise generation
	// starts at 1 and is bumped when anything but metadata and status changes.
	NoGeneration bool
	// StatusUpdatesAnnotations is true for resources whose /status writes
	// may also change annotations, as kube's status strategies for
	// Deployments and ReplicaSets allow (their controllers record the
	// revision there).
	StatusUpdatesAnnotations bool
	// OrphansByDefault is true for resources whose dependents a delete
	// without a propagation policy orphans (the object is held by the
	// orphan finalizer until the garbage collector has released them), as
	// kube's DefaultGarbageCollectionPolicy answers for core/v1
	// ReplicationControllers; other resources delete in the background.
	OrphansByDefault bool
	// RequireResourceVersion is true for resources whose updates must
	// name the resourceVersion they replace (kube's strategies that do not
	// AllowUnconditionalUpdate): a PUT without one is refused.
	RequireResourceVersion bool
	// KeepStatusOnCreate is true for resources whose status a client may set
	// on create (Nodes, Events); otherwise status is reset on create.
	KeepStatusOnCreate bool
	// Fields returns the field-selector fields of an object beyond
	// metadata.name and metadata.namespace.
	Fields func(obj runtime.Object) fields.Set
	// Table converts objects to server-side table rows. Every built-in
	// kind states kube's (tables.CreatedAt for those kube has no printer
	// for); nil leaves the choice to the API layer.
	Table *tables.TableConvertor
	// GracePeriod is how many seconds an object is given before it is
	// removed on delete (a scheduled Pod's termination grace period); nil
	// or 0 removes it at once unless finalizers hold it.
	GracePeriod func(obj runtime.Object, opts *metav1.DeleteOptions) int64
	// HoldsDeletion tells whether kind-specific finalizers hold a deleted
	// object beyond metadata.finalizers (a Namespace's spec.finalizers,
	// removed through /finalize).
	HoldsDeletion func(obj runtime.Object) bool
	// Status, when set, is what a write through /status does for a kind
	// whose status strategy is its own (a CertificateSigningRequest keeps
	// its approval conditions): Merge in place of copying the status, and
	// its ValidateUpdate in place of the main one.
	Status *SubresourceStrategy
	// PrepareForDelete adjusts an object that delete is about to mark
	// rather than remove (a Namespace turns Terminating). It runs on every
	// delete, before the decision, so it may also add finalizers that hold
	// the object (a CustomResourceDefinition's cleanup finalizer).
	PrepareForDelete func(obj runtime.Object)

	// validatesMetadata is true for kinds whose own validation checks the
	// object metadata (CustomResourceDefinitions, with
	// apiextensions-apiserver's rules); All adds the generic metadata
	// checks (withGenericChecks) to every other built-in kind.
	validatesMetadata bool
}

// SubresourceStrategy is what an update through a subresource may do.
type SubresourceStrategy struct {
	// Merge copies what the subresource writes from sent into current (a
	// copy of the stored object) and returns it.
	Merge func(current, sent runtime.Object) runtime.Object
	// ValidateUpdate validates the merged object against the stored one,
	// in place of the main resource's update validation.
	ValidateUpdate func(ctx context.Context, obj, old runtime.Object) field.ErrorList
	// Narrow marks the API server's own narrow writes (namespaces/finalize):
	// the kind's defaulting does not apply to them.
	Narrow bool
}
