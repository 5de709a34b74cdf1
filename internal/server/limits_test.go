package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"minik/internal/server"
)

// TestFlowControlSeats runs minikd with --max-requests-inflight=1000 and
// --max-mutating-requests-inflight=0 (off): API Priority and Fairness
// shares those 1000 seats among the Limited priority levels by their
// nominalConcurrencyShares, as kube-apiserver does, and serves the admin
// (exempt) and /readyz.
func TestFlowControlSeats(t *testing.T) {
	dir := t.TempDir()
	s, err := server.New(server.Config{
		DataDir: filepath.Join(dir, "data"), Listen: "127.0.0.1:0", NoControllers: true, NoScheduler: true,
		MaxRequestsInFlight: 1000, MaxMutatingRequestsInFlight: -1, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-s.Ready():
	case err := <-done:
		t.Fatalf("minikd did not start: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("minikd not ready after 60s")
	}
	admin, err := kubernetes.NewForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("each limited level has its share of the 1000 seats", func(t *testing.T) {
		levels, err := admin.FlowcontrolV1().PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, pl := range levels.Items {
			if pl.Spec.Type == flowcontrolv1.PriorityLevelEnablementLimited {
				sum += float64(*pl.Spec.Limited.NominalConcurrencyShares)
			}
		}
		for _, pl := range levels.Items {
			if pl.Spec.Type != flowcontrolv1.PriorityLevelEnablementLimited {
				continue
			}
			want := fmt.Sprintf("apiserver_flowcontrol_nominal_limit_seats{priority_level=%q} %d", pl.Name,
				int(math.Ceil(1000*float64(*pl.Spec.Limited.NominalConcurrencyShares)/sum)))
			var last string
			waitUntil(t, want, 30*time.Second, func() bool {
				raw, err := admin.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
				if err != nil {
					t.Fatal(err)
				}
				last = string(raw)
				return strings.Contains(last, "\n"+want+"\n")
			})
		}
	})
	t.Run("the admin is served, exempt", func(t *testing.T) {
		hc := admin.CoreV1().RESTClient()
		resp := hc.Post().Namespace("default").Resource("configmaps").Body(cmNamed("by-admin")).Do(ctx)
		if err := resp.Error(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("and /readyz answers 200", func(t *testing.T) {
		resp, err := insecure.Get("https://" + s.Addr() + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/readyz = %d", resp.StatusCode)
		}
	})
}

func cmNamed(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
