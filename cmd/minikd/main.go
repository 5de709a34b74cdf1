// Command minikd is minik's control plane: an embedded etcd and the
// Kubernetes API server in one process.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"minik/internal/api"
	"minik/internal/controllers"
	"minik/internal/leaderelect"
	"minik/internal/server"
	"minik/internal/version"
)

func main() {
	if err := newCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	var (
		dataDir, listen, etcdServers, logLevel, clusterName string
		ctrls                                               []string
		workers, ctrlBurst                                  int
		ctrlQPS                                             float64
		leaderElect, kubeconfigMerge                        bool
		election                                            leaderelect.Timing
		// network holds the Service and data-plane flags.
		network server.Config
		// nodes holds the simulated nodes' flags.
		nodes server.Config
		// authn holds the authentication and audit flags.
		authn server.Config
		// limits holds the in-flight limits and the request timeout.
		limits server.Config
		// dns holds the cluster DNS flags.
		dns server.Config
		// watchCache and watchCacheSizes are --watch-cache and
		// --watch-cache-sizes.
		watchCache      bool
		watchCacheSizes []string
	)
	cmd := &cobra.Command{
		Use:           "minikd",
		Short:         "minik's local Kubernetes control plane",
		Version:       version.Kubernetes + "+minik." + version.Minik,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level %q: %w", logLevel, err)
			}
			logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
			cfg := server.Config{
				DataDir: dataDir, Listen: listen, Out: os.Stdout, Logger: logger,
				AutoNetwork: true, ClusterName: clusterName, KubeconfigMerge: kubeconfigMerge,
				Controllers: ctrls, ControllerWorkers: workers, LeaderElect: leaderElect, LeaderElection: election,
				ControllerQPS: float32(ctrlQPS), ControllerBurst: ctrlBurst,
			}
			if etcdServers != "" {
				cfg.EtcdServers = strings.Split(etcdServers, ",")
			}
			cfg.ServiceClusterIPRange, cfg.ServiceNodePortRange = network.ServiceClusterIPRange, network.ServiceNodePortRange
			cfg.ServiceProxy, cfg.IngressMode, cfg.NodePortAddress = network.ServiceProxy, network.IngressMode, network.NodePortAddress
			cfg.IngressHTTP, cfg.IngressHTTPS = network.IngressHTTP, network.IngressHTTPS
			cfg.Nodes, cfg.NodeConfig, cfg.ImagePolicy = nodes.Nodes, nodes.NodeConfig, nodes.ImagePolicy
			cfg.SimulationSpeed, cfg.KubeletPort = nodes.SimulationSpeed, nodes.KubeletPort
			cfg.TokenAuthFile, cfg.AnonymousAuth, cfg.AuditPolicyFile = authn.TokenAuthFile, authn.AnonymousAuth, authn.AuditPolicyFile
			cfg.AuthorizationMode = authn.AuthorizationMode
			// kube's 0 means no limit; server.Config's zero is the default.
			cfg.MaxRequestsInFlight, cfg.MaxMutatingRequestsInFlight = noLimitIfZero(limits.MaxRequestsInFlight), noLimitIfZero(limits.MaxMutatingRequestsInFlight)
			cfg.RequestTimeout = limits.RequestTimeout
			cfg.ClusterDNS, cfg.ClusterDomain, cfg.DNSListen = dns.ClusterDNS, dns.ClusterDomain, dns.DNSListen
			cfg.DNSForward, cfg.ResolvConf, cfg.LoadBalancerPool = noneIsEmpty(dns.DNSForward), dns.ResolvConf, network.LoadBalancerPool
			cfg.NoWatchCache = !watchCache
			sizes, err := parseWatchCacheSizes(watchCacheSizes)
			if err != nil {
				return err
			}
			cfg.WatchCacheSizes = sizes
			s, err := server.New(cfg)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return s.Start(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data-dir", server.DefaultDataDir(), "directory of etcd's data, the certificates and the kubeconfig")
	f.StringVar(&listen, "listen", "", "address the API server listens on (port 0 picks a free one); default: the cluster's host address 127.0.<slot>.1 on 6443 while that is free, else a free port")
	f.StringVar(&clusterName, "cluster-name", "", `the cluster's name in its kubeconfig (cluster and context; the user is <name>-admin); default: "minik" for the first cluster on the host, "minik-<slot>" for the others, kept in the data dir`)
	f.BoolVar(&kubeconfigMerge, "kubeconfig-merge", false, "also add the cluster to your kubeconfig (KUBECONFIG, else ~/.kube/config) as the current context, as kind does; removed again on a clean stop")
	f.StringVar(&etcdServers, "etcd-servers", "", "comma-separated client URLs of an external etcd cluster (no embedded etcd starts)")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.StringSliceVar(&ctrls, "controllers", []string{"*"}, "controllers to run: '*' for all, 'name' to enable one, '-name' to disable one")
	f.IntVar(&workers, "controller-workers", 5, "workers per controller")
	f.Float64Var(&ctrlQPS, "controller-qps", controllers.DefaultQPS, "queries per second each controller's API client may send (each has its own limiter, as kube-controller-manager's --kube-api-qps); negative for no limit")
	f.IntVar(&ctrlBurst, "controller-burst", controllers.DefaultBurst, "burst of each controller's API client")
	f.BoolVar(&leaderElect, "leader-elect", false, "run controllers, scheduler and the nodes with the data plane only while holding their Lease (for several minikd sharing one etcd)")
	f.DurationVar(&election.LeaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long candidates wait after the leader's last renewal before taking over")
	f.DurationVar(&election.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader tries to renew before it stops leading")
	f.DurationVar(&election.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "how often candidates try to take the lease and the leader renews it")
	f.StringVar(&network.ServiceClusterIPRange, "service-cluster-ip-range", "", "CIDR of Service cluster IPs; a loopback block makes ClusterIPs reachable from the host (keep it clear of the nodes' pod ranges); default: the cluster's slot of "+api.DefaultServiceClusterIPRange+", a /20 (127.96.0.0/20 for the first cluster on the host)")
	f.StringVar(&network.NodePortAddress, "node-port-address", "", "host address NodePort Services answer on; default: the cluster's host address (127.0.0.1 for the first cluster on the host)")
	f.StringVar(&network.ServiceNodePortRange, "service-node-port-range", api.DefaultServiceNodePortRange, "port range of NodePort Services (served on 127.0.0.1)")
	f.BoolVar(&network.ServiceProxy, "service-proxy", true, "run the Service proxy: every ClusterIP:port and node port answers, forwarding to ready endpoints")
	f.StringVar(&network.IngressHTTP, "ingress-http", "", "address of the Ingress/Gateway HTTP proxy ('none': no proxy); default: the cluster's host address on 18080 while free, else a free port")
	f.StringVar(&network.IngressHTTPS, "ingress-https", "", "address of the Ingress/Gateway HTTPS proxy ('none': no proxy); default: the cluster's host address on 18443 while free, else a free port")
	f.StringVar(&network.IngressMode, "ingress-mode", "service", "how the Ingress/Gateway proxy reaches a Service: 'service' (its ClusterIP, through the Service proxy) or 'direct' (its ready endpoints)")
	f.IntVar(&nodes.Nodes, "nodes", 3, "simulated nodes to run (minik-node-1 …); 0 for none")
	f.StringVar(&nodes.NodeConfig, "node-config", "", "file of Node templates (YAML) giving the nodes labels, taints, capacity and nodeInfo; node i takes template (i-1) mod count")
	f.StringVar(&nodes.ImagePolicy, "image-policy", "catalog", "simulated registry: 'catalog' (known images pull only their known tags, others pull fine) or 'strict' (only the catalog pulls)")
	f.Float64Var(&nodes.SimulationSpeed, "simulation-speed", 1, "divides the nodes' simulated durations (pulls, back-offs, probe periods, sleeps in scripts); 10 runs ten times faster")
	f.IntVar(&nodes.KubeletPort, "kubelet-port", 10250, "port of each node's endpoint (container logs) on its loopback address")
	f.StringVar(&authn.TokenAuthFile, "token-auth-file", "", "static bearer tokens, kube's CSV format: token,user,uid,\"group1,group2\"")
	f.BoolVar(&authn.AnonymousAuth, "anonymous-auth", false, "treat requests without credentials as system:anonymous (authorized by RBAC) instead of answering 401 outside /healthz, /livez, /readyz and /version")
	f.StringVar(&authn.AuthorizationMode, "authorization-mode", server.AuthorizationNodeRBAC, "'Node,RBAC' (the node authorizer, then RBAC) or 'AlwaysAllow' (no authorization: for benchmarks)")
	f.StringVar(&authn.AuditPolicyFile, "audit-policy", "", "audit.k8s.io/v1 Policy file (default: every request at Metadata); events go to <data-dir>/audit.log")
	f.IntVar(&limits.MaxRequestsInFlight, "max-requests-inflight", server.DefaultMaxRequestsInFlight, "read-only requests served at once; one more gets 429 (watches, logs and system:masters are spared); 0 for no limit")
	f.IntVar(&limits.MaxMutatingRequestsInFlight, "max-mutating-requests-inflight", server.DefaultMaxMutatingRequestsInFlight, "mutating requests served at once; one more gets 429; 0 for no limit")
	f.DurationVar(&limits.RequestTimeout, "request-timeout", api.DefaultRequestTimeout, "time after which a request that is not long-running (not a watch, log, exec or proxy) is answered 504")
	f.StringVar(&dns.ClusterDNS, "cluster-dns", "", "ClusterIP of the kube-dns Service, the nameserver pods get (the kubelet's --cluster-dns); default: the tenth address of the Service range, as kubeadm chooses")
	f.StringVar(&dns.ClusterDomain, "cluster-domain", "cluster.local", "the cluster's DNS domain (the kubelet's --cluster-domain)")
	f.StringVar(&dns.DNSListen, "dns-listen", server.DNSAuto, "where minikd's DNS server answers, UDP and TCP: 'auto' (the kube-dns ClusterIP on port 53, a free port when 53 cannot be had), host:port, or 'none' (no DNS server)")
	f.StringVar(&dns.DNSForward, "dns-forward", "/etc/resolv.conf", "resolv.conf whose nameservers answer names outside the cluster domain ('none': such queries are refused)")
	f.StringVar(&dns.ResolvConf, "resolv-conf", "/etc/resolv.conf", "the nodes' resolver file, the base of pods' resolv.conf with dnsPolicy Default (the kubelet's --resolv-conf); empty for none")
	f.StringVar(&network.LoadBalancerPool, "load-balancer-pool", "", "CIDR LoadBalancer Services get their address from ('none': they stay pending); default: the /24 of the node port address (127.0.<slot>.0/24)")
	f.BoolVar(&watchCache, "watch-cache", true, "serve gets, lists and watches from a watch cache per resource (one etcd watch each) instead of etcd")
	f.StringSliceVar(&watchCacheSizes, "watch-cache-sizes", nil, "events kept by a resource's watch cache, as resource[.group]#size (default 1024 each)")
	cmd.AddCommand(newAgentCommand())
	cmd.AddCommand(newKubeconfigCommand())
	cmd.AddCommand(newEtcdMemberCommand())
	return cmd
}

// noneIsEmpty turns a file flag's "none" into "".
func noneIsEmpty(s string) string {
	if s == server.NoAddress {
		return ""
	}
	return s
}

// parseWatchCacheSizes reads --watch-cache-sizes: resource[.group]#size,
// keyed by the resource's name (its name in etcd keys).
func parseWatchCacheSizes(specs []string) (map[string]int, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	sizes := map[string]int{}
	for _, spec := range specs {
		res, n, ok := strings.Cut(spec, "#")
		size, err := strconv.Atoi(n)
		if !ok || res == "" || err != nil || size < 1 {
			return nil, fmt.Errorf("invalid value of --watch-cache-sizes: %q: want resource[.group]#size with a positive size", spec)
		}
		res, _, _ = strings.Cut(res, ".")
		sizes[res] = size
	}
	return sizes, nil
}

// noLimitIfZero turns a limit flag's 0 (kube's "no limit") into
// server.Config's negative.
func noLimitIfZero(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
