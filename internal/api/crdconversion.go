package api

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

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

// serviceResolver finds a webhook's Service in storage: a ready endpoint
// of the port (as kube-apiserver with --enable-aggregator-routing), else
// its cluster IP, else its external name.
type serviceResolver struct{ s *Server }

// ResolveEndpoint implements k8s.io/apiserver's webhook.ServiceResolver.
func (r serviceResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	ctx, cancel := context.WithTimeout(context.Background(), crdConversionTimeout)
	defer cancel()
	h := r.s.handler(corev1.SchemeGroupVersion.WithResource("services"))
	if h == nil {
		return nil, fmt.Errorf("services are not served")
	}
	obj, err := h.get(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	svc := obj.(*corev1.Service)
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return &url.URL{Scheme: "https", Host: net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port)))}, nil
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			sp = &svc.Spec.Ports[i]
		}
	}
	if sp == nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", port, name))
	}
	if addr, ok := r.readyEndpoint(ctx, namespace, name, sp); ok {
		return &url.URL{Scheme: "https", Host: addr}, nil
	}
	if ip := svc.Spec.ClusterIP; ip != "" && ip != corev1.ClusterIPNone {
		return &url.URL{Scheme: "https", Host: net.JoinHostPort(ip, strconv.Itoa(int(port)))}, nil
	}
	return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("service %q does not have ready endpoints", name))
}

// readyEndpoint is a ready address of the Service's EndpointSlices on the
// target of sp.
func (r serviceResolver) readyEndpoint(ctx context.Context, namespace, name string, sp *corev1.ServicePort) (string, bool) {
	h := r.s.handler(discoveryv1.SchemeGroupVersion.WithResource("endpointslices"))
	if h == nil {
		return "", false
	}
	sel := selection{labels: labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name}), fields: fields.Everything()}
	objs, _, err := h.list(ctx, namespace, sel, storage.ListOptions{})
	if err != nil {
		return "", false
	}
	for _, obj := range objs {
		slice := obj.(*discoveryv1.EndpointSlice)
		var port int32
		for _, p := range slice.Ports {
			if p.Port != nil && (p.Name == nil && sp.Name == "" || p.Name != nil && *p.Name == sp.Name) {
				port = *p.Port
			}
		}
		if port == 0 {
			continue
		}
		for _, ep := range slice.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready || len(ep.Addresses) == 0 {
				continue
			}
			return net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(port))), true
		}
	}
	return "", false
}
