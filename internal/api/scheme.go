package api

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
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

	// Gateway API (gateway.networking.k8s.io/v1), served as built-in kinds
	// (internal/dataplane implements them).
	if err := gatewayv1.Install(Scheme); err != nil {
		panic(err)
	}
	// CustomResourceDefinitions (apiextensions.k8s.io/v1); the custom
	// resources they define are unstructured and not in the scheme.
	if err := apiextensionsv1.AddToScheme(Scheme); err != nil {
		panic(err)
	}
	// APIServices (apiregistration.k8s.io/v1), kube-aggregator's kind.
	if err := apiregistrationv1.AddToScheme(Scheme); err != nil {
		panic(err)
	}
	Codecs = serializer.NewCodecFactory(Scheme)
}
