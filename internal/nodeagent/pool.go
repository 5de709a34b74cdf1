package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"minik/internal/nodeagent/dra"
	"minik/internal/nodeagent/runtime"
)

// Pool runs simulated nodes in this process, each a kubelet of its own
// with its own identity, Lease, pods, endpoint and container runtime.
type Pool struct {
	cfg   Config
	ready chan struct{}
}

// New validates cfg, fills defaults and returns a pool ready to Start.
func New(cfg Config) (*Pool, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Pool{cfg: cfg, ready: make(chan struct{})}, nil
}

// Names are the pool's node names.
func (p *Pool) Names() []string {
	out := make([]string, p.cfg.Nodes)
	for i := range out {
		out[i] = p.cfg.nodeName(i + 1)
	}
	return out
}

// Ready is closed once every node is registered and watches its pods.
func (p *Pool) Ready() <-chan struct{} { return p.ready }

// Start runs the nodes until ctx is done, then stops them: their
// containers end, their Leases are no longer renewed (the node lifecycle
// controller then marks them NotReady), and their Node objects stay. It
// returns an error when a node cannot start (its address is taken, its
// credentials cannot be made).
func (p *Pool) Start(ctx context.Context) error {
	if p.cfg.Nodes == 0 {
		close(p.ready)
		<-ctx.Done()
		return nil
	}
	nodes, err := p.prepare(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, n := range nodes {
		defer n.startEvents(ctx)()
	}
	if !p.cfg.WatchPerNode {
		stop, err := sharePodWatch(ctx, nodes)
		if err != nil {
			for _, n := range nodes {
				n.ln.Close()
			}
			return err
		}
		defer stop()
	}
	var wg sync.WaitGroup
	var readyWG sync.WaitGroup
	errs := make(chan error, len(nodes))
	readyWG.Add(len(nodes))
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			once := sync.Once{}
			markReady := func() { once.Do(readyWG.Done) }
			defer markReady()
			if err := n.run(ctx, markReady); err != nil && ctx.Err() == nil {
				errs <- fmt.Errorf("node %s: %w", n.name, err)
				cancel()
			}
		}()
	}
	go func() {
		readyWG.Wait()
		if ctx.Err() == nil {
			close(p.ready)
		}
	}()
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// prepare gives every node its identity, address block and listener. A
// node that exists keeps its pod CIDR; a new one takes the first free
// block from its index on.
func (p *Pool) prepare(ctx context.Context) ([]*node, error) {
	cfg := &p.cfg
	first, err := cfg.ClientConfig(cfg.nodeName(1))
	if err != nil {
		return nil, fmt.Errorf("credentials of node %s: %w", cfg.nodeName(1), err)
	}
	cs, err := kubernetes.NewForConfig(first)
	if err != nil {
		return nil, fmt.Errorf("node client: %w", err)
	}
	var admin kubernetes.Interface
	if cfg.AdminConfig != nil {
		if admin, err = kubernetes.NewForConfig(cfg.AdminConfig); err != nil {
			return nil, fmt.Errorf("node labeller client: %w", err)
		}
	}
	// Which blocks registered nodes hold; a node of ours keeps its own.
	held := map[string]int{}
	taken := map[int]bool{}
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err == nil {
			for _, n := range list.Items {
				if k := blockOf(n.Spec.PodCIDR); k > 0 {
					held[n.Name], taken[k] = k, true
				}
			}
			break
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		cfg.Logger.Warn("listing nodes failed, retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
	var nodes []*node
	fail := func(err error) ([]*node, error) {
		for _, n := range nodes {
			n.ln.Close()
		}
		return nil, err
	}
	next := cfg.FirstBlock
	for i := 1; i <= cfg.Nodes; i++ {
		name := cfg.nodeName(i)
		var ln net.Listener
		k, own := held[name]
		if own {
			if ln, err = p.listen(k); err != nil {
				return fail(fmt.Errorf("node %s: its address %s: %w", name, nodeIP(k), err))
			}
		} else {
			for k = max(next, cfg.FirstBlock+i-1); ; k++ {
				if k > maxBlock {
					return fail(fmt.Errorf("node %s: no free address block left", name))
				}
				if taken[k] {
					continue
				}
				if ln, err = p.listen(k); err == nil {
					break
				}
				if !errors.Is(err, syscall.EADDRINUSE) {
					return fail(fmt.Errorf("node %s: listen on %s: %w", name, nodeIP(k), err))
				}
			}
			taken[k] = true
			next = k + 1
		}
		rc, err := cfg.ClientConfig(name)
		if err != nil {
			ln.Close()
			return fail(fmt.Errorf("credentials of node %s: %w", name, err))
		}
		rc.QPS, rc.Burst = cfg.ClientQPS, cfg.ClientBurst
		rc.UserAgent = "kubelet/" + KubeletVersion + " (minik)"
		ncs, err := kubernetes.NewForConfig(rc)
		if err != nil {
			ln.Close()
			return fail(fmt.Errorf("node %s client: %w", name, err))
		}
		n := &node{
			cfg: cfg, index: i, name: name, ip: nodeIP(k), cidr: blockPrefix(k), ln: ln, cs: ncs, admin: admin,
			log:     cfg.Logger.With("node", name),
			dir:     filepath.Join(cfg.DataDir, name),
			ref:     &corev1.ObjectReference{Kind: "Node", Name: name, UID: types.UID(name)},
			workers: map[types.UID]*podWorker{}, byName: map[string]*podWorker{}, ipsUsed: map[netip.Addr]types.UID{},
		}
		if len(cfg.Templates) > 0 {
			n.template = &cfg.Templates[(i-1)%len(cfg.Templates)]
		}
		n.dialer = &net.Dialer{LocalAddr: &net.TCPAddr{IP: n.ip.AsSlice()}, Timeout: 5 * time.Second}
		n.http = &http.Client{
			Transport:     &http.Transport{DialContext: n.dialer.DialContext, DisableKeepAlives: true},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
		n.rt = runtime.New(runtime.Config{
			Network: cfg.Network,
			Rules:   cfg.Rules, Policy: cfg.ImagePolicy, Clock: cfg.Clock, Speed: cfg.Timing.Speed,
			PullLatency: cfg.Timing.PullLatency, PullBandwidth: cfg.Timing.PullBandwidth, ParallelPulls: cfg.Timing.ParallelPulls,
		})
		if cfg.DRADevices > 0 {
			if n.dra, err = dra.New(dra.Config{NodeName: name, Devices: cfg.DRADevices, Client: ncs, Logger: n.log}); err != nil {
				ln.Close()
				return fail(err)
			}
		}
		nodes = append(nodes, n)
	}
	if cfg.DRADevices > 0 && admin != nil {
		// As the driver's installation would.
		if err := dra.InstallDeviceClass(ctx, admin); err != nil {
			cfg.Logger.Warn("the DRA driver's DeviceClass is not installed", "err", err)
		}
	}
	return nodes, nil
}

// nodeIP is the InternalIP of the node on block k.
func nodeIP(k int) netip.Addr {
	b := blockPrefix(k).Addr().As4()
	b[3] = 1
	return netip.AddrFrom4(b)
}

// listen binds the kubelet endpoint of block k.
func (p *Pool) listen(k int) (net.Listener, error) {
	return net.Listen("tcp", net.JoinHostPort(nodeIP(k).String(), strconv.Itoa(p.cfg.KubeletPort)))
}

// sharePodWatch runs one watch of every pod bound to a node, with the
// first node's client, and hands each pod to its node. It returns a
// function that waits for the watch to stop once ctx is done.
func sharePodWatch(ctx context.Context, nodes []*node) (func(), error) {
	byName := make(map[string]*node, len(nodes))
	for _, n := range nodes {
		byName[n.name] = n
	}
	route := func(obj any) *node {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if pod, ok := obj.(*corev1.Pod); ok {
			return byName[pod.Spec.NodeName]
		}
		return nil
	}
	inf := podInformer(nodes[0].cs, fields.OneTermNotEqualSelector("spec.nodeName", ""))
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if n := route(obj); n != nil {
				n.podChanged(obj)
			}
		},
		UpdateFunc: func(_, obj any) {
			if n := route(obj); n != nil {
				n.podChanged(obj)
			}
		},
		DeleteFunc: func(obj any) {
			if n := route(obj); n != nil {
				n.podRemoved(obj)
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	for _, n := range nodes {
		n.podsSynced = inf.HasSynced
	}
	return func() { <-done }, nil
}
