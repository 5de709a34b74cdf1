package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"minik/internal/testserver"
)

// syncBuffer is a buffer safe for a writer and a reader in two goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestGetWatchPrintsChangesUnderTheHeader(t *testing.T) {
	srv := testserver.Start(t)
	web, err := os.ReadFile("../../testdata/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	scaled := filepath.Join(dir, "web.yaml")
	if err := os.WriteFile(scaled, []byte(strings.Replace(string(web), "replicas: 3", "replicas: 5", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(ctx context.Context, out *syncBuffer, args ...string) int {
		errOut := &syncBuffer{}
		code := Run(ctx, append([]string{"--kubeconfig", srv.KubeconfigPath}, args...), IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut})
		if errOut.String() != "" {
			t.Logf("%v: stderr: %s", args, errOut.String())
		}
		return code
	}
	if code := run(context.Background(), &syncBuffer{}, "apply", "-f", "../../testdata/web.yaml"); code != 0 {
		t.Fatalf("apply: exit %d", code)
	}

	for _, tt := range []struct {
		name  string
		args  []string
		first string
	}{
		{"a list is printed, then its changes", []string{"-n", "demo", "get", "deployments", "-w"}, "NAME   READY   UP-TO-DATE   AVAILABLE   AGE\nweb    0/3     0            0           0s\n"},
		{"a named object is printed, then its changes", []string{"-n", "demo", "get", "deployment", "web", "--watch"}, "NAME   READY   UP-TO-DATE   AVAILABLE   AGE\nweb    0/3     0            0           0s\n"},
		{"watch-only prints the changes alone", []string{"get", "deployments", "-A", "--watch-only"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Back to three replicas, so that applying five is a change.
			run(context.Background(), &syncBuffer{}, "apply", "-f", "../../testdata/web.yaml")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := &syncBuffer{}
			done := make(chan int, 1)
			go func() { done <- run(ctx, out, tt.args...) }()
			if tt.first != "" {
				waitFor(t, "the current state", func() bool { return normalize(out.String()) == tt.first })
			} else {
				time.Sleep(300 * time.Millisecond)
			}
			if code := run(context.Background(), &syncBuffer{}, "apply", "-f", scaled); code != 0 {
				t.Fatalf("apply: exit %d", code)
			}
			waitFor(t, "the change", func() bool { return strings.Contains(out.String(), "0/5") })
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("watch ended with exit %d", code)
			}
			got := normalize(out.String())
			if !strings.HasPrefix(got, tt.first) {
				t.Errorf("output\n%s\ndoes not start with\n%s", got, tt.first)
			}
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			last := lines[len(lines)-1]
			want := "web    0/5     0            0           0s"
			if len(tt.args) > 0 && strings.Contains(strings.Join(tt.args, " "), "-A") {
				want = "demo        web    0/5     0            0           0s"
			}
			if last != want {
				t.Errorf("last line %q, want %q (output:\n%s)", last, want, got)
			}
		})
	}
}
