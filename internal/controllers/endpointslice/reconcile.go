package endpointslice

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubectl/pkg/util/podutils"
)

// errStale: the informer has not caught up with this controller's writes.
var errStale = errors.New("endpointslice cache is behind this controller's writes")

var serviceKind = corev1.SchemeGroupVersion.WithKind("Service")

// sync brings the slices of one Service in line with its pods.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.sliceLister.EndpointSlices(ns).List(labels.SelectorFromSet(labels.Set{
		discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: ManagedBy,
	}))
	if err != nil {
		return err
	}
	svc, err := c.serviceLister.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return c.deleteOrphans(ctx, key, cached)
	}
	if err != nil {
		return err
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Selector == nil {
		// No endpoints from this controller: an ExternalName Service has
		// none, and one without a selector has its owner's.
		return nil
	}
	if c.tracker.Stale(key, cached) {
		return errStale
	}
	pods, err := c.podLister.Pods(ns).List(labels.SelectorFromValidatedSet(svc.Spec.Selector))
	if err != nil {
		return err
	}
	plan := c.plan(svc, pods, cached)
	if err := c.apply(ctx, svc, plan); err != nil {
		c.recorder.Eventf(svc, corev1.EventTypeWarning, ReasonFailedToUpdateEndpointSlices,
			"Error updating Endpoint Slices for Service %s/%s: %v", svc.Namespace, svc.Name, err)
		return err
	}
	return nil
}

// deleteOrphans deletes the slices of a deleted Service that still name it
// as their controller (the garbage collector would, too; doing it here
// takes the endpoints away at once). Slices orphaned on purpose have lost
// that reference and stay.
func (c *Controller) deleteOrphans(ctx context.Context, key string, cached []*discoveryv1.EndpointSlice) error {
	for _, s := range cached {
		ref := metav1.GetControllerOfNoCopy(s)
		if ref == nil || ref.Kind != serviceKind.Kind || ref.APIVersion != serviceKind.GroupVersion().String() {
			continue
		}
		err := c.client.DiscoveryV1().EndpointSlices(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete endpointslice %s/%s: %w", s.Namespace, s.Name, err)
		}
	}
	c.tracker.Forget(key)
	return nil
}

// plan is the writes that bring a Service's slices in line.
type plan struct {
	create, update, delete []*discoveryv1.EndpointSlice
}

// group is the desired endpoints sharing one address type and port
// mapping: they go into the same slices.
type group struct {
	addressType discoveryv1.AddressType
	ports       []discoveryv1.EndpointPort
	endpoints   map[string]discoveryv1.Endpoint
}

func (g *group) key() string { return GroupKey(g.addressType, g.ports) }

// GroupKey identifies the slices of one address type and port mapping:
// endpoints with the same key share slices.
func GroupKey(at discoveryv1.AddressType, ports []discoveryv1.EndpointPort) string {
	parts := make([]string, 0, len(ports))
	for _, p := range ports {
		var name, proto, app string
		var num int32
		if p.Name != nil {
			name = *p.Name
		}
		if p.Protocol != nil {
			proto = string(*p.Protocol)
		}
		if p.AppProtocol != nil {
			app = *p.AppProtocol
		}
		if p.Port != nil {
			num = *p.Port
		}
		parts = append(parts, name+"/"+proto+"/"+strconv.Itoa(int(num))+"/"+app)
	}
	sort.Strings(parts)
	return string(at) + "|" + strings.Join(parts, ",")
}

// EndpointKey identifies an endpoint across syncs: its pod (target), or
// else its first address.
func EndpointKey(ep *discoveryv1.Endpoint) string {
	if ep.TargetRef != nil && ep.TargetRef.UID != "" {
		return string(ep.TargetRef.UID)
	}
	if len(ep.Addresses) > 0 {
		return ep.Addresses[0]
	}
	return ""
}

// addressTypes are the slice address types of a Service.
func addressTypes(svc *corev1.Service) []discoveryv1.AddressType {
	var out []discoveryv1.AddressType
	for _, f := range svc.Spec.IPFamilies {
		if f == corev1.IPv6Protocol {
			out = append(out, discoveryv1.AddressTypeIPv6)
		} else {
			out = append(out, discoveryv1.AddressTypeIPv4)
		}
	}
	if len(out) == 0 {
		out = []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4}
	}
	return out
}

// desired computes the endpoint groups of a Service from its pods, as
// kube's reconciler does: a pod is an endpoint once it has an IP, until it
// is terminal; terminating pods stay with ready=false, terminating=true.
func (c *Controller) desired(svc *corev1.Service, pods []*corev1.Pod) map[string]*group {
	groups := map[string]*group{}
	for _, at := range addressTypes(svc) {
		for _, pod := range pods {
			if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
				continue
			}
			addrs := podAddresses(pod, at)
			if len(addrs) == 0 {
				continue
			}
			ports := endpointPorts(svc, pod)
			g := &group{addressType: at, ports: ports}
			if have, ok := groups[g.key()]; ok {
				g = have
			} else {
				g.endpoints = map[string]discoveryv1.Endpoint{}
				groups[g.key()] = g
			}
			ep := c.endpoint(svc, pod, addrs)
			g.endpoints[EndpointKey(&ep)] = ep
		}
	}
	return groups
}

// podAddresses returns a pod's first IP of the address type.
func podAddresses(pod *corev1.Pod, at discoveryv1.AddressType) []string {
	ips := make([]string, 0, len(pod.Status.PodIPs)+1)
	for _, ip := range pod.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	if len(ips) == 0 && pod.Status.PodIP != "" {
		ips = append(ips, pod.Status.PodIP)
	}
	for _, ip := range ips {
		a, err := netip.ParseAddr(ip)
		if err != nil {
			continue
		}
		if is6 := a.Is6() && !a.Is4In6(); is6 == (at == discoveryv1.AddressTypeIPv6) {
			return []string{a.Unmap().String()}
		}
	}
	return nil
}

// endpoint builds a pod's endpoint with kube's conditions: serving is the
// pod's readiness, terminating its deletion, and ready is serving and not
// terminating (or always, for publishNotReadyAddresses).
func (c *Controller) endpoint(svc *corev1.Service, pod *corev1.Pod, addrs []string) discoveryv1.Endpoint {
	serving := podutils.IsPodReady(pod)
	terminating := pod.DeletionTimestamp != nil
	ready := svc.Spec.PublishNotReadyAddresses || serving && !terminating
	ep := discoveryv1.Endpoint{
		Addresses:  addrs,
		Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating},
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
	}
	if pod.Spec.NodeName != "" {
		nodeName := pod.Spec.NodeName
		ep.NodeName = &nodeName
		if node, err := c.nodeLister.Get(nodeName); err == nil {
			if zone := node.Labels[corev1.LabelTopologyZone]; zone != "" {
				ep.Zone = &zone
			}
		}
	}
	if pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name {
		hostname := pod.Spec.Hostname
		ep.Hostname = &hostname
	}
	return ep
}

// endpointPorts resolves the Service's ports against a pod: a named
// targetPort is looked up among the pod's container ports (a pod without
// it gets no such port), a number is used as is.
func endpointPorts(svc *corev1.Service, pod *corev1.Pod) []discoveryv1.EndpointPort {
	out := make([]discoveryv1.EndpointPort, 0, len(svc.Spec.Ports))
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		num, ok := FindPort(pod, sp)
		if !ok {
			continue
		}
		name, proto := sp.Name, sp.Protocol
		out = append(out, discoveryv1.EndpointPort{Name: &name, Protocol: &proto, Port: &num, AppProtocol: sp.AppProtocol})
	}
	return out
}

// FindPort resolves a Service port's target port on a pod, as kube's
// podutil.FindPort does: a number, or a named container port of the
// same protocol (restartable init containers included).
func FindPort(pod *corev1.Pod, sp *corev1.ServicePort) (int32, bool) {
	tp := sp.TargetPort
	if tp.Type == intstr.Int {
		if tp.IntVal == 0 {
			return sp.Port, true
		}
		return tp.IntVal, true
	}
	containers := slices.Clone(pod.Spec.Containers)
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			containers = append(containers, c)
		}
	}
	for _, c := range containers {
		for _, p := range c.Ports {
			proto := p.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			if p.Name == tp.StrVal && proto == sp.Protocol {
				return p.ContainerPort, true
			}
		}
	}
	return 0, false
}

// sliceLabels are a Service's labels plus the controller's, as kube's
// setEndpointSliceLabels makes them.
func sliceLabels(svc *corev1.Service) map[string]string {
	out := map[string]string{}
	for k, v := range svc.Labels {
		switch k {
		case discoveryv1.LabelServiceName, discoveryv1.LabelManagedBy, corev1.IsHeadlessService:
			continue
		}
		out[k] = v
	}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		out[corev1.IsHeadlessService] = ""
	}
	out[discoveryv1.LabelServiceName] = svc.Name
	out[discoveryv1.LabelManagedBy] = ManagedBy
	return out
}

// newSlice returns an empty slice of a group for a Service.
func newSlice(svc *corev1.Service, at discoveryv1.AddressType, ports []discoveryv1.EndpointPort) *discoveryv1.EndpointSlice {
	prefix := svc.Name + "-"
	if len(validation.NameIsDNSSubdomain(prefix, true)) != 0 {
		prefix = svc.Name
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    prefix,
			Namespace:       svc.Namespace,
			Labels:          sliceLabels(svc),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(svc, serviceKind)},
		},
		AddressType: at,
		Ports:       ports,
		Endpoints:   []discoveryv1.Endpoint{},
	}
}

func ownedBy(s *discoveryv1.EndpointSlice, svc *corev1.Service) bool {
	ref := metav1.GetControllerOfNoCopy(s)
	return ref != nil && ref.UID == svc.UID
}

// plan computes the writes, keeping endpoints in the slices they are in
// (so that an update touches few slices), filling new endpoints into slices
// with room before creating slices, and deleting slices left empty. A
// Service without any endpoint keeps one empty placeholder slice per
// address type, as kube's does.
func (c *Controller) plan(svc *corev1.Service, pods []*corev1.Pod, cached []*discoveryv1.EndpointSlice) plan {
	var p plan
	groups := c.desired(svc, pods)
	existing := map[string][]*discoveryv1.EndpointSlice{}
	wantTypes := map[discoveryv1.AddressType]bool{}
	for _, at := range addressTypes(svc) {
		wantTypes[at] = true
	}
	for _, s := range cached {
		if !ownedBy(s, svc) || !wantTypes[s.AddressType] {
			p.delete = append(p.delete, s)
			continue
		}
		k := GroupKey(s.AddressType, s.Ports)
		existing[k] = append(existing[k], s.DeepCopy())
	}
	labels := sliceLabels(svc)
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		have := existing[k]
		delete(existing, k)
		remaining := maps.Clone(g.endpoints)
		var changed, unchanged []*discoveryv1.EndpointSlice
		for _, s := range have {
			dirty := !maps.Equal(s.Labels, labels)
			kept := s.Endpoints[:0:0]
			for i := range s.Endpoints {
				ek := EndpointKey(&s.Endpoints[i])
				want, ok := remaining[ek]
				if !ok {
					dirty = true
					continue
				}
				delete(remaining, ek)
				if !equality.Semantic.DeepEqual(s.Endpoints[i], want) {
					dirty = true
				}
				kept = append(kept, want)
			}
			s.Endpoints, s.Labels = kept, labels
			if dirty {
				changed = append(changed, s)
			} else {
				unchanged = append(unchanged, s)
			}
		}
		// New endpoints fill slices being written anyway, then untouched
		// ones, then new slices.
		add := slices.Sorted(maps.Keys(remaining))
		fill := func(s *discoveryv1.EndpointSlice) bool {
			n := min(MaxEndpointsPerSlice-len(s.Endpoints), len(add))
			for _, ek := range add[:max(n, 0)] {
				s.Endpoints = append(s.Endpoints, remaining[ek])
			}
			add = add[max(n, 0):]
			return n > 0
		}
		for _, s := range changed {
			fill(s)
		}
		for _, s := range unchanged {
			if fill(s) {
				changed = append(changed, s)
			}
		}
		for len(add) > 0 {
			s := newSlice(svc, g.addressType, g.ports)
			fill(s)
			p.create = append(p.create, s)
		}
		for _, s := range changed {
			if len(s.Endpoints) == 0 {
				p.delete = append(p.delete, s)
			} else {
				p.update = append(p.update, s)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(existing)) {
		p.delete = append(p.delete, existing[k]...)
	}
	// A placeholder keeps the Service visibly without endpoints.
	for _, at := range addressTypes(svc) {
		if hasEndpoints(groups, at) {
			continue
		}
		placeholder := newSlice(svc, at, nil)
		kept := false
		for i, s := range p.delete {
			if !kept && s.AddressType == at && len(s.Ports) == 0 && len(s.Endpoints) == 0 && ownedBy(s, svc) && maps.Equal(s.Labels, labels) {
				p.delete = slices.Delete(p.delete, i, i+1)
				kept = true
				break
			}
		}
		if !kept && !hasPlaceholder(cached, svc, at, labels) {
			p.create = append(p.create, placeholder)
		}
	}
	return p
}

func hasEndpoints(groups map[string]*group, at discoveryv1.AddressType) bool {
	for _, g := range groups {
		if g.addressType == at && len(g.endpoints) > 0 {
			return true
		}
	}
	return false
}

// hasPlaceholder tells whether an untouched cached slice already is the
// placeholder of an address type.
func hasPlaceholder(cached []*discoveryv1.EndpointSlice, svc *corev1.Service, at discoveryv1.AddressType, labels map[string]string) bool {
	for _, s := range cached {
		if s.AddressType == at && len(s.Ports) == 0 && len(s.Endpoints) == 0 && ownedBy(s, svc) && maps.Equal(s.Labels, labels) {
			return true
		}
	}
	return false
}

// apply writes the plan through the tracker (Tracker.Apply).
func (c *Controller) apply(ctx context.Context, svc *corev1.Service, p plan) error {
	return c.tracker.Apply(ctx, c.client.DiscoveryV1().EndpointSlices(svc.Namespace), "service "+svc.Namespace+"/"+svc.Name, p.create, p.update, p.delete)
}
