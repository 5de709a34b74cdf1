package dataplane

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// dialTimeout bounds a connection attempt to an endpoint. Endpoints are on
// loopback: a live one answers at once, a dead one refuses at once.
const dialTimeout = 2 * time.Second

// listenRetry is how often a listener that could not be opened (address
// in use, no permission) is tried again.
const listenRetry = 5 * time.Second

// serviceProxy is the Service data plane: a userspace TCP proxy listening
// on every ClusterIP:port (and on nodeAddr:nodePort for NodePort and
// LoadBalancer Services), forwarding each connection to a ready endpoint
// of the Service port — round-robin, or by client IP with ClientIP session
// affinity. A refused dial moves on to the next endpoint; with none left
// the client's connection is reset, as kube-proxy's REJECT does.
// Established connections are left alone when endpoints change.
type serviceProxy struct {
	services corelisters.ServiceLister
	index    *endpointIndex
	nodeAddr netip.Addr
	log      *slog.Logger

	// reserved are addresses minikd serves itself (see Config.Reserved).
	reserved map[string]bool
	// network, when set, decides which connections NetworkPolicies let
	// through (Config.NetworkPolicy).
	network NetworkPolicy

	mu sync.Mutex
	// listeners maps a listen address to what serves it.
	listeners map[string]*proxyListener
	ctx       context.Context
	conns     sync.WaitGroup
}

// proxyListener serves one address of one Service port.
type proxyListener struct {
	addr    string
	svc     types.NamespacedName
	port    string
	ln      net.Listener
	err     error
	tried   time.Time
	closing chan struct{}
}

func newServiceProxy(services corelisters.ServiceLister, index *endpointIndex, nodeAddr netip.Addr, log *slog.Logger) *serviceProxy {
	return &serviceProxy{services: services, index: index, nodeAddr: nodeAddr, log: log, listeners: map[string]*proxyListener{}}
}

// reserve keeps the proxy off addrs; called before start.
func (p *serviceProxy) reserve(addrs []netip.AddrPort) {
	p.reserved = map[string]bool{}
	for _, a := range addrs {
		p.reserved[a.String()] = true
	}
}

// start records the context connections live in.
func (p *serviceProxy) start(ctx context.Context) {
	p.mu.Lock()
	p.ctx = ctx
	p.mu.Unlock()
}

// addresses returns the listen addresses of a Service, by port name.
func (p *serviceProxy) addresses(svc *corev1.Service) map[string]string {
	out := map[string]string{}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return out
	}
	ip, err := netip.ParseAddr(svc.Spec.ClusterIP)
	// A LoadBalancer's loopback ingress addresses answer its ports, as
	// kube-proxy serves a load balancer's VIP.
	var lbIPs []netip.Addr
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		for _, ing := range svc.Status.LoadBalancer.Ingress {
			if a, err := netip.ParseAddr(ing.IP); err == nil && a.IsLoopback() {
				lbIPs = append(lbIPs, a)
			}
		}
	}
	for _, sp := range svc.Spec.Ports {
		if sp.Protocol != corev1.ProtocolTCP && sp.Protocol != "" {
			continue
		}
		if err == nil {
			out[netip.AddrPortFrom(ip, uint16(sp.Port)).String()] = sp.Name
		}
		if sp.NodePort != 0 && p.nodeAddr.IsValid() {
			out[netip.AddrPortFrom(p.nodeAddr, uint16(sp.NodePort)).String()] = sp.Name
		}
		for _, a := range lbIPs {
			out[netip.AddrPortFrom(a, uint16(sp.Port)).String()] = sp.Name
		}
	}
	for addr := range out {
		if p.reserved[addr] {
			delete(out, addr)
		}
	}
	return out
}

// sync opens and closes a Service's listeners to match it.
func (p *serviceProxy) sync(key types.NamespacedName) {
	want := map[string]string{}
	if svc, err := p.services.Services(key.Namespace).Get(key.Name); err == nil {
		want = p.addresses(svc)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for addr, l := range p.listeners {
		if l.svc != key {
			continue
		}
		if port, ok := want[addr]; ok && port == l.port {
			delete(want, addr)
			continue
		}
		p.closeLocked(l)
	}
	for addr, port := range want {
		if other, taken := p.listeners[addr]; taken {
			p.log.Warn("service address already served by another Service", "address", addr, "service", key, "other", other.svc)
			continue
		}
		l := &proxyListener{addr: addr, svc: key, port: port, closing: make(chan struct{})}
		p.listeners[addr] = l
		p.openLocked(l)
	}
}

func (p *serviceProxy) closeLocked(l *proxyListener) {
	delete(p.listeners, l.addr)
	close(l.closing)
	if l.ln != nil {
		_ = l.ln.Close()
	}
}

// openLocked opens a listener; on failure it stays registered and retry
// opens it later.
func (p *serviceProxy) openLocked(l *proxyListener) {
	if p.ctx == nil || p.ctx.Err() != nil {
		return
	}
	l.tried = time.Now()
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		if l.err == nil || l.err.Error() != err.Error() {
			p.log.Warn("cannot listen for a Service; will retry", "service", l.svc, "port", l.port, "address", l.addr, "err", err)
		}
		l.err = err
		return
	}
	l.ln, l.err = ln, nil
	p.log.Debug("serving service", "service", l.svc, "port", l.port, "address", l.addr)
	go p.accept(l)
}

// retry reopens the listeners that failed.
func (p *serviceProxy) retry() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.listeners {
		if l.ln == nil && time.Since(l.tried) >= listenRetry {
			p.openLocked(l)
		}
	}
}

// stop closes every listener and waits for the connections to end; ctx
// being done has closed them.
func (p *serviceProxy) stop() {
	p.mu.Lock()
	for _, l := range p.listeners {
		p.closeLocked(l)
	}
	p.mu.Unlock()
	p.conns.Wait()
}

func (p *serviceProxy) accept(l *proxyListener) {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			select {
			case <-l.closing:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		p.conns.Add(1)
		go func() {
			defer p.conns.Done()
			p.forward(c, l)
		}()
	}
}

// forward connects a client to a ready endpoint and copies both ways.
func (p *serviceProxy) forward(c net.Conn, l *proxyListener) {
	defer c.Close()
	clientIP, _, _ := net.SplitHostPort(c.RemoteAddr().String())
	be, err := p.dialBackend(p.ctx, p.index.balancer(l.svc, l.port), clientIP)
	if errors.Is(err, errDropped) {
		// A policy drops the packets: the client hears nothing.
		p.log.Debug("a network policy dropped the connection", "service", l.svc, "port", l.port, "client", clientIP)
		hold(c)
		return
	}
	if err != nil {
		// Nothing to send to: reset, as a REJECT rule would.
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		p.log.Debug("no endpoint took the connection", "service", l.svc, "port", l.port, "err", err)
		return
	}
	defer be.Close()
	done := make(chan struct{})
	stop := context.AfterFunc(p.ctx, func() { c.Close(); be.Close() })
	defer stop()
	go func() {
		copyHalf(be, c)
		close(done)
	}()
	copyHalf(c, be)
	<-done
}

// holdDropped bounds how long a dropped connection is held unanswered.
const holdDropped = 2 * time.Minute

// hold reads and ignores what a dropped connection sends, until its
// client gives up or holdDropped passes.
func hold(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(holdDropped))
	_, _ = io.Copy(io.Discard, c)
}

// errNoEndpoint: a Service port has no ready endpoint that accepts.
var errNoEndpoint = errors.New("no ready endpoint")

// errDropped: a network policy does not let the client reach the
// endpoint chosen.
var errDropped = errors.New("dropped by a network policy")

// dialBackend connects to an endpoint of b, trying the next one when one
// refuses. The connection comes from the client's address when it is on
// loopback (a pod's), as the packets of a Service connection keep their
// source, and the network policies are asked about the endpoint chosen,
// as they see a Service connection after its translation.
func (p *serviceProxy) dialBackend(ctx context.Context, b *balancer, clientIP string) (net.Conn, error) {
	if b == nil {
		return nil, errNoEndpoint
	}
	src, srcErr := netip.ParseAddr(clientIP)
	skip := map[string]bool{}
	var last error = errNoEndpoint
	for range b.size() {
		addr, ok := b.pick(clientIP, skip)
		if !ok {
			break
		}
		d := net.Dialer{Timeout: dialTimeout}
		if dst, err := netip.ParseAddrPort(addr); err == nil && srcErr == nil {
			if p.network != nil && !p.network.Allowed(ctx, src, dst.Addr(), int32(dst.Port()), "TCP") {
				return nil, errDropped
			}
			if src.IsLoopback() && dst.Addr().IsLoopback() && p.network != nil {
				d.LocalAddr = &net.TCPAddr{IP: src.AsSlice()}
			}
		}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c, nil
		}
		skip[addr], last = true, err
	}
	return nil, last
}

// copyHalf copies src to dst, then half-closes dst so that the peer sees
// the end of the stream while the other direction goes on.
func copyHalf(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	} else {
		_ = dst.Close()
	}
}

// portString formats a port for messages.
func portString(p int32) string { return strconv.Itoa(int(p)) }
