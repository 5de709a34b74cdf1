package main

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"minik/internal/api"
	"minik/internal/controllers"
	"minik/internal/server"
)

// bindServerFlags binds minikd's flags to the fields of cfg they set,
// with kube's flag names and defaults where kube has them.
func bindServerFlags(f *pflag.FlagSet, cfg *server.Config) {
	f.StringVar(&cfg.DataDir, "data-dir", server.DefaultDataDir(), "directory of etcd's data, the certificates and the kubeconfig")
	f.StringVar(&cfg.Listen, "listen", "", "address the API server listens on (port 0 picks a free one); default: the cluster's host address 127.0.<slot>.1 on 6443 while that is free, else a free port")
	f.StringVar(&cfg.ClusterName, "cluster-name", "", `the cluster's name in its kubeconfig (cluster and context; the user is <name>-admin); default: "minik" for the first cluster on the host, "minik-<slot>" for the others, kept in the data dir`)
	f.BoolVar(&cfg.KubeconfigMerge, "kubeconfig-merge", false, "also add the cluster to your kubeconfig (KUBECONFIG, else ~/.kube/config) as the current context, as kind does; removed again on a clean stop")
	f.StringSliceVar(&cfg.EtcdServers, "etcd-servers", nil, "comma-separated client URLs of an external etcd cluster (no embedded etcd starts)")

	f.StringSliceVar(&cfg.Controllers, "controllers", []string{"*"}, "controllers to run: '*' for all, 'name' to enable one, '-name' to disable one")
	f.IntVar(&cfg.ControllerWorkers, "controller-workers", 5, "workers per controller")
	f.Float32Var(&cfg.ControllerQPS, "controller-qps", controllers.DefaultQPS, "queries per second each controller's API client may send (each has its own limiter, as kube-controller-manager's --kube-api-qps); negative for no limit")
	f.IntVar(&cfg.ControllerBurst, "controller-burst", controllers.DefaultBurst, "burst of each controller's API client")
	f.BoolVar(&cfg.LeaderElect, "leader-elect", false, "run controllers, scheduler and the nodes with the data plane only while holding their Lease (for several minikd sharing one etcd)")
	f.DurationVar(&cfg.LeaderElection.LeaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long candidates wait after the leader's last renewal before taking over")
	f.DurationVar(&cfg.LeaderElection.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader tries to renew before it stops leading")
	f.DurationVar(&cfg.LeaderElection.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "how often candidates try to take the lease and the leader renews it")

	f.StringVar(&cfg.ServiceClusterIPRange, "service-cluster-ip-range", "", "CIDR of Service cluster IPs; a loopback block makes ClusterIPs reachable from the host (keep it clear of the nodes' pod ranges); default: the cluster's slot of "+api.DefaultServiceClusterIPRange+", a /20 (127.96.0.0/20 for the first cluster on the host)")
	f.StringVar(&cfg.NodePortAddress, "node-port-address", "", "host address NodePort Services answer on; default: the cluster's host address (127.0.0.1 for the first cluster on the host)")
	f.StringVar(&cfg.ServiceNodePortRange, "service-node-port-range", api.DefaultServiceNodePortRange, "port range of NodePort Services (served on 127.0.0.1)")
	f.BoolVar(&cfg.ServiceProxy, "service-proxy", true, "run the Service proxy: every ClusterIP:port and node port answers, forwarding to ready endpoints")
	f.StringVar(&cfg.IngressHTTP, "ingress-http", "", "address of the Ingress/Gateway HTTP proxy ('none': no proxy); default: the cluster's host address on 18080 while free, else a free port")
	f.StringVar(&cfg.IngressHTTPS, "ingress-https", "", "address of the Ingress/Gateway HTTPS proxy ('none': no proxy); default: the cluster's host address on 18443 while free, else a free port")
	f.StringVar(&cfg.IngressMode, "ingress-mode", "service", "how the Ingress/Gateway proxy reaches a Service: 'service' (its ClusterIP, through the Service proxy) or 'direct' (its ready endpoints)")
	f.StringVar(&cfg.LoadBalancerPool, "load-balancer-pool", "", "CIDR LoadBalancer Services get their address from ('none': they stay pending); default: the /24 of the node port address (127.0.<slot>.0/24)")

	f.IntVar(&cfg.Nodes, "nodes", 3, "simulated nodes to run (minik-node-1 …); 0 for none")
	f.IntVar(&cfg.DRADevices, "dra-devices", 2, "devices each node's simulated DRA driver (gpu.minik.io, DeviceClass gpu.minik.io) publishes in its ResourceSlice; 0 for none")
	f.StringVar(&cfg.NodeConfig, "node-config", "", "file of Node templates (YAML) giving the nodes labels, taints, capacity and nodeInfo; node i takes template (i-1) mod count")
	f.StringVar(&cfg.ImagePolicy, "image-policy", "catalog", "simulated registry: 'catalog' (known images pull only their known tags, others pull fine) or 'strict' (only the catalog pulls)")
	f.Float64Var(&cfg.SimulationSpeed, "simulation-speed", 1, "divides the nodes' simulated durations (pulls, back-offs, probe periods, sleeps in scripts); 10 runs ten times faster")
	f.IntVar(&cfg.KubeletPort, "kubelet-port", 10250, "port of each node's endpoint (container logs) on its loopback address")

	f.StringVar(&cfg.TokenAuthFile, "token-auth-file", "", "static bearer tokens, kube's CSV format: token,user,uid,\"group1,group2\"")
	f.BoolVar(&cfg.AnonymousAuth, "anonymous-auth", false, "treat requests without credentials as system:anonymous (authorized by RBAC) instead of answering 401 outside /healthz, /livez, /readyz and /version")
	f.StringVar(&cfg.AuthorizationMode, "authorization-mode", server.AuthorizationNodeRBAC, "'Node,RBAC' (the node authorizer, then RBAC) or 'AlwaysAllow' (no authorization: for benchmarks)")
	f.StringVar(&cfg.AuditPolicyFile, "audit-policy", "", "audit.k8s.io/v1 Policy file (default: every request at Metadata); events go to <data-dir>/audit.log")

	cfg.MaxRequestsInFlight, cfg.MaxMutatingRequestsInFlight = server.DefaultMaxRequestsInFlight, server.DefaultMaxMutatingRequestsInFlight
	f.Var((*inflightLimit)(&cfg.MaxRequestsInFlight), "max-requests-inflight", "read-only requests served at once; one more gets 429 (watches, logs and system:masters are spared); 0 for no limit")
	f.Var((*inflightLimit)(&cfg.MaxMutatingRequestsInFlight), "max-mutating-requests-inflight", "mutating requests served at once; one more gets 429; 0 for no limit")
	f.DurationVar(&cfg.RequestTimeout, "request-timeout", api.DefaultRequestTimeout, "time after which a request that is not long-running (not a watch, log, exec or proxy) is answered 504")

	f.StringVar(&cfg.ClusterDNS, "cluster-dns", "", "ClusterIP of the kube-dns Service, the nameserver pods get (the kubelet's --cluster-dns); default: the tenth address of the Service range, as kubeadm chooses")
	f.StringVar(&cfg.ClusterDomain, "cluster-domain", "cluster.local", "the cluster's DNS domain (the kubelet's --cluster-domain)")
	f.StringVar(&cfg.DNSListen, "dns-listen", server.DNSAuto, "where minikd's DNS server answers, UDP and TCP: 'auto' (the kube-dns ClusterIP on port 53, a free port when 53 cannot be had), host:port, or 'none' (no DNS server)")
	f.StringVar(&cfg.DNSForward, "dns-forward", "/etc/resolv.conf", "resolv.conf whose nameservers answer names outside the cluster domain ('none': such queries are refused)")
	f.StringVar(&cfg.ResolvConf, "resolv-conf", "/etc/resolv.conf", "the nodes' resolver file, the base of pods' resolv.conf with dnsPolicy Default (the kubelet's --resolv-conf); empty for none")

	f.Var((*negatedBool)(&cfg.NoWatchCache), "watch-cache", "serve gets, lists and watches from a watch cache per resource (one etcd watch each) instead of etcd")
	f.Lookup("watch-cache").NoOptDefVal = "true"
	f.Var((*watchCacheSizes)(&cfg.WatchCacheSizes), "watch-cache-sizes", "events kept by a resource's watch cache, as resource[.group]#size (default 1024 each)")
}

// inflightLimit is an in-flight limit flag: kube's 0 ("no limit") is
// server.Config's negative.
type inflightLimit int

func (l *inflightLimit) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return err
	}
	if n == 0 {
		n = -1
	}
	*l = inflightLimit(n)
	return nil
}

func (l *inflightLimit) String() string { return strconv.Itoa(max(int(*l), 0)) }

func (l *inflightLimit) Type() string { return "int" }

// negatedBool is a bool flag setting a field that says the opposite
// (--watch-cache sets Config.NoWatchCache).
type negatedBool bool

func (b *negatedBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*b = negatedBool(!v)
	return nil
}

func (b *negatedBool) String() string { return strconv.FormatBool(!bool(*b)) }

func (b *negatedBool) Type() string { return "bool" }

// IsBoolFlag lets the flag go without a value.
func (b *negatedBool) IsBoolFlag() bool { return true }

// watchCacheSizes is --watch-cache-sizes: resource[.group]#size, comma
// separated, keyed by the resource's name (its name in etcd keys).
type watchCacheSizes map[string]int

func (w *watchCacheSizes) Set(s string) error {
	if *w == nil {
		*w = map[string]int{}
	}
	for _, spec := range strings.Split(s, ",") {
		res, n, ok := strings.Cut(spec, "#")
		size, err := strconv.Atoi(n)
		if !ok || res == "" || err != nil || size < 1 {
			return fmt.Errorf("%q: want resource[.group]#size with a positive size", spec)
		}
		res, _, _ = strings.Cut(res, ".")
		(*w)[res] = size
	}
	return nil
}

func (w *watchCacheSizes) String() string {
	if len(*w) == 0 {
		return ""
	}
	var specs []string
	for res, size := range *w {
		specs = append(specs, res+"#"+strconv.Itoa(size))
	}
	return "[" + strings.Join(specs, ",") + "]"
}

func (w *watchCacheSizes) Type() string { return "strings" }

// logOptions is --log-level, of minikd and minikd agent.
type logOptions struct{ level string }

func (o *logOptions) bind(f *pflag.FlagSet) {
	f.StringVar(&o.level, "log-level", "info", "log level: debug, info, warn or error")
}

// logger returns the logger writing text to stderr at the chosen level,
// and makes it klog's too: what client-go (reflectors, leader election,
// events) logs goes through the same handler, in the same format.
func (o *logOptions) logger() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", o.level, err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	klog.SetSlogLogger(logger)
	return logger, nil
}
