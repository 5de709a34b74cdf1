package api

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minik/internal/registry"
)

// Custom resources are converted between the versions of their definition
// as kube's apiextensions-apiserver converts them, with its converter:
// conversion strategy None relabels apiVersion; Webhook sends a
// ConversionReview (v1, or v1beta1 when the definition asks only for it)
// to the definition's webhook, over HTTPS trusting its caBundle, checks
// the answer and keeps the metadata but labels and annotations, with
// kube's errors ("conversion webhook for example.com/v1, Kind=Widget
// failed: ...").

// crdConversionTimeout bounds the lookup of a conversion webhook's Service.
const crdConversionTimeout = 5 * time.Second

// newCRDConverters returns the factory of custom resource converters; its
// webhooks' Services are found through the server's own storage.
func newCRDConverters(s *Server) (*conversion.CRConverterFactory, error) {
	f, err := conversion.NewCRConverterFactory(serviceResolver{s}, nil)
	if err != nil {
		return nil, fmt.Errorf("custom resource converters: %w", err)
	}
	return f, nil
}

// convertCustom converts u to gv with conv (nil: relabel only).
func convertCustom(conv runtime.ObjectConvertor, u *unstructured.Unstructured, gv schema.GroupVersion) (*unstructured.Unstructured, error) {
	if u.GetAPIVersion() == gv.String() || conv == nil {
		u.SetAPIVersion(gv.String())
		return u, nil
	}
	out, err := conv.ConvertToVersion(u, gv)
	if err != nil {
		return nil, err
	}
	c, ok := out.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("conversion of %s to %s gave a %T", u.GroupVersionKind(), gv, out)
	}
	return c, nil
}

// serviceResolver reaches Services as admission and conversion webhooks
// do (registry.ServiceEndpoint): a ready endpoint, as kube-apiserver with
// --enable-aggregator-routing.
type serviceResolver struct{ s *Server }

// ResolveEndpoint implements k8s.io/apiserver's webhook.ServiceResolver.
func (r serviceResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	ctx, cancel := context.WithTimeout(context.Background(), crdConversionTimeout)
	defer cancel()
	return registry.ServiceEndpoint(ctx, serverEnv(r), namespace, name, port)
}
