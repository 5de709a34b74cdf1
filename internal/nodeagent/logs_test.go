package nodeagent_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func shellPod(name string, script string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "busybox:1.36", Command: []string{"sh", "-c", script},
		}}},
	}
}

func readLogs(t *testing.T, cs kubernetes.Interface, name string, o *corev1.PodLogOptions) string {
	t.Helper()
	rc, err := cs.CoreV1().Pods("default").GetLogs(name, o).Stream(context.Background())
	if err != nil {
		t.Fatalf("logs %+v: %v", o, err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return string(b)
}

// TestLogs: the node writes CRI log files and serves them through the
// API's pods/log with kube's options.
func TestLogs(t *testing.T) {
	srv, cs := cluster(t, 1)
	pod := runPod(t, cs, shellPod("printer", "for i in 1 2 3 4 5; do echo line $i; done; echo oops >&2; sleep 3600"), "minik-node-1")
	waitPod(t, cs, "default", "printer", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	all := "line 1\nline 2\nline 3\nline 4\nline 5\noops\n"
	waitFor(t, 10*time.Second, "the log", func(ctx context.Context) (bool, error) {
		return readLogs(t, cs, "printer", &corev1.PodLogOptions{}) == all, nil
	})

	t.Run("the file is in the CRI format, where the kubelet keeps it", func(t *testing.T) {
		path := filepath.Join(srv.DataDir, "nodes", "minik-node-1", "pods", "default_printer_"+string(pod.UID), "app", "0.log")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z (stdout|stderr) F .*$`)
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(lines) != 6 || !strings.HasSuffix(lines[5], " stderr F oops") {
			t.Fatalf("log file:\n%s", data)
		}
		for _, l := range lines {
			if !re.MatchString(l) {
				t.Errorf("not a CRI line: %q", l)
			}
		}
	})
	tail, limit := int64(2), int64(9)
	for _, tc := range []struct {
		name string
		opts corev1.PodLogOptions
		want string
	}{
		{"tailLines keeps the last lines", corev1.PodLogOptions{TailLines: &tail}, "line 5\noops\n"},
		{"limitBytes cuts the output", corev1.PodLogOptions{LimitBytes: &limit}, "line 1\nli"},
		{"sinceTime in the future is empty", corev1.PodLogOptions{SinceTime: &metav1.Time{Time: time.Now().Add(time.Hour)}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := readLogs(t, cs, "printer", &tc.opts); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("timestamps prefix each line", func(t *testing.T) {
		got := readLogs(t, cs, "printer", &corev1.PodLogOptions{Timestamps: true, TailLines: &tail})
		re := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z line 5\n\S+ oops\n$`)
		if !re.MatchString(got) {
			t.Errorf("got %q", got)
		}
	})
	t.Run("previous has nothing before the first restart", func(t *testing.T) {
		_, err := cs.CoreV1().Pods("default").GetLogs("printer", &corev1.PodLogOptions{Previous: true}).Stream(context.Background())
		if !apierrors.IsBadRequest(err) || err.Error() != `previous terminated container "app" in pod "printer" not found` {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("follow streams new lines", func(t *testing.T) {
		runPod(t, cs, shellPod("ticker", "i=0; while true; do i=$((i+1)); echo tick $i; sleep 1; done"), "minik-node-1")
		waitPod(t, cs, "default", "ticker", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		rc, err := cs.CoreV1().Pods("default").GetLogs("ticker", &corev1.PodLogOptions{Follow: true}).Stream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		sc := bufio.NewScanner(rc)
		for want := 1; want <= 5; want++ {
			if !sc.Scan() {
				t.Fatalf("the stream ended before tick %d: %v", want, sc.Err())
			}
			if got := sc.Text(); got != "tick "+strconv.Itoa(want) {
				t.Fatalf("line %d: %q", want, got)
			}
		}
	})
	t.Run("a followed log ends when its container does", func(t *testing.T) {
		runPod(t, cs, shellPod("short", "echo one; sleep 2; echo two"), "minik-node-1")
		waitPod(t, cs, "default", "short", "started", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		rc, err := cs.CoreV1().Pods("default").GetLogs("short", &corev1.PodLogOptions{Follow: true}).Stream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !strings.HasPrefix(string(b), "one\ntwo\n") {
			t.Fatalf("followed %q: %v", b, err)
		}
	})
	t.Run("an unknown container is refused by the API", func(t *testing.T) {
		_, err := cs.CoreV1().Pods("default").GetLogs("printer", &corev1.PodLogOptions{Container: "nope"}).Stream(context.Background())
		if !apierrors.IsBadRequest(err) {
			t.Errorf("err = %v", err)
		}
	})
}
