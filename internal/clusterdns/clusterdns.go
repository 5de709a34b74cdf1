// Package clusterdns is minik's cluster DNS: a DNS server (on
// github.com/miekg/dns) answering the names of the cluster domain from
// Services, EndpointSlices and Pods it watches through the API server, as
// CoreDNS's kubernetes plugin does with kubeadm's Corefile (`pods
// insecure`, `ttl 30`), following the Kubernetes DNS specification
// (https://github.com/kubernetes/dns/blob/master/docs/specification.md):
//
//   - <svc>.<ns>.svc.<zone> A/AAAA: the ClusterIPs; for a headless Service
//     the ready endpoints' addresses; ExternalName: a CNAME;
//   - <host>.<svc>.<ns>.svc.<zone>: an endpoint by hostname (StatefulSet
//     pods, db-0.db.ns.svc.cluster.local) or dashed address;
//   - _<port>._<proto>.<svc>.<ns>.svc.<zone> SRV (and SRV of the Service
//     name: every named port);
//   - <a-b-c-d>.<ns>.pod.<zone> A: the address the name spells;
//   - PTR of ClusterIPs, endpoint addresses and pod IPs;
//   - dns-version.<zone> TXT, the SOA and NS of the zone apex.
//
// A name of the zone that does not exist is NXDOMAIN, one without records
// of the type asked NODATA, both with the zone's SOA in the authority
// section. Other names are forwarded to the upstream resolvers when some
// are configured (CoreDNS's `forward . /etc/resolv.conf`), else REFUSED.
// Answers over UDP are truncated (TC set) to the client's EDNS0 size, or
// 512 bytes; TCP answers to 64 KiB.
//
// CoreDNS's request metrics (coredns_dns_requests_total,
// coredns_dns_responses_total, coredns_dns_request_duration_seconds) are
// served at /metrics of Config.MetricsListener.
//
// Bounds: an answer is built from at most 512 records; at most 256 TCP
// connections are served at once (each closes after 8s idle, as RFC 7766
// suggests), 1024 queries are answered at once (more are REFUSED), 64
// are forwarded at once (more get SERVFAIL), each forward waits 2s at
// most.
package clusterdns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/net/netutil"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"minik/internal/syncwait"
)

// SchemaVersion is the DNS specification's version the server answers
// for dns-version.<zone>.
const SchemaVersion = "1.1.0"

// DefaultDomain is the cluster domain when none is given (kubelet's
// --cluster-domain as kubeadm sets it).
const DefaultDomain = "cluster.local"

// DefaultTTL is the records' TTL, kubeadm's Corefile's `ttl 30`.
const DefaultTTL = 30

// Bounds of the work the server takes on at once.
const (
	maxTCPConns    = 256
	maxInFlight    = 1024
	maxForwards    = 64
	forwardTimeout = 2 * time.Second
)

// Config configures the DNS server.
type Config struct {
	// RESTConfig is the client configuration the server watches the API
	// with (it lists and watches Services, EndpointSlices and Pods).
	// Required.
	RESTConfig *rest.Config
	// Domain is the cluster domain; empty means DefaultDomain.
	Domain string
	// NameserverIP is the DNS Service's cluster IP, the address of
	// ns.dns.<domain>; may be invalid (then that name has no address).
	NameserverIP netip.Addr
	// Listeners are where the server answers; required (see Listen).
	Listeners *Listeners
	// MetricsListener, when set, serves CoreDNS's request metrics at
	// /metrics (Prometheus' text format); it is closed on return.
	MetricsListener net.Listener
	// Upstream are host:port addresses queries outside the cluster domain
	// are forwarded to; empty refuses them (see UpstreamFromResolvConf).
	Upstream []string
	// TTL is the records' TTL; zero means DefaultTTL.
	TTL uint32
	// Logger logs; nil means slog.Default().
	Logger *slog.Logger
}

// Listeners are a DNS server's UDP and TCP sockets on one address.
type Listeners struct {
	UDP net.PacketConn
	TCP net.Listener
}

// Addr is the address both listen on.
func (l *Listeners) Addr() netip.AddrPort {
	return netip.MustParseAddrPort(l.TCP.Addr().String())
}

// Close closes both.
func (l *Listeners) Close() {
	_ = l.UDP.Close()
	_ = l.TCP.Close()
}

// Listen opens UDP and TCP on addr (host:port). With port 0, or when
// fallback is set and the port cannot be had (taken, or not permitted),
// both take one free port of the host.
func Listen(addr string, fallback bool) (*Listeners, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dns listen address %q: %w", addr, err)
	}
	l, err := listenPair(host, port)
	if err == nil || !fallback || port == "0" {
		return l, err
	}
	return listenPair(host, "0")
}

// listenPair opens TCP, then UDP on the same port; with port 0 it tries a
// few free TCP ports until UDP has the same one too.
func listenPair(host, port string) (*Listeners, error) {
	var last error
	for range 8 {
		tcp, err := net.Listen("tcp", net.JoinHostPort(host, port))
		if err != nil {
			return nil, fmt.Errorf("dns listen on %s: %w", net.JoinHostPort(host, port), err)
		}
		_, p, _ := net.SplitHostPort(tcp.Addr().String())
		udp, err := net.ListenPacket("udp", net.JoinHostPort(host, p))
		if err == nil {
			return &Listeners{UDP: udp, TCP: tcp}, nil
		}
		tcp.Close()
		last = fmt.Errorf("dns listen on udp %s: %w", net.JoinHostPort(host, p), err)
		if port != "0" {
			break
		}
	}
	return nil, last
}

// UpstreamFromResolvConf returns the nameservers of a resolv.conf file as
// host:port, leaving out skip (the cluster DNS's own address, which would
// loop).
func UpstreamFromResolvConf(path string, skip ...netip.Addr) ([]string, error) {
	cc, err := dns.ClientConfigFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("read resolvers from %s: %w", path, err)
	}
	var out []string
	for _, s := range cc.Servers {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			continue
		}
		own := false
		for _, k := range skip {
			own = own || k == ip
		}
		if !own {
			out = append(out, net.JoinHostPort(ip.String(), cc.Port))
		}
	}
	return out, nil
}

// Server is the cluster DNS server.
type Server struct {
	cfg   Config
	log   *slog.Logger
	zone  *zone
	ready chan struct{}

	inFlight chan struct{}
	forwards chan struct{}
	ctx      context.Context
	metrics  *metrics
	// serverLabel is the metrics' server label, CoreDNS's "dns://:53".
	serverLabel string
}

// New validates cfg and fills defaults.
func New(cfg Config) (*Server, error) {
	if cfg.RESTConfig == nil {
		return nil, errors.New("clusterdns: a REST config is required")
	}
	if cfg.Listeners == nil {
		return nil, errors.New("clusterdns: listeners are required")
	}
	if cfg.Domain == "" {
		cfg.Domain = DefaultDomain
	}
	origin := dns.Fqdn(strings.ToLower(cfg.Domain))
	if _, ok := dns.IsDomainName(origin); !ok || origin == "." {
		return nil, fmt.Errorf("--cluster-domain %q: not a domain name", cfg.Domain)
	}
	for _, u := range cfg.Upstream {
		if _, err := netip.ParseAddrPort(u); err != nil {
			return nil, fmt.Errorf("dns upstream %q: %w", u, err)
		}
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{
		cfg: cfg, log: cfg.Logger, ready: make(chan struct{}),
		zone:     &zone{origin: origin, ttl: cfg.TTL, nsIP: cfg.NameserverIP},
		inFlight: make(chan struct{}, maxInFlight),
		forwards: make(chan struct{}, maxForwards),
		metrics:  newMetrics(),
	}
	s.serverLabel = "dns://:" + strconv.Itoa(int(cfg.Listeners.Addr().Port()))
	s.zone.serial.Store(uint32(time.Now().Unix()))
	return s, nil
}

// Ready is closed once the caches have synced and the server answers.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Addr is the address the server answers on (UDP and TCP).
func (s *Server) Addr() netip.AddrPort { return s.cfg.Listeners.Addr() }

// Start watches the API and answers queries until ctx is done; it closes
// the listeners on return. Queries are answered only once the caches have
// synced (a name is never NXDOMAIN merely because its Service was not
// listed yet).
func (s *Server) Start(ctx context.Context) error {
	defer s.cfg.Listeners.Close()
	if ml := s.cfg.MetricsListener; ml != nil {
		hs := &http.Server{Handler: s.metricsMux(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = hs.Serve(ml) }()
		defer hs.Close()
	}
	rc := rest.CopyConfig(s.cfg.RESTConfig)
	rc.UserAgent = "minik-cluster-dns"
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("clusterdns: client: %w", err)
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	svcInf := factory.Core().V1().Services().Informer()
	sliceInf := factory.Discovery().V1().EndpointSlices().Informer()
	podInf := factory.Core().V1().Pods().Informer()
	if err := s.setupInformers(svcInf, sliceInf, podInf); err != nil {
		return err
	}
	s.ctx = ctx
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !syncwait.Synced(ctx, svcInf.HasSynced, sliceInf.HasSynced, podInf.HasSynced) {
		return nil
	}

	tcp := netutil.LimitListener(s.cfg.Listeners.TCP, maxTCPConns)
	servers := []*dns.Server{
		{PacketConn: s.cfg.Listeners.UDP, Handler: s, UDPSize: dns.DefaultMsgSize},
		{Listener: tcp, Handler: s, MaxTCPQueries: -1,
			IdleTimeout: func() time.Duration { return 8 * time.Second }},
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(servers))
	for _, srv := range servers {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.ActivateAndServe(); err != nil && ctx.Err() == nil {
				errs <- err
			}
		}()
		select {
		case <-started:
		case err := <-errs:
			return fmt.Errorf("clusterdns: serve on %s: %w", s.Addr(), err)
		case <-ctx.Done():
		}
	}
	close(s.ready)
	s.log.Info("cluster DNS serving", "address", s.Addr().String(), "domain", s.cfg.Domain, "upstream", s.cfg.Upstream)
	var runErr error
	select {
	case <-ctx.Done():
	case err := <-errs:
		runErr = fmt.Errorf("clusterdns: serve on %s: %w", s.Addr(), err)
	}
	for _, srv := range servers {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = srv.ShutdownContext(sctx)
		cancel()
	}
	wg.Wait()
	return runErr
}

// setupInformers gives the caches the indexes the zone looks up by, trims
// pods to what a pod's PTR needs, and keeps the SOA serial at the last
// change.
func (s *Server) setupInformers(svcInf, sliceInf, podInf cache.SharedIndexInformer) error {
	bump := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { s.zone.serial.Store(uint32(time.Now().Unix())) },
		UpdateFunc: func(interface{}, interface{}) { s.zone.serial.Store(uint32(time.Now().Unix())) },
		DeleteFunc: func(interface{}) { s.zone.serial.Store(uint32(time.Now().Unix())) },
	}
	if err := svcInf.AddIndexers(cache.Indexers{indexClusterIP: func(obj interface{}) ([]string, error) {
		svc, ok := obj.(*corev1.Service)
		if !ok {
			return nil, nil
		}
		return clusterIPs(svc), nil
	}}); err != nil {
		return fmt.Errorf("clusterdns: index services: %w", err)
	}
	if err := sliceInf.AddIndexers(cache.Indexers{
		indexService: func(obj interface{}) ([]string, error) {
			sl, ok := obj.(*discoveryv1.EndpointSlice)
			if !ok || sl.Labels[discoveryv1.LabelServiceName] == "" {
				return nil, nil
			}
			return []string{sl.Namespace + "/" + sl.Labels[discoveryv1.LabelServiceName]}, nil
		},
		indexAddress: func(obj interface{}) ([]string, error) {
			sl, ok := obj.(*discoveryv1.EndpointSlice)
			if !ok {
				return nil, nil
			}
			var out []string
			for _, ep := range sl.Endpoints {
				out = append(out, ep.Addresses...)
			}
			return out, nil
		},
	}); err != nil {
		return fmt.Errorf("clusterdns: index endpointslices: %w", err)
	}
	if err := podInf.SetTransform(func(obj interface{}) (interface{}, error) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return obj, nil
		}
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, ResourceVersion: pod.ResourceVersion},
			Spec:       corev1.PodSpec{HostNetwork: pod.Spec.HostNetwork},
			Status:     corev1.PodStatus{PodIPs: pod.Status.PodIPs},
		}, nil
	}); err != nil {
		return fmt.Errorf("clusterdns: trim pods: %w", err)
	}
	if err := podInf.AddIndexers(cache.Indexers{indexPodIP: func(obj interface{}) ([]string, error) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.Spec.HostNetwork {
			return nil, nil
		}
		out := make([]string, 0, len(pod.Status.PodIPs))
		for _, ip := range pod.Status.PodIPs {
			out = append(out, ip.IP)
		}
		return out, nil
	}}); err != nil {
		return fmt.Errorf("clusterdns: index pods: %w", err)
	}
	for _, inf := range []cache.SharedIndexInformer{svcInf, sliceInf, podInf} {
		if _, err := inf.AddEventHandler(bump); err != nil {
			return fmt.Errorf("clusterdns: watch: %w", err)
		}
	}
	s.zone.services, s.zone.slices, s.zone.pods = svcInf.GetIndexer(), sliceInf.GetIndexer(), podInf.GetIndexer()
	return nil
}

// metricsMux serves /metrics.
func (s *Server) metricsMux() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", s.metrics.handler())
	return mux
}

// ServeDNS answers one query (dns.Handler).
func (s *Server) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	select {
	case s.inFlight <- struct{}{}:
		defer func() { <-s.inFlight }()
	default:
		_ = w.WriteMsg(m.SetRcode(req, dns.RcodeRefused))
		return
	}
	start := time.Now()
	m.SetReply(req)
	m.RecursionAvailable = len(s.cfg.Upstream) > 0
	plugin := ""
	switch {
	case req.Opcode != dns.OpcodeQuery:
		m.SetRcode(req, dns.RcodeNotImplemented)
	case len(req.Question) != 1:
		m.SetRcode(req, dns.RcodeFormatError)
	default:
		plugin = s.answer(req, m)
	}
	if len(req.Question) == 1 {
		zone := "."
		if dns.IsSubDomain(s.zone.origin, strings.ToLower(req.Question[0].Name)) {
			zone = s.zone.origin
		}
		defer func() { s.metrics.observe(s.serverLabel, zone, w, req.Question[0], m.Rcode, plugin, time.Since(start)) }()
	}
	size := dns.MaxMsgSize
	if _, udp := w.RemoteAddr().(*net.UDPAddr); udp {
		size = dns.MinMsgSize
	}
	if opt := req.IsEdns0(); opt != nil {
		if opt.Version() != 0 {
			// RFC 6891: an unknown version is BADVERS, with our OPT.
			m = new(dns.Msg)
			m.SetReply(req)
			m.SetEdns0(dns.DefaultMsgSize, false)
			m.Rcode = dns.RcodeBadVers
			_ = w.WriteMsg(m)
			return
		}
		if m.IsEdns0() == nil {
			m.SetEdns0(dns.DefaultMsgSize, false)
		}
		if _, udp := w.RemoteAddr().(*net.UDPAddr); udp {
			size = max(int(opt.UDPSize()), dns.MinMsgSize)
		}
	}
	m.Truncate(size)
	_ = w.WriteMsg(m)
}

// answer fills m for req's one question and returns the CoreDNS plugin
// that would have written it ("kubernetes", "forward", or "").
func (s *Server) answer(req, m *dns.Msg) string {
	q := req.Question[0]
	if q.Qclass != dns.ClassINET && q.Qclass != dns.ClassANY {
		m.Rcode = dns.RcodeRefused
		return ""
	}
	if q.Qtype == dns.TypeAXFR || q.Qtype == dns.TypeIXFR {
		m.Rcode = dns.RcodeRefused
		return ""
	}
	a, ok := s.zone.lookup(q)
	if !ok {
		if len(s.cfg.Upstream) == 0 {
			m.Rcode = dns.RcodeRefused
			return ""
		}
		s.forward(req, m)
		return "forward"
	}
	m.Authoritative = a.authoritative
	m.Rcode = a.rcode
	m.Answer, m.Extra = a.answer, a.extra
	if len(m.Answer) == 0 && dns.IsSubDomain(s.zone.origin, strings.ToLower(q.Name)) {
		m.Ns = []dns.RR{s.zone.soa()}
	}
	return "kubernetes"
}

// forward asks the upstream resolvers, in order, for a name outside the
// cluster domain: REFUSED when there are none, SERVFAIL when none
// answered.
func (s *Server) forward(req, m *dns.Msg) {
	if len(s.cfg.Upstream) == 0 {
		m.Rcode = dns.RcodeRefused
		return
	}
	select {
	case s.forwards <- struct{}{}:
		defer func() { <-s.forwards }()
	default:
		m.Rcode = dns.RcodeServerFailure
		return
	}
	ctx := s.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, forwardTimeout)
	defer cancel()
	q := req.Copy()
	q.Extra = nil
	q.SetEdns0(dns.DefaultMsgSize, false)
	for _, up := range s.cfg.Upstream {
		c := &dns.Client{Net: "udp", Timeout: forwardTimeout}
		r, _, err := c.ExchangeContext(ctx, q, up)
		if err == nil && r.Truncated {
			c.Net = "tcp"
			r, _, err = c.ExchangeContext(ctx, q, up)
		}
		if err != nil {
			s.log.Debug("dns forward failed", "upstream", up, "name", req.Question[0].Name, "err", err)
			continue
		}
		m.Rcode = r.Rcode
		m.Answer, m.Ns = r.Answer, r.Ns
		m.Extra = nil
		for _, rr := range r.Extra {
			if rr.Header().Rrtype != dns.TypeOPT {
				m.Extra = append(m.Extra, rr)
			}
		}
		m.RecursionAvailable = true
		m.AuthenticatedData = r.AuthenticatedData
		return
	}
	m.Rcode = dns.RcodeServerFailure
}
