package serviceips

import (
	"context"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ObjectStore is the API server's own read and write path for the objects
// of one resource.
type ObjectStore interface {
	// Get reads one object.
	Get(ctx context.Context, ns, name string) (runtime.Object, error)
	// Create stores a new object.
	Create(ctx context.Context, ns string, obj runtime.Object, dryRun bool) (runtime.Object, error)
	// Update applies mut to the stored object.
	Update(ctx context.Context, ns, name, sub string, dryRun bool, mut func(current runtime.Object) (runtime.Object, error)) (runtime.Object, error)
}

// EnsureKubernetesService creates or corrects default/kubernetes (cluster
// IP first, port 443 named https) and its EndpointSlice, which point at
// the API server at ip:port, as kube-apiserver's bootstrap controller
// does. Several API servers sharing one etcd each write their own
// address: the last one wins.
func EnsureKubernetesService(ctx context.Context, svcs, slices ObjectStore, first, ip netip.Addr, port int32) error {
	const ns, name = metav1.NamespaceDefault, "kubernetes"
	ports := []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(port)}}
	_, err := svcs.Get(ctx, ns, name)
	switch {
	case apierrors.IsNotFound(err):
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
			Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, ClusterIP: first.String(), ClusterIPs: []string{first.String()},
				Ports: ports, SessionAffinity: corev1.ServiceAffinityNone,
			},
		}
		if _, err := svcs.Create(ctx, ns, svc, false); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create service default/kubernetes: %w", err)
		}
	case err != nil:
		return fmt.Errorf("get service default/kubernetes: %w", err)
	default:
		_, err := svcs.Update(ctx, ns, name, "", false, func(current runtime.Object) (runtime.Object, error) {
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
	if _, err := slices.Get(ctx, ns, name); apierrors.IsNotFound(err) {
		if _, err := slices.Create(ctx, ns, slice, false); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create endpointslice default/kubernetes: %w", err)
		}
		return nil
	} else if err != nil {
		return fmt.Errorf("get endpointslice default/kubernetes: %w", err)
	}
	_, err = slices.Update(ctx, ns, name, "", false, func(current runtime.Object) (runtime.Object, error) {
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
