// Package metricsapi is minik's metrics-server: it serves
// metrics.k8s.io/v1beta1 NodeMetrics and PodMetrics, as metrics-server
// does, from the simulated nodes' kubelet Summary API (/stats/summary on
// each node's endpoint, see nodeagent/stats.go), so that `kubectl top` and
// k9s show the same figures as the nodes.
//
// In kube the group reaches kube-apiserver through an APIService, the
// aggregator proxying to metrics-server. minik has no aggregator yet: the
// API server answers the group's two resources itself as local resources
// (api.LocalResource, registered by Resources), after authentication and
// RBAC like any resource; this package is their provider. It is a client
// of the API with its own identity (User, with the ClusterRole
// system:metrics-server of metrics-server's manifest, EnsureRBAC), whose
// node and pod informers tell which nodes to scrape and which pods the
// figures belong to (labels, for label selectors). The manifest's
// system:aggregated-metrics-reader ClusterRole aggregates get, list and
// watch of the group into view, edit and admin.
//
// Summaries are fetched on demand, every node at once, and reused for
// Config.MaxAge, so that however many requests arrive a node is scraped at
// most once per MaxAge. Until the informers have synced (and when the
// provider does not run) requests get 503 ServiceUnavailable, as an
// unavailable APIService answers. Differences from metrics-server: the
// figures are the summaries' instantaneous rates, not the rate between two
// scrapes, so a pod has metrics from its first scrape; window is always
// Config.Window.
package metricsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/utils/clock"

	"minik/internal/api"
	"minik/internal/registry"
	"minik/internal/syncwait"
	"minik/internal/tables"
)

// GroupVersion is the served group version, metrics.k8s.io/v1beta1.
var GroupVersion = metricsv1beta1.SchemeGroupVersion

// User is the provider's identity, bound to system:metrics-server.
const User = "system:metrics-server"

func init() {
	if err := metricsv1beta1.AddToScheme(api.Scheme); err != nil {
		panic(fmt.Sprintf("metrics.k8s.io types: %v", err))
	}
}

// Defaults of Config.
const (
	// DefaultWindow is metrics-server's --metric-resolution.
	DefaultWindow = 15 * time.Second
	// DefaultMaxAge is how long scraped summaries are reused.
	DefaultMaxAge = time.Second
	// DefaultScrapeTimeout bounds one node's scrape, as metrics-server's
	// --kubelet-request-timeout.
	DefaultScrapeTimeout = 5 * time.Second
)

// maxSummaryBytes bounds a node's summary.
const maxSummaryBytes = 64 << 20

// maxParallelScrapes bounds the nodes scraped at once.
const maxParallelScrapes = 32

// Config configures a Provider.
type Config struct {
	// Window is the window metrics report; zero means DefaultWindow.
	Window time.Duration
	// MaxAge is how long summaries are reused; zero means DefaultMaxAge.
	MaxAge time.Duration
	// ScrapeTimeout bounds one node's scrape; zero means
	// DefaultScrapeTimeout.
	ScrapeTimeout time.Duration
	// Clock tells the time; nil means the real clock.
	Clock clock.PassiveClock
	// Logger logs; nil means slog.Default().
	Logger *slog.Logger
}

// Provider answers metrics.k8s.io from the nodes' summaries. Build it with
// New; Start runs it.
type Provider struct {
	cfg    Config
	http   *http.Client
	synced atomic.Bool

	mu         sync.Mutex
	nodes      listersv1.NodeLister
	pods       listersv1.PodLister
	scraped    *scrape
	scrapeDone chan struct{} // closed when the scrape under way ends
}

// scrape is one round of summaries, by node name.
type scrape struct {
	at        time.Time
	summaries map[string]*statsv1alpha1.Summary
}

// New validates and defaults the configuration.
func New(cfg Config) (*Provider, error) {
	if cfg.Window < 0 || cfg.MaxAge < 0 || cfg.ScrapeTimeout < 0 {
		return nil, errors.New("metricsapi: durations must not be negative")
	}
	if cfg.Window == 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.MaxAge == 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	if cfg.ScrapeTimeout == 0 {
		cfg.ScrapeTimeout = DefaultScrapeTimeout
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Provider{cfg: cfg, http: &http.Client{
		Timeout:   cfg.ScrapeTimeout,
		Transport: &http.Transport{DialContext: (&net.Dialer{Timeout: cfg.ScrapeTimeout}).DialContext, MaxIdleConnsPerHost: 2},
	}}, nil
}

// Start runs the provider's informers with client (the provider's own
// identity) and serves metrics once they have synced; it blocks until ctx
// is done.
func (p *Provider) Start(ctx context.Context, client kubernetes.Interface) error {
	factory := informers.NewSharedInformerFactory(client, 0)
	nodes := factory.Core().V1().Nodes()
	pods := factory.Core().V1().Pods()
	// Only what metrics need of a pod is kept: 50,000 pods stay small.
	if err := pods.Informer().SetTransform(slimPod); err != nil {
		return fmt.Errorf("metrics-server pod informer: %w", err)
	}
	p.mu.Lock()
	p.nodes, p.pods = nodes.Lister(), pods.Lister()
	p.mu.Unlock()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !syncwait.Synced(ctx, nodes.Informer().HasSynced, pods.Informer().HasSynced) {
		return ctx.Err()
	}
	p.synced.Store(true)
	defer p.synced.Store(false)
	<-ctx.Done()
	return nil
}

// slimPod keeps a pod's name, namespace, UID, labels, creation and node.
func slimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, Labels: pod.Labels,
			ResourceVersion: pod.ResourceVersion, CreationTimestamp: pod.CreationTimestamp,
		},
		Spec: corev1.PodSpec{NodeName: pod.Spec.NodeName},
	}, nil
}

// errUnavailable is what an APIService that is not available answers.
func errUnavailable() error {
	return apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
}

// listers returns the informers' listers once they have synced.
func (p *Provider) listers() (listersv1.NodeLister, listersv1.PodLister, error) {
	if !p.synced.Load() {
		return nil, nil, errUnavailable()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.nodes, p.pods, nil
}

// summaries returns every node's summary, scraping them all when the last
// round is older than MaxAge; concurrent callers share one round, which
// serves node and pod requests alike.
func (p *Provider) summaries(ctx context.Context) (*scrape, error) {
	lister, _, err := p.listers()
	if err != nil {
		return nil, err
	}
	for {
		p.mu.Lock()
		if s := p.scraped; s != nil && p.cfg.Clock.Since(s.at) < p.cfg.MaxAge {
			p.mu.Unlock()
			return s, nil
		}
		if done := p.scrapeDone; done != nil {
			p.mu.Unlock()
			select {
			case <-done:
				continue
			case <-ctx.Done():
				return nil, apierrors.NewTimeoutError("metrics scrape did not finish", 1)
			}
		}
		done := make(chan struct{})
		p.scrapeDone = done
		p.mu.Unlock()
		nodes, err := lister.List(everything)
		if err != nil {
			p.mu.Lock()
			p.scrapeDone = nil
			p.mu.Unlock()
			close(done)
			return nil, apierrors.NewInternalError(err)
		}
		s := p.scrapeAll(nodes)
		p.mu.Lock()
		p.scraped, p.scrapeDone = s, nil
		p.mu.Unlock()
		close(done)
		return s, nil
	}
}

// scrapeAll fetches every node's summary; a node that fails is left out
// (logged), as metrics-server leaves out the nodes it could not scrape.
// It runs on its own context: a caller that gives up does not cut the
// round the others wait for.
func (p *Provider) scrapeAll(nodes []*corev1.Node) *scrape {
	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.ScrapeTimeout)
	defer cancel()
	s := &scrape{at: p.cfg.Clock.Now(), summaries: make(map[string]*statsv1alpha1.Summary, len(nodes))}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxParallelScrapes)
	for _, n := range nodes {
		wg.Add(1)
		sem <- struct{}{}
		go func(n *corev1.Node) {
			defer wg.Done()
			defer func() { <-sem }()
			sum, err := p.scrapeNode(ctx, n)
			if err != nil {
				p.cfg.Logger.Debug("scrape failed", "node", n.Name, "err", err)
				return
			}
			mu.Lock()
			s.summaries[n.Name] = sum
			mu.Unlock()
		}(n)
	}
	wg.Wait()
	return s
}

// scrapeNode gets one node's /stats/summary from its kubelet endpoint.
func (p *Provider) scrapeNode(ctx context.Context, n *corev1.Node) (*statsv1alpha1.Summary, error) {
	port := n.Status.DaemonEndpoints.KubeletEndpoint.Port
	var host string
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			host = a.Address
			break
		}
	}
	if host == "" || port == 0 {
		return nil, fmt.Errorf("node %s has no kubelet endpoint", n.Name)
	}
	url := "http://" + net.JoinHostPort(host, strconv.Itoa(int(port))) + "/stats/summary"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape node %s: %w", n.Name, err)
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape node %s: %w", n.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape node %s: %s", n.Name, resp.Status)
	}
	var sum statsv1alpha1.Summary
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxSummaryBytes)).Decode(&sum); err != nil {
		return nil, fmt.Errorf("scrape node %s: decode summary: %w", n.Name, err)
	}
	return &sum, nil
}

func cpuQuantity(nanoCores *uint64) resource.Quantity {
	var v int64
	if nanoCores != nil {
		v = int64(min(*nanoCores, 1<<62))
	}
	return *resource.NewScaledQuantity(v, resource.Nano)
}

func memoryQuantity(bytes *uint64) resource.Quantity {
	var v int64
	if bytes != nil {
		v = int64(min(*bytes, 1<<62))
	}
	return *resource.NewQuantity(v, resource.BinarySI)
}

// nodeMetrics are the metrics of the nodes that have a summary.
func (p *Provider) nodeMetrics(ctx context.Context, nodes []*corev1.Node) ([]runtime.Object, error) {
	s, err := p.summaries(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]runtime.Object, 0, len(nodes))
	for _, n := range nodes {
		sum := s.summaries[n.Name]
		if sum == nil || sum.Node.CPU == nil || sum.Node.Memory == nil {
			continue
		}
		out = append(out, &metricsv1beta1.NodeMetrics{
			ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels, CreationTimestamp: metav1.NewTime(p.cfg.Clock.Now())},
			Timestamp:  sum.Node.CPU.Time,
			Window:     metav1.Duration{Duration: p.cfg.Window},
			Usage: corev1.ResourceList{
				corev1.ResourceCPU:    cpuQuantity(sum.Node.CPU.UsageNanoCores),
				corev1.ResourceMemory: memoryQuantity(sum.Node.Memory.WorkingSetBytes),
			},
		})
	}
	return out, nil
}

// GetNode is the NodeMetrics of one node.
func (p *Provider) GetNode(ctx context.Context, _, name string) (runtime.Object, error) {
	nodes, _, err := p.listers()
	if err != nil {
		return nil, err
	}
	n, err := nodes.Get(name)
	if err != nil {
		// The lister's error, as metrics-server passes it on.
		return nil, apierrors.NewNotFound(corev1.Resource("node"), name)
	}
	ms, err := p.nodeMetrics(ctx, []*corev1.Node{n})
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, apierrors.NewNotFound(GroupVersion.WithResource("nodemetrics").GroupResource(), name)
	}
	return ms[0], nil
}

// ListNodes are the NodeMetrics of every node that has a summary.
func (p *Provider) ListNodes(ctx context.Context, _ string) ([]runtime.Object, error) {
	nodes, _, err := p.listers()
	if err != nil {
		return nil, err
	}
	all, err := nodes.List(everything)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return p.nodeMetrics(ctx, all)
}

// podMetrics are the metrics of pods (the summaries' pods that are
// among them).
func (p *Provider) podMetrics(ctx context.Context, pods []*corev1.Pod) ([]runtime.Object, error) {
	bound := false
	for _, pod := range pods {
		bound = bound || pod.Spec.NodeName != ""
	}
	if !bound {
		return []runtime.Object{}, nil
	}
	s, err := p.summaries(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]runtime.Object, 0, len(pods))
	for _, pod := range pods {
		sum := s.summaries[pod.Spec.NodeName]
		if sum == nil {
			continue
		}
		ps := findPod(sum, pod)
		if ps == nil || len(ps.Containers) == 0 {
			continue
		}
		m := &metricsv1beta1.PodMetrics{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, Labels: pod.Labels, CreationTimestamp: metav1.NewTime(p.cfg.Clock.Now())},
			Window:     metav1.Duration{Duration: p.cfg.Window},
			Containers: make([]metricsv1beta1.ContainerMetrics, 0, len(ps.Containers)),
		}
		if ps.CPU != nil {
			m.Timestamp = ps.CPU.Time
		}
		for _, c := range ps.Containers {
			if c.CPU == nil || c.Memory == nil {
				continue
			}
			m.Containers = append(m.Containers, metricsv1beta1.ContainerMetrics{
				Name: c.Name,
				Usage: corev1.ResourceList{
					corev1.ResourceCPU:    cpuQuantity(c.CPU.UsageNanoCores),
					corev1.ResourceMemory: memoryQuantity(c.Memory.WorkingSetBytes),
				},
			})
		}
		out = append(out, m)
	}
	return out, nil
}

// findPod is the pod's stats in a summary (same namespace, name and UID).
func findPod(sum *statsv1alpha1.Summary, pod *corev1.Pod) *statsv1alpha1.PodStats {
	for i := range sum.Pods {
		ref := sum.Pods[i].PodRef
		if ref.Namespace == pod.Namespace && ref.Name == pod.Name && (ref.UID == "" || ref.UID == string(pod.UID)) {
			return &sum.Pods[i]
		}
	}
	return nil
}

// GetPod is the PodMetrics of one pod.
func (p *Provider) GetPod(ctx context.Context, namespace, name string) (runtime.Object, error) {
	_, pods, err := p.listers()
	if err != nil {
		return nil, err
	}
	pod, err := pods.Pods(namespace).Get(name)
	if err != nil {
		// The lister's error, as metrics-server passes it on.
		return nil, apierrors.NewNotFound(corev1.Resource("pods"), name)
	}
	ms, err := p.podMetrics(ctx, []*corev1.Pod{pod})
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		// A pod without figures (not running yet), as metrics-server says.
		return nil, apierrors.NewNotFound(GroupVersion.WithResource("podmetrics").GroupResource(), namespace+"/"+name)
	}
	return ms[0], nil
}

// ListPods are the PodMetrics of a namespace's pods ("": every pod).
func (p *Provider) ListPods(ctx context.Context, namespace string) ([]runtime.Object, error) {
	_, pods, err := p.listers()
	if err != nil {
		return nil, err
	}
	var all []*corev1.Pod
	if namespace == "" {
		all, err = pods.List(everything)
	} else {
		all, err = pods.Pods(namespace).List(everything)
	}
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
	})
	return p.podMetrics(ctx, all)
}

// Resources are the group's resources for api.Config.Local, answered by p.
func (p *Provider) Resources() []api.LocalResource {
	nodes, pods := Descriptors()
	return []api.LocalResource{
		{Resource: nodes, Get: p.GetNode, List: p.ListNodes},
		{Resource: pods, Get: p.GetPod, List: p.ListPods},
	}
}

// Descriptors are the descriptors of nodes and pods of metrics.k8s.io, for
// discovery and OpenAPI: kinds NodeMetrics and PodMetrics, with
// metrics-server's table columns (Name, cpu, memory, Window).
func Descriptors() (nodes, pods *registry.Resource) {
	nodes = &registry.Resource{
		GroupVersion: GroupVersion, Name: "nodes", Kind: "NodeMetrics",
		Strategy: registry.Strategy{Table: metricsTable},
	}
	pods = &registry.Resource{
		GroupVersion: GroupVersion, Name: "pods", Kind: "PodMetrics", Namespaced: true,
		Strategy: registry.Strategy{Table: metricsTable},
	}
	return nodes, pods
}

// metricsTable is metrics-server's table: each resource's usage (summed
// over a pod's containers) and the window.
var metricsTable = &tables.TableConvertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "Name of the resource"},
		{Name: "cpu", Type: "string", Format: "quantity", Description: "cpu usage"},
		{Name: "memory", Type: "string", Format: "quantity", Description: "memory usage"},
		{Name: "Window", Type: "string", Format: "", Description: "Window of the usage"},
	},
	Row: func(obj runtime.Object) ([]interface{}, error) {
		switch m := obj.(type) {
		case *metricsv1beta1.NodeMetrics:
			return []interface{}{m.Name, quantityString(m.Usage, corev1.ResourceCPU), quantityString(m.Usage, corev1.ResourceMemory), m.Window.Duration.String()}, nil
		case *metricsv1beta1.PodMetrics:
			sum := corev1.ResourceList{}
			for _, c := range m.Containers {
				for k, v := range c.Usage {
					q := sum[k]
					q.Add(v)
					sum[k] = q
				}
			}
			return []interface{}{m.Name, quantityString(sum, corev1.ResourceCPU), quantityString(sum, corev1.ResourceMemory), m.Window.Duration.String()}, nil
		}
		return nil, fmt.Errorf("metrics table: unexpected %T", obj)
	},
}

func quantityString(l corev1.ResourceList, name corev1.ResourceName) string {
	q, ok := l[name]
	if !ok {
		return ""
	}
	return q.String()
}

// everything selects every object of a lister.
var everything = labels.Everything()
