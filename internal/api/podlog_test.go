package api_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/testserver"
)

// TestPodLogIsProxiedToTheNode stands a node endpoint up on loopback, as
// the node agent serves one, and reads a pod's log through the API.
func TestPodLogIsProxiedToTheNode(t *testing.T) {
	var gotPath, gotQuery string
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotQuery = r.URL.Path, r.URL.RawQuery
		fmt.Fprintln(w, "hello from nginx")
	}))
	defer node.Close()
	host, portStr, _ := net.SplitHostPort(node.Listener.Addr().String())
	port, _ := strconv.Atoi(portStr)

	srv := testserver.Start(t)
	ctx := context.Background()
	cs := srv.Client(t)
	namespace(t, cs, "demo")
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	n, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: host}}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}, {Name: "side", Image: "busybox"}},
	}}
	if _, err := cs.CoreV1().Pods("demo").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("an unscheduled pod has no log to read", func(t *testing.T) {
		_, err := cs.CoreV1().Pods("demo").GetLogs("web", &corev1.PodLogOptions{Container: "nginx"}).Stream(ctx)
		if !apierrors.IsBadRequest(err) || err.Error() != "pod web does not have a host assigned" {
			t.Fatalf("err = %v", err)
		}
	})
	if err := cs.CoreV1().Pods("demo").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Run("a pod of two containers needs a container name", func(t *testing.T) {
		_, err := cs.CoreV1().Pods("demo").GetLogs("web", &corev1.PodLogOptions{}).Stream(ctx)
		if !apierrors.IsBadRequest(err) || err.Error() != "a container name must be specified for pod web, choose one of: [nginx side]" {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("the log is read from the node with the options passed on", func(t *testing.T) {
		tail := int64(5)
		out, err := cs.CoreV1().Pods("demo").GetLogs("web", &corev1.PodLogOptions{Container: "nginx", TailLines: &tail, Timestamps: true}).DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != "hello from nginx\n" || gotPath != "/containerLogs/demo/web/nginx" || gotQuery != "tailLines=5&timestamps=true" {
			t.Fatalf("log %q from %s?%s", out, gotPath, gotQuery)
		}
	})
}
