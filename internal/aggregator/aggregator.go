// Package aggregator is minikd's kube-aggregator: it keeps a local
// APIService for every group version the API server serves (built-in and
// custom resources', as kube's autoregister and crdregistration
// controllers keep them), checks the availability of the APIServices that
// name a Service (kube's availability controller, with its reasons and
// messages), and proxies their group versions to the Service's endpoints
// (kube's --enable-aggregator-routing=true) over TLS with minikd's
// front-proxy client certificate, naming the caller in X-Remote-User,
// X-Remote-Group and X-Remote-Extra-* headers. It hands the API server
// (internal/api) the delegated group versions with the discovery each
// extension API server last answered.
package aggregator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apiextensionsinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions"
	apiextensionslisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	apiregistrationclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset/typed/apiregistration/v1"
	aggregatorinformers "k8s.io/kube-aggregator/pkg/client/informers/externalversions"
	apiregistrationlisters "k8s.io/kube-aggregator/pkg/client/listers/apiregistration/v1"

	"minik/internal/api"
	"minik/internal/syncwait"
)

// Kube's timings, the defaults of Config's.
const (
	// DefaultDialTimeout and DefaultTLSHandshakeTimeout bound the
	// connection to an extension API server, as kube-apiserver's proxy
	// dialer and client-go's transport defaults do.
	DefaultDialTimeout         = 30 * time.Second
	DefaultTLSHandshakeTimeout = 10 * time.Second
	// DefaultDiscoveryTimeout bounds the availability check's discovery
	// request, a proxied discovery request and the discovery fetch.
	DefaultDiscoveryTimeout = 5 * time.Second
	// DefaultResponseHeaderTimeout bounds the wait for an extension's
	// response headers (kube's request timeout).
	DefaultResponseHeaderTimeout = 60 * time.Second
	// DefaultResync is how often each APIService with a Service is checked
	// again and its discovery read again.
	DefaultResync = 30 * time.Second
)

// workers5 is how many APIServices are checked at once, as kube's
// availability controller's five workers.
const workers5 = 5

// maxDiscoveryBody bounds an extension's discovery document.
const maxDiscoveryBody = 8 << 20

// Config configures an Aggregator.
type Config struct {
	// FrontProxy is the client certificate presented to extension API
	// servers (front-proxy-client, signed by the front-proxy CA).
	FrontProxy tls.Certificate
	// Logger logs; nil means slog.Default().
	Logger *slog.Logger
	// DialTimeout, TLSHandshakeTimeout, ResponseHeaderTimeout,
	// DiscoveryTimeout and Resync: zero means the Default* constants.
	DialTimeout, TLSHandshakeTimeout, ResponseHeaderTimeout, DiscoveryTimeout, Resync time.Duration
}

// Aggregator serves APIServices. Build it with New, hand it to the API
// server as its api.Delegator, and Run it once the API serves.
type Aggregator struct {
	cfg     Config
	log     *slog.Logger
	current atomic.Pointer[api.Delegation]

	mu sync.Mutex
	// remotes are the APIServices with a Service, by name.
	remotes map[string]*remote

	// Set by Run.
	client      apiregistrationclient.APIServicesGetter
	apiServices apiregistrationlisters.APIServiceLister
	services    corelisters.ServiceLister
	slices      discoverylisters.EndpointSliceLister
	crds        apiextensionslisters.CustomResourceDefinitionLister
	queue       workqueue.TypedRateLimitingInterface[string]
	auto        *autoRegister
	// started holds auto once Run has set the fields above; completed
	// is set once every static APIService has been seen Available.
	started   atomic.Pointer[autoRegister]
	completed atomic.Bool
}

// New builds an Aggregator that delegates nothing until it runs.
func New(cfg Config) *Aggregator {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.TLSHandshakeTimeout == 0 {
		cfg.TLSHandshakeTimeout = DefaultTLSHandshakeTimeout
	}
	if cfg.ResponseHeaderTimeout == 0 {
		cfg.ResponseHeaderTimeout = DefaultResponseHeaderTimeout
	}
	if cfg.DiscoveryTimeout == 0 {
		cfg.DiscoveryTimeout = DefaultDiscoveryTimeout
	}
	if cfg.Resync == 0 {
		cfg.Resync = DefaultResync
	}
	a := &Aggregator{cfg: cfg, log: cfg.Logger, remotes: map[string]*remote{}}
	a.current.Store(&api.Delegation{})
	return a
}

// Delegation is the group versions extension API servers serve now.
func (a *Aggregator) Delegation() *api.Delegation { return a.current.Load() }

// autoKey is the queue key of the autoregistration pass (no APIService
// has an empty name).
const autoKey = ""

// Run keeps the local APIServices of served (the API server's own group
// versions) and of the custom resources, and serves the others, through
// a client of the API at rc, until ctx is done. It returns once its
// informers have synced and its first pass has run, with the rest running
// in the background until ctx is done; done is closed then.
func (a *Aggregator) Run(ctx context.Context, rc *rest.Config, served []schema.GroupVersion) (done <-chan struct{}, err error) {
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("aggregator client: %w", err)
	}
	ac, err := aggregatorclient.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("aggregator client: %w", err)
	}
	xc, err := apiextensionsclient.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("aggregator client: %w", err)
	}
	core := informers.NewSharedInformerFactory(cs, 0)
	agg := aggregatorinformers.NewSharedInformerFactory(ac, 0)
	ext := apiextensionsinformers.NewSharedInformerFactory(xc, 0)
	asInformer := agg.Apiregistration().V1().APIServices()
	svcInformer := core.Core().V1().Services()
	sliceInformer := core.Discovery().V1().EndpointSlices()
	crdInformer := ext.Apiextensions().V1().CustomResourceDefinitions()
	a.client = ac.ApiregistrationV1()
	a.apiServices = asInformer.Lister()
	a.services = svcInformer.Lister()
	a.slices = sliceInformer.Lister()
	a.crds = crdInformer.Lister()
	a.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 30*time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "aggregator"})
	a.auto = newAutoRegister(a, served)

	onAPIService := func(obj any) {
		if as, ok := tombstone[*apiregistrationv1.APIService](obj); ok {
			a.queue.Add(as.Name)
			a.queue.Add(autoKey)
		}
	}
	handlers := []struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandler
	}{
		{asInformer.Informer(), cache.ResourceEventHandlerFuncs{AddFunc: onAPIService, UpdateFunc: func(_, o any) { onAPIService(o) }, DeleteFunc: onAPIService}},
		{svcInformer.Informer(), eventsFor(func(obj any) {
			if s, ok := tombstone[*corev1.Service](obj); ok {
				a.enqueueFor(s.Namespace, s.Name)
			}
		})},
		{sliceInformer.Informer(), eventsFor(func(obj any) {
			if s, ok := tombstone[*discoveryv1.EndpointSlice](obj); ok && s.Labels[discoveryv1.LabelServiceName] != "" {
				a.enqueueFor(s.Namespace, s.Labels[discoveryv1.LabelServiceName])
			}
		})},
		{crdInformer.Informer(), eventsFor(func(obj any) {
			if _, ok := tombstone[*apiextensionsv1.CustomResourceDefinition](obj); ok {
				a.queue.Add(autoKey)
			}
		})},
	}
	var synced []cache.InformerSynced
	for _, h := range handlers {
		reg, err := h.inf.AddEventHandler(h.h)
		if err != nil {
			return nil, fmt.Errorf("aggregator informers: %w", err)
		}
		synced = append(synced, reg.HasSynced)
	}
	ictx, cancel := context.WithCancel(ctx)
	core.Start(ictx.Done())
	agg.Start(ictx.Done())
	ext.Start(ictx.Done())
	stop := func() {
		a.queue.ShutDown()
		cancel()
		core.Shutdown()
		agg.Shutdown()
		ext.Shutdown()
	}
	sctx, sdone := context.WithTimeout(ctx, 30*time.Second)
	defer sdone()
	if !syncwait.Synced(sctx, synced...) {
		stop()
		return nil, errors.New("aggregator informers did not sync")
	}
	a.started.Store(a.auto)
	a.auto.atStart()
	if err := a.auto.sync(ctx); err != nil {
		a.log.Warn("autoregister APIServices", "err", err)
		a.queue.AddRateLimited(autoKey)
	}
	finished := make(chan struct{})
	var workers sync.WaitGroup
	for range workers5 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for a.next(ictx) {
			}
		}()
	}
	go func() {
		<-ctx.Done()
		stop()
		workers.Wait()
		a.mu.Lock()
		for name, r := range a.remotes {
			r.close()
			delete(a.remotes, name)
		}
		a.mu.Unlock()
		close(finished)
	}()
	return finished, nil
}

func eventsFor(f func(any)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{AddFunc: f, UpdateFunc: func(_, o any) { f(o) }, DeleteFunc: f}
}

// tombstone returns obj (or the object of a deletion tombstone) as a T.
func tombstone[T any](obj any) (T, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	t, ok := obj.(T)
	return t, ok
}

// AutoregisterCompletion is kube-apiserver's autoregister-completion
// readiness check: ready once every APIService the server registers for
// its own group versions has been seen Available, and from then on.
func (a *Aggregator) AutoregisterCompletion(context.Context) error {
	if a.completed.Load() {
		return nil
	}
	ar := a.started.Load()
	if ar == nil {
		return errors.New("missing APIService: the aggregator has not started")
	}
	var missing []string
	for name := range ar.static {
		as, err := a.apiServices.Get(name)
		if err != nil || condition(as) == nil || condition(as).Status != apiregistrationv1.ConditionTrue {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("missing APIService: %v", missing)
	}
	a.completed.Store(true)
	return nil
}

// enqueueFor queues the APIServices naming Service namespace/name.
func (a *Aggregator) enqueueFor(namespace, name string) {
	list, err := a.apiServices.List(labels.Everything())
	if err != nil {
		return
	}
	for _, as := range list {
		if s := as.Spec.Service; s != nil && s.Namespace == namespace && s.Name == name {
			a.queue.Add(as.Name)
		}
	}
}

// next handles one key; false once the queue shuts down.
func (a *Aggregator) next(ctx context.Context) bool {
	key, quit := a.queue.Get()
	if quit {
		return false
	}
	defer a.queue.Done(key)
	var err error
	if key == autoKey {
		err = a.auto.sync(ctx)
	} else {
		err = a.sync(ctx, key)
	}
	if err != nil && ctx.Err() == nil {
		a.log.Debug("aggregator sync failed", "key", key, "err", err)
		a.queue.AddRateLimited(key)
		return true
	}
	a.queue.Forget(key)
	return true
}

// sync brings one APIService's status, proxy and discovery up to date.
func (a *Aggregator) sync(ctx context.Context, name string) error {
	as, err := a.apiServices.Get(name)
	if err != nil {
		a.forget(name)
		return nil
	}
	if as.Spec.Service == nil {
		a.forget(name)
		return a.ensureLocalAvailable(ctx, as)
	}
	r, err := a.remoteFor(as)
	if err != nil {
		return fmt.Errorf("apiservice %s: %w", name, err)
	}
	cond, checkErr := a.check(ctx, as, r)
	r.available.Store(cond.Status == apiregistrationv1.ConditionTrue)
	if err := a.setAvailable(ctx, as, cond); err != nil {
		return fmt.Errorf("apiservice %s: %w", name, err)
	}
	resources, discErr := a.fetchDiscovery(ctx, r)
	a.mu.Lock()
	r.resources, r.stale = resources, discErr != nil
	a.publishLocked()
	a.mu.Unlock()
	if discErr != nil && checkErr == nil {
		a.log.Debug("discovery of an extension API server failed", "apiservice", name, "err", discErr)
	}
	a.queue.AddAfter(name, a.cfg.Resync)
	return checkErr
}

// forget stops delegating an APIService's group version.
func (a *Aggregator) forget(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r, ok := a.remotes[name]; ok {
		r.close()
		delete(a.remotes, name)
		a.publishLocked()
	}
}

// publishLocked stores the delegation of the current remotes (but the
// core and apiregistration.k8s.io groups), ordered as
// kube's aggregator orders discovery: groups by their highest group
// priority minimum, then name; a group's versions by version priority,
// then kube's version order.
func (a *Aggregator) publishLocked() {
	rs := make([]*remote, 0, len(a.remotes))
	groupPriority := map[string]int32{}
	for _, r := range a.remotes {
		if r.gv.Group == "" || r.gv.Group == aggregatorGroup {
			// The legacy core group and the aggregator's own are
			// always served here: an APIService cannot take them over
			// (nor lock its own API out).
			continue
		}
		rs = append(rs, r)
		if p := r.spec.GroupPriorityMinimum; p > groupPriority[r.gv.Group] {
			groupPriority[r.gv.Group] = p
		}
	}
	sort.Slice(rs, func(i, j int) bool {
		x, y := rs[i], rs[j]
		if x.gv.Group != y.gv.Group {
			if px, py := groupPriority[x.gv.Group], groupPriority[y.gv.Group]; px != py {
				return px > py
			}
			return x.gv.Group < y.gv.Group
		}
		if x.spec.VersionPriority != y.spec.VersionPriority {
			return x.spec.VersionPriority > y.spec.VersionPriority
		}
		return version.CompareKubeAwareVersionStrings(x.gv.Version, y.gv.Version) > 0
	})
	d := &api.Delegation{}
	for _, r := range rs {
		d.Versions = append(d.Versions, api.DelegatedVersion{GroupVersion: r.gv, Handler: r.handler, Resources: r.resources, Stale: r.stale})
	}
	a.current.Store(d)
}

// setAvailable writes the Available condition when it changed, keeping
// its last transition time unless its status changed.
func (a *Aggregator) setAvailable(ctx context.Context, as *apiregistrationv1.APIService, cond apiregistrationv1.APIServiceCondition) error {
	next := as.DeepCopy()
	setCondition(next, cond)
	if equalStatus(as.Status, next.Status) {
		return nil
	}
	if old := condition(as); old == nil || old.Status != cond.Status {
		a.log.Info("changing APIService availability", "name", as.Name, "status", cond.Status, "reason", cond.Reason, "message", cond.Message)
	}
	_, err := a.client.APIServices().UpdateStatus(ctx, next, metav1.UpdateOptions{})
	return err
}

// condition returns the Available condition, or nil.
func condition(as *apiregistrationv1.APIService) *apiregistrationv1.APIServiceCondition {
	for i := range as.Status.Conditions {
		if as.Status.Conditions[i].Type == apiregistrationv1.Available {
			return &as.Status.Conditions[i]
		}
	}
	return nil
}

// setCondition is kube-aggregator's SetAPIServiceCondition: the
// condition replaces the one of its type, keeping the last transition
// time while the status stays.
func setCondition(as *apiregistrationv1.APIService, c apiregistrationv1.APIServiceCondition) {
	old := condition(as)
	if old == nil {
		as.Status.Conditions = append(as.Status.Conditions, c)
		return
	}
	if old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
	}
	*old = c
}

func equalStatus(a, b apiregistrationv1.APIServiceStatus) bool {
	if len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		x, y := a.Conditions[i], b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message || !x.LastTransitionTime.Equal(&y.LastTransitionTime) {
			return false
		}
	}
	return true
}

// remote is one APIService that names a Service.
type remote struct {
	name string
	gv   schema.GroupVersion
	// spec is what the transports were built from.
	spec apiregistrationv1.APIServiceSpec
	// transport serves requests (HTTP/2 when the server offers it),
	// upgrade the upgrade requests (HTTP/1.1); both nil when they could
	// not be built (buildErr: a caBundle that does not parse).
	transport, upgrade *http.Transport
	buildErr           error
	available          atomic.Bool
	handler            *proxyHandler
	// resources and stale are the last discovery read (under the
	// Aggregator's mu).
	resources []metav1.APIResource
	stale     bool
}

func (r *remote) close() {
	if r.transport != nil {
		r.transport.CloseIdleConnections()
		r.upgrade.CloseIdleConnections()
	}
}

// remoteFor returns the remote of an APIService, building its transports
// again when its spec changed; the error is their building's (the remote
// is served then, answering 500 with it, as kube's proxy does).
func (a *Aggregator) remoteFor(as *apiregistrationv1.APIService) (*remote, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r, ok := a.remotes[as.Name]; ok && specEqual(r.spec, as.Spec) {
		return r, r.buildErr
	}
	r := &remote{name: as.Name, gv: schema.GroupVersion{Group: as.Spec.Group, Version: as.Spec.Version}, spec: *as.Spec.DeepCopy(), stale: true}
	if r.transport, r.buildErr = a.newTransport(as, true); r.buildErr == nil {
		r.upgrade, r.buildErr = a.newTransport(as, false)
	}
	if r.buildErr != nil {
		r.transport, r.upgrade = nil, nil
	}
	r.handler = &proxyHandler{a: a, r: r}
	if old, ok := a.remotes[as.Name]; ok {
		r.available.Store(old.available.Load())
		r.resources, r.stale = old.resources, old.stale
		old.close()
	} else if c := condition(as); c != nil {
		r.available.Store(c.Status == apiregistrationv1.ConditionTrue)
	}
	a.remotes[as.Name] = r
	a.publishLocked()
	return r, r.buildErr
}

func specEqual(a, b apiregistrationv1.APIServiceSpec) bool {
	sa, sb := a.Service, b.Service
	if (sa == nil) != (sb == nil) || sa != nil && (sa.Namespace != sb.Namespace || sa.Name != sb.Name || port(sa) != port(sb)) {
		return false
	}
	return a.Group == b.Group && a.Version == b.Version && a.InsecureSkipTLSVerify == b.InsecureSkipTLSVerify &&
		string(a.CABundle) == string(b.CABundle) && a.GroupPriorityMinimum == b.GroupPriorityMinimum && a.VersionPriority == b.VersionPriority
}

// port is a service reference's port, 443 unless set.
func port(s *apiregistrationv1.ServiceReference) int32 {
	if s.Port == nil {
		return 443
	}
	return *s.Port
}
