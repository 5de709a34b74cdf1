package dataplane

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apiextensionsinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions"
	apiextensionslisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gatewayinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"
	gatewaylisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"
)

// GatewayController is the controllerName of the GatewayClasses the proxy
// implements.
const GatewayController gatewayv1.GatewayController = "minik.io/gateway-controller"

// GatewayClassName is the GatewayClass minik creates at start.
const GatewayClassName = "minik"

// gatewayController implements the Gateway API on the Ingress proxy:
// Gateways of a minik class are served on the proxy's listeners (an HTTP
// listener on --ingress-http, an HTTPS one on --ingress-https, whatever
// port it names), their HTTPRoutes become routes, and GatewayClasses,
// Gateways and HTTPRoutes get the status conditions conformant
// implementations write (Accepted, Programmed, ResolvedRefs).
//
// The Gateway API is a set of CRDs (minikd installs them at start, a user
// may delete or replace them): the controller watches
// CustomResourceDefinitions and reads the Gateway API objects only while
// the definitions of gatewayClassCRDs are all Established and serve v1.
// It starts its Gateway API informers then (and creates the minik
// GatewayClass), and stops them when one of those definitions goes; in
// between it idles, serving no Gateway route.
type gatewayController struct {
	d       *DataPlane
	client  gatewayclient.Interface
	xclient apiextensionsclient.Interface

	namespaces  corelisters.NamespaceLister
	coreFactory informers.SharedInformerFactory
	crdFactory  apiextensionsinformers.SharedInformerFactory
	crds        apiextensionslisters.CustomResourceDefinitionLister
	synced      []cache.InformerSynced
	// crdChanged wakes the loop that starts and stops the session.
	crdChanged chan struct{}
	// queue holds one key: statuses are recomputed together.
	queue workqueue.TypedRateLimitingInterface[string]

	// mu guards session; view is the synced session's listers, nil while
	// the CRDs are not served.
	mu      sync.Mutex
	session *gatewaySession
	view    atomic.Pointer[gatewayView]
}

// gatewaySession is one run of the Gateway API informers.
type gatewaySession struct {
	cancel  context.CancelFunc
	factory gatewayinformers.SharedInformerFactory
	done    chan struct{}
}

// gatewayView is the controller with the listers of a synced session:
// what the route tables and statuses are computed from.
type gatewayView struct {
	*gatewayController
	classes  gatewaylisters.GatewayClassLister
	gateways gatewaylisters.GatewayLister
	routes   gatewaylisters.HTTPRouteLister
	grants   gatewaylisters.ReferenceGrantLister
}

// gatewayCRDs are the definitions the controller reads, all at v1.
var gatewayCRDs = []string{
	"gatewayclasses.gateway.networking.k8s.io", "gateways.gateway.networking.k8s.io",
	"httproutes.gateway.networking.k8s.io", "referencegrants.gateway.networking.k8s.io",
}

// setupGateway builds the Gateway API controller on the Ingress
// controller's identity.
func (d *DataPlane) setupGateway(_ context.Context, core kubernetes.Interface) error {
	gc, err := gatewayclient.NewForConfig(d.cfg.IngressRESTConfig)
	if err != nil {
		return fmt.Errorf("dataplane: gateway client: %w", err)
	}
	xc, err := apiextensionsclient.NewForConfig(d.cfg.IngressRESTConfig)
	if err != nil {
		return fmt.Errorf("dataplane: apiextensions client: %w", err)
	}
	g := &gatewayController{
		d: d, client: gc, xclient: xc,
		coreFactory: informers.NewSharedInformerFactory(core, 0),
		crdFactory:  apiextensionsinformers.NewSharedInformerFactory(xc, 0),
		crdChanged:  make(chan struct{}, 1),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "gateway-status"}),
	}
	nsInf := g.coreFactory.Core().V1().Namespaces()
	g.namespaces = nsInf.Lister()
	if _, err := nsInf.Informer().AddEventHandler(g.handlers()); err != nil {
		return fmt.Errorf("dataplane: watch namespaces: %w", err)
	}
	crdInf := g.crdFactory.Apiextensions().V1().CustomResourceDefinitions()
	g.crds = crdInf.Lister()
	wake := func(interface{}) {
		select {
		case g.crdChanged <- struct{}{}:
		default:
		}
	}
	if _, err := crdInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: wake, UpdateFunc: func(_, o interface{}) { wake(o) }, DeleteFunc: wake,
	}); err != nil {
		return fmt.Errorf("dataplane: watch customresourcedefinitions: %w", err)
	}
	g.synced = []cache.InformerSynced{nsInf.Informer().HasSynced, crdInf.Informer().HasSynced}
	d.gateway = g
	d.ingressSynced = append(d.ingressSynced, g.synced...)
	return nil
}

// handlers rebuild the routes and requeue the statuses on any change.
func (g *gatewayController) handlers() cache.ResourceEventHandlerFuncs {
	changed := func(interface{}) { g.d.rebuild(); g.queue.Add("all") }
	return cache.ResourceEventHandlerFuncs{
		AddFunc: changed, UpdateFunc: func(_, o interface{}) { changed(o) }, DeleteFunc: changed,
	}
}

// startInformers starts the namespace and CustomResourceDefinition
// informers; the Gateway API's start once their CRDs serve (run).
func (g *gatewayController) startInformers(ctx context.Context) {
	g.coreFactory.Start(ctx.Done())
	g.crdFactory.Start(ctx.Done())
	go func() {
		<-ctx.Done()
		g.coreFactory.Shutdown()
		g.crdFactory.Shutdown()
	}()
}

func (g *gatewayController) serviceChanged(types.NamespacedName) { g.queue.Add("all") }

// crdsServed tells whether every definition the controller reads is
// Established, not terminating, and serves v1.
func (g *gatewayController) crdsServed() bool {
	for _, name := range gatewayCRDs {
		crd, err := g.crds.Get(name)
		if err != nil || crd.DeletionTimestamp != nil ||
			!apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) ||
			apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Terminating) ||
			!apihelpers.HasServedCRDVersion(crd, "v1") {
			return false
		}
	}
	return true
}

// run starts and stops the Gateway API session as the CRDs come and go,
// and writes statuses, until ctx is done; it returns at once.
func (g *gatewayController) run(ctx context.Context) {
	go func() {
		defer g.stopSession(false)
		for {
			if served := g.crdsServed(); served {
				g.startSession(ctx)
			} else {
				g.stopSession(true)
			}
			select {
			case <-ctx.Done():
				return
			case <-g.crdChanged:
			}
		}
	}()
	go func() {
		<-ctx.Done()
		g.queue.ShutDown()
	}()
	go func() {
		for {
			key, quit := g.queue.Get()
			if quit {
				return
			}
			if err := g.syncStatus(ctx); err != nil {
				if ctx.Err() == nil {
					g.d.log.Info("gateway status not written; will retry", "err", err)
				}
				g.queue.AddRateLimited(key)
			} else {
				g.queue.Forget(key)
			}
			g.queue.Done(key)
		}
	}()
	g.queue.Add("all")
}

// startSession starts the Gateway API informers unless they run; once
// they have synced, the view serves and the minik GatewayClass is
// created.
func (g *gatewayController) startSession(ctx context.Context) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.session != nil {
		return
	}
	sctx, cancel := context.WithCancel(ctx)
	factory := gatewayinformers.NewSharedInformerFactory(g.client, 0)
	s := &gatewaySession{cancel: cancel, factory: factory, done: make(chan struct{})}
	g.session = s
	v1 := factory.Gateway().V1()
	view := &gatewayView{gatewayController: g,
		classes: v1.GatewayClasses().Lister(), gateways: v1.Gateways().Lister(),
		routes: v1.HTTPRoutes().Lister(), grants: v1.ReferenceGrants().Lister()}
	var synced []cache.InformerSynced
	for _, inf := range []cache.SharedIndexInformer{v1.GatewayClasses().Informer(), v1.Gateways().Informer(), v1.HTTPRoutes().Informer(), v1.ReferenceGrants().Informer()} {
		// AddEventHandler fails only on a stopped informer; these are new.
		_, _ = inf.AddEventHandler(g.handlers())
		synced = append(synced, inf.HasSynced)
	}
	factory.Start(sctx.Done())
	g.d.log.Info("gateway api served: starting the gateway controller")
	go func() {
		defer close(s.done)
		if !cache.WaitForCacheSync(sctx.Done(), synced...) {
			return
		}
		g.mu.Lock()
		if g.session != s {
			g.mu.Unlock()
			return
		}
		g.view.Store(view)
		g.mu.Unlock()
		g.d.rebuild()
		g.queue.Add("all")
		g.ensureClass(sctx)
	}()
}

// stopSession stops the Gateway API informers, if they run, and drops
// the Gateway routes; idle says the CRDs went (logged), rather than the
// data plane stopping.
func (g *gatewayController) stopSession(idle bool) {
	g.mu.Lock()
	s := g.session
	g.session = nil
	g.view.Store(nil)
	g.mu.Unlock()
	if s == nil {
		return
	}
	s.cancel()
	<-s.done
	s.factory.Shutdown()
	if idle {
		g.d.log.Info("gateway api not served: the gateway controller idles until its CRDs are established")
	}
	g.d.rebuild()
}

// ensureClass creates the minik GatewayClass, retrying until it exists or
// ctx is done.
func (g *gatewayController) ensureClass(ctx context.Context) {
	_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		gc := &gatewayv1.GatewayClass{
			ObjectMeta: metav1.ObjectMeta{Name: GatewayClassName},
			Spec:       gatewayv1.GatewayClassSpec{ControllerName: GatewayController, Description: new("minik's Gateway API implementation: the Ingress proxy")},
		}
		_, err := g.client.GatewayV1().GatewayClasses().Create(ctx, gc, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			if ctx.Err() == nil {
				g.d.log.Warn("gateway class not created; will retry", "err", err)
			}
			return false, nil
		}
		return true, nil
	})
}

// ours tells whether a Gateway's class is implemented here.
func (g *gatewayView) ours(gw *gatewayv1.Gateway) (*gatewayv1.GatewayClass, bool) {
	gc, err := g.classes.Get(string(gw.Spec.GatewayClassName))
	return gc, err == nil && gc.Spec.ControllerName == GatewayController
}

// listenerServed tells whether the proxy serves a listener's protocol.
func listenerServed(l *gatewayv1.Listener) bool {
	return l.Protocol == gatewayv1.HTTPProtocolType || l.Protocol == gatewayv1.HTTPSProtocolType
}

// attachment is the outcome of a route's parentRef against a Gateway.
type attachment struct {
	// listeners are the listeners the route attaches to, with the
	// hostnames it gets on each.
	listeners map[string][]string
	// reason is why it attaches nowhere (a RouteReason), "" when it does.
	reason, message string
}

// attach resolves a parentRef of route against gw.
func (g *gatewayView) attach(route *gatewayv1.HTTPRoute, ref gatewayv1.ParentReference, gw *gatewayv1.Gateway) attachment {
	a := attachment{listeners: map[string][]string{}}
	matchedSection, allowed := false, false
	for i := range gw.Spec.Listeners {
		l := &gw.Spec.Listeners[i]
		if ref.SectionName != nil && *ref.SectionName != l.Name || ref.Port != nil && *ref.Port != l.Port {
			continue
		}
		matchedSection = true
		if !listenerServed(l) || !g.routeAllowed(l, gw, route) {
			continue
		}
		allowed = true
		if hosts, ok := intersectHostnames(l.Hostname, route.Spec.Hostnames); ok {
			a.listeners[string(l.Name)] = hosts
		}
	}
	switch {
	case !matchedSection:
		a.reason, a.message = string(gatewayv1.RouteReasonNoMatchingParent), "No listener matches the parentRef"
	case !allowed:
		a.reason, a.message = string(gatewayv1.RouteReasonNotAllowedByListeners), "No listener of the Gateway allows this route"
	case len(a.listeners) == 0:
		a.reason, a.message = string(gatewayv1.RouteReasonNoMatchingListenerHostname), "No listener hostname matches the route's hostnames"
	}
	return a
}

// routeAllowed applies a listener's allowedRoutes to an HTTPRoute.
func (g *gatewayView) routeAllowed(l *gatewayv1.Listener, gw *gatewayv1.Gateway, route *gatewayv1.HTTPRoute) bool {
	if ar := l.AllowedRoutes; ar != nil && len(ar.Kinds) > 0 {
		ok := false
		for _, k := range ar.Kinds {
			if k.Kind == "HTTPRoute" && (k.Group == nil || *k.Group == gatewayv1.GroupName) {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	from := gatewayv1.NamespacesFromSame
	var sel *metav1.LabelSelector
	if ar := l.AllowedRoutes; ar != nil && ar.Namespaces != nil {
		if ar.Namespaces.From != nil {
			from = *ar.Namespaces.From
		}
		sel = ar.Namespaces.Selector
	}
	switch from {
	case gatewayv1.NamespacesFromAll:
		return true
	case gatewayv1.NamespacesFromSelector:
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil || sel == nil {
			return false
		}
		ns, err := g.namespaces.Get(route.Namespace)
		return err == nil && s.Matches(labels.Set(ns.Labels))
	}
	return route.Namespace == gw.Namespace
}

// intersectHostnames gives the hostnames a route gets on a listener: the
// route's hostnames the listener's hostname admits, narrowed to the
// listener's where the route's is a wider wildcard. ok is false when none
// is left. "" means any host.
func intersectHostnames(listener *gatewayv1.Hostname, routeHosts []gatewayv1.Hostname) ([]string, bool) {
	lh := ""
	if listener != nil {
		lh = strings.ToLower(string(*listener))
	}
	if len(routeHosts) == 0 {
		return []string{lh}, true
	}
	var out []string
	for _, h := range routeHosts {
		rh := strings.ToLower(string(h))
		switch {
		case lh == "" || lh == rh:
			out = append(out, rh)
		case wildcardMatches(lh, rh):
			out = append(out, rh)
		case wildcardMatches(rh, lh):
			out = append(out, lh)
		}
	}
	return out, len(out) > 0
}

// wildcardMatches tells whether pattern "*.example.com" covers host (any
// number of labels in place of the star).
func wildcardMatches(pattern, host string) bool {
	suffix, ok := strings.CutPrefix(pattern, "*")
	return ok && strings.HasSuffix(host, suffix) && len(host) > len(suffix)
}

// parentGateway returns the Gateway a parentRef names, if it is one.
func (g *gatewayView) parentGateway(route *gatewayv1.HTTPRoute, ref gatewayv1.ParentReference) (*gatewayv1.Gateway, bool) {
	if ref.Group != nil && *ref.Group != gatewayv1.GroupName || ref.Kind != nil && *ref.Kind != "Gateway" {
		return nil, false
	}
	ns := route.Namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	gw, err := g.gateways.Gateways(ns).Get(string(ref.Name))
	return gw, err == nil
}

// granted tells whether a ReferenceGrant in toNS lets fromKind objects of
// fromNS refer to the toKind object name.
func (g *gatewayView) granted(fromKind, fromNS, toGroup, toKind, toNS, name string) bool {
	grants, _ := g.grants.ReferenceGrants(toNS).List(labels.Everything())
	for _, rg := range grants {
		from := slices.ContainsFunc(rg.Spec.From, func(f gatewayv1.ReferenceGrantFrom) bool {
			return string(f.Group) == gatewayv1.GroupName && string(f.Kind) == fromKind && string(f.Namespace) == fromNS
		})
		to := slices.ContainsFunc(rg.Spec.To, func(t gatewayv1.ReferenceGrantTo) bool {
			return string(t.Group) == toGroup && string(t.Kind) == toKind && (t.Name == nil || string(*t.Name) == name)
		})
		if from && to {
			return true
		}
	}
	return false
}

// backend resolves an HTTPRoute backendRef; an invalid one is served as a
// 500 (the Gateway API's rule), with the RouteReason for ResolvedRefs.
func (g *gatewayView) backend(route *gatewayv1.HTTPRoute, b *gatewayv1.HTTPBackendRef) (weightedBackend, string, string) {
	w := int32(1)
	if b.Weight != nil {
		w = *b.Weight
	}
	ns := route.Namespace
	if b.Namespace != nil {
		ns = string(*b.Namespace)
	}
	ref := backendRef{namespace: ns, service: string(b.Name), code: 500}
	if b.Port != nil {
		ref.port = *b.Port
	}
	switch {
	case b.Group != nil && *b.Group != "" || b.Kind != nil && *b.Kind != "Service":
		ref.unsupported = fmt.Sprintf("backend kind %v is not supported", b.Kind)
		return weightedBackend{ref, w}, string(gatewayv1.RouteReasonInvalidKind), ref.unsupported
	case ns != route.Namespace && !g.granted("HTTPRoute", route.Namespace, "", "Service", ns, string(b.Name)):
		ref.unsupported = fmt.Sprintf("backend %s/%s is in another namespace and no ReferenceGrant allows it", ns, b.Name)
		return weightedBackend{ref, w}, string(gatewayv1.RouteReasonRefNotPermitted), ref.unsupported
	}
	if _, err := g.d.services.Services(ns).Get(string(b.Name)); err != nil {
		ref.unsupported = fmt.Sprintf("service %s/%s not found", ns, b.Name)
		return weightedBackend{ref, w}, string(gatewayv1.RouteReasonBackendNotFound), ref.unsupported
	}
	return weightedBackend{ref, w}, "", ""
}

// compiledRule is one rule of an HTTPRoute as routes, and why its refs
// do not resolve ("" when they do) or why it is not accepted.
type compiledRule struct {
	routes                    []*route
	refReason, refMessage     string
	unsupported, unsupportMsg string
}

// compile turns an HTTPRoute's rules into routes (without hosts).
func (g *gatewayView) compile(r *gatewayv1.HTTPRoute) []compiledRule {
	out := make([]compiledRule, 0, len(r.Spec.Rules))
	for ri, rule := range r.Spec.Rules {
		var cr compiledRule
		var backends []weightedBackend
		for i := range rule.BackendRefs {
			wb, reason, msg := g.backend(r, &rule.BackendRefs[i])
			backends = append(backends, wb)
			if reason != "" && cr.refReason == "" {
				cr.refReason, cr.refMessage = reason, msg
			}
		}
		if len(backends) == 0 {
			backends = []weightedBackend{{ref: backendRef{unsupported: "the rule has no backendRefs", code: 500}, weight: 1}}
		}
		set, add := map[string]string{}, map[string]string{}
		var remove []string
		for _, f := range rule.Filters {
			if f.Type == gatewayv1.HTTPRouteFilterRequestHeaderModifier && f.RequestHeaderModifier != nil {
				for _, h := range f.RequestHeaderModifier.Set {
					set[string(h.Name)] = h.Value
				}
				for _, h := range f.RequestHeaderModifier.Add {
					add[string(h.Name)] = h.Value
				}
				remove = append(remove, f.RequestHeaderModifier.Remove...)
				continue
			}
			cr.unsupported, cr.unsupportMsg = string(gatewayv1.RouteReasonUnsupportedValue), fmt.Sprintf("filter %s is not supported", f.Type)
		}
		for mi, m := range rule.Matches {
			rt := &route{
				pathType: "Prefix", path: "/", backends: backends,
				setHeaders: set, addHeaders: add, removeHeaders: remove,
				source: "httproute " + r.Namespace + "/" + r.Name, created: r.CreationTimestamp.Time,
				ns: r.Namespace, name: r.Name, order: ri*1000 + mi,
			}
			if m.Path != nil && m.Path.Value != nil {
				rt.path = *m.Path.Value
			}
			if m.Path != nil && m.Path.Type != nil {
				switch *m.Path.Type {
				case gatewayv1.PathMatchExact:
					rt.pathType = "Exact"
				case gatewayv1.PathMatchRegularExpression:
					re, err := regexp.Compile("^(?:" + rt.path + ")$")
					if err != nil {
						continue
					}
					rt.pathType, rt.pathRE = "RegularExpression", re
				}
			}
			if m.Method != nil {
				rt.method = string(*m.Method)
			}
			for _, h := range m.Headers {
				hm := headerMatch{name: string(h.Name), value: h.Value}
				if h.Type != nil && *h.Type == gatewayv1.HeaderMatchRegularExpression {
					hm.re, _ = regexp.Compile(h.Value)
				}
				rt.headers = append(rt.headers, hm)
			}
			for _, q := range m.QueryParams {
				qm := headerMatch{name: string(q.Name), value: q.Value}
				if q.Type != nil && *q.Type == gatewayv1.QueryParamMatchRegularExpression {
					qm.re, _ = regexp.Compile(q.Value)
				}
				rt.query = append(rt.query, qm)
			}
			cr.routes = append(cr.routes, rt)
		}
		out = append(out, cr)
	}
	return out
}

// gatewayOrder is the Gateway API's precedence among matching rules: an
// Exact path, then the longest prefix, then a method match, then the most
// header matches, then the most query matches; ties go to the oldest
// route, then by namespace/name, then by rule order.
func gatewayOrder(a, b *route) int {
	rank := func(r *route) int {
		switch r.pathType {
		case "Exact":
			return 0
		case "RegularExpression":
			return 2
		}
		return 1
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(len(b.path), len(a.path)),
		cmp.Compare(boolRank(a.method != ""), boolRank(b.method != "")),
		cmp.Compare(len(b.headers), len(a.headers)), cmp.Compare(len(b.query), len(a.query)),
		a.created.Compare(b.created), cmp.Compare(a.ns, b.ns), cmp.Compare(a.name, b.name), cmp.Compare(a.order, b.order))
}

func boolRank(b bool) int {
	if b {
		return 0
	}
	return 1
}

// buildTable builds the routes of the HTTP and HTTPS listeners of every
// minik Gateway, and the HTTPS listeners' certificates.
func (g *gatewayController) buildTable() (httpT, httpsT *routeTable, certs *certStore) {
	httpT, httpsT, certs = newRouteTable(true), newRouteTable(true), newCertStore(nil)
	if v := g.view.Load(); v != nil {
		v.buildTable(httpT, httpsT, certs)
	}
	return httpT, httpsT, certs
}

// buildTable adds the view's routes and certificates to the tables.
func (g *gatewayView) buildTable(httpT, httpsT *routeTable, certs *certStore) {
	gws, _ := g.gateways.List(labels.Everything())
	routes, _ := g.routes.List(labels.Everything())
	slices.SortFunc(gws, func(a, b *gatewayv1.Gateway) int {
		return cmp.Or(a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name))
	})
	compiled := map[types.UID][]compiledRule{}
	for _, gw := range gws {
		if _, ok := g.ours(gw); !ok {
			continue
		}
		for i := range gw.Spec.Listeners {
			l := &gw.Spec.Listeners[i]
			if l.Protocol != gatewayv1.HTTPSProtocolType || l.TLS == nil {
				continue
			}
			if cert, _, _ := g.listenerCert(gw, l); cert != nil {
				var hosts []string
				if l.Hostname != nil {
					hosts = []string{string(*l.Hostname)}
				}
				certs.add(hosts, cert)
			}
		}
		for _, r := range routes {
			for _, ref := range r.Spec.ParentRefs {
				if pgw, ok := g.parentGateway(r, ref); !ok || pgw.UID != gw.UID {
					continue
				}
				a := g.attach(r, ref, gw)
				if _, ok := compiled[r.UID]; !ok {
					compiled[r.UID] = g.compile(r)
				}
				for lname, hosts := range a.listeners {
					l := listenerByName(gw, lname)
					t := httpT
					if l.Protocol == gatewayv1.HTTPSProtocolType {
						t = httpsT
					}
					for _, cr := range compiled[r.UID] {
						if cr.unsupported != "" {
							continue
						}
						for _, h := range hosts {
							grp := t.hostGroup(h)
							grp.routes = append(grp.routes, cr.routes...)
						}
					}
				}
			}
		}
	}
	httpT.sort(gatewayOrder)
	httpsT.sort(gatewayOrder)
	// A route attached through two parentRefs appears twice; the first
	// copy serves.
	for _, t := range []*routeTable{httpT, httpsT} {
		t.dedupe()
	}
}

func listenerByName(gw *gatewayv1.Gateway, name string) *gatewayv1.Listener {
	for i := range gw.Spec.Listeners {
		if string(gw.Spec.Listeners[i].Name) == name {
			return &gw.Spec.Listeners[i]
		}
	}
	return nil
}

// listenerCert loads an HTTPS listener's first certificateRef, or says
// why it cannot (a ListenerReason).
func (g *gatewayView) listenerCert(gw *gatewayv1.Gateway, l *gatewayv1.Listener) (*tls.Certificate, string, string) {
	if len(l.TLS.CertificateRefs) == 0 {
		return nil, string(gatewayv1.ListenerReasonInvalidCertificateRef), "no certificateRefs"
	}
	ref := l.TLS.CertificateRefs[0]
	if ref.Group != nil && *ref.Group != "" || ref.Kind != nil && *ref.Kind != "Secret" {
		return nil, string(gatewayv1.ListenerReasonInvalidCertificateRef), "only Secrets are supported as certificateRefs"
	}
	ns := gw.Namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	if ns != gw.Namespace && !g.granted("Gateway", gw.Namespace, "", "Secret", ns, string(ref.Name)) {
		return nil, string(gatewayv1.ListenerReasonRefNotPermitted), fmt.Sprintf("secret %s/%s is in another namespace and no ReferenceGrant allows it", ns, ref.Name)
	}
	cert, err := g.d.secretCert(ns, string(ref.Name))
	if err != nil {
		return nil, string(gatewayv1.ListenerReasonInvalidCertificateRef), err.Error()
	}
	return cert, "", ""
}

// condition builds a condition at a generation.
func condition(t string, ok bool, reason, msg string, gen int64) metav1.Condition {
	st := metav1.ConditionTrue
	if !ok {
		st = metav1.ConditionFalse
	}
	return metav1.Condition{Type: t, Status: st, Reason: reason, Message: msg, ObservedGeneration: gen}
}

// setConditions sets conds on a list, keeping the transition time of
// conditions whose status did not change.
func setConditions(list *[]metav1.Condition, conds ...metav1.Condition) {
	for _, c := range conds {
		meta.SetStatusCondition(list, c)
	}
}

// syncStatus writes the status of minik's GatewayClasses, Gateways and
// the HTTPRoutes attached to them.
func (g *gatewayController) syncStatus(ctx context.Context) error {
	if v := g.view.Load(); v != nil {
		return v.syncStatus(ctx)
	}
	return nil
}

// syncStatus writes the statuses from the view's listers.
func (g *gatewayView) syncStatus(ctx context.Context) error {
	api := g.client.GatewayV1()
	classes, _ := g.classes.List(labels.Everything())
	for _, gc := range classes {
		if gc.Spec.ControllerName != GatewayController {
			continue
		}
		next := gc.DeepCopy()
		setConditions(&next.Status.Conditions, condition(string(gatewayv1.GatewayClassConditionStatusAccepted), true,
			string(gatewayv1.GatewayClassReasonAccepted), "Handled by minik's gateway controller", gc.Generation))
		if !equality.Semantic.DeepEqual(next.Status, gc.Status) {
			if _, err := api.GatewayClasses().UpdateStatus(ctx, next, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("update gatewayclass %s status: %w", gc.Name, err)
			}
		}
	}
	gws, _ := g.gateways.List(labels.Everything())
	routes, _ := g.routes.List(labels.Everything())
	for _, gw := range gws {
		if _, ok := g.ours(gw); !ok {
			continue
		}
		if err := g.gatewayStatus(ctx, gw, routes); err != nil {
			return err
		}
	}
	for _, r := range routes {
		if err := g.routeStatus(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

func (g *gatewayView) gatewayStatus(ctx context.Context, gw *gatewayv1.Gateway, routes []*gatewayv1.HTTPRoute) error {
	next := gw.DeepCopy()
	attached := map[string]int32{}
	for _, r := range routes {
		for _, ref := range r.Spec.ParentRefs {
			if pgw, ok := g.parentGateway(r, ref); ok && pgw.UID == gw.UID {
				for l := range g.attach(r, ref, gw).listeners {
					attached[l]++
				}
			}
		}
	}
	gen := gw.Generation
	var listeners []gatewayv1.ListenerStatus
	valid := 0
	for i := range gw.Spec.Listeners {
		l := &gw.Spec.Listeners[i]
		var old []metav1.Condition
		for _, ls := range gw.Status.Listeners {
			if ls.Name == l.Name {
				old = slices.Clone(ls.Conditions)
			}
		}
		ls := gatewayv1.ListenerStatus{Name: l.Name, AttachedRoutes: attached[string(l.Name)], Conditions: old,
			SupportedKinds: []gatewayv1.RouteGroupKind{}}
		conflict := condition(string(gatewayv1.ListenerConditionConflicted), false, string(gatewayv1.ListenerReasonNoConflicts), "No conflicts", gen)
		if !listenerServed(l) {
			setConditions(&ls.Conditions,
				condition(string(gatewayv1.ListenerConditionAccepted), false, string(gatewayv1.ListenerReasonUnsupportedProtocol), fmt.Sprintf("protocol %s is not supported", l.Protocol), gen),
				condition(string(gatewayv1.ListenerConditionProgrammed), false, string(gatewayv1.ListenerReasonInvalid), "The listener is not served", gen),
				condition(string(gatewayv1.ListenerConditionResolvedRefs), true, string(gatewayv1.ListenerReasonResolvedRefs), "Resolved", gen), conflict)
			listeners = append(listeners, ls)
			continue
		}
		ls.SupportedKinds = []gatewayv1.RouteGroupKind{{Group: new(gatewayv1.Group(gatewayv1.GroupName)), Kind: "HTTPRoute"}}
		refsOK, refReason, refMsg := true, string(gatewayv1.ListenerReasonResolvedRefs), "All references resolved"
		if l.Protocol == gatewayv1.HTTPSProtocolType && l.TLS != nil {
			if _, reason, msg := g.listenerCert(gw, l); reason != "" {
				refsOK, refReason, refMsg = false, reason, msg
			}
		}
		programmed := refsOK
		pReason := string(gatewayv1.ListenerReasonProgrammed)
		if !programmed {
			pReason = string(gatewayv1.ListenerReasonInvalid)
		}
		setConditions(&ls.Conditions,
			condition(string(gatewayv1.ListenerConditionAccepted), true, string(gatewayv1.ListenerReasonAccepted), "Listener accepted", gen),
			condition(string(gatewayv1.ListenerConditionProgrammed), programmed, pReason, "Served by the minik ingress proxy", gen),
			condition(string(gatewayv1.ListenerConditionResolvedRefs), refsOK, refReason, refMsg, gen), conflict)
		listeners = append(listeners, ls)
		if programmed {
			valid++
		}
	}
	next.Status.Listeners = listeners
	next.Status.Addresses = []gatewayv1.GatewayStatusAddress{{Type: new(gatewayv1.IPAddressType), Value: g.d.advertiseIP}}
	accepted, aReason, aMsg := true, string(gatewayv1.GatewayReasonAccepted), "Gateway accepted"
	programmed, pReason, pMsg := true, string(gatewayv1.GatewayReasonProgrammed), "Served by the minik ingress proxy"
	if valid == 0 {
		accepted, aReason, aMsg = false, string(gatewayv1.GatewayReasonListenersNotValid), "No listener is valid"
		programmed, pReason, pMsg = false, string(gatewayv1.GatewayReasonInvalid), "No listener is valid"
	}
	setConditions(&next.Status.Conditions,
		condition(string(gatewayv1.GatewayConditionAccepted), accepted, aReason, aMsg, gen),
		condition(string(gatewayv1.GatewayConditionProgrammed), programmed, pReason, pMsg, gen))
	if equality.Semantic.DeepEqual(next.Status, gw.Status) {
		return nil
	}
	if _, err := g.client.GatewayV1().Gateways(gw.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("update gateway %s/%s status: %w", gw.Namespace, gw.Name, err)
	}
	return nil
}

func (g *gatewayView) routeStatus(ctx context.Context, r *gatewayv1.HTTPRoute) error {
	next := r.DeepCopy()
	// Entries of other controllers stay; this controller's are rewritten.
	var parents []gatewayv1.RouteParentStatus
	old := map[string][]metav1.Condition{}
	for _, p := range r.Status.Parents {
		if p.ControllerName != GatewayController {
			parents = append(parents, p)
			continue
		}
		old[parentKey(r, p.ParentRef)] = p.Conditions
	}
	compiled := g.compile(r)
	refsOK, refReason, refMsg := true, string(gatewayv1.RouteReasonResolvedRefs), "All references resolved"
	unsupported, unsupportedMsg := "", ""
	for _, cr := range compiled {
		if cr.refReason != "" && refsOK {
			refsOK, refReason, refMsg = false, cr.refReason, cr.refMessage
		}
		if cr.unsupported != "" && unsupported == "" {
			unsupported, unsupportedMsg = cr.unsupported, cr.unsupportMsg
		}
	}
	gen := r.Generation
	for _, ref := range r.Spec.ParentRefs {
		gw, ok := g.parentGateway(r, ref)
		if !ok {
			continue
		}
		if _, ours := g.ours(gw); !ours {
			continue
		}
		a := g.attach(r, ref, gw)
		accepted, reason, msg := a.reason == "", a.reason, a.message
		if accepted && unsupported != "" {
			accepted, reason, msg = false, unsupported, unsupportedMsg
		}
		if accepted {
			reason, msg = string(gatewayv1.RouteReasonAccepted), "Route accepted"
		}
		conds := old[parentKey(r, ref)]
		setConditions(&conds,
			condition(string(gatewayv1.RouteConditionAccepted), accepted, reason, msg, gen),
			condition(string(gatewayv1.RouteConditionResolvedRefs), refsOK, refReason, refMsg, gen))
		parents = append(parents, gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: GatewayController, Conditions: conds})
	}
	next.Status.Parents = parents
	if equality.Semantic.DeepEqual(next.Status, r.Status) || len(parents) == 0 && len(r.Status.Parents) == 0 {
		return nil
	}
	if next.Status.Parents == nil {
		next.Status.Parents = []gatewayv1.RouteParentStatus{}
	}
	if _, err := g.client.GatewayV1().HTTPRoutes(r.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("update httproute %s/%s status: %w", r.Namespace, r.Name, err)
	}
	return nil
}

// parentKey identifies a parentRef.
func parentKey(r *gatewayv1.HTTPRoute, ref gatewayv1.ParentReference) string {
	ns := r.Namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	s := ""
	if ref.SectionName != nil {
		s = string(*ref.SectionName)
	}
	return ns + "/" + string(ref.Name) + "/" + s
}
