package nodeagent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/yaml"

	"minik/internal/nodeagent/runtime"
)

// Config configures a pool of simulated nodes.
type Config struct {
	// Nodes is how many nodes to run.
	Nodes int
	// NamePrefix names the nodes <prefix>1 … <prefix>N; empty means
	// "minik-node-".
	NamePrefix string
	// Templates are Node templates (--node-config): node i takes template
	// (i-1) modulo their number. A template's labels, annotations, taints,
	// capacity, allocatable and nodeInfo override the defaults.
	Templates []corev1.Node
	// ClientConfig returns the API client configuration a node acts with:
	// user system:node:<name> in group system:nodes. Required.
	ClientConfig func(nodeName string) (*rest.Config, error)
	// AdminConfig, when set, applies the template labels a kubelet may not
	// set on its own Node (NodeRestriction refuses node-role.kubernetes.io
	// and node-restriction.kubernetes.io labels, and other kubernetes.io
	// ones a kubelet does not own) once the node has registered, as an
	// administrator labels a node. Without it those labels are not
	// applied (a warning says so).
	AdminConfig *rest.Config
	// DataDir holds the nodes' files: <DataDir>/<node>/pods/<namespace>_
	// <pod>_<uid>/<container>/<restartCount>.log. Required.
	DataDir string
	// ImagePolicy decides how images outside the catalog pull
	// (runtime.PolicyCatalog or runtime.PolicyStrict).
	ImagePolicy runtime.ImagePolicy
	// Rules are the runtime's rules; nil means the embedded ones.
	Rules *runtime.Rules
	// Timing is the simulation's timing; zero fields take defaults.
	Timing Timing
	// KubeletPort is the port of each node's endpoint (logs) on its
	// address; zero means 10250.
	KubeletPort int
	// FirstBlock is the address block where the search for a new node's
	// block starts (node i tries FirstBlock+i-1, then the blocks after
	// it); zero means 1. Tests start at a random block, so that clusters
	// of test processes running at once, and pods whose containers
	// outlive a stopped cluster, do not share addresses.
	FirstBlock int
	// Network decides which connections between pods NetworkPolicies let
	// through (internal/netpol); nil lets every one through.
	Network runtime.Network
	// WatchPerNode makes each node watch its own pods (field selector
	// spec.nodeName=<node>), as kubelets do. By default the pool shares one
	// watch of all bound pods (nodes may read every pod), which spares the
	// API server decoding each pod event once per node.
	WatchPerNode bool
	// ClientQPS and ClientBurst bound each node's API client; zero means
	// the kubelet's defaults (50 and 100), a negative QPS no limit.
	ClientQPS   float32
	ClientBurst int
	// ClusterDNS are the nameservers of pods with dnsPolicy ClusterFirst
	// (the kubelet's --cluster-dns: the kube-dns Service's IP); empty
	// falls back to the node's resolvers with a MissingClusterDNS event.
	ClusterDNS []string
	// ClusterDomain is the kubelet's --cluster-domain: pods' search path
	// and FQDNs; empty means none.
	ClusterDomain string
	// ResolvConf is the node's resolver file, the base of pods' (the
	// kubelet's --resolv-conf); empty means none (pods with dnsPolicy
	// Default then get nameserver 127.0.0.1).
	ResolvConf string
	// DRADevices is how many devices each node's simulated DRA driver
	// (gpu.minik.io, package dra) publishes in its ResourceSlice; zero
	// runs no driver (minikd's --dra-devices defaults to 2). With
	// AdminConfig, the pool installs the driver's DeviceClass.
	DRADevices int
	// Clock tells the time; nil means the real clock.
	Clock clock.WithTickerAndDelayedExecution
	// Logger logs; nil means slog.Default().
	Logger *slog.Logger
}

// Timing is the simulation's timing. Durations marked "simulated" are
// divided by Speed; the heartbeats are real time, because the node
// lifecycle controller judges them by its clock.
type Timing struct {
	// Speed divides every simulated duration: 1 is real time, 10 runs ten
	// times faster. Zero means 1.
	Speed float64
	// PullLatency is the fixed part of an image pull (simulated); zero
	// means 300ms. A pull lasts PullLatency + size / PullBandwidth.
	PullLatency time.Duration
	// PullBandwidth is the pull rate in bytes per second; zero means
	// 64 MiB/s (nginx then pulls in about 1.4s).
	PullBandwidth int64
	// SandboxSetup is how long the pod sandbox and its network take
	// (simulated); zero means 150ms.
	SandboxSetup time.Duration
	// ContainerCreate is how long creating a container takes (simulated);
	// zero means 50ms.
	ContainerCreate time.Duration
	// BackOffInitial and BackOffMax bound the back-off of failing
	// containers (CrashLoopBackOff) and pulls (ImagePullBackOff), doubling
	// from the first to the second (simulated); zero means kube's 10s and
	// 5m.
	BackOffInitial, BackOffMax time.Duration
	// SyncRetry is when a pod whose sync failed (CreateContainerConfigError,
	// InvalidImageName) is tried again (simulated); zero means 10s, the
	// kubelet's pod worker back-off.
	SyncRetry time.Duration
	// MountRetryInitial and MountRetryMax bound the back-off of failed
	// volume mounts (simulated); zero means kube's 500ms and 2m2s.
	MountRetryInitial, MountRetryMax time.Duration
	// LeaseDuration is the node Lease's spec.leaseDurationSeconds; zero
	// means 40s.
	LeaseDuration time.Duration
	// LeaseRenewInterval is how often a node renews its Lease (real time);
	// zero means 10s.
	LeaseRenewInterval time.Duration
	// NodeStatusUpdate is how often a node checks its Node's status,
	// posting it when it changed (real time); zero means 10s.
	NodeStatusUpdate time.Duration
	// NodeStatusReport is how often a node posts an unchanged status
	// (real time); zero means 5m.
	NodeStatusReport time.Duration
	// ParallelPulls lets a node pull several images at once (kubelet's
	// serializeImagePulls=false).
	ParallelPulls bool
	// VolumeRefresh is how often a running pod's configMap, secret and
	// projected volumes are rewritten from their sources (simulated);
	// zero means 60s, the kubelet's sync frequency. DownwardAPI volumes
	// follow the pod's labels and annotations at once.
	VolumeRefresh time.Duration
}

// withDefaults fills zero fields.
func (t Timing) withDefaults() Timing {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if t.Speed <= 0 {
		t.Speed = 1
	}
	def(&t.PullLatency, 300*time.Millisecond)
	if t.PullBandwidth <= 0 {
		t.PullBandwidth = 64 << 20
	}
	def(&t.SandboxSetup, 150*time.Millisecond)
	def(&t.ContainerCreate, 50*time.Millisecond)
	def(&t.BackOffInitial, 10*time.Second)
	def(&t.BackOffMax, 5*time.Minute)
	def(&t.SyncRetry, 10*time.Second)
	def(&t.MountRetryInitial, 500*time.Millisecond)
	def(&t.MountRetryMax, 2*time.Minute+2*time.Second)
	def(&t.LeaseDuration, 40*time.Second)
	def(&t.LeaseRenewInterval, 10*time.Second)
	def(&t.NodeStatusUpdate, 10*time.Second)
	def(&t.NodeStatusReport, 5*time.Minute)
	def(&t.VolumeRefresh, time.Minute)
	return t
}

// scale turns a simulated duration into a real one.
func (t Timing) scale(d time.Duration) time.Duration {
	return time.Duration(float64(d) / t.Speed)
}

// Default node shape.
var (
	defaultCapacity = corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("4"),
		corev1.ResourceMemory:           resource.MustParse("8Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	zones = []string{"minik-zone-a", "minik-zone-b", "minik-zone-c"}
)

// Identity of the simulated kubelet and runtime.
const (
	KubeletVersion          = "v1.37.2"
	ContainerRuntimeVersion = "minik://0.1.0"
	osImage                 = "minik simulated node"
	kernelVersion           = "6.8.0-minik"
)

// LoadNodeTemplates reads Node templates: YAML or JSON documents (a
// v1.List or NodeList works too), each a Node.
func LoadNodeTemplates(path string) ([]corev1.Node, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--node-config: %w", err)
	}
	nodes, err := ParseNodeTemplates(data)
	if err != nil {
		return nil, fmt.Errorf("--node-config %s: %w", path, err)
	}
	return nodes, nil
}

// ParseNodeTemplates parses Node templates (see LoadNodeTemplates).
func ParseNodeTemplates(data []byte) ([]corev1.Node, error) {
	var out []corev1.Node
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw map[string]any
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		if raw == nil {
			continue
		}
		if items, ok := raw["items"].([]any); ok {
			for _, it := range items {
				n, err := toNode(it)
				if err != nil {
					return nil, err
				}
				out = append(out, n)
			}
			continue
		}
		n, err := toNode(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("no Node template")
	}
	return out, nil
}

func toNode(v any) (corev1.Node, error) {
	var n corev1.Node
	data, err := yaml.Marshal(v)
	if err != nil {
		return n, err
	}
	if err := yaml.UnmarshalStrict(data, &n); err != nil {
		return n, err
	}
	if n.Kind != "" && n.Kind != "Node" {
		return n, fmt.Errorf("a node template is a Node, not a %s", n.Kind)
	}
	return n, nil
}

// Addresses. Node k (the k-th address block, from 1) owns the loopback
// block 127.<1 + k/256>.<k%256>.0/24: its InternalIP is .1 and its pods
// get .2 to .254, as a node's pod CIDR and bridge would. Blocks stay
// under 127.96.0.0, where Service cluster IPs begin (127.96.0.0/12), and
// off 127.0.0.0/16, where the API server and the Ingress proxy listen:
// 24,320 blocks (nodes). A block whose node address is taken (another
// minikd on the host) is skipped.
const maxBlock = 95*256 - 1

// blockPrefix is the /24 of address block k.
func blockPrefix(k int) netip.Prefix {
	hi := 1 + k/256
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{127, byte(hi), byte(k % 256), 0}), 24)
}

// blockOf returns the block number of a pod CIDR, or 0 when it is not one
// of minik's blocks.
func blockOf(cidr string) int {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || p.Bits() != 24 || !p.Addr().Is4() {
		return 0
	}
	b := p.Addr().As4()
	if b[0] != 127 || b[1] < 1 || b[3] != 0 {
		return 0
	}
	k := int(b[1]-1)*256 + int(b[2])
	if k < 1 || k > maxBlock {
		return 0
	}
	return k
}

// nodeName is the name of node i (from 1).
func (c *Config) nodeName(i int) string { return fmt.Sprintf("%s%d", c.NamePrefix, i) }

// validate checks the configuration and fills defaults, naming the
// offending flag.
func (c *Config) validate() error {
	if c.Nodes < 0 {
		return fmt.Errorf("--nodes %d: must not be negative", c.Nodes)
	}
	if c.Nodes > maxBlock {
		return fmt.Errorf("--nodes %d: at most %d nodes fit in the loopback address plan", c.Nodes, maxBlock)
	}
	if c.DRADevices < 0 {
		return fmt.Errorf("--dra-devices %d: must not be negative", c.DRADevices)
	}
	if c.FirstBlock == 0 {
		c.FirstBlock = 1
	}
	if c.FirstBlock < 1 || c.FirstBlock+c.Nodes-1 > maxBlock {
		return fmt.Errorf("first address block %d: %d nodes from it do not fit in blocks 1 to %d", c.FirstBlock, c.Nodes, maxBlock)
	}
	if c.NamePrefix == "" {
		c.NamePrefix = "minik-node-"
	}
	if strings.ToLower(c.NamePrefix) != c.NamePrefix {
		return fmt.Errorf("--name-prefix %q: node names must be lower case", c.NamePrefix)
	}
	if c.ClientConfig == nil {
		return errors.New("nodeagent: a ClientConfig is required")
	}
	if c.DataDir == "" {
		return errors.New("nodeagent: a DataDir is required")
	}
	if c.ImagePolicy == "" {
		c.ImagePolicy = runtime.PolicyCatalog
	}
	if _, err := runtime.ParseImagePolicy(string(c.ImagePolicy)); err != nil {
		return fmt.Errorf("--image-policy: %w", err)
	}
	if c.Rules == nil {
		c.Rules = runtime.DefaultRules()
	}
	c.Timing = c.Timing.withDefaults()
	if c.KubeletPort == 0 {
		c.KubeletPort = 10250
	}
	if c.ClientQPS == 0 {
		c.ClientQPS = 50
	}
	if c.ClientBurst == 0 {
		c.ClientBurst = 100
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// FastTiming is a timing for tests: simulated time runs 50 times faster
// (a 10s back-off lasts 200ms, a 10s probe period 200ms), heartbeats stay
// real.
func FastTiming() Timing {
	return Timing{Speed: 50}
}
