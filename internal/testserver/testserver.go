// Package testserver starts a real minikd for tests: embedded etcd in a
// temporary directory, the API server on a free loopback port.
package testserver

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/admission/plugins"
	"minik/internal/api"
	"minik/internal/controllers"
	"minik/internal/controllers/all"
	"minik/internal/nodeagent"
	"minik/internal/server"
)

// Server is a running minikd.
type Server struct {
	// KubeconfigPath is the admin kubeconfig (context "minik").
	KubeconfigPath string
	// RESTConfig is the admin's client configuration.
	RESTConfig *rest.Config
	// DataDir is the server's data dir.
	DataDir string
	// Addr is the API server's host:port.
	Addr string
	// Etcd is a client of the server's etcd.
	Etcd *clientv3.Client
	// IngressHTTP and IngressHTTPS are the Ingress/Gateway proxy's
	// host:port when Options.DataPlane is set.
	IngressHTTP, IngressHTTPS string
	// ServiceClusterIPRange is the server's service CIDR.
	ServiceClusterIPRange string

	stop func()
}

// Options choose what runs beside the API server.
type Options struct {
	// DataDir is the data dir; empty means a new temporary one.
	DataDir string
	// Controllers selects controllers as minikd's --controllers does; nil
	// runs none, so that tests of the API alone see only their own writes.
	Controllers []string
	// Scheduler runs the default-scheduler beside the API server.
	Scheduler bool
	// DataPlane runs the Service proxy and the Ingress/Gateway proxy, the
	// latter on free loopback ports, in IngressMode ("service" when
	// empty).
	DataPlane   bool
	IngressMode string
	// ServiceClusterIPRange is the service CIDR. Empty means a random /24
	// of 127.96.0.0/12 with DataPlane (so that test servers running at
	// once do not listen on the same ClusterIPs; a restart on the same
	// data dir must pass the first server's), and minikd's default without.
	ServiceClusterIPRange string
	// DisableAdmissionPlugins turns admission plugins off by name, as
	// minikd's --disable-admission-plugins.
	DisableAdmissionPlugins []string
	// ServiceAccountAdmission keeps the ServiceAccount admission plugin on
	// although the serviceaccount controller does not run (the test creates
	// the ServiceAccounts its pods run as). Without either, the plugin is
	// off: no namespace would have its "default" ServiceAccount, and every
	// pod would be refused, as on a cluster without that controller.
	ServiceAccountAdmission bool
	// Nodes is how many simulated nodes run (minik-node-1 …); 0 runs none.
	// StartWith returns once they are all registered and Ready, so that
	// the scheduler judges pods against every one of them.
	Nodes int
	// NoWatchCache serves every read from etcd (minikd --watch-cache=false).
	NoWatchCache bool
	// NodeTiming is the nodes' timing; nil means nodeagent.FastTiming().
	NodeTiming *nodeagent.Timing
	// DRADevices is how many devices each node's simulated DRA driver
	// publishes (minikd's --dra-devices); zero runs no driver.
	DRADevices int
	// TokenAuthFile, AnonymousAuth and AuditPolicyFile are minikd's
	// --token-auth-file, --anonymous-auth and --audit-policy.
	TokenAuthFile   string
	AnonymousAuth   bool
	AuditPolicyFile string
	// AuthorizationMode is minikd's --authorization-mode.
	AuthorizationMode string
	// NoServiceAccountCredentials runs every controller as
	// system:kube-controller-manager (minikd
	// --use-service-account-credentials=false) instead of as its own
	// ServiceAccount.
	NoServiceAccountCredentials bool
	// DNS runs minikd's DNS server on the kube-dns ClusterIP, port 53
	// (the Service range is then a random /24, as with DataPlane).
	DNS bool
}

// admissionOff is the admission plugins a test server runs without.
func admissionOff(o Options) []string {
	off := append([]string(nil), o.DisableAdmissionPlugins...)
	if o.ServiceAccountAdmission || slices.Contains(off, plugins.ServiceAccount) {
		return off
	}
	if o.Controllers != nil {
		if on, err := controllers.Select(o.Controllers, all.Controllers()); err == nil && slices.Contains(on, "serviceaccount") {
			return off
		}
	}
	return append(off, plugins.ServiceAccount)
}

// freePorts returns n distinct free loopback addresses: every listener
// stays open until all are chosen, so the kernel cannot hand the same port
// out twice (closing each before choosing the next once gave the Ingress
// HTTP and HTTPS proxies one port).
func freePorts(t testing.TB, n int) []string {
	t.Helper()
	addrs := make([]string, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs
}

// NodeBlock returns a random first address block for a test's simulated
// nodes (nodeagent.Config.FirstBlock), with room for a thousand nodes
// after it: clusters of test processes that run at once, and pods whose
// containers outlive a stopped cluster, then do not share node and pod
// addresses (a pod's port could otherwise be taken by another cluster's).
func NodeBlock() int { return 1 + rand.IntN(23000) }

// Start starts minikd (the API server, no controllers) on a new temporary
// data dir and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, Options{})
}

// StartIn starts minikd on dataDir and stops it when the test ends (or
// when Stop is called).
func StartIn(t testing.TB, dataDir string) *Server {
	t.Helper()
	return StartWith(t, Options{DataDir: dataDir})
}

// StartWith starts minikd with options and stops it when the test ends (or
// when Stop is called).
func StartWith(t testing.TB, o Options) *Server {
	t.Helper()
	dataDir := o.DataDir
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	cfg := server.Config{
		DataDir: dataDir, Listen: "127.0.0.1:0", ShutdownTimeout: 5 * time.Second,
		Controllers: o.Controllers, NoControllers: o.Controllers == nil,
		NoScheduler:             !o.Scheduler,
		DisableAdmissionPlugins: admissionOff(o),
	}
	cfg.ServiceClusterIPRange = o.ServiceClusterIPRange
	cfg.TokenAuthFile, cfg.AnonymousAuth, cfg.AuditPolicyFile = o.TokenAuthFile, o.AnonymousAuth, o.AuditPolicyFile
	cfg.AuthorizationMode = o.AuthorizationMode
	cfg.NoWatchCache = o.NoWatchCache
	cfg.NoServiceAccountCredentials = o.NoServiceAccountCredentials
	cfg.Nodes, cfg.NodeTiming, cfg.DRADevices = o.Nodes, o.NodeTiming, o.DRADevices
	cfg.NodeFirstBlock = NodeBlock()
	if o.Nodes > 0 && cfg.NodeTiming == nil {
		fast := nodeagent.FastTiming()
		cfg.NodeTiming = &fast
	}
	if (o.DataPlane || o.DNS) && cfg.ServiceClusterIPRange == "" {
		cfg.ServiceClusterIPRange = fmt.Sprintf("127.%d.%d.0/24", 96+rand.IntN(16), rand.IntN(256))
	}
	if o.DNS {
		cfg.DNSListen = server.DNSAuto
	}
	if o.DataPlane {
		cfg.ServiceProxy, cfg.IngressMode = true, o.IngressMode
		ports := freePorts(t, 2)
		cfg.IngressHTTP, cfg.IngressHTTPS = ports[0], ports[1]
	}
	s, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	select {
	case <-s.Ready():
	case err := <-done:
		cancel()
		t.Fatalf("minikd did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("minikd not ready after 60s")
	}
	ts := &Server{KubeconfigPath: s.KubeconfigPath(), RESTConfig: s.RESTConfig(), DataDir: dataDir, Addr: s.Addr(), Etcd: s.Etcd(),
		IngressHTTP: cfg.IngressHTTP, IngressHTTPS: cfg.IngressHTTPS, ServiceClusterIPRange: cmp.Or(cfg.ServiceClusterIPRange, api.DefaultServiceClusterIPRange)}
	stopped := false
	ts.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("minikd stopped with: %v", err)
		}
	}
	t.Cleanup(ts.Stop)
	if o.Nodes > 0 {
		ts.waitNodesReady(t, o.Nodes)
	}
	return ts
}

// waitNodesReady waits until n nodes are registered and Ready.
func (s *Server) waitNodesReady(t testing.TB, n int) {
	t.Helper()
	cs := s.Client(t)
	ready := 0
	deadline := time.Now().Add(60 * time.Second)
	for {
		if nodes, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{}); err == nil {
			ready = 0
			for _, node := range nodes.Items {
				for _, c := range node.Status.Conditions {
					if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
						ready++
					}
				}
			}
			if ready >= n {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d nodes Ready after 60s", ready, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Stop stops the server and waits for it to release its data dir.
func (s *Server) Stop() { s.stop() }

// Client returns an admin clientset.
func (s *Server) Client(t testing.TB) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(s.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// gatewayResources are the Gateway API resources minikd's installed CRDs
// serve that tests use.
var gatewayResources = []string{"gatewayclasses", "gateways", "httproutes", "referencegrants"}

// WaitForGatewayAPI waits until discovery lists the Gateway API's v1
// resources: minikd installs their CRDs at start, and the "crd"
// controller (which the test server must run) establishes them.
func (s *Server) WaitForGatewayAPI(t testing.TB) {
	t.Helper()
	cs := s.Client(t)
	deadline := time.Now().Add(90 * time.Second)
	for {
		list, err := cs.Discovery().ServerResourcesForGroupVersion("gateway.networking.k8s.io/v1")
		if err == nil {
			served := 0
			for _, r := range list.APIResources {
				if slices.Contains(gatewayResources, r.Name) {
					served++
				}
			}
			if served == len(gatewayResources) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Gateway API is not served after 90s (is the crd controller running?): %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
