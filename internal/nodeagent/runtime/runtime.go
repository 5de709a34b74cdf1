// Package runtime is minik's simulated container runtime: one per node,
// as containerd is. It pulls images from a simulated registry, runs
// containers whose behaviour follows data (rules.yaml: which images and
// tags exist, what their programs do), interprets the shell scripts
// manifests carry (mvdan.cc/sh's interpreter, with minik's utilities and
// the container's simulated file system: shell.go, utils.go), serves
// real HTTP on the pod's IP for the programs that serve, resolves names
// as the pod's libc would (resolve.go), serves TLS where the program does
// (servetls.go), streams exec and attach (with a simulated terminal,
// tty.go), runs the Kubernetes e2e suite's agnhost (agnhost.go,
// agnhost_webhook.go) and reports exit codes. What a script can make the
// node do is bounded (guard.go): commands, forks, stack depth, variables,
// files.
//
// Time is simulated: every duration (pulls, sleep in scripts) is divided
// by the speed, so that tests run a minute of cluster life in a second.
package runtime

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
	"mvdan.cc/sh/v3/expand"
)

// Config configures a node's runtime.
type Config struct {
	// Rules are the simulation rules; nil means DefaultRules().
	Rules *Rules
	// Policy decides how images outside the catalog pull.
	Policy ImagePolicy
	// Clock tells the time; nil means the real clock.
	Clock clock.WithTicker
	// Speed divides every simulated duration; zero means 1 (real time).
	Speed float64
	// PullLatency is the fixed part of a pull (resolving the manifest).
	PullLatency time.Duration
	// PullBandwidth is the pull rate in bytes per second; zero means
	// 64 MiB/s.
	PullBandwidth int64
	// ParallelPulls lets pulls run at once; by default a node pulls one
	// image at a time, as the kubelet's serializeImagePulls does.
	ParallelPulls bool
	// DNSPort is the port the nameservers of containers' resolv.conf
	// answer on; zero means 53. (A test's DNS server, unprivileged,
	// listens elsewhere.)
	DNSPort int
	// Network decides which connections between pods NetworkPolicies let
	// through; nil lets every one through.
	Network Network
}

// Network is a policy-enforcing network plugin (internal/netpol): it
// tells whether a connection from src to dst:port over proto ("TCP",
// "UDP") is let through.
type Network interface {
	Allowed(ctx context.Context, src, dst netip.Addr, port int32, proto string) bool
}

// Runtime is one node's container runtime: its image store and its
// containers. It is safe for concurrent use.
type Runtime struct {
	cfg    Config
	rules  *Rules
	pullMu sync.Mutex

	mu     sync.Mutex
	images map[string]Image
}

// New returns a node's runtime, with no image pulled.
func New(cfg Config) *Runtime {
	if cfg.Rules == nil {
		cfg.Rules = DefaultRules()
	}
	if cfg.Policy == "" {
		cfg.Policy = PolicyCatalog
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Speed <= 0 {
		cfg.Speed = 1
	}
	if cfg.PullBandwidth <= 0 {
		cfg.PullBandwidth = 64 << 20
	}
	return &Runtime{cfg: cfg, rules: cfg.Rules, images: map[string]Image{}}
}

// Rules returns the runtime's rules.
func (r *Runtime) Rules() *Rules { return r.rules }

// scale turns a simulated duration into a real one.
func (r *Runtime) scale(d time.Duration) time.Duration {
	return time.Duration(float64(d) / r.cfg.Speed)
}

// ImagePresent tells whether the image is in the node's store. The error
// is a reference that cannot be parsed (InvalidImageName).
func (r *Runtime) ImagePresent(image string) (bool, error) {
	ref, err := ParseReference(image)
	if err != nil {
		return false, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.images[ref.String()]
	return ok, nil
}

// PullResult is a finished pull: the image, how long the pull took and
// how long it took including the wait for the node's previous pulls, both
// in simulated time.
type PullResult struct {
	Image    Image
	Duration time.Duration
	Total    time.Duration
}

// Pull pulls an image, taking its simulated time, and stores it. It fails
// as the registry would (a *PullError) or when ctx ends.
func (r *Runtime) Pull(ctx context.Context, image string) (PullResult, error) {
	ref, err := ParseReference(image)
	if err != nil {
		return PullResult{}, err
	}
	clk := r.cfg.Clock
	queued := clk.Now()
	if !r.cfg.ParallelPulls {
		// Wait for the node's pulls one at a time, giving up with ctx.
		got := make(chan struct{})
		go func() {
			r.pullMu.Lock()
			close(got)
		}()
		select {
		case <-got:
		case <-ctx.Done():
			go func() { <-got; r.pullMu.Unlock() }()
			return PullResult{}, ctx.Err()
		}
		defer r.pullMu.Unlock()
	}
	began := clk.Now()
	img, resolveErr := r.rules.Resolve(ref, r.cfg.Policy)
	d := r.cfg.PullLatency
	if resolveErr == nil {
		r.mu.Lock()
		_, present := r.images[ref.String()]
		r.mu.Unlock()
		if !present {
			d += time.Duration(float64(img.Size) / float64(r.cfg.PullBandwidth) * float64(time.Second))
		}
	}
	if d > 0 {
		t := clk.NewTimer(r.scale(d))
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return PullResult{}, ctx.Err()
		}
	}
	if resolveErr != nil {
		return PullResult{}, resolveErr
	}
	r.mu.Lock()
	r.images[ref.String()] = img
	r.mu.Unlock()
	waited := time.Duration(float64(began.Sub(queued)) * r.cfg.Speed)
	return PullResult{Image: img, Duration: d, Total: d + waited}, nil
}

// Images lists the node's images.
func (r *Runtime) Images() []Image {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Image, 0, len(r.images))
	for _, im := range r.images {
		out = append(out, im)
	}
	return out
}

// EnvVar is an environment variable of a container.
type EnvVar struct {
	Name  string
	Value string
}

// ContainerSpec is what a container runs: the kubelet has resolved its
// environment and mounts, and expanded $(VAR) references in its command
// and args.
type ContainerSpec struct {
	// Name is the container's name.
	Name string
	// Image is the image as the pod spec names it; it must have been
	// pulled.
	Image   string
	Command []string
	Args    []string
	Env     []EnvVar
	// Ports are the declared TCP container ports: what a generic server
	// listens on.
	Ports []int32
	// IP is the pod's IP: servers listen there.
	IP string
	// Hostname is the pod's host name (its name).
	Hostname string
	// Pod is namespace/name, named by the pages served.
	Pod string
	// Node is the node's name, named by the pages served.
	Node string
	// Mounts are the container's volume mounts.
	Mounts []Mount
	// Log receives the container's output.
	Log LogSink
	// Stdin, StdinOnce and TTY are the container's own: a container with
	// Stdin waits for input on it (kubectl attach reaches it), and with
	// StdinOnce its stdin closes when the first attached client detaches.
	Stdin, StdinOnce, TTY bool
	// ResolvConf is the /etc/resolv.conf the kubelet writes for the pod
	// (from its dnsPolicy and dnsConfig); empty means none.
	ResolvConf []byte
	// Hosts is the /etc/hosts the kubelet writes for the pod (its own
	// name and hostAliases); empty means none.
	Hosts []byte
	// User is the identity the container's processes run as, from its
	// security context; nil is root.
	User *User
	// ReadOnlyRootFS makes the container's own files read-only
	// (readOnlyRootFilesystem): only its volumes and /dev are writable.
	ReadOnlyRootFS bool
	// Sysctls are the pod's sysctls (dotted names), as sysctl reads them.
	Sysctls map[string]string
}

// User is a process identity: the uid and gid (runAsUser, runAsGroup)
// and the supplementary groups (the pod's fsGroup and
// supplementalGroups), as the runtime sets them.
type User struct {
	UID, GID int64
	Groups   []int64
	// FSGroup owns the pod's volumes (nil: root does).
	FSGroup *int64
}

// Exit is how a container ended.
type Exit struct {
	Code     int32
	Reason   string // Completed, Error, StartError
	Message  string
	Started  time.Time
	Finished time.Time
}

// Container is a created container: Start runs it; Stop stops it.
type Container struct {
	// ID is the runtime's container ID (64 hex digits).
	ID   string
	spec ContainerSpec
	p    *process
	rt   *Runtime

	// out and errOut are the main process's output: its log, and the
	// clients attached to it.
	out, errOut *outStream
	// stdinR and stdinW are the main process's stdin (a container with
	// Stdin); stdinClose closes them once.
	stdinR, stdinW *os.File
	stdinClose     sync.Once
	// ctx is the main process's context; Kill cancels it.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	started  time.Time
	exit     *Exit
	done     chan struct{}
	stopOne  sync.Once
	killOne  sync.Once
	attached bool // a client attached once (StdinOnce)
	// readsCommands tells that the main process is a shell reading its
	// commands from stdin.
	readsCommands bool
}

// Create creates a container from an image the node has.
func (r *Runtime) Create(spec ContainerSpec) (*Container, error) {
	ref, err := ParseReference(spec.Image)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	img, ok := r.images[ref.String()]
	r.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("image %q is not present on the node", spec.Image)
	}
	var id [32]byte
	_, _ = rand.Read(id[:])
	c := &Container{ID: hex.EncodeToString(id[:]), spec: spec, rt: r, done: make(chan struct{})}
	files := map[string][]byte{"etc/hostname": []byte(spec.Hostname + "\n")}
	// The directories every image has.
	for _, d := range []string{"bin", "dev", "etc", "home", "proc", "root", "run", "sys", "tmp", "usr", "var"} {
		files[d+"/"+dirMarker] = nil
	}
	if img.rule != nil {
		for p, content := range img.rule.Files {
			if strings.HasSuffix(p, "/") {
				files[clean(p)+"/"+dirMarker] = nil
				continue
			}
			files[clean(p)] = []byte(content)
		}
	}
	if len(spec.ResolvConf) > 0 {
		files["etc/resolv.conf"] = spec.ResolvConf
	}
	if len(spec.Hosts) > 0 {
		files["etc/hosts"] = spec.Hosts
	}
	c.out = &outStream{log: &lineWriter{stream: "stdout", sink: spec.Log}}
	c.errOut = &outStream{log: &lineWriter{stream: "stderr", sink: spec.Log}}
	if spec.TTY {
		// A terminal has one output stream.
		c.errOut = c.out
	}
	mounts := spec.Mounts
	if spec.ReadOnlyRootFS {
		// /dev is a tmpfs of its own, where the termination log is.
		mounts = append(append([]Mount(nil), mounts...), Mount{Path: "/dev", Volume: NewVolume(nil, false)})
	}
	fsys := newFS(mounts, files)
	fsys.root.readOnly = spec.ReadOnlyRootFS
	c.p = &process{
		rules: r.rules, image: img.rule, spec: &c.spec, fs: fsys,
		clock: r.cfg.Clock, speed: r.cfg.Speed, dnsPort: r.cfg.DNSPort, network: r.cfg.Network, tty: spec.TTY, procs: new(atomic.Int32), forks: new(atomic.Int32),
		stdout: c.out, stderr: c.errOut,
		termC: make(chan struct{}), killC: make(chan struct{}), started: make(chan struct{}),
	}
	return c, nil
}

// outStream is an output of a container's main process: its log lines,
// and what the clients attached meanwhile receive.
type outStream struct {
	log *lineWriter

	mu   sync.Mutex
	next int
	to   map[int]io.Writer
}

func (s *outStream) Write(b []byte) (int, error) {
	_, _ = s.log.Write(b)
	s.mu.Lock()
	ws := make([]io.Writer, 0, len(s.to))
	for _, w := range s.to {
		ws = append(ws, w)
	}
	s.mu.Unlock()
	for _, w := range ws {
		_, _ = w.Write(b)
	}
	return len(b), nil
}

// attach adds a client's writer; the function returned removes it.
func (s *outStream) attach(w io.Writer) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.to == nil {
		s.to = map[int]io.Writer{}
	}
	id := s.next
	s.next++
	s.to[id] = w
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.to, id)
	}
}

// argv is the container's command line: command (or the image's
// entrypoint) then args (or, with neither command nor args, the image's
// cmd).
func (c *Container) argv() []string {
	var entry, cmd []string
	if rule := c.p.image; rule != nil {
		entry, cmd = rule.Entrypoint, rule.Cmd
	}
	switch {
	case len(c.spec.Command) > 0:
		return append(append([]string(nil), c.spec.Command...), c.spec.Args...)
	case len(c.spec.Args) > 0:
		return append(append([]string(nil), entry...), c.spec.Args...)
	}
	return append(append([]string(nil), entry...), cmd...)
}

// environ is the process environment as the interpreter takes it.
func (c *Container) environ() expand.Environ {
	env := c.env()
	pairs := make([]string, 0, len(env))
	for k, v := range env {
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	return expand.ListEnviron(pairs...)
}

// env is the process environment: what the image and the kubelet set,
// then the container's variables.
func (c *Container) env() map[string]string {
	env := map[string]string{
		"PATH":     "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOSTNAME": c.spec.Hostname,
		"HOME":     "/root",
	}
	for _, e := range c.spec.Env {
		env[e.Name] = e.Value
	}
	return env
}

// startWait bounds how long Start waits for the process to reach its
// first wait (servers listening).
const startWait = 2 * time.Second

// Start starts the container's process. It returns once the process
// waits for something (a server listens, a sleep begins) or has ended,
// so that probes find servers up. A start error (the executable is not
// in the image) leaves the container exited with code 128, reason
// StartError, and is returned.
func (c *Container) Start() error {
	c.mu.Lock()
	c.started = c.rt.cfg.Clock.Now()
	c.mu.Unlock()
	argv := c.argv()
	top, err := c.p.resolveTop(argv)
	if err != nil {
		c.finish(&Exit{Code: 128, Reason: "StartError", Message: err.Error()})
		return err
	}
	c.p.cmdline = strings.Join(argv, " ")
	c.readsCommands = len(argv) > 0 && readsCommands(argv)
	if c.spec.Stdin {
		if c.stdinR, c.stdinW, err = os.Pipe(); err != nil {
			c.finish(&Exit{Code: 128, Reason: "StartError", Message: err.Error()})
			return fmt.Errorf("container %s: stdin: %w", c.spec.Name, err)
		}
	}
	// SIGKILL (Kill) cancels what the process runs.
	c.mu.Lock()
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.mu.Unlock()
	select {
	case <-c.p.killC: // killed before it started
		c.cancel()
	default:
	}
	go c.run(argv, top)
	t := time.NewTimer(startWait)
	defer t.Stop()
	select {
	case <-c.p.started:
	case <-c.done:
	case <-t.C:
	}
	return nil
}

func (c *Container) run(argv []string, top *ProgramRule) {
	ctx := c.ctx
	defer c.cancel()
	cl := &call{ctx: ctx, p: c.p, stdout: c.p.stdout, stderr: c.p.stderr, env: c.environ(), dir: "/", pid1: true, tty: c.spec.TTY}
	if c.stdinR != nil {
		cl.stdin = c.stdinR
		// A process with stdin waits for it.
		c.p.signalStarted()
	}
	var code int
	var err error
	if top != nil {
		code, err = c.p.runProgram(cl, top, argv, true)
	} else {
		code, err = c.p.dispatch(cl, argv, true)
	}
	switch {
	case errors.Is(err, errKilled):
		code = 137
	case err != nil:
		fmt.Fprintf(c.p.stderr, "sh: %v\n", err)
		code = 2
	}
	c.closeStdin()
	if c.stdinR != nil {
		_ = c.stdinR.Close()
	}
	c.out.log.flush()
	c.errOut.log.flush()
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	c.finish(&Exit{Code: int32(code), Reason: reason})
}

// closeStdin closes the writing end of the main process's stdin: the
// process reads what was written, then EOF.
func (c *Container) closeStdin() {
	c.stdinClose.Do(func() {
		if c.stdinW != nil {
			_ = c.stdinW.Close()
		}
	})
}

func (c *Container) finish(e *Exit) {
	c.mu.Lock()
	e.Started, e.Finished = c.started, c.rt.cfg.Clock.Now()
	if c.exit == nil {
		c.exit = e
		close(c.done)
	}
	c.mu.Unlock()
	c.p.signalStarted()
}

// Done is closed when the container's process has ended.
func (c *Container) Done() <-chan struct{} { return c.done }

// Exit returns how the container ended, or nil while it runs.
func (c *Container) Exit() *Exit {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exit == nil {
		return nil
	}
	e := *c.exit
	return &e
}

// StartedAt is when Start was called.
func (c *Container) StartedAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started
}

// Stop sends SIGTERM, waits up to grace (simulated time) for the process
// to end, then sends SIGKILL. It returns when the process has ended or
// ctx is done.
func (c *Container) Stop(ctx context.Context, grace time.Duration) {
	c.stopOne.Do(func() { close(c.p.termC) })
	if grace > 0 {
		t := c.rt.cfg.Clock.NewTimer(c.rt.scale(grace))
		select {
		case <-c.done:
			t.Stop()
			return
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
		}
	}
	c.Kill()
	select {
	case <-c.done:
	case <-ctx.Done():
	}
}

// Kill sends SIGKILL.
func (c *Container) Kill() {
	c.killOne.Do(func() {
		close(c.p.killC)
		c.mu.Lock()
		cancel := c.cancel
		c.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		c.closeStdin()
	})
}

// ErrNotRunning is the error of an exec in a container that has ended.
var ErrNotRunning = errors.New("container is not running")

// Exec runs a command in the running container, as an exec probe does,
// and returns its combined output and exit code. It ends with ctx (the
// probe's timeout).
func (c *Container) Exec(ctx context.Context, argv []string) ([]byte, int, error) {
	var out bytes.Buffer
	w := &syncWriter{w: &out}
	code, err := c.ExecStream(ctx, ExecOptions{Argv: argv, Stdout: w, Stderr: w})
	return w.bytes(), code, err
}

// TerminalSize is a terminal's size in characters.
type TerminalSize struct {
	Width, Height uint16
}

// ExecOptions are the command and streams of an exec in a running
// container, as the kubelet's ExecInContainer gets them.
type ExecOptions struct {
	// Argv is the command and its arguments.
	Argv []string
	// Stdin is the command's standard input; nil means none.
	Stdin io.Reader
	// Stdout and Stderr receive its output; nil discards it. With TTY,
	// Stderr is unused: a terminal has one output stream.
	Stdout, Stderr io.Writer
	// TTY gives the command a terminal.
	TTY bool
	// Resize delivers the terminal's size changes.
	Resize <-chan TerminalSize
}

// ExecStream runs a command in the running container with its streams
// attached and returns its exit code. Once the command ends, it waits
// for the copy of Stdin to stop, unless that copy waits in Stdin's Read
// (a client that sends nothing more), which then returns to a copy that
// stops. Stdin streams: the command reads
// what arrives as it arrives (sh reads one command line at a time), and
// with TTY it goes through a simulated terminal (echo, line editing,
// prompt). It ends with ctx; ErrNotRunning tells that the container is
// not (or no longer) running.
func (c *Container) ExecStream(ctx context.Context, o ExecOptions) (int, error) {
	select {
	case <-c.done:
		return 0, ErrNotRunning
	default:
	}
	argv := o.Argv
	if len(argv) == 0 {
		return 0, errors.New("OCI runtime exec failed: exec failed: unable to start container process: exec: no command: unknown")
	}
	stdout, stderr := o.Stdout, o.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	if o.TTY {
		tw := &ttyWriter{w: stdout}
		stdout, stderr = tw, tw
	}
	p := &process{
		rules: c.p.rules, image: c.p.image, spec: c.p.spec, fs: c.p.fs, clock: c.p.clock, speed: c.p.speed,
		dnsPort: c.p.dnsPort, network: c.p.network, cmdline: c.p.cmdline, tty: o.TTY, procs: c.p.procs, forks: c.p.forks,
		stdout: stdout, stderr: stderr, termC: make(chan struct{}), killC: make(chan struct{}), started: make(chan struct{}),
	}
	top, err := p.resolveTop(argv)
	if err != nil || (top != nil && top.Names[0] == "(generic)") {
		return 0, fmt.Errorf("OCI runtime exec failed: exec failed: unable to start container process: exec: %q: executable file not found in $PATH: unknown", argv[0])
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cl := &call{ctx: ctx, p: p, stdout: stdout, stderr: stderr, env: c.environ(), dir: "/", tty: o.TTY}
	if o.Stdin != nil {
		pr, pw, err := os.Pipe()
		if err != nil {
			return 0, fmt.Errorf("exec in container %s: stdin: %w", c.spec.Name, err)
		}
		copied := make(chan struct{})
		stdin := &watchedReader{r: o.Stdin}
		defer func() {
			// The copy of stdin ends at its next write; wait for it, so
			// that the caller's reader is not read after ExecStream
			// returns, unless its Read blocks (a client that sends
			// nothing more: its stream's end ends the copy).
			_ = pr.Close()
			_ = pw.Close()
			if stdin.reading.Load() {
				return
			}
			t := time.NewTimer(stdinGrace)
			defer t.Stop()
			select {
			case <-copied:
			case <-t.C:
			}
		}()
		cl.stdin = pr
		go func() {
			defer close(copied)
			if o.TTY {
				lineDiscipline(stdin, pw, stdout, p.interrupt)
				return
			}
			var in io.Reader = stdin
			if readsCommands(argv) {
				// A shell reading commands holds a line whole.
				in = &lineLimiter{r: stdin, max: maxCommandLine}
			}
			_, _ = io.Copy(pw, in)
			_ = pw.Close()
		}()
		go func() {
			// A read of stdin ends when the exec does.
			<-ctx.Done()
			_ = pr.Close()
		}()
	}
	go drainResize(ctx, o.Resize)
	go func() {
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	code, err := p.dispatch(cl, argv, false)
	if f, ok := stdout.(interface{ Flush() error }); ok {
		_ = f.Flush()
	}
	if err != nil {
		select {
		case <-c.done:
			return 0, ErrNotRunning
		default:
		}
		if ctx.Err() != nil {
			return 0, context.Cause(ctx)
		}
		return 0, fmt.Errorf("exec in container %s: %w", c.spec.Name, err)
	}
	return code, nil
}

// watchedReader tells whether a Read is under way.
type watchedReader struct {
	r       io.Reader
	reading atomic.Bool
}

func (w *watchedReader) Read(b []byte) (int, error) {
	w.reading.Store(true)
	defer w.reading.Store(false)
	return w.r.Read(b)
}

// stdinGrace bounds how long an ended exec waits for the copy of its
// stdin to stop.
const stdinGrace = time.Second

// drainResize accepts a terminal's size changes (the simulated programs
// do not lay out by width).
func drainResize(ctx context.Context, resize <-chan TerminalSize) {
	if resize == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-resize:
			if !ok {
				return
			}
		}
	}
}

// AttachOptions are the streams attached to a container's main process.
type AttachOptions struct {
	// Stdin feeds the process's standard input (a container with Stdin
	// set); nil attaches output only.
	Stdin io.Reader
	// Stdout and Stderr receive what the process writes from now on.
	Stdout, Stderr io.Writer
	// TTY and Resize are as for an exec.
	TTY    bool
	Resize <-chan TerminalSize
}

// Attach attaches streams to the container's main process, as `kubectl
// attach` does, until ctx ends or the process exits: output from now on,
// and input to its stdin (a container with Stdin; through its terminal
// with TTY). With StdinOnce, the process's stdin closes when the first
// client that attached with stdin detaches. It returns nil when either
// ends, ErrNotRunning when the process had already ended.
func (c *Container) Attach(ctx context.Context, o AttachOptions) error {
	select {
	case <-c.done:
		return ErrNotRunning
	default:
	}
	out, errOut := o.Stdout, o.Stderr
	if out == nil {
		out = io.Discard
	}
	if errOut == nil {
		errOut = io.Discard
	}
	if c.spec.TTY {
		tw := &ttyWriter{w: out}
		out, errOut = tw, tw
	}
	detach := c.out.attach(out)
	defer detach()
	if c.errOut != c.out {
		detachErr := c.errOut.attach(errOut)
		defer detachErr()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go drainResize(ctx, o.Resize)
	withStdin := o.Stdin != nil && c.stdinW != nil
	if withStdin {
		c.mu.Lock()
		first := !c.attached
		c.attached = true
		c.mu.Unlock()
		once := c.spec.StdinOnce && first
		if once {
			defer c.closeStdin()
		}
		go func() {
			if c.spec.TTY {
				lineDiscipline(o.Stdin, nopWriteCloser{c.stdinW}, out, c.p.interrupt)
			} else {
				var in io.Reader = o.Stdin
				if c.readsCommands {
					in = &lineLimiter{r: o.Stdin, max: maxCommandLine}
				}
				_, _ = io.Copy(c.stdinW, in)
			}
			// The client's input ended: with StdinOnce the process reads
			// EOF after it; the output stays attached until the process
			// ends or the client leaves, as the kubelet's attach.
			if once {
				c.closeStdin()
			}
		}()
	}
	select {
	case <-ctx.Done():
	case <-c.done:
	}
	return nil
}

// nopWriteCloser keeps a container's stdin open when one client's input
// ends.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

func (s *syncWriter) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.w.(*bytes.Buffer).Bytes()...)
}

// ReadFile reads a file of the container's file system (its own files and
// its volumes), as the kubelet reads a termination message.
func (c *Container) ReadFile(path string) ([]byte, error) { return c.p.fs.read(path) }
