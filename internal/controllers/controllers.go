// Package controllers runs minik's controllers the way
// kube-controller-manager runs Kubernetes': each one a client of the API
// server built on shared informers and rate-limited workqueues, selected
// with --controllers, and run in one process only when several share an
// etcd (a Lease elects it).
//
// With Config.UseServiceAccountCredentials (minikd's
// --use-service-account-credentials, on by default as kubeadm sets it)
// each controller talks as its own ServiceAccount,
// system:serviceaccount:kube-system:<client name> (for example
// deployment-controller), authorized by kube's bootstrap role
// system:controller:<client name>: the manager, as
// system:kube-controller-manager, only creates those ServiceAccounts and
// asks the TokenRequest API for their tokens (kube's
// DynamicControllerClientBuilder, which refreshes a token once 80% of its
// hour has passed), and keeps its own identity for leader election and the
// shared informers. Without it every controller talks as
// system:kube-controller-manager, which then needs every controller's role.
// Either way each controller's client, its events and its metadata client
// carry the User-Agent kube-controller-manager/<version> …/<identity>, so
// that managedFields name "kube-controller-manager" as kube's do.
//
// Each controller lives in its own subpackage exporting a Constructor;
// package controllers/all lists them by name.
package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/utils/clock"

	"minik/internal/leaderelect"
	"minik/internal/pki"
	// promstats is client-go's workqueue metrics provider: every
	// controller's queue reports workqueue_* under its name.
	_ "minik/internal/promstats"
	"minik/internal/syncwait"
	"minik/internal/version"
)

// Context is what every controller is built from.
type Context struct {
	// Client talks to the API server as the controller's identity (its
	// ServiceAccount, or system:kube-controller-manager).
	Client kubernetes.Interface
	// Metadata reads and writes the metadata of objects of any resource
	// (PartialObjectMetadata), as the same identity.
	Metadata metadata.Interface
	// Informers are shared by all controllers; a constructor asks for the
	// informers it needs, the manager starts them.
	Informers informers.SharedInformerFactory
	// Recorder returns an event recorder reporting as component (for
	// example "deployment-controller"); its events are written as the
	// controller's identity.
	Recorder func(component string) record.EventRecorder
	// Clock tells the time.
	Clock clock.WithTicker
	// Workers is how many items each controller reconciles at once.
	Workers int
	// Logger logs, with the controller's name.
	Logger *slog.Logger
	// RootCA is the PEM bundle clients verify the API server with, which
	// the root-ca-cert-publisher publishes in every namespace.
	RootCA []byte
	// ClusterSigner is the CA the csrsigning controller issues
	// certificates with; nil leaves that controller idle.
	ClusterSigner *pki.CA
}

// Controller is a running controller.
type Controller interface {
	// Run reconciles until ctx is done, with the given number of workers.
	// It is called after the shared informers have synced.
	Run(ctx context.Context, workers int)
}

// Constructor builds a controller, registering the informers it needs.
type Constructor func(cc *Context) (Controller, error)

// Config configures the controller manager.
type Config struct {
	// RESTConfig is the API client configuration with the controller
	// manager's identity. Required.
	RESTConfig *rest.Config
	// Controllers selects controllers as kube-controller-manager's
	// --controllers does: "*" (all), "name" (on), "-name" (off). Empty means
	// ["*"].
	Controllers []string
	// Known are the controllers that can run, by name. Required.
	Known map[string]Constructor
	// ClientNames name each controller's client as kube-controller-manager
	// names it (for example "deployment" → "deployment-controller",
	// "garbagecollector" → "generic-garbage-collector"): its ServiceAccount
	// in kube-system with UseServiceAccountCredentials, the end of its
	// User-Agent either way. A controller missing here uses its own name.
	ClientNames map[string]string
	// UseServiceAccountCredentials runs each controller with the
	// credentials of its ServiceAccount kube-system/<client name> (created
	// if missing, tokens from the TokenRequest API), as
	// kube-controller-manager's --use-service-account-credentials; false
	// (kube's default) runs every controller as RESTConfig's identity.
	UseServiceAccountCredentials bool
	// Workers per controller; zero means 5.
	Workers int
	// QPS and Burst bound each controller's client, as
	// kube-controller-manager's --kube-api-qps and --kube-api-burst do:
	// every controller has a client and a rate limiter of its own, and so
	// do the shared informers and the event recorders. Zero means 500 and
	// 1000 (kube's defaults, 50 and 100, are for a remote API server
	// shared with a fleet of kubelets; a local one serves about 2,000
	// writes a second and sheds load itself with
	// --max-requests-inflight); negative means no client-side limit.
	QPS   float32
	Burst int
	// LeaderElect makes the manager run controllers only while it holds the
	// kube-system/kube-controller-manager Lease.
	LeaderElect bool
	// Identity names this manager in the Lease; empty means host name and
	// process id.
	Identity string
	// LeaderElection is the election's timing; zero fields mean kube's
	// defaults (15 s lease, 10 s renew deadline, 2 s retry period).
	LeaderElection leaderelect.Timing
	// Clock tells the time; nil means the real clock.
	Clock clock.WithTicker
	// Logger logs; nil means slog.Default().
	Logger *slog.Logger
	// RootCA is the cluster's CA certificate (PEM), as
	// kube-controller-manager's --root-ca-file; nil means RESTConfig's CA
	// data, as kube falls back to.
	RootCA []byte
	// ClusterSigner is the cluster CA with its key, as
	// kube-controller-manager's --cluster-signing-cert-file and
	// --cluster-signing-key-file: the csrsigning controller signs with
	// it. Nil leaves that controller idle, as kube skips it.
	ClusterSigner *pki.CA
}

// DefaultQPS and DefaultBurst are the rate limits of each controller's
// client when Config leaves them zero.
const (
	DefaultQPS   = 500
	DefaultBurst = 1000
)

// Manager runs the selected controllers.
type Manager struct {
	cfg     Config
	enabled []string
}

// NewManager validates cfg and fills defaults.
func NewManager(cfg Config) (*Manager, error) {
	if cfg.RESTConfig == nil {
		return nil, errors.New("controllers: a REST config is required")
	}
	if cfg.Known == nil {
		return nil, errors.New("controllers: the known controllers are required")
	}
	if len(cfg.Controllers) == 0 {
		cfg.Controllers = []string{"*"}
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 5
	}
	if cfg.QPS == 0 {
		cfg.QPS = DefaultQPS
	}
	if cfg.Burst == 0 {
		cfg.Burst = DefaultBurst
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RootCA == nil {
		cfg.RootCA = cfg.RESTConfig.CAData
	}
	if cfg.Identity == "" {
		host, _ := os.Hostname()
		cfg.Identity = fmt.Sprintf("%s_%d", host, os.Getpid())
	}
	enabled, err := Select(cfg.Controllers, cfg.Known)
	if err != nil {
		return nil, err
	}
	return &Manager{cfg: cfg, enabled: enabled}, nil
}

// Select resolves a --controllers list against the known controllers and
// returns the enabled names, sorted.
func Select(spec []string, known map[string]Constructor) ([]string, error) {
	on := map[string]bool{}
	star := false
	for _, s := range spec {
		s = strings.TrimSpace(s)
		switch {
		case s == "*":
			star = true
		case strings.HasPrefix(s, "-"):
			if _, ok := known[s[1:]]; !ok {
				return nil, fmt.Errorf("--controllers: unknown controller %q", s[1:])
			}
			on[s[1:]] = false
		case s != "":
			if _, ok := known[s]; !ok {
				return nil, fmt.Errorf("--controllers: unknown controller %q", s)
			}
			on[s] = true
		}
	}
	var names []string
	for name := range known {
		enabled, set := on[name]
		if enabled || (star && !set) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// Start runs the controllers until ctx is done (with leader election, while
// this manager leads). It returns when every controller has stopped.
func (m *Manager) Start(ctx context.Context) error {
	le, err := m.rootClient("leader-election")
	if err != nil {
		return err
	}
	if !m.cfg.LeaderElect {
		return m.run(ctx)
	}
	return leaderelect.Run(ctx, le, "kube-controller-manager", m.cfg.Identity, m.cfg.LeaderElection, m.cfg.Logger, m.run)
}

// baseConfig is the manager's client configuration with the manager's
// rate limits, the skeleton of every client.
func (m *Manager) baseConfig() *rest.Config {
	rc := rest.CopyConfig(m.cfg.RESTConfig)
	rc.QPS, rc.Burst = m.cfg.QPS, m.cfg.Burst
	// A limiter set on the configuration would be shared by every client.
	rc.RateLimiter = nil
	return rc
}

// rootClient is a client with the manager's own identity (leader
// election, the shared informers, the controllers' ServiceAccounts and
// tokens), named as kube names its root clients ("shared-informers").
func (m *Manager) rootClient(name string) (kubernetes.Interface, error) {
	rc := m.baseConfig()
	rc.UserAgent = UserAgent(name)
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("controllers: %s client: %w", name, err)
	}
	return cs, nil
}

// UserAgent is the User-Agent of a client of the controller manager named
// name (a client name, or a ServiceAccount's user name), as kube's client
// builders make it: kube-controller-manager/<version> (<os>/<arch>)
// kubernetes/<commit>/<name>. The API server's default field manager is
// its first segment, "kube-controller-manager".
func UserAgent(name string) string {
	return fmt.Sprintf("kube-controller-manager/%s (%s/%s) kubernetes/minik/%s", version.Kubernetes, runtime.GOOS, runtime.GOARCH, name)
}

// clientBuilder returns the builder of the controllers' client
// configurations: with UseServiceAccountCredentials, kube's
// DynamicControllerClientBuilder, which gets or creates the ServiceAccount
// kube-system/<client name> and authenticates with tokens of it from the
// TokenRequest API (asked for through root, as the manager; refreshed when
// 80% of their lifetime has passed, or at once when the API server answers
// 401), and nothing of the manager's credentials; otherwise one that hands
// out the manager's own configuration.
func (m *Manager) clientBuilder(root kubernetes.Interface) clientbuilder.ControllerClientBuilder {
	base := m.baseConfig()
	if !m.cfg.UseServiceAccountCredentials {
		return clientbuilder.SimpleControllerClientBuilder{ClientConfig: base}
	}
	return clientbuilder.NewDynamicClientBuilder(rest.AnonymousClientConfig(base), root.CoreV1(), metav1.NamespaceSystem)
}

// controllerClients are one controller's clients, all with its identity:
// its own, its event sink's and its metadata client (each with a rate
// limiter of its own).
type controllerClients struct {
	client, events kubernetes.Interface
	meta           metadata.Interface
}

// clientsOf builds the clients of the named controller.
func (m *Manager) clientsOf(b clientbuilder.ControllerClientBuilder, name string) (controllerClients, error) {
	clientName := name
	if n, ok := m.cfg.ClientNames[name]; ok {
		clientName = n
	}
	rc, err := b.Config(clientName)
	if err != nil {
		return controllerClients{}, fmt.Errorf("controllers: client of %s (%s): %w", name, clientName, err)
	}
	rc.UserAgent = UserAgent(clientName)
	if m.cfg.UseServiceAccountCredentials {
		rc.UserAgent = UserAgent(serviceaccount.MakeUsername(metav1.NamespaceSystem, clientName))
	}
	var cc controllerClients
	if cc.client, err = kubernetes.NewForConfig(rc); err == nil {
		if cc.events, err = kubernetes.NewForConfig(rc); err == nil {
			cc.meta, err = metadata.NewForConfig(rc)
		}
	}
	if err != nil {
		return controllerClients{}, fmt.Errorf("controllers: client of %s: %w", name, err)
	}
	return cc, nil
}

// run builds the enabled controllers and runs them until ctx is done.
func (m *Manager) run(ctx context.Context) error {
	root, err := m.rootClient("shared-informers")
	if err != nil {
		return err
	}
	builder := m.clientBuilder(root)
	shared := Context{
		Informers: informers.NewSharedInformerFactory(root, 0),
		Clock:     m.cfg.Clock,
		Workers:   m.cfg.Workers,
		RootCA:    m.cfg.RootCA,

		ClusterSigner: m.cfg.ClusterSigner,
	}
	var running []Controller
	var broadcasters []record.EventBroadcaster
	defer func() {
		for _, b := range broadcasters {
			b.Shutdown()
		}
	}()
	for _, name := range m.enabled {
		clients, err := m.clientsOf(builder, name)
		if err != nil {
			return err
		}
		// Each controller's events go through a broadcaster of its own,
		// written by its own client, as kube's controllers record them.
		broadcaster := record.NewBroadcaster(record.WithContext(ctx))
		broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: clients.events.CoreV1().Events("")})
		broadcasters = append(broadcasters, broadcaster)
		cc := shared
		cc.Client, cc.Metadata = clients.client, clients.meta
		cc.Recorder = func(component string) record.EventRecorder {
			return broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component})
		}
		cc.Logger = m.cfg.Logger.With("controller", name)
		c, err := m.cfg.Known[name](&cc)
		if err != nil {
			return fmt.Errorf("controllers: start %s: %w", name, err)
		}
		running = append(running, c)
	}
	factory := shared.Informers
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	// The factory's own wait polls every 100 ms; ask it without waiting
	// (a closed stop channel) every few milliseconds instead.
	asked := make(chan struct{})
	close(asked)
	if !syncwait.Synced(ctx, func() bool {
		for _, ok := range factory.WaitForCacheSync(asked) {
			if !ok {
				return false
			}
		}
		return true
	}) {
		return nil
	}
	var wg sync.WaitGroup
	for _, c := range running {
		wg.Add(1)
		go func(c Controller) {
			defer wg.Done()
			c.Run(ctx, m.cfg.Workers)
		}(c)
	}
	wg.Wait()
	return nil
}
