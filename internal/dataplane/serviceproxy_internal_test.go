package dataplane

import (
	"log/slog"
	"maps"
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The proxy's listen addresses: minikd's own (the DNS server on the
// kube-dns ClusterIP:53) are left out; a LoadBalancer's loopback ingress
// addresses are served.
func TestProxyAddresses(t *testing.T) {
	p := newServiceProxy(nil, nil, netip.MustParseAddr("127.0.0.1"), slog.Default())
	p.reserve([]netip.AddrPort{netip.MustParseAddrPort("127.96.0.10:53"), netip.MustParseAddrPort("127.96.0.10:9153")})
	cases := []struct {
		name string
		svc  *corev1.Service
		want []string
	}{
		{"kube-dns's ports are left to the DNS server", &corev1.Service{Spec: corev1.ServiceSpec{
			ClusterIP: "127.96.0.10",
			Ports: []corev1.ServicePort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
				{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP}, {Name: "metrics", Port: 9153, Protocol: corev1.ProtocolTCP}},
		}}, []string{}},
		{"port 53 of another ClusterIP is proxied", &corev1.Service{Spec: corev1.ServiceSpec{
			ClusterIP: "127.96.0.11", Ports: []corev1.ServicePort{{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP}},
		}}, []string{"127.96.0.11:53"}},
		{"a LoadBalancer answers on its ClusterIP, node port and loopback ingress address", &corev1.Service{
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "127.96.0.12",
				Ports: []corev1.ServicePort{{Name: "http", Port: 80, NodePort: 30080}}},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
				{IP: "127.0.0.2"}, {IP: "203.0.113.7"}, {Hostname: "lb.example.com"}}}},
		}, []string{"127.0.0.1:30080", "127.0.0.2:80", "127.96.0.12:80"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := slices.Sorted(maps.Keys(p.addresses(c.svc)))
			if !slices.Equal(got, c.want) {
				t.Fatalf("addresses %v, want %v", got, c.want)
			}
		})
	}
}
