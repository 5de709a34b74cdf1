package api_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"

	"minik/internal/pki"
	"minik/internal/testserver"
)

// connectCluster runs one node, the EndpointSlice controller and pod
// "web" in namespace demo: a busybox (app) beside an echo server on 5678
// (web), behind Service "web" (port 80, named http).
func connectCluster(t *testing.T) (*testserver.Server, kubernetes.Interface) {
	t.Helper()
	srv := testserver.StartWith(t, testserver.Options{Nodes: 1, Controllers: []string{"endpointslice"}})
	cs := srv.Client(t)
	ctx := context.Background()
	namespace(t, cs, "demo")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}}, Spec: corev1.PodSpec{
		NodeName: "minik-node-1",
		Containers: []corev1.Container{
			{Name: "app", Image: "busybox:1.36", Command: []string{"sleep", "3600"}},
			{Name: "web", Image: "hashicorp/http-echo:1.0", Args: []string{"-text=hello from web", "-listen=:5678"},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 5678}}},
		},
	}}
	if _, err := cs.CoreV1().Pods("demo").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, svc := range []*corev1.Service{
		{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "empty"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "none"},
			Ports: []corev1.ServicePort{{Port: 80}}}},
	} {
		if _, err := cs.CoreV1().Services("demo").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "pod web Ready", func() error {
		p, err := cs.CoreV1().Pods("demo").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return apierrors.NewBadRequest("not ready: " + string(p.Status.Phase))
	})
	return srv, cs
}

func proxyGet(cs kubernetes.Interface, path string) (string, error) {
	b, err := cs.CoreV1().RESTClient().Get().AbsPath(path).DoRaw(context.Background())
	return string(b), err
}

// TestProxySubresources: pods, services and nodes proxy plain HTTP through
// the API server, with kube's errors.
func TestProxySubresources(t *testing.T) {
	_, cs := connectCluster(t)
	for _, tc := range []struct{ name, path, want string }{
		{"a pod's port by number", "/api/v1/namespaces/demo/pods/web:5678/proxy/", "hello from web"},
		{"a pod's first declared port", "/api/v1/namespaces/demo/pods/web/proxy/any/path?x=1", "hello from web"},
		{"a Service's port by name", "/api/v1/namespaces/demo/services/web:http/proxy/", "hello from web"},
		{"a Service's port by number, with a scheme", "/api/v1/namespaces/demo/services/http:web:80/proxy/", "hello from web"},
		{"the node agent's healthz", "/api/v1/nodes/minik-node-1/proxy/healthz", "ok"},
		{"the node agent's pods", "/api/v1/nodes/minik-node-1/proxy/pods", `"name":"web"`},
		{"the node agent's metrics", "/api/v1/nodes/minik-node-1/proxy/metrics", `kubelet_node_name{node="minik-node-1"} 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body string
			eventually(t, tc.path, func() error {
				var err error
				body, err = proxyGet(cs, tc.path)
				return err // the Service's endpoints trail the pod's readiness
			})
			if !strings.Contains(body, tc.want) {
				t.Errorf("GET %s = %q, want %q", tc.path, body, tc.want)
			}
		})
	}
	t.Run("an https: Service port, to a self-signed backend", func(t *testing.T) {
		backend := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "tls backend at %s", r.URL.Path)
		}))
		defer backend.Close()
		_, portStr, _ := net.SplitHostPort(backend.Listener.Addr().String())
		port, _ := strconv.Atoi(portStr)
		ctx := context.Background()
		if _, err := cs.CoreV1().Services("demo").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "tls"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		name, p, ready := "https", int32(port), true
		if _, err := cs.DiscoveryV1().EndpointSlices("demo").Create(ctx, &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: "tls-manual", Labels: map[string]string{discoveryv1.LabelServiceName: "tls"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
			Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &p}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		body, err := proxyGet(cs, "/api/v1/namespaces/demo/services/https:tls:https/proxy/some/path")
		if err != nil || body != "tls backend at /some/path" {
			t.Errorf("GET = %q, %v", body, err)
		}
	})
	t.Run("a Service without ready endpoints is kube's 503", func(t *testing.T) {
		body, err := proxyGet(cs, "/api/v1/namespaces/demo/services/empty:80/proxy/")
		if !apierrors.IsServiceUnavailable(err) || !strings.Contains(body, `"message":"no endpoints available for service \"empty\""`) {
			t.Errorf("err = %v, body %s", err, body)
		}
	})
	t.Run("a Service port it does not have", func(t *testing.T) {
		body, err := proxyGet(cs, "/api/v1/namespaces/demo/services/web:9999/proxy/")
		if !apierrors.IsServiceUnavailable(err) || !strings.Contains(body, `no service port \"9999\" found for service \"web\"`) {
			t.Errorf("err = %v, body %s", err, body)
		}
	})
}

func execIn(cfg *rest.Config, cs kubernetes.Interface, pod, container string, websocket bool, cmd ...string) (string, error) {
	u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("demo").Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdout: true, Stderr: true}, scheme.ParameterCodec).URL()
	var ex remotecommand.Executor
	var err error
	if websocket {
		ex, err = remotecommand.NewWebSocketExecutor(cfg, "GET", u.String())
	} else {
		ex, err = remotecommand.NewSPDYExecutor(cfg, "POST", u)
	}
	if err != nil {
		return "", err
	}
	var out strings.Builder
	err = ex.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: &out, Stderr: io.Discard})
	return out.String(), err
}

// TestExecAuthorization: exec is authorized as create on pods/exec; a
// WebSocket GET needs create too (kube 1.37).
func TestExecAuthorization(t *testing.T) {
	srv, cs := connectCluster(t)
	ctx := context.Background()
	_, err := cs.RbacV1().Roles("demo").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "exec-get"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "pods/exec"}, Verbs: []string{"get"}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.RbacV1().RoleBindings("demo").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "exec-get"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "exec-get"},
		Subjects: []rbacv1.Subject{userSubject("getter")}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	certCfg := func(user string) *rest.Config { return userConfig(t, srv, user) }
	t.Run("the admin execs over both protocols", func(t *testing.T) {
		for _, ws := range []bool{true, false} {
			if out, err := execIn(srv.RESTConfig, cs, "web", "app", ws, "echo", "hi"); err != nil || out != "hi\n" {
				t.Errorf("websocket=%v: %q, %v", ws, out, err)
			}
		}
	})
	t.Run("a user who may only get pods/exec is refused the WebSocket GET", func(t *testing.T) {
		cfg := certCfg("getter")
		eventually(t, "the getter's role applies", func() error {
			_, err := userClient(t, srv, "getter").CoreV1().Pods("demo").Get(ctx, "web", metav1.GetOptions{})
			return err
		})
		_, err := execIn(cfg, cs, "web", "app", true, "true")
		const want = `pods "web" is forbidden: User "getter" cannot create resource "pods/exec" in API group "" in the namespace "demo"`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("WebSocket GET: err = %v, want %s", err, want)
		}
		_, err = execIn(cfg, cs, "web", "app", false, "true")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SPDY POST: err = %v, want forbidden", err)
		}
	})
	t.Run("a user with no permission is forbidden by the authorizer", func(t *testing.T) {
		_, err := execIn(certCfg("nobody"), cs, "web", "app", false, "true")
		if err == nil || !strings.Contains(err.Error(), "forbidden") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a pod of two containers needs one named", func(t *testing.T) {
		_, err := execIn(srv.RESTConfig, cs, "web", "", false, "true")
		if err == nil || !strings.Contains(err.Error(), "a container name must be specified for pod web, choose one of: [app web]") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a pod without a node", func(t *testing.T) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pending"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		if _, err := cs.CoreV1().Pods("demo").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := execIn(srv.RESTConfig, cs, "pending", "", false, "true")
		if err == nil || !strings.Contains(err.Error(), "pod pending does not have a host assigned") {
			t.Errorf("err = %v", err)
		}
	})
}

// userConfig is a client configuration with a client certificate for
// user, signed by the server's CA.
func userConfig(t *testing.T, srv *testserver.Server, user string) *rest.Config {
	t.Helper()
	ca, err := pki.LoadOrCreateCA(filepath.Join(srv.DataDir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.SignClient(user, nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(srv.RESTConfig)
	cfg.CertData, cfg.KeyData = kp.CertPEM, kp.KeyPEM
	return cfg
}

// TestEphemeralContainers: pods/ephemeralcontainers adds a debug
// container, which the node starts in the running pod; exec reaches it;
// existing ones may not be removed.
func TestEphemeralContainers(t *testing.T) {
	srv, cs := connectCluster(t)
	ctx := context.Background()
	pod, err := cs.CoreV1().Pods("demo").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger", Image: "busybox:1.36", Command: []string{"sleep", "3600"},
			TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent},
		TargetContainerName: "app",
	}}
	if _, err := cs.CoreV1().Pods("demo").UpdateEphemeralContainers(ctx, "web", pod, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update ephemeralcontainers: %v", err)
	}
	eventually(t, "debugger running", func() error {
		p, err := cs.CoreV1().Pods("demo").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, s := range p.Status.EphemeralContainerStatuses {
			if s.Name == "debugger" && s.State.Running != nil {
				return nil
			}
		}
		return apierrors.NewBadRequest("not yet")
	})
	if out, err := execIn(srv.RESTConfig, cs, "web", "debugger", false, "echo", "debugging"); err != nil || out != "debugging\n" {
		t.Errorf("exec in the ephemeral container: %q, %v", out, err)
	}
	t.Run("the kubelet's events name the ephemeral container", func(t *testing.T) {
		eventually(t, "a Started event of spec.ephemeralContainers{debugger}", func() error {
			list, err := cs.CoreV1().Events("demo").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web,reason=Started"})
			if err != nil {
				return err
			}
			for _, e := range list.Items {
				if e.InvolvedObject.FieldPath == "spec.ephemeralContainers{debugger}" && e.Message == "Started container debugger" {
					return nil
				}
			}
			return apierrors.NewBadRequest("not yet")
		})
	})
	t.Run("existing ephemeral containers may not be removed", func(t *testing.T) {
		p, _ := cs.CoreV1().Pods("demo").Get(ctx, "web", metav1.GetOptions{})
		p.Spec.EphemeralContainers = nil
		_, err := cs.CoreV1().Pods("demo").UpdateEphemeralContainers(ctx, "web", p, metav1.UpdateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `existing ephemeral containers "debugger" may not be removed`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("discovery lists the subresources", func(t *testing.T) {
		list, err := cs.Discovery().ServerResourcesForGroupVersion("v1")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{"pods/exec": false, "pods/attach": false, "pods/portforward": false, "pods/ephemeralcontainers": false, "pods/proxy": false, "services/proxy": false, "nodes/proxy": false}
		for _, r := range list.APIResources {
			if _, ok := want[r.Name]; ok {
				want[r.Name] = true
			}
		}
		for k, v := range want {
			if !v {
				t.Errorf("discovery lacks %s", k)
			}
		}
	})
}
