package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/testserver"
)

// TestTopCommand runs top against minikd: when the server serves
// metrics.k8s.io, minikctl's tables are kubectl's (columns, figures,
// --containers, -A, -l, --sort-by, --sum); when it does not, both say
// "Metrics API not available".
func TestTopCommand(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Nodes: 1})
	s := &streamsServer{srv: srv, cs: srv.Client(t)}
	groups, err := s.cs.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	served := false
	for _, g := range groups.Groups {
		served = served || g.Name == "metrics.k8s.io"
	}
	if !served {
		t.Run("without the Metrics API", func(t *testing.T) {
			s.check(t, "", result{"", "error: Metrics API not available\n", 1}, nil, "top", "pods")
			s.check(t, "", result{"", "error: Metrics API not available\n", 1}, nil, "top", "nodes")
		})
		return
	}
	ctx := context.Background()
	pod := func(name string, command []string, cpuLimit string) {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": name}},
			Spec: corev1.PodSpec{NodeName: "minik-node-1", Containers: []corev1.Container{
				{Name: "app", Image: "busybox:1.36", Command: command},
			}},
		}
		if cpuLimit != "" {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuLimit)}
		}
		if _, err := s.cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod("sleeper", []string{"sleep", "3600"}, "")
	pod("busy", []string{"sh", "-c", "while true; do :; done"}, "500m")
	// Metrics come once the node has scraped both pods.
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := s.minikctl(t, "", "top", "pods")
		if got.code == 0 && strings.Contains(got.stdout, "sleeper") && strings.Contains(got.stdout, "busy") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no metrics of both pods: %s", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Run("pods", func(t *testing.T) {
		s.check(t, "", result{"NAME      CPU(cores)   MEMORY(bytes)   \nbusy      500m         0Mi             \nsleeper   0m           0Mi             \n", "", 0}, nil, "top", "pods")
	})
	t.Run("containers, sorted by CPU", func(t *testing.T) {
		s.check(t, "", result{"POD       NAME   CPU(cores)   MEMORY(bytes)   \nbusy      app    500m         0Mi             \nsleeper   app    0m           0Mi             \n", "", 0}, nil,
			"top", "pods", "--containers", "--sort-by=cpu")
	})
	t.Run("all namespaces by label, with the sum", func(t *testing.T) {
		s.check(t, "", result{"NAMESPACE   NAME   CPU(cores)   MEMORY(bytes)   \ndefault     busy   500m         0Mi             \n                   ________     ________        \n                   500m         0Mi             \n", "", 0}, nil,
			"top", "pods", "-A", "-l", "app=busy", "--sum")
	})
	t.Run("nodes", func(t *testing.T) {
		got := s.minikctl(t, "", "top", "nodes")
		if got.code != 0 || !strings.HasPrefix(got.stdout, "NAME           CPU(cores)   CPU(%)   MEMORY(bytes)   MEMORY(%)   \nminik-node-1   ") {
			t.Errorf("got %s", got)
		}
		if kc, ok := s.kubectl(t, "", "top", "nodes"); ok && kc != got {
			t.Errorf("minikctl top nodes differs from kubectl:\nminikctl %s\nkubectl  %s", got, kc)
		}
	})
	t.Run("bad input", func(t *testing.T) {
		s.check(t, "", result{"", "error: --sort-by accepts only cpu or memory\n", 1}, nil, "top", "pods", "--sort-by=name")
		s.check(t, "", result{"", "Error from server (NotFound): pods \"missing\" not found\n", 1}, nil, "top", "pod", "missing")
	})
}
