package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"minik/internal/clusterdns"
)

// DNSAuto, as Config.DNSListen, serves cluster DNS on the kube-dns
// Service's ClusterIP, port 53 (a free port of that address when 53
// cannot be had).
const DNSAuto = "auto"

// dnsPort is DNS's port, the kube-dns Service's.
const dnsPort = 53

// placeDNS settles the kube-dns Service's address once the Service range
// is known: Config.ClusterDNS, else the range's tenth address.
func (s *Server) placeDNS() error {
	if s.cfg.ClusterDNS == "" {
		ip, err := clusterdns.ClusterIP(s.serviceIPs)
		if err != nil {
			return fmt.Errorf("--cluster-dns: %w", err)
		}
		s.dnsIP = ip
		return nil
	}
	ip, err := netip.ParseAddr(s.cfg.ClusterDNS)
	if err != nil {
		return fmt.Errorf("--cluster-dns %q: %w", s.cfg.ClusterDNS, err)
	}
	if !s.serviceIPs.Contains(ip) {
		return fmt.Errorf("--cluster-dns %s: not in the Service range %s", ip, s.serviceIPs)
	}
	s.dnsIP = ip
	return nil
}

// dnsListen is where the DNS server listens and whether another port may
// stand in; ok is false when it is off.
func (s *Server) dnsListen() (addr string, fallback, ok bool) {
	switch s.cfg.DNSListen {
	case "", NoAddress:
		return "", false, false
	case DNSAuto:
		return net.JoinHostPort(s.dnsIP.String(), strconv.Itoa(dnsPort)), true, true
	}
	return s.cfg.DNSListen, false, true
}

// dnsReserved are the Service addresses the DNS server answers on
// itself, so the Service proxy leaves them alone: kube-dns's ClusterIP:53
// and :9153 (metrics), when the DNS server serves there. (Were one taken
// by another program, the proxy could not have it either.)
func (s *Server) dnsReserved() []netip.AddrPort {
	addr, _, ok := s.dnsListen()
	if !ok {
		return nil
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || ap.Addr() != s.dnsIP {
		return nil
	}
	return []netip.AddrPort{ap, netip.AddrPortFrom(s.dnsIP, clusterdns.MetricsPort)}
}

// clusterDNS is the DNS server with its identity. Its listeners open when
// it starts (under --leader-elect only in the holder of the nodes'
// Lease, like the data plane), then the kube-dns EndpointSlice is made to
// name the address it answers on.
func (s *Server) clusterDNS() (func(context.Context) error, error) {
	addr, fallback, _ := s.dnsListen()
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("--dns-listen %q: %w", addr, err)
	}
	dnsCfg, err := s.identityFor("cluster-dns", clusterdns.User, nil)
	if err != nil {
		return nil, err
	}
	log := s.log.With("component", "cluster-dns")
	var upstream []string
	if s.cfg.DNSForward != "" {
		// A host without resolvers still gets cluster DNS.
		if upstream, err = clusterdns.UpstreamFromResolvConf(s.cfg.DNSForward, s.dnsIP); err != nil {
			log.Warn("names outside the cluster domain will be refused", "err", err)
		}
	}
	return func(ctx context.Context) error {
		cs, err := kubernetes.NewForConfig(s.adminConfig)
		if err != nil {
			return fmt.Errorf("cluster dns: %w", err)
		}
		if err := clusterdns.EnsureRBAC(ctx, cs); err != nil {
			return err
		}
		ln, err := clusterdns.Listen(addr, fallback)
		if err != nil {
			return fmt.Errorf("--dns-listen: %w", err)
		}
		if got := ln.Addr(); got.Port() != dnsPort {
			log.Warn("cluster DNS is not on port 53 (taken, or not permitted); pods' resolvers will not reach it", "address", got.String())
		}
		metrics, metricsPort := s.dnsMetricsListener(ln, log)
		srv, err := clusterdns.New(clusterdns.Config{
			RESTConfig: dnsCfg, Domain: s.cfg.ClusterDomain, NameserverIP: s.dnsIP,
			Listeners: ln, MetricsListener: metrics, Upstream: upstream, Logger: log,
		})
		if err != nil {
			ln.Close()
			if metrics != nil {
				metrics.Close()
			}
			return err
		}
		go publishDNSEndpoint(ctx, cs, srv, metricsPort, log)
		return srv.Start(ctx)
	}, nil
}

// dnsMetricsListener opens CoreDNS's metrics port beside DNS when DNS
// answers on the kube-dns ClusterIP; it returns nil and port 0 otherwise,
// or when the port cannot be had (logged).
func (s *Server) dnsMetricsListener(dns *clusterdns.Listeners, log *slog.Logger) (net.Listener, int32) {
	if dns.Addr().Addr() != s.dnsIP {
		return nil, 0
	}
	ln, err := net.Listen("tcp", netip.AddrPortFrom(s.dnsIP, clusterdns.MetricsPort).String())
	if err != nil {
		log.Warn("no DNS metrics", "err", err)
		return nil, 0
	}
	return ln, clusterdns.MetricsPort
}

// publishDNSEndpoint makes the kube-dns EndpointSlice name srv once it
// answers, retrying each second until the API takes it or ctx is done.
func publishDNSEndpoint(ctx context.Context, cs kubernetes.Interface, srv *clusterdns.Server, metricsPort int32, log *slog.Logger) {
	select {
	case <-srv.Ready():
	case <-ctx.Done():
		return
	}
	_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		if err := clusterdns.EnsureEndpointSlice(ctx, cs, srv.Addr(), metricsPort); err != nil {
			log.Warn("kube-dns endpointslice not written; will retry", "err", err)
			return false, nil
		}
		return true, nil
	})
}
