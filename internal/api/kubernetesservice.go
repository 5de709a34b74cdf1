package api

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"minik/internal/auth"
)

// How often the kubernetes Service is reconciled and service allocations
// repaired.
const (
	kubernetesServiceInterval = 10 * time.Second
	allocationRepairInterval  = time.Minute
)

// apiServerUser is the identity of the API server's own writes.
var apiServerUser = &auth.User{Name: "system:apiserver", Groups: []string{auth.GroupMasters, "system:authenticated"}}

// StartServices makes the default/kubernetes Service (cluster IP: the
// service range's first address, port 443 named https) and its
// EndpointSlice point at the API server listening on addr, as
// kube-apiserver's bootstrap controller does, and returns once they do.
// It then keeps them so, and repairs service allocations, in the
// background until ctx is done or Stop is called; Stop waits for that to
// end. Several API servers sharing one etcd each write their own address:
// the last one started wins.
func (s *Server) StartServices(ctx context.Context, addr string) error {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("kubernetes service: address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return fmt.Errorf("kubernetes service: port of %q: %w", addr, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.IsUnspecified() {
		ip = netip.MustParseAddr("127.0.0.1")
	}
	ctx = auth.WithUser(ctx, apiServerUser)
	if err := s.crds.start(ctx); err != nil {
		return err
	}
	if err := s.ensureKubernetesService(ctx, ip, int32(port)); err != nil {
		return err
	}
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-s.stopping:
				cancel()
			case <-ctx.Done():
			}
		}()
		ensure := time.NewTicker(kubernetesServiceInterval)
		defer ensure.Stop()
		repair := time.NewTicker(allocationRepairInterval)
		defer repair.Stop()
		if err := s.services.repair(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("service allocation repair failed", "err", err)
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-ensure.C:
				if err := s.ensureKubernetesService(ctx, ip, int32(port)); err != nil && ctx.Err() == nil {
					s.log.Warn("kubernetes service reconcile failed", "err", err)
				}
			case <-repair.C:
				if err := s.services.repair(ctx); err != nil && ctx.Err() == nil {
					s.log.Warn("service allocation repair failed", "err", err)
				}
			}
		}
	}()
	return nil
}

// ensureKubernetesService creates or corrects default/kubernetes and its
// EndpointSlice.
func (s *Server) ensureKubernetesService(ctx context.Context, ip netip.Addr, port int32) error {
	const ns, name = metav1.NamespaceDefault, "kubernetes"
	ports := []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(port)}}
	svcs := s.handler(corev1.SchemeGroupVersion.WithResource("services"))
	_, err := svcs.get(ctx, ns, name)
	switch {
	case apierrors.IsNotFound(err):
		first := s.services.firstIP().String()
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
			Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, ClusterIP: first, ClusterIPs: []string{first},
				Ports: ports, SessionAffinity: corev1.ServiceAffinityNone,
			},
		}
		if _, err := svcs.create(ctx, ns, svc, false); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create service default/kubernetes: %w", err)
		}
	case err != nil:
		return fmt.Errorf("get service default/kubernetes: %w", err)
	default:
		_, err := svcs.update(ctx, ns, name, "", false, func(current runtime.Object) (runtime.Object, error) {
			svc := current.(*corev1.Service)
			if !equality.Semantic.DeepEqual(svc.Spec.Ports, ports) {
				svc.Spec.Ports = ports
			}
			return svc, nil
		})
		if err != nil {
			return fmt.Errorf("update service default/kubernetes: %w", err)
		}
	}

	family := discoveryv1.AddressTypeIPv4
	if ip.Is6() && !ip.Is4In6() {
		family = discoveryv1.AddressTypeIPv6
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: family,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip.Unmap().String()}, Conditions: discoveryv1.EndpointConditions{Ready: new(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: new("https"), Protocol: new(corev1.ProtocolTCP), Port: new(port)}},
	}
	slices := s.handler(discoveryv1.SchemeGroupVersion.WithResource("endpointslices"))
	if _, err := slices.get(ctx, ns, name); apierrors.IsNotFound(err) {
		if _, err := slices.create(ctx, ns, slice, false); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create endpointslice default/kubernetes: %w", err)
		}
		return nil
	} else if err != nil {
		return fmt.Errorf("get endpointslice default/kubernetes: %w", err)
	}
	_, err = slices.update(ctx, ns, name, "", false, func(current runtime.Object) (runtime.Object, error) {
		cur := current.(*discoveryv1.EndpointSlice)
		cur.AddressType, cur.Endpoints, cur.Ports = slice.AddressType, slice.Endpoints, slice.Ports
		if cur.Labels == nil {
			cur.Labels = map[string]string{}
		}
		cur.Labels[discoveryv1.LabelServiceName] = name
		return cur, nil
	})
	if err != nil {
		return fmt.Errorf("update endpointslice default/kubernetes: %w", err)
	}
	return nil
}
