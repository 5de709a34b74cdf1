package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"minik/internal/server"
	"minik/internal/testserver"
)

// minikdBinary is built once for the tests that run minikd as a process.
var minikdBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "minikd-bin")
	if err != nil {
		panic(err)
	}
	minikdBinary = filepath.Join(dir, "minikd")
	// minikd with default flags claims a slot host-wide: the tests' go to
	// a dir of their own.
	os.Setenv("MINIK_SLOTS_DIR", filepath.Join(dir, "slots"))
	out, err := exec.Command("go", "build", "-o", minikdBinary, "minik/cmd/minikd").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build minikd: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

var insecure = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: time.Second}

// startProcess runs minikd on dataDir and waits until /readyz answers 200.
// It returns the process and the time from its start to ready.
func startProcess(t testing.TB, dataDir string) (*exec.Cmd, time.Duration) {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(minikdBinary, "--data-dir", dataDir, "--listen", addr)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := start.Add(30 * time.Second)
	for {
		resp, err := insecure.Get("https://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cmd, time.Since(start)
			}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("minikd not ready after 30s:\n%s", out.String())
		}
		time.Sleep(time.Millisecond)
	}
}

func clientFor(t testing.TB, dataDir string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dataDir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// snapshot lists the test's own ConfigMaps (labelled restart-test), leaving
// out those the controllers publish (kube-root-ca.crt), which may appear at
// any time.
func snapshot(t testing.TB, cs kubernetes.Interface) []string {
	t.Helper()
	l, err := cs.CoreV1().ConfigMaps("default").List(context.Background(), metav1.ListOptions{LabelSelector: "restart-test"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, cm := range l.Items {
		out = append(out, fmt.Sprintf("%s uid=%s rv=%s data=%v", cm.Name, cm.UID, cm.ResourceVersion, cm.Data))
	}
	return out
}

func TestObjectsSurviveRestarts(t *testing.T) {
	for _, stop := range []struct {
		name string
		sig  syscall.Signal
	}{{"a clean stop (SIGTERM)", syscall.SIGTERM}, {"kill -9", syscall.SIGKILL}} {
		t.Run("after "+stop.name+" every object is served unchanged", func(t *testing.T) {
			dir := t.TempDir()
			cmd, _ := startProcess(t, dir)
			cs := clientFor(t, dir)
			for i := 0; i < 5; i++ {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Labels: map[string]string{"restart-test": "true"}}, Data: map[string]string{"i": fmt.Sprint(i)}}
				if _, err := cs.CoreV1().ConfigMaps("default").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, cs)
			_ = cmd.Process.Signal(stop.sig)
			err := cmd.Wait()
			if stop.sig == syscall.SIGTERM && err != nil {
				t.Fatalf("minikd exited with %v after SIGTERM", err)
			}
			cmd, _ = startProcess(t, dir)
			defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
			after := snapshot(t, clientFor(t, dir))
			if !slices.Equal(before, after) {
				t.Fatalf("objects changed across restart:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

func TestKubeconfigIsPrivateAndReadyzGatesOnReady(t *testing.T) {
	srv := testserver.Start(t)
	st, err := os.Stat(srv.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig mode %v, want 0600", st.Mode().Perm())
	}
	resp, err := insecure.Get("https://" + srv.Addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz = %d", resp.StatusCode)
	}
	// The storage checks are among readyz's, as kube-apiserver's etcd one.
	resp, err = insecure.Get("https://" + srv.Addr + "/readyz?verbose")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range []string{"[+]etcd ok\n", "[+]etcd-watch ok\n", "readyz check passed\n"} {
		if !strings.Contains(string(body), line) {
			t.Fatalf("/readyz?verbose = %q, want a line %q", body, line)
		}
	}
	resp, err = insecure.Get("https://" + srv.Addr + "/api/v1/namespaces")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("anonymous list = %d, want 401", resp.StatusCode)
	}
}

func TestConfigNamesTheOffendingFlag(t *testing.T) {
	_, err := server.New(server.Config{DataDir: t.TempDir(), Listen: "nope"})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("--listen")) {
		t.Fatalf("err = %v, want one naming --listen", err)
	}
}

// BenchmarkStartup measures a fresh data dir's start: from process start
// to /readyz answering 200. The median is reported as median-ms.
func BenchmarkStartup(b *testing.B) {
	var times []time.Duration
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		cmd, took := startProcess(b, dir)
		times = append(times, took)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
}
