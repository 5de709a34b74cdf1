package api

import (
	"context"
	"fmt"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minik/internal/admission/webhook"
	"minik/internal/storage"
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

// crdConverter returns the converter of a definition's versions.
func (s *Server) crdConverter(crd *apiextensionsv1.CustomResourceDefinition) (runtime.ObjectConvertor, error) {
	if crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy == apiextensionsv1.NoneConverter {
		return nil, nil
	}
	safe, _, err := s.crdConverters.NewConverter(crd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", crd.Name, err)
	}
	return safe, nil
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

// serviceResolver finds a webhook's Service and its EndpointSlices in
// storage and dials what admission webhooks dial (webhook.ServiceAddress):
// a ready endpoint, as kube-apiserver with --enable-aggregator-routing.
type serviceResolver struct{ s *Server }

// ResolveEndpoint implements k8s.io/apiserver's webhook.ServiceResolver.
func (r serviceResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	ctx, cancel := context.WithTimeout(context.Background(), crdConversionTimeout)
	defer cancel()
	sh := r.s.handler(corev1.SchemeGroupVersion.WithResource("services"))
	eh := r.s.handler(discoveryv1.SchemeGroupVersion.WithResource("endpointslices"))
	if sh == nil || eh == nil {
		return nil, fmt.Errorf("services and endpointslices are not served")
	}
	obj, err := sh.get(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	sel := selection{labels: labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name}), fields: fields.Everything()}
	objs, _, err := eh.list(ctx, namespace, sel, storage.ListOptions{})
	if err != nil {
		return nil, err
	}
	slices := make([]*discoveryv1.EndpointSlice, 0, len(objs))
	for _, o := range objs {
		slices = append(slices, o.(*discoveryv1.EndpointSlice))
	}
	addr, err := webhook.ServiceAddress(obj.(*corev1.Service), port, slices)
	if err != nil {
		return nil, err
	}
	return &url.URL{Scheme: "https", Host: addr}, nil
}
