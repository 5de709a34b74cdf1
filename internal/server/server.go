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
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"minik/internal/api"
	"minik/internal/auth"
	"minik/internal/etcd"
	"minik/internal/openapi"
	"minik/internal/pki"
	"minik/internal/registry"
	"minik/internal/storage"
	"minik/internal/version"
)

// Config configures minikd.
type Config struct {
	// DataDir holds etcd's data, the PKI and the kubeconfig. Required.
	DataDir string
	// Listen is the API server's address; port 0 picks a free port.
	Listen string
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
	// ControllerWorkers is each controller's worker count; zero means 5.
	ControllerWorkers int
	// LeaderElect runs the controllers (and scheduler) only in the minikd
	// holding their Lease, for several minikd sharing one etcd.
	LeaderElect bool
	// ShutdownTimeout bounds the wait for in-flight requests on stop.
	// Zero means 10 seconds.
	ShutdownTimeout time.Duration
}

// Server is a running (or startable) minikd.
type Server struct {
	cfg   Config
	log   *slog.Logger
	ready chan struct{}

	mu         sync.Mutex
	addr       string
	restConfig *rest.Config
	etcd       *clientv3.Client
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
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:6443"
	}
	if _, _, err := net.SplitHostPort(cfg.Listen); err != nil {
		return nil, fmt.Errorf("--listen %q: %w", cfg.Listen, err)
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
	abs, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("--data-dir %q: %w", cfg.DataDir, err)
	}
	cfg.DataDir = abs
	return &Server{cfg: cfg, log: cfg.Logger, ready: make(chan struct{})}, nil
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
	pkiDir := filepath.Join(s.cfg.DataDir, "pki")
	ca, err := pki.LoadOrCreateCA(pkiDir)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Listen, err)
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

	db, err := etcd.Start(ctx, etcd.Config{DataDir: s.cfg.DataDir, Servers: s.cfg.EtcdServers})
	if err != nil {
		return err
	}
	defer db.Close()

	resources := registry.All()
	oapi, err := openapi.NewHandler(resources)
	if err != nil {
		return fmt.Errorf("build openapi: %w", err)
	}
	apiServer, err := api.New(api.Config{
		Store:          storage.New(db.Client),
		Resources:      resources,
		Authenticators: []auth.Authenticator{auth.ClientCertAuthenticator{}},
		Authorizers:    []auth.Authorizer{auth.MastersAuthorizer{}, auth.SystemComponentsAuthorizer{}},
		AnonymousPaths: []string{"/healthz", "/livez", "/readyz", "/version"},
		Extra:          map[string]http.Handler{"/openapi/": oapi},
		Version:        version.Info(),
		Logger:         s.log,
	})
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler: apiServer,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{servingCert},
			ClientAuth:   tls.VerifyClientCertIfGiven,
			ClientCAs:    ca.Pool(),
			MinVersion:   tls.VersionTLS12,
			NextProtos:   []string{"h2", "http/1.1"},
		},
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.ServeTLS(ln, "", "") }()

	restCfg := &rest.Config{
		Host:            "https://" + addr,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca.CertPEM, CertData: admin.CertPEM, KeyData: admin.KeyPEM},
		QPS:             -1,
	}
	if err := bootstrap(ctx, restCfg); err != nil {
		_ = srv.Close()
		return err
	}
	// The kubeconfig appears, then /readyz turns 200: a script waiting for
	// either finds a cluster that serves.
	if err := writeKubeconfig(s.KubeconfigPath(), "https://"+addr, ca.CertPEM, admin); err != nil {
		_ = srv.Close()
		return err
	}
	apiServer.SetReady(true)

	comps, err := s.components(ca, pkiDir, restCfg)
	if err != nil {
		_ = srv.Close()
		return err
	}
	compCtx, stopComps := context.WithCancel(ctx)
	defer stopComps()
	var compWG sync.WaitGroup
	for _, c := range comps {
		compWG.Add(1)
		go func(c component) {
			defer compWG.Done()
			if err := c.start(compCtx); err != nil && compCtx.Err() == nil {
				s.log.Error("component stopped", "component", c.name, "err", err)
			}
		}(c)
	}
	s.mu.Lock()
	s.addr, s.restConfig, s.etcd = addr, restCfg, db.Client
	s.mu.Unlock()
	fmt.Fprintf(s.cfg.Out, "minikd serving on https://%s; to use it: export KUBECONFIG=%s\n", addr, s.KubeconfigPath())
	close(s.ready)

	select {
	case <-ctx.Done():
	case err := <-serveErr:
		return fmt.Errorf("serve https://%s: %w", addr, err)
	}
	// Components stop first, while the API still serves their last writes.
	stopComps()
	compWG.Wait()
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
// client, and returns when the API answers.
func bootstrap(ctx context.Context, cfg *rest.Config) error {
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
	return nil
}

// writeKubeconfig writes the admin kubeconfig (mode 0600) atomically.
func writeKubeconfig(path, server string, caPEM []byte, admin pki.KeyPair) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["minik"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos["minik-admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: admin.CertPEM, ClientKeyData: admin.KeyPEM}
	cfg.Contexts["minik"] = &clientcmdapi.Context{Cluster: "minik", AuthInfo: "minik-admin", Namespace: "default"}
	cfg.CurrentContext = "minik"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("encode kubeconfig: %w", err)
	}
	return pki.WriteFileAtomic(path, data, 0o600)
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
