package dataplane

import (
	"maps"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
)

// endpointIndex holds, per Service, the ready endpoints of each of its
// ports, computed from the Service's EndpointSlices (whoever wrote them)
// when a slice or the Service changes. Only endpoints whose ready
// condition is true (or unset, which kube reads as true) are listed.
type endpointIndex struct {
	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister

	mu sync.RWMutex
	// bySvc maps a Service to its port name's balancer.
	bySvc map[types.NamespacedName]map[string]*balancer
	// notReady counts, per Service, endpoints that exist but are not ready
	// (for the proxy's error messages).
	notReady map[types.NamespacedName]int
}

func newEndpointIndex(services corelisters.ServiceLister, slices discoverylisters.EndpointSliceLister) *endpointIndex {
	return &endpointIndex{
		services: services, slices: slices,
		bySvc:    map[types.NamespacedName]map[string]*balancer{},
		notReady: map[types.NamespacedName]int{},
	}
}

// update recomputes a Service's endpoints from the listers.
func (x *endpointIndex) update(key types.NamespacedName) {
	svc, err := x.services.Services(key.Namespace).Get(key.Name)
	if err != nil {
		x.mu.Lock()
		delete(x.bySvc, key)
		delete(x.notReady, key)
		x.mu.Unlock()
		return
	}
	list, _ := x.slices.EndpointSlices(key.Namespace).List(labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: key.Name}))
	ready := map[string][]string{}
	seen := map[string]bool{}
	notReady := 0
	for _, s := range list {
		if s.AddressType == discoveryv1.AddressTypeFQDN {
			continue
		}
		for _, ep := range s.Endpoints {
			if len(ep.Addresses) == 0 {
				continue
			}
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				notReady++
				continue
			}
			for _, p := range s.Ports {
				if p.Port == nil || p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP {
					continue
				}
				name := ""
				if p.Name != nil {
					name = *p.Name
				}
				addr := net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(*p.Port)))
				if seen[name+"/"+addr] {
					continue
				}
				seen[name+"/"+addr] = true
				ready[name] = append(ready[name], addr)
			}
		}
	}
	affinity := time.Duration(0)
	if svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		affinity = time.Duration(corev1.DefaultClientIPServiceAffinitySeconds) * time.Second
		if c := svc.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
			affinity = time.Duration(*c.ClientIP.TimeoutSeconds) * time.Second
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	old := x.bySvc[key]
	next := map[string]*balancer{}
	for _, sp := range svc.Spec.Ports {
		b := old[sp.Name]
		if b == nil {
			b = &balancer{}
		}
		addrs := ready[sp.Name]
		slices.Sort(addrs)
		b.set(addrs, affinity)
		next[sp.Name] = b
	}
	x.bySvc[key] = next
	x.notReady[key] = notReady
}

// balancer returns the balancer of a Service port, or nil.
func (x *endpointIndex) balancer(key types.NamespacedName, port string) *balancer {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.bySvc[key][port]
}

// notReadyCount is how many of a Service's endpoints are not ready.
func (x *endpointIndex) notReadyCount(key types.NamespacedName) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.notReady[key]
}

// backends is a balancer's immutable view.
type backends struct {
	addrs    []string
	affinity time.Duration
}

// balancer spreads connections (or requests) over a port's ready
// endpoints, round-robin, or by client IP when the Service asks for
// session affinity. It is safe for concurrent use; set replaces the
// endpoints without disturbing picks in flight.
type balancer struct {
	view atomic.Pointer[backends]
	next atomic.Uint64

	mu     sync.Mutex
	sticky map[string]stickyEntry
}

type stickyEntry struct {
	addr    string
	expires time.Time
}

func (b *balancer) set(addrs []string, affinity time.Duration) {
	if cur := b.view.Load(); cur != nil && cur.affinity == affinity && slices.Equal(cur.addrs, addrs) {
		return
	}
	b.view.Store(&backends{addrs: addrs, affinity: affinity})
	b.mu.Lock()
	defer b.mu.Unlock()
	if affinity == 0 {
		b.sticky = nil
		return
	}
	// Clients stuck to an endpoint that is gone start over.
	for ip, e := range b.sticky {
		if !slices.Contains(addrs, e.addr) {
			delete(b.sticky, ip)
		}
	}
}

// size is the number of ready endpoints.
func (b *balancer) size() int {
	if v := b.view.Load(); v != nil {
		return len(v.addrs)
	}
	return 0
}

// pick chooses an endpoint for a client, skipping those in skip (endpoints
// that just refused the client). ok is false when none is left.
func (b *balancer) pick(clientIP string, skip map[string]bool) (string, bool) {
	v := b.view.Load()
	if v == nil || len(v.addrs) == 0 {
		return "", false
	}
	now := time.Now()
	if v.affinity > 0 && clientIP != "" {
		b.mu.Lock()
		e, ok := b.sticky[clientIP]
		b.mu.Unlock()
		if ok && now.Before(e.expires) && !skip[e.addr] && slices.Contains(v.addrs, e.addr) {
			b.stick(clientIP, e.addr, now.Add(v.affinity))
			return e.addr, true
		}
	}
	n := uint64(len(v.addrs))
	start := b.next.Add(1) - 1
	for i := range n {
		addr := v.addrs[(start+i)%n]
		if skip[addr] {
			continue
		}
		if v.affinity > 0 && clientIP != "" {
			b.stick(clientIP, addr, now.Add(v.affinity))
		}
		return addr, true
	}
	return "", false
}

func (b *balancer) stick(clientIP, addr string, expires time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sticky == nil {
		b.sticky = map[string]stickyEntry{}
	}
	b.sticky[clientIP] = stickyEntry{addr: addr, expires: expires}
	if len(b.sticky) > 4096 {
		// Forget expired clients now and then.
		now := time.Now()
		maps.DeleteFunc(b.sticky, func(_ string, e stickyEntry) bool { return now.After(e.expires) })
	}
}
