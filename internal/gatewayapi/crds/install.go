package crds

import (
	"context"
	"fmt"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Action is what Install did with one object.
type Action string

// The actions of Install.
const (
	// Created: the object was absent.
	Created Action = "created"
	// Updated: it was installed at an older bundle version.
	Updated Action = "updated"
	// Kept: it was installed at this bundle version or a newer one, or
	// from the experimental channel, or without a version Install can
	// read; it is left as it is.
	Kept Action = "kept"
)

// Outcome is Install's result for one object.
type Outcome struct {
	// Kind and Name name the object.
	Kind, Name string
	// Action is what was done; Installed is the bundle version found
	// ("" when the object was absent).
	Action    Action
	Installed string
}

// Clients are the clients Install writes with.
type Clients struct {
	APIExtensions apiextensionsclient.Interface
	Kubernetes    kubernetes.Interface
}

// object is what Install handles: a typed API object.
type object interface {
	metav1.Object
	runtime.Object
}

// Install ensures the bundle in the cluster: each object absent is
// created, each installed at an older bundle version (and from the
// standard channel, or no channel) is updated to the bundle's — its spec
// replaced, its labels and annotations merged with the bundle's — and
// every other one is kept, so that a user's newer or experimental install
// is never downgraded. It does not wait for the definitions to be
// Established. It retries conflicts and returns the first other error,
// naming the object.
func Install(ctx context.Context, c Clients, b *Bundle) ([]Outcome, error) {
	var out []Outcome
	crds := c.APIExtensions.ApiextensionsV1().CustomResourceDefinitions()
	for _, want := range b.CRDs {
		o, err := ensure(ctx, "CustomResourceDefinition", want.DeepCopy(), crds.Get, crds.Create, crds.Update)
		if err != nil {
			return out, err
		}
		out = append(out, o)
	}
	vaps := c.Kubernetes.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	o, err := ensure(ctx, "ValidatingAdmissionPolicy", b.Policy.DeepCopy(), vaps.Get, vaps.Create, vaps.Update)
	if err != nil {
		return out, err
	}
	out = append(out, o)
	bindings := c.Kubernetes.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	o, err = ensure(ctx, "ValidatingAdmissionPolicyBinding", b.Binding.DeepCopy(), bindings.Get, bindings.Create, bindings.Update)
	if err != nil {
		return out, err
	}
	return append(out, o), nil
}

// ensure creates want or updates the installed object to it, as Install
// describes.
func ensure[T object](ctx context.Context, kind string, want T,
	get func(context.Context, string, metav1.GetOptions) (T, error),
	create func(context.Context, T, metav1.CreateOptions) (T, error),
	update func(context.Context, T, metav1.UpdateOptions) (T, error),
) (Outcome, error) {
	o := Outcome{Kind: kind, Name: want.GetName()}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := get(ctx, want.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			o.Action, o.Installed = Created, ""
			_, err = create(ctx, want, metav1.CreateOptions{FieldManager: FieldManager})
			if apierrors.IsAlreadyExists(err) {
				// Another minikd sharing the store was first: look again.
				return apierrors.NewConflict(schema.GroupResource{Resource: kind}, want.GetName(), err)
			}
			return err
		}
		if err != nil {
			return err
		}
		o.Installed = cur.GetAnnotations()[BundleVersionAnnotation]
		if !shouldUpdate(cur.GetAnnotations(), want.GetAnnotations()) {
			o.Action = Kept
			return nil
		}
		o.Action = Updated
		next := want.DeepCopyObject().(T)
		next.SetResourceVersion(cur.GetResourceVersion())
		next.SetLabels(merge(cur.GetLabels(), want.GetLabels()))
		next.SetAnnotations(merge(cur.GetAnnotations(), want.GetAnnotations()))
		next.SetFinalizers(cur.GetFinalizers())
		next.SetOwnerReferences(cur.GetOwnerReferences())
		_, err = update(ctx, next, metav1.UpdateOptions{FieldManager: FieldManager})
		return err
	})
	if err != nil {
		return o, fmt.Errorf("install %s %s: %w", kind, want.GetName(), err)
	}
	return o, nil
}

// FieldManager is the manager Install's writes are recorded under.
const FieldManager = "minik-gateway-api"

// shouldUpdate tells whether an installed object (its annotations) is
// older than the bundle's and of a channel the bundle may replace.
func shouldUpdate(installed, bundle map[string]string) bool {
	if ch := installed[ChannelAnnotation]; ch != "" && ch != bundle[ChannelAnnotation] {
		return false
	}
	have, err := utilversion.ParseSemantic(installed[BundleVersionAnnotation])
	if err != nil {
		return false
	}
	want, err := utilversion.ParseSemantic(bundle[BundleVersionAnnotation])
	if err != nil {
		return false
	}
	return have.LessThan(want)
}

// merge returns base with over's entries set.
func merge(base, over map[string]string) map[string]string {
	if len(base) == 0 && len(over) == 0 {
		return nil
	}
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}
