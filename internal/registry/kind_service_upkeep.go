package registry

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"

	"minik/internal/admission/webhook"
	"minik/internal/serviceips"
)

// newServiceAllocator is the Service kind's allocator of cluster IPs and
// node ports.
func newServiceAllocator(c AllocatorConfig) (Allocator, error) {
	return serviceips.New(c.Store, c.ServiceClusterIPRange, c.ServiceNodePortRange, c.Clock, c.Logger)
}

// serviceMaintenance is the API server's upkeep of Services: the
// default/kubernetes Service and its EndpointSlice point at it (checked
// every 10 s, as kube-apiserver's bootstrap controller), and allocations
// are repaired every minute.
var serviceMaintenance = []Maintenance{
	{Name: "kubernetes service", Interval: 10 * time.Second, Required: true, Run: ensureKubernetesService},
	{Name: "service allocation repair", Interval: time.Minute, Run: func(ctx context.Context, env Env) error {
		return env.Allocator(servicesResource).Repair(ctx)
	}},
}

// ensureKubernetesService keeps default/kubernetes and its EndpointSlice.
func ensureKubernetesService(ctx context.Context, env Env) error {
	alloc, ok := env.Allocator(servicesResource).(*serviceips.Allocator)
	if !ok {
		return fmt.Errorf("kubernetes service: services have no cluster IP allocator")
	}
	ep := env.APIEndpoint()
	ip := ep.Addr()
	if !ip.IsValid() || ip.IsUnspecified() {
		ip = netip.MustParseAddr("127.0.0.1")
	}
	return serviceips.EnsureKubernetesService(ctx, env.Store(servicesResource), env.Store(endpointSlicesResource), alloc.FirstIP(), ip, int32(ep.Port()))
}

// ServiceEndpoint is the URL of a ready endpoint of a Service's port, found
// through the server's stores as admission and conversion webhooks and
// services/proxy reach a Service (webhook.ServiceAddress).
func ServiceEndpoint(ctx context.Context, env Env, ns, name string, port int32) (*url.URL, error) {
	svcs, eps := env.Store(servicesResource), env.Store(endpointSlicesResource)
	if svcs == nil || eps == nil {
		return nil, fmt.Errorf("services and endpointslices are not served")
	}
	obj, err := svcs.Get(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, fmt.Errorf("service %s/%s is stored as a %T", ns, name, obj)
	}
	objs, err := eps.List(ctx, ns, labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name}))
	if err != nil {
		return nil, err
	}
	slices := make([]*discoveryv1.EndpointSlice, 0, len(objs))
	for _, o := range objs {
		if s, ok := o.(*discoveryv1.EndpointSlice); ok {
			slices = append(slices, s)
		}
	}
	addr, err := webhook.ServiceAddress(svc, port, slices)
	if err != nil {
		return nil, err
	}
	return &url.URL{Scheme: "https", Host: addr}, nil
}
