package registry

import (
	"context"
	"fmt"
	"net/netip"
	"time"

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
