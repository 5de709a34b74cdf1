// Package ecosystem_test drives minikd with the tools operator and chart
// developers run in CI: controller-runtime (a manager with a reconciler,
// finalizers, a metadata-only watch, validating and conversion webhooks),
// envtest against an existing cluster, Helm, and kubectl itself (built
// from k8s.io/kubectl at the version Kubernetes v1.37.2 ships). It is a
// module of its own so that minik's own dependencies stay as they are;
// minikd runs as a process built from the repository, with default flags,
// as a CI job starts it.
package ecosystem_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// minikdBinary is built once from the repository for every test.
var minikdBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "minikd-ecosystem")
	if err != nil {
		panic(err)
	}
	minikdBinary = filepath.Join(dir, "minikd")
	build := exec.Command("go", "build", "-o", minikdBinary, "./cmd/minikd")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build minikd: %v\n%s", err, out)
		os.Exit(1)
	}
	kubectlBinary = filepath.Join(dir, "kubectl")
	build = exec.Command("go", "build", "-o", kubectlBinary, "./kubectl")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build kubectl: %v\n%s", err, out)
		os.Exit(1)
	}
	// kubectl's discovery cache stays with the test's files.
	os.Setenv("KUBECACHEDIR", filepath.Join(dir, "kube-cache"))
	// minikd claims a slot host-wide; the tests' go to a dir of their own.
	os.Setenv("MINIK_SLOTS_DIR", filepath.Join(dir, "slots"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var servingLine = regexp.MustCompile(`^minikd serving on https://\S+; to use it: export KUBECONFIG=(\S+)$`)

// minikd starts minikd with default flags (one node, to keep the test
// light) on a fresh data dir and returns its kubeconfig's path once it
// serves. It stops at the end of the test.
func minikd(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(minikdBinary, "--data-dir", t.TempDir(), "--nodes", "1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var logs strings.Builder
	cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			mu.Lock()
			defer mu.Unlock()
			t.Logf("minikd's log:\n%s", logs.String())
		}
	})
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if m := servingLine.FindStringSubmatch(lines.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return m[1]
		}
	}
	_ = cmd.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Fatalf("minikd did not serve:\n%s", logs.String())
	return ""
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
