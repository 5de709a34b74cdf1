package server_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestListLoad is a bounded load run, not a unit test: it runs only with
// MINIK_LOADTEST=1. It starts minikd as a process, fills a namespace with
// LOADTEST_OBJECTS (5000) ConfigMaps of 2 KiB, then LOADTEST_CLIENTS (200)
// clients list them LOADTEST_ROUNDS (3) times each, at once, as a user
// bound to "view" (not system:masters, whom the in-flight limit spares),
// while /readyz is probed every 20 ms. It logs minikd's peak RSS during the
// lists and over its life (VmHWM), the /readyz latency percentiles, and
// the lists' status codes (429s among them).
//
//	MINIK_LOADTEST=1 go test -count=1 -timeout 30m -run TestListLoad -v ./internal/server/
func TestListLoad(t *testing.T) {
	if os.Getenv("MINIK_LOADTEST") != "1" {
		t.Skip("set MINIK_LOADTEST=1 to run the list load test")
	}
	objects, clients, rounds := envInt("LOADTEST_OBJECTS", 5000), envInt("LOADTEST_CLIENTS", 200), envInt("LOADTEST_ROUNDS", 3)
	accept := os.Getenv("LOADTEST_ACCEPT")
	if accept == "" {
		accept = "application/json"
	}
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("loadtest-token,loadtest,loadtest-uid,\"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	args := []string{"--data-dir", filepath.Join(dir, "data"), "--listen", addr, "--nodes", "0",
		"--service-proxy=false", "--ingress-http", "none", "--ingress-https", "none", "--token-auth-file", tokens, "--log-level", "warn"}
	args = append(args, strings.Fields(os.Getenv("LOADTEST_ARGS"))...)
	cmd := exec.Command(minikdBinary, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for !probeOK(addr) {
		if time.Now().After(deadline) {
			t.Fatalf("minikd not ready:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "data", "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS = -1
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "load"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "loadtest-view"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "loadtest"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	value := strings.Repeat("x", 2048)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(objects); i = next.Add(1) {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i)}, Data: map[string]string{"v": value}}
				if _, err := cs.CoreV1().ConfigMaps("load").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	pid := cmd.Process.Pid
	before := procStatus(t, pid, "VmRSS")

	viewer := rest.AnonymousClientConfig(cfg)
	viewer.BearerToken = "loadtest-token"
	hc, err := rest.HTTPClientFor(viewer)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var probes []time.Duration
	var peakRSS int64
	var side sync.WaitGroup
	side.Add(2)
	go func() {
		defer side.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			start := time.Now()
			if !probeOK(addr) {
				t.Error("/readyz did not answer 200 during the load")
			}
			probes = append(probes, time.Since(start))
		}
	}()
	go func() {
		defer side.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			peakRSS = max(peakRSS, procStatus(t, pid, "VmRSS"))
		}
	}()
	var mu sync.Mutex
	codes := map[int]int{}
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				req, _ := http.NewRequest(http.MethodGet, cfg.Host+"/api/v1/namespaces/load/configmaps", nil)
				req.Header.Set("Accept", accept)
				resp, err := hc.Do(req)
				code := 0
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					code = resp.StatusCode
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(stop)
	side.Wait()
	slices.Sort(probes)
	pct := func(p float64) time.Duration {
		if len(probes) == 0 {
			return 0
		}
		return probes[min(len(probes)-1, int(float64(len(probes))*p))]
	}
	t.Logf("%d clients x %d lists of %d ConfigMaps (%s) in %v; status codes %v (429: %d)", clients, rounds, objects, accept, took.Round(time.Millisecond), codes, codes[http.StatusTooManyRequests])
	t.Logf("minikd RSS: %d MiB before the lists, peak %d MiB during them, VmHWM %d MiB", before>>10, peakRSS>>10, procStatus(t, pid, "VmHWM")>>10)
	t.Logf("/readyz during the lists (%d probes): p50 %v p99 %v max %v", len(probes), pct(0.5), pct(0.99), pct(1))
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// probeClient is a separate client for /readyz, with its own connection.
var probeClient = &http.Client{Transport: insecure.Transport.(*http.Transport).Clone(), Timeout: 30 * time.Second}

func probeOK(addr string) bool {
	resp, err := probeClient.Get("https://" + addr + "/readyz")
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// procStatus reads a field of /proc/<pid>/status, in KiB.
func procStatus(t *testing.T, pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Error(err)
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
