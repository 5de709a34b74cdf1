package admission

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// NamespaceGetter reads a Namespace; it returns a NotFound Status error
// when the namespace does not exist.
type NamespaceGetter func(ctx context.Context, name string) (*corev1.Namespace, error)

// NamespaceLifecycle refuses objects in namespaces that do not exist or are
// being terminated, and the deletion of the namespaces the system needs, as
// kube's plugin of that name does.
type NamespaceLifecycle struct {
	// Get reads a namespace.
	Get NamespaceGetter
	// Immortal namespaces may not be deleted.
	Immortal map[string]bool
}

// Name implements Validator.
func (*NamespaceLifecycle) Name() string { return "NamespaceLifecycle" }

// Validate implements Validator.
func (p *NamespaceLifecycle) Validate(ctx context.Context, a *Attributes) error {
	if a.Resource.Group == "" && a.Resource.Resource == "namespaces" {
		if a.Operation == Delete && p.Immortal[a.Name] {
			return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, fmt.Errorf("this namespace may not be deleted"))
		}
		return nil
	}
	if a.Namespace == "" || a.Operation != Create {
		return nil
	}
	ns, err := p.Get(ctx, a.Namespace)
	if err != nil {
		return err
	}
	if ns.Status.Phase == corev1.NamespaceTerminating || ns.DeletionTimestamp != nil {
		// Events may still be written into a terminating namespace.
		if a.Resource.Resource == "events" {
			return nil
		}
		return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
	}
	return nil
}
