package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// cluster is a minikd process started with default flags.
type cluster struct {
	dir, api, ingress string
	cmd               *exec.Cmd
	out               *strings.Builder
}

var (
	servingLine = regexp.MustCompile(`^minikd serving on https://(\S+);`)
	ingressLine = regexp.MustCompile(`Ingress on http://(\S+) and`)
)

// startDefault runs minikd with no flag but its data dir and one node, and
// returns once it prints where it serves. It may run in a goroutine: it
// reports a failure as an error.
func startDefault(t *testing.T, dir string, env []string, args ...string) (*cluster, error) {
	cmd := exec.Command(minikdBinary, append([]string{"--data-dir", dir, "--nodes", "1"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	c := &cluster{dir: dir, cmd: cmd, out: &strings.Builder{}}
	cmd.Stderr = lockedWriter{&mu, c.out}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	for c.ingress == "" && lines.Scan() {
		line := lines.Text()
		if m := servingLine.FindStringSubmatch(line); m != nil {
			c.api = m[1]
		}
		if m := ingressLine.FindStringSubmatch(line); m != nil {
			c.ingress = m[1]
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if c.api == "" || c.ingress == "" {
		_ = cmd.Wait()
		mu.Lock()
		defer mu.Unlock()
		return nil, fmt.Errorf("minikd on %s printed no serving and ingress lines:\n%s", dir, c.out)
	}
	return c, nil
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// web is a one-replica nginx Deployment with its Service and Ingress.
func web(ctx context.Context, t *testing.T, cs kubernetes.Interface, host string) {
	t.Helper()
	labels := map[string]string{"app": "web"}
	one := int32(1)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "nginx", Image: "nginx:1.27",
					Ports:          []corev1.ContainerPort{{ContainerPort: 80}},
					Resources:      corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80)}}},
				}}},
			},
		},
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}},
	}
	prefix := networkingv1.PathTypePrefix
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}},
		}}}}},
	}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.NetworkingV1().Ingresses("default").Create(ctx, ing, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// get answers the body of GET url (with a Host header), or an error.
func get(url, host string) (string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	req.Host = host
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(b), nil
}

func TestThreeClustersWithDefaultFlagsRunSideBySide(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three minikd")
	}
	ctx := context.Background()
	clusters := make([]*cluster, 3)
	var wg sync.WaitGroup
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	// They start at once: each claims its own slot.
	for i := range clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if clusters[i], err = startDefault(t, dirs[i], nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	apis, ranges := map[string]bool{}, map[string]bool{}
	for i, c := range clusters {
		if apis[c.api] {
			t.Fatalf("two clusters serve on %s", c.api)
		}
		apis[c.api] = true
		cs := clientFor(t, c.dir)
		kube, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ranges[kube.Spec.ClusterIP] {
			t.Fatalf("two clusters gave the kubernetes Service %s", kube.Spec.ClusterIP)
		}
		ranges[kube.Spec.ClusterIP] = true
		web(ctx, t, cs, fmt.Sprintf("web.%d.local", i))
	}
	for i, c := range clusters {
		cs := clientFor(t, c.dir)
		svc, err := cs.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		host := fmt.Sprintf("web.%d.local", i)
		var lastErr error
		err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 90*time.Second, true, func(context.Context) (bool, error) {
			if _, lastErr = get("http://"+svc.Spec.ClusterIP+"/", ""); lastErr != nil {
				return false, nil
			}
			_, lastErr = get("http://"+c.ingress+"/", host)
			return lastErr == nil, nil
		})
		if err != nil {
			t.Fatalf("cluster %d (API %s, Ingress %s): web not served through its ClusterIP %s and Ingress: %v\n%s", i, c.api, c.ingress, svc.Spec.ClusterIP, lastErr, c.out)
		}
	}

	t.Run("a second minikd on a data dir in use refuses to start", func(t *testing.T) {
		out, err := exec.Command(minikdBinary, "--data-dir", dirs[0], "--nodes", "0").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "is in use by another minikd") {
			t.Fatalf("second minikd on %s: %v\n%s", dirs[0], err, out)
		}
	})
}

func TestKubeconfigMergeAddsTheClusterAndRemovesItOnStop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	mine := clientcmdapi.NewConfig()
	mine.Clusters["work"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	mine.AuthInfos["me"] = &clientcmdapi.AuthInfo{Token: "t"}
	mine.Contexts["work"] = &clientcmdapi.Context{Cluster: "work", AuthInfo: "me"}
	mine.CurrentContext = "work"
	if err := clientcmd.WriteToFile(*mine, path); err != nil {
		t.Fatal(err)
	}
	c, err := startDefault(t, t.TempDir(), []string{"KUBECONFIG=" + path}, "--nodes", "0", "--kubeconfig-merge", "--cluster-name", "ci")
	if err != nil {
		t.Fatal(err)
	}
	// The user's kubeconfig now reaches the cluster with no flag.
	restCfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: path}, nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if restCfg.Host != "https://"+c.api {
		t.Fatalf("merged kubeconfig points at %s, want https://%s", restCfg.Host, c.api)
	}
	cs := kubernetes.NewForConfigOrDie(restCfg)
	if _, err := cs.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("through the merged kubeconfig: %v", err)
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("minikd after SIGTERM: %v\n%s", err, c.out)
	}
	after, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if after.CurrentContext != "work" || len(after.Contexts) != 1 || len(after.Clusters) != 1 || len(after.AuthInfos) != 1 {
		t.Fatalf("after a clean stop the kubeconfig has current %q, contexts %v, clusters %v", after.CurrentContext, after.Contexts, after.Clusters)
	}
}
