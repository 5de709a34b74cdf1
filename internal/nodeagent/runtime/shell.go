package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// The simulated /bin/sh is mvdan.cc/sh's interpreter (bash syntax, as
// busybox's ash and bash accept it) with every command that is not a
// shell builtin running as one of minik's utilities (utils.go) or a
// program of the rules, and every file it opens, stats or globs being in
// the container's simulated file system (fs.go). Nothing touches the
// host: no host executable runs, no host file is read or written.

// errKilled ends a process killed by SIGKILL.
var errKilled = errors.New("killed")

// shell is one simulated shell process: the state minik keeps beside the
// interpreter's (the TERM trap, which mvdan.cc/sh does not implement).
type shell struct {
	p *process
	// pid1 tells that the shell is the container's main process, the one
	// SIGTERM reaches.
	pid1 bool
	// arg0 is the shell's argv[0] ("sh", "/bin/sh"): busybox's ash
	// prefixes its error messages with it.
	arg0 string

	mu       sync.Mutex
	termTrap string // the TERM trap's action; "" is none
	execNext bool   // the next exec replaces the shell (the exec builtin)
	calls    int
	forks    atomic.Int32 // fork slots held (guard.go)
}

// call is one command the interpreter hands to minik: its arguments,
// standard streams, environment and working directory.
type call struct {
	ctx    context.Context
	sh     *shell
	p      *process
	args   []string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	env    expand.Environ
	dir    string
	// hc is the interpreter's context of an exec, through which the TERM
	// trap runs in the shell; the zero value outside an exec.
	hc     interp.HandlerContext
	inExec bool
	// pid1 tells that the command is the container's main process.
	pid1 bool
	// tty tells that the streams are a terminal: sh prompts.
	tty bool
}

// getenv returns a variable of the call's environment.
func (c *call) getenv(name string) string { return c.env.Get(name).String() }

// abs makes a path absolute against the working directory.
func (c *call) abs(p string) string {
	if !path.IsAbs(p) {
		p = path.Join(c.dir, p)
	}
	return path.Clean(p)
}

// environ lists the exported variables as NAME=value, in the
// environment's order.
func (c *call) environ() []string {
	var out []string
	for name, vr := range c.env.Each {
		if vr.Exported && vr.IsSet() {
			out = append(out, name+"="+vr.String())
		}
	}
	return out
}

// shellOptions are what sh's command line asks for.
type shellOptions struct {
	name     string // $0
	script   string
	hasCmd   bool
	fromFile bool
	params   []string // $1...
	flags    []string // -e, -x, ...
}

// parseShellArgs reads sh [-ex] [-o opt] [-c script [name [args...]]] |
// sh file [args...] | sh.
func parseShellArgs(argv []string) (shellOptions, string) {
	o := shellOptions{name: argv[0]}
	args := argv[1:]
	for len(args) > 0 && len(args[0]) > 1 && (args[0][0] == '-' || args[0][0] == '+') && args[0] != "--" {
		opt := args[0]
		args = args[1:]
		if opt[1:] == "o" && len(args) > 0 {
			o.flags = append(o.flags, opt, args[0])
			args = args[1:]
			continue
		}
		for _, f := range opt[1:] {
			switch f {
			case 'c':
				o.hasCmd = true
			case 'i', 's', 'l':
			default:
				o.flags = append(o.flags, string(opt[0])+string(f))
			}
		}
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	switch {
	case o.hasCmd:
		if len(args) == 0 {
			return o, fmt.Sprintf("%s: -c requires an argument", baseName(argv[0]))
		}
		o.script = args[0]
		if len(args) > 1 {
			o.name, o.params = args[1], args[2:]
		}
	case len(args) > 0:
		o.fromFile, o.name, o.params = true, args[0], args[1:]
	}
	return o, ""
}

// runShell runs a shell's argv with the call's streams and environment;
// a call that is PID 1 makes it the shell SIGTERM reaches. Its error is a
// kill or a failure of the interpreter itself, never the script's exit
// status.
func (p *process) runShell(c *call, argv []string) (int, error) {
	o, bad := parseShellArgs(argv)
	if bad != "" {
		fmt.Fprintln(c.stderr, bad)
		return 2, nil
	}
	sh := &shell{p: p, pid1: c.pid1, arg0: argv[0]}
	if o.fromFile {
		data, err := p.fs.read(c.abs(o.name))
		if err != nil {
			fmt.Fprintf(c.stderr, "%s: can't open '%s': %v\n", baseName(argv[0]), o.name, err)
			return 2, nil
		}
		o.script = string(data)
	}
	r, err := sh.newRunner(c, o)
	if err != nil {
		return 0, err
	}
	defer sh.releaseForks(c.ctx)
	if !o.hasCmd && !o.fromFile {
		return sh.readCommands(c, r, baseName(argv[0]))
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(o.script), o.name)
	if err == nil {
		err = refuseUnsupported(file)
	}
	if err == nil {
		guardForks(file)
		guardMemory(file)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: %v\n", baseName(argv[0]), parseErrorText(err))
		return 2, nil
	}
	return exitCode(r.Run(c.ctx, file))
}

// readCommands runs the commands a shell without a script reads from
// its standard input, one line at a time as they arrive: the shell of
// `kubectl exec -i` and of an interactive container. With a terminal it
// prompts as busybox's sh does ("/ # "), or as bash does. Without stdin
// it exits at once, as `docker run busybox` does.
func (sh *shell) readCommands(c *call, r *interp.Runner, name string) (int, error) {
	if c.stdin == nil {
		return 0, nil
	}
	tty := c.tty
	prompt := func(ps string) {
		if tty {
			if ps == "" {
				// busybox's PS1 is '\w # ' for root, bash's in Debian
				// images '\u@\h:\w# '.
				ps = r.Dir + " # "
				if name == "bash" {
					ps = "root@" + sh.p.spec.Hostname + ":" + r.Dir + "# "
				}
			}
			_, _ = io.WriteString(c.stdout, ps)
		}
	}
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	// Waiting for input is the process's first wait.
	sh.p.signalStarted()
	prompt("")
	code := 0
	for stmts, err := range parser.InteractiveSeq(c.stdin) {
		if err != nil {
			fmt.Fprintf(c.stderr, "sh: %v\n", parseErrorText(err))
			code = 2
			if !tty {
				return code, nil
			}
			prompt("")
			continue
		}
		if parser.Incomplete() {
			prompt("> ")
			continue
		}
		for _, st := range stmts {
			if err := refuseUnsupported(st); err != nil {
				fmt.Fprintf(c.stderr, "sh: %v\n", err)
				code = 2
				continue
			}
			guardForks(st)
			guardMemory(st)
			var runErr error
			code, runErr = exitCode(r.Run(c.ctx, st))
			if runErr != nil {
				return code, runErr
			}
			if r.Exited() {
				return code, nil
			}
		}
		prompt("")
	}
	if err := c.ctx.Err(); err != nil {
		return 0, errKilled
	}
	return code, nil
}

// exitCode turns the interpreter's result into an exit status, or the
// error of a kill.
func exitCode(err error) (int, error) {
	if err == nil {
		return 0, nil
	}
	var st interp.ExitStatus
	if errors.As(err, &st) {
		return int(st), nil
	}
	if errors.Is(err, errKilled) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return 0, errKilled
	}
	return 0, err
}

// parseErrorText words a parse error as busybox's sh does, without the
// interpreter's file:line:col prefix when the error is on line 1.
func parseErrorText(err error) string {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		if pe.Pos.Line() <= 1 {
			return "syntax error: " + pe.Text
		}
		return fmt.Sprintf("line %d: syntax error: %s", pe.Pos.Line(), pe.Text)
	}
	return err.Error()
}

// refuseUnsupported refuses process substitution, which would need FIFOs
// on the host (busybox's ash has none either).
func refuseUnsupported(n syntax.Node) error {
	var err error
	syntax.Walk(n, func(n syntax.Node) bool {
		if ps, ok := n.(*syntax.ProcSubst); ok && err == nil {
			err = fmt.Errorf("line %d: syntax error: unexpected \"(\"", ps.Pos().Line())
		}
		return err == nil
	})
	return err
}

// newRunner builds the interpreter of a shell.
func (sh *shell) newRunner(c *call, o shellOptions) (*interp.Runner, error) {
	pairs := c.environ()
	pairs = append(pairs, sh.p.idVars()...)
	var stdin io.Reader
	if c.stdin != nil {
		stdin = c.stdin
	}
	opts := []interp.RunnerOption{
		interp.Env(expand.ListEnviron(pairs...)),
		interp.StdIO(stdin, c.stdout, traceFilter{c.stderr}),
		interp.CallHandler(sh.onCall),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return sh.onExec }),
		interp.OpenHandler(sh.open),
		interp.StatHandler(sh.stat),
		interp.ReadDirHandler2(sh.readDir),
		interp.AccessHandler(sh.access),
	}
	if len(o.flags) > 0 || len(o.params) > 0 {
		opts = append(opts, interp.Params(append(append(o.flags, "--"), o.params...)...))
	}
	dir := c.dir
	if dir == "" {
		dir = "/"
	}
	// The container's working directory, not the host's (interp.Dir
	// would stat it on the host).
	opts = append(opts, func(r *interp.Runner) error { r.Dir = dir; return nil })
	r, err := interp.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("shell %s: %w", o.name, err)
	}
	return r, nil
}

// onCall runs before every simple command: it delivers a pending SIGTERM
// to the TERM trap, keeps the trap builtin's TERM and INT to minik (the
// interpreter knows EXIT and ERR only), answers `command -v` from the
// container's utilities, and lets a loop that neither waits nor prints
// yield the node's CPU.
func (sh *shell) onCall(ctx context.Context, args []string) ([]string, error) {
	sh.mu.Lock()
	sh.calls++
	yield := sh.calls%64 == 0
	sh.execNext = args[0] == "exec" && len(args) > 1
	sh.mu.Unlock()
	if yield {
		if tooDeep() {
			return nil, errTooDeep
		}
		t := time.NewTimer(time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	hc := interp.HandlerCtx(ctx)
	if args[0] == tickMark {
		return checkMemory(hc)
	}
	if guarded, ok, err := sh.guardCall(hc.Dir, hc.Stderr, args); ok || err != nil {
		return guarded, err
	}
	switch args[0] {
	case "trap":
		args = sh.trap(args)
	case "command":
		if len(args) == 3 && args[1] == "-v" && !interp.IsBuiltin(args[2]) {
			if sh.p.knows(args[2]) {
				return []string{"echo", "/bin/" + baseName(args[2])}, nil
			}
			return []string{"false"}, nil
		}
	}
	if action, ok := sh.takeTerm(); ok && action != "" {
		// Run the trap, then the command, in the shell itself.
		quoted := make([]string, len(args))
		for i, a := range args {
			q, err := syntax.Quote(a, syntax.LangBash)
			if err != nil {
				q = "''"
			}
			quoted[i] = q
		}
		return []string{"eval", action + "\n" + strings.Join(quoted, " ")}, nil
	}
	return args, nil
}

// takeTerm takes a pending SIGTERM for this shell, once: it returns the
// TERM trap's action ("" when there is none, and PID 1 ignores the
// signal).
func (sh *shell) takeTerm() (string, bool) {
	if !sh.pid1 || !sh.p.takeTerm() {
		return "", false
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.termTrap, true
}

// onTerm runs the TERM trap in the shell, from an exec (a sleep, a
// server's wait) that SIGTERM interrupted. Its error is the trap's exit.
func (sh *shell) onTerm(c *call) error {
	sh.mu.Lock()
	action := sh.termTrap
	sh.mu.Unlock()
	if action == "" || !c.inExec {
		return nil
	}
	return c.hc.Builtin(c.ctx, []string{"eval", action})
}

// trap keeps TERM and INT actions; what remains (EXIT, ERR) goes to the
// interpreter's trap builtin.
func (sh *shell) trap(args []string) []string {
	if len(args) < 3 {
		return args
	}
	action := args[1]
	rest := []string{"trap", action}
	for _, sig := range args[2:] {
		switch strings.TrimPrefix(strings.ToUpper(sig), "SIG") {
		case "TERM", "15":
			sh.mu.Lock()
			if action == "-" {
				action = ""
			}
			sh.termTrap = action
			sh.mu.Unlock()
		case "EXIT", "0":
			rest = append(rest, "EXIT")
		case "ERR":
			rest = append(rest, "ERR")
		default:
			// INT, HUP, QUIT, USR1, ...: no one sends them here.
		}
	}
	if len(rest) == 2 {
		return []string{":"}
	}
	return rest
}

// maxProcs bounds a container's commands running at once (its
// background jobs and pipelines), as a pids limit does, so that a script
// forking in a loop cannot exhaust the node.
const maxProcs = 1024

// onExec runs a command that is not a shell builtin: one of minik's
// utilities, a program of the rules, or "not found".
func (sh *shell) onExec(ctx context.Context, args []string) error {
	if args[0] == statusMark && len(args) == 2 {
		n, _ := strconv.Atoi(args[1])
		if n == 0 {
			return nil
		}
		return interp.ExitStatus(uint8(n))
	}
	hc := interp.HandlerCtx(ctx)
	sh.mu.Lock()
	execing := sh.execNext
	sh.execNext = false
	sh.mu.Unlock()
	c := &call{ctx: ctx, sh: sh, p: sh.p, args: args, stdin: hc.Stdin, stdout: hc.Stdout, stderr: hc.Stderr, tty: false,
		env: hc.Env, dir: hc.Dir, hc: hc, inExec: true, pid1: sh.pid1 && execing}
	if f, ok := hc.Stdin.(*os.File); !ok || f == nil {
		c.stdin = nil
	}
	if n := sh.p.procs.Add(1); n > maxProcs {
		sh.p.procs.Add(-1)
		fmt.Fprintf(hc.Stderr, "sh: can't fork: Resource temporarily unavailable\n")
		return interp.ExitStatus(2)
	}
	defer sh.p.procs.Add(-1)
	if sh.p.tty {
		fgCtx, done := sh.p.foreground(ctx)
		defer done()
		c.ctx = fgCtx
	}
	code, err := sh.p.dispatch(c, args, execing)
	if err != nil {
		if errors.Is(context.Cause(c.ctx), errInterrupted) && ctx.Err() == nil {
			return interp.ExitStatus(130) // killed by SIGINT
		}
		return err
	}
	if code != 0 {
		return interp.ExitStatus(uint8(code))
	}
	return nil
}

// dispatch runs argv: a utility, a program of the rules, or "not found".
// execing is true for the exec builtin and a container's own argv: the
// program then replaces the shell and receives its signals.
func (p *process) dispatch(c *call, argv []string, execing bool) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, errKilled
	}
	name := argv[0]
	if u, ok := utilities[name]; ok {
		return u(c, argv)
	}
	if prog := p.rules.program(name); prog != nil {
		return p.runProgram(c, prog, argv, execing)
	}
	if interp.IsBuiltin(name) {
		// A shell builtin as a container's command, an exec, or through
		// exec or env (printf, test): a shell runs it.
		return p.runShell(c, append([]string{"sh", "-c", `"$@"`, "sh"}, argv...))
	}
	if strings.Contains(name, "/") {
		if u, ok := utilities[baseName(name)]; ok {
			return u(c, argv)
		}
	}
	fmt.Fprintf(c.stderr, "sh: %s: not found\n", name)
	return 127, nil
}

// knows tells whether an executable exists in the container.
func (p *process) knows(name string) bool {
	_, ok := utilities[baseName(name)]
	return ok || interp.IsBuiltin(name) || p.rules.program(name) != nil
}

func baseName(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}

// The interpreter's file handlers: the container's file system.

func (sh *shell) open(ctx context.Context, name string, flag int, _ os.FileMode) (io.ReadWriteCloser, error) {
	hc := interp.HandlerCtx(ctx)
	if !path.IsAbs(name) {
		name = path.Join(hc.Dir, name)
	}
	name = path.Clean(name)
	switch name {
	case "/dev/null":
		return nopRWC{w: io.Discard}, nil
	case "/dev/stdout":
		return nopRWC{w: hc.Stdout}, nil
	case "/dev/stderr":
		return nopRWC{w: hc.Stderr}, nil
	}
	fs := sh.p.fs
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		data, err := fs.read(name)
		if err != nil {
			return nil, &os.PathError{Op: sh.arg0 + ": can't open", Path: name, Err: err}
		}
		return nopRWC{r: strings.NewReader(string(data))}, nil
	}
	if flag&os.O_TRUNC != 0 {
		if err := fs.write(name, nil, false); err != nil {
			return nil, &os.PathError{Op: sh.arg0 + ": can't create", Path: name, Err: err}
		}
	} else if err := fs.write(name, nil, true); err != nil {
		return nil, &os.PathError{Op: sh.arg0 + ": can't create", Path: name, Err: err}
	}
	return nopRWC{w: &fileWriter{fs: fs, path: name}}, nil
}

func (sh *shell) stat(_ context.Context, name string, _ bool) (iofs.FileInfo, error) {
	fi, err := sh.p.fs.statInfo(name)
	if err != nil {
		return nil, &os.PathError{Op: "stat", Path: name, Err: err}
	}
	return fi, nil
}

func (sh *shell) readDir(_ context.Context, name string) ([]iofs.DirEntry, error) {
	names, err := sh.p.fs.list(name)
	if err != nil {
		return nil, &os.PathError{Op: "readdir", Path: name, Err: err}
	}
	out := make([]iofs.DirEntry, 0, len(names))
	for _, n := range names {
		if n == dirMarker {
			continue
		}
		fi, err := sh.p.fs.statInfo(path.Join(name, n))
		if err != nil {
			continue
		}
		out = append(out, iofs.FileInfoToDirEntry(fi))
	}
	return out, nil
}

func (sh *shell) access(_ context.Context, name string, mode interp.AccessMode) error {
	if _, err := sh.p.fs.statInfo(name); err != nil {
		return &os.PathError{Op: "access", Path: name, Err: err}
	}
	if mode&interp.AccessWrite != 0 && sh.p.fs.readOnly(name) {
		return &os.PathError{Op: "access", Path: name, Err: errReadOnly}
	}
	return nil
}

// nopRWC is a reader or writer the interpreter can close.
type nopRWC struct {
	r io.Reader
	w io.Writer
}

func (n nopRWC) Read(b []byte) (int, error) {
	if n.r == nil {
		return 0, io.EOF
	}
	return n.r.Read(b)
}

func (n nopRWC) Write(b []byte) (int, error) {
	if n.w == nil {
		return 0, os.ErrInvalid
	}
	return n.w.Write(b)
}

func (nopRWC) Close() error { return nil }

// fileWriter appends what is written to a file of the container.
type fileWriter struct {
	fs   *fs
	path string
}

func (f *fileWriter) Write(b []byte) (int, error) {
	if err := f.fs.write(f.path, b, true); err != nil {
		return 0, err
	}
	return len(b), nil
}
