package dataplane_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/dataplane"
	"minik/internal/testserver"
)

// sample is the outcome of a run of requests.
type sample struct {
	n       int
	elapsed time.Duration
	lat     []time.Duration
}

func (s *sample) add(o sample) {
	s.n += o.n
	s.elapsed += o.elapsed
	s.lat = append(s.lat, o.lat...)
}

func (s *sample) rps() float64 { return float64(s.n) / s.elapsed.Seconds() }

func (s *sample) p99() time.Duration {
	slices.Sort(s.lat)
	if len(s.lat) == 0 {
		return 0
	}
	return s.lat[len(s.lat)*99/100]
}

// measure sends n GETs from workers keep-alive clients.
func measure(b *testing.B, client *http.Client, n, workers int, url, host string) sample {
	b.Helper()
	lat := make([][]time.Duration, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Host = host
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	all := slices.Concat(lat...)
	return sample{n: len(all), elapsed: time.Since(start), lat: all}
}

// BenchmarkProxyOverhead compares, in one run, a loopback HTTP server
// called directly, through its Service's ClusterIP (the Service proxy) and
// through an Ingress (the HTTP proxy, direct mode): requests per second
// and p99 latency, 8 concurrent keep-alive clients, the three paths taking
// turns in 5 rounds.
//
//	go test ./internal/dataplane -run '^$' -bench ProxyOverhead -benchtime 20000x
func BenchmarkProxyOverhead(b *testing.B) {
	srv := testserver.StartWith(b, testserver.Options{DataPlane: true, IngressMode: dataplane.ModeDirect})
	cs := srv.Client(b)
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.250.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	port := int32(ln.Addr().(*net.TCPAddr).Port)

	// A Service without selector, its EndpointSlice written by hand.
	svc, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	_, err = cs.DiscoveryV1().EndpointSlices("default").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "bench-1", Labels: map[string]string{discoveryv1.LabelServiceName: "bench"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.250.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: new(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: new("http"), Port: &port}},
	}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	pt := networkingv1.PathTypePrefix
	_, err = cs.NetworkingV1().Ingresses("default").Create(ctx, &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "bench.local", IngressRuleValue: networkingv1.IngressRuleValue{
			HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &pt, Backend: networkingv1.IngressBackend{
				Service: &networkingv1.IngressServiceBackend{Name: "bench", Port: networkingv1.ServiceBackendPort{Number: 80}},
			}}}},
		}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	direct := "http://" + ln.Addr().String() + "/"
	viaService := "http://" + net.JoinHostPort(svc.Spec.ClusterIP, "80") + "/"
	viaIngress := "http://" + srv.IngressHTTP + "/"
	for _, u := range []string{viaService, viaIngress} {
		deadline := time.Now().Add(20 * time.Second)
		for {
			code, _, err := get(freshClient, u, "bench.local")
			if err == nil && code == 200 {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s not answering: %d %v", u, code, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	const workers, rounds = 8, 5
	n := max(b.N, 1000)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	defer client.CloseIdleConnections()
	measure(b, client, 500, workers, direct, "") // warm up
	b.ResetTimer()
	// The three paths take turns, so that a machine busy with something
	// else slows them alike.
	var d, s, i sample
	for range rounds {
		d.add(measure(b, client, n/rounds, workers, direct, ""))
		s.add(measure(b, client, n/rounds, workers, viaService, ""))
		i.add(measure(b, client, n/rounds, workers, viaIngress, "bench.local"))
	}
	b.StopTimer()
	dRPS, sRPS, iRPS := d.rps(), s.rps(), i.rps()
	dP99, sP99, iP99 := d.p99(), s.p99(), i.p99()
	b.ReportMetric(dRPS, "direct-req/s")
	b.ReportMetric(sRPS, "svcproxy-req/s")
	b.ReportMetric(iRPS, "ingress-req/s")
	b.ReportMetric(sRPS/dRPS, "svcproxy/direct")
	b.ReportMetric(iRPS/dRPS, "ingress/direct")
	b.ReportMetric(float64(dP99.Microseconds()), "direct-p99-µs")
	b.ReportMetric(float64((sP99 - dP99).Microseconds()), "svcproxy-p99-added-µs")
	b.ReportMetric(float64((iP99 - dP99).Microseconds()), "ingress-p99-added-µs")
	b.Logf("n=%d: direct %.0f req/s p99 %v; service proxy %.0f req/s (%.2fx) p99 %v; ingress %.0f req/s (%.2fx) p99 %v",
		n/rounds*rounds, dRPS, dP99, sRPS, sRPS/dRPS, sP99, iRPS, iRPS/dRPS, iP99)
}
