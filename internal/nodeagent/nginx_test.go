package nodeagent_test

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func nginxPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "nginx", Image: "nginx:1.27",
			Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: 80}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")}}},
		}}},
	}
}

// TestNginxRunsAndServes: an nginx pod bound to a node reaches Running and
// Ready with the kubelet's events, and answers HTTP on its pod IP.
func TestNginxRunsAndServes(t *testing.T) {
	_, cs := cluster(t, 2)
	runPod(t, cs, nginxPod("web-1"), "minik-node-2")
	pod := waitPod(t, cs, "default", "web-1", "Running and Ready", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && isReady(p)
	})
	for _, c := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady, corev1.PodScheduled} {
		if cond := condition(pod, c); cond == nil || cond.Status != corev1.ConditionTrue {
			t.Errorf("condition %s: %+v", c, cond)
		}
	}
	st := containerStatus(pod, "nginx")
	if st.State.Running == nil || !st.Ready || st.Started == nil || !*st.Started || st.RestartCount != 0 ||
		st.Image != "docker.io/library/nginx:1.27" || !strings.HasPrefix(st.ImageID, "docker.io/library/nginx@sha256:") || !strings.HasPrefix(st.ContainerID, "containerd://") {
		t.Errorf("container status %+v", st)
	}
	node, err := cs.CoreV1().Nodes().Get(context.Background(), "minik-node-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cidr, err := netip.ParsePrefix(node.Spec.PodCIDR); err != nil || pod.Status.HostIP != node.Status.Addresses[0].Address ||
		!cidr.Contains(netip.MustParseAddr(pod.Status.PodIP)) {
		t.Errorf("hostIP %s podIP %s on node %s with pod CIDR %s", pod.Status.HostIP, pod.Status.PodIP, node.Status.Addresses[0].Address, node.Spec.PodCIDR)
	}
	waitEvent(t, cs, pod, corev1.EventTypeNormal, "Pulling", `Pulling image "nginx:1.27"`)
	waitEvent(t, cs, pod, corev1.EventTypeNormal, "Pulled", `Successfully pulled image "nginx:1.27" in `)
	waitEvent(t, cs, pod, corev1.EventTypeNormal, "Created", "Created container: nginx")
	waitEvent(t, cs, pod, corev1.EventTypeNormal, "Started", "Started container nginx")

	resp, err := http.Get("http://" + pod.Status.PodIP + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "Welcome to nginx!") || !strings.Contains(string(body), "default/web-1") {
		t.Fatalf("GET /: %d %s", resp.StatusCode, body)
	}
	logs, err := cs.CoreV1().Pods("default").GetLogs("web-1", &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logs), "Configuration complete; ready for start up") || !strings.Contains(string(logs), `"GET / HTTP/1.1" 200`) {
		t.Fatalf("logs:\n%s", logs)
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}
