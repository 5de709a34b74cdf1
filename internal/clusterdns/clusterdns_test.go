package clusterdns_test

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"minik/internal/clusterdns"
	"minik/internal/testserver"
)

// fixture is a running API server with the objects of the query table,
// and a DNS server fed from it.
type fixture struct {
	cs    kubernetes.Interface
	dns   *clusterdns.Server
	webIP string
}

func mustCreate[T any](t testing.TB, f func(context.Context, T, metav1.CreateOptions) (T, error), obj T) T {
	t.Helper()
	out, err := f(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func slice(name, svc string, port int32, portName string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   eps,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(portName), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
}

func endpoint(ip, hostname string, ready bool) discoveryv1.Endpoint {
	ep := discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}}
	if hostname != "" {
		ep.Hostname = ptr.To(hostname)
	}
	return ep
}

// startFixture creates the objects, then starts the DNS server (upstream
// as given) and waits until it answers.
func startFixture(t testing.TB, upstream []string) *fixture {
	t.Helper()
	ts := testserver.StartWith(t, testserver.Options{})
	cs := ts.Client(t)
	mustCreate(t, cs.CoreV1().Namespaces().Create, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}})
	svcs := cs.CoreV1().Services("demo")
	web := mustCreate(t, svcs.Create, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": "web"},
		Ports:    []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}},
	}})
	mustCreate(t, svcs.Create, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: corev1.ServiceSpec{
		ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "db"},
		Ports: []corev1.ServicePort{{Name: "pg", Port: 5432}},
	}})
	mustCreate(t, svcs.Create, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext"}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeExternalName, ExternalName: "example.com",
	}})
	mustCreate(t, svcs.Create, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "alias"}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeExternalName, ExternalName: "web.demo.svc.cluster.local",
	}})
	mustCreate(t, svcs.Create, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Spec: corev1.ServiceSpec{
		ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "big"},
		Ports: []corev1.ServicePort{{Name: "http", Port: 80}},
	}})
	es := cs.DiscoveryV1().EndpointSlices("demo")
	mustCreate(t, es.Create, slice("db-abc", "db", 5432, "pg",
		endpoint("127.1.0.10", "db-0", true), endpoint("127.1.0.11", "db-1", true), endpoint("127.1.0.12", "db-2", false)))
	mustCreate(t, es.Create, slice("db-def", "db", 5432, "pg", endpoint("127.1.0.13", "", true)))
	var many []discoveryv1.Endpoint
	for i := range 100 {
		many = append(many, endpoint(fmt.Sprintf("127.1.1.%d", i+1), "", true))
	}
	mustCreate(t, es.Create, slice("big-abc", "big", 80, "http", many...))
	pod := mustCreate(t, cs.CoreV1().Pods("demo").Create, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "loner"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
	}})
	pod.Status.PodIP, pod.Status.PodIPs = "127.1.2.7", []corev1.PodIP{{IP: "127.1.2.7"}}
	if _, err := cs.CoreV1().Pods("demo").UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	ln, err := clusterdns.Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := clusterdns.New(clusterdns.Config{RESTConfig: ts.RESTConfig, Listeners: ln, Upstream: upstream,
		NameserverIP: netip.MustParseAddr("127.96.0.10")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("dns server: %v", err)
		}
	})
	select {
	case <-srv.Ready():
	case err := <-done:
		t.Fatalf("dns server did not start: %v", err)
	}
	return &fixture{cs: cs, dns: srv, webIP: web.Spec.ClusterIP}
}

func (f *fixture) ask(t testing.TB, net, name string, qtype uint16, edns bool) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	if edns {
		m.SetEdns0(4096, false)
	}
	c := &dns.Client{Net: net, Timeout: 5 * time.Second}
	r, _, err := c.Exchange(m, f.dns.Addr().String())
	if err != nil {
		t.Fatalf("%s %s %s: %v", net, name, dns.TypeToString[qtype], err)
	}
	return r
}

// rrs formats records without TTLs and headers' class, sorted.
func rrs(list []dns.RR) []string {
	var out []string
	for _, rr := range list {
		if rr.Header().Rrtype == dns.TypeOPT {
			continue
		}
		h := rr.Header()
		s := strings.TrimPrefix(rr.String(), h.String())
		out = append(out, h.Name+" "+dns.TypeToString[h.Rrtype]+" "+s)
	}
	sort.Strings(out)
	return out
}

func TestQueries(t *testing.T) {
	f := startFixture(t, nil)
	zone := "cluster.local."
	reverse := func(ip string) string { r, _ := dns.ReverseAddr(ip); return r }
	type want struct {
		rcode  int
		answer []string
		extra  []string
		soa    bool
	}
	cases := []struct {
		name  string
		qname string
		qtype uint16
		want  want
	}{
		{"a Service's name gives its ClusterIP", "web.demo.svc." + zone, dns.TypeA,
			want{rcode: dns.RcodeSuccess, answer: []string{"web.demo.svc.cluster.local. A " + f.webIP}}},
		{"names are case-insensitive and answered as asked", "WEB.Demo.svc." + zone, dns.TypeA,
			want{rcode: dns.RcodeSuccess, answer: []string{"WEB.Demo.svc.cluster.local. A " + f.webIP}}},
		{"an IPv4 Service has no AAAA: NODATA with the SOA", "web.demo.svc." + zone, dns.TypeAAAA,
			want{rcode: dns.RcodeSuccess, soa: true}},
		{"a missing Service is NXDOMAIN with the SOA", "nope.demo.svc." + zone, dns.TypeA,
			want{rcode: dns.RcodeNameError, soa: true}},
		{"a namespace without Services does not exist", "nowhere.svc." + zone, dns.TypeA,
			want{rcode: dns.RcodeNameError, soa: true}},
		{"a namespace with Services is an empty non-terminal", "demo.svc." + zone, dns.TypeA,
			want{rcode: dns.RcodeSuccess, soa: true}},
		{"a headless Service gives its ready endpoints", "db.demo.svc." + zone, dns.TypeA,
			want{rcode: dns.RcodeSuccess, answer: []string{
				"db.demo.svc.cluster.local. A 127.1.0.10", "db.demo.svc.cluster.local. A 127.1.0.11", "db.demo.svc.cluster.local. A 127.1.0.13"}}},
		{"a StatefulSet pod by its hostname", "db-0.db.demo.svc." + zone, dns.TypeA,
			want{rcode: dns.RcodeSuccess, answer: []string{"db-0.db.demo.svc.cluster.local. A 127.1.0.10"}}},
		{"an endpoint without hostname by its dashed address", "127-1-0-13.db.demo.svc." + zone, dns.TypeA,
			want{rcode: dns.RcodeSuccess, answer: []string{"127-1-0-13.db.demo.svc.cluster.local. A 127.1.0.13"}}},
		{"a not-ready endpoint has no name", "db-2.db.demo.svc." + zone, dns.TypeA,
			want{rcode: dns.RcodeNameError, soa: true}},
		{"SRV of a named port of a ClusterIP Service", "_http._tcp.web.demo.svc." + zone, dns.TypeSRV,
			want{rcode: dns.RcodeSuccess,
				answer: []string{"_http._tcp.web.demo.svc.cluster.local. SRV 0 100 80 web.demo.svc.cluster.local."},
				extra:  []string{"web.demo.svc.cluster.local. A " + f.webIP}}},
		{"SRV of a UDP port", "_dns._udp.web.demo.svc." + zone, dns.TypeSRV,
			want{rcode: dns.RcodeSuccess,
				answer: []string{"_dns._udp.web.demo.svc.cluster.local. SRV 0 100 53 web.demo.svc.cluster.local."},
				extra:  []string{"web.demo.svc.cluster.local. A " + f.webIP}}},
		{"SRV of a port the Service lacks is NXDOMAIN", "_grpc._tcp.web.demo.svc." + zone, dns.TypeSRV,
			want{rcode: dns.RcodeNameError, soa: true}},
		{"SRV of a headless Service names each endpoint", "_pg._tcp.db.demo.svc." + zone, dns.TypeSRV,
			want{rcode: dns.RcodeSuccess,
				answer: []string{
					"_pg._tcp.db.demo.svc.cluster.local. SRV 0 33 5432 127-1-0-13.db.demo.svc.cluster.local.",
					"_pg._tcp.db.demo.svc.cluster.local. SRV 0 33 5432 db-0.db.demo.svc.cluster.local.",
					"_pg._tcp.db.demo.svc.cluster.local. SRV 0 33 5432 db-1.db.demo.svc.cluster.local."},
				extra: []string{
					"127-1-0-13.db.demo.svc.cluster.local. A 127.1.0.13",
					"db-0.db.demo.svc.cluster.local. A 127.1.0.10",
					"db-1.db.demo.svc.cluster.local. A 127.1.0.11"}}},
		{"an ExternalName Service is a CNAME", "ext.demo.svc." + zone, dns.TypeA,
			want{rcode: dns.RcodeSuccess, answer: []string{"ext.demo.svc.cluster.local. CNAME example.com."}}},
		{"a CNAME into the zone is followed", "alias.demo.svc." + zone, dns.TypeA,
			want{rcode: dns.RcodeSuccess, answer: []string{
				"alias.demo.svc.cluster.local. CNAME web.demo.svc.cluster.local.", "web.demo.svc.cluster.local. A " + f.webIP}}},
		{"a pod record spells its address", "127-1-2-3.demo.pod." + zone, dns.TypeA,
			want{rcode: dns.RcodeSuccess, answer: []string{"127-1-2-3.demo.pod.cluster.local. A 127.1.2.3"}}},
		{"a malformed pod record is NXDOMAIN", "127-1-2.demo.pod." + zone, dns.TypeA,
			want{rcode: dns.RcodeNameError, soa: true}},
		{"PTR of a ClusterIP names the Service", reverse(f.webIP), dns.TypePTR,
			want{rcode: dns.RcodeSuccess, answer: []string{reverse(f.webIP) + " PTR web.demo.svc.cluster.local."}}},
		{"PTR of an endpoint names the endpoint", reverse("127.1.0.10"), dns.TypePTR,
			want{rcode: dns.RcodeSuccess, answer: []string{reverse("127.1.0.10") + " PTR db-0.db.demo.svc.cluster.local."}}},
		{"PTR of a pod IP names the pod record", reverse("127.1.2.7"), dns.TypePTR,
			want{rcode: dns.RcodeSuccess, answer: []string{reverse("127.1.2.7") + " PTR 127-1-2-7.demo.pod.cluster.local."}}},
		{"PTR of an unknown address is refused without upstream", reverse("192.0.2.1"), dns.TypePTR,
			want{rcode: dns.RcodeRefused}},
		{"a name outside the zone is refused without upstream", "example.com.", dns.TypeA,
			want{rcode: dns.RcodeRefused}},
		{"the schema version", "dns-version." + zone, dns.TypeTXT,
			want{rcode: dns.RcodeSuccess, answer: []string{`dns-version.cluster.local. TXT "1.1.0"`}}},
		{"the zone's SOA", zone, dns.TypeSOA,
			want{rcode: dns.RcodeSuccess, answer: []string{"cluster.local. SOA ns.dns.cluster.local. hostmaster.cluster.local."}}},
		{"the nameserver's address", "ns.dns." + zone, dns.TypeA,
			want{rcode: dns.RcodeSuccess, answer: []string{"ns.dns.cluster.local. A 127.96.0.10"}}},
	}
	for _, proto := range []string{"udp", "tcp"} {
		for _, c := range cases {
			t.Run(proto+": "+c.name, func(t *testing.T) {
				r := f.ask(t, proto, c.qname, c.qtype, false)
				if r.Rcode != c.want.rcode {
					t.Fatalf("rcode %s, want %s: %v", dns.RcodeToString[r.Rcode], dns.RcodeToString[c.want.rcode], r)
				}
				got := rrs(r.Answer)
				if c.qtype == dns.TypeSOA {
					// The serial changes: compare up to it.
					for i := range got {
						got[i] = strings.Join(strings.Fields(got[i])[:4], " ")
					}
				}
				if !slices.Equal(got, c.want.answer) {
					t.Errorf("answer\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want.answer, "\n"))
				}
				if c.want.extra != nil && !slices.Equal(rrs(r.Extra), c.want.extra) {
					t.Errorf("extra\n%s\nwant\n%s", strings.Join(rrs(r.Extra), "\n"), strings.Join(c.want.extra, "\n"))
				}
				hasSOA := len(r.Ns) == 1 && r.Ns[0].Header().Rrtype == dns.TypeSOA && r.Ns[0].Header().Name == zone
				if hasSOA != c.want.soa {
					t.Errorf("authority %v, want SOA: %v", r.Ns, c.want.soa)
				}
				inZone := dns.IsSubDomain(zone, strings.ToLower(c.qname)) || c.want.rcode == dns.RcodeSuccess
				if r.Authoritative != inZone {
					t.Errorf("authoritative %v, want %v", r.Authoritative, inZone)
				}
			})
		}
	}
}

func TestTruncation(t *testing.T) {
	f := startFixture(t, nil)
	name := "big.demo.svc.cluster.local."
	t.Run("over UDP without EDNS0 the answer fits 512 bytes and is truncated", func(t *testing.T) {
		r := f.ask(t, "udp", name, dns.TypeA, false)
		if !r.Truncated || len(r.Answer) == 0 || len(r.Answer) >= 100 {
			t.Fatalf("truncated %v with %d answers", r.Truncated, len(r.Answer))
		}
		r.Compress = true
		if b, _ := r.Pack(); len(b) > dns.MinMsgSize {
			t.Fatalf("%d bytes over UDP", len(b))
		}
	})
	t.Run("over UDP with EDNS0 4096 all 100 fit", func(t *testing.T) {
		r := f.ask(t, "udp", name, dns.TypeA, true)
		if r.Truncated || len(r.Answer) != 100 || r.IsEdns0() == nil {
			t.Fatalf("truncated %v with %d answers, edns %v", r.Truncated, len(r.Answer), r.IsEdns0())
		}
	})
	t.Run("over TCP all 100 come", func(t *testing.T) {
		r := f.ask(t, "tcp", name, dns.TypeA, false)
		if r.Truncated || len(r.Answer) != 100 {
			t.Fatalf("truncated %v with %d answers", r.Truncated, len(r.Answer))
		}
	})
}

func TestFollowsChanges(t *testing.T) {
	f := startFixture(t, nil)
	svc := mustCreate(t, f.cs.CoreV1().Services("demo").Create, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "late"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 8080}}}})
	var last *dns.Msg
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		last = f.ask(t, "udp", "late.demo.svc.cluster.local.", dns.TypeA, false)
		return last.Rcode == dns.RcodeSuccess && len(last.Answer) == 1, nil
	})
	if err != nil {
		t.Fatalf("a new Service never resolved: %v", last)
	}
	if got := last.Answer[0].(*dns.A).A.String(); got != svc.Spec.ClusterIP {
		t.Fatalf("late resolved to %s, want %s", got, svc.Spec.ClusterIP)
	}
	if err := f.cs.CoreV1().Services("demo").Delete(context.Background(), "late", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		last = f.ask(t, "tcp", "late.demo.svc.cluster.local.", dns.TypeA, false)
		return last.Rcode == dns.RcodeNameError, nil
	})
	if err != nil {
		t.Fatalf("a deleted Service still resolves: %v", last)
	}
}

// TestForward runs a second DNS server on loopback as the upstream.
func TestForward(t *testing.T) {
	up, err := clusterdns.Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	mux := dns.NewServeMux()
	mux.HandleFunc("example.com.", func(w dns.ResponseWriter, req *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(req)
		m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: req.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: []byte{192, 0, 2, 7}}}
		_ = w.WriteMsg(m)
	})
	upstream := &dns.Server{PacketConn: up.UDP, Handler: mux}
	go func() { _ = upstream.ActivateAndServe() }()
	t.Cleanup(func() { _ = upstream.Shutdown(); up.Close() })

	f := startFixture(t, []string{up.Addr().String()})
	r := f.ask(t, "udp", "www.example.com.", dns.TypeA, false)
	if r.Rcode != dns.RcodeSuccess || !slices.Equal(rrs(r.Answer), []string{"www.example.com. A 192.0.2.7"}) || !r.RecursionAvailable {
		t.Fatalf("forwarded answer %v", r)
	}
	if r := f.ask(t, "udp", "web.demo.svc.cluster.local.", dns.TypeA, false); len(r.Answer) != 1 {
		t.Fatalf("cluster names are still answered locally: %v", r)
	}
}

func TestBadQueries(t *testing.T) {
	f := startFixture(t, nil)
	c := &dns.Client{Net: "udp", Timeout: 5 * time.Second}
	t.Run("two questions are a format error", func(t *testing.T) {
		m := new(dns.Msg)
		m.SetQuestion("web.demo.svc.cluster.local.", dns.TypeA)
		m.Question = append(m.Question, m.Question[0])
		r, _, err := c.Exchange(m, f.dns.Addr().String())
		if err != nil || r.Rcode != dns.RcodeFormatError {
			t.Fatalf("got %v, %v", r, err)
		}
	})
	t.Run("an update is not implemented", func(t *testing.T) {
		m := new(dns.Msg)
		m.SetUpdate("cluster.local.")
		r, _, err := c.Exchange(m, f.dns.Addr().String())
		if err != nil || r.Rcode != dns.RcodeNotImplemented {
			t.Fatalf("got %v, %v", r, err)
		}
	})
	t.Run("a zone transfer is refused", func(t *testing.T) {
		m := new(dns.Msg)
		m.SetQuestion("cluster.local.", dns.TypeAXFR)
		r, _, err := (&dns.Client{Net: "tcp", Timeout: 5 * time.Second}).Exchange(m, f.dns.Addr().String())
		if err != nil || r.Rcode != dns.RcodeRefused {
			t.Fatalf("got %v, %v", r, err)
		}
	})
}

// BenchmarkQueryUDP measures A queries of a Service's name per second over
// UDP, from parallel clients.
func BenchmarkQueryUDP(b *testing.B) {
	f := startFixture(b, nil)
	addr := f.dns.Addr().String()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		c := &dns.Client{Net: "udp", Timeout: 5 * time.Second}
		conn, err := c.Dial(addr)
		if err != nil {
			b.Error(err)
			return
		}
		defer conn.Close()
		m := new(dns.Msg)
		m.SetQuestion("web.demo.svc.cluster.local.", dns.TypeA)
		for pb.Next() {
			r, _, err := c.ExchangeWithConn(m, conn)
			if err != nil || len(r.Answer) != 1 {
				b.Errorf("answer %v, %v", r, err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "queries/s")
}
