package api_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"minik/internal/admission/plugins"
	"minik/internal/server"
	"minik/internal/testserver"
)

// BenchmarkChain measures what the handler chain costs a request: the
// same GET, CREATE and UPDATE of a ConfigMap, one at a time over HTTPS
// with client-go as a user bound to "edit" in the namespace, against two
// minikd:
//
//   - chain: as minikd runs (client certificate authentication, the node
//     authorizer and RBAC from informer caches, the whole admission chain
//     without webhooks, the audit log at Metadata);
//   - disabled: --authorization-mode=AlwaysAllow, every admission plugin
//     disabled, an audit policy recording nothing.
//
// Requests to the two alternate, so that both see the same machine; the
// metrics are each one's latency, their ratio, and the chain's share of
// the latency of a request that goes through it.
func BenchmarkChain(b *testing.B) {
	none := filepath.Join(b.TempDir(), "audit-none.yaml")
	if err := os.WriteFile(none, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	servers := map[string]*testserver.Server{
		"chain": testserver.Start(b),
		"disabled": testserver.StartWith(b, testserver.Options{
			AuthorizationMode: server.AuthorizationAlwaysAllow, DisableAdmissionPlugins: plugins.Names(), AuditPolicyFile: none,
		}),
	}
	ctx := context.Background()
	clients := map[string]kubernetes.Interface{}
	for mode, srv := range servers {
		admin := srv.Client(b)
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		if _, err := admin.CoreV1().ConfigMaps("bench").Create(ctx, benchConfigMap("web"), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		bindClusterRole(b, admin, "bench", "bencher-edit", "edit", userSubject("bencher"))
		cs := userClient(b, srv, "bencher")
		eventually(b, "the bencher reads", func() error {
			_, err := cs.CoreV1().ConfigMaps("bench").Get(ctx, "web", metav1.GetOptions{})
			return err
		})
		clients[mode] = cs
	}

	n := 0
	ops := []struct {
		name string
		do   func(cs kubernetes.Interface) error
	}{
		{"get", func(cs kubernetes.Interface) error {
			_, err := cs.CoreV1().ConfigMaps("bench").Get(ctx, "web", metav1.GetOptions{})
			return err
		}},
		{"create", func(cs kubernetes.Interface) error {
			n++
			_, err := cs.CoreV1().ConfigMaps("bench").Create(ctx, benchConfigMap(fmt.Sprintf("cm-%d", n)), metav1.CreateOptions{})
			return err
		}},
		{"update", func(cs kubernetes.Interface) error {
			cm := benchConfigMap("web")
			cm.Data["n"] = fmt.Sprint(n)
			n++
			_, err := cs.CoreV1().ConfigMaps("bench").Update(ctx, cm, metav1.UpdateOptions{})
			return err
		}},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			for i := 0; i < 50; i++ { // warm the connections and caches
				for _, cs := range clients {
					if err := op.do(cs); err != nil {
						b.Fatal(err)
					}
				}
			}
			var on, off time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if err := op.do(clients["disabled"]); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := op.do(clients["chain"]); err != nil {
					b.Fatal(err)
				}
				off, on = off+t1.Sub(t0), on+time.Since(t1)
			}
			b.ReportMetric(float64(on.Nanoseconds())/float64(b.N), "chain-ns/req")
			b.ReportMetric(float64(off.Nanoseconds())/float64(b.N), "disabled-ns/req")
			b.ReportMetric(float64(on)/float64(off), "chain/disabled")
			b.ReportMetric(100*float64(on-off)/float64(on), "chain-%-of-latency")
		})
	}
}
