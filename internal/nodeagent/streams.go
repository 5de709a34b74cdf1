package nodeagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"

	"minik/internal/nodeagent/runtime"
)

// The node's streaming endpoints, as the kubelet's (pkg/kubelet/server):
// /exec/{ns}/{pod}/{container} and /attach/... upgrade to the SPDY
// remote-command protocols (v4.channel.k8s.io down to channel.k8s.io) or
// the kubelet's WebSocket ones, /portForward/{ns}/{pod} to SPDY
// portforward.k8s.io, and /run/{ns}/{pod}/{container}?cmd= runs a command
// and answers its output. The protocol work is the kubelet's own
// (k8s.io/cri-streaming); what runs is the simulated container's. The API
// server translates kubectl's WebSocket v5 and port-forward tunnelling to
// these, as kube-apiserver does for a kubelet.

const (
	// streamIdleTimeout is the kubelet's default
	// streamingConnectionIdleTimeout.
	streamIdleTimeout = 4 * time.Hour
	// maxRunOutput bounds what /run answers.
	maxRunOutput = 4 << 20
)

// streams serves exec, attach and port-forward for one node.
type streams struct{ n *node }

// running is the running instance of a pod's container (ephemeral ones
// included), or the kubelet's error when it has none.
func (n *node) running(ns, podName, container string) (*podWorker, *instance, error) {
	n.mu.Lock()
	pw := n.byName[ns+"/"+podName]
	n.mu.Unlock()
	if pw == nil {
		return nil, nil, errPodNotExist
	}
	pw.mu.Lock()
	defer pw.mu.Unlock()
	c := pw.ctrs[container]
	if c == nil {
		return pw, nil, fmt.Errorf("container not found (%q)", container)
	}
	cur := c.current()
	if cur == nil || cur.c == nil || cur.exit != nil {
		return pw, nil, fmt.Errorf("container not found (%q)", container)
	}
	return pw, cur, nil
}

// errPodNotExist is the kubelet's answer for a pod it does not run.
var errPodNotExist = errors.New("pod does not exist")

// writeStreamError answers an error before an upgrade as the kubelet's
// streaming.WriteError does: plain text, 404 for a missing pod, else 500.
func writeStreamError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, errPodNotExist) {
		code = http.StatusNotFound
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, err.Error())
}

func (s streams) serveExec(w http.ResponseWriter, r *http.Request) {
	ns, pod, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if _, _, err := s.n.running(ns, pod, container); err != nil {
		writeStreamError(w, err)
		return
	}
	remotecommand.ServeExec(w, r, s, ns+"/"+pod, "", container, r.URL.Query()["command"], opts,
		streamIdleTimeout, remotecommand.DefaultStreamCreationTimeout, remotecommand.SupportedStreamingProtocols)
}

func (s streams) serveAttach(w http.ResponseWriter, r *http.Request) {
	ns, pod, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if _, _, err := s.n.running(ns, pod, container); err != nil {
		if !errors.Is(err, errPodNotExist) {
			err = fmt.Errorf("container %s not found in pod %s_%s", container, pod, ns)
		}
		writeStreamError(w, err)
		return
	}
	remotecommand.ServeAttach(w, r, s, ns+"/"+pod, "", container, opts,
		streamIdleTimeout, remotecommand.DefaultStreamCreationTimeout, remotecommand.SupportedStreamingProtocols)
}

func (s streams) servePortForward(w http.ResponseWriter, r *http.Request) {
	ns, pod := r.PathValue("namespace"), r.PathValue("pod")
	opts, err := portforward.NewV4Options(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.n.mu.Lock()
	pw := s.n.byName[ns+"/"+pod]
	s.n.mu.Unlock()
	if pw == nil {
		writeStreamError(w, errPodNotExist)
		return
	}
	portforward.ServePortForward(w, r, s, ns+"/"+pod, string(pw.uid), opts,
		streamIdleTimeout, remotecommand.DefaultStreamCreationTimeout, portforward.SupportedProtocols)
}

// serveRun runs ?cmd= (split at spaces, as the kubelet does) in a
// container and answers its combined output.
func (s streams) serveRun(w http.ResponseWriter, r *http.Request) {
	ns, pod, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	_, inst, err := s.n.running(ns, pod, container)
	if err != nil {
		writeStreamError(w, err)
		return
	}
	out := &limitedBuffer{max: maxRunOutput}
	code, err := inst.c.ExecStream(r.Context(), runtime.ExecOptions{Argv: strings.Split(r.URL.Query().Get("cmd"), " "), Stdout: out, Stderr: out})
	if err == nil && code != 0 {
		err = fmt.Errorf("command %q exited with %d: %s", r.URL.Query().Get("cmd"), code, out.String())
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out.Bytes())
}

// servePods lists the pods the node runs, as the kubelet's /pods: the
// versions it last saw, with the status it last posted.
func (s streams) servePods(w http.ResponseWriter, _ *http.Request) {
	s.n.mu.Lock()
	workers := make([]*podWorker, 0, len(s.n.byName))
	for _, pw := range s.n.byName {
		workers = append(workers, pw)
	}
	s.n.mu.Unlock()
	list := &corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: []corev1.Pod{}}
	for _, pw := range workers {
		pod := pw.latest()
		if pod == nil {
			continue
		}
		p := pod.DeepCopy()
		pw.mu.Lock()
		if pw.lastStatus != nil {
			p.Status = *pw.lastStatus.DeepCopy()
		}
		pw.mu.Unlock()
		p.ManagedFields = nil
		list.Items = append(list.Items, *p)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

// ExecInContainer implements remotecommand.Executor: the command runs in
// the simulated container; a non-zero exit is a CodeExitError, as the
// kubelet's runtime returns it, so the client sees the code.
func (s streams) ExecInContainer(ctx context.Context, name, _, container string, cmd []string, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize, _ time.Duration) error {
	ns, pod, _ := strings.Cut(name, "/")
	_, inst, err := s.n.running(ns, pod, container)
	if err != nil {
		return err
	}
	o := runtime.ExecOptions{Argv: cmd, TTY: tty, Resize: terminalSizes(ctx, resize)}
	if in != nil {
		o.Stdin = in
	}
	if out != nil {
		o.Stdout = out
	}
	if errw != nil {
		o.Stderr = errw
	}
	code, err := inst.c.ExecStream(ctx, o)
	if err != nil {
		return err
	}
	if code != 0 {
		return utilexec.CodeExitError{Err: fmt.Errorf("command '%s' exited with %d", strings.Join(cmd, " "), code), Code: code}
	}
	return nil
}

// AttachContainer implements remotecommand.Attacher: the streams reach
// the container's main process until it ends or the client goes.
func (s streams) AttachContainer(ctx context.Context, name, _, container string, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
	ns, pod, _ := strings.Cut(name, "/")
	_, inst, err := s.n.running(ns, pod, container)
	if err != nil {
		return err
	}
	o := runtime.AttachOptions{TTY: tty, Resize: terminalSizes(ctx, resize)}
	if in != nil {
		o.Stdin = in
	}
	if out != nil {
		o.Stdout = out
	}
	if errw != nil {
		o.Stderr = errw
	}
	err = inst.c.Attach(ctx, o)
	if errors.Is(err, runtime.ErrNotRunning) || errors.Is(err, context.Canceled) {
		// The process ended (or the client left): the attach is over.
		return nil
	}
	return err
}

// PortForward implements portforward.PortForwarder: it dials the pod's
// IP and port, where its simulated servers listen, and copies both ways.
func (s streams) PortForward(ctx context.Context, name, _ string, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	ns, pod, _ := strings.Cut(name, "/")
	s.n.mu.Lock()
	pw := s.n.byName[ns+"/"+pod]
	s.n.mu.Unlock()
	if pw == nil {
		return errPodNotExist
	}
	pw.mu.Lock()
	ip, ready := pw.ip, pw.sandboxReady
	pw.mu.Unlock()
	if !ready || ip == "" {
		return fmt.Errorf("failed to find sandbox for pod %q", pod)
	}
	addr := net.JoinHostPort(ip, strconv.Itoa(int(port)))
	conn, err := s.n.dialer.DialContext(ctx, "tcp4", addr)
	if err != nil {
		return fmt.Errorf("failed to connect to localhost:%d inside namespace %q, IPv4: %w", port, string(pw.uid), err)
	}
	defer conn.Close()
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(conn, stream)
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(stream, conn)
		done <- struct{}{}
	}()
	// Both directions end: the client's end closes the write side, the
	// server then closes its own.
	for range 2 {
		select {
		case <-done:
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// terminalSizes converts the protocol's resize events into the runtime's.
func terminalSizes(ctx context.Context, in <-chan remotecommand.TerminalSize) <-chan runtime.TerminalSize {
	if in == nil {
		return nil
	}
	out := make(chan runtime.TerminalSize, 1)
	go func() {
		defer close(out)
		for {
			select {
			case sz, ok := <-in:
				if !ok {
					return
				}
				select {
				case out <- runtime.TerminalSize{Width: sz.Width, Height: sz.Height}:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// limitedBuffer keeps at most max bytes of what is written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (b *limitedBuffer) Bytes() []byte  { return b.buf }
func (b *limitedBuffer) String() string { return string(b.buf) }
