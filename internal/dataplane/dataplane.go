// Package dataplane is minik's network data plane: the Service proxy,
// which makes every ClusterIP:port (and node port) answer on the host by
// forwarding TCP connections to ready endpoints, the LoadBalancer
// controller giving LoadBalancer Services a loopback address the proxy
// answers on, and the Ingress (and Gateway API) controller with its
// HTTP/HTTPS proxy.
//
// Like every minik component it is a client of the API server with its own
// identity: its configuration is built only from watched Services,
// EndpointSlices, Ingresses, IngressClasses and Secrets (and Gateway API
// objects), never from Pods. An endpoint receives traffic only while its
// EndpointSlice condition ready is true (or unset).
//
// The Ingress proxy reaches a backend Service one of two ways, as the
// issue's seed describes: through the Service's ClusterIP and the Service
// proxy (ModeService) or straight to the Service's ready endpoints read
// from its EndpointSlices (ModeDirect).
package dataplane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Ingress modes: how the Ingress proxy reaches a Service.
const (
	// ModeService sends requests to the Service's ClusterIP, through the
	// Service proxy.
	ModeService = "service"
	// ModeDirect sends requests straight to the Service's ready endpoints.
	ModeDirect = "direct"
)

// Identities of the data plane. The Service proxy is kube-proxy's
// counterpart and has its user name; the Ingress/Gateway controller has
// its own. Both are in GroupDataPlane.
const (
	UserServiceProxy      = "system:kube-proxy"
	UserIngressController = "system:minik:ingress-controller"
)

// Config configures the data plane.
type Config struct {
	// RESTConfig is the client configuration of the Service proxy's
	// identity. Required when ServiceProxy is set.
	RESTConfig *rest.Config
	// IngressRESTConfig is the client configuration of the Ingress/Gateway
	// controller's identity; nil means RESTConfig.
	IngressRESTConfig *rest.Config
	// ServiceProxy runs the Service proxy.
	ServiceProxy bool
	// NodePortAddress is the host address node ports listen on; empty
	// means 127.0.0.1.
	NodePortAddress string
	// IngressHTTP and IngressHTTPS are the Ingress/Gateway proxy's listen
	// addresses; both empty runs no Ingress controller.
	IngressHTTP, IngressHTTPS string
	// IngressMode is ModeService (the default) or ModeDirect.
	IngressMode string
	// Reserved are Service addresses minikd answers on itself (the
	// kube-dns ClusterIP:53 of its DNS server): the Service proxy does not
	// listen there.
	Reserved []netip.AddrPort
	// LoadBalancerPool is where LoadBalancer Services get their address
	// (status.loadBalancer.ingress), the Service proxy answering on it;
	// invalid means none is given (Services stay <pending>). Its network
	// and broadcast addresses and NodePortAddress are never given.
	LoadBalancerPool netip.Prefix
	// NetworkPolicy, when set, is asked before the Service proxy forwards
	// a connection to the endpoint it chose (internal/netpol); the
	// endpoint then sees the client's address.
	NetworkPolicy NetworkPolicy
	// Logger logs; nil means slog.Default().
	Logger *slog.Logger
}

// NetworkPolicy tells whether a connection from src to dst:port over
// proto ("TCP") is let through (netpol.Policies).
type NetworkPolicy interface {
	Allowed(ctx context.Context, src, dst netip.Addr, port int32, proto string) bool
}

// DataPlane is the running data plane.
type DataPlane struct {
	cfg   Config
	log   *slog.Logger
	ready chan struct{}

	client      kubernetes.Interface
	advertiseIP string
	defaultCert *tls.Certificate

	services       corelisters.ServiceLister
	secrets        corelisters.SecretLister
	ingresses      networkinglisters.IngressLister
	ingressClasses networkinglisters.IngressClassLister

	index   *endpointIndex
	sproxy  *serviceProxy
	hproxy  *httpProxy
	gateway *gatewayController
	status  workqueue.TypedRateLimitingInterface[types.NamespacedName]

	// ingressSynced are the Ingress controller's informers.
	ingressSynced []cache.InformerSynced
	// rebuildMu serialises route rebuilds.
	rebuildMu sync.Mutex

	mu        sync.Mutex
	httpAddr  string
	httpsAddr string
}

var labelsEverything = labels.Everything()

// New validates cfg and fills defaults; the flag named in an error is
// minikd's.
func New(cfg Config) (*DataPlane, error) {
	ingress := cfg.IngressHTTP != "" || cfg.IngressHTTPS != ""
	if cfg.IngressRESTConfig == nil {
		cfg.IngressRESTConfig = cfg.RESTConfig
	}
	if cfg.ServiceProxy && cfg.RESTConfig == nil || ingress && cfg.IngressRESTConfig == nil {
		return nil, errors.New("dataplane: a REST config is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.IngressMode == "" {
		cfg.IngressMode = ModeService
	}
	if cfg.IngressMode != ModeService && cfg.IngressMode != ModeDirect {
		return nil, fmt.Errorf("--ingress-mode %q: must be %q or %q", cfg.IngressMode, ModeService, ModeDirect)
	}
	if ingress && cfg.IngressMode == ModeService && !cfg.ServiceProxy {
		return nil, fmt.Errorf("--ingress-mode=%s needs the Service proxy (--service-proxy)", ModeService)
	}
	if cfg.NodePortAddress == "" {
		cfg.NodePortAddress = "127.0.0.1"
	}
	if _, err := netip.ParseAddr(cfg.NodePortAddress); err != nil {
		return nil, fmt.Errorf("node port address %q: %w", cfg.NodePortAddress, err)
	}
	if p := cfg.LoadBalancerPool; p.IsValid() && p.Masked().Addr().IsUnspecified() {
		return nil, fmt.Errorf("load balancer pool %s: not an address range", p)
	}
	d := &DataPlane{cfg: cfg, log: cfg.Logger, ready: make(chan struct{}), advertiseIP: "127.0.0.1"}
	for flag, addr := range map[string]string{"--ingress-http": cfg.IngressHTTP, "--ingress-https": cfg.IngressHTTPS} {
		if addr == "" {
			continue
		}
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", flag, addr, err)
		}
		if ip, err := netip.ParseAddr(host); err == nil && !ip.IsUnspecified() && flag == "--ingress-http" {
			d.advertiseIP = ip.String()
		}
	}
	return d, nil
}

// Ready is closed once the data plane's caches have synced and its
// listeners are open.
func (d *DataPlane) Ready() <-chan struct{} { return d.ready }

// IngressAddrs returns the addresses the Ingress proxy listens on, once
// ready ("" for one that is off).
func (d *DataPlane) IngressAddrs() (httpAddr, httpsAddr string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.httpAddr, d.httpsAddr
}

func clientFor(cfg *rest.Config, agent string) (kubernetes.Interface, error) {
	rc := rest.CopyConfig(cfg)
	rc.UserAgent = agent
	rc.QPS, rc.Burst = 100, 200
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("dataplane: client: %w", err)
	}
	return cs, nil
}

// Start runs the data plane until ctx is done: it opens the Ingress
// listeners (an address that cannot be had is an error), watches the API,
// and serves. On return every listener is closed and every proxied
// connection ended.
func (d *DataPlane) Start(ctx context.Context) error {
	ingress := d.cfg.IngressHTTP != "" || d.cfg.IngressHTTPS != ""
	if !d.cfg.ServiceProxy && !ingress {
		close(d.ready)
		<-ctx.Done()
		return nil
	}
	// The Service proxy and the ingress controller share the endpoint
	// index; they read Services and EndpointSlices through one client.
	watchCfg := d.cfg.RESTConfig
	if !d.cfg.ServiceProxy {
		watchCfg = d.cfg.IngressRESTConfig
	}
	watchClient, err := clientFor(watchCfg, "minik-service-proxy")
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(watchClient, 0)
	svcInf := factory.Core().V1().Services()
	sliceInf := factory.Discovery().V1().EndpointSlices()
	d.services = svcInf.Lister()
	d.index = newEndpointIndex(svcInf.Lister(), sliceInf.Lister())
	synced := []cache.InformerSynced{svcInf.Informer().HasSynced, sliceInf.Informer().HasSynced}

	if d.cfg.ServiceProxy {
		d.sproxy = newServiceProxy(svcInf.Lister(), d.index, netip.MustParseAddr(d.cfg.NodePortAddress), d.log.With("part", "service-proxy"))
		d.sproxy.network = d.cfg.NetworkPolicy
		d.sproxy.reserve(d.cfg.Reserved)
		d.sproxy.start(ctx)
		defer d.sproxy.stop()
	}
	var lb *loadBalancers
	if d.cfg.ServiceProxy && d.cfg.LoadBalancerPool.IsValid() {
		lb = newLoadBalancers(watchClient, svcInf.Lister(), d.cfg.LoadBalancerPool, netip.MustParseAddr(d.cfg.NodePortAddress), d.log.With("part", "service-lb"))
		defer lb.shutDown()
	}
	onService := func(obj interface{}) {
		key, ok := keyOf(obj)
		if !ok {
			return
		}
		d.index.update(key)
		if d.sproxy != nil {
			d.sproxy.sync(key)
		}
		if lb != nil {
			lb.queue.Add(key)
		}
		d.serviceChanged(key)
	}
	if _, err := svcInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onService, UpdateFunc: func(_, o interface{}) { onService(o) }, DeleteFunc: onService,
	}); err != nil {
		return fmt.Errorf("dataplane: watch services: %w", err)
	}
	onSlice := func(obj interface{}) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		s, ok := obj.(*discoveryv1.EndpointSlice)
		if !ok || s.Labels[discoveryv1.LabelServiceName] == "" {
			return
		}
		key := types.NamespacedName{Namespace: s.Namespace, Name: s.Labels[discoveryv1.LabelServiceName]}
		d.index.update(key)
		d.serviceChanged(key)
	}
	if _, err := sliceInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onSlice, UpdateFunc: func(_, o interface{}) { onSlice(o) }, DeleteFunc: onSlice,
	}); err != nil {
		return fmt.Errorf("dataplane: watch endpointslices: %w", err)
	}

	var servers []*http.Server
	var ingFactory informers.SharedInformerFactory
	if ingress {
		if ingFactory, servers, err = d.startIngress(ctx); err != nil {
			return err
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			for _, s := range servers {
				if s.Shutdown(sctx) != nil {
					_ = s.Close()
				}
			}
		}()
		synced = append(synced, d.ingressSynced...)
	}

	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if ingFactory != nil {
		ingFactory.Start(ctx.Done())
		defer ingFactory.Shutdown()
	}
	if d.gateway != nil {
		d.gateway.startInformers(ctx)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil
	}
	if ingress {
		d.rebuild()
		d.ingressSyncDone(ctx)
	}
	close(d.ready)
	d.log.Info("data plane serving", "serviceProxy", d.cfg.ServiceProxy, "ingressHTTP", d.httpAddr, "ingressHTTPS", d.httpsAddr, "ingressMode", d.cfg.IngressMode)
	if d.sproxy != nil {
		go wait.UntilWithContext(ctx, func(context.Context) { d.sproxy.retry() }, time.Second)
	}
	if lb != nil {
		go lb.run(ctx)
	}
	<-ctx.Done()
	return nil
}

// serviceChanged tells the Gateway controller (whose route status
// depends on Services) about a change.
func (d *DataPlane) serviceChanged(key types.NamespacedName) {
	if d.gateway != nil {
		d.gateway.serviceChanged(key)
	}
}

func keyOf(obj interface{}) (types.NamespacedName, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}, true
}

// startIngress opens the Ingress listeners and registers the Ingress
// informers; it returns the informer factory to start and the servers to
// shut down.
func (d *DataPlane) startIngress(ctx context.Context) (informers.SharedInformerFactory, []*http.Server, error) {
	cert, err := selfSigned()
	if err != nil {
		return nil, nil, err
	}
	d.defaultCert = cert
	client, err := clientFor(d.cfg.IngressRESTConfig, "minik-ingress-controller")
	if err != nil {
		return nil, nil, err
	}
	d.client = client
	d.hproxy = newHTTPProxy(d, d.cfg.IngressMode)
	d.hproxy.certs.Store(newCertStore(cert))

	factory := informers.NewSharedInformerFactory(client, 0)
	ingInf := factory.Networking().V1().Ingresses()
	classInf := factory.Networking().V1().IngressClasses()
	secretInf := factory.Core().V1().Secrets()
	d.ingresses, d.ingressClasses, d.secrets = ingInf.Lister(), classInf.Lister(), secretInf.Lister()
	d.ingressSynced = []cache.InformerSynced{ingInf.Informer().HasSynced, classInf.Informer().HasSynced, secretInf.Informer().HasSynced}
	d.status = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
		workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "ingress-status"})
	rebuild := func(interface{}) { d.rebuild() }
	handlers := cache.ResourceEventHandlerFuncs{AddFunc: rebuild, UpdateFunc: func(_, o interface{}) { rebuild(o) }, DeleteFunc: rebuild}
	onIngress := func(obj interface{}) {
		d.rebuild()
		if ing, ok := obj.(*networkingv1.Ingress); ok {
			d.status.Add(types.NamespacedName{Namespace: ing.Namespace, Name: ing.Name})
		}
	}
	for _, reg := range []func() error{
		func() error {
			_, err := ingInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc: onIngress, UpdateFunc: func(_, o interface{}) { onIngress(o) }, DeleteFunc: rebuild,
			})
			return err
		},
		func() error {
			_, err := classInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc: func(interface{}) { d.rebuild(); d.requeueAllStatus() }, UpdateFunc: func(_, _ interface{}) { d.rebuild(); d.requeueAllStatus() }, DeleteFunc: rebuild,
			})
			return err
		},
		func() error { _, err := secretInf.Informer().AddEventHandler(handlers); return err },
	} {
		if err := reg(); err != nil {
			return nil, nil, fmt.Errorf("dataplane: watch ingress objects: %w", err)
		}
	}
	if err := d.setupGateway(ctx, client); err != nil {
		return nil, nil, err
	}

	var servers []*http.Server
	listen := func(addr string, tlsOn bool) error {
		if addr == "" {
			return nil
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			flag := "--ingress-http"
			if tlsOn {
				flag = "--ingress-https"
			}
			return fmt.Errorf("dataplane: %s %s: %w", flag, addr, err)
		}
		srv := &http.Server{
			Handler:           d.hproxy,
			ReadHeaderTimeout: 30 * time.Second,
			ErrorLog:          slog.NewLogLogger(d.log.Handler(), slog.LevelDebug),
		}
		d.mu.Lock()
		if tlsOn {
			d.httpsAddr = ln.Addr().String()
			srv.TLSConfig = &tls.Config{
				MinVersion: tls.VersionTLS12,
				NextProtos: []string{"h2", "http/1.1"},
				GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
					return d.hproxy.certs.Load().get(hello.ServerName), nil
				},
			}
			ln = tls.NewListener(ln, srv.TLSConfig)
		} else {
			d.httpAddr = ln.Addr().String()
		}
		d.mu.Unlock()
		servers = append(servers, srv)
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				d.log.Error("ingress proxy stopped", "address", addr, "err", err)
			}
		}()
		return nil
	}
	if err := listen(d.cfg.IngressHTTP, false); err != nil {
		return nil, nil, err
	}
	if err := listen(d.cfg.IngressHTTPS, true); err != nil {
		for _, s := range servers {
			_ = s.Close()
		}
		return nil, nil, err
	}
	return factory, servers, nil
}

// ingressSyncDone runs, once the caches have synced, what the Ingress
// controller does beside proxying: the IngressClass and the status
// writers.
func (d *DataPlane) ingressSyncDone(ctx context.Context) {
	go func() {
		// The IngressClass is created as soon as the API lets it be.
		_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			if err := d.ensureIngressClass(ctx); err != nil {
				d.log.Warn("ingress class not created; will retry", "err", err)
				return false, nil
			}
			return true, nil
		})
	}()
	go func() {
		<-ctx.Done()
		d.status.ShutDown()
	}()
	go func() {
		for {
			key, quit := d.status.Get()
			if quit {
				return
			}
			if err := d.syncIngressStatus(ctx, key.Namespace, key.Name); err != nil {
				if ctx.Err() == nil {
					d.log.Info("ingress status not written; will retry", "ingress", key, "err", err)
				}
				d.status.AddRateLimited(key)
			} else {
				d.status.Forget(key)
			}
			d.status.Done(key)
		}
	}()
	d.requeueAllStatus()
	if d.gateway != nil {
		d.gateway.run(ctx)
	}
}

// requeueAllStatus queues every Ingress's status (a class changed).
func (d *DataPlane) requeueAllStatus() {
	if d.status == nil || d.ingresses == nil {
		return
	}
	all, _ := d.ingresses.List(labelsEverything)
	for _, ing := range all {
		d.status.Add(types.NamespacedName{Namespace: ing.Namespace, Name: ing.Name})
	}
}

// rebuild recomputes the routes and certificates from the caches.
func (d *DataPlane) rebuild() {
	if d.hproxy == nil || d.ingresses == nil {
		return
	}
	d.rebuildMu.Lock()
	defer d.rebuildMu.Unlock()
	t, certs := d.buildIngressTable()
	if d.gateway != nil {
		gh, gs, gcerts := d.gateway.buildTable()
		d.hproxy.gatewayHTTP.Store(gh)
		d.hproxy.gatewayHTTPS.Store(gs)
		certs.merge(gcerts)
	}
	d.hproxy.ingress.Store(t)
	d.hproxy.certs.Store(certs)
}
