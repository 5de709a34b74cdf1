package runtime

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
	"mvdan.cc/sh/v3/interp"
)

// LogSink receives a container's output, one line at a time, as the
// container runtime's log driver does.
type LogSink interface {
	// Line records one line (without its newline) of stream "stdout" or
	// "stderr".
	Line(stream, line string)
}

// lineWriter cuts a stream into lines for a LogSink.
type lineWriter struct {
	mu     sync.Mutex
	stream string
	sink   LogSink
	buf    []byte
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		if w.sink != nil {
			w.sink.Line(w.stream, string(w.buf[:i]))
		}
		w.buf = w.buf[i+1:]
	}
	return len(b), nil
}

func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 && w.sink != nil {
		w.sink.Line(w.stream, string(w.buf))
	}
	w.buf = nil
}

// process is a simulated process: a container's main process or an exec
// in it. It owns the signals: SIGTERM (termC) and SIGKILL (killC, which
// cancels the context its commands run with).
type process struct {
	rules  *Rules
	image  *ImageRule // nil outside the catalog
	spec   *ContainerSpec
	fs     *fs
	clock  clock.WithTicker
	speed  float64
	stdout io.Writer
	stderr io.Writer

	termC, killC chan struct{}
	termMu       sync.Mutex
	termTaken    bool

	started   chan struct{}
	startOnce sync.Once

	// dnsPort is the nameservers' port (Config.DNSPort).
	dnsPort int
	// network is Config.Network.
	network Network
	// cmdline is the main process's command line, as ps shows it.
	cmdline string
	// procs counts the container's running commands (shared by its
	// execs), bounded by maxProcs as a pids cgroup bounds them.
	procs *atomic.Int32
	// forks counts the container's forked commands (guard.go), shared
	// by its execs.
	forks *atomic.Int32
	// tty tells that the process has a terminal, whose ^C interrupts the
	// foreground command (fg).
	tty  bool
	fgMu sync.Mutex
	fg   context.CancelCauseFunc

	clientOnce sync.Once
	client     *http.Client

	// certOnce makes the self-signed serving certificate (servetls.go).
	certOnce sync.Once
	cert     *tls.Config
	certErr  error
}

// errInterrupted is the cause of a command interrupted by ^C.
var errInterrupted = errors.New("interrupted")

// foreground makes ctx's command the one ^C interrupts, until the
// function returned is called.
func (p *process) foreground(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	p.fgMu.Lock()
	prev := p.fg
	p.fg = cancel
	p.fgMu.Unlock()
	return ctx, func() {
		p.fgMu.Lock()
		p.fg = prev
		p.fgMu.Unlock()
		cancel(nil)
	}
}

// interrupt sends SIGINT to the foreground command; it tells whether
// there was one.
func (p *process) interrupt() bool {
	p.fgMu.Lock()
	defer p.fgMu.Unlock()
	if p.fg == nil {
		return false
	}
	p.fg(errInterrupted)
	return true
}

// signalStarted tells Start the process reached its first wait (its
// servers listen), or ended.
func (p *process) signalStarted() {
	p.startOnce.Do(func() { close(p.started) })
}

// scale turns a simulated duration into a real one.
func (p *process) scale(d time.Duration) time.Duration {
	if d == time.Duration(math.MaxInt64) || p.speed == 1 {
		return d
	}
	return time.Duration(float64(d) / p.speed)
}

// takeTerm takes a delivered SIGTERM, once: it tells whether the signal
// arrived and nobody handled it yet.
func (p *process) takeTerm() bool {
	select {
	case <-p.termC:
	default:
		return false
	}
	p.termMu.Lock()
	defer p.termMu.Unlock()
	if p.termTaken {
		return false
	}
	p.termTaken = true
	return true
}

// termFor is the SIGTERM channel a wait of c listens to: the program's
// own when it is PID 1, the shell's (for its trap) when the wait is a
// command of the PID 1 shell; nil when SIGTERM does not reach it.
func (p *process) termFor(c *call) <-chan struct{} {
	if c.pid1 || c.sh != nil && c.sh.pid1 {
		return p.termC
	}
	return nil
}

// sleep waits d of simulated time, running the shell's TERM trap if the
// process is asked to stop meanwhile. Its error is a kill or the trap's
// exit.
func (p *process) sleep(c *call, d time.Duration) error {
	p.signalStarted()
	var timeout <-chan time.Time
	if d != time.Duration(math.MaxInt64) {
		t := p.clock.NewTimer(p.scale(d))
		defer t.Stop()
		timeout = t.C()
	}
	term := p.termFor(c)
	if c.pid1 {
		term = nil // a sleep that is PID 1 ignores SIGTERM
	}
	for {
		select {
		case <-timeout:
			return nil
		case <-c.ctx.Done():
			return errKilled
		case <-term:
			term = nil
			if p.takeTerm() {
				if err := c.sh.onTerm(c); err != nil {
					return err
				}
			}
		}
	}
}

// block runs until the process is stopped. A program that replaced the
// shell (execing, PID 1) exits with its SIGTERM exit code; otherwise
// SIGTERM goes to the shell's trap.
func (p *process) block(c *call, prog *ProgramRule, execing bool) (int, error) {
	p.signalStarted()
	term := p.termFor(c)
	for {
		select {
		case <-c.ctx.Done():
			return 0, errKilled
		case <-term:
			term = nil
			if !p.takeTerm() {
				continue
			}
			if execing && c.pid1 {
				if prog.TermExit != nil {
					return *prog.TermExit, nil
				}
				continue
			}
			if c.sh != nil {
				if err := c.sh.onTerm(c); err != nil {
					return 0, err
				}
			}
		}
	}
}

// expandLine fills a rule's log line placeholders.
func (p *process) expandLine(line string, port int32) string {
	if !strings.Contains(line, "{") {
		return line
	}
	now := p.clock.Now().UTC()
	return strings.NewReplacer(
		"{time:nginx}", now.Format("2006/01/02 15:04:05"),
		"{time:apache}", now.Format("Mon Jan 02 15:04:05.000000 2006"),
		"{time:go}", now.Format("2006/01/02 15:04:05"),
		"{time:klog}", now.Format("0102 15:04:05.000000"),
		"{time:redis}", now.Format("02 Jan 2006 15:04:05.000"),
		"{time:postgres}", now.Format("2006-01-02 15:04:05.000"),
		"{port}", fmt.Sprint(port),
		"{ip}", p.spec.IP,
	).Replace(line)
}

// runProgram runs a program of the rules.
func (p *process) runProgram(c *call, prog *ProgramRule, argv []string, execing bool) (int, error) {
	switch {
	case prog.Shell:
		return p.runShell(c, argv)
	case prog.Builtin == "agnhost":
		return p.runAgnhost(c, argv, execing)
	case prog.Wrapper:
		p.printLines(c, prog, 0)
		rest := argv[1:]
		if len(rest) == 0 {
			return 0, nil
		}
		return p.dispatch(c, rest, execing)
	}
	if r := prog.RequireEnv; r != nil {
		found := false
		for _, name := range r.AnyOf {
			if c.getenv(name) != "" {
				found = true
			}
		}
		if !found {
			for _, l := range r.Stderr {
				fmt.Fprintln(c.stderr, l)
			}
			return r.ExitCode, nil
		}
	}
	if prog.Serve != nil {
		ports, text := p.servePorts(prog.Serve, argv)
		port := int32(0)
		if len(ports) > 0 {
			port = ports[0]
		}
		specs, err := p.listenSpecs(prog.Serve, argv, ports)
		if err == nil && len(specs) > 0 {
			port = specs[0].port
		}
		var srv *servers
		if err == nil {
			srv, err = p.listen(c.stdout, prog.Serve.Style, specs, text)
		}
		if err != nil {
			fmt.Fprintln(c.stderr, err.Error())
			return 1, nil
		}
		defer srv.close()
		p.printLines(c, prog, port)
		return p.block(c, prog, execing)
	}
	p.printLines(c, prog, 0)
	if prog.Forever {
		return p.block(c, prog, execing)
	}
	return 0, nil
}

func (p *process) printLines(c *call, prog *ProgramRule, port int32) {
	for _, l := range prog.Stdout {
		fmt.Fprintln(c.stdout, p.expandLine(l, port))
	}
	for _, l := range prog.Stderr {
		fmt.Fprintln(c.stderr, p.expandLine(l, port))
	}
}

// flagAt reads flag name (with one or two dashes, "=value" or a separate
// value) at argv[i]; a is argv[i].
func flagAt(argv []string, name, a string, i int) (string, bool) {
	if name == "" {
		return "", false
	}
	for _, n := range []string{name, "-" + strings.TrimLeft(name, "-"), "--" + strings.TrimLeft(name, "-")} {
		if v, ok := strings.CutPrefix(a, n+"="); ok {
			return v, true
		}
		if a == n && i+1 < len(argv) {
			return argv[i+1], true
		}
	}
	return "", false
}

// flagValue reads the last value of a flag in argv.
func flagValue(argv []string, name string) string {
	v := ""
	for i, a := range argv {
		if got, ok := flagAt(argv, name, a, i); ok {
			v = got
		}
	}
	return v
}

// servePorts reads the ports a server listens on: its flags, else the
// image's ports, else the program's. It also returns an echo server's
// text.
func (p *process) servePorts(s *ServeRule, argv []string) ([]int32, string) {
	ports := s.Ports
	if p.image != nil && len(p.image.Ports) > 0 {
		ports = p.image.Ports
	}
	if s.Style == "generic" && len(s.Ports) == 0 {
		ports = p.spec.Ports
	}
	text := "hello-world"
	flag := func(name, a string, i int) (string, bool) { return flagAt(argv, name, a, i) }
	for i, a := range argv {
		if v, ok := flag(s.PortFlag, a, i); ok {
			var n int32
			if _, err := fmt.Sscan(v, &n); err == nil {
				ports = []int32{n}
			}
		}
		if v, ok := flag(s.ListenFlag, a, i); ok {
			_, portStr, err := net.SplitHostPort(v)
			var n int32
			if _, err2 := fmt.Sscan(portStr, &n); err == nil && err2 == nil {
				ports = []int32{n}
			}
		}
		if v, ok := flag(s.TextFlag, a, i); ok {
			text = v
		}
	}
	return ports, text
}

// notFoundError is the runtime's answer for an executable the image does
// not have.
func notFoundError(exe string) string {
	return fmt.Sprintf("failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: exec: %q: executable file not found in $PATH: unknown", exe)
}

// resolveTop decides what a container's argv[0] is: a program of the
// rules, a utility of the image's shell, or, in an image outside the
// catalog, a generic server of the declared ports. It returns the start
// error of an executable the image does not have.
func (p *process) resolveTop(argv []string) (*ProgramRule, error) {
	if len(argv) == 0 {
		if p.image == nil {
			return genericProgram(), nil
		}
		return nil, errors.New("failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: no command specified: unknown")
	}
	exe := argv[0]
	hasShell := p.image == nil || p.image.Shell
	prog := p.rules.program(exe)
	_, isBuiltin := utilities[baseName(exe)]
	isBuiltin = isBuiltin || interp.IsBuiltin(exe)
	switch {
	case prog != nil && !prog.Shell:
		return prog, nil
	case (prog != nil || isBuiltin) && hasShell:
		return nil, nil
	case p.image == nil && prog == nil:
		return genericProgram(), nil
	}
	return nil, errors.New(notFoundError(exe))
}

// genericProgram is what an unknown image runs: a server of the declared
// ports, or a process that idles until stopped.
func genericProgram() *ProgramRule {
	zero := 0
	return &ProgramRule{Names: []string{"(generic)"}, Serve: &ServeRule{Style: "generic"}, TermExit: &zero}
}

// httpClient is the process's HTTP client: it dials through the
// container's name resolution (resolve.go).
func (p *process) httpClient() *http.Client {
	p.clientOnce.Do(func() {
		p.client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DialContext: p.dialContext,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // wget --no-check-certificate, curl -k: see utils.go
	})
	return p.client
}
