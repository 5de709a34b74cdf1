package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// exitError ends a process (exit N, or a program's end).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// errKilled ends a process killed by SIGKILL.
var errKilled = errors.New("killed")

// loopControl is break or continue.
type loopControl struct {
	brk bool
	n   int
}

func (l loopControl) Error() string { return "loop control" }

// shell is one simulated shell (or the process a container's argv runs):
// variables, positional arguments, traps and standard streams.
type shell struct {
	p      *process
	vars   map[string]string
	args   []string // $0, $1, ...
	status int
	traps  map[string]string
	stdin  []byte
	stdout io.Writer
	stderr io.Writer
	depth  int

	errexit bool // set -e
	xtrace  bool // set -x
	inCond  int  // evaluating an if/while condition: set -e does not apply
}

func (p *process) newShell(env map[string]string) *shell {
	vars := make(map[string]string, len(env))
	for k, v := range env {
		vars[k] = v
	}
	return &shell{p: p, vars: vars, traps: map[string]string{}, stdout: p.stdout, stderr: p.stderr, args: []string{"sh"}}
}

// sub returns a copy of the shell for a subshell or command substitution.
func (sh *shell) sub() *shell {
	c := *sh
	c.vars = make(map[string]string, len(sh.vars))
	for k, v := range sh.vars {
		c.vars[k] = v
	}
	c.traps = map[string]string{}
	c.depth++
	return &c
}

// runScript runs a script and returns its exit status (or errKilled).
func (sh *shell) runScript(src string) (int, error) {
	l, err := parseScript(src)
	if err != nil {
		fmt.Fprintf(sh.stderr, "sh: %v\n", err)
		return 2, nil
	}
	err = sh.runList(l)
	var ee exitError
	switch {
	case errors.As(err, &ee):
		return ee.code, nil
	case err == nil:
		return sh.status, nil
	case errors.As(err, new(loopControl)):
		return sh.status, nil
	}
	return 0, err
}

func (sh *shell) runList(l *list) error {
	for _, ao := range l.items {
		if err := sh.runAndOr(ao); err != nil {
			return err
		}
		if sh.errexit && sh.inCond == 0 && sh.status != 0 && len(ao.ops) == 0 && !ao.first.negate {
			return exitError{sh.status}
		}
	}
	return nil
}

// runCond runs an if or while condition, where set -e does not apply.
func (sh *shell) runCond(l *list) error {
	sh.inCond++
	defer func() { sh.inCond-- }()
	return sh.runList(l)
}

func (sh *shell) runAndOr(ao *andOr) error {
	if err := sh.runPipeline(ao.first); err != nil {
		return err
	}
	for i, op := range ao.ops {
		if (op == "&&") != (sh.status == 0) {
			continue
		}
		if err := sh.runPipeline(ao.rest[i]); err != nil {
			return err
		}
	}
	return nil
}

// runPipeline runs the commands of a pipeline one after the other, each
// one's output being the next one's input.
func (sh *shell) runPipeline(pl *pipeline) error {
	if len(pl.cmds) == 1 {
		if err := sh.runCommand(pl.cmds[0]); err != nil {
			return err
		}
	} else {
		var in []byte = sh.stdin
		for i, c := range pl.cmds {
			s := sh.sub()
			s.depth = sh.depth
			s.stdin = in
			var buf bytes.Buffer
			if i < len(pl.cmds)-1 {
				s.stdout = &buf
			}
			err := s.runCommand(c)
			var ee exitError
			if errors.As(err, &ee) {
				s.status, err = ee.code, nil
			}
			if err != nil {
				return err
			}
			sh.status = s.status
			in = buf.Bytes()
		}
	}
	if pl.negate {
		if sh.status == 0 {
			sh.status = 1
		} else {
			sh.status = 0
		}
	}
	return nil
}

func (sh *shell) runCommand(c command) error {
	if err := sh.p.checkSignals(sh); err != nil {
		return err
	}
	switch c := c.(type) {
	case *simpleCmd:
		return sh.runSimple(c)
	case *loopCmd:
		return sh.withRedirects(c.redirs, func(s *shell) error { return s.runLoop(c) })
	case *forCmd:
		return sh.withRedirects(c.redirs, func(s *shell) error { return s.runFor(c) })
	case *ifCmd:
		return sh.withRedirects(c.redirs, func(s *shell) error { return s.runIf(c) })
	case *groupCmd:
		return sh.withRedirects(c.redirs, func(s *shell) error {
			if !c.subshell {
				return s.runList(c.body)
			}
			sub := s.sub()
			err := sub.runList(c.body)
			var ee exitError
			if errors.As(err, &ee) {
				sub.status, err = ee.code, nil
			}
			s.status = sub.status
			return err
		})
	}
	return fmt.Errorf("unknown command %T", c)
}

func (sh *shell) runLoop(c *loopCmd) error {
	sh.status = 0
	last := 0
	for {
		if err := sh.runCond(c.cond); err != nil {
			return err
		}
		if (sh.status == 0) == c.until {
			sh.status = last
			return nil
		}
		err := sh.runList(c.body)
		last = sh.status
		var lc loopControl
		if errors.As(err, &lc) {
			if lc.n > 1 {
				return loopControl{brk: lc.brk, n: lc.n - 1}
			}
			if lc.brk {
				return nil
			}
			continue
		}
		if err != nil {
			return err
		}
		// A loop that neither waits nor prints would spin: yield to the
		// scheduler and to signals.
		if err := sh.p.checkSignals(sh); err != nil {
			return err
		}
	}
}

func (sh *shell) runFor(c *forCmd) error {
	var items []string
	if c.hasIn {
		var err error
		if items, err = sh.expandWords(c.words); err != nil {
			return err
		}
	} else {
		items = sh.args[1:]
	}
	sh.status = 0
	for _, it := range items {
		sh.vars[c.name] = it
		err := sh.runList(c.body)
		var lc loopControl
		if errors.As(err, &lc) {
			if lc.n > 1 {
				return loopControl{brk: lc.brk, n: lc.n - 1}
			}
			if lc.brk {
				return nil
			}
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (sh *shell) runIf(c *ifCmd) error {
	for i, cond := range c.conds {
		if err := sh.runCond(cond); err != nil {
			return err
		}
		if sh.status == 0 {
			return sh.runList(c.bodies[i])
		}
	}
	if c.orElse != nil {
		return sh.runList(c.orElse)
	}
	sh.status = 0
	return nil
}

func (sh *shell) runSimple(c *simpleCmd) error {
	words, err := sh.expandWords(c.words)
	if err != nil {
		return sh.expansionFailed(err)
	}
	values := make([]string, len(c.assigns))
	for i, a := range c.assigns {
		_, raw, _ := strings.Cut(a, "=")
		v, err := sh.expandString(raw)
		if err != nil {
			return sh.expansionFailed(err)
		}
		values[i] = v
	}
	if len(words) == 0 {
		for i, a := range c.assigns {
			name, _, _ := strings.Cut(a, "=")
			sh.vars[name] = values[i]
		}
		return sh.withRedirects(c.redirs, func(*shell) error { return nil })
	}
	// Assignments before a command apply to it alone.
	saved := map[string]*string{}
	for i, a := range c.assigns {
		name, _, _ := strings.Cut(a, "=")
		if old, ok := sh.vars[name]; ok {
			saved[name] = &old
		} else {
			saved[name] = nil
		}
		sh.vars[name] = values[i]
	}
	defer func() {
		for name, old := range saved {
			if old == nil {
				delete(sh.vars, name)
			} else {
				sh.vars[name] = *old
			}
		}
	}()
	if sh.xtrace {
		fmt.Fprintf(sh.stderr, "+ %s\n", strings.Join(words, " "))
	}
	return sh.withRedirects(c.redirs, func(s *shell) error {
		code, err := s.exec(words, false)
		if err != nil {
			return err
		}
		s.status = code
		sh.status = code
		return nil
	})
}

func (sh *shell) expansionFailed(err error) error {
	if errors.Is(err, errKilled) || errors.As(err, new(exitError)) {
		return err
	}
	fmt.Fprintf(sh.stderr, "sh: %v\n", err)
	sh.status = 1
	return nil
}

// withRedirects runs fn with the standard streams redirected.
func (sh *shell) withRedirects(rs []redirect, fn func(*shell) error) error {
	if len(rs) == 0 {
		return fn(sh)
	}
	s := *sh
	var files []*fileWriter
	for _, r := range rs {
		target, err := sh.expandString(r.target)
		if err != nil {
			return sh.expansionFailed(err)
		}
		switch r.op {
		case "<":
			data, err := sh.p.fs.read(target)
			if err != nil {
				fmt.Fprintf(sh.stderr, "sh: can't open %s: %v\n", target, err)
				sh.status = 1
				return nil
			}
			s.stdin = data
			continue
		case ">&":
			var w io.Writer
			switch target {
			case "1":
				w = s.stdout
			case "2":
				w = s.stderr
			case "-":
				w = io.Discard
			default:
				fmt.Fprintf(sh.stderr, "sh: %s: bad file descriptor\n", target)
				sh.status = 1
				return nil
			}
			s.setFD(r.fd, w)
			continue
		}
		var w io.Writer
		switch target {
		case "/dev/null":
			w = io.Discard
		case "/dev/stdout":
			w = sh.stdout
		case "/dev/stderr":
			w = sh.stderr
		default:
			fw := &fileWriter{fs: sh.p.fs, path: target}
			if r.op == ">" {
				if err := sh.p.fs.write(target, nil, false); err != nil {
					fmt.Fprintf(sh.stderr, "sh: can't create %s: %v\n", target, err)
					sh.status = 1
					return nil
				}
			}
			files = append(files, fw)
			w = fw
		}
		s.setFD(r.fd, w)
	}
	err := fn(&s)
	sh.status = s.status
	return err
}

func (sh *shell) setFD(fd int, w io.Writer) {
	switch fd {
	case 1:
		sh.stdout = w
	case 2:
		sh.stderr = w
	}
}

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

// exec runs a command: a builtin, a program of the rules, or "not found".
// execing is true for the exec builtin and a container's own argv: the
// program then replaces the shell and receives its signals.
func (sh *shell) exec(argv []string, execing bool) (int, error) {
	name := argv[0]
	if b, ok := builtins[name]; ok {
		return b(sh, argv)
	}
	if prog := sh.p.rules.program(name); prog != nil {
		return sh.p.runProgram(sh, prog, argv, execing)
	}
	if strings.Contains(name, "/") {
		if b, ok := builtins[baseName(name)]; ok {
			return b(sh, argv)
		}
	}
	fmt.Fprintf(sh.stderr, "sh: %s: not found\n", name)
	return 127, nil
}

func baseName(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}

// Expansion.

// expandWords expands raw words into fields: parameter, command and
// arithmetic expansion, then field splitting of unquoted results.
func (sh *shell) expandWords(raws []string) ([]string, error) {
	var out []string
	for _, raw := range raws {
		fields, err := sh.expand(raw, true)
		if err != nil {
			return nil, err
		}
		out = append(out, fields...)
	}
	return out, nil
}

// expandString expands a raw word into one string (no field splitting).
func (sh *shell) expandString(raw string) (string, error) {
	fields, err := sh.expand(raw, false)
	if err != nil {
		return "", err
	}
	return strings.Join(fields, " "), nil
}

type expander struct {
	fields  []string
	cur     strings.Builder
	started bool // cur is a field even if empty (quotes seen)
	split   bool
}

func (e *expander) lit(s string) {
	e.cur.WriteString(s)
	e.started = true
}

// unquoted adds the result of an unquoted expansion, split on blanks.
func (e *expander) unquoted(s string) {
	if !e.split {
		e.cur.WriteString(s)
		if s != "" {
			e.started = true
		}
		return
	}
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
	if len(parts) == 0 {
		if s != "" && (e.started || e.cur.Len() > 0) {
			e.end()
		}
		return
	}
	if s[0] == ' ' || s[0] == '\t' || s[0] == '\n' {
		e.end()
	}
	for i, p := range parts {
		if i > 0 {
			e.end()
		}
		e.cur.WriteString(p)
		e.started = true
	}
	if last := s[len(s)-1]; last == ' ' || last == '\t' || last == '\n' {
		e.end()
	}
}

func (e *expander) end() {
	if e.started || e.cur.Len() > 0 {
		e.fields = append(e.fields, e.cur.String())
	}
	e.cur.Reset()
	e.started = false
}

func (sh *shell) expand(raw string, split bool) ([]string, error) {
	e := &expander{split: split}
	i := 0
	for i < len(raw) {
		c := raw[i]
		switch c {
		case '\\':
			if i+1 < len(raw) {
				e.lit(raw[i+1 : i+2])
			}
			i += 2
		case '\'':
			j := strings.IndexByte(raw[i+1:], '\'')
			e.lit(raw[i+1 : i+1+j])
			i += j + 2
		case '"':
			j, _ := scanDouble(raw, i+1)
			if err := sh.expandDouble(e, raw[i+1:j]); err != nil {
				return nil, err
			}
			e.started = true
			i = j + 1
		case '$':
			n, err := sh.expandDollar(e, raw[i:], false)
			if err != nil {
				return nil, err
			}
			i += n
		default:
			e.lit(string(c))
			i++
		}
	}
	e.end()
	if !split && len(e.fields) == 0 {
		return []string{""}, nil
	}
	return e.fields, nil
}

// expandDouble expands the inside of a double-quoted string.
func (sh *shell) expandDouble(e *expander, s string) error {
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && strings.ContainsRune("$`\"\\\n", rune(s[i+1])):
			e.lit(s[i+1 : i+2])
			i += 2
		case c == '$':
			n, err := sh.expandDollar(e, s[i:], true)
			if err != nil {
				return err
			}
			i += n
		default:
			e.lit(string(c))
			i++
		}
	}
	return nil
}

// expandDollar expands the $-expression at the start of s and returns how
// many bytes it took.
func (sh *shell) expandDollar(e *expander, s string, quoted bool) (int, error) {
	add := func(v string) {
		if quoted {
			e.lit(v)
		} else {
			e.unquoted(v)
		}
	}
	if len(s) < 2 {
		e.lit("$")
		return 1, nil
	}
	switch c := s[1]; {
	case strings.HasPrefix(s, "$(("):
		end, err := scanDollar(s, 0)
		if err != nil {
			return 0, err
		}
		n, err := sh.arith(s[3 : end-2])
		if err != nil {
			return 0, err
		}
		add(strconv.FormatInt(n, 10))
		return end, nil
	case c == '(':
		end, err := scanDollar(s, 0)
		if err != nil {
			return 0, err
		}
		out, err := sh.substitute(s[2 : end-1])
		if err != nil {
			return 0, err
		}
		add(strings.TrimRight(out, "\n"))
		return end, nil
	case c == '{':
		end, err := scanDollar(s, 0)
		if err != nil {
			return 0, err
		}
		v, err := sh.braced(s[2 : end-1])
		if err != nil {
			return 0, err
		}
		add(v)
		return end, nil
	case c == '@' || c == '*':
		args := sh.args[1:]
		if quoted && c == '@' {
			for i, a := range args {
				if i > 0 {
					e.end()
				}
				e.lit(a)
			}
			if len(args) == 0 {
				// "$@" with no arguments is no field at all.
				e.started = false
			}
			return 2, nil
		}
		add(strings.Join(args, " "))
		return 2, nil
	case c == '?' || c == '$' || c == '#' || c == '!' || c == '-' || c >= '0' && c <= '9':
		add(sh.param(string(c)))
		return 2, nil
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		j := 1
		for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		add(sh.param(s[1:j]))
		return j, nil
	}
	e.lit("$")
	return 1, nil
}

// param is the value of a parameter.
func (sh *shell) param(name string) string {
	switch name {
	case "?":
		return strconv.Itoa(sh.status)
	case "$":
		return "1"
	case "!":
		return ""
	case "-":
		return ""
	case "#":
		return strconv.Itoa(len(sh.args) - 1)
	}
	if n, err := strconv.Atoi(name); err == nil {
		if n < len(sh.args) {
			return sh.args[n]
		}
		return ""
	}
	return sh.vars[name]
}

// braced expands the inside of ${...}.
func (sh *shell) braced(s string) (string, error) {
	if strings.HasPrefix(s, "#") && len(s) > 1 {
		return strconv.Itoa(len(sh.param(s[1:]))), nil
	}
	j := 0
	for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9' || j == 0 && strings.ContainsRune("?$#@*", rune(s[j]))) {
		j++
	}
	name, op := s[:j], s[j:]
	if name == "" {
		return "", fmt.Errorf("${%s}: bad substitution", s)
	}
	v, set := sh.vars[name]
	if !isName(name) {
		v, set = sh.param(name), true
	}
	for _, o := range []string{":-", ":=", ":+", "-", "=", "+"} {
		rest, ok := strings.CutPrefix(op, o)
		if !ok {
			continue
		}
		word, err := sh.expandString(rest)
		if err != nil {
			return "", err
		}
		unset := !set || strings.HasPrefix(o, ":") && v == ""
		switch strings.TrimPrefix(o, ":") {
		case "-":
			if unset {
				return word, nil
			}
		case "=":
			if unset {
				sh.vars[name] = word
				return word, nil
			}
		case "+":
			if unset {
				return "", nil
			}
			return word, nil
		}
		return v, nil
	}
	if op != "" {
		return "", fmt.Errorf("${%s}: bad substitution", s)
	}
	return v, nil
}

// substitute runs $(...) and returns its output.
func (sh *shell) substitute(src string) (string, error) {
	sub := sh.sub()
	var buf bytes.Buffer
	sub.stdout = &buf
	code, err := sub.runScript(src)
	if err != nil {
		return "", err
	}
	sh.status = code
	return buf.String(), nil
}

// environ lists the variables as NAME=value, sorted.
func (sh *shell) environ() []string {
	out := make([]string, 0, len(sh.vars))
	for k, v := range sh.vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
