// Package server is minikd's supervisor. Start runs the parts of a
// cluster as one declared, ordered list (see Server.Start and supervise):
// the data dir's lock, etcd, the API server with its admission,
// authentication and authorization, the bootstrap objects and the
// kubeconfig, then the API's clients — controller manager, scheduler,
// metrics-server, simulated nodes, cluster DNS and the data plane — each
// started once the one before is ready; it stops them in reverse order,
// etcd last. It also places the cluster on the host beside others
// (cluster.go) and mints user kubeconfigs (kubeconfig.go).
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
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

	"minik/internal/admission/plugins"
	"minik/internal/aggregator"
	"minik/internal/apf"
	"minik/internal/api"
	"minik/internal/clusterdns"
	"minik/internal/controllers/persistentvolume"
	"minik/internal/etcd"
	"minik/internal/leaderelect"
	"minik/internal/metricsapi"
	"minik/internal/netpol"
	"minik/internal/nodeagent"
	"minik/internal/openapi"
	"minik/internal/pki"
	"minik/internal/registry"
	"minik/internal/storage"
	"minik/internal/trail"
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
	// NoServiceAccountCredentials runs every controller as
	// system:kube-controller-manager (granted the union of the controllers'
	// roles) instead of as its own ServiceAccount
	// kube-system/<controller>-controller, which kubeadm's
	// --use-service-account-credentials=true (minikd's default) asks for.
	NoServiceAccountCredentials bool
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
	// NodeFirstBlock is the address block the nodes' search for free
	// blocks starts from (nodeagent.Config.FirstBlock); zero means 1.
	NodeFirstBlock int
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
	// DRADevices is how many devices each node's simulated DRA driver
	// (gpu.minik.io) publishes; zero runs no driver. minikd's
	// --dra-devices defaults to 2.
	DRADevices int
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
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight are kube's
	// --max-requests-inflight and --max-mutating-requests-inflight: their
	// sum is the seats API Priority and Fairness shares among the
	// priority levels (package apf). Zero means kube's defaults, 400 and
	// 200; negative counts for none of the sum, and both negative for no
	// limit (apf.Unlimited).
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
	// /etc/resolv.conf`); empty or NoAddress refuses them.
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
	// health answers ComponentStatuses (componentstatus.go).
	health componentHealth

	// What the parts of Start make for the parts after them: each is set
	// before its part is ready, and read only by later parts (see
	// supervise).
	store   *storage.Store
	etcdDB  *etcd.Etcd
	monitor *storage.WatchMonitor
	pkiDir  string
	ca      *pki.CA
	admin   pki.KeyPair
	// frontProxyCA signs frontProxyClient, the certificate minikd
	// presents to the extension API servers it proxies to.
	frontProxyCA     *pki.CA
	frontProxyClient pki.KeyPair
	apiAddr          string
	apiServer        *api.Server
	aggregator       *aggregator.Aggregator
	admission        *plugins.Admission
	auth             *authStack
	// adminConfig is the admin's client configuration.
	adminConfig *rest.Config
	// apf keeps the API Priority and Fairness configuration.
	apf *apf.Maintainer
	// flowControl enforces it in the API server.
	flowControl *apf.FlowControl
	// netpol is the network plugin's policy engine, made by the
	// network-policy part for the nodes and the data plane after it.
	netpol *netpol.Policies
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
	if cfg.DNSForward == NoAddress {
		cfg.DNSForward = ""
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

// Start runs minikd until ctx is done, then stops it. The parts start in
// this order, each once the one before is ready, and stop in reverse:
// the data dir's lock and slot, etcd, its watch monitor (the /readyz
// checks etcd and etcd-watch), the trail's flusher, the API server, the
// admission plugins' informers, the bootstrap objects, the Gateway API's
// CRDs (installGatewayAPI), the authorizers'
// informers, the kubernetes Service, the aggregator (APIServices), the
// kubeconfig, /readyz turning 200,
// then what runs beside the API as its clients (controller manager,
// scheduler, metrics-server, nodes, cluster DNS, data plane), and last
// the line telling how to use the cluster. On stop those clients stop
// first, while the API still serves their last writes; /readyz turns red;
// the API server stops accepting, ends watches and waits for in-flight
// requests (Config.ShutdownTimeout at most); etcd stops last. It returns
// nil after a clean stop, else the error of the part that failed.
func (s *Server) Start(ctx context.Context) error {
	parts := []component{
		{name: "data-dir", start: s.holdDataDir},
		{name: "etcd", start: s.runEtcd},
		{name: "etcd-watch", start: s.watchEtcd},
		{name: "trail", start: s.runTrail},
		{name: "apiserver", start: s.serveAPI},
		{name: "admission", start: s.runAdmission},
		{name: "bootstrap", start: s.bootstrap},
		{name: "gateway-api", start: s.installGatewayAPI},
		{name: "apf-configuration", start: s.runAPFConfiguration},
		{name: "authorization", start: s.runAuthorization},
		{name: "kubernetes-service", start: s.runKubernetesService},
		{name: "aggregator", start: s.runAggregator},
		{name: "kubeconfig", start: s.writeKubeconfigs},
		{name: "readyz", start: s.serveReady},
	}
	parts = append(parts, s.clients()...)
	parts = append(parts, component{name: "announce", start: s.announce})
	return supervise(ctx, parts, s.log)
}

// systemNamespaces exist in every cluster.
var systemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// createBootstrapObjects creates what every cluster has, through the API
// like any client, and returns when the API answers: the system
// namespaces and PriorityClasses, the default StorageClass, the kube-dns
// Service at dnsIP.
func createBootstrapObjects(ctx context.Context, cfg *rest.Config, dnsIP netip.Addr) error {
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
