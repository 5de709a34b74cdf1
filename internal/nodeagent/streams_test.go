package nodeagent_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	//lint:ignore SA1019 client-go's spdy dialer still returns this package's types
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	utilexec "k8s.io/client-go/util/exec"

	"minik/internal/testserver"
)

// streamsPod runs a busybox that sleeps (app) beside an echo server on
// 5678 (web).
func streamsPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "app", Image: "busybox:1.36", Command: []string{"sh", "-c", "echo started; sleep 3600"}},
			{Name: "web", Image: "hashicorp/http-echo:1.0", Args: []string{"-text=hello from web", "-listen=:5678"},
				Ports: []corev1.ContainerPort{{ContainerPort: 5678}}},
		}},
	}
}

// streamsCluster starts one node with a running streamsPod.
func streamsCluster(t testing.TB, name string) (*testserver.Server, kubernetes.Interface, *corev1.Pod) {
	t.Helper()
	srv := testserver.StartWith(t, testserver.Options{Nodes: 1})
	cs := srv.Client(t)
	pod := streamsPod(name)
	pod.Namespace = "default"
	pod.Spec.NodeName = "minik-node-1"
	if _, err := cs.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod %s: %v", name, err)
	}
	var p *corev1.Pod
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && got.Status.Phase == corev1.PodRunning && isReady(got) {
			p = got
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s not Running and Ready: %s", name, statusSummary(got))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return srv, cs, p
}

type executorKind string

const (
	viaSPDY      executorKind = "SPDY"
	viaWebSocket executorKind = "WebSocket"
	viaFallback  executorKind = "fallback"
)

// executor builds client-go's executor of kind for a pods/<sub> URL.
func executor(t testing.TB, cfg *rest.Config, kind executorKind, u *url.URL) remotecommand.Executor {
	t.Helper()
	spdyExec, err := remotecommand.NewSPDYExecutor(cfg, "POST", u)
	if err != nil {
		t.Fatal(err)
	}
	wsExec, err := remotecommand.NewWebSocketExecutor(cfg, "GET", u.String())
	if err != nil {
		t.Fatal(err)
	}
	switch kind {
	case viaSPDY:
		return spdyExec
	case viaWebSocket:
		return wsExec
	}
	ex, err := remotecommand.NewFallbackExecutor(wsExec, spdyExec, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func execURL(cs kubernetes.Interface, pod, container string, cmd []string, stdin, tty bool) *url.URL {
	return cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdin: stdin, Stdout: true, Stderr: !tty, TTY: tty}, scheme.ParameterCodec).URL()
}

// TestExec drives exec with client-go's executors, over both protocols.
func TestExec(t *testing.T) {
	srv, cs, _ := streamsCluster(t, "shell")
	cfg := srv.RESTConfig
	for _, kind := range []executorKind{viaWebSocket, viaSPDY, viaFallback} {
		t.Run(string(kind), func(t *testing.T) {
			run := func(t *testing.T, cmd []string, stdin string, tty bool) (string, string, error) {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				var out, errOut bytes.Buffer
				opts := remotecommand.StreamOptions{Stdout: &out, Tty: tty}
				if !tty {
					opts.Stderr = &errOut
				} else {
					// A terminal's size goes on the resize stream.
					opts.TerminalSizeQueue = &oneSize{size: remotecommand.TerminalSize{Width: 120, Height: 40}, done: ctx.Done()}
				}
				if stdin != "" {
					opts.Stdin = strings.NewReader(stdin)
				}
				err := executor(t, cfg, kind, execURL(cs, "shell", "app", cmd, stdin != "", tty)).StreamWithContext(ctx, opts)
				return out.String(), errOut.String(), err
			}
			t.Run("stdout and stderr come apart", func(t *testing.T) {
				out, errOut, err := run(t, []string{"sh", "-c", "echo out; echo err >&2"}, "", false)
				if err != nil || out != "out\n" || errOut != "err\n" {
					t.Errorf("got stdout %q stderr %q err %v", out, errOut, err)
				}
			})
			t.Run("stdin reaches the command", func(t *testing.T) {
				out, _, err := run(t, []string{"cat"}, "hi\n", false)
				if err != nil || out != "hi\n" {
					t.Errorf("got %q, %v", out, err)
				}
			})
			t.Run("the exit code reaches the client", func(t *testing.T) {
				_, _, err := run(t, []string{"sh", "-c", "exit 3"}, "", false)
				var ce utilexec.CodeExitError
				if !errors.As(err, &ce) || ce.ExitStatus() != 3 {
					t.Errorf("got %v (%T), want exit code 3", err, err)
				}
			})
			t.Run("a TTY has one output stream", func(t *testing.T) {
				out, _, err := run(t, []string{"sh", "-c", "echo err >&2"}, "", true)
				if err != nil || !strings.Contains(out, "err") {
					t.Errorf("got %q, %v", out, err)
				}
			})
			t.Run("a missing executable is the runtime's error", func(t *testing.T) {
				_, _, err := run(t, []string{"no-such-binary"}, "", false)
				if err == nil || !strings.Contains(err.Error(), "executable file not found") {
					t.Errorf("got %v", err)
				}
			})
		})
	}

	t.Run("a container the pod does not have is refused", func(t *testing.T) {
		err := executor(t, cfg, viaSPDY, execURL(cs, "shell", "nope", []string{"true"}, false, false)).
			StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: io.Discard})
		if err == nil || !strings.Contains(err.Error(), "container nope is not valid for pod shell") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("a container that is not running is the kubelet's error", func(t *testing.T) {
		done := shellPod("done", "exit 0")
		done.Spec.RestartPolicy = corev1.RestartPolicyNever
		runPod(t, cs, done, "minik-node-1")
		waitPod(t, cs, "default", "done", "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
		for _, kind := range []executorKind{viaSPDY, viaWebSocket} {
			err := executor(t, cfg, kind, execURL(cs, "done", "app", []string{"true"}, false, false)).
				StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: io.Discard})
			if err == nil || !strings.Contains(err.Error(), `container not found ("app")`) {
				t.Errorf("%s: got %v", kind, err)
			}
		}
	})
	t.Run("the node agent's /pods lists the pod", func(t *testing.T) {
		body, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes/minik-node-1/proxy/pods").DoRaw(context.Background())
		if err != nil || !bytes.Contains(body, []byte(`"name":"shell"`)) {
			t.Errorf("nodes/proxy/pods: %v %.200s", err, body)
		}
	})
}

// TestAttach attaches to a running container's process; the stream ends,
// successfully, when the process does.
func TestAttach(t *testing.T) {
	srv, cs, _ := streamsCluster(t, "attached")
	for _, kind := range []executorKind{viaWebSocket, viaSPDY} {
		t.Run(string(kind), func(t *testing.T) {
			name := "attach-" + strings.ToLower(string(kind))
			runPod(t, cs, streamsPod(name), "minik-node-1")
			waitPod(t, cs, "default", name, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
			u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name(name).SubResource("attach").
				VersionedParams(&corev1.PodAttachOptions{Container: "app", Stdin: true, Stdout: true, Stderr: true}, scheme.ParameterCodec).URL()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// The client reads stdin once its streams are up: the attach
			// is established.
			stdin := &firstRead{c: make(chan struct{}), done: ctx.Done()}
			done := make(chan error, 1)
			go func() {
				done <- executor(t, srv.RESTConfig, kind, u).StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: io.Discard, Stderr: io.Discard})
			}()
			select {
			case <-stdin.c:
			case err := <-done:
				t.Fatalf("attach ended before its streams were up: %v", err)
			}
			if err := cs.CoreV1().Pods("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Errorf("attach ended with %v, want success when the process ends", err)
			}
		})
	}
	// kubectl run -i: a container with stdin and stdinOnce running sh
	// waits for input; what the attached client types runs, and the
	// shell's exit ends the container with its code.
	t.Run("an interactive container reads the attached stdin", func(t *testing.T) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "interactive"},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{
				{Name: "sh", Image: "busybox:1.36", Command: []string{"sh"}, Stdin: true, StdinOnce: true},
			}},
		}
		runPod(t, cs, pod, "minik-node-1")
		waitPod(t, cs, "default", "interactive", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name("interactive").SubResource("attach").
			VersionedParams(&corev1.PodAttachOptions{Container: "sh", Stdin: true, Stdout: true, Stderr: true}, scheme.ParameterCodec).URL()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var out syncBuffer
		err := executor(t, srv.RESTConfig, viaWebSocket, u).StreamWithContext(ctx, remotecommand.StreamOptions{
			Stdin: strings.NewReader("echo hello from $(hostname)\nexit 4\n"), Stdout: &out, Stderr: &out})
		if err != nil {
			t.Fatalf("attach: %v", err)
		}
		if !strings.Contains(out.String(), "hello from interactive") {
			t.Errorf("attached output %q, want the echo's line", out.String())
		}
		waitPod(t, cs, "default", "interactive", "Failed with exit code 4", func(p *corev1.Pod) bool {
			cs := p.Status.ContainerStatuses
			return len(cs) == 1 && cs[0].State.Terminated != nil && cs[0].State.Terminated.ExitCode == 4
		})
	})
	t.Run("a container the pod does not have is refused", func(t *testing.T) {
		u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name("attached").SubResource("attach").
			VersionedParams(&corev1.PodAttachOptions{Container: "missing", Stdout: true}, scheme.ParameterCodec).URL()
		err := executor(t, srv.RESTConfig, viaSPDY, u).StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: io.Discard})
		if err == nil || !strings.Contains(err.Error(), "container missing is not valid for pod attached") {
			t.Errorf("got %v", err)
		}
	})
}

// oneSize is a terminal size queue that gives one size, then none once
// done.
type oneSize struct {
	size remotecommand.TerminalSize
	sent bool
	done <-chan struct{}
}

func (q *oneSize) Next() *remotecommand.TerminalSize {
	if !q.sent {
		q.sent = true
		return &q.size
	}
	<-q.done
	return nil
}

// firstRead is a stdin that tells when it is first read, then blocks
// until the stream ends.
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

// forward port-forwards ports of a pod with a dialer of kind and returns
// the local ports and a stop function.
func forward(t testing.TB, cfg *rest.Config, cs kubernetes.Interface, pod string, kind executorKind, ports ...string) ([]portforward.ForwardedPort, func()) {
	t.Helper()
	u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name(pod).SubResource("portforward").URL()
	rt, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var dialer httpstream.Dialer = spdy.NewDialer(upgrader, &http.Client{Transport: rt}, "POST", u)
	if kind == viaWebSocket {
		ws, err := portforward.NewSPDYOverWebsocketDialer(u, cfg)
		if err != nil {
			t.Fatal(err)
		}
		dialer = ws
	}
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, ports, stop, ready, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-errc:
		t.Fatalf("port-forward: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("port-forward not ready")
	}
	got, err := fw.GetPorts()
	if err != nil {
		t.Fatal(err)
	}
	return got, func() { close(stop); <-errc }
}

// TestPortForward forwards the pod's port over SPDY and WebSocket
// tunnelling: HTTP reaches the pod's server; a port nothing serves fails
// its connection and leaves the session usable.
func TestPortForward(t *testing.T) {
	srv, cs, _ := streamsCluster(t, "fwd")
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for _, kind := range []executorKind{viaSPDY, viaWebSocket} {
		t.Run(string(kind), func(t *testing.T) {
			ports, stop := forward(t, srv.RESTConfig, cs, "fwd", kind, "0:5678", "0:9")
			web := fmt.Sprintf("http://127.0.0.1:%d/", ports[0].Local)
			get := func() (string, error) {
				resp, err := client.Get(web)
				if err != nil {
					return "", err
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				return string(b), err
			}
			if body, err := get(); err != nil || !strings.Contains(body, "hello from web") {
				t.Fatalf("GET through the forward: %q, %v", body, err)
			}
			// A port nothing serves fails its connection (client-go then
			// ends the session, as kubectl does: "lost connection to
			// pod"); the pod's streams serve the next one.
			if _, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/", ports[1].Local)); err == nil {
				t.Errorf("GET of a port nothing serves succeeded")
			}
			stop()
			again, stop2 := forward(t, srv.RESTConfig, cs, "fwd", kind, "0:5678")
			defer stop2()
			web = fmt.Sprintf("http://127.0.0.1:%d/", again[0].Local)
			if body, err := get(); err != nil || !strings.Contains(body, "hello from web") {
				t.Errorf("after the refused port: %q, %v", body, err)
			}
		})
	}
}

// TestKubectl runs the real kubectl, when there is one, against the
// node's streams.
func TestKubectl(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl")
	}
	srv, cs, _ := streamsCluster(t, "kc")
	env := append(os.Environ(), "KUBECONFIG="+srv.KubeconfigPath)
	t.Run("exec's exit code", func(t *testing.T) {
		cmd := exec.Command(kubectl, "exec", "kc", "-c", "app", "--", "sh", "-c", "echo hi; exit 3")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 || !strings.Contains(string(out), "command terminated with exit code 3") || !strings.Contains(string(out), "hi") {
			t.Errorf("kubectl exec: %v\n%s", err, out)
		}
	})
	t.Run("exec -i reads stdin", func(t *testing.T) {
		cmd := exec.Command(kubectl, "exec", "-i", "kc", "-c", "app", "--", "cat")
		cmd.Env, cmd.Stdin = env, strings.NewReader("hi\n")
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != "hi\n" {
			t.Errorf("kubectl exec -i: %v %q", err, out)
		}
	})
	t.Run("exec into a container the pod does not have", func(t *testing.T) {
		cmd := exec.Command(kubectl, "exec", "kc", "-c", "nope", "--", "true")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "container nope is not valid for pod kc") {
			t.Errorf("kubectl exec -c nope: %v\n%s", err, out)
		}
	})
	t.Run("debug adds an ephemeral container exec reaches", func(t *testing.T) {
		cmd := exec.Command(kubectl, "debug", "kc", "--image=busybox:1.36", "--target=app", "--container=dbg", "--", "sleep", "3600")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl debug: %v\n%s", err, out)
		}
		waitPod(t, cs, "default", "kc", "dbg Running", func(p *corev1.Pod) bool {
			for _, s := range p.Status.EphemeralContainerStatuses {
				if s.Name == "dbg" && s.State.Running != nil {
					return true
				}
			}
			return false
		})
		cmd = exec.Command(kubectl, "exec", "kc", "-c", "dbg", "--", "echo", "debugging")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil || string(out) != "debugging\n" {
			t.Errorf("kubectl exec -c dbg: %v %q", err, out)
		}
	})
	t.Run("port-forward", func(t *testing.T) {
		port, stderr, _ := kubectlForward(t, kubectl, env, "pod/kc", ":5678")
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err != nil {
			t.Fatalf("GET: %v; %s", err, stderr.String())
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), "hello from web") {
			t.Errorf("GET through kubectl port-forward: %q", b)
		}
	})
	t.Run("port-forward to a port nothing serves", func(t *testing.T) {
		port, stderr, wait := kubectlForward(t, kubectl, env, "pod/kc", ":9")
		if _, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port)); err == nil {
			t.Errorf("GET of a port nothing serves succeeded")
		}
		// kubectl reports the node's error and ends ("lost connection
		// to pod").
		wait()
		if !strings.Contains(stderr.String(), "error forwarding port 9") || !strings.Contains(stderr.String(), "connection refused") {
			t.Errorf("kubectl port-forward's stderr:\n%s", stderr.String())
		}
	})
}

// kubectlForward starts `kubectl port-forward target ports` and returns
// the local port it listens on, its stderr, and a function that waits for
// it to end (killing it after 30s); it is killed when the test ends.
func kubectlForward(t *testing.T, kubectl string, env []string, target, ports string) (int, *syncBuffer, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cmd := exec.CommandContext(ctx, kubectl, "port-forward", target, ports)
	cmd.Env = env
	stdout, _ := cmd.StdoutPipe()
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	var once sync.Once
	wait := func() { once.Do(func() { _ = cmd.Wait(); cancel() }) }
	t.Cleanup(func() { cancel(); wait() })
	// "Forwarding from 127.0.0.1:NNNNN -> 5678"
	buf := make([]byte, 512)
	var line string
	for !strings.Contains(line, "->") {
		n, err := stdout.Read(buf)
		if err != nil {
			t.Fatalf("kubectl port-forward: %v; %s", err, stderr.String())
		}
		line += string(buf[:n])
	}
	var port int
	if _, err := fmt.Sscanf(line[strings.Index(line, "127.0.0.1:"):], "127.0.0.1:%d", &port); err != nil {
		t.Fatalf("parse %q: %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return port, stderr, wait
}

// syncBuffer is a bytes.Buffer safe for a process's writes and the
// test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
