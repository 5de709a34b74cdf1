package api

import (
	"fmt"
	"reflect"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"minik/internal/registry"
)

// Scheme holds every type the server serves: the built-in API types plus
// meta.k8s.io's Table and PartialObjectMetadata.
var Scheme = runtime.NewScheme()

// Codecs are the JSON, YAML and protobuf serializers over Scheme.
var Codecs serializer.CodecFactory

// metaV1 is meta.k8s.io/v1, the group of Table and PartialObjectMetadata.
var metaV1 = schema.GroupVersion{Group: "meta.k8s.io", Version: "v1"}

func init() {
	if err := clientgoscheme.AddToScheme(Scheme); err != nil {
		panic(err)
	}
	if err := metav1.AddMetaToScheme(Scheme); err != nil {
		panic(err)
	}
	// Clients send options (DeleteOptions above all) as meta.k8s.io/v1.
	Scheme.AddKnownTypes(metav1.SchemeGroupVersion, &metav1.DeleteOptions{}, &metav1.ListOptions{},
		&metav1.GetOptions{}, &metav1.CreateOptions{}, &metav1.UpdateOptions{}, &metav1.PatchOptions{})
	// Table watches send WatchEvents of meta.k8s.io/v1.
	Scheme.AddKnownTypeWithName(metaV1.WithKind("WatchEvent"), &metav1.WatchEvent{})

	// CustomResourceDefinitions (apiextensions.k8s.io/v1); the custom
	// resources they define are unstructured and not in the scheme.
	if err := apiextensionsv1.AddToScheme(Scheme); err != nil {
		panic(err)
	}
	// APIServices (apiregistration.k8s.io/v1), kube-aggregator's kind.
	if err := apiregistrationv1.AddToScheme(Scheme); err != nil {
		panic(err)
	}
	if err := addViewConversions(Scheme, registry.All()); err != nil {
		panic(err)
	}
	Codecs = serializer.NewCodecFactory(Scheme)
}

// addViewConversions registers, for each resource served as a view of
// another kind's storage (registry.Resource.StoredAs), its conversions to
// and from the stored kind, so that the scheme converts between the two
// versions as kube's does through the internal type: field management
// compares and merges managedFields entries written through either
// version with them.
func addViewConversions(s *runtime.Scheme, resources []*registry.Resource) error {
	for _, r := range resources {
		view := r.StoredAs
		if view == nil {
			continue
		}
		served, err := s.New(r.GroupVersionKind())
		if err != nil {
			return fmt.Errorf("view %s: %w", r.GroupVersionKind(), err)
		}
		stored := view.New()
		if err := s.AddConversionFunc(served, stored, convertInto(view.ToStored)); err != nil {
			return fmt.Errorf("view %s: %w", r.GroupVersionKind(), err)
		}
		if err := s.AddConversionFunc(stored, served, convertInto(view.FromStored)); err != nil {
			return fmt.Errorf("view %s: %w", r.GroupVersionKind(), err)
		}
	}
	return nil
}

// convertInto adapts a view's conversion to the scheme's: it converts a
// and sets *b to the result.
func convertInto(convert func(runtime.Object) runtime.Object) conversion.ConversionFunc {
	return func(a, b any, _ conversion.Scope) error {
		in, ok := a.(runtime.Object)
		if !ok {
			return fmt.Errorf("convert %T: not an object", a)
		}
		out := reflect.ValueOf(convert(in))
		dst := reflect.ValueOf(b)
		if dst.Kind() != reflect.Pointer || out.Type() != dst.Type() {
			return fmt.Errorf("convert %T to %T: the view converts to %s", a, b, out.Type())
		}
		dst.Elem().Set(out.Elem())
		return nil
	}
}
