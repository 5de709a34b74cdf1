package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"
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
// in it. It owns the signals: SIGTERM (termC) and SIGKILL (killC).
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
	termHandled  bool

	started   chan struct{}
	startOnce sync.Once
	iter      int

	client *http.Client
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

// checkSignals is called between commands: SIGKILL ends the process; a
// pending SIGTERM runs the shell's trap, or is ignored as PID 1 ignores
// signals it does not handle.
func (p *process) checkSignals(sh *shell) error {
	select {
	case <-p.killC:
		return errKilled
	default:
	}
	if !p.termHandled {
		select {
		case <-p.termC:
			p.termHandled = true
			if err := p.onTerm(sh); err != nil {
				return err
			}
		default:
		}
	}
	// A loop that neither waits nor prints must not starve the node.
	p.iter++
	if p.iter%64 == 0 {
		time.Sleep(time.Millisecond)
	}
	return nil
}

// onTerm runs the shell's TERM trap, if any.
func (p *process) onTerm(sh *shell) error {
	action, ok := sh.traps["TERM"]
	if !ok || action == "" {
		return nil
	}
	delete(sh.traps, "TERM")
	l, err := parseScript(action)
	if err != nil {
		return nil
	}
	if err := sh.runList(l); err != nil {
		return err
	}
	return nil
}

// sleep waits d of simulated time, running the TERM trap if the process
// is asked to stop meanwhile.
func (p *process) sleep(sh *shell, d time.Duration) error {
	p.signalStarted()
	var timeout <-chan time.Time
	if d != time.Duration(math.MaxInt64) {
		t := p.clock.NewTimer(p.scale(d))
		defer t.Stop()
		timeout = t.C()
	}
	term := p.termC
	if p.termHandled {
		term = nil
	}
	for {
		select {
		case <-timeout:
			return nil
		case <-p.killC:
			return errKilled
		case <-term:
			term = nil
			p.termHandled = true
			if err := p.onTerm(sh); err != nil {
				return err
			}
		}
	}
}

// block runs until the process is stopped. A program that replaced the
// shell (execing) exits with its SIGTERM exit code; otherwise SIGTERM goes
// to the shell.
func (p *process) block(sh *shell, prog *ProgramRule, execing bool) (int, error) {
	p.signalStarted()
	term := p.termC
	if p.termHandled {
		term = nil
	}
	for {
		select {
		case <-p.killC:
			return 0, errKilled
		case <-term:
			term = nil
			p.termHandled = true
			if execing {
				if prog.TermExit != nil {
					return *prog.TermExit, nil
				}
				continue
			}
			if err := p.onTerm(sh); err != nil {
				return 0, err
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
		"{time:redis}", now.Format("02 Jan 2006 15:04:05.000"),
		"{time:postgres}", now.Format("2006-01-02 15:04:05.000"),
		"{port}", fmt.Sprint(port),
		"{ip}", p.spec.IP,
	).Replace(line)
}

// runProgram runs a program of the rules.
func (p *process) runProgram(sh *shell, prog *ProgramRule, argv []string, execing bool) (int, error) {
	switch {
	case prog.Shell:
		return p.runShell(sh, argv)
	case prog.Wrapper:
		p.printLines(sh, prog, 0)
		rest := argv[1:]
		if len(rest) == 0 {
			return 0, nil
		}
		return sh.exec(rest, execing)
	}
	if r := prog.RequireEnv; r != nil {
		found := false
		for _, name := range r.AnyOf {
			if sh.vars[name] != "" {
				found = true
			}
		}
		if !found {
			for _, l := range r.Stderr {
				fmt.Fprintln(sh.stderr, l)
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
		srv, err := p.listen(sh, prog.Serve.Style, ports, text)
		if err != nil {
			fmt.Fprintln(sh.stderr, err.Error())
			return 1, nil
		}
		defer srv.close()
		p.printLines(sh, prog, port)
		return p.block(sh, prog, execing)
	}
	p.printLines(sh, prog, 0)
	if prog.Forever {
		return p.block(sh, prog, execing)
	}
	return 0, nil
}

func (p *process) printLines(sh *shell, prog *ProgramRule, port int32) {
	for _, l := range prog.Stdout {
		fmt.Fprintln(sh.stdout, p.expandLine(l, port))
	}
	for _, l := range prog.Stderr {
		fmt.Fprintln(sh.stderr, p.expandLine(l, port))
	}
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
	flag := func(name, a string, i int) (string, bool) {
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

// runShell runs sh [-c script [name [args...]]] | sh file | sh.
func (p *process) runShell(parent *shell, argv []string) (int, error) {
	sh := parent.sub()
	sh.args = []string{argv[0]}
	sh.errexit, sh.xtrace, sh.inCond = false, false, 0
	args := argv[1:]
	script, fromFile := "", ""
	hasC := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		opt := args[0]
		args = args[1:]
		if opt == "-o" && len(args) > 0 {
			args = args[1:]
			continue
		}
		if strings.Contains(opt, "c") {
			hasC = true
		}
		if strings.Contains(opt, "e") {
			sh.errexit = true
		}
		if strings.Contains(opt, "x") {
			sh.xtrace = true
		}
	}
	switch {
	case hasC:
		if len(args) == 0 {
			fmt.Fprintf(sh.stderr, "%s: -c requires an argument\n", baseName(argv[0]))
			return 2, nil
		}
		script = args[0]
		if len(args) > 1 {
			sh.args = args[1:]
		}
	case len(args) > 0:
		fromFile = args[0]
		data, err := p.fs.read(fromFile)
		if err != nil {
			fmt.Fprintf(sh.stderr, "%s: can't open '%s': %v\n", baseName(argv[0]), fromFile, err)
			return 2, nil
		}
		script = string(data)
		sh.args = args
	default:
		// No script and no terminal: the shell reads an empty stdin and
		// exits, as `docker run busybox` does.
		script = string(parent.stdin)
	}
	code, err := sh.runScript(script)
	if err != nil {
		return 0, err
	}
	if action, ok := sh.traps["EXIT"]; ok {
		delete(sh.traps, "EXIT")
		if l, perr := parseScript(action); perr == nil {
			_ = sh.runList(l)
		}
	}
	return code, nil
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
	_, isBuiltin := builtins[exe]
	if !isBuiltin && strings.Contains(exe, "/") {
		_, isBuiltin = builtins[baseName(exe)]
	}
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

func (p *process) httpClient() *http.Client {
	if p.client == nil {
		p.client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	}
	return p.client
}
