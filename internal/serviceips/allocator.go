// Package serviceips allocates Services' cluster IPs and node ports.
//
// Each allocated value is one etcd key, claimed with a create-only
// transaction: /registry/ipaddresses/<ip> holds a networking.k8s.io/v1
// IPAddress naming its Service (the object kube-apiserver's IPAddress
// allocator writes), /registry/minik/servicenodeports/<port> a small claim
// record. Whoever's transaction succeeds owns the value, so any number of
// API servers sharing an etcd allocate without a lock and without a shared
// bitmap, and allocations outlive restarts. A claim is released when its
// Service stops holding the value; a repair pass releases claims no Service
// holds (a crash between claiming and storing the Service) and restores
// claims a Service holds but lacks.
package serviceips

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"

	"minik/internal/storage"
)

// Default service ranges.
const (
	// DefaultClusterIPRange is where cluster IPs come from unless
	// configured otherwise: a loopback block, so that with the Service
	// proxy on every ClusterIP is reachable from the host. It mirrors
	// kube's 10.96.0.0/12 (the kubernetes Service gets 127.96.0.1) and
	// stays clear of the per-node pod ranges, 127.<n>.0.0/16 for small n.
	DefaultClusterIPRange = "127.96.0.0/12"
	// DefaultNodePortRange is kube's node-port range.
	DefaultNodePortRange = "30000-32767"
)

// Allocation errors, worded as kube-apiserver's allocators word them.
var (
	errIPAllocated   = errors.New("provided IP is already allocated")
	errPortAllocated = errors.New("provided port is already allocated")
	errRangeFull     = errors.New("range is full")
)

// Claim key prefixes.
const (
	ipAddressPrefix = "/registry/ipaddresses/"
	nodePortPrefix  = "/registry/minik/servicenodeports/"
)

// block is a range of values allocated by offset, kube-style: offsets below
// static form the band kept for requested values; dynamic allocation
// starts at a random offset of the upper band and falls back to the lower
// one when the upper is full.
type block struct {
	size   uint64
	static uint64
	// reserved offsets are never handed out (network and broadcast
	// addresses).
	reserved func(off uint64) bool
}

// staticBand is kube's min(max(lo, size/step), hi), zero for tiny ranges.
func staticBand(size, lo, step, hi uint64) uint64 {
	if size <= lo {
		return 0
	}
	return min(max(lo, size/step), hi)
}

// next offers free offsets to claim until one succeeds. claim returns
// storage.ErrExists when another allocator won the offset.
func (b block) next(used sets.Set[uint64], claim func(off uint64) error) (uint64, error) {
	for _, band := range [][2]uint64{{b.static, b.size}, {0, b.static}} {
		n := band[1] - band[0]
		if n == 0 {
			continue
		}
		start := rand.Uint64N(n)
		for i := range n {
			off := band[0] + (start+i)%n
			if used.Has(off) || b.reserved != nil && b.reserved(off) {
				continue
			}
			err := claim(off)
			if errors.Is(err, storage.ErrExists) {
				used.Insert(off)
				continue
			}
			return off, err
		}
	}
	return 0, errRangeFull
}

// ipRange is the service IP range with offset arithmetic.
type ipRange struct {
	prefix netip.Prefix
	block
}

func newIPRange(p netip.Prefix) (ipRange, error) {
	p = p.Masked()
	if !p.Addr().Is4() {
		// The Service strategy defaults every Service to IPv4.
		return ipRange{}, fmt.Errorf("service IP range %s: only IPv4 ranges are supported", p)
	}
	hostBits := p.Addr().BitLen() - p.Bits()
	if hostBits < 2 {
		return ipRange{}, fmt.Errorf("service IP range %s is too small", p)
	}
	size := uint64(1) << min(hostBits, 32)
	r := ipRange{prefix: p, block: block{size: size, static: staticBand(size, 16, 16, 256)}}
	full := hostBits <= 32
	r.reserved = func(off uint64) bool {
		// The network address, and for IPv4 the broadcast address, are
		// never allocated.
		return off == 0 || p.Addr().Is4() && full && off == size-1
	}
	return r, nil
}

func (r ipRange) at(off uint64) netip.Addr {
	a := r.prefix.Addr()
	if a.Is4() {
		b := a.As4()
		binary.BigEndian.PutUint32(b[:], binary.BigEndian.Uint32(b[:])+uint32(off))
		return netip.AddrFrom4(b)
	}
	b := a.As16()
	binary.BigEndian.PutUint64(b[8:], binary.BigEndian.Uint64(b[8:])+off)
	return netip.AddrFrom16(b)
}

// offset returns a's offset in the range; ok is false outside it.
func (r ipRange) offset(a netip.Addr) (uint64, bool) {
	a = a.Unmap()
	if !r.prefix.Contains(a) {
		return 0, false
	}
	var off uint64
	if a.Is4() {
		x, y := a.As4(), r.prefix.Addr().As4()
		off = uint64(binary.BigEndian.Uint32(x[:]) - binary.BigEndian.Uint32(y[:]))
	} else {
		x, y := a.As16(), r.prefix.Addr().As16()
		off = binary.BigEndian.Uint64(x[8:]) - binary.BigEndian.Uint64(y[8:])
	}
	return off, off < r.size && !r.reserved(off)
}

func (r ipRange) family() corev1.IPFamily {
	if r.prefix.Addr().Is4() {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}

// Allocator allocates Services' cluster IPs, node ports and health
// check node ports.
type Allocator struct {
	store *storage.Store
	ips   ipRange
	ports utilnet.PortRange
	pblk  block
	clock clock.PassiveClock
	log   *slog.Logger

	mu sync.Mutex
	// suspects are claims the last repair found no Service holding, with
	// the revision they had; a claim still unheld and unchanged at the
	// next repair is released.
	suspects map[string]int64
}

// New returns an allocator of the cluster IPs of ips and the node ports
// of ports, whose claims live in store.
func New(store *storage.Store, ips netip.Prefix, ports utilnet.PortRange, clk clock.PassiveClock, log *slog.Logger) (*Allocator, error) {
	r, err := newIPRange(ips)
	if err != nil {
		return nil, err
	}
	if ports.Size <= 0 || ports.Base <= 0 || ports.Base+ports.Size-1 > 65535 {
		return nil, fmt.Errorf("service node port range %q is not a valid port range", ports.String())
	}
	size := uint64(ports.Size)
	return &Allocator{
		store: store, ips: r, ports: ports, clock: clk, log: log,
		pblk:     block{size: size, static: staticBand(size, 16, 32, 128)},
		suspects: map[string]int64{},
	}, nil
}

// FirstIP is the range's first usable address, the kubernetes Service's.
func (a *Allocator) FirstIP() netip.Addr { return a.ips.at(1) }

func ipKey(ip netip.Addr) string { return ipAddressPrefix + ip.Unmap().String() }

func portKey(port int32) string { return nodePortPrefix + strconv.Itoa(int(port)) }

// portClaim is the value of a node-port key.
type portClaim struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Port      int32  `json:"port"`
}

// ipClaim returns the IPAddress object claiming ip for a Service.
func (a *Allocator) ipClaim(ip netip.Addr, ns, name string) ([]byte, error) {
	family := corev1.IPv4Protocol
	if ip.Is6() && !ip.Is4In6() {
		family = corev1.IPv6Protocol
	}
	obj := networkingv1.IPAddress{
		TypeMeta: metav1.TypeMeta{APIVersion: networkingv1.SchemeGroupVersion.String(), Kind: "IPAddress"},
		ObjectMeta: metav1.ObjectMeta{
			Name: ip.Unmap().String(), UID: types.UID(uuid.NewUUID()),
			CreationTimestamp: metav1.NewTime(a.clock.Now().Truncate(1e9)),
			Labels: map[string]string{
				networkingv1.LabelIPAddressFamily: string(family),
				networkingv1.LabelManagedBy:       ipAllocatorManager,
			},
		},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: ns, Name: name}},
	}
	return json.Marshal(&obj)
}

// ipAllocatorManager is the managed-by label value of the IPAddresses
// the allocator writes, kube's ipallocator's. Repair releases only
// IPAddresses carrying it: one a user creates through the API (served at
// the same keys) reserves its address until the user deletes it, as in
// kube.
const ipAllocatorManager = "ipallocator.k8s.io"

// managedClaim tells whether the allocator may release a claim: every
// node-port claim, and the IPAddresses it wrote itself.
func managedClaim(kv storage.KV) bool {
	if !strings.HasPrefix(kv.Key, ipAddressPrefix) {
		return true
	}
	var ip networkingv1.IPAddress
	return json.Unmarshal(kv.Value, &ip) == nil && ip.Labels[networkingv1.LabelManagedBy] == ipAllocatorManager
}

// ownerOf returns the namespace/name of the Service a claim names.
func ownerOf(kv storage.KV) string {
	if strings.HasPrefix(kv.Key, ipAddressPrefix) {
		var ip networkingv1.IPAddress
		if json.Unmarshal(kv.Value, &ip) != nil || ip.Spec.ParentRef == nil {
			return ""
		}
		return ip.Spec.ParentRef.Namespace + "/" + ip.Spec.ParentRef.Name
	}
	var c portClaim
	if json.Unmarshal(kv.Value, &c) != nil {
		return ""
	}
	return c.Namespace + "/" + c.Name
}

// claim creates a claim key for svc. It returns storage.ErrExists when
// another Service holds the value; a claim the same Service already holds
// (left by an earlier incarnation) is taken over, and mine is false.
func (a *Allocator) claim(ctx context.Context, key string, value []byte, svc *corev1.Service, dryRun bool) (mine bool, err error) {
	owner := svc.Namespace + "/" + svc.Name
	if dryRun {
		kv, err := a.store.Get(ctx, key)
		if errors.Is(err, storage.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if ownerOf(kv) == owner {
			return false, nil
		}
		return false, storage.ErrExists
	}
	_, err = a.store.Create(ctx, key, value)
	if errors.Is(err, storage.ErrExists) {
		if kv, gerr := a.store.Get(ctx, key); gerr == nil && ownerOf(kv) == owner {
			return false, nil
		}
	}
	return err == nil, err
}

// releaseKey deletes a claim if it still names the Service.
func (a *Allocator) releaseKey(ctx context.Context, key, owner string) {
	kv, err := a.store.Get(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return
	}
	if err == nil && ownerOf(kv) != owner {
		return
	}
	if err == nil {
		_, err = a.store.Delete(ctx, key, kv.Revision)
	}
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		a.log.Warn("release service allocation; the repair pass will retry", "key", key, "service", owner, "err", err)
	}
}

func needsClusterIP(s *corev1.Service) bool { return s.Spec.Type != corev1.ServiceTypeExternalName }

func isHeadless(s *corev1.Service) bool {
	return len(s.Spec.ClusterIPs) > 0 && s.Spec.ClusterIPs[0] == corev1.ClusterIPNone ||
		len(s.Spec.ClusterIPs) == 0 && s.Spec.ClusterIP == corev1.ClusterIPNone
}

func needsNodePorts(s *corev1.Service) bool {
	switch s.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return s.Spec.AllocateLoadBalancerNodePorts == nil || *s.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

func needsHealthCheckNodePort(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// holdings are the claim keys of what a stored Service records.
func holdings(s *corev1.Service) sets.Set[string] {
	out := sets.New[string]()
	if s == nil {
		return out
	}
	if needsClusterIP(s) && !isHeadless(s) {
		ips := s.Spec.ClusterIPs
		if len(ips) == 0 && s.Spec.ClusterIP != "" {
			ips = []string{s.Spec.ClusterIP}
		}
		for _, ip := range ips {
			if addr, err := netip.ParseAddr(ip); err == nil {
				out.Insert(ipKey(addr))
			}
		}
	}
	for _, p := range s.Spec.Ports {
		if p.NodePort != 0 {
			out.Insert(portKey(p.NodePort))
		}
	}
	if s.Spec.HealthCheckNodePort != 0 {
		out.Insert(portKey(s.Spec.HealthCheckNodePort))
	}
	return out
}

// noUndo is the undo of an allocation that reserved nothing.
func noUndo() {}

// Allocate reserves what a Service needs beyond what old (nil on create)
// already holds and fills the allocated values into it. undo releases
// exactly what this call reserved; with dryRun nothing is reserved.
func (a *Allocator) Allocate(ctx context.Context, obj, old runtime.Object, dryRun bool) (func(), error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return noUndo, nil
	}
	var oldSvc *corev1.Service
	if old != nil {
		oldSvc = old.(*corev1.Service)
	}
	var claimed []string
	owner := svc.Namespace + "/" + svc.Name
	undo := func() {
		for _, k := range claimed {
			a.releaseKey(context.WithoutCancel(ctx), k, owner)
		}
	}
	if err := a.allocateClusterIP(ctx, svc, oldSvc, dryRun, &claimed); err != nil {
		undo()
		return nil, err
	}
	if err := a.allocateNodePorts(ctx, svc, oldSvc, dryRun, &claimed); err != nil {
		undo()
		return nil, err
	}
	if dryRun {
		return noUndo, nil
	}
	return undo, nil
}

// Release frees what old holds and obj (nil once old is deleted) does
// not; failures are logged, and Repair finds what they leave behind.
func (a *Allocator) Release(ctx context.Context, old, obj runtime.Object) {
	oldSvc, ok := old.(*corev1.Service)
	if !ok {
		return
	}
	newSvc, _ := obj.(*corev1.Service)
	owner := oldSvc.Namespace + "/" + oldSvc.Name
	for _, k := range sets.List(holdings(oldSvc).Difference(holdings(newSvc))) {
		a.releaseKey(ctx, k, owner)
	}
}

func invalidService(svc *corev1.Service, errs ...*field.Error) error {
	return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, errs)
}

// checkFamilies refuses what a single-stack cluster cannot give, in
// kube-apiserver's words.
func (a *Allocator) checkFamilies(svc *corev1.Service) error {
	var errs field.ErrorList
	spec := &svc.Spec
	for i, f := range spec.IPFamilies {
		if f != a.ips.family() {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilies").Index(i), f, "not configured on this cluster"))
		}
	}
	if p := spec.IPFamilyPolicy; p != nil && *p == corev1.IPFamilyPolicyRequireDualStack {
		errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), *p, "this cluster is not configured for dual-stack services"))
	}
	if len(errs) > 0 {
		return invalidService(svc, errs...)
	}
	return nil
}

func (a *Allocator) allocateClusterIP(ctx context.Context, svc, old *corev1.Service, dryRun bool, claimed *[]string) error {
	if !needsClusterIP(svc) || isHeadless(svc) {
		return nil
	}
	if old != nil && needsClusterIP(old) && !isHeadless(old) && len(old.Spec.ClusterIPs) > 0 {
		// Held already: validation keeps it from changing.
		return nil
	}
	if p := svc.Spec.IPFamilyPolicy; p != nil && *p == corev1.IPFamilyPolicyPreferDualStack && len(svc.Spec.IPFamilies) > 1 {
		svc.Spec.IPFamilies = svc.Spec.IPFamilies[:1]
	}
	if err := a.checkFamilies(svc); err != nil {
		return err
	}
	ipsPath := field.NewPath("spec", "clusterIPs")
	if len(svc.Spec.ClusterIPs) > 0 {
		requested := svc.Spec.ClusterIPs[0]
		fail := func(err error) error {
			return invalidService(svc, field.Invalid(ipsPath, svc.Spec.ClusterIPs, fmt.Sprintf("failed to allocate IP %s: %v", requested, err)))
		}
		addr, err := netip.ParseAddr(requested)
		if err != nil {
			return fail(err)
		}
		if _, ok := a.ips.offset(addr); !ok {
			return fail(fmt.Errorf("the provided IP (%s) is not in the valid range. The range of valid IPs is %s", requested, a.ips.prefix))
		}
		value, err := a.ipClaim(addr, svc.Namespace, svc.Name)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		mine, err := a.claim(ctx, ipKey(addr), value, svc, dryRun)
		switch {
		case errors.Is(err, storage.ErrExists):
			return fail(errIPAllocated)
		case err != nil:
			return apierrors.NewInternalError(fmt.Errorf("allocate service IP %s: %w", requested, err))
		case mine:
			*claimed = append(*claimed, ipKey(addr))
		}
		return nil
	}
	used, err := a.usedIPs(ctx)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: %w", err))
	}
	off, err := a.ips.next(used, func(off uint64) error {
		if dryRun {
			return nil
		}
		value, err := a.ipClaim(a.ips.at(off), svc.Namespace, svc.Name)
		if err != nil {
			return err
		}
		_, err = a.store.Create(ctx, ipKey(a.ips.at(off)), value)
		return err
	})
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: %w", err))
	}
	ip := a.ips.at(off)
	if !dryRun {
		*claimed = append(*claimed, ipKey(ip))
	}
	svc.Spec.ClusterIP = ip.String()
	svc.Spec.ClusterIPs = []string{ip.String()}
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = []corev1.IPFamily{a.ips.family()}
	}
	return nil
}

// usedIPs reads the claimed offsets of the range.
func (a *Allocator) usedIPs(ctx context.Context) (sets.Set[uint64], error) {
	res, err := a.store.List(ctx, ipAddressPrefix, storage.ListOptions{})
	if err != nil {
		return nil, err
	}
	used := sets.New[uint64]()
	for _, kv := range res.Items {
		if addr, err := netip.ParseAddr(strings.TrimPrefix(kv.Key, ipAddressPrefix)); err == nil {
			if off, ok := a.ips.offset(addr); ok {
				used.Insert(off)
			}
		}
	}
	return used, nil
}

// usedPorts reads the claimed node-port offsets.
func (a *Allocator) usedPorts(ctx context.Context) (sets.Set[uint64], error) {
	res, err := a.store.List(ctx, nodePortPrefix, storage.ListOptions{})
	if err != nil {
		return nil, err
	}
	used := sets.New[uint64]()
	for _, kv := range res.Items {
		if p, err := strconv.Atoi(strings.TrimPrefix(kv.Key, nodePortPrefix)); err == nil && a.ports.Contains(p) {
			used.Insert(uint64(p - a.ports.Base))
		}
	}
	return used, nil
}

func (a *Allocator) portClaimValue(svc *corev1.Service, port int32) []byte {
	b, _ := json.Marshal(portClaim{Namespace: svc.Namespace, Name: svc.Name, Port: port})
	return b
}

// claimPort claims a requested node port. refused is kube's reason when
// the port cannot be had; err is a storage failure.
func (a *Allocator) claimPort(ctx context.Context, svc *corev1.Service, port int32, dryRun bool, claimed *[]string) (refused string, err error) {
	if !a.ports.Contains(int(port)) {
		return fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %s", a.ports.String()), nil
	}
	mine, err := a.claim(ctx, portKey(port), a.portClaimValue(svc, port), svc, dryRun)
	switch {
	case errors.Is(err, storage.ErrExists):
		return errPortAllocated.Error(), nil
	case err != nil:
		return "", apierrors.NewInternalError(fmt.Errorf("allocate node port %d: %w", port, err))
	case mine:
		*claimed = append(*claimed, portKey(port))
	}
	return "", nil
}

// nextPort claims a free node port.
func (a *Allocator) nextPort(ctx context.Context, svc *corev1.Service, used *sets.Set[uint64], dryRun bool, claimed *[]string) (int32, error) {
	if *used == nil {
		u, err := a.usedPorts(ctx)
		if err != nil {
			return 0, err
		}
		*used = u
	}
	off, err := a.pblk.next(*used, func(off uint64) error {
		if dryRun {
			return nil
		}
		p := int32(a.ports.Base + int(off))
		_, err := a.store.Create(ctx, portKey(p), a.portClaimValue(svc, p))
		return err
	})
	if err != nil {
		return 0, err
	}
	(*used).Insert(off)
	p := int32(a.ports.Base + int(off))
	if !dryRun {
		*claimed = append(*claimed, portKey(p))
	}
	return p, nil
}

// allocateNodePorts gives every port of a NodePort (or LoadBalancer)
// Service a node port, as kube does: requested ones are claimed, ports
// sharing a port number (TCP and UDP) share a node port, and those already
// held are kept.
func (a *Allocator) allocateNodePorts(ctx context.Context, svc, old *corev1.Service, dryRun bool, claimed *[]string) error {
	held := sets.New[int32]()
	if old != nil {
		for _, p := range old.Spec.Ports {
			held.Insert(p.NodePort)
		}
		held.Insert(old.Spec.HealthCheckNodePort)
		held.Delete(0)
	}
	portsPath := field.NewPath("spec", "ports")
	var used sets.Set[uint64]
	if needsNodePorts(svc) {
		byPort := map[int32]int32{}
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort == 0 {
				continue
			}
			if !held.Has(p.NodePort) && byPort[p.Port] != p.NodePort {
				refused, err := a.claimPort(ctx, svc, p.NodePort, dryRun, claimed)
				if err != nil {
					return err
				}
				if refused != "" {
					return invalidService(svc, field.Invalid(portsPath.Index(i).Child("nodePort"), p.NodePort, refused))
				}
			}
			if _, ok := byPort[p.Port]; !ok {
				byPort[p.Port] = p.NodePort
			}
		}
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort != 0 {
				continue
			}
			if np, ok := byPort[p.Port]; ok {
				p.NodePort = np
				continue
			}
			np, err := a.nextPort(ctx, svc, &used, dryRun, claimed)
			if err != nil {
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %w", err))
			}
			p.NodePort = np
			byPort[p.Port] = np
		}
	}
	if needsHealthCheckNodePort(svc) {
		hc := svc.Spec.HealthCheckNodePort
		switch {
		case hc == 0:
			np, err := a.nextPort(ctx, svc, &used, dryRun, claimed)
			if err != nil {
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %w", err))
			}
			svc.Spec.HealthCheckNodePort = np
		case !held.Has(hc):
			refused, err := a.claimPort(ctx, svc, hc, dryRun, claimed)
			if err != nil {
				return err
			}
			if refused != "" {
				return invalidService(svc, field.Invalid(field.NewPath("spec", "healthCheckNodePort"), hc, refused))
			}
		}
	}
	return nil
}

// Repair compares the claims with what the Services hold, at one
// revision: claims no Service holds are released once two passes in a row
// found them unheld and unchanged (a Service being created claims before
// it is stored), and claims a Service holds but lacks are restored.
func (a *Allocator) Repair(ctx context.Context) error {
	svcs, err := a.store.List(ctx, "/registry/services/", storage.ListOptions{})
	if err != nil {
		return fmt.Errorf("repair service allocations: %w", err)
	}
	at := storage.ListOptions{Revision: svcs.Revision}
	ipClaims, err := a.store.List(ctx, ipAddressPrefix, at)
	if err != nil {
		return fmt.Errorf("repair service allocations: %w", err)
	}
	portClaims, err := a.store.List(ctx, nodePortPrefix, at)
	if err != nil {
		return fmt.Errorf("repair service allocations: %w", err)
	}
	want := map[string]*corev1.Service{}
	for _, kv := range svcs.Items {
		svc := &corev1.Service{}
		if err := json.Unmarshal(kv.Value, svc); err != nil {
			continue
		}
		for k := range holdings(svc) {
			if other, dup := want[k]; dup {
				a.log.Error("two Services hold one allocation", "key", k, "service", svc.Namespace+"/"+svc.Name, "other", other.Namespace+"/"+other.Name)
				continue
			}
			want[k] = svc
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	seen := sets.New[string]()
	for _, kv := range append(ipClaims.Items, portClaims.Items...) {
		seen.Insert(kv.Key)
		if svc, ok := want[kv.Key]; ok && ownerOf(kv) == svc.Namespace+"/"+svc.Name || !managedClaim(kv) {
			delete(a.suspects, kv.Key)
			continue
		}
		if rev, ok := a.suspects[kv.Key]; !ok || rev != kv.Revision {
			a.suspects[kv.Key] = kv.Revision
			continue
		}
		delete(a.suspects, kv.Key)
		if _, err := a.store.Delete(ctx, kv.Key, kv.Revision); err == nil {
			a.log.Info("released a service allocation no Service holds", "key", kv.Key, "service", ownerOf(kv))
		}
	}
	for k := range a.suspects {
		if !seen.Has(k) {
			delete(a.suspects, k)
		}
	}
	for k, svc := range want {
		if seen.Has(k) {
			continue
		}
		var value []byte
		if ip, ok := strings.CutPrefix(k, ipAddressPrefix); ok {
			value, _ = a.ipClaim(netip.MustParseAddr(ip), svc.Namespace, svc.Name)
		} else {
			p, _ := strconv.Atoi(strings.TrimPrefix(k, nodePortPrefix))
			value = a.portClaimValue(svc, int32(p))
		}
		if _, err := a.store.Create(ctx, k, value); err == nil {
			a.log.Warn("restored a service allocation its Service held without a claim", "key", k, "service", svc.Namespace+"/"+svc.Name)
		}
	}
	return nil
}
