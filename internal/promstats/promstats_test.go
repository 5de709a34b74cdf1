package promstats_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/testserver"
)

// scrape reads /metrics through the API server as the client.
func scrape(ctx context.Context, cs kubernetes.Interface) (map[string]*dto.MetricFamily, error) {
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(strings.NewReader(string(body)))
}

// value is the sum of a family's samples whose labels include want
// (counters and gauges; histograms give their sample count), and whether
// any matched.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	var sum float64
	found := false
next:
	for _, m := range f.Metric {
		for k, v := range want {
			ok := false
			for _, l := range m.Label {
				if l.GetName() == k && l.GetValue() == v {
					ok = true
				}
			}
			if !ok {
				continue next
			}
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum, found
}

func TestMetricsHaveKubesNamesAndLabels(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Nodes: 1, Scheduler: true, Controllers: []string{"deployment", "replicaset"}})
	cs := srv.Client(t)
	ctx := context.Background()
	one := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	// The pod is scheduled, then every figure below has something to count.
	var fams map[string]*dto.MetricFamily
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		if fams, err = scrape(ctx, cs); err != nil {
			return false, err
		}
		n, _ := value(fams, "scheduler_schedule_attempts_total", map[string]string{"result": "scheduled", "profile": "default-scheduler"})
		return n >= 1, nil
	})
	if err != nil {
		t.Fatalf("waiting for a scheduled pod in /metrics: %v", err)
	}

	for _, c := range []struct {
		name   string
		labels map[string]string
	}{
		{"apiserver_request_total", map[string]string{"verb": "POST", "group": "apps", "version": "v1", "resource": "deployments", "subresource": "", "scope": "resource", "component": "apiserver", "code": "201", "dry_run": ""}},
		{"apiserver_request_total", map[string]string{"verb": "LIST", "group": "", "resource": "pods", "scope": "namespace"}},
		{"apiserver_request_total", map[string]string{"verb": "POST", "resource": "pods", "subresource": "binding", "scope": "resource"}},
		{"apiserver_request_duration_seconds", map[string]string{"verb": "POST", "group": "apps", "resource": "deployments", "scope": "resource", "component": "apiserver"}},
		{"apiserver_current_inflight_requests", map[string]string{"request_kind": "readOnly"}},
		{"apiserver_current_inflight_requests", map[string]string{"request_kind": "mutating"}},
		{"apiserver_storage_objects", map[string]string{"resource": "deployments.apps"}},
		{"apiserver_storage_objects", map[string]string{"resource": "pods"}},
		{"etcd_request_duration_seconds", map[string]string{"operation": "create", "group": "apps", "resource": "deployments"}},
		{"etcd_request_duration_seconds", map[string]string{"operation": "list", "group": "", "resource": "pods"}},
		{"apiserver_watch_events_total", map[string]string{"group": "", "version": "v1", "resource": "pods"}},
		{"workqueue_adds_total", map[string]string{"name": "deployment"}},
		{"workqueue_adds_total", map[string]string{"name": "replicaset"}},
		{"workqueue_depth", map[string]string{"name": "deployment"}},
		{"workqueue_work_duration_seconds", map[string]string{"name": "replicaset"}},
		{"scheduler_pending_pods", map[string]string{"queue": "active"}},
		{"scheduler_scheduling_attempt_duration_seconds", map[string]string{"result": "scheduled", "profile": "default-scheduler"}},
		{"rest_client_requests_total", map[string]string{"code": "201", "method": "POST"}},
		{"rest_client_request_duration_seconds", map[string]string{"verb": "POST"}},
		{"go_goroutines", nil},
		{"process_resident_memory_bytes", nil},
	} {
		if _, ok := value(fams, c.name, c.labels); !ok {
			t.Errorf("no %s%v", c.name, c.labels)
		}
	}
	if n, _ := value(fams, "apiserver_storage_objects", map[string]string{"resource": "deployments.apps"}); n != 1 {
		t.Errorf("apiserver_storage_objects{resource=deployments.apps} = %v, want 1", n)
	}
	if n, _ := value(fams, "apiserver_watch_events_total", map[string]string{"resource": "pods"}); n < 1 {
		t.Errorf("apiserver_watch_events_total{resource=pods} = %v", n)
	}
	// kube's buckets, not the library's defaults.
	h := fams["apiserver_request_duration_seconds"].Metric[0].Histogram
	var bounds []string
	for _, b := range h.Bucket {
		bounds = append(bounds, fmt.Sprint(b.GetUpperBound()))
	}
	if want := "0.005 0.025 0.05 0.1 0.2 0.4 0.6 0.8 1 1.25 1.5 2 3 4 5 6 8 10 15 20 30 45 60 +Inf"; strings.Join(bounds, " ") != want {
		t.Errorf("request duration buckets %v, want %s", bounds, want)
	}

	t.Run("RBAC: system:monitoring reads /metrics, others are forbidden", func(t *testing.T) {
		as := func(user string, groups ...string) kubernetes.Interface {
			c := rest.CopyConfig(srv.RESTConfig)
			c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
			c.ContentType, c.AcceptContentTypes = "application/json", "application/json"
			k, err := kubernetes.NewForConfig(c)
			if err != nil {
				t.Fatal(err)
			}
			return k
		}
		if _, err := scrape(ctx, as("prometheus", "system:monitoring", "system:authenticated")); err != nil {
			t.Fatalf("system:monitoring: %v", err)
		}
		err := as("bob", "system:authenticated").CoreV1().RESTClient().Get().AbsPath("/metrics").Do(ctx).Error()
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "bob" cannot get path "/metrics"`) {
			t.Fatalf("bob: %v", err)
		}
	})

	t.Run("livez and readyz list their checks with verbose", func(t *testing.T) {
		get := func(path string) string {
			body, err := cs.CoreV1().RESTClient().Get().AbsPath(path).Param("verbose", "").DoRaw(ctx)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return string(body)
		}
		if got, want := get("/livez"), "[+]ping ok\n[+]log ok\n[+]etcd ok\nlivez check passed\n"; got != want {
			t.Errorf("/livez?verbose = %q, want %q", got, want)
		}
		if got, want := get("/healthz"), "[+]ping ok\n[+]log ok\n[+]etcd ok\nhealthz check passed\n"; got != want {
			t.Errorf("/healthz?verbose = %q, want %q", got, want)
		}
		ready := get("/readyz")
		for _, line := range []string{"[+]ping ok", "[+]etcd ok", "[+]etcd-watch ok", "[+]poststarthook/minik-ready ok", "readyz check passed"} {
			if !slices.Contains(strings.Split(ready, "\n"), line) {
				t.Errorf("/readyz?verbose has no %q: %q", line, ready)
			}
		}
		body, err := cs.CoreV1().RESTClient().Get().AbsPath("/livez/etcd").DoRaw(ctx)
		if err != nil || string(body) != "ok" {
			t.Errorf("/livez/etcd: %q %v", body, err)
		}
	})
}
