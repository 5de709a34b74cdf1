package clusterdns

import (
	"context"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"minik/internal/auth/rbac"
)

// The kube-dns Service, as kubeadm's CoreDNS add-on installs it.
const (
	// Namespace and ServiceName name the Service.
	Namespace   = "kube-system"
	ServiceName = "kube-dns"
	// EndpointSliceName is the EndpointSlice minikd keeps for it: the
	// Service has no selector (no pod serves DNS; minikd does).
	EndpointSliceName = "kube-dns-minikd"
	// ManagedBy is the slice's endpointslice.kubernetes.io/managed-by:
	// not the EndpointSlice controller's, which leaves it alone.
	ManagedBy = "minikd"
	// MetricsPort is CoreDNS's Prometheus port, declared as kubeadm does.
	MetricsPort = 9153
)

// User is the DNS server's identity, bound to the ClusterRole
// system:coredns as kubeadm binds CoreDNS's service account.
const User = "system:minik:coredns"

// ClusterIP returns the kube-dns Service's address for a Service range:
// its tenth address, kubeadm's rule (10.96.0.10 in 10.96.0.0/12).
func ClusterIP(serviceRange netip.Prefix) (netip.Addr, error) {
	ip := serviceRange.Masked().Addr()
	for range 10 {
		ip = ip.Next()
	}
	if !ip.IsValid() || !serviceRange.Contains(ip) {
		return netip.Addr{}, fmt.Errorf("service range %s has no tenth address for the DNS Service", serviceRange)
	}
	return ip, nil
}

// Service is the kube-dns Service with cluster IP ip, as kubeadm's
// manifest has it.
func Service(ip netip.Addr) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: ServiceName, Namespace: Namespace,
			Labels: map[string]string{
				"k8s-app":                       "kube-dns",
				"kubernetes.io/cluster-service": "true",
				"kubernetes.io/name":            "CoreDNS",
			},
			Annotations: map[string]string{
				"prometheus.io/port":   "9153",
				"prometheus.io/scrape": "true",
			},
		},
		Spec: corev1.ServiceSpec{
			ClusterIP:  ip.String(),
			ClusterIPs: []string{ip.String()},
			Ports: []corev1.ServicePort{
				{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(53)},
				{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(53)},
				{Name: "metrics", Port: MetricsPort, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(MetricsPort)},
			},
		},
	}
}

// EndpointSlice is the kube-dns Service's slice: one ready endpoint, the
// address the DNS server answers on, its dns and dns-tcp ports, and the
// metrics port when metricsPort is not zero.
func EndpointSlice(addr netip.AddrPort, metricsPort int32) *discoveryv1.EndpointSlice {
	family := discoveryv1.AddressTypeIPv4
	if addr.Addr().Is6() {
		family = discoveryv1.AddressTypeIPv6
	}
	port := int32(addr.Port())
	ep := discoveryv1.Endpoint{
		Addresses:  []string{addr.Addr().String()},
		Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)},
		Hostname:   ptr.To("minikd"),
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: EndpointSliceName, Namespace: Namespace,
			Labels: map[string]string{
				discoveryv1.LabelServiceName: ServiceName,
				discoveryv1.LabelManagedBy:   ManagedBy,
				"k8s-app":                    "kube-dns",
			},
		},
		AddressType: family,
		Endpoints:   []discoveryv1.Endpoint{ep},
		Ports: []discoveryv1.EndpointPort{
			{Name: ptr.To("dns"), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolUDP)},
			{Name: ptr.To("dns-tcp"), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)},
		},
	}
	if metricsPort != 0 {
		slice.Ports = append(slice.Ports, discoveryv1.EndpointPort{Name: ptr.To("metrics"), Port: ptr.To(metricsPort), Protocol: ptr.To(corev1.ProtocolTCP)})
	}
	return slice
}

// EnsureService creates the kube-dns Service when missing and leaves an
// existing one as it is (an administrator's change stays).
func EnsureService(ctx context.Context, admin kubernetes.Interface, ip netip.Addr) error {
	_, err := admin.CoreV1().Services(Namespace).Create(ctx, Service(ip), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("bootstrap service %s/%s: %w", Namespace, ServiceName, err)
	}
	return nil
}

// EnsureEndpointSlice makes the kube-dns slice name addr (and
// metricsPort, unless zero).
func EnsureEndpointSlice(ctx context.Context, admin kubernetes.Interface, addr netip.AddrPort, metricsPort int32) error {
	want := EndpointSlice(addr, metricsPort)
	slices := admin.DiscoveryV1().EndpointSlices(Namespace)
	_, err := slices.Create(ctx, want, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := slices.Get(ctx, want.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if equality.Semantic.DeepEqual(cur.Endpoints, want.Endpoints) && equality.Semantic.DeepEqual(cur.Ports, want.Ports) &&
				cur.AddressType == want.AddressType {
				return nil
			}
			cur.Labels, cur.AddressType, cur.Endpoints, cur.Ports = want.Labels, want.AddressType, want.Endpoints, want.Ports
			_, err = slices.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("ensure endpointslice %s/%s: %w", Namespace, want.Name, err)
	}
	return nil
}

// EnsureRBAC creates the ClusterRole system:coredns (kubeadm's rules) and
// binds it to User.
func EnsureRBAC(ctx context.Context, admin kubernetes.Interface) error {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "system:coredns", Labels: map[string]string{"kubernetes.io/bootstrapping": "rbac-defaults"}},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "system:minik:coredns", Labels: map[string]string{"kubernetes.io/bootstrapping": "rbac-defaults"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: User}},
	}
	return rbac.EnsureRoles(ctx, admin, []*rbacv1.ClusterRole{role}, []*rbacv1.ClusterRoleBinding{binding})
}
