package dataplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// httpProxy serves Ingress (and Gateway API) routes: it matches a request
// to a route, picks the route's backend Service port and sends the request
// either to the Service's ClusterIP (mode service: through the Service
// proxy, one connection per request so that the Service proxy balances
// every request) or straight to one of the port's ready endpoints (mode
// direct: round-robin, moving on to the next endpoint when one refuses
// the connection).
type httpProxy struct {
	d     *DataPlane
	mode  string
	proxy *httputil.ReverseProxy
	// tables are consulted in order: the Gateway API routes of the
	// listener's protocol, then Ingress routes. certs serve HTTPS.
	gatewayHTTP  atomic.Pointer[routeTable]
	gatewayHTTPS atomic.Pointer[routeTable]
	ingress      atomic.Pointer[routeTable]
	certs        atomic.Pointer[certStore]
}

func newHTTPProxy(d *DataPlane, mode string) *httpProxy {
	p := &httpProxy{d: d, mode: mode}
	direct := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
	}
	viaService := direct.Clone()
	// A pooled connection through the Service proxy is pinned to one
	// endpoint; a fresh connection per request lets it balance requests.
	viaService.DisableKeepAlives = true
	p.proxy = &httputil.ReverseProxy{
		Rewrite:      p.rewrite,
		Transport:    &upstreamTransport{direct: direct, viaService: viaService},
		ErrorHandler: p.upstreamError,
		ErrorLog:     nil,
	}
	p.ingress.Store(newRouteTable(false))
	p.gatewayHTTP.Store(newRouteTable(true))
	p.gatewayHTTPS.Store(newRouteTable(true))
	return p
}

// upstream is where one request goes: a fixed address (a ClusterIP) or
// the ready endpoints of a balancer.
type upstream struct {
	fixed    string
	bal      *balancer
	clientIP string
	skip     map[string]bool
	route    *route
	// tries counts the uses of the fixed address: the Service proxy
	// behind it picks another endpoint each time.
	tries int
}

// maxFixedTries bounds the attempts through a ClusterIP.
const maxFixedTries = 3

func (u *upstream) next() (string, bool) {
	if u.fixed != "" {
		if u.tries >= maxFixedTries {
			return "", false
		}
		u.tries++
		return u.fixed, true
	}
	return u.bal.pick(u.clientIP, u.skip)
}

type upstreamKey struct{}

func (p *httpProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	gw := p.gatewayHTTP.Load()
	if r.TLS != nil {
		gw = p.gatewayHTTPS.Load()
	}
	rt, def := gw.match(r)
	if rt == nil && def == nil {
		rt, def = p.ingress.Load().match(r)
	}
	var ref backendRef
	switch {
	case rt != nil:
		b, ok := pickWeighted(rt.backends)
		if !ok {
			httpError(w, http.StatusInternalServerError, fmt.Sprintf("no backend with a weight for %s", rt.source))
			return
		}
		ref = b
	case def != nil:
		ref = *def
	default:
		httpError(w, http.StatusNotFound, fmt.Sprintf("no Ingress or HTTPRoute rule matches host %q and path %q", requestHost(r), r.URL.Path))
		return
	}
	clientIP, _, _ := net.SplitHostPort(r.RemoteAddr)
	u, code, msg := p.resolve(ref, clientIP)
	if code != 0 {
		httpError(w, code, msg)
		return
	}
	u.route = rt
	p.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), upstreamKey{}, u)))
}

// pickWeighted chooses a backend in proportion to the weights; ok is
// false when every weight is zero.
func pickWeighted(bs []weightedBackend) (backendRef, bool) {
	if len(bs) == 1 && bs[0].weight > 0 {
		return bs[0].ref, true
	}
	var total int64
	for _, b := range bs {
		total += int64(b.weight)
	}
	if total <= 0 {
		return backendRef{}, false
	}
	n := rand.Int64N(total)
	for _, b := range bs {
		if n < int64(b.weight) {
			return b.ref, true
		}
		n -= int64(b.weight)
	}
	return bs[len(bs)-1].ref, true
}

// resolve finds where a backend's requests go, or the status and message
// of why they cannot: a Service or port that does not exist, or a port
// with no ready endpoint (503).
func (p *httpProxy) resolve(ref backendRef, clientIP string) (*upstream, int, string) {
	invalid := http.StatusServiceUnavailable
	if ref.code != 0 {
		invalid = ref.code
	}
	if ref.unsupported != "" {
		return nil, invalid, ref.unsupported
	}
	svc, err := p.d.services.Services(ref.namespace).Get(ref.service)
	if err != nil {
		return nil, invalid, fmt.Sprintf("service %s/%s not found", ref.namespace, ref.service)
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if ref.portName != "" && svc.Spec.Ports[i].Name == ref.portName || ref.portName == "" && svc.Spec.Ports[i].Port == ref.port {
			sp = &svc.Spec.Ports[i]
			break
		}
	}
	if sp == nil {
		return nil, http.StatusServiceUnavailable, fmt.Sprintf("service %s/%s has no port %s", ref.namespace, ref.service, ref.portLabel())
	}
	key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	bal := p.d.index.balancer(key, sp.Name)
	if bal == nil || bal.size() == 0 {
		msg := fmt.Sprintf("no ready endpoints for service %s/%s port %d", svc.Namespace, svc.Name, sp.Port)
		if n := p.d.index.notReadyCount(key); n > 0 {
			msg += fmt.Sprintf(" (%d not ready)", n)
		}
		return nil, http.StatusServiceUnavailable, msg
	}
	u := &upstream{bal: bal, clientIP: clientIP, skip: map[string]bool{}}
	if p.mode == ModeService {
		if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err == nil {
			u.fixed = net.JoinHostPort(ip.String(), strconv.Itoa(int(sp.Port)))
		}
		// A headless Service has no ClusterIP: its endpoints are used.
	}
	return u, 0, ""
}

// rewrite prepares the upstream request: the client's Host is kept,
// X-Forwarded-* are set, and an HTTPRoute's header changes are applied.
func (p *httpProxy) rewrite(pr *httputil.ProxyRequest) {
	pr.SetXForwarded()
	pr.Out.URL.Scheme = "http"
	pr.Out.Host = pr.In.Host
	u, _ := pr.In.Context().Value(upstreamKey{}).(*upstream)
	if u == nil || u.route == nil {
		return
	}
	for k, v := range u.route.setHeaders {
		pr.Out.Header.Set(k, v)
	}
	for k, v := range u.route.addHeaders {
		pr.Out.Header.Add(k, v)
	}
	for _, k := range u.route.removeHeaders {
		pr.Out.Header.Del(k)
	}
}

func (p *httpProxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	p.d.log.Debug("upstream request failed", "host", r.Host, "path", r.URL.Path, "err", err)
	httpError(w, http.StatusBadGateway, err.Error())
}

// httpError writes the proxy's own plain-text answer.
func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	fmt.Fprintf(w, "%d %s: %s\n", code, http.StatusText(code), msg)
}

// upstreamTransport sends a request to its upstream, moving on to the next
// ready endpoint when a connection is refused, or when an endpoint closes
// the connection before answering an idempotent request without a body —
// a pod stopping before its endpoint's ready condition has reached the
// proxy — as nginx's proxy_next_upstream does.
type upstreamTransport struct {
	direct, viaService *http.Transport
}

func (t *upstreamTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	u, _ := req.Context().Value(upstreamKey{}).(*upstream)
	if u == nil {
		return nil, errors.New("request without upstream")
	}
	base := t.direct
	if u.fixed != "" {
		base = t.viaService
	}
	replayable := req.Body == nil || req.Body == http.NoBody
	idempotent := replayable && (req.Method == http.MethodGet || req.Method == http.MethodHead || req.Method == http.MethodOptions)
	var last error = errNoEndpoint
	for {
		addr, ok := u.next()
		if !ok {
			return nil, last
		}
		out := *req
		url := *req.URL
		url.Host = addr
		out.URL = &url
		resp, err := base.RoundTrip(&out)
		if err == nil {
			return resp, nil
		}
		if !retryable(err, replayable, idempotent) {
			return nil, err
		}
		u.skip[addr], last = true, err
	}
}

// retryable tells whether a failed request can go to another endpoint:
// the connection was refused (nothing was sent), or an idempotent request
// found its connection closed before any answer.
func retryable(err error, replayable, idempotent bool) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return replayable
	}
	return idempotent && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET))
}
