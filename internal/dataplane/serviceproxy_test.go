package dataplane_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestServiceProxy(t *testing.T) {
	e := start(t, "")
	ctx := context.Background()
	e.pod("web-a", "web", true)
	b, c := e.pod("web-b", "web", true), e.pod("web-c", "web", true)
	svc := e.service("web", "web")
	url := "http://" + net.JoinHostPort(svc.Spec.ClusterIP, "80") + "/"
	waitAnsweredByAll(t, url, "", "web-a", "web-b", "web-c")

	t.Run("the ClusterIP is answered by each ready endpoint in turn", func(t *testing.T) {
		var seq []string
		for range 9 {
			_, body, err := get(freshClient, url, "")
			if err != nil {
				t.Fatal(err)
			}
			seq = append(seq, body)
		}
		for i := 3; i < len(seq); i++ {
			if seq[i] != seq[i-3] || seq[i] == seq[i-1] {
				t.Fatalf("answers are not round-robin: %v", seq)
			}
		}
	})

	t.Run("an endpoint with ready=false gets no request among hundreds", func(t *testing.T) {
		e.setReady("web-b", b.ip, false)
		waitFor(t, "web-b not ready in its EndpointSlice", func() bool { r, n := e.readyEndpoints("web"); return r == 2 && n == 1 })
		// The proxy follows the slice within milliseconds.
		time.Sleep(20 * time.Millisecond)
		before := b.hits.Load()
		got := tally(t, freshClient, 300, url, "")
		if got["web-b"] != 0 || b.hits.Load() != before {
			t.Fatalf("the not-ready endpoint was sent requests: %v", got)
		}
		if got["web-a"] != 150 || got["web-c"] != 150 {
			t.Fatalf("the ready endpoints did not share the requests: %v", got)
		}
	})

	t.Run("an endpoint turning ready gets traffic within milliseconds", func(t *testing.T) {
		before := b.hits.Load()
		start := time.Now()
		e.setReady("web-b", b.ip, true)
		for b.hits.Load() == before {
			if time.Since(start) > 10*time.Second {
				t.Fatal("web-b got no traffic 10s after turning ready")
			}
			if _, _, err := get(freshClient, url, ""); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("pod Ready written → first proxied request: %v", time.Since(start))
	})

	t.Run("a deleted pod is terminating and gets no new connection", func(t *testing.T) {
		if err := e.cs.CoreV1().Pods(e.ns).Delete(ctx, "web-c", metav1.DeleteOptions{GracePeriodSeconds: new(int64(30))}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "web-c terminating", func() bool { r, n := e.readyEndpoints("web"); return r == 2 && n == 1 })
		time.Sleep(20 * time.Millisecond)
		before := c.hits.Load()
		got := tally(t, freshClient, 100, url, "")
		if c.hits.Load() != before {
			t.Fatalf("the terminating endpoint was sent requests: %v", got)
		}
	})

	t.Run("ClientIP session affinity keeps a client on one endpoint", func(t *testing.T) {
		e.pod("sticky-a", "sticky", true)
		e.pod("sticky-b", "sticky", true)
		s := e.service("sticky", "sticky", func(s *corev1.Service) { s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP })
		u := "http://" + net.JoinHostPort(s.Spec.ClusterIP, "80") + "/"
		waitFor(t, "two ready endpoints", func() bool { r, _ := e.readyEndpoints("sticky"); return r == 2 })
		waitAnswers(t, u, "", "sticky-a", "sticky-b")
		if got := tally(t, freshClient, 50, u, ""); len(got) != 1 {
			t.Fatalf("one client was spread over endpoints: %v", got)
		}
	})

	t.Run("a NodePort Service answers on the host's loopback", func(t *testing.T) {
		s := e.service("np", "web", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort })
		u := "http://127.0.0.1:" + strconv.Itoa(int(s.Spec.Ports[0].NodePort)) + "/"
		waitAnswers(t, u, "", "web-a", "web-b")
	})

	t.Run("a Service whose selector matches no pod has no endpoints and resets connections", func(t *testing.T) {
		s := e.service("nobody", "no-such-app")
		time.Sleep(100 * time.Millisecond)
		if r, n := e.readyEndpoints("nobody"); r+n != 0 {
			t.Fatalf("%d endpoints for a selector matching no pod", r+n)
		}
		u := "http://" + net.JoinHostPort(s.Spec.ClusterIP, "80") + "/"
		waitFor(t, "the ClusterIP listening", func() bool {
			conn, err := net.DialTimeout("tcp", net.JoinHostPort(s.Spec.ClusterIP, "80"), time.Second)
			if err == nil {
				conn.Close()
			}
			return err == nil
		})
		if code, body, err := get(freshClient, u, ""); err == nil {
			t.Fatalf("a Service without endpoints answered %d %s", code, body)
		}
	})

	t.Run("a deleted Service stops listening", func(t *testing.T) {
		if err := e.cs.CoreV1().Services(e.ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the ClusterIP closed", func() bool {
			conn, err := net.DialTimeout("tcp", net.JoinHostPort(svc.Spec.ClusterIP, "80"), time.Second)
			if err == nil {
				conn.Close()
			}
			return err != nil
		})
	})
}
