package dataplane

import (
	"cmp"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
)

// backendRef names a Service port an HTTP route sends to.
type backendRef struct {
	namespace, service string
	// port is the Service port's number, or portName its name.
	port     int32
	portName string
	// unsupported explains a backend this proxy cannot serve (a resource
	// backend, a kind other than Service, a reference not allowed);
	// empty otherwise.
	unsupported string
	// code answers requests for an unsupported backend, or one whose
	// Service is missing; zero means 503 (Ingress). The Gateway API asks
	// for 500.
	code int
}

// portLabel is the port's name, or else its number.
func (b backendRef) portLabel() string {
	if b.portName != "" {
		return b.portName
	}
	return portString(b.port)
}

func (b backendRef) String() string {
	return b.namespace + "/" + b.service + ":" + b.portLabel()
}

// weightedBackend is a backend and its share of the traffic.
type weightedBackend struct {
	ref    backendRef
	weight int32
}

// headerMatch matches one request header, exactly or by a regular
// expression.
type headerMatch struct {
	name  string
	value string
	re    *regexp.Regexp
}

func (h headerMatch) matches(vals []string) bool {
	for _, v := range vals {
		if h.re != nil && h.re.MatchString(v) || h.re == nil && v == h.value {
			return true
		}
	}
	return false
}

// route is one way from a request to backends: a path match and, for
// HTTPRoutes, method and header matches and request header changes.
type route struct {
	pathType networkingv1.PathType
	path     string
	// pathRE matches the whole path for HTTPRoute's RegularExpression.
	pathRE  *regexp.Regexp
	method  string
	headers []headerMatch
	query   []headerMatch
	// setHeaders and addHeaders and removeHeaders modify the request
	// (HTTPRoute's RequestHeaderModifier).
	setHeaders, addHeaders map[string]string
	removeHeaders          []string
	backends               []weightedBackend
	// source names the object the route comes from ("ingress demo/web").
	source  string
	created time.Time
	// ns and name order routes of equal precedence, then order (an
	// HTTPRoute's rule and match index).
	ns, name string
	order    int
}

// matchesPath applies Kubernetes' path matching: Exact compares the whole
// path; Prefix compares whole path elements ("/foo" matches "/foo",
// "/foo/" and "/foo/bar", not "/foobar"), ignoring a trailing slash of the
// rule. ImplementationSpecific is matched as Prefix here.
func (rt *route) matchesPath(path string) bool {
	switch rt.pathType {
	case networkingv1.PathTypeExact:
		return path == rt.path
	case "RegularExpression":
		return rt.pathRE != nil && rt.pathRE.MatchString(path)
	default:
		p := strings.TrimRight(rt.path, "/")
		return p == "" || path == p || strings.HasPrefix(path, p+"/")
	}
}

func (rt *route) matches(r *http.Request, path string) bool {
	if !rt.matchesPath(path) {
		return false
	}
	if rt.method != "" && r.Method != rt.method {
		return false
	}
	for _, h := range rt.headers {
		if !h.matches(r.Header.Values(h.name)) {
			return false
		}
	}
	if len(rt.query) > 0 {
		q := r.URL.Query()
		for _, m := range rt.query {
			if !m.matches(q[m.name]) {
				return false
			}
		}
	}
	return true
}

// pathTypeRank orders path types of equal length: Exact first.
func pathTypeRank(t networkingv1.PathType) int {
	switch t {
	case networkingv1.PathTypeExact:
		return 0
	case networkingv1.PathTypePrefix:
		return 1
	}
	return 2
}

// ingressOrder is Kubernetes' Ingress precedence: the longest path first;
// at equal length Exact before Prefix (and ImplementationSpecific, matched
// as Prefix, last); then the oldest Ingress.
func ingressOrder(a, b *route) int {
	la, lb := len(strings.TrimRight(a.path, "/")), len(strings.TrimRight(b.path, "/"))
	if a.pathType == networkingv1.PathTypeExact {
		la = len(a.path)
	}
	if b.pathType == networkingv1.PathTypeExact {
		lb = len(b.path)
	}
	return cmp.Or(cmp.Compare(lb, la), cmp.Compare(pathTypeRank(a.pathType), pathTypeRank(b.pathType)),
		a.created.Compare(b.created), cmp.Compare(a.ns, b.ns), cmp.Compare(a.name, b.name))
}

// dedupe drops the later copies of a route listed twice for a host.
func (t *routeTable) dedupe() {
	each := func(g *hostRoutes) {
		if g == nil {
			return
		}
		seen := map[*route]bool{}
		g.routes = slices.DeleteFunc(g.routes, func(r *route) bool {
			dup := seen[r]
			seen[r] = true
			return dup
		})
	}
	for _, g := range t.exact {
		each(g)
	}
	for _, g := range t.wildcard {
		each(g)
	}
	each(t.any)
}

// hostRoutes are the routes of one host, in precedence order, and the
// backend of requests to that host no route matches.
type hostRoutes struct {
	routes         []*route
	defaultBackend *backendRef
}

// routeTable maps a request to a route: the most specific host wins
// (exact, then wildcard, then the rules without a host), then the first
// route of that host that matches.
type routeTable struct {
	exact    map[string]*hostRoutes
	wildcard map[string]*hostRoutes
	any      *hostRoutes
	// multiLabelWildcards makes "*.example.com" match any depth (Gateway
	// API); for Ingress it matches one label only.
	multiLabelWildcards bool
	// defaultBackend takes requests no host matches.
	defaultBackend *backendRef
}

func newRouteTable(multiLabel bool) *routeTable {
	return &routeTable{exact: map[string]*hostRoutes{}, wildcard: map[string]*hostRoutes{}, multiLabelWildcards: multiLabel}
}

// hostGroup returns (creating) the routes of a host pattern.
func (t *routeTable) hostGroup(host string) *hostRoutes {
	host = strings.ToLower(host)
	var m map[string]*hostRoutes
	switch {
	case host == "" || host == "*":
		if t.any == nil {
			t.any = &hostRoutes{}
		}
		return t.any
	case strings.HasPrefix(host, "*."):
		m, host = t.wildcard, host[2:]
	default:
		m = t.exact
	}
	g, ok := m[host]
	if !ok {
		g = &hostRoutes{}
		m[host] = g
	}
	return g
}

// sort orders every host's routes.
func (t *routeTable) sort(order func(a, b *route) int) {
	each := func(g *hostRoutes) {
		if g != nil {
			slices.SortStableFunc(g.routes, order)
		}
	}
	for _, g := range t.exact {
		each(g)
	}
	for _, g := range t.wildcard {
		each(g)
	}
	each(t.any)
}

// requestHost is a request's host name, lower case, without port or
// trailing dot.
func requestHost(r *http.Request) string {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// lookup finds the host's routes.
func (t *routeTable) lookup(host string) *hostRoutes {
	if g, ok := t.exact[host]; ok {
		return g
	}
	if _, rest, ok := strings.Cut(host, "."); ok {
		if g, ok := t.wildcard[rest]; ok {
			return g
		}
		if t.multiLabelWildcards {
			for s := rest; ; {
				_, s, ok = strings.Cut(s, ".")
				if !ok {
					break
				}
				if g, ok := t.wildcard[s]; ok {
					return g
				}
			}
		}
	}
	return t.any
}

// match returns the route for a request, or the default backend when its
// host has no matching route; both nil when nothing applies.
func (t *routeTable) match(r *http.Request) (*route, *backendRef) {
	g := t.lookup(requestHost(r))
	if g == nil {
		return nil, t.defaultBackend
	}
	path := r.URL.Path
	if path == "" {
		path = "/"
	}
	for _, rt := range g.routes {
		if rt.matches(r, path) {
			return rt, nil
		}
	}
	if g.defaultBackend != nil {
		return nil, g.defaultBackend
	}
	return nil, t.defaultBackend
}
