package nodeagent_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"

	"minik/internal/testserver"
)

// TestWebReachesThreeReadyPods: the seed's web.yaml, through the
// controllers and the scheduler, ends with three Ready nginx pods spread
// over the three nodes, each answering HTTP on its pod IP.
func TestWebReachesThreeReadyPods(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Nodes: 3, Scheduler: true, Controllers: []string{"deployment", "replicaset"}})
	cs := srv.Client(t)
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "web.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		switch o := obj.(type) {
		case *corev1.Namespace:
			_, err = cs.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
		case *appsv1.Deployment:
			_, err = cs.AppsV1().Deployments(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Service:
			_, err = cs.CoreV1().Services(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *networkingv1.Ingress:
			_, err = cs.NetworkingV1().Ingresses(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatalf("create %T: %v", obj, err)
		}
	}
	var pods []corev1.Pod
	var all []corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := cs.CoreV1().Pods("demo").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, nil // a request cut by the deadline is reported below
		}
		all, pods = list.Items, pods[:0]
		for _, p := range list.Items {
			if p.Status.Phase == corev1.PodRunning && isReady(&p) {
				pods = append(pods, p)
			}
		}
		return len(pods) == 3, nil
	})
	if err != nil {
		var b strings.Builder
		for i := range all {
			fmt.Fprintf(&b, "\n  %s on %q: %s", all[i].Name, all[i].Spec.NodeName, statusSummary(&all[i]))
		}
		if d, derr := cs.AppsV1().Deployments("demo").Get(ctx, "web", metav1.GetOptions{}); derr == nil {
			fmt.Fprintf(&b, "\n  deployment: %+v", d.Status)
		}
		t.Fatalf("waiting for 3 Ready web pods: %v; %d pod(s):%s", err, len(all), b.String())
	}
	nodes := map[string]bool{}
	for _, p := range pods {
		nodes[p.Spec.NodeName] = true
		if body := httpGet(t, "http://"+p.Status.PodIP+"/"); !bytes.Contains([]byte(body), []byte("demo/"+p.Name)) {
			t.Errorf("pod %s serves %q", p.Name, body)
		}
	}
	if len(nodes) != 3 {
		t.Errorf("the pods run on %v, not spread over the 3 nodes", nodes)
	}
}
