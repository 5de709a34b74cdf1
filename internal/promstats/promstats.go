// Package promstats is minikd's Prometheus metrics, with kube's names,
// labels and buckets (k8s.io/apiserver's endpoints and etcd3 metrics,
// client-go's workqueue and REST client adapters of k8s.io/component-base,
// kube-scheduler's), served in the Prometheus text format at /metrics
// (Handler), which the API server authorizes as kube does: nonResourceURLs
// get /metrics (the system:monitoring ClusterRole).
//
// The metrics live in one registry per process, as kube's legacyregistry:
// every API server, controller and scheduler of the process reports into
// it (tests that start several minikd in one process see their sum).
// Importing the package makes it client-go's workqueue metrics provider
// and REST client metrics sink, so every controller's queue (by its name)
// and every client of the process is counted.
//
// The hooks are plain functions (ObserveRequest, ObserveEtcd, …) that the
// API server, the store and the scheduler call; their cost is a label
// lookup and an atomic add.
package promstats

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	clientmetrics "k8s.io/client-go/tools/metrics"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Registry holds every metric of the process.
var Registry = prometheus.NewRegistry()

// requestBuckets are kube-apiserver's request and etcd latency buckets.
var requestBuckets = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
	4, 5, 6, 8, 10, 15, 20, 30, 45, 60}

// The API server's metrics.
var (
	requestTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_request_total",
		Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
	}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"})
	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_request_duration_seconds",
		Help:    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
		Buckets: requestBuckets,
	}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"})
	inflight = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_current_inflight_requests",
		Help: "Maximal number of currently used inflight request limit of this apiserver per request kind in last second.",
	}, []string{"request_kind"})
	watchEvents = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_watch_events_total",
		Help: "Number of events sent in watch clients",
	}, []string{"group", "version", "resource"})
	etcdDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "etcd_request_duration_seconds",
		Help:    "Etcd request latency in seconds for each operation and object type.",
		Buckets: requestBuckets,
	}, []string{"operation", "group", "resource"})
	etcdTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "etcd_requests_total",
		Help: "Etcd request counts for each operation and object type.",
	}, []string{"operation", "group", "resource"})
	etcdErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "etcd_request_errors_total",
		Help: "Etcd failed request counts for each operation and object type.",
	}, []string{"operation", "group", "resource"})
)

// The scheduler's metrics.
var (
	scheduleAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "scheduler_schedule_attempts_total",
		Help: "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
	}, []string{"result", "profile"})
	attemptDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "scheduler_scheduling_attempt_duration_seconds",
		Help:    "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	}, []string{"result", "profile"})
	preemptionAttempts = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "scheduler_preemption_attempts_total",
		Help: "Total preemption attempts in the cluster till now",
	})
)

// The REST client's metrics (client-go's tools/metrics).
var (
	restRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rest_client_requests_total",
		Help: "Number of HTTP requests, partitioned by status code, method, and host.",
	}, []string{"code", "method", "host"})
	restDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rest_client_request_duration_seconds",
		Help:    "Request latency in seconds. Broken down by verb, and host.",
		Buckets: []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0},
	}, []string{"verb", "host"})
)

func init() {
	Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		requestTotal, requestDuration, inflight, watchEvents,
		etcdDuration, etcdTotal, etcdErrors, storageObjects{},
		scheduleAttempts, attemptDuration, preemptionAttempts, pendingPods{},
		restRequests, restDuration,
	)
	for _, kind := range []string{RequestKindReadOnly, RequestKindMutating} {
		inflight.WithLabelValues(kind)
	}
	registerWorkqueue()
	clientmetrics.Register(clientmetrics.RegisterOpts{
		RequestResult:  restResult{},
		RequestLatency: restLatency{},
	})
}

// Handler serves the registry in the Prometheus text format, with the
// metrics k8s.io/apiserver's libraries keep in component-base's legacy
// registry (legacyPrefixes).
func Handler() http.Handler {
	g := prometheus.Gatherers{Registry, prefixGatherer{legacyregistry.DefaultGatherer, legacyPrefixes}}
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// legacyPrefixes name the families served from component-base's legacy
// registry: API Priority and Fairness's (package apf runs kube's
// dispatcher, which reports there). Its other families (its own go and
// process collectors) would repeat ours.
var legacyPrefixes = []string{"apiserver_flowcontrol_"}

// prefixGatherer gathers the families of g whose names have one of
// prefixes.
type prefixGatherer struct {
	g        prometheus.Gatherer
	prefixes []string
}

func (p prefixGatherer) Gather() ([]*dto.MetricFamily, error) {
	all, err := p.g.Gather()
	out := all[:0]
	for _, mf := range all {
		for _, prefix := range p.prefixes {
			if strings.HasPrefix(mf.GetName(), prefix) {
				out = append(out, mf)
				break
			}
		}
	}
	return out, err
}

// Request kinds of apiserver_current_inflight_requests.
const (
	RequestKindReadOnly = "readOnly"
	RequestKindMutating = "mutating"
)

// Request is what the request metrics are labelled with: the request's
// parsed attributes, as kube's RequestInfo.
type Request struct {
	// Method is the HTTP method; Verb the Kubernetes verb (get, list,
	// watch, create, …).
	Method, Verb string
	// IsResource tells a resource request from a non-resource one.
	IsResource bool
	// Group, Version, Resource and Subresource are the resource's.
	Group, Version, Resource, Subresource string
	// Namespace and Name are the object's (empty for a collection).
	Namespace, Name string
	// URL and ContentType tell watch=true, dryRun and apply patches.
	URL         *url.URL
	ContentType string
}

// connectSubresources are reported as verb CONNECT, as kube's
// validConnectRequests.
var connectSubresources = map[string]bool{"log": true, "exec": true, "proxy": true, "attach": true, "portforward": true}

// scope is kube's CleanScope.
func (r Request) scope() string {
	switch {
	case r.Name != "" || r.Verb == "create":
		return "resource"
	case r.Namespace != "":
		return "namespace"
	case r.IsResource:
		return "cluster"
	}
	return ""
}

// verb is kube's reported verb: the method, LIST for a GET of a
// collection, WATCH, APPLY for a server-side apply, CONNECT for the
// streaming subresources.
func (r Request) verb(scope string) string {
	v := strings.ToUpper(r.Method)
	if v == http.MethodHead {
		v = http.MethodGet
	}
	if v == http.MethodGet && scope != "resource" && scope != "" {
		v = "LIST"
	}
	if r.Verb == "watch" {
		v = "WATCH"
	} else if (v == http.MethodGet || v == "LIST") && r.URL != nil {
		if w := r.URL.Query()["watch"]; len(w) > 0 && w[0] != "0" && strings.ToLower(w[0]) != "false" {
			v = "WATCH"
		}
	}
	if v == http.MethodPatch && r.ContentType == "application/apply-patch+yaml" {
		v = "APPLY"
	}
	if r.IsResource && connectSubresources[r.Subresource] {
		v = "CONNECT"
	}
	switch v {
	case "LIST", "WATCH", "APPLY", "CONNECT", http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return v
	}
	return "other"
}

// dryRun is kube's cleanDryRun: the dryRun values, sorted and joined.
func (r Request) dryRun() string {
	if r.URL == nil || !strings.Contains(r.URL.RawQuery, "dryRun") {
		return ""
	}
	vals := r.URL.Query()["dryRun"]
	for _, v := range vals {
		if v != "All" {
			return "invalid"
		}
	}
	return strings.Join(vals, ",")
}

// ObserveRequest records a finished resource request: its code and how
// long it took. Non-resource requests are not counted, as in kube, where
// only the API's routes are instrumented.
func ObserveRequest(r Request, code int, took time.Duration) {
	if !r.IsResource {
		return
	}
	scope := r.scope()
	verb, dry := r.verb(scope), r.dryRun()
	requestTotal.WithLabelValues(verb, dry, r.Group, r.Version, r.Resource, r.Subresource, scope, "apiserver", strconv.Itoa(code)).Inc()
	requestDuration.WithLabelValues(verb, dry, r.Group, r.Version, r.Resource, r.Subresource, scope, "apiserver").Observe(took.Seconds())
}

// InflightStarted counts a request taking an in-flight slot of its kind;
// the returned function counts its end.
func InflightStarted(kind string) (done func()) {
	g := inflight.WithLabelValues(kind)
	g.Inc()
	return g.Dec
}

// WatchEvent counts one event sent to a watcher of a resource.
func WatchEvent(group, version, resource string) {
	watchEvents.WithLabelValues(group, version, resource).Inc()
}

// ObserveEtcd records one etcd request of the store on key (or a
// collection's prefix): operation is kube's (get, list, create, update,
// delete, getCurrentResourceVersion).
func ObserveEtcd(operation, key string, err error, took time.Duration) {
	group, resource := groupResourceOfKey(key)
	etcdDuration.WithLabelValues(operation, group, resource).Observe(took.Seconds())
	etcdTotal.WithLabelValues(operation, group, resource).Inc()
	if err != nil {
		etcdErrors.WithLabelValues(operation, group, resource).Inc()
	}
}

// groups maps a storage resource name (the key's first segment) to its
// API group, for the etcd metrics' labels; SetResourceGroups fills it.
var groups atomic.Pointer[map[string]string]

// SetResourceGroups tells the etcd metrics the group of each stored
// resource, by its storage name.
func SetResourceGroups(byResource map[string]string) {
	m := make(map[string]string, len(byResource))
	for k, v := range byResource {
		m[k] = v
	}
	groups.Store(&m)
}

// groupResourceOfKey names the resource a key is under:
// /registry/<resource>/… for built-in resources, /registry/<group>/
// <resource>/… for custom ones.
func groupResourceOfKey(key string) (group, resource string) {
	rest, ok := strings.CutPrefix(key, "/registry/")
	if !ok {
		return "", ""
	}
	first, rest, _ := strings.Cut(rest, "/")
	if m := groups.Load(); m != nil {
		if g, ok := (*m)[first]; ok {
			return g, first
		}
	}
	if strings.Contains(first, ".") {
		second, _, _ := strings.Cut(rest, "/")
		return first, second
	}
	return "", first
}

// ObjectCounter counts the objects stored under a key prefix.
type ObjectCounter interface {
	Count(ctx context.Context, prefix string) (int64, error)
}

// storageSource is what apiserver_storage_objects counts: the store and
// the resources, by name as kube labels them (pods, deployments.apps) with
// their key prefixes.
type storageSource struct {
	counter  ObjectCounter
	prefixes map[string]string

	mu     sync.Mutex
	at     time.Time
	counts map[string]int64
}

var storage atomic.Pointer[storageSource]

// storageRefresh is how long object counts are reused: kube refreshes
// them about every minute; a scrape costs one count-only range per
// resource at most this often.
const storageRefresh = 10 * time.Second

// SetStorage makes apiserver_storage_objects count the objects of each
// resource (labelled as kube labels them, "pods", "deployments.apps")
// under its key prefix in counter. The last call wins.
func SetStorage(counter ObjectCounter, prefixes map[string]string) {
	storage.Store(&storageSource{counter: counter, prefixes: prefixes})
}

// storageObjects collects apiserver_storage_objects at scrape time.
type storageObjects struct{}

var storageObjectsDesc = prometheus.NewDesc("apiserver_storage_objects",
	"[DEPRECATED, consider using apiserver_resource_objects instead] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
	[]string{"resource"}, nil)

func (storageObjects) Describe(ch chan<- *prometheus.Desc) { ch <- storageObjectsDesc }

func (storageObjects) Collect(ch chan<- prometheus.Metric) {
	src := storage.Load()
	if src == nil {
		return
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	if src.counts == nil || time.Since(src.at) > storageRefresh {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		counts := make(map[string]int64, len(src.prefixes))
		for name, prefix := range src.prefixes {
			n, err := src.counter.Count(ctx, prefix)
			if err != nil {
				n = -1
			}
			counts[name] = n
		}
		src.counts, src.at = counts, time.Now()
	}
	for name, n := range src.counts {
		ch <- prometheus.MustNewConstMetric(storageObjectsDesc, prometheus.GaugeValue, float64(n), name)
	}
}

// Scheduler hooks.

// ScheduleAttempt records one scheduling attempt of profile (the
// scheduler's name): result is scheduled, unschedulable or error.
func ScheduleAttempt(result, profile string, took time.Duration) {
	scheduleAttempts.WithLabelValues(result, profile).Inc()
	attemptDuration.WithLabelValues(result, profile).Observe(took.Seconds())
}

// PreemptionAttempt counts one preemption.
func PreemptionAttempt() { preemptionAttempts.Inc() }

// pendingSource reports the scheduler's queues: active, backoff,
// unschedulable, gated.
var pendingSource atomic.Pointer[func() map[string]int]

// SetPendingPods makes scheduler_pending_pods report f's counts by queue;
// nil stops reporting. The last call wins.
func SetPendingPods(f func() map[string]int) {
	if f == nil {
		pendingSource.Store(nil)
		return
	}
	pendingSource.Store(&f)
}

type pendingPods struct{}

var pendingPodsDesc = prometheus.NewDesc("scheduler_pending_pods",
	"Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.",
	[]string{"queue"}, nil)

func (pendingPods) Describe(ch chan<- *prometheus.Desc) { ch <- pendingPodsDesc }

func (pendingPods) Collect(ch chan<- prometheus.Metric) {
	f := pendingSource.Load()
	if f == nil {
		return
	}
	counts := (*f)()
	for _, q := range []string{"active", "backoff", "unschedulable", "gated"} {
		ch <- prometheus.MustNewConstMetric(pendingPodsDesc, prometheus.GaugeValue, float64(counts[q]), q)
	}
}

// REST client sinks.

type restResult struct{}

func (restResult) Increment(_ context.Context, code, method, host string) {
	restRequests.WithLabelValues(code, method, host).Inc()
}

type restLatency struct{}

func (restLatency) Observe(_ context.Context, verb string, u url.URL, latency time.Duration) {
	restDuration.WithLabelValues(verb, u.Host).Observe(latency.Seconds())
}

// Workqueue metrics, as k8s.io/component-base/metrics/prometheus/workqueue.

var (
	wqDepth = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: "workqueue", Name: "depth", Help: "Current depth of workqueue",
	}, []string{"name"})
	wqAdds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "workqueue", Name: "adds_total", Help: "Total number of adds handled by workqueue",
	}, []string{"name"})
	wqLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: "workqueue", Name: "queue_duration_seconds",
		Help:    "How long in seconds an item stays in workqueue before being requested.",
		Buckets: prometheus.ExponentialBuckets(10e-9, 10, 12),
	}, []string{"name"})
	wqWork = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: "workqueue", Name: "work_duration_seconds",
		Help:    "How long in seconds processing an item from workqueue takes.",
		Buckets: prometheus.ExponentialBuckets(10e-9, 10, 12),
	}, []string{"name"})
	wqUnfinished = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: "workqueue", Name: "unfinished_work_seconds",
		Help: "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
	}, []string{"name"})
	wqLongest = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: "workqueue", Name: "longest_running_processor_seconds",
		Help: "How many seconds has the longest running processor for workqueue been running.",
	}, []string{"name"})
	wqRetries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "workqueue", Name: "retries_total", Help: "Total number of retries handled by workqueue",
	}, []string{"name"})
)

func registerWorkqueue() {
	Registry.MustRegister(wqDepth, wqAdds, wqLatency, wqWork, wqUnfinished, wqLongest, wqRetries)
	workqueue.SetProvider(workqueueProvider{})
}

// workqueueProvider is client-go's workqueue.MetricsProvider over the
// vectors above.
type workqueueProvider struct{}

func (workqueueProvider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return wqDepth.WithLabelValues(name)
}

func (workqueueProvider) NewAddsMetric(name string) workqueue.CounterMetric {
	return wqAdds.WithLabelValues(name)
}

func (workqueueProvider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return wqLatency.WithLabelValues(name)
}

func (workqueueProvider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return wqWork.WithLabelValues(name)
}

func (workqueueProvider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return wqUnfinished.WithLabelValues(name)
}

func (workqueueProvider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return wqLongest.WithLabelValues(name)
}

func (workqueueProvider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return wqRetries.WithLabelValues(name)
}
