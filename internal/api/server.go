// Package api is minik's Kubernetes API server: the HTTP handler chain
// (authentication → authorization → admission → storage), discovery, the
// one generic REST implementation that serves every resource descriptor of
// internal/registry, watches and server-side tables.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	"k8s.io/utils/clock"

	"minik/internal/admission"
	"minik/internal/auth"
	"minik/internal/registry"
	"minik/internal/serviceips"
	"minik/internal/storage"
)

// Config configures a Server.
type Config struct {
	// Store is where objects live. Required.
	Store *storage.Store
	// Resources are the served resources; nil means registry.All().
	Resources []*registry.Resource
	// Authenticators are tried in order; the first that recognises a
	// credential decides who the caller is. Required.
	Authenticators []auth.Authenticator
	// Authorizers are asked in order; the first Allow or Deny decides.
	// Required.
	Authorizers []auth.Authorizer
	// AnonymousPaths may be read without credentials, and are served to
	// anyone without authorization (kube's always-allowed health paths).
	AnonymousPaths []string
	// AnonymousAuth makes every request without credentials the user
	// system:anonymous (group system:unauthenticated), authorized like any
	// other, as kube's --anonymous-auth does; otherwise such requests get
	// 401 outside AnonymousPaths.
	AnonymousAuth bool
	// CreateOnly are the create-only virtual resources (access reviews,
	// token reviews); nil means registry.CreateOnly().
	CreateOnly []*registry.Resource
	// Local are read-only resources answered by providers in the process
	// (metrics.k8s.io), as through a local APIService; see local.go.
	Local []LocalResource
	// TokenIssuer signs the tokens of the serviceaccounts/token
	// subresource; nil serves no such subresource.
	TokenIssuer auth.TokenIssuer
	// Audit records every request; nil records nothing.
	Audit *Auditor
	// Trail receives every write once answered (see trail.go); nil
	// records nothing.
	Trail TrailSink
	// Admission is the admission chain; nil means NamespaceLifecycle only.
	Admission *admission.Chain
	// Delegator names the group versions other servers serve (aggregated
	// API servers, see delegation.go); nil delegates none.
	Delegator Delegator
	// Extra serves further non-resource paths (/openapi/..., metrics), keyed
	// by path prefix; requests reach it after authentication and
	// authorization.
	Extra map[string]http.Handler
	// Version is what /version reports. Required.
	Version VersionInfo
	// Clock tells the time; nil means the real clock.
	Clock clock.PassiveClock
	// Logger logs; nil means slog.Default().
	Logger *slog.Logger
	// BookmarkInterval is how often a watch that allows bookmarks gets one;
	// zero means one minute.
	BookmarkInterval time.Duration
	// ServiceClusterIPRange is where Services' cluster IPs come from; the
	// zero prefix means DefaultServiceClusterIPRange.
	ServiceClusterIPRange netip.Prefix
	// ServiceNodePortRange is where node ports come from; the zero range
	// means DefaultServiceNodePortRange.
	ServiceNodePortRange utilnet.PortRange
	// ReadyChecks are /readyz's checks beside the server's own start-up
	// (SetReady): etcd, etcd-watch.
	ReadyChecks []ReadyCheck
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight bound the
	// read-only and the other requests served at once, as kube's
	// --max-requests-inflight and --max-mutating-requests-inflight; zero
	// means no limit. See filters.go.
	MaxRequestsInFlight, MaxMutatingRequestsInFlight int
	// RequestTimeout ends requests that are not long-running, as kube's
	// --request-timeout; zero means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// NoWatchCache serves every get, list and watch from etcd, as kube's
	// --watch-cache=false; otherwise they are served from a watch cache
	// per resource (storage.Cacher).
	NoWatchCache bool
	// WatchCacheSizes are the event rings' sizes by resource, as kube's
	// --watch-cache-sizes; others get storage.CacheConfig's default.
	WatchCacheSizes map[string]int
	// FlowControl, when set, is API Priority and Fairness (kube's
	// k8s.io/apiserver/pkg/util/flowcontrol dispatcher, which package
	// apf builds and runs): it limits requests by priority level instead
	// of MaxRequestsInFlight and MaxMutatingRequestsInFlight, and the
	// responses carry the X-Kubernetes-PF-FlowSchema-UID and
	// X-Kubernetes-PF-PriorityLevel-UID headers. See flowcontrol.go.
	FlowControl utilflowcontrol.Interface
}

// Default service ranges (serviceips'): a loopback block mirroring kube's
// 10.96.0.0/12, so that with the Service proxy every ClusterIP is
// reachable from the host, and kube's node-port range.
const (
	DefaultServiceClusterIPRange = serviceips.DefaultClusterIPRange
	DefaultServiceNodePortRange  = serviceips.DefaultNodePortRange
)

// VersionInfo is the body of /version.
type VersionInfo struct {
	Major          string `json:"major"`
	Minor          string `json:"minor"`
	EmulationMajor string `json:"emulationMajor,omitempty"`
	EmulationMinor string `json:"emulationMinor,omitempty"`
	GitVersion     string `json:"gitVersion"`
	GitCommit      string `json:"gitCommit"`
	GitTreeState   string `json:"gitTreeState"`
	BuildDate      string `json:"buildDate"`
	GoVersion      string `json:"goVersion"`
	Compiler       string `json:"compiler"`
	Platform       string `json:"platform"`
}

// Server serves the Kubernetes API. Build it with New; it is an
// http.Handler.
type Server struct {
	cfg   Config
	store *storage.Store
	// cache serves reads when not nil (see cacheread.go).
	cache *storage.Cacher
	clock clock.PassiveClock
	log   *slog.Logger
	chain *admission.Chain
	// builtin are the routes of the resources the server was built with;
	// routes are those plus the custom resources currently served,
	// replaced as a whole (copy on write) when CustomResourceDefinitions
	// change, so that a request reads them with one atomic load.
	builtin *routeTable
	routes  atomic.Pointer[routeTable]
	// crds serves the custom resources of CustomResourceDefinitions, and
	// crdConverters converts them between versions.
	crds          *crdServer
	crdConverters *conversion.CRConverterFactory
	ready         atomic.Bool
	mux           *http.ServeMux
	// inflight counts the requests being served.
	inflight atomic.Int64
	// limit hands out the in-flight slots.
	limit *inflightLimit
	// flow is API Priority and Fairness (Config.FlowControl), nil
	// without; it replaces limit.
	flow *flowControl
	// stopping is closed by Stop; watches end when it is.
	stopping chan struct{}
	stopOnce sync.Once
	// allocators reserve what objects hold outside their own keys, by
	// resource (the descriptors' NewAllocator).
	allocators map[schema.GroupResource]registry.Allocator
	// apiEndpoint is the address StartServices was given.
	apiEndpoint netip.AddrPort
	// background counts the goroutines StartServices runs; Stop waits.
	background sync.WaitGroup

	// createOnly serves the create-only virtual resources.
	createOnly map[schema.GroupVersionResource]*createOnlyHandler
	// local serves the local resources (Config.Local).
	local map[schema.GroupVersionResource]*localHandler
}

// Stop ends every open watch so that a graceful HTTP shutdown does not wait
// for them, and stops (and waits for) what StartServices runs in the
// background. It is safe to call more than once.
func (s *Server) Stop() {
	s.stopOnce.Do(func() { close(s.stopping) })
	s.background.Wait()
	if s.cache != nil {
		s.cache.Stop()
	}
}

// New validates the configuration and builds a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("api: a store is required")
	}
	if len(cfg.Authenticators) == 0 || len(cfg.Authorizers) == 0 {
		return nil, errors.New("api: authenticators and authorizers are required")
	}
	if cfg.Resources == nil {
		cfg.Resources = registry.All()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.BookmarkInterval == 0 {
		cfg.BookmarkInterval = time.Minute
	}
	if !cfg.ServiceClusterIPRange.IsValid() {
		cfg.ServiceClusterIPRange = netip.MustParsePrefix(DefaultServiceClusterIPRange)
	}
	if cfg.ServiceNodePortRange.Size == 0 {
		if err := cfg.ServiceNodePortRange.Set(DefaultServiceNodePortRange); err != nil {
			return nil, err
		}
	}
	s := &Server{
		cfg:        cfg,
		store:      cfg.Store,
		clock:      cfg.Clock,
		log:        cfg.Logger,
		builtin:    newRouteTable(),
		stopping:   make(chan struct{}),
		limit:      newInflightLimit(cfg.MaxRequestsInFlight, cfg.MaxMutatingRequestsInFlight),
		flow:       flowOf(cfg),
		allocators: map[schema.GroupResource]registry.Allocator{},
	}
	for _, res := range cfg.Resources {
		if res.NewAllocator == nil {
			continue
		}
		a, err := res.NewAllocator(registry.AllocatorConfig{
			Store: cfg.Store, ServiceClusterIPRange: cfg.ServiceClusterIPRange, ServiceNodePortRange: cfg.ServiceNodePortRange,
			Clock: cfg.Clock, Logger: cfg.Logger,
		})
		if err != nil {
			return nil, fmt.Errorf("api: allocator of %s: %w", res.GroupResource(), err)
		}
		s.allocators[res.GroupResource()] = a
	}
	for _, res := range cfg.Resources {
		gvr := res.GroupVersionResource()
		if _, dup := s.builtin.handlers[gvr]; dup {
			return nil, fmt.Errorf("api: resource %s described twice", gvr)
		}
		s.builtin.add(newResourceHandler(s, res), true)
	}
	s.routes.Store(s.builtin)
	var err error
	if !cfg.NoWatchCache {
		if s.cache, err = storage.NewCacher(cfg.Store, storage.CacheConfig{Sizes: cfg.WatchCacheSizes, Logger: cfg.Logger.With("component", "watch-cache")}); err != nil {
			return nil, fmt.Errorf("api: --watch-cache-sizes: %w", err)
		}
	}
	if s.crdConverters, err = newCRDConverters(s); err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	s.crds = newCRDServer(s)
	if cfg.CreateOnly == nil {
		cfg.CreateOnly = registry.CreateOnly()
	}
	if err := s.addCreateOnly(cfg.CreateOnly); err != nil {
		return nil, err
	}
	if err := s.addLocal(cfg.Local); err != nil {
		return nil, err
	}
	s.chain = cfg.Admission
	if s.chain == nil {
		s.chain = &admission.Chain{Validators: []admission.Validator{s.NamespaceLifecycle()}}
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("/healthz", s.serveLive)
	s.mux.HandleFunc("/healthz/", s.serveLiveCheck)
	s.mux.HandleFunc("/livez", s.serveLive)
	s.mux.HandleFunc("/livez/", s.serveLiveCheck)
	s.mux.HandleFunc("/readyz", s.serveReady)
	s.mux.HandleFunc("/readyz/", s.writeReadyzCheck)
	s.mux.HandleFunc("/version", s.serveVersion)
	s.mux.Handle("/metrics", s.metricsHandler())
	for prefix, h := range cfg.Extra {
		if strings.HasPrefix(openAPIV3Prefix, strings.TrimSuffix(prefix, "/")) {
			h = s.withDelegatedOpenAPI(h)
		}
		s.mux.Handle(prefix, h)
	}
	s.mux.HandleFunc("/api", s.serveAPI)
	s.mux.HandleFunc("/api/", s.serveAPI)
	s.mux.HandleFunc("/apis", s.serveAPI)
	s.mux.HandleFunc("/apis/", s.serveAPI)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, errNoResource())
	})
	return s, nil
}

// NamespaceLifecycle returns the NamespaceLifecycle admission plugin
// reading namespaces from this server's storage.
func (s *Server) NamespaceLifecycle() *admission.NamespaceLifecycle {
	return admission.NewNamespaceLifecycle(lazyStore{s, schema.GroupResource{Resource: "namespaces"}})
}

// routeTable is what requests are routed with: the handler of each
// served resource, and the resources discovery lists, by group version in
// discovery order. A table is never changed once stored in
// Server.routes.
type routeTable struct {
	handlers       map[schema.GroupVersionResource]*resourceHandler
	byGroupVersion map[schema.GroupVersion][]*registry.Resource
	groupOrder     []schema.GroupVersion
}

func newRouteTable() *routeTable {
	return &routeTable{
		handlers:       map[schema.GroupVersionResource]*resourceHandler{},
		byGroupVersion: map[schema.GroupVersion][]*registry.Resource{},
	}
}

// add routes requests to h and, when discovered, lists its resource in
// discovery.
func (t *routeTable) add(h *resourceHandler, discovered bool) {
	t.handlers[h.res.GroupVersionResource()] = h
	if !discovered {
		return
	}
	gv := h.res.GroupVersion
	if _, seen := t.byGroupVersion[gv]; !seen {
		t.groupOrder = append(t.groupOrder, gv)
	}
	t.byGroupVersion[gv] = append(t.byGroupVersion[gv], h.res)
}

// clone returns a copy of t that may be changed.
func (t *routeTable) clone() *routeTable {
	c := &routeTable{
		handlers:       make(map[schema.GroupVersionResource]*resourceHandler, len(t.handlers)),
		byGroupVersion: make(map[schema.GroupVersion][]*registry.Resource, len(t.byGroupVersion)),
		groupOrder:     append([]schema.GroupVersion(nil), t.groupOrder...),
	}
	for k, v := range t.handlers {
		c.handlers[k] = v
	}
	for k, v := range t.byGroupVersion {
		c.byGroupVersion[k] = append([]*registry.Resource(nil), v...)
	}
	return c
}

// handler returns the handler of a served resource, or nil.
func (s *Server) handler(gvr schema.GroupVersionResource) *resourceHandler {
	return s.routes.Load().handlers[gvr]
}

// InFlight is the number of requests being served.
func (s *Server) InFlight() int64 { return s.inflight.Load() }

// SetReady marks the server ready: /readyz answers 200 from then on.
func (s *Server) SetReady(ready bool) {
	if ready && !s.ready.Load() {
		prewarmFieldManagement()
	}
	s.ready.Store(ready)
}

// ServeHTTP runs the handler chain: audit, panic recovery,
// authentication, impersonation, authorization, the in-flight limit and
// the request timeout, then the route (whose REST handlers run admission
// and storage).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	start := s.clock.Now()
	// The request's deadline and its wait in a queue count from here, in
	// real time (s.clock may be a test's).
	received := time.Now()
	info := ParseRequestInfo(r)
	trail := s.trailBegin(w, r, info, start)
	if trail != nil {
		defer trail.end()
		w = trail
	}
	// The audit stage wraps the rest of the chain: it sees the user, the
	// decision and the response (also the 500 of a panic).
	audit := s.auditBegin(w, r, info, start)
	if audit != nil {
		defer audit.end()
		w = audit
	}
	rs := &responseState{ResponseWriter: w}
	w = rs
	defer s.observeRequest(rs, r, info, start)
	defer s.recoverPanic(rs, r, audit)
	user, err := s.authenticate(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	public := s.anonymousAllowed(r.URL.Path)
	if user == nil {
		if !public && !s.cfg.AnonymousAuth {
			writeError(w, r, apierrors.NewUnauthorized("Unauthorized"))
			return
		}
		user = auth.Anonymous()
	}
	audit.authenticated(user)
	acting, err := s.impersonate(r.Context(), r, user)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if acting != nil {
		audit.impersonated(acting)
		user = acting
	}
	trail.identify(user)
	// As kube's chain runs its priority and fairness filter inside
	// impersonation and outside authorization, a refused request is
	// limited and classified too.
	authorize := func(r *http.Request) bool {
		if public {
			return true
		}
		allowed, reason, err := s.authorize(r.Context(), user, info)
		audit.authorized(allowed, reason)
		if err != nil {
			writeError(w, r, err)
			return false
		}
		return true
	}
	ctx := auth.WithUser(r.Context(), user)
	if trail != nil || audit != nil {
		ex := &exchange{}
		ctx = withExchange(ctx, ex)
		if trail != nil {
			trail.ex = ex
		}
		if audit != nil {
			audit.ex = ex
		}
	}
	ctx = registry.WithRequest(ctx, registry.Request{Env: serverEnv{s}, Verb: info.Verb})
	s.serveLimited(w, r.WithContext(withRequestInfo(ctx, info)), info, user, received, authorize, s.mux)
	if s.log.Enabled(r.Context(), slog.LevelDebug) {
		s.log.Debug("request", "verb", info.Verb, "path", r.URL.Path, "took", s.clock.Since(start))
	}
}

// flowOf is the server's API Priority and Fairness, nil without
// Config.FlowControl.
func flowOf(cfg Config) *flowControl {
	if cfg.FlowControl == nil {
		return nil
	}
	return newFlowControl(cfg.FlowControl, cfg.RequestTimeout)
}

func (s *Server) authenticate(r *http.Request) (*auth.User, error) {
	for _, a := range s.cfg.Authenticators {
		u, ok, err := a.Authenticate(r)
		if err != nil {
			return nil, apierrors.NewUnauthorized("Unauthorized")
		}
		if ok {
			return u, nil
		}
	}
	return nil, nil
}

func (s *Server) anonymousAllowed(path string) bool {
	for _, p := range s.cfg.AnonymousPaths {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// authorize asks the authorizers, as kube's authorization filter does: an
// Allow wins even beside evaluation errors; otherwise an error is a 500
// and anything else a 403 carrying the authorizers' reasons.
func (s *Server) authorize(ctx context.Context, u *auth.User, info *RequestInfo) (allowed bool, reason string, err error) {
	attrs := auth.Attributes{
		User: u, Verb: info.Verb, IsResource: info.IsResourceRequest,
		APIGroup: info.APIGroup, APIVersion: info.APIVersion, Namespace: info.Namespace,
		Resource: info.Resource, Subresource: info.Subresource, Name: info.Name, Path: info.Path,
		FieldSelector: info.FieldSelector,
	}
	d, reason, err := s.authorizer().Authorize(ctx, attrs)
	if d == auth.Allow {
		return true, reason, nil
	}
	if err != nil {
		return false, reason, apierrors.NewInternalError(fmt.Errorf("authorize %s %s: %w", info.Verb, info.Path, err))
	}
	return false, reason, forbidden(attrs, reason)
}

func forbidden(a auth.Attributes, reason string) error {
	msg := auth.ForbiddenMessage(a)
	if reason != "" {
		msg += ": " + reason
	}
	if !a.IsResource {
		return apierrors.NewForbidden(schema.GroupResource{}, "", errors.New(msg))
	}
	return apierrors.NewForbidden(schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}, a.Name, errors.New(msg))
}

type requestInfoKey struct{}

func withRequestInfo(ctx context.Context, info *RequestInfo) context.Context {
	return context.WithValue(ctx, requestInfoKey{}, info)
}

func requestInfoFrom(ctx context.Context) *RequestInfo {
	info, _ := ctx.Value(requestInfoKey{}).(*RequestInfo)
	return info
}

// serveReady answers /readyz: the server's start-up and Config.ReadyChecks,
// in kube-apiserver's format (see writeReadyz).
func (s *Server) serveReady(w http.ResponseWriter, r *http.Request) {
	s.writeReadyz(w, r)
}
