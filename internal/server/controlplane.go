package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/admission"
	"minik/internal/admission/plugins"
	"minik/internal/aggregator"
	"minik/internal/apf"
	"minik/internal/api"
	"minik/internal/auth"
	"minik/internal/etcd"
	"minik/internal/metricsapi"
	"minik/internal/openapi"
	"minik/internal/pki"
	"minik/internal/registry"
	"minik/internal/storage"
	"minik/internal/trail"
	"minik/internal/version"
)

// The parts of Start up to an API that serves and says so on /readyz, in
// their order. Each is a component's start (see supervise).

// holdDataDir creates and locks the data dir for the life of minikd (a
// second minikd on it is refused) and places the cluster: its slot under
// AutoNetwork, and the kube-dns address.
func (s *Server) holdDataDir(ctx context.Context, ready func()) error {
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
	return readyUntilDone(ctx, ready)
}

// runEtcd starts the embedded etcd member (or connects to
// Config.EtcdServers) and is ready once it serves; it stops it on return.
func (s *Server) runEtcd(ctx context.Context, ready func()) error {
	db, err := etcd.Start(ctx, etcd.Config{DataDir: s.cfg.DataDir, Servers: s.cfg.EtcdServers})
	if err != nil {
		return err
	}
	defer db.Close()
	s.etcdDB, s.store = db, storage.New(db.Client)
	return readyUntilDone(ctx, ready)
}

// watchEtcd runs the watch monitor, which tells /readyz whether etcd
// still takes writes and its watches still deliver.
func (s *Server) watchEtcd(ctx context.Context, ready func()) error {
	s.monitor = s.store.NewWatchMonitor(storage.WatchMonitorConfig{Logger: s.log.With("component", "etcd-watch")})
	ready()
	return s.monitor.Start(ctx)
}

// runTrail runs the flusher of the trail, which records the API server's
// writes; it starts before the API server and so stops after it, and the
// API server's last writes reach the disk.
func (s *Server) runTrail(ctx context.Context, ready func()) error {
	var err error
	if s.trail, err = trail.New(trail.Config{Dir: filepath.Join(s.cfg.DataDir, "trail"), Logger: s.log.With("component", "trail")}); err != nil {
		return err
	}
	ready()
	return s.trail.Start(ctx)
}

// serveAPI makes the certificates, opens the listener and serves the API
// over HTTPS; it is ready once it accepts (/readyz stays 503 until the
// readyz part). On stop it ends open watches, stops accepting, waits for
// the requests in flight (Config.ShutdownTimeout at most) and closes the
// audit log. A serving error stops minikd.
func (s *Server) serveAPI(ctx context.Context, ready func()) error {
	ln, err := s.listen()
	if err != nil {
		return err
	}
	defer ln.Close()
	s.apiAddr = ln.Addr().String()
	servingCert, err := s.certificates(s.apiAddr)
	if err != nil {
		return err
	}
	err = s.newAPIServer()
	if s.auth != nil {
		defer s.auth.close()
		defer s.auth.stop()
	}
	if s.apiServer != nil {
		// What the API server runs in the background stops before etcd
		// does.
		defer s.apiServer.Stop()
	}
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler: admission.WithWarnings(s.apiServer),
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{servingCert},
			// Requested, verified by the authenticator: a bad certificate
			// is a 401, as kube-apiserver answers, not a TLS alert.
			ClientAuth: tls.RequestClientCert,
			ClientCAs:  s.ca.Pool(),
			MinVersion: tls.VersionTLS12,
			NextProtos: []string{"h2", "http/1.1"},
		},
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.ServeTLS(ln, "", "") }()
	ready()
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		return fmt.Errorf("serve https://%s: %w", s.apiAddr, err)
	}
	s.apiServer.SetReady(false)
	s.apiServer.Stop()
	s.shutdown(srv)
	return nil
}

// certificates loads (or makes, on the first start) the CA, the serving
// certificate for the API at addr and the admin's client certificate.
func (s *Server) certificates(addr string) (tls.Certificate, error) {
	s.pkiDir = filepath.Join(s.cfg.DataDir, "pki")
	var err error
	if s.ca, err = pki.LoadOrCreateCA(s.pkiDir); err != nil {
		return tls.Certificate{}, err
	}
	host, _, _ := net.SplitHostPort(addr)
	hosts := []string{"127.0.0.1", "localhost", "::1"}
	if host != "" && host != "127.0.0.1" && host != "::" && host != "0.0.0.0" {
		hosts = append(hosts, host)
	}
	serving, err := s.ca.LoadOrCreateServing(s.pkiDir, "apiserver", hosts)
	if err != nil {
		return tls.Certificate{}, err
	}
	if s.admin, err = s.ca.LoadOrCreateClient(s.pkiDir, "admin", "minik-admin", []string{auth.GroupMasters}); err != nil {
		return tls.Certificate{}, err
	}
	if s.frontProxyCA, s.frontProxyClient, err = pki.LoadOrCreateFrontProxy(s.pkiDir); err != nil {
		return tls.Certificate{}, err
	}
	s.adminConfig = &rest.Config{
		Host:            "https://" + addr,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.ca.CertPEM, CertData: s.admin.CertPEM, KeyData: s.admin.KeyPEM},
		QPS:             -1,
	}
	cert, err := serving.TLS()
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("load serving certificate: %w", err)
	}
	return cert, nil
}

// newAPIServer builds the API server over the store (s.apiServer): the
// authenticators and authorizers (s.auth, whose informers start later),
// the metrics and trail resources, OpenAPI, and the admission chain in
// kube's order (s.admission, reading its configuration through a
// loopback client; its informers start once the API serves). On error
// the caller releases what was made (s.auth, s.apiServer when set).
func (s *Server) newAPIServer() error {
	resources := registry.All()
	var err error
	s.health.etcd = func(ctx context.Context) error {
		if err := s.monitor.CheckEtcd(ctx); err != nil {
			return err
		}
		_, err := s.store.CurrentRevision(ctx)
		return err
	}
	s.health.expect("controller-manager", !s.cfg.NoControllers)
	s.health.expect("scheduler", !s.cfg.NoScheduler)
	if s.metrics, err = metricsapi.New(metricsapi.Config{Logger: s.log.With("component", "metrics-server")}); err != nil {
		return err
	}
	metricsNodes, metricsPods := metricsapi.Descriptors()
	oapi, err := openapi.NewHandler(append(resources[:len(resources):len(resources)], registry.ComponentStatuses(), metricsNodes, metricsPods, trail.Descriptor()), api.Scheme)
	if err != nil {
		return fmt.Errorf("build openapi: %w", err)
	}
	if s.auth, err = s.newAuthStack(s.ca, s.pkiDir, "https://"+s.apiAddr); err != nil {
		return err
	}
	// The admission chain is filled once the server exists: its
	// NamespaceLifecycle reads the server's storage, and the RBAC
	// escalation check and NodeRestriction run after ServiceAccount.
	chain := &admission.Chain{}
	frontProxy, err := s.frontProxyClient.TLS()
	if err != nil {
		return fmt.Errorf("front-proxy client certificate: %w", err)
	}
	s.aggregator = aggregator.New(aggregator.Config{FrontProxy: frontProxy, Logger: s.log.With("component", "aggregator")})
	// API Priority and Fairness: the bootstrap configuration's keeper,
	// and kube's dispatcher, whose informers and config controller the
	// apf-configuration part runs; until they have synced it knows the
	// mandatory objects only.
	apfClient, err := kubernetes.NewForConfig(s.adminConfig)
	if err != nil {
		return fmt.Errorf("apf configuration client: %w", err)
	}
	s.apf = apf.New(apfClient, apf.DefaultInterval, s.log.With("component", "apf-configuration"))
	s.flowControl, err = apf.NewFlowControl(apfClient, serverConcurrencyLimit(s.cfg))
	if err != nil {
		return err
	}
	s.apiServer, err = api.New(api.Config{
		Store:          s.store,
		Resources:      resources,
		Authenticators: s.auth.authenticators,
		Authorizers:    s.auth.authorizers,
		AnonymousPaths: []string{"/healthz", "/livez", "/readyz", "/version"},
		AnonymousAuth:  s.cfg.AnonymousAuth,
		TokenIssuer:    s.auth.issuer,
		Local:          append(append(s.health.Resources(), s.metrics.Resources()...), s.trail.Resources()...),
		Audit:          s.auth.audit,
		Trail:          s.trail,
		Delegator:      s.aggregator,
		Admission:      chain,
		Extra:          map[string]http.Handler{"/openapi/": oapi},
		Version:        version.Info(),
		Logger:         s.log,
		ReadyChecks: []api.ReadyCheck{
			{Name: "etcd", Check: s.monitor.CheckEtcd},
			{Name: "etcd-watch", Check: s.monitor.CheckWatch},
			{Name: "autoregister-completion", Check: s.aggregator.AutoregisterCompletion},
		},

		ServiceClusterIPRange: s.serviceIPs,
		ServiceNodePortRange:  s.nodePorts,

		MaxRequestsInFlight:         max(s.cfg.MaxRequestsInFlight, 0),
		MaxMutatingRequestsInFlight: max(s.cfg.MaxMutatingRequestsInFlight, 0),
		RequestTimeout:              s.cfg.RequestTimeout,
		NoWatchCache:                s.cfg.NoWatchCache,
		WatchCacheSizes:             s.cfg.WatchCacheSizes,
		FlowControl:                 s.flowControl.Dispatcher,
	})
	if err != nil {
		return err
	}
	loopback, err := s.ca.LoadOrCreateClient(s.pkiDir, "apiserver-loopback", auth.UserAPIServer, []string{auth.GroupMasters})
	if err != nil {
		return fmt.Errorf("loopback credential: %w", err)
	}
	s.admission, err = plugins.New(plugins.Config{
		RESTConfig: &rest.Config{
			Host:            "https://" + s.apiAddr,
			TLSClientConfig: rest.TLSClientConfig{CAData: s.ca.CertPEM, CertData: loopback.CertPEM, KeyData: loopback.KeyPEM},
		},
		Resources:          resources,
		Disabled:           s.cfg.DisableAdmissionPlugins,
		NamespaceLifecycle: s.apiServer.NamespaceLifecycle(),
		Validators:         s.auth.validators,
		Authorizer:         auth.Union(s.auth.authorizers),
		Logger:             s.log.With("component", "admission"),
	})
	if err != nil {
		return err
	}
	*chain = *s.admission.Chain()
	return nil
}

// shutdown stops srv gracefully: it stops accepting at once, and returns
// once no request is in flight or Config.ShutdownTimeout has passed.
func (s *Server) shutdown(srv *http.Server) {
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	shut := make(chan struct{})
	go func() {
		defer close(shut)
		_ = srv.Shutdown(sctx)
	}()
	// Shutdown lets idle HTTP/2 clients take a second to leave; once no
	// request is in flight there is nothing to wait for.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-shut:
			return
		case <-sctx.Done():
			_ = srv.Close()
			return
		case <-tick.C:
			if s.apiServer.InFlight() == 0 {
				_ = srv.Close()
				<-shut
				return
			}
		}
	}
}

// runAdmission runs the admission plugins' informers (through the
// loopback client, so the API must serve) and is ready once they have
// synced. They stop before the API server does.
func (s *Server) runAdmission(ctx context.Context, ready func()) error {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = s.admission.Start(ctx) }()
	defer func() { cancel(); <-done }()
	if !s.admission.WaitForCacheSync(ctx, 30*time.Second) {
		return errors.New("admission informers did not sync")
	}
	return readyUntilDone(ctx, ready)
}

// bootstrap creates what every cluster has (see createBootstrapObjects)
// as the admin.
func (s *Server) bootstrap(ctx context.Context, ready func()) error {
	if err := createBootstrapObjects(ctx, s.adminConfig, s.dnsIP); err != nil {
		return err
	}
	return readyUntilDone(ctx, ready)
}

// runAPFConfiguration runs API Priority and Fairness's config controller
// (its informers read the configuration as the admin, exempt) and ensures
// kube's bootstrap configuration (the mandatory and suggested FlowSchemas
// and PriorityLevelConfigurations) as kube-apiserver's config producer
// does at start; it is ready once that is done, then ensures it again
// every minute. The controller stops after the ensurer.
func (s *Server) runAPFConfiguration(ctx context.Context, ready func()) error {
	ctx, cancel := context.WithCancel(ctx)
	fcDone := make(chan error, 1)
	go func() { fcDone <- s.flowControl.Run(ctx) }()
	err := s.apf.Run(ctx, ready)
	cancel()
	return errors.Join(err, <-fcDone)
}

// serverConcurrencyLimit is the seats API Priority and Fairness shares
// among the priority levels: kube's --max-requests-inflight +
// --max-mutating-requests-inflight; a limit turned off (negative) counts
// for none, and both off is apf.Unlimited.
func serverConcurrencyLimit(cfg Config) int {
	n := max(cfg.MaxRequestsInFlight, 0) + max(cfg.MaxMutatingRequestsInFlight, 0)
	if n == 0 {
		return apf.Unlimited
	}
	return n
}

// runAuthorization reconciles the bootstrap RBAC policy, writes the
// extension-apiserver-authentication ConfigMap, and runs the
// informers RBAC and the node authorizer read; it is ready once they have
// synced, and stops them before the API server stops.
func (s *Server) runAuthorization(ctx context.Context, ready func()) error {
	defer s.auth.stop()
	if err := s.auth.start(ctx, s.adminConfig, s.ca.CertPEM, auth.FrontProxyRequestHeader(s.frontProxyCA.CertPEM)); err != nil {
		return err
	}
	return readyUntilDone(ctx, ready)
}

// runKubernetesService keeps the default/kubernetes Service and its
// EndpointSlice pointing at this API server (and repairs Service
// allocations); it is ready once they do.
func (s *Server) runKubernetesService(ctx context.Context, ready func()) error {
	if err := s.apiServer.StartServices(ctx, s.apiAddr); err != nil {
		return err
	}
	return readyUntilDone(ctx, ready)
}

// runAggregator keeps the APIServices of what the API server serves and
// proxies the others' group versions (internal/aggregator), as the API
// server's loopback client; it is ready once the local APIServices are
// seen Available (/readyz's autoregister-completion).
func (s *Server) runAggregator(ctx context.Context, ready func()) error {
	loopback, err := s.ca.LoadOrCreateClient(s.pkiDir, "apiserver-loopback", auth.UserAPIServer, []string{auth.GroupMasters})
	if err != nil {
		return fmt.Errorf("loopback credential: %w", err)
	}
	rc := &rest.Config{
		Host:            "https://" + s.apiAddr,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.ca.CertPEM, CertData: loopback.CertPEM, KeyData: loopback.KeyPEM},
		QPS:             -1,
	}
	actx, cancel := context.WithCancel(ctx)
	done, err := s.aggregator.Run(actx, rc, s.apiServer.ServedGroupVersions())
	if err != nil {
		cancel()
		return err
	}
	defer func() { cancel(); <-done }()
	// /readyz's autoregister-completion holds before the part is ready;
	// when a user's change keeps it from holding, /readyz says so (as
	// kube-apiserver's does) and minikd runs on.
	wctx, wdone := context.WithTimeout(ctx, 30*time.Second)
	defer wdone()
	if err := wait.PollUntilContextCancel(wctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		return s.aggregator.AutoregisterCompletion(ctx) == nil, nil
	}); err != nil && ctx.Err() == nil {
		s.log.Warn("aggregator: not every local APIService is available", "err", s.aggregator.AutoregisterCompletion(ctx))
	}
	return readyUntilDone(ctx, ready)
}

// writeKubeconfigs writes the admin kubeconfig, and with
// Config.KubeconfigMerge adds it to the user's, removing it again on stop.
// The kubeconfig appears, then /readyz turns 200: a script waiting for
// either finds a cluster that serves.
func (s *Server) writeKubeconfigs(ctx context.Context, ready func()) error {
	server := "https://" + s.apiAddr
	if err := writeKubeconfig(s.KubeconfigPath(), s.cfg.ClusterName, server, s.ca.CertPEM, s.admin); err != nil {
		return err
	}
	if !s.cfg.KubeconfigMerge {
		return readyUntilDone(ctx, ready)
	}
	unmerge, err := mergeKubeconfig(adminKubeconfig(s.cfg.ClusterName, server, s.ca.CertPEM, s.admin))
	if err != nil {
		return err
	}
	defer func() {
		if err := unmerge(); err != nil {
			s.log.Error("kubeconfig not unmerged", "err", err)
		}
	}()
	return readyUntilDone(ctx, ready)
}

// serveReady turns /readyz 200 until stop.
func (s *Server) serveReady(ctx context.Context, ready func()) error {
	s.apiServer.SetReady(true)
	defer s.apiServer.SetReady(false)
	return readyUntilDone(ctx, ready)
}

// announce, once every part runs, tells how to use the cluster (on
// Config.Out) and closes Ready.
func (s *Server) announce(ctx context.Context, ready func()) error {
	s.mu.Lock()
	s.addr, s.restConfig, s.etcd = s.apiAddr, s.adminConfig, s.etcdDB.Client
	s.mu.Unlock()
	fmt.Fprintf(s.cfg.Out, "minikd serving on https://%s; to use it: export KUBECONFIG=%s\n", s.apiAddr, s.KubeconfigPath())
	if s.cfg.AutoNetwork {
		s.printPlace()
	}
	close(s.ready)
	return readyUntilDone(ctx, ready)
}
