package dataplane_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"minik/internal/controllers/crd"
	"minik/internal/controllers/endpointslice"
	"minik/internal/testserver"
)

// env is a minikd with the EndpointSlice controller and the data plane,
// and "pods" that are real HTTP servers on loopback addresses whose status
// the test writes as a kubelet would.
type env struct {
	t   *testing.T
	srv *testserver.Server
	cs  kubernetes.Interface
	ns  string
	// net is this test's block of loopback pod addresses.
	net  [2]int
	next atomic.Int32
}

func start(t *testing.T, mode string) *env {
	t.Helper()
	srv := testserver.StartWith(t, testserver.Options{
		Controllers: []string{endpointslice.Name, crd.Name}, DataPlane: true, IngressMode: mode,
	})
	e := &env{t: t, srv: srv, cs: srv.Client(t), ns: "demo", net: [2]int{200 + rand.IntN(50), rand.IntN(256)}}
	if _, err := e.cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Pods need their namespace's default ServiceAccount (admission); no
	// serviceaccount controller runs here.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := e.cs.CoreV1().ServiceAccounts(e.ns).Create(context.Background(), sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return e
}

// backend is a pod's HTTP server: it answers with the pod's name and
// counts the requests it served.
type backend struct {
	name string
	ip   string
	port int32
	hits atomic.Int64
}

// pod starts an HTTP server on a fresh loopback address and creates its
// pod (label app=<app>, container port "http"), with an IP and the given
// readiness.
func (e *env) pod(name, app string, ready bool) *backend {
	e.t.Helper()
	n := e.next.Add(1)
	ip := fmt.Sprintf("127.%d.%d.%d", e.net[0], e.net[1], n)
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		e.t.Fatal(err)
	}
	b := &backend{name: name, ip: ip, port: int32(ln.Addr().(*net.TCPAddr).Port)}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.hits.Add(1)
		fmt.Fprint(w, name)
	})}
	go func() { _ = hs.Serve(ln) }()
	e.t.Cleanup(func() { _ = hs.Close() })
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{
			Name: "web", Image: "nginx", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: b.port}},
		}}},
	}
	if _, err := e.cs.CoreV1().Pods(e.ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.setReady(name, ip, ready)
	return b
}

// setReady writes a pod's IP and Ready condition.
func (e *env) setReady(name, ip string, ready bool) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := e.cs.CoreV1().Pods(e.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIP, p.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.Now()}}
		_, err = e.cs.CoreV1().Pods(e.ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// service creates a ClusterIP Service for app on port 80, target port
// "http".
func (e *env) service(name, app string, mutate ...func(*corev1.Service)) *corev1.Service {
	e.t.Helper()
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": app},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
		},
	}
	for _, m := range mutate {
		m(s)
	}
	out, err := e.cs.CoreV1().Services(e.ns).Create(context.Background(), s, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// readyEndpoints counts a Service's endpoints with ready=true.
func (e *env) readyEndpoints(svc string) (ready, notReady int) {
	list, err := e.cs.DiscoveryV1().EndpointSlices(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, s := range list.Items {
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
				ready++
			} else {
				notReady++
			}
		}
	}
	return ready, notReady
}

// freshClient makes every request on a new connection, as separate curl
// invocations would.
var freshClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}

// get sends one request and returns status and body ("" and the error on
// a transport failure).
func get(c *http.Client, url, host string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if host != "" {
		req.Host = host
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body)), err
}

// waitFor polls until cond holds, failing after 20 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitAnswers waits until url answers 200 with one of names as body.
func waitAnswers(t *testing.T, url, host string, names ...string) {
	t.Helper()
	waitFor(t, url+" answered by one of "+strings.Join(names, ","), func() bool {
		code, body, err := get(freshClient, url, host)
		return err == nil && code == 200 && slices.Contains(names, body)
	})
}

// waitAnsweredByAll waits until each of names has answered url.
func waitAnsweredByAll(t *testing.T, url, host string, names ...string) {
	t.Helper()
	seen := map[string]bool{}
	waitFor(t, url+" answered by each of "+strings.Join(names, ","), func() bool {
		if code, body, err := get(freshClient, url, host); err == nil && code == 200 {
			seen[body] = true
		}
		for _, n := range names {
			if !seen[n] {
				return false
			}
		}
		return true
	})
}

// tally sends n requests and counts the answers by body.
func tally(t *testing.T, c *http.Client, n int, url, host string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for range n {
		code, body, err := get(c, url, host)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		if code != 200 {
			t.Fatalf("GET %s: %d %s", url, code, body)
		}
		out[body]++
	}
	return out
}

// load sends requests from workers goroutines until stop is closed and
// reports how many were sent and how many failed (with the first failure).
func load(c *http.Client, workers int, url, host string, stop <-chan struct{}) func() (sent, failed int64, first string) {
	var (
		wg           sync.WaitGroup
		sentN, failN atomic.Int64
		mu           sync.Mutex
		firstErr     string
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				code, body, err := get(c, url, host)
				sentN.Add(1)
				if err != nil || code != 200 {
					failN.Add(1)
					mu.Lock()
					if firstErr == "" {
						firstErr = strconv.Itoa(code) + " " + body + fmt.Sprint(err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	return func() (int64, int64, string) {
		wg.Wait()
		return sentN.Load(), failN.Load(), firstErr
	}
}
