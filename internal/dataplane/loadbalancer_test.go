package dataplane_test

import (
	"context"
	"math/rand/v2"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"minik/internal/dataplane"
)

func TestLoadBalancer(t *testing.T) {
	e := start(t, "")
	ctx := context.Background()
	e.pod("web-a", "web", true)
	// A port of its own: test servers running at once share the pool.
	port := int32(20000 + rand.IntN(10000))
	lb := func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.Ports[0].Port = port
	}
	e.service("web", "web", lb)
	pool := netip.MustParsePrefix("127.0.0.0/24")

	ingressIP := func(name string) string {
		s, err := e.cs.CoreV1().Services(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Status.LoadBalancer.Ingress) == 0 {
			return ""
		}
		return s.Status.LoadBalancer.Ingress[0].IP
	}
	var ip string
	waitFor(t, "the LoadBalancer Service's ingress address", func() bool { ip = ingressIP("web"); return ip != "" })

	t.Run("the address is a loopback address of the pool, not the host's", func(t *testing.T) {
		a, err := netip.ParseAddr(ip)
		if err != nil || !pool.Contains(a) || a == netip.MustParseAddr("127.0.0.1") || a == pool.Addr() {
			t.Fatalf("ingress %q outside %s", ip, pool)
		}
		s, _ := e.cs.CoreV1().Services(e.ns).Get(ctx, "web", metav1.GetOptions{})
		if m := s.Status.LoadBalancer.Ingress[0].IPMode; m == nil || *m != corev1.LoadBalancerIPModeVIP {
			t.Errorf("ipMode %v, want VIP", m)
		}
	})

	t.Run("the service controller's events are recorded", func(t *testing.T) {
		for _, reason := range []string{dataplane.ReasonEnsuringLoadBalancer, dataplane.ReasonEnsuredLoadBalancer} {
			waitFor(t, reason+" event", func() bool {
				list, err := e.cs.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
					"involvedObject.name": "web", "reason": reason}.String()})
				return err == nil && len(list.Items) == 1 && list.Items[0].Source.Component == "service-controller"
			})
		}
	})

	addr := net.JoinHostPort(ip, strconv.Itoa(int(port)))
	t.Run("a TCP connection to the address reaches a ready endpoint", func(t *testing.T) {
		waitAnswers(t, "http://"+addr+"/", "", "web-a")
	})

	t.Run("another LoadBalancer Service gets another address", func(t *testing.T) {
		e.service("api", "web", lb)
		var other string
		waitFor(t, "the second Service's address", func() bool { other = ingressIP("api"); return other != "" })
		if other == ip {
			t.Fatalf("both Services got %s", ip)
		}
		waitAnswers(t, "http://"+net.JoinHostPort(other, strconv.Itoa(int(port)))+"/", "", "web-a")
	})

	t.Run("a Service of another loadBalancerClass is left alone", func(t *testing.T) {
		e.service("other-class", "web", lb, func(s *corev1.Service) { s.Spec.LoadBalancerClass = ptr.To("example.com/lb") })
		// The first Services' addresses came within one sync; a probe
		// Service created after it is synced after it too.
		e.service("probe", "web", lb)
		waitFor(t, "the probe Service's address", func() bool { return ingressIP("probe") != "" })
		if got := ingressIP("other-class"); got != "" {
			t.Fatalf("a Service of another class got %s", got)
		}
	})

	t.Run("changing the type away clears the status and the address stops answering", func(t *testing.T) {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			s, err := e.cs.CoreV1().Services(e.ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			s.Spec.Type = corev1.ServiceTypeClusterIP
			s.Spec.Ports[0].NodePort = 0
			_, err = e.cs.CoreV1().Services(e.ns).Update(ctx, s, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the status cleared", func() bool { return ingressIP("web") == "" })
		for _, reason := range []string{dataplane.ReasonDeletingLoadBalancer, dataplane.ReasonDeletedLoadBalancer} {
			waitFor(t, reason+" event", func() bool {
				list, err := e.cs.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
					"involvedObject.name": "web", "reason": reason}.String()})
				return err == nil && len(list.Items) == 1
			})
		}
		waitFor(t, "the address refusing connections", func() bool {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
			}
			return err != nil
		})
	})
}
