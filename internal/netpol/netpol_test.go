package netpol_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"

	"minik/internal/testserver"
)

// TestPoliciesAreEnforced: on simulated nodes, NetworkPolicies decide
// which pods reach which: an ingress policy lets in only the pods its
// rule selects, on its named port, directly and through the Service; the
// node's probes still reach the pod; an egress policy stops its pods'
// connections; an ipBlock lets the host in.
func TestPoliciesAreEnforced(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Nodes: 2, DataPlane: true, Controllers: []string{"endpointslice"}})
	cs := srv.Client(t)
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}}, Spec: corev1.PodSpec{NodeName: "minik-node-1", Containers: []corev1.Container{{
			Name: "nginx", Image: "nginx:1.27", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}},
			ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")}}},
		}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "friend", Labels: map[string]string{"access": "true"}}, Spec: sleeper()},
		{ObjectMeta: metav1.ObjectMeta{Name: "stranger"}, Spec: sleeper()},
	}
	for _, p := range pods {
		if _, err := cs.CoreV1().Pods("demo").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}},
	}}
	svc, err := cs.CoreV1().Services("demo").Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var webIP string
	poll(t, "the pods running and web ready", func() bool {
		ready := 0
		for _, name := range []string{"web", "friend", "stranger"} {
			p, err := cs.CoreV1().Pods("demo").Get(ctx, name, metav1.GetOptions{})
			if err != nil || p.Status.Phase != corev1.PodRunning || name == "web" && !podReady(p) {
				return false
			}
			if name == "web" {
				webIP = p.Status.PodIP
			}
			ready++
		}
		return ready == 3
	})
	direct, viaService := "http://"+webIP+"/", "http://"+svc.Spec.ClusterIP+"/"
	get := func(pod, url string) (string, error) {
		return execIn(srv.RESTConfig, cs, pod, "wget", "-q", "-O", "-", "-T", "1", url)
	}
	for _, url := range []string{direct, viaService} {
		poll(t, "both clients reaching "+url+" before any policy", func() bool {
			_, e1 := get("friend", url)
			_, e2 := get("stranger", url)
			return e1 == nil && e2 == nil
		})
	}

	create := func(np *networkingv1.NetworkPolicy) {
		t.Helper()
		if _, err := cs.NetworkingV1().NetworkPolicies("demo").Create(ctx, np, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	http80 := intstr.FromString("http")
	create(&networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "web-from-friends"}, Spec: networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Ingress: []networkingv1.NetworkPolicyIngressRule{{
			From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"access": "true"}}}},
			Ports: []networkingv1.NetworkPolicyPort{{Port: &http80}},
		}},
	}})
	for _, url := range []string{direct, viaService} {
		poll(t, "the stranger's wget of "+url+" timing out", func() bool {
			_, err := get("stranger", url)
			return err != nil && strings.Contains(err.Error(), "wget: download timed out")
		})
		if out, err := get("friend", url); err != nil || !strings.Contains(out, "Welcome to nginx!") {
			t.Errorf("the friend's wget of %s: %q, %v", url, out, err)
		}
	}
	if p, err := cs.CoreV1().Pods("demo").Get(ctx, "web", metav1.GetOptions{}); err != nil || !podReady(p) {
		t.Errorf("web is not ready under an ingress policy: the node's probes must still reach it (%v)", err)
	}

	hostGet := func() error {
		c := &http.Client{Timeout: time.Second}
		resp, err := c.Get(direct)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := hostGet(); err == nil {
		t.Errorf("the host reached web although no rule lets its address in")
	}
	create(&networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "web-from-host"}, Spec: networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "127.0.0.0/8", Except: []string{"127.0.0.2/32"}}}}}},
	}})
	poll(t, "the host reaching web through the ipBlock", func() bool { return hostGet() == nil })

	create(&networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "friends-stay-home"}, Spec: networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"access": "true"}},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
	}})
	poll(t, "the friend's wget timing out under its egress policy", func() bool {
		_, err := get("friend", direct)
		return err != nil && strings.Contains(err.Error(), "wget: download timed out")
	})
}

func sleeper() corev1.PodSpec {
	return corev1.PodSpec{NodeName: "minik-node-2", Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36", Command: []string{"sleep", "3600"}}}}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// poll waits until cond holds, failing the test after a minute.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// execIn runs a command in a pod of demo and returns its stdout; a
// non-zero exit is an error carrying its stderr.
func execIn(cfg *rest.Config, cs kubernetes.Interface, pod string, cmd ...string) (string, error) {
	u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("demo").Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Command: cmd, Stdout: true, Stderr: true}, scheme.ParameterCodec).URL()
	ex, err := remotecommand.NewWebSocketExecutor(cfg, "GET", u.String())
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	if err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut}); err != nil {
		return out.String(), fmt.Errorf("%w: %s", err, errOut.String())
	}
	return out.String(), nil
}
