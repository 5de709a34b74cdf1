package server

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/auth"
	"minik/internal/controllers"
	"minik/internal/controllers/all"
	"minik/internal/dataplane"
	"minik/internal/leaderelect"
	"minik/internal/metricsapi"
	"minik/internal/nodeagent"
	"minik/internal/nodeagent/runtime"
	"minik/internal/pki"
	"minik/internal/scheduler"
	"minik/internal/trail"
)

// component is a long-running piece started once the API serves. Start
// blocks until ctx is done.
type component struct {
	name  string
	start func(ctx context.Context) error
}

// identity returns base's configuration with a client certificate for
// user and groups, kept in the PKI dir under file.
func identity(base *rest.Config, ca *pki.CA, pkiDir, file, user string, groups []string) (*rest.Config, error) {
	kp, err := ca.LoadOrCreateClient(pkiDir, file, user, groups)
	if err != nil {
		return nil, fmt.Errorf("credential for %s: %w", user, err)
	}
	c := rest.CopyConfig(base)
	c.CertData, c.KeyData = kp.CertPEM, kp.KeyPEM
	return c, nil
}

// components returns, in start order, what runs beside the API server:
// the controller manager, the scheduler (then, as they land, the nodes and
// the data plane). Each is a client of the API with its own identity.
func (s *Server) components(ca *pki.CA, pkiDir string, base *rest.Config) ([]component, error) {
	var out []component
	// Several minikd may share one etcd (and one host): each names itself
	// in the leader Leases by host and API address.
	host, _ := os.Hostname()
	leaderID := host + "_" + strings.TrimPrefix(base.Host, "https://")
	if !s.cfg.NoControllers {
		ctrlCfg, err := identity(base, ca, pkiDir, "controller-manager", auth.UserControllerManager, nil)
		if err != nil {
			return nil, err
		}
		mgr, err := controllers.NewManager(controllers.Config{
			RESTConfig:     ctrlCfg,
			Controllers:    s.cfg.Controllers,
			Known:          all.Controllers(),
			Workers:        s.cfg.ControllerWorkers,
			QPS:            s.cfg.ControllerQPS,
			Burst:          s.cfg.ControllerBurst,
			LeaderElect:    s.cfg.LeaderElect,
			Identity:       leaderID,
			Logger:         s.log.With("component", "controller-manager"),
			LeaderElection: s.cfg.LeaderElection,
			RootCA:         ca.CertPEM,
		})
		if err != nil {
			return nil, err
		}
		out = append(out, component{name: "controller-manager", start: mgr.Start})
	}
	if !s.cfg.NoScheduler {
		schedCfg, err := identity(base, ca, pkiDir, "scheduler", auth.UserScheduler, nil)
		if err != nil {
			return nil, err
		}
		sched, err := scheduler.New(scheduler.Config{
			RESTConfig:     schedCfg,
			LeaderElect:    s.cfg.LeaderElect,
			Identity:       leaderID,
			Logger:         s.log.With("component", "scheduler"),
			LeaderElection: s.cfg.LeaderElection,
		})
		if err != nil {
			return nil, err
		}
		out = append(out, component{name: "scheduler", start: sched.Start})
	}
	// metrics-server runs in every minikd: each API server answers
	// metrics.k8s.io from its own provider.
	metricsCfg, err := identity(base, ca, pkiDir, "metrics-server", metricsapi.User, nil)
	if err != nil {
		return nil, err
	}
	out = append(out, component{name: "metrics-server", start: func(ctx context.Context) error {
		admin, err := kubernetes.NewForConfig(base)
		if err != nil {
			return fmt.Errorf("metrics-server rbac: %w", err)
		}
		if err := metricsapi.EnsureRBAC(ctx, admin); err != nil {
			return err
		}
		cs, err := kubernetes.NewForConfig(metricsCfg)
		if err != nil {
			return fmt.Errorf("metrics-server client: %w", err)
		}
		return s.metrics.Start(ctx, cs)
	}})
	// The trail's reader role, aggregated into view, edit and admin.
	out = append(out, component{name: "trail-rbac", start: func(ctx context.Context) error {
		admin, err := kubernetes.NewForConfig(base)
		if err != nil {
			return fmt.Errorf("trail rbac: %w", err)
		}
		if err := trail.EnsureRBAC(ctx, admin); err != nil {
			return err
		}
		<-ctx.Done()
		return nil
	}})
	// The simulated nodes and the data plane stand for the machines of
	// the cluster: they bind this host's loopback addresses and name their
	// Nodes minik-node-1 …, so with several minikd only one may run them.
	var machines []component
	if s.cfg.Nodes > 0 {
		nodes, err := s.nodes(ca, base)
		if err != nil {
			return nil, err
		}
		machines = append(machines, nodes)
	}
	if _, _, on := s.dnsListen(); on {
		dns, err := s.clusterDNS(ca, pkiDir, base)
		if err != nil {
			return nil, err
		}
		machines = append(machines, dns)
	}
	if s.cfg.ServiceProxy || s.cfg.IngressHTTP != "" || s.cfg.IngressHTTPS != "" {
		dp, err := s.dataPlane(ca, pkiDir, base)
		if err != nil {
			return nil, err
		}
		machines = append(machines, dp)
	}
	if !s.cfg.LeaderElect || len(machines) == 0 {
		return append(out, machines...), nil
	}
	cs, err := kubernetes.NewForConfig(base)
	if err != nil {
		return nil, fmt.Errorf("nodes leader client: %w", err)
	}
	log := s.log.With("component", "nodes-leader")
	out = append(out, component{name: "nodes-leader", start: func(ctx context.Context) error {
		return leaderelect.Run(ctx, cs, NodesLease, leaderID, s.cfg.LeaderElection, log, func(ctx context.Context) error {
			runAll(ctx, machines, log)
			return nil
		})
	}})
	return out, nil
}

// NodesLease is the Lease in kube-system whose holder runs the simulated
// nodes and the data plane when several minikd share one etcd
// (--leader-elect): on failover the new holder's nodes take over the
// Nodes and the pods bound to them, as kubelets restarted on the same
// machines would.
const NodesLease = "minik-nodes"

// runAll runs components until ctx is done and returns once all stopped;
// a component that stops early is logged.
func runAll(ctx context.Context, comps []component, log *slog.Logger) {
	var wg sync.WaitGroup
	for _, c := range comps {
		wg.Add(1)
		go func(c component) {
			defer wg.Done()
			if err := c.start(ctx); err != nil && ctx.Err() == nil {
				log.Error("component stopped", "component", c.name, "err", err)
			}
		}(c)
	}
	wg.Wait()
}

// dataPlane is the Service proxy and the Ingress/Gateway proxy, with their
// identities; their RBAC roles are installed with the admin's credentials,
// as an add-on's manifest would be.
func (s *Server) dataPlane(ca *pki.CA, pkiDir string, admin *rest.Config) (component, error) {
	proxyCfg, err := identity(admin, ca, pkiDir, "service-proxy", dataplane.UserServiceProxy, []string{dataplane.GroupDataPlane})
	if err != nil {
		return component{}, err
	}
	ingressCfg, err := identity(admin, ca, pkiDir, "ingress-controller", dataplane.UserIngressController, []string{dataplane.GroupDataPlane})
	if err != nil {
		return component{}, err
	}
	pool, err := s.loadBalancerPool()
	if err != nil {
		return component{}, err
	}
	dp, err := dataplane.New(dataplane.Config{
		RESTConfig: proxyCfg, IngressRESTConfig: ingressCfg,
		ServiceProxy: s.cfg.ServiceProxy, NodePortAddress: s.cfg.NodePortAddress,
		IngressHTTP: s.cfg.IngressHTTP, IngressHTTPS: s.cfg.IngressHTTPS,
		IngressMode: s.cfg.IngressMode, Logger: s.log.With("component", "dataplane"),
		Reserved: s.dnsReserved(), LoadBalancerPool: pool,
	})
	if err != nil {
		return component{}, err
	}
	return component{name: "dataplane", start: func(ctx context.Context) error {
		cs, err := kubernetes.NewForConfig(admin)
		if err != nil {
			return fmt.Errorf("dataplane rbac: %w", err)
		}
		if err := dataplane.EnsureRBAC(ctx, cs); err != nil {
			return err
		}
		return dp.Start(ctx)
	}}, nil
}

// loadBalancerPool is Config.LoadBalancerPool parsed, or its default:
// the /24 of the node port address.
func (s *Server) loadBalancerPool() (netip.Prefix, error) {
	switch s.cfg.LoadBalancerPool {
	case NoAddress:
		return netip.Prefix{}, nil
	case "":
		host := cmp.Or(s.cfg.NodePortAddress, "127.0.0.1")
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is4() {
			return netip.Prefix{}, nil
		}
		return netip.PrefixFrom(a, 24).Masked(), nil
	}
	p, err := netip.ParsePrefix(s.cfg.LoadBalancerPool)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("--load-balancer-pool %q: %w", s.cfg.LoadBalancerPool, err)
	}
	return p.Masked(), nil
}

// nodes is the simulated nodes (Config.Nodes of them), each a kubelet
// acting as system:node:<name> in system:nodes with a certificate minted
// at start (not saved: thousands of nodes would fill the PKI dir). The
// --node-config labels a kubelet may not set are applied as the admin.
func (s *Server) nodes(ca *pki.CA, base *rest.Config) (component, error) {
	policy, err := runtime.ParseImagePolicy(s.cfg.ImagePolicy)
	if err != nil {
		return component{}, fmt.Errorf("--image-policy: %w", err)
	}
	var templates []corev1.Node
	if s.cfg.NodeConfig != "" {
		if templates, err = nodeagent.LoadNodeTemplates(s.cfg.NodeConfig); err != nil {
			return component{}, err
		}
	}
	timing := nodeagent.Timing{Speed: s.cfg.SimulationSpeed}
	if s.cfg.NodeTiming != nil {
		timing = *s.cfg.NodeTiming
	}
	pool, err := nodeagent.New(nodeagent.Config{
		Nodes:       s.cfg.Nodes,
		Templates:   templates,
		DataDir:     filepath.Join(s.cfg.DataDir, "nodes"),
		ImagePolicy: policy,
		Timing:      timing,
		KubeletPort: s.cfg.KubeletPort,
		AdminConfig: base,
		// The kubelet's --cluster-dns, --cluster-domain, --resolv-conf.
		ClusterDNS:    []string{s.dnsIP.String()},
		ClusterDomain: s.cfg.ClusterDomain,
		ResolvConf:    s.cfg.ResolvConf,
		Logger:        s.log.With("component", "nodes"),
		ClientConfig: func(node string) (*rest.Config, error) {
			kp, err := ca.SignClient("system:node:"+node, []string{auth.GroupNodes}, 0)
			if err != nil {
				return nil, fmt.Errorf("credential for node %s: %w", node, err)
			}
			c := rest.CopyConfig(base)
			c.CertData, c.KeyData = kp.CertPEM, kp.KeyPEM
			return c, nil
		},
	})
	if err != nil {
		return component{}, err
	}
	return component{name: "nodes", start: pool.Start}, nil
}
