// Package server is minikd's supervisor: it starts the components in
// order (etcd, then the API server, then — as later issues add them —
// controllers, scheduler, nodes and data plane), reports readiness, and
// stops them in reverse order.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"minik/internal/admission"
	"minik/internal/admission/plugins"
	"minik/internal/api"
	"minik/internal/auth"
	"minik/internal/clusterdns"
	"minik/internal/controllers/persistentvolume"
	"minik/internal/etcd"
	"minik/internal/leaderelect"
	"minik/internal/metricsapi"
	"minik/internal/nodeagent"
	"minik/internal/openapi"
	"minik/internal/pki"
	"minik/internal/registry"
	"minik/internal/storage"
	"minik/internal/trail"
	"minik/internal/version"
)

// Config configures minikd.
type Config struct {
	// DataDir holds etcd's data, the PKI and the kubeconfig. Required.
	DataDir string
	// Listen is the API server's address; port 0 picks a free port. Empty
	// means 127.0.0.1:6443, or under AutoNetwork the slot's host address
	// on 6443 while that is free (else a free port).
	Listen string
	// AutoNetwork places the cluster on the host beside any others (see
	// cluster.go): it claims a slot for the data dir and derives from it
	// what is left empty of Listen, ServiceClusterIPRange,
	// NodePortAddress, IngressHTTP and IngressHTTPS (NoAddress turns an
	// Ingress listener off). minikd's flags set it.
	AutoNetwork bool
	// SlotsDir is where AutoNetwork claims slots; empty means
	// DefaultSlotsDir().
	SlotsDir string
	// ClusterName names the cluster in the kubeconfig (its cluster and
	// context; the user is <name>-admin). Empty means "minik", or under
	// AutoNetwork the name the data dir was first given ("minik" for slot
	// 0, "minik-<slot>" for the others).
	ClusterName string
	// KubeconfigMerge adds the admin kubeconfig to the user's default one
	// (KUBECONFIG, else ~/.kube/config) as its current context once the
	// API serves, and removes it on a clean stop, as kind does.
	KubeconfigMerge bool
	// NodePortAddress is the host address node ports listen on; empty
	// means 127.0.0.1 (the slot's host address under AutoNetwork).
	NodePortAddress string
	// EtcdServers are an external etcd cluster's client URLs; empty starts
	// the embedded member.
	EtcdServers []string
	// Out receives the one line telling how to use the cluster; nil means
	// nowhere.
	Out io.Writer
	// Logger logs; nil means slog.Default().
	Logger *slog.Logger
	// Controllers selects controllers as kube-controller-manager's
	// --controllers does; empty means all.
	Controllers []string
	// NoControllers runs no controller at all (tests of the API alone).
	NoControllers bool
	// NoScheduler runs no scheduler (tests that bind pods themselves or
	// look at Pending pods).
	NoScheduler bool
	// ControllerWorkers is each controller's worker count; zero means 5.
	ControllerWorkers int
	// ControllerQPS and ControllerBurst bound each controller's API client;
	// zero means the manager's defaults (controllers.DefaultQPS and
	// DefaultBurst).
	ControllerQPS   float32
	ControllerBurst int
	// LeaderElect runs the controllers, the scheduler, and the nodes with
	// the data plane each only in the minikd holding their Lease
	// (kube-controller-manager, kube-scheduler, minik-nodes), for several
	// minikd sharing one etcd.
	LeaderElect bool
	// LeaderElection is the elections' timing (kube's
	// --leader-elect-lease-duration, -renew-deadline, -retry-period);
	// zero fields mean kube's defaults.
	LeaderElection leaderelect.Timing
	// ShutdownTimeout bounds the wait for in-flight requests on stop.
	// Zero means 10 seconds.
	ShutdownTimeout time.Duration
	// Nodes is how many simulated nodes run (minik-node-1 …); zero runs
	// none. minikd's --nodes defaults to 3.
	Nodes int
	// NodeConfig is a file of Node templates the nodes take their labels,
	// taints, capacity and nodeInfo from (see nodeagent.LoadNodeTemplates).
	NodeConfig string
	// ImagePolicy is the simulated registry's: "catalog" (the default:
	// known repositories pull only their known tags, others pull fine) or
	// "strict" (only the catalog pulls).
	ImagePolicy string
	// SimulationSpeed divides the nodes' simulated durations (pulls,
	// back-offs, probe periods, sleeps in scripts); zero means 1.
	SimulationSpeed float64
	// NodeTiming, when set, is the nodes' whole timing (tests); it
	// replaces SimulationSpeed.
	NodeTiming *nodeagent.Timing
	// KubeletPort is the port of the nodes' endpoints; zero means 10250.
	KubeletPort int
	// TokenAuthFile is a static token file in kube's CSV format
	// (token,user,uid,"group1,group2"), as --token-auth-file.
	TokenAuthFile string
	// AnonymousAuth makes requests without credentials system:anonymous,
	// authorized by RBAC, as kube's --anonymous-auth; otherwise they get
	// 401 except on /healthz, /livez, /readyz and /version.
	AnonymousAuth bool
	// AuditPolicyFile is an audit.k8s.io/v1 Policy; empty records every
	// request at Metadata in <data-dir>/audit.log.
	AuditPolicyFile string
	// AuthorizationMode is "Node,RBAC" (the default when empty) or
	// "AlwaysAllow" (every authenticated request is allowed: for
	// benchmarks of the chain's cost), as kube's --authorization-mode.
	AuthorizationMode string
	// ServiceClusterIPRange is the CIDR Services' cluster IPs come from;
	// empty means api.DefaultServiceClusterIPRange (127.96.0.0/12).
	ServiceClusterIPRange string
	// ServiceNodePortRange is the range node ports come from ("30000-32767",
	// the default when empty).
	ServiceNodePortRange string
	// ServiceProxy runs the Service data plane: a proxy on every ClusterIP
	// and node port.
	ServiceProxy bool
	// IngressHTTP and IngressHTTPS are the Ingress/Gateway proxy's
	// addresses; both empty runs no Ingress/Gateway controller.
	IngressHTTP, IngressHTTPS string
	// DisableAdmissionPlugins turns admission plugins off by name, as
	// kube-apiserver's --disable-admission-plugins (see
	// plugins.Names()).
	DisableAdmissionPlugins []string
	// IngressMode is how the Ingress/Gateway proxy reaches a Service:
	// "service" (its ClusterIP, through the Service proxy; the default) or
	// "direct" (straight to its ready endpoints).
	IngressMode string
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight bound the
	// read-only and the mutating requests served at once, as kube's
	// --max-requests-inflight and --max-mutating-requests-inflight (one
	// more gets 429; watches, logs and system:masters are spared). Zero
	// means kube's defaults, 400 and 200; negative means no limit.
	MaxRequestsInFlight, MaxMutatingRequestsInFlight int
	// RequestTimeout ends a request that is not long-running with 504, as
	// kube's --request-timeout; zero means one minute.
	RequestTimeout time.Duration
	// ClusterDNS is the kube-dns Service's ClusterIP, the nameserver the
	// nodes give pods (the kubelet's --cluster-dns); empty means the
	// Service range's tenth address, kubeadm's choice.
	ClusterDNS string
	// ClusterDomain is the cluster's DNS domain (the kubelet's
	// --cluster-domain); empty means cluster.local.
	ClusterDomain string
	// DNSListen is where minikd's DNS server answers, UDP and TCP: DNSAuto
	// (the kube-dns ClusterIP on port 53), host:port (port 0: a free
	// one), or empty or NoAddress for no DNS server.
	DNSListen string
	// DNSForward is a resolv.conf whose nameservers get the queries for
	// names outside the cluster domain (CoreDNS's `forward .
	// /etc/resolv.conf`); empty refuses them.
	DNSForward string
	// ResolvConf is the nodes' resolver file, the base of the pods'
	// resolv.conf (the kubelet's --resolv-conf); empty means none.
	ResolvConf string
	// LoadBalancerPool is the CIDR LoadBalancer Services get their
	// address from; empty means the /24 of the node port address (under
	// AutoNetwork the slot's 127.0.<slot>.0/24, whose .1 is the host
	// address), NoAddress none.
	LoadBalancerPool string
	// NoWatchCache and WatchCacheSizes are api.Config's (kube's
	// --watch-cache=false and --watch-cache-sizes).
	NoWatchCache    bool
	WatchCacheSizes map[string]int
}

// The in-flight limits' defaults, kube-apiserver's.
const (
	DefaultMaxRequestsInFlight         = 400
	DefaultMaxMutatingRequestsInFlight = 200
)

// Server is a running (or startable) minikd.
type Server struct {
	cfg   Config
	log   *slog.Logger
	ready chan struct{}

	mu         sync.Mutex
	addr       string
	restConfig *rest.Config
	etcd       *clientv3.Client

	// files are the parsed token file and audit policy.
	files authFiles

	// slot is the cluster's slot on the host, and listenAuto the address
	// the API listens on when AutoNetwork chose it (see cluster.go).
	slot       int
	listenAuto string

	// serviceIPs and nodePorts are the parsed service ranges.
	serviceIPs netip.Prefix
	nodePorts  utilnet.PortRange

	// metrics answers metrics.k8s.io in the API server; it runs as a
	// component (components.go).
	metrics *metricsapi.Provider
	// trail records the API server's writes (internal/trail); its
	// flusher outlives the API server.
	trail *trail.Trail
	// dnsIP is the kube-dns Service's ClusterIP.
	dnsIP netip.Addr
}

// Etcd returns the client of the etcd minikd stores in, once ready; tests
// use it to compact history.
func (s *Server) Etcd() *clientv3.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.etcd
}

// New validates cfg, fills defaults and returns a Server ready to Start.
func New(cfg Config) (*Server, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("--data-dir is required")
	}
	if cfg.Listen == "" && !cfg.AutoNetwork {
		cfg.Listen = "127.0.0.1:6443"
	}
	if cfg.Listen != "" {
		if _, _, err := net.SplitHostPort(cfg.Listen); err != nil {
			return nil, fmt.Errorf("--listen %q: %w", cfg.Listen, err)
		}
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	if cfg.MaxRequestsInFlight == 0 {
		cfg.MaxRequestsInFlight = DefaultMaxRequestsInFlight
	}
	if cfg.MaxMutatingRequestsInFlight == 0 {
		cfg.MaxMutatingRequestsInFlight = DefaultMaxMutatingRequestsInFlight
	}
	if cfg.RequestTimeout < 0 {
		return nil, fmt.Errorf("--request-timeout %v: must not be negative", cfg.RequestTimeout)
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = api.DefaultRequestTimeout
	}
	abs, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("--data-dir %q: %w", cfg.DataDir, err)
	}
	cfg.DataDir = abs
	if err := cfg.LeaderElection.Validate(); err != nil {
		return nil, fmt.Errorf("--leader-elect-*: %w", err)
	}
	if cfg.ServiceClusterIPRange == "" && !cfg.AutoNetwork {
		cfg.ServiceClusterIPRange = api.DefaultServiceClusterIPRange
	}
	if cfg.ServiceNodePortRange == "" {
		cfg.ServiceNodePortRange = api.DefaultServiceNodePortRange
	}
	if cfg.ClusterName == "" && !cfg.AutoNetwork {
		cfg.ClusterName = defaultClusterName(0)
	}
	if cfg.ClusterDomain == "" {
		cfg.ClusterDomain = clusterdns.DefaultDomain
	}
	s := &Server{cfg: cfg, log: cfg.Logger, ready: make(chan struct{})}
	if s.files, err = loadAuthFiles(cfg); err != nil {
		return nil, err
	}
	if err := s.parseServiceRange(); err != nil {
		return nil, err
	}
	if s.serviceIPs.IsValid() {
		if err := s.placeDNS(); err != nil {
			return nil, err
		}
	}
	if err := s.nodePorts.Set(cfg.ServiceNodePortRange); err != nil {
		return nil, fmt.Errorf("--service-node-port-range %q: %w", cfg.ServiceNodePortRange, err)
	}
	return s, nil
}

// Ready is closed once the API serves and the kubeconfig is written.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Addr is the address the API server listens on, once ready.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// KubeconfigPath is the admin kubeconfig's path.
func (s *Server) KubeconfigPath() string {
	return filepath.Join(s.cfg.DataDir, "kubeconfig")
}

// RESTConfig is the admin's client configuration, once ready.
func (s *Server) RESTConfig() *rest.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return rest.CopyConfig(s.restConfig)
}

// Start runs minikd until ctx is done, then stops it: the API server stops
// accepting, finishes in-flight requests and ends watches; etcd stops
// last. It returns nil after a clean stop.
func (s *Server) Start(ctx context.Context) error {
	if err := os.MkdirAll(s.cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data dir %s: %w", s.cfg.DataDir, err)
	}
	lock, err := lockDataDir(s.cfg.DataDir)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := s.place(); err != nil {
		return err
	}
	if err := s.placeDNS(); err != nil {
		return err
	}
	// etcd starts while the certificates are made and loaded: neither needs
	// the other. An error before etcd is taken below still closes it.
	type etcdStarted struct {
		db  *etcd.Etcd
		err error
	}
	dbc := make(chan etcdStarted, 1)
	go func() {
		db, err := etcd.Start(ctx, etcd.Config{DataDir: s.cfg.DataDir, Servers: s.cfg.EtcdServers})
		dbc <- etcdStarted{db, err}
	}()
	etcdTaken := false
	defer func() {
		if !etcdTaken {
			if r := <-dbc; r.db != nil {
				r.db.Close()
			}
		}
	}()
	pkiDir := filepath.Join(s.cfg.DataDir, "pki")
	ca, err := pki.LoadOrCreateCA(pkiDir)
	if err != nil {
		return err
	}
	ln, err := s.listen()
	if err != nil {
		return err
	}
	defer ln.Close()
	addr := ln.Addr().String()
	host, _, _ := net.SplitHostPort(addr)
	hosts := []string{"127.0.0.1", "localhost", "::1"}
	if host != "" && host != "127.0.0.1" && host != "::" && host != "0.0.0.0" {
		hosts = append(hosts, host)
	}
	serving, err := ca.LoadOrCreateServing(pkiDir, "apiserver", hosts)
	if err != nil {
		return err
	}
	admin, err := ca.LoadOrCreateClient(pkiDir, "admin", "minik-admin", []string{auth.GroupMasters})
	if err != nil {
		return err
	}
	servingCert, err := serving.TLS()
	if err != nil {
		return fmt.Errorf("load serving certificate: %w", err)
	}

	started := <-dbc
	etcdTaken = true
	if started.err != nil {
		return started.err
	}
	db := started.db
	defer db.Close()
	store := storage.New(db.Client)
	// The watch monitor tells /readyz whether watches still deliver (and
	// etcd still takes writes); it stops before etcd does.
	monitor := store.NewWatchMonitor(storage.WatchMonitorConfig{Logger: s.log.With("component", "etcd-watch")})
	monCtx, stopMonitor := context.WithCancel(context.Background())
	monDone := make(chan struct{})
	go func() { defer close(monDone); _ = monitor.Start(monCtx) }()
	defer func() { stopMonitor(); <-monDone }()

	resources := registry.All()
	if s.metrics, err = metricsapi.New(metricsapi.Config{Logger: s.log.With("component", "metrics-server")}); err != nil {
		return err
	}
	metricsNodes, metricsPods := metricsapi.Descriptors()
	if s.trail, err = trail.New(trail.Config{Dir: filepath.Join(s.cfg.DataDir, "trail"), Logger: s.log.With("component", "trail")}); err != nil {
		return err
	}
	// The trail's flusher stops after the API server, so that its last
	// writes reach the disk.
	trailCtx, stopTrail := context.WithCancel(context.Background())
	trailDone := make(chan struct{})
	go func() { defer close(trailDone); _ = s.trail.Start(trailCtx) }()
	defer func() { stopTrail(); <-trailDone }()
	oapi, err := openapi.NewHandler(append(resources[:len(resources):len(resources)], metricsNodes, metricsPods, trail.Descriptor()), api.Scheme)
	if err != nil {
		return fmt.Errorf("build openapi: %w", err)
	}
	stack, err := s.newAuthStack(ca, pkiDir, "https://"+addr)
	if err != nil {
		return err
	}
	defer stack.close()
	defer stack.stop()
	// The admission chain is filled once the server exists: its
	// NamespaceLifecycle reads the server's storage, and the RBAC
	// escalation check and NodeRestriction run after ServiceAccount.
	chain := &admission.Chain{}
	apiServer, err := api.New(api.Config{
		Store:          store,
		Resources:      resources,
		Authenticators: stack.authenticators,
		Authorizers:    stack.authorizers,
		AnonymousPaths: []string{"/healthz", "/livez", "/readyz", "/version"},
		AnonymousAuth:  s.cfg.AnonymousAuth,
		TokenIssuer:    stack.issuer,
		Local:          append(s.metrics.Resources(), s.trail.Resources()...),
		Audit:          stack.audit,
		Trail:          s.trail,
		Admission:      chain,
		Extra:          map[string]http.Handler{"/openapi/": oapi},
		Version:        version.Info(),
		Logger:         s.log,
		ReadyChecks: []api.ReadyCheck{
			{Name: "etcd", Check: monitor.CheckEtcd},
			{Name: "etcd-watch", Check: monitor.CheckWatch},
		},

		ServiceClusterIPRange: s.serviceIPs,
		ServiceNodePortRange:  s.nodePorts,

		MaxRequestsInFlight:         max(s.cfg.MaxRequestsInFlight, 0),
		MaxMutatingRequestsInFlight: max(s.cfg.MaxMutatingRequestsInFlight, 0),
		RequestTimeout:              s.cfg.RequestTimeout,
		NoWatchCache:                s.cfg.NoWatchCache,
		WatchCacheSizes:             s.cfg.WatchCacheSizes,
	})
	if err != nil {
		return err
	}
	// The full chain, in kube's order, reading its configuration through a
	// loopback client; its informers start once the API serves.
	loopback, err := ca.LoadOrCreateClient(pkiDir, "apiserver-loopback", auth.UserAPIServer, []string{auth.GroupMasters})
	if err != nil {
		return fmt.Errorf("loopback credential: %w", err)
	}
	adm, err := plugins.New(plugins.Config{
		RESTConfig: &rest.Config{
			Host:            "https://" + addr,
			TLSClientConfig: rest.TLSClientConfig{CAData: ca.CertPEM, CertData: loopback.CertPEM, KeyData: loopback.KeyPEM},
		},
		Resources:          resources,
		Disabled:           s.cfg.DisableAdmissionPlugins,
		NamespaceLifecycle: apiServer.NamespaceLifecycle(),
		Validators:         stack.validators,
		Authorizer:         auth.Union(stack.authorizers),
		Logger:             s.log.With("component", "admission"),
	})
	if err != nil {
		return err
	}
	*chain = *adm.Chain()
	// What the API server runs in the background stops before etcd does.
	defer apiServer.Stop()
	srv := &http.Server{
		Handler: admission.WithWarnings(apiServer),
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{servingCert},
			// Requested, verified by the authenticator: a bad certificate
			// is a 401, as kube-apiserver answers, not a TLS alert.
			ClientAuth: tls.RequestClientCert,
			ClientCAs:  ca.Pool(),
			MinVersion: tls.VersionTLS12,
			NextProtos: []string{"h2", "http/1.1"},
		},
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.ServeTLS(ln, "", "") }()
	admCtx, stopAdm := context.WithCancel(ctx)
	admDone := make(chan struct{})
	go func() { defer close(admDone); _ = adm.Start(admCtx) }()
	// Admission informers stop before the API server does.
	stopAdmission := func() { stopAdm(); <-admDone }
	defer stopAdmission()
	if !adm.WaitForCacheSync(ctx, 30*time.Second) {
		_ = srv.Close()
		return fmt.Errorf("admission informers did not sync")
	}

	restCfg := &rest.Config{
		Host:            "https://" + addr,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca.CertPEM, CertData: admin.CertPEM, KeyData: admin.KeyPEM},
		QPS:             -1,
	}
	if err := bootstrap(ctx, restCfg, s.dnsIP); err != nil {
		_ = srv.Close()
		return err
	}
	if err := stack.start(ctx, restCfg); err != nil {
		_ = srv.Close()
		return err
	}
	if err := apiServer.StartServices(ctx, addr); err != nil {
		_ = srv.Close()
		return err
	}
	// The kubeconfig appears, then /readyz turns 200: a script waiting for
	// either finds a cluster that serves.
	if err := writeKubeconfig(s.KubeconfigPath(), s.cfg.ClusterName, "https://"+addr, ca.CertPEM, admin); err != nil {
		_ = srv.Close()
		return err
	}
	if s.cfg.KubeconfigMerge {
		unmerge, err := mergeKubeconfig(adminKubeconfig(s.cfg.ClusterName, "https://"+addr, ca.CertPEM, admin))
		if err != nil {
			_ = srv.Close()
			return err
		}
		defer func() {
			if err := unmerge(); err != nil {
				s.log.Error("kubeconfig not unmerged", "err", err)
			}
		}()
	}
	apiServer.SetReady(true)

	comps, err := s.components(ca, pkiDir, restCfg)
	if err != nil {
		_ = srv.Close()
		return err
	}
	compCtx, stopComps := context.WithCancel(ctx)
	defer stopComps()
	compsDone := make(chan struct{})
	go func() { defer close(compsDone); runAll(compCtx, comps, s.log) }()
	s.mu.Lock()
	s.addr, s.restConfig, s.etcd = addr, restCfg, db.Client
	s.mu.Unlock()
	fmt.Fprintf(s.cfg.Out, "minikd serving on https://%s; to use it: export KUBECONFIG=%s\n", addr, s.KubeconfigPath())
	if s.cfg.AutoNetwork {
		s.printPlace()
	}
	close(s.ready)

	select {
	case <-ctx.Done():
	case err := <-serveErr:
		return fmt.Errorf("serve https://%s: %w", addr, err)
	}
	// Components stop first, while the API still serves their last writes.
	stopComps()
	<-compsDone
	stack.stop()
	stopAdmission()
	apiServer.SetReady(false)
	apiServer.Stop()
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	shut := make(chan struct{})
	go func() {
		defer close(shut)
		_ = srv.Shutdown(sctx)
	}()
	// Shutdown stops accepting at once but lets idle HTTP/2 clients take a
	// second to leave; once no request is in flight there is nothing to
	// wait for.
	for tick := time.NewTicker(5 * time.Millisecond); ; {
		select {
		case <-shut:
			tick.Stop()
			return nil
		case <-sctx.Done():
			tick.Stop()
			_ = srv.Close()
			return nil
		case <-tick.C:
			if apiServer.InFlight() == 0 {
				tick.Stop()
				_ = srv.Close()
				<-shut
				return nil
			}
		}
	}
}

// systemNamespaces exist in every cluster.
var systemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// bootstrap creates what every cluster has, through the API like any
// client, and returns when the API answers: the system namespaces and
// PriorityClasses, the default StorageClass, the kube-dns Service at
// dnsIP.
func bootstrap(ctx context.Context, cfg *rest.Config, dnsIP netip.Addr) error {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("bootstrap client: %w", err)
	}
	// An idle HTTP/2 connection would hold a graceful shutdown for a second.
	defer hc.CloseIdleConnections()
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return fmt.Errorf("bootstrap client: %w", err)
	}
	for _, name := range systemNamespaces {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("bootstrap namespace %s: %w", name, err)
		}
	}
	// The system PriorityClasses, as kube-apiserver's
	// scheduling/bootstrap-system-priority-classes hook: created when
	// missing, left as they are otherwise.
	for _, pc := range registry.SystemPriorityClasses() {
		_, err := cs.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("bootstrap priorityclass %s: %w", pc.Name, err)
		}
	}
	// The default StorageClass, as kind's and minikube's addons install
	// theirs: created when missing, left as it is otherwise (one deleted
	// comes back at the next start).
	sc := persistentvolume.StandardClass()
	if _, err := cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("bootstrap storageclass %s: %w", sc.Name, err)
	}
	// kube-dns, as kubeadm's CoreDNS add-on has it: created when missing.
	return clusterdns.EnsureService(ctx, cs, dnsIP)
}

// writeKubeconfig writes the admin kubeconfig (mode 0600) atomically.
func writeKubeconfig(path, name, server string, caPEM []byte, admin pki.KeyPair) error {
	data, err := clientcmd.Write(*adminKubeconfig(name, server, caPEM, admin))
	if err != nil {
		return fmt.Errorf("encode kubeconfig: %w", err)
	}
	return pki.WriteFileAtomic(path, data, 0o600)
}

// adminKubeconfig is the admin's kubeconfig: its cluster and context are
// named name, its user name-admin.
func adminKubeconfig(name, server string, caPEM []byte, admin pki.KeyPair) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[name+"-admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: admin.CertPEM, ClientKeyData: admin.KeyPEM}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name + "-admin", Namespace: "default"}
	cfg.CurrentContext = name
	return cfg
}

// DefaultDataDir is ~/.minik, or .minik in the working directory when
// there is no home.
func DefaultDataDir() string {
	home, err := os.UserHomeDir()
	if err != nil || strings.TrimSpace(home) == "" {
		return ".minik"
	}
	return filepath.Join(home, ".minik")
}

// The OpenAPI handler, mounted among api.Config.Extra, is told the custom
// resources as they are established: api.New registers it as an observer.
var _ api.CustomResourceObserver = (*openapi.Handler)(nil)
