package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/util/podutils"

	"minik/internal/testserver"
)

// streamsServer is a minikd with controllers, the scheduler and one
// node, running pod "shell" (a busybox that sleeps, "app", beside an echo
// server on 5678, "web") and Service "echo" (port 80 → targetPort 5678).
type streamsServer struct {
	srv *testserver.Server
	cs  kubernetes.Interface
	// pre137 skips the comparison with the real kubectl for the next
	// check: the machine's kubectl is older than v1.37, whose behaviour
	// there differs.
	pre137 bool
}

func startStreamsServer(t testing.TB) *streamsServer {
	t.Helper()
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"*"}, Scheduler: true, Nodes: 1})
	s := &streamsServer{srv: srv, cs: srv.Client(t)}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "shell", Namespace: "default", Labels: map[string]string{"app": "echo"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "app", Image: "busybox:1.36", Command: []string{"sh", "-c", "echo started; sleep 3600"}},
			{Name: "web", Image: "hashicorp/http-echo:1.0", Args: []string{"-text=hello from web", "-listen=:5678"},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 5678}}},
		}},
	}
	if _, err := s.cs.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod shell: %v", err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: "default"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "echo"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}},
	}
	if _, err := s.cs.CoreV1().Services("default").Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create service echo: %v", err)
	}
	s.waitPod(t, "shell", "Running and Ready", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && podutils.IsPodReady(p)
	})
	return s
}

// waitPod waits until pod name satisfies cond.
func (s *streamsServer) waitPod(t testing.TB, name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		p, err := s.cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && cond(p) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s not %s: %v %+v", name, what, err, p)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// streamingRuntime reports whether the node's runtime is the one with
// streaming exec (stdin read as it arrives) and tar, which came together;
// the runtime before it has no tar.
func (s *streamsServer) streamingRuntime(t *testing.T) bool {
	got := s.minikctl(t, "", "exec", "shell", "-c", "app", "--", "tar", "--help")
	return !strings.Contains(got.stderr, "executable file not found")
}

// result is one command's outcome.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n[stdout]\n%s[stderr]\n%s", r.code, r.stdout, r.stderr)
}

// minikctl runs minikctl in-process with stdin.
func (s *streamsServer) minikctl(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	streams, in, stdout, stderr := TestStreams()
	in.WriteString(stdin)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := Run(ctx, append([]string{"--kubeconfig", s.srv.KubeconfigPath}, args...), streams)
	return result{stdout.String(), stderr.String(), code}
}

// kubectl runs the real kubectl with the same arguments, or reports false
// when there is none.
func (s *streamsServer) kubectl(t *testing.T, stdin string, args ...string) (result, bool) {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		return result{}, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, append([]string{"--kubeconfig", s.srv.KubeconfigPath}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &stdout, &stderr
	err = cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("kubectl %v: %v", args, err)
	}
	return result{stdout.String(), stderr.String(), code}, true
}

// check runs args with minikctl, compares the outcome with want, and with
// real kubectl's when there is one (after norm, which may be nil).
func (s *streamsServer) check(t *testing.T, stdin string, want result, norm func(string) string, args ...string) {
	t.Helper()
	if norm == nil {
		norm = func(s string) string { return s }
	}
	got := s.minikctl(t, stdin, args...)
	got.stdout, got.stderr = norm(got.stdout), norm(got.stderr)
	if got != want {
		t.Errorf("minikctl %s:\ngot  %s\nwant %s", strings.Join(args, " "), got, want)
	}
	if s.pre137 {
		s.pre137 = false
		return
	}
	if kc, ok := s.kubectl(t, stdin, args...); ok {
		kc.stdout, kc.stderr = norm(kc.stdout), norm(kc.stderr)
		if kc != got {
			t.Errorf("minikctl %s differs from kubectl:\nminikctl %s\nkubectl  %s", strings.Join(args, " "), got, kc)
		}
	}
}

// TestExecCommand runs exec as kubectl does: output, stdin, the remote
// exit code, the default container notice and kube's errors.
func TestExecCommand(t *testing.T) {
	s := startStreamsServer(t)
	t.Run("the remote exit code is minikctl's", func(t *testing.T) {
		s.check(t, "", result{"hi\n", "command terminated with exit code 3\n", 3}, nil,
			"exec", "shell", "-c", "app", "--", "sh", "-c", "echo hi; exit 3")
	})
	t.Run("stdout and stderr come apart", func(t *testing.T) {
		s.check(t, "", result{"out\n", "err\n", 0}, nil, "exec", "shell", "-c", "app", "--", "sh", "-c", "echo out; echo err >&2")
	})
	t.Run("without -c the first container is used, with kubectl's notice", func(t *testing.T) {
		s.check(t, "", result{"x\n", "Defaulted container \"app\" out of: app, web\n", 0}, nil, "exec", "shell", "--", "echo", "x")
	})
	t.Run("-i passes stdin", func(t *testing.T) {
		s.check(t, "hi\n", result{"hi\n", "", 0}, nil, "exec", "-i", "shell", "-c", "app", "--", "cat")
	})
	t.Run("-t without a terminal falls back, as kubectl", func(t *testing.T) {
		s.check(t, "hi\n", result{"hi\n", "Unable to use a TTY - input is not a terminal or the right kind of file\n", 0}, nil,
			"exec", "-it", "shell", "-c", "app", "--", "cat")
	})
	t.Run("TYPE/NAME resolves to a pod of the Service", func(t *testing.T) {
		s.check(t, "", result{"via svc\n", "", 0}, nil, "exec", "svc/echo", "-c", "app", "--", "echo", "via svc")
	})
	t.Run("a container the pod does not have", func(t *testing.T) {
		// kubectl v1.37 checks the name before it asks the server
		// (v1.32's shows the server's BadRequest).
		s.pre137 = true
		s.check(t, "", result{"", "error: container nope is not valid for pod shell out of: app, web\n", 1}, nil,
			"exec", "shell", "-c", "nope", "--", "true")
	})
	t.Run("a pod that does not exist", func(t *testing.T) {
		s.check(t, "", result{"", "Error from server (NotFound): pods \"missing\" not found\n", 1}, nil, "exec", "missing", "--", "true")
	})
	t.Run("no command", func(t *testing.T) {
		s.check(t, "", result{"", "error: you must specify at least one command for the container\n", 1}, nil, "exec", "shell")
	})
	t.Run("a missing executable is the runtime's error", func(t *testing.T) {
		got := s.minikctl(t, "", "exec", "shell", "-c", "app", "--", "no-such-binary")
		if got.code == 0 || !strings.Contains(got.stderr, "executable file not found") {
			t.Errorf("got %s", got)
		}
	})
	t.Run("a completed pod", func(t *testing.T) {
		done := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "done", Namespace: "default"}, Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "app", Image: "busybox:1.36", Command: []string{"true"}}}}}
		if _, err := s.cs.CoreV1().Pods("default").Create(context.Background(), done, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		s.waitPod(t, "done", "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
		s.check(t, "", result{"", "error: cannot exec into a container in a completed pod; current phase is Succeeded\n", 1}, nil,
			"exec", "done", "--", "true")
	})
}

// lockedBuffer is a buffer written by a running command and read by the
// test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var forwardingRE = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)`)

// TestPortForwardCommand forwards to a pod, a Service (its targetPort)
// and by a named port; curl-like GETs reach the pod's server and each
// connection is reported as kubectl reports it.
func TestPortForwardCommand(t *testing.T) {
	s := startStreamsServer(t)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for _, tc := range []struct{ name, target, ports, remote string }{
		{"a pod's port", "pod/shell", ":5678", "5678"},
		{"a Service's port goes to its targetPort", "svc/echo", ":80", "5678"},
		{"a named container port", "shell", ":http", "5678"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out, errOut := &lockedBuffer{}, &lockedBuffer{}
			streams := IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}
			done := make(chan int, 1)
			go func() {
				done <- Run(ctx, []string{"--kubeconfig", s.srv.KubeconfigPath, "port-forward", "--address", "127.0.0.1", tc.target, tc.ports}, streams)
			}()
			var m []string
			deadline := time.Now().Add(30 * time.Second)
			for m = forwardingRE.FindStringSubmatch(out.String()); m == nil; m = forwardingRE.FindStringSubmatch(out.String()) {
				select {
				case code := <-done:
					t.Fatalf("port-forward ended with %d:\n%s%s", code, out, errOut)
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("no Forwarding line:\n%s%s", out, errOut)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if m[2] != tc.remote {
				t.Errorf("forwards to %s, want %s", m[2], tc.remote)
			}
			resp, err := client.Get("http://127.0.0.1:" + m[1] + "/")
			if err != nil {
				t.Fatalf("GET through the forward: %v\n%s", err, errOut)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(body), "hello from web") {
				t.Errorf("GET through the forward: %q", body)
			}
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("port-forward exited %d:\n%s", code, errOut)
			}
			want := fmt.Sprintf("Forwarding from 127.0.0.1:%s -> %s\nHandling connection for %s\n", m[1], tc.remote, m[1])
			if out.String() != want {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
			}
		})
	}
	t.Run("a port of the Service that does not exist", func(t *testing.T) {
		s.check(t, "", result{"", "error: Service echo does not have a service port 81\n", 1}, nil, "port-forward", "svc/echo", "81")
	})
	t.Run("no ports", func(t *testing.T) {
		got := s.minikctl(t, "", "port-forward", "shell")
		want := "error: TYPE/NAME and list of ports are required for port-forward\nSee 'minikctl port-forward -h' for help and examples\n"
		if got.code != 1 || got.stderr != want {
			t.Errorf("got %s", got)
		}
	})
}

// TestAttachCommand attaches to a running container: the session lasts
// as long as the container's process and ends with success when it does.
func TestAttachCommand(t *testing.T) {
	s := startStreamsServer(t)
	notices := "If you don't see a command prompt, try pressing enter.\n"
	t.Run("a container the pod does not have", func(t *testing.T) {
		// v1.32 words it "container nope not found in pod shell".
		s.pre137 = true
		s.check(t, "", result{"", "error: cannot attach to the container: container nope is not valid for pod shell out of: app, web\n", 1}, nil, "attach", "shell", "-c", "nope")
	})
	t.Run("a pod that does not exist", func(t *testing.T) {
		s.check(t, "", result{"", "Error from server (NotFound): pods \"missing\" not found\n", 1}, nil, "attach", "missing")
	})
	t.Run("the session ends when the process does", func(t *testing.T) {
		// With -i the client reads stdin once its streams are up: the
		// session is established; the pod is then deleted and its process
		// ends.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stdin := &firstRead{c: make(chan struct{}), done: ctx.Done()}
		errOut := &lockedBuffer{}
		streams := IOStreams{In: stdin, Out: io.Discard, ErrOut: errOut}
		done := make(chan int, 1)
		go func() {
			done <- Run(ctx, []string{"--kubeconfig", s.srv.KubeconfigPath, "attach", "-i", "shell", "-c", "app"}, streams)
		}()
		select {
		case <-stdin.c:
		case code := <-done:
			t.Fatalf("attach ended (%d) before its streams were up: %s", code, errOut)
		case <-time.After(30 * time.Second):
			t.Fatalf("attach not up: %s", errOut)
		}
		if !strings.Contains(errOut.String(), notices) {
			t.Errorf("no notice: %q", errOut)
		}
		if err := s.cs.CoreV1().Pods("default").Delete(context.Background(), "shell", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if code := <-done; code != 0 {
			t.Errorf("attach exited %d: %s", code, errOut)
		}
	})
}

// firstRead is a stdin that tells when it is first read, then blocks
// until done.
type firstRead struct {
	once sync.Once
	c    chan struct{}
	done <-chan struct{}
}

func (f *firstRead) Read([]byte) (int, error) {
	f.once.Do(func() { close(f.c) })
	<-f.done
	return 0, io.EOF
}

// TestRunCommand creates pods as kubectl run does; attached with
// --restart=Never it reports the container's output and exit code, and
// --rm deletes the pod.
func TestRunCommand(t *testing.T) {
	s := startStreamsServer(t)
	t.Run("a pod from an image", func(t *testing.T) {
		got := s.minikctl(t, "", "run", "nginx", "--image=nginx:1.27", "--port=80", "-l", "app=nginx")
		if got != (result{"pod/nginx created\n", "", 0}) {
			t.Fatalf("got %s", got)
		}
		p := s.waitPod(t, "nginx", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		c := p.Spec.Containers[0]
		if c.Name != "nginx" || c.Image != "nginx:1.27" || len(c.Ports) != 1 || c.Ports[0].ContainerPort != 80 || p.Labels["app"] != "nginx" {
			t.Errorf("pod spec: %+v labels %v", c, p.Labels)
		}
	})
	t.Run("dry run prints the pod", func(t *testing.T) {
		got := s.minikctl(t, "", "run", "x", "--image=busybox", "--dry-run=client", "-o", "name")
		if got != (result{"pod/x\n", "", 0}) {
			t.Errorf("got %s", got)
		}
	})
	t.Run("errors", func(t *testing.T) {
		// v1.32 adds a usage hint to these and capitalizes "Invalid".
		for _, tc := range []struct {
			want string
			args []string
		}{
			{"error: -i/--stdin is required for containers with -t/--tty=true\n", []string{"run", "x", "--image=busybox", "-t"}},
			{"error: --rm should only be used for attached containers\n", []string{"run", "x", "--image=busybox", "--rm"}},
			{"error: invalid image name \"Bad:Image\": invalid reference format\n", []string{"run", "x", "--image=Bad:Image"}},
			{"error: NAME is required for run\n", []string{"run", "--image=busybox"}},
		} {
			s.pre137 = true
			s.check(t, "", result{"", tc.want, 1}, nil, tc.args...)
		}
	})
	t.Run("-i --rm --restart=Never gives the output and the exit code, and deletes the pod", func(t *testing.T) {
		// The pod's name varies between minikctl's run and kubectl's.
		name := regexp.MustCompile(`once-[a-z]+`)
		norm := func(s string) string { return name.ReplaceAllString(s, "once-X") }
		for _, tool := range []string{"minikctl", "kubectl"} {
			pod := "once-" + map[string]string{"minikctl": "m", "kubectl": "k"}[tool]
			args := []string{"run", pod, "--image=busybox:1.36", "--restart=Never", "-i", "--rm", "--", "sh", "-c", "echo hi; exit 3"}
			var got result
			if tool == "minikctl" {
				got = s.minikctl(t, "", args...)
			} else {
				var ok bool
				if got, ok = s.kubectl(t, "", args...); !ok {
					continue
				}
			}
			got.stdout, got.stderr = norm(got.stdout), norm(got.stderr)
			// Whether the container ends before the attach (its log is
			// printed; v1.37 prints the log before attaching, then again
			// from the second it tried when the attach fails) or after
			// (attached), its output is there. v1.32 says only
			// `pod "once-X" deleted`.
			if got.code != 3 || !strings.Contains(got.stdout, "hi\n") || !strings.Contains(got.stdout, `pod "once-X" deleted`) ||
				!strings.Contains(got.stderr, "pod default/once-X terminated (Error)") {
				t.Errorf("%s %s: got %s", tool, strings.Join(args, " "), got)
			}
		}
	})
}

// TestDebugCommand adds an ephemeral container through
// pods/ephemeralcontainers, as kubectl debug does; exec reaches it.
func TestDebugCommand(t *testing.T) {
	s := startStreamsServer(t)
	for _, tool := range []string{"minikctl", "kubectl"} {
		t.Run(tool, func(t *testing.T) {
			dbg := "dbg-" + tool
			args := []string{"debug", "shell", "--image=busybox:1.36", "--target=app", "-c", dbg, "--", "sleep", "3600"}
			var got result
			if tool == "minikctl" {
				got = s.minikctl(t, "", args...)
			} else {
				var ok bool
				if got, ok = s.kubectl(t, "", args...); !ok {
					t.Skip("no kubectl")
				}
			}
			want := result{"Targeting container \"app\". If you don't see processes from this container it may be because the container runtime doesn't support this feature.\n", "", 0}
			if tool == "kubectl" {
				// v1.32 defaults to --profile=legacy and warns of it.
				got.stderr = ""
			}
			if got != want {
				t.Errorf("got %s\nwant %s", got, want)
			}
			s.waitPod(t, "shell", dbg+" Running", func(p *corev1.Pod) bool {
				for _, st := range p.Status.EphemeralContainerStatuses {
					if st.Name == dbg && st.State.Running != nil {
						return true
					}
				}
				return false
			})
			if got := s.minikctl(t, "", "exec", "shell", "-c", dbg, "--", "echo", "debugging"); got != (result{"debugging\n", "", 0}) {
				t.Errorf("exec -c %s: %s", dbg, got)
			}
		})
	}
	t.Run("a node", func(t *testing.T) {
		got := s.minikctl(t, "", "debug", "node/minik-node-1", "--image=busybox:1.36", "--", "true")
		m := regexp.MustCompile(`^Creating debugging pod (node-debugger-minik-node-1-[a-z0-9]+) with container debugger on node minik-node-1\.\n$`).FindStringSubmatch(got.stdout)
		if got.code != 0 || m == nil {
			t.Fatalf("got %s", got)
		}
		p := s.waitPod(t, m[1], "created", func(*corev1.Pod) bool { return true })
		if p.Spec.NodeName != "minik-node-1" || !p.Spec.HostPID || p.Spec.Containers[0].Image != "busybox:1.36" {
			t.Errorf("debugging pod: node %q hostPID %v containers %+v", p.Spec.NodeName, p.Spec.HostPID, p.Spec.Containers)
		}
	})
}

// TestCpCommand copies a file and a directory into a pod and back, when
// the container has tar (kubectl cp needs it there too), and checks
// kubectl's errors.
func TestCpCommand(t *testing.T) {
	s := startStreamsServer(t)
	t.Run("errors", func(t *testing.T) {
		s.check(t, "", result{"", "error: one of src or dest must be a remote file specification\n", 1}, nil, "cp", "a", "b")
		s.check(t, "", result{"", "error: one of src or dest must be a local file specification\n", 1}, nil, "cp", "shell:/a", "shell:/b")
		s.check(t, "", result{"", "error: /no/such/file doesn't exist in local filesystem\n", 1}, nil, "cp", "/no/such/file", "shell:/tmp/x")
		s.check(t, "", result{"", "error: source and destination are required\n", 1}, nil, "cp", "a")
	})
	t.Run("both ways", func(t *testing.T) {
		if !s.streamingRuntime(t) {
			t.Skip("the simulated busybox has no tar yet")
		}
		dir := t.TempDir()
		src := filepath.Join(dir, "src")
		if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string]string{"a.txt": "alpha\n", "sub/b.txt": "beta\n"} {
			if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := s.minikctl(t, "", "cp", filepath.Join(src, "a.txt"), "shell:/tmp/a.txt", "-c", "app"); got != (result{"", "", 0}) {
			t.Fatalf("cp a file in: %s", got)
		}
		if got := s.minikctl(t, "", "exec", "shell", "-c", "app", "--", "cat", "/tmp/a.txt"); got.stdout != "alpha\n" {
			t.Errorf("the copied file: %s", got)
		}
		if got := s.minikctl(t, "", "cp", src, "shell:/tmp/tree", "-c", "app"); got != (result{"", "", 0}) {
			t.Fatalf("cp a directory in: %s", got)
		}
		back := filepath.Join(dir, "back")
		// kubectl writes the remote tar's stderr to its stdout.
		got := s.minikctl(t, "", "cp", "shell:/tmp/tree", back, "-c", "app")
		if got != (result{"tar: removing leading '/' from member names\n", "", 0}) {
			t.Errorf("cp a directory out: %s", got)
		}
		for name, want := range map[string]string{"a.txt": "alpha\n", "sub/b.txt": "beta\n"} {
			if data, err := os.ReadFile(filepath.Join(back, name)); err != nil || string(data) != want {
				t.Errorf("%s copied back: %q, %v", name, data, err)
			}
		}
		kback := filepath.Join(dir, "kback")
		if kc, ok := s.kubectl(t, "", "cp", "shell:/tmp/tree", kback, "-c", "app"); ok {
			if kc != got {
				t.Errorf("cp out differs from kubectl's:\nminikctl %s\nkubectl  %s", got, kc)
			}
			if data, err := os.ReadFile(filepath.Join(kback, "sub/b.txt")); err != nil || string(data) != "beta\n" {
				t.Errorf("kubectl cp: sub/b.txt %q, %v", data, err)
			}
		}
	})
}

// TestInteractiveSessions sends stdin to a container's main process with
// run -i and attach -i, as kubectl does. A runtime whose containers do not
// wait on stdin (they end before the attach) makes kubectl fall back to
// the logs: the test then skips, saying so.
func TestInteractiveSessions(t *testing.T) {
	s := startStreamsServer(t)
	t.Run("run -i --rm --restart=Never", func(t *testing.T) {
		for _, tool := range []string{"minikctl", "kubectl"} {
			pod := "talk-" + tool
			args := []string{"run", pod, "--image=busybox:1.36", "--restart=Never", "-i", "--rm", "--", "sh"}
			var got result
			if tool == "minikctl" {
				got = s.minikctl(t, "echo got hello; exit 4\n", args...)
			} else {
				var ok bool
				if got, ok = s.kubectl(t, "echo got hello; exit 4\n", args...); !ok {
					continue
				}
			}
			if strings.Contains(got.stderr, "couldn't attach") {
				t.Skipf("the runtime's container did not wait on stdin: %s", got)
			}
			if got.code != 4 || !strings.Contains(got.stdout, "got hello\n") || !strings.Contains(got.stdout, `pod "`+pod+`" deleted`) ||
				!strings.Contains(got.stderr, "pod default/"+pod+" terminated (Error)") {
				t.Errorf("%s %s: got %s", tool, strings.Join(args, " "), got)
			}
		}
	})
	t.Run("attach -i to a shell that reads stdin", func(t *testing.T) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: "default"}, Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "app", Image: "busybox:1.36", Stdin: true, StdinOnce: true,
				Command: []string{"sh"}}}}}
		if _, err := s.cs.CoreV1().Pods("default").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got := s.waitPod(t, "reader", "Running or done", func(p *corev1.Pod) bool {
			return p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		})
		if got.Status.Phase != corev1.PodRunning {
			t.Skipf("the runtime's container did not wait on stdin: %s", got.Status.Phase)
		}
		res := s.minikctl(t, "echo got hi\n", "attach", "-i", "reader")
		if strings.Contains(res.stderr, "completed pod") {
			t.Skipf("the runtime's container did not wait on stdin: %s", res)
		}
		want := result{"got hi\n", "All commands and output from this session will be recorded in container logs, including credentials and sensitive information passed through the command prompt.\nIf you don't see a command prompt, try pressing enter.\n", 0}
		if res != want {
			t.Errorf("got %s\nwant %s", res, want)
		}
	})
}
