package endpointslicemirroring

//lint:file-ignore SA1019 core/v1 Endpoints are deprecated, and kube still mirrors the ones users write: so does minik.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	netutils "k8s.io/utils/net"

	"minik/internal/controllers/endpointslice"
)

var endpointsKind = corev1.SchemeGroupVersion.WithKind("Endpoints")

// sync brings the mirrored slices of one Endpoints object in line with it.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	ep, err := c.endpointsLister.Endpoints(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return c.deleteMirrored(ctx, key)
	}
	if err != nil {
		return err
	}
	if !shouldMirror(ep) {
		return c.deleteMirrored(ctx, key)
	}
	svc, err := c.serviceLister.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return c.deleteMirrored(ctx, key)
	}
	if err != nil {
		return err
	}
	if svc.Spec.Selector != nil {
		// The endpointslice controller writes this Service's slices.
		return c.deleteMirrored(ctx, key)
	}
	cached, err := c.mirrored(ns, name)
	if err != nil {
		return err
	}
	if c.tracker.Stale(key, cached) {
		return errStale
	}
	want, invalid, skipped := desired(ep, c.maxPerSubset)
	if invalid > 0 {
		c.recorder.Eventf(ep, corev1.EventTypeWarning, ReasonInvalidIPAddress,
			"Skipped %d invalid IP addresses when mirroring to EndpointSlices", invalid)
	}
	if skipped > invalid {
		c.recorder.Eventf(ep, corev1.EventTypeWarning, ReasonTooManyAddressesToMirror,
			"A max of %d addresses can be mirrored to EndpointSlices per Endpoints subset. %d addresses were skipped", c.maxPerSubset, skipped)
	}
	if err := c.apply(ctx, ep, plan(ep, want, cached)); err != nil {
		c.recorder.Eventf(ep, corev1.EventTypeWarning, ReasonFailedToUpdateEndpointSlices,
			"Error updating EndpointSlices for Endpoints %s/%s: %v", ep.Namespace, ep.Name, err)
		return err
	}
	return nil
}

// mirrored lists the cached slices this controller wrote for an Endpoints.
func (c *Controller) mirrored(ns, name string) ([]*discoveryv1.EndpointSlice, error) {
	return c.sliceLister.EndpointSlices(ns).List(labels.SelectorFromSet(labels.Set{
		discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: ManagedBy,
	}))
}

// deleteMirrored deletes every slice mirrored for an Endpoints that is no
// longer mirrored.
func (c *Controller) deleteMirrored(ctx context.Context, key string) error {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	c.tracker.Forget(key)
	cached, err := c.mirrored(ns, name)
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range cached {
		err := c.client.DiscoveryV1().EndpointSlices(ns).Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("delete endpointslice %s/%s: %w", ns, s.Name, err))
		}
	}
	return errors.Join(errs...)
}

// group is the mirrored endpoints of one address type and port mapping:
// one slice.
type group struct {
	addressType discoveryv1.AddressType
	ports       []discoveryv1.EndpointPort
	endpoints   []discoveryv1.Endpoint
	seen        map[string]bool
}

// desired groups an Endpoints' addresses by address type and ports, as
// kube's reconciler does after repacking the subsets: ready addresses
// first (an address both ready and not ready is ready), at most max per
// port mapping. It returns how many addresses were not IPs and how many
// were skipped in all (the invalid ones included).
func desired(ep *corev1.Endpoints, max int) (groups map[string]*group, invalid, skipped int) {
	groups = map[string]*group{}
	added := map[string]int{}
	for i := range ep.Subsets {
		ss := &ep.Subsets[i]
		ports := endpointPorts(ss.Ports)
		portsKey := endpointslice.GroupKey("", ports)
		for _, list := range []struct {
			addrs []corev1.EndpointAddress
			ready bool
		}{{ss.Addresses, true}, {ss.NotReadyAddresses, false}} {
			for _, a := range list.addrs {
				if added[portsKey] >= max {
					skipped++
					continue
				}
				e, at, ok := toEndpoint(a, list.ready)
				if !ok {
					invalid++
					skipped++
					continue
				}
				k := endpointslice.GroupKey(at, ports)
				g := groups[k]
				if g == nil {
					g = &group{addressType: at, ports: ports, seen: map[string]bool{}}
					groups[k] = g
				}
				ek := endpointslice.EndpointKey(&e)
				if g.seen[ek] {
					continue
				}
				g.seen[ek] = true
				g.endpoints = append(g.endpoints, e)
				added[portsKey]++
			}
		}
	}
	return groups, invalid, skipped
}

// toEndpoint mirrors one address: its IP (in canonical form; the address
// type is its family), node, hostname and target.
func toEndpoint(a corev1.EndpointAddress, ready bool) (discoveryv1.Endpoint, discoveryv1.AddressType, bool) {
	ip := netutils.ParseIPSloppy(a.IP)
	if ip == nil {
		return discoveryv1.Endpoint{}, "", false
	}
	at := discoveryv1.AddressTypeIPv4
	if ip.To4() == nil {
		at = discoveryv1.AddressTypeIPv6
	}
	e := discoveryv1.Endpoint{
		Addresses:  []string{ip.String()},
		Conditions: discoveryv1.EndpointConditions{Ready: &ready},
		TargetRef:  a.TargetRef,
		NodeName:   a.NodeName,
	}
	if a.Hostname != "" {
		h := a.Hostname
		e.Hostname = &h
	}
	return e, at, true
}

// endpointPorts converts an Endpoints subset's ports.
func endpointPorts(in []corev1.EndpointPort) []discoveryv1.EndpointPort {
	out := make([]discoveryv1.EndpointPort, 0, len(in))
	for _, p := range in {
		p := p
		out = append(out, discoveryv1.EndpointPort{Name: &p.Name, Port: &p.Port, Protocol: &p.Protocol, AppProtocol: p.AppProtocol})
	}
	return out
}

// sliceLabels are the Endpoints' labels plus the controller's.
func sliceLabels(ep *corev1.Endpoints) map[string]string {
	out := maps.Clone(ep.Labels)
	if out == nil {
		out = map[string]string{}
	}
	out[discoveryv1.LabelServiceName] = ep.Name
	out[discoveryv1.LabelManagedBy] = ManagedBy
	return out
}

// sliceAnnotations are the Endpoints' annotations but the trigger time
// and the last applied configuration, which kube does not mirror.
func sliceAnnotations(ep *corev1.Endpoints) map[string]string {
	out := map[string]string{}
	for k, v := range ep.Annotations {
		if k == corev1.EndpointsLastChangeTriggerTime || k == corev1.LastAppliedConfigAnnotation {
			continue
		}
		out[k] = v
	}
	return out
}

// newSlice is the slice of a group, to create (with a generated name).
func newSlice(ep *corev1.Endpoints, g *group) *discoveryv1.EndpointSlice {
	prefix := ep.Name + "-"
	if len(validation.NameIsDNSSubdomain(prefix, true)) != 0 {
		prefix = ep.Name
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    prefix,
			Namespace:       ep.Namespace,
			Labels:          sliceLabels(ep),
			Annotations:     sliceAnnotations(ep),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ep, endpointsKind)},
		},
		AddressType: g.addressType,
		Ports:       g.ports,
		Endpoints:   g.endpoints,
	}
}

// writes are the writes that bring an Endpoints' slices in line.
type writes struct {
	create, update, delete []*discoveryv1.EndpointSlice
}

// plan keeps one slice per group: the first existing slice of the group
// is kept when it already mirrors it, rewritten otherwise; other slices
// of the group, and slices of groups gone, are deleted, except that a
// slice to delete is reused (updated in place) for a slice to create of
// its address type, as kube's recycleSlices does.
func plan(ep *corev1.Endpoints, want map[string]*group, cached []*discoveryv1.EndpointSlice) writes {
	var w writes
	existing := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range cached {
		k := endpointslice.GroupKey(s.AddressType, s.Ports)
		existing[k] = append(existing[k], s)
	}
	for _, k := range slices.Sorted(maps.Keys(existing)) {
		sort.Slice(existing[k], func(i, j int) bool { return existing[k][i].Name < existing[k][j].Name })
		if _, ok := want[k]; !ok {
			w.delete = append(w.delete, existing[k]...)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		desired := newSlice(ep, want[k])
		have := existing[k]
		if len(have) == 0 {
			if ep.DeletionTimestamp == nil {
				w.create = append(w.create, desired)
			}
			continue
		}
		w.delete = append(w.delete, have[1:]...)
		if mirrors(have[0], desired, ep) {
			continue
		}
		w.update = append(w.update, rewrite(have[0], desired))
	}
	// Recycle: turn a creation and a deletion of one address type into
	// an update.
	creates := w.create[:0]
	for _, s := range w.create {
		i := slices.IndexFunc(w.delete, func(d *discoveryv1.EndpointSlice) bool { return d.AddressType == s.AddressType })
		if i < 0 {
			creates = append(creates, s)
			continue
		}
		w.update = append(w.update, rewrite(w.delete[i], s))
		w.delete = slices.Delete(w.delete, i, i+1)
	}
	w.create = creates
	return w
}

// rewrite is an existing slice with the content of a desired one.
func rewrite(have, desired *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
	out := have.DeepCopy()
	out.Labels, out.Annotations, out.OwnerReferences = desired.Labels, desired.Annotations, desired.OwnerReferences
	out.Ports, out.Endpoints = desired.Ports, desired.Endpoints
	return out
}

// mirrors tells whether an existing slice already is the desired one:
// same labels, annotations, owner and endpoints (in any order).
func mirrors(have, desired *discoveryv1.EndpointSlice, ep *corev1.Endpoints) bool {
	ref := metav1.GetControllerOfNoCopy(have)
	if ref == nil || ref.UID != ep.UID || ref.Kind != endpointsKind.Kind {
		return false
	}
	if !maps.Equal(have.Labels, desired.Labels) || !maps.Equal(have.Annotations, desired.Annotations) {
		return false
	}
	if len(have.Endpoints) != len(desired.Endpoints) {
		return false
	}
	byKey := make(map[string]*discoveryv1.Endpoint, len(have.Endpoints))
	for i := range have.Endpoints {
		byKey[endpointslice.EndpointKey(&have.Endpoints[i])] = &have.Endpoints[i]
	}
	for i := range desired.Endpoints {
		h, ok := byKey[endpointslice.EndpointKey(&desired.Endpoints[i])]
		if !ok || !equality.Semantic.DeepEqual(*h, desired.Endpoints[i]) {
			return false
		}
	}
	return true
}

// apply writes the plan through the tracker (Tracker.Apply).
func (c *Controller) apply(ctx context.Context, ep *corev1.Endpoints, w writes) error {
	return c.tracker.Apply(ctx, c.client.DiscoveryV1().EndpointSlices(ep.Namespace), "endpoints "+ep.Namespace+"/"+ep.Name, w.create, w.update, w.delete)
}
