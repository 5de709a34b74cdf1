package server

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/auth"
	"minik/internal/controllers"
	"minik/internal/controllers/all"
	"minik/internal/dataplane"
	"minik/internal/leaderelect"
	"minik/internal/metricsapi"
	"minik/internal/netpol"
	"minik/internal/nodeagent"
	"minik/internal/nodeagent/runtime"
	"minik/internal/pki"
	"minik/internal/scheduler"
	"minik/internal/trail"
)

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

// A client is a part that runs beside the API server as a client of it,
// with its own identity. build makes it once the API serves (an error
// stops minikd, as a bad flag does) and returns what runs it until ctx is
// done.
type client struct {
	name  string
	build func() (run func(ctx context.Context) error, err error)
}

// part makes c a component: ready once built, optional once running (see
// component.optional).
func (c client) part() component {
	return component{name: c.name, optional: true, start: func(ctx context.Context, ready func()) error {
		run, err := c.build()
		if err != nil {
			return err
		}
		ready()
		return run(ctx)
	}}
}

// clients are the parts beside the API server, in start order: the
// controller manager, the scheduler, metrics-server, the trail's RBAC,
// then the machines of the cluster (the network plugin's policy engine,
// nodes, cluster DNS, data plane).
// The machines bind this host's loopback addresses and name their Nodes
// minik-node-1 …, so under --leader-elect they run only in the minikd
// holding NodesLease (the controller manager and the scheduler elect
// their own leaders).
func (s *Server) clients() []component {
	var out []client
	if !s.cfg.NoControllers {
		out = append(out, client{"controller-manager", s.health.track("controller-manager", s.controllerManager)})
	}
	if !s.cfg.NoScheduler {
		out = append(out, client{"scheduler", s.health.track("scheduler", s.scheduler)})
	}
	// metrics-server runs in every minikd: each API server answers
	// metrics.k8s.io from its own provider.
	out = append(out, client{"metrics-server", s.metricsServer}, client{"trail-rbac", s.trailRBAC})
	var machines []client
	if s.cfg.Nodes > 0 || s.cfg.ServiceProxy {
		machines = append(machines, client{"network-policy", s.networkPolicy})
	}
	if s.cfg.Nodes > 0 {
		machines = append(machines, client{"nodes", s.nodes})
	}
	if _, _, on := s.dnsListen(); on {
		machines = append(machines, client{"cluster-dns", s.clusterDNS})
	}
	if s.cfg.ServiceProxy || s.cfg.IngressHTTP != "" || s.cfg.IngressHTTPS != "" {
		machines = append(machines, client{"dataplane", s.dataPlane})
	}
	if s.cfg.LeaderElect && len(machines) > 0 {
		out = append(out, client{"nodes-leader", func() (func(context.Context) error, error) { return s.leadMachines(machines) }})
	} else {
		out = append(out, machines...)
	}
	parts := make([]component, len(out))
	for i, c := range out {
		parts[i] = c.part()
	}
	return parts
}

// leaderID names this minikd in the leader Leases by host and API
// address: several minikd may share one etcd (and one host).
func (s *Server) leaderID() string {
	host, _ := os.Hostname()
	return host + "_" + s.apiAddr
}

// identityFor returns the admin's client configuration with a client
// certificate for user and groups, kept in the PKI dir under file.
func (s *Server) identityFor(file, user string, groups []string) (*rest.Config, error) {
	return identity(s.adminConfig, s.ca, s.pkiDir, file, user, groups)
}

// controllerManager runs the controllers Config.Controllers selects.
func (s *Server) controllerManager() (func(context.Context) error, error) {
	cfg, err := s.identityFor("controller-manager", auth.UserControllerManager, nil)
	if err != nil {
		return nil, err
	}
	mgr, err := controllers.NewManager(controllers.Config{
		RESTConfig:     cfg,
		Controllers:    s.cfg.Controllers,
		Known:          all.Controllers(),
		Workers:        s.cfg.ControllerWorkers,
		QPS:            s.cfg.ControllerQPS,
		Burst:          s.cfg.ControllerBurst,
		LeaderElect:    s.cfg.LeaderElect,
		Identity:       s.leaderID(),
		Logger:         s.log.With("component", "controller-manager"),
		LeaderElection: s.cfg.LeaderElection,
		RootCA:         s.ca.CertPEM,
		ClusterSigner:  s.ca,
	})
	if err != nil {
		return nil, err
	}
	return mgr.Start, nil
}

// scheduler runs the default-scheduler.
func (s *Server) scheduler() (func(context.Context) error, error) {
	cfg, err := s.identityFor("scheduler", auth.UserScheduler, nil)
	if err != nil {
		return nil, err
	}
	sched, err := scheduler.New(scheduler.Config{
		RESTConfig:     cfg,
		LeaderElect:    s.cfg.LeaderElect,
		Identity:       s.leaderID(),
		Logger:         s.log.With("component", "scheduler"),
		LeaderElection: s.cfg.LeaderElection,
	})
	if err != nil {
		return nil, err
	}
	return sched.Start, nil
}

// metricsServer feeds the API server's metrics.k8s.io provider, after
// installing its RBAC as the admin.
func (s *Server) metricsServer() (func(context.Context) error, error) {
	cfg, err := s.identityFor("metrics-server", metricsapi.User, nil)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		admin, err := kubernetes.NewForConfig(s.adminConfig)
		if err != nil {
			return fmt.Errorf("metrics-server rbac: %w", err)
		}
		if err := metricsapi.EnsureRBAC(ctx, admin); err != nil {
			return err
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return fmt.Errorf("metrics-server client: %w", err)
		}
		return s.metrics.Start(ctx, cs)
	}, nil
}

// trailRBAC installs the trail's reader role, aggregated into view, edit
// and admin.
func (s *Server) trailRBAC() (func(context.Context) error, error) {
	return func(ctx context.Context) error {
		admin, err := kubernetes.NewForConfig(s.adminConfig)
		if err != nil {
			return fmt.Errorf("trail rbac: %w", err)
		}
		if err := trail.EnsureRBAC(ctx, admin); err != nil {
			return err
		}
		<-ctx.Done()
		return nil
	}, nil
}

// leadMachines builds the machines now (an error stops minikd, as
// without --leader-elect) and runs them, each as an optional part, while
// this minikd holds NodesLease.
func (s *Server) leadMachines(machines []client) (func(context.Context) error, error) {
	parts := make([]component, len(machines))
	for i, m := range machines {
		run, err := m.build()
		if err != nil {
			return nil, err
		}
		parts[i] = component{name: m.name, optional: true, start: func(ctx context.Context, ready func()) error {
			ready()
			return run(ctx)
		}}
	}
	cs, err := kubernetes.NewForConfig(s.adminConfig)
	if err != nil {
		return nil, fmt.Errorf("nodes leader client: %w", err)
	}
	log := s.log.With("component", "nodes-leader")
	return func(ctx context.Context) error {
		return leaderelect.Run(ctx, cs, NodesLease, s.leaderID(), s.cfg.LeaderElection, log, func(ctx context.Context) error {
			return supervise(ctx, parts, log)
		})
	}, nil
}

// networkPolicy is the network plugin's policy engine (internal/netpol),
// which the nodes ask before a pod's connection is made or taken and the
// Service proxy before it forwards one. It reads the cluster as the
// Service proxy's identity, whose role it ensures first.
func (s *Server) networkPolicy() (func(context.Context) error, error) {
	cfg, err := s.identityFor("service-proxy", dataplane.UserServiceProxy, []string{dataplane.GroupDataPlane})
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("network policy client: %w", err)
	}
	s.netpol = netpol.New(cs)
	return func(ctx context.Context) error {
		admin, err := kubernetes.NewForConfig(s.adminConfig)
		if err != nil {
			return fmt.Errorf("network policy rbac: %w", err)
		}
		if err := dataplane.EnsureRBAC(ctx, admin); err != nil {
			return err
		}
		return s.netpol.Run(ctx)
	}, nil
}

// networkPolicyEngine is the policy engine as the nodes and the data
// plane take it: none when the network-policy part does not run.
func (s *Server) networkPolicyEngine() interface {
	Allowed(ctx context.Context, src, dst netip.Addr, port int32, proto string) bool
} {
	if s.netpol == nil {
		return nil
	}
	return s.netpol
}

// NodesLease is the Lease in kube-system whose holder runs the simulated
// nodes and the data plane when several minikd share one etcd
// (--leader-elect): on failover the new holder's nodes take over the
// Nodes and the pods bound to them, as kubelets restarted on the same
// machines would.
const NodesLease = "minik-nodes"

// dataPlane is the Service proxy and the Ingress/Gateway proxy, with their
// identities; their RBAC roles are installed with the admin's credentials,
// as an add-on's manifest would be.
func (s *Server) dataPlane() (func(context.Context) error, error) {
	proxyCfg, err := s.identityFor("service-proxy", dataplane.UserServiceProxy, []string{dataplane.GroupDataPlane})
	if err != nil {
		return nil, err
	}
	ingressCfg, err := s.identityFor("ingress-controller", dataplane.UserIngressController, []string{dataplane.GroupDataPlane})
	if err != nil {
		return nil, err
	}
	pool, err := s.loadBalancerPool()
	if err != nil {
		return nil, err
	}
	dp, err := dataplane.New(dataplane.Config{
		RESTConfig: proxyCfg, IngressRESTConfig: ingressCfg,
		ServiceProxy: s.cfg.ServiceProxy, NodePortAddress: s.cfg.NodePortAddress,
		IngressHTTP: s.cfg.IngressHTTP, IngressHTTPS: s.cfg.IngressHTTPS,
		IngressMode: s.cfg.IngressMode, Logger: s.log.With("component", "dataplane"),
		Reserved: s.dnsReserved(), LoadBalancerPool: pool, NetworkPolicy: s.networkPolicyEngine(),
	})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		cs, err := kubernetes.NewForConfig(s.adminConfig)
		if err != nil {
			return fmt.Errorf("dataplane rbac: %w", err)
		}
		if err := dataplane.EnsureRBAC(ctx, cs); err != nil {
			return err
		}
		return dp.Start(ctx)
	}, nil
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
func (s *Server) nodes() (func(context.Context) error, error) {
	policy, err := runtime.ParseImagePolicy(s.cfg.ImagePolicy)
	if err != nil {
		return nil, fmt.Errorf("--image-policy: %w", err)
	}
	var templates []corev1.Node
	if s.cfg.NodeConfig != "" {
		if templates, err = nodeagent.LoadNodeTemplates(s.cfg.NodeConfig); err != nil {
			return nil, err
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
		FirstBlock:  s.cfg.NodeFirstBlock,
		DRADevices:  s.cfg.DRADevices,
		Network:     s.networkPolicyEngine(),
		AdminConfig: s.adminConfig,
		// The kubelet's --cluster-dns, --cluster-domain, --resolv-conf.
		ClusterDNS:    []string{s.dnsIP.String()},
		ClusterDomain: s.cfg.ClusterDomain,
		ResolvConf:    s.cfg.ResolvConf,
		Logger:        s.log.With("component", "nodes"),
		ClientConfig: func(node string) (*rest.Config, error) {
			kp, err := s.ca.SignClient("system:node:"+node, []string{auth.GroupNodes}, 0)
			if err != nil {
				return nil, fmt.Errorf("credential for node %s: %w", node, err)
			}
			c := rest.CopyConfig(s.adminConfig)
			c.CertData, c.KeyData = kp.CertPEM, kp.KeyPEM
			return c, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return pool.Start, nil
}
