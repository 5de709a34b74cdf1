package runtime

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// Bounds on what a script can make the node do. A pipeline's left side
// and a background job run in a goroutine of their own with a pipe (two
// file descriptors), and a shell function's recursion grows a
// goroutine's stack: without bounds, `f() { f | f; }; f` or `f() { f; }`
// would exhaust the node's file descriptors or memory. The interpreter
// offers no hook where it forks, so the parsed script is rewritten: each
// forked command runs as `{ (FORK; cmd); RELEASE $?; }`, FORK taking one
// of the container's fork slots (or failing as fork does), RELEASE
// giving it back and ending the forked subshell with cmd's status. The
// markers' names carry a random token, so a script cannot call them.

// maxForks bounds a container's pipelines and background jobs running at
// once.
const maxForks = 512

// maxFrames bounds the depth of a shell goroutine's stack (about 2,000
// nested function calls).
const maxFrames = 20000

var forkToken = func() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

var (
	releaseMark     = "__minik_release_" + forkToken
	pipeForkMark    = "__minik_pfork_" + forkToken
	pipeReleaseMark = "__minik_prelease_" + forkToken
	statusMark      = "__minik_status_" + forkToken
)

// errTooDeep ends a script whose functions recurse too deep.
var errTooDeep = errors.New("maximum function nesting level exceeded")

func lit(s string) *syntax.Word { return &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: s}}} }

// guardForks rewrites the forked commands of a parsed script: a
// background job runs as { FORK && { { (cmd); RELEASE $?; } & }; }, a
// pipeline as { FORK && { pipeline; PRELEASE $?; }; }: the slot is taken
// before the goroutine starts.
func guardForks(n syntax.Node) {
	status := func() *syntax.Word {
		return &syntax.Word{Parts: []syntax.WordPart{&syntax.ParamExp{Short: true, Param: &syntax.Lit{Value: "?"}}}}
	}
	call := func(args ...*syntax.Word) *syntax.Stmt { return &syntax.Stmt{Cmd: &syntax.CallExpr{Args: args}} }
	var walk func(n syntax.Node)
	walk = func(n syntax.Node) {
		syntax.Walk(n, func(n syntax.Node) bool {
			st, ok := n.(*syntax.Stmt)
			if !ok {
				return true
			}
			if bc, ok := st.Cmd.(*syntax.BinaryCmd); ok && (bc.Op == syntax.Pipe || bc.Op == syntax.PipeAll) {
				walk(bc.X)
				walk(bc.Y)
				st.Cmd = &syntax.Block{Stmts: []*syntax.Stmt{{Cmd: &syntax.BinaryCmd{Op: syntax.AndStmt,
					X: call(lit(pipeForkMark)),
					Y: &syntax.Stmt{Cmd: &syntax.Block{Stmts: []*syntax.Stmt{{Cmd: bc}, call(lit(pipeReleaseMark), status())}}},
				}}}}
				if !st.Background && !st.Disown {
					return false
				}
			}
			if st.Background || st.Disown {
				if _, done := st.Cmd.(*syntax.Block); !done || st.Cmd.(*syntax.Block).Lbrace.IsValid() {
					walk(st.Cmd)
				}
				// The slot is taken before the job starts, given back by the
				// job as it ends.
				job := &syntax.Stmt{Cmd: &syntax.Block{Stmts: []*syntax.Stmt{
					{Cmd: &syntax.Subshell{Stmts: []*syntax.Stmt{{Cmd: st.Cmd}}}},
					call(lit(releaseMark), status()),
				}}, Background: st.Background, Disown: st.Disown, Redirs: st.Redirs}
				st.Background, st.Disown, st.Redirs = false, false, nil
				st.Cmd = &syntax.Block{Stmts: []*syntax.Stmt{{Cmd: &syntax.BinaryCmd{Op: syntax.AndStmt,
					X: call(lit(pipeForkMark)),
					Y: &syntax.Stmt{Cmd: &syntax.Block{Stmts: []*syntax.Stmt{job}}},
				}}}}
				return false
			}
			return true
		})
	}
	walk(n)
}

// guardSource parses, guards and prints back a script (eval's argument,
// a sourced file).
func guardSource(src string) (string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return "", err
	}
	if err := refuseUnsupported(f); err != nil {
		return "", err
	}
	guardForks(f)
	guardMemory(f)
	var b bytes.Buffer
	if err := syntax.NewPrinter().Print(&b, f); err != nil {
		return "", err
	}
	return b.String(), nil
}

// guardCall handles the markers and the commands that run code the
// parser has not seen (eval, source). handled tells that args were one
// of them; the error ends the script.
func (sh *shell) guardCall(dir string, stderr io.Writer, args []string) ([]string, bool, error) {
	switch args[0] {
	case releaseMark:
		sh.forks.Add(-1)
		sh.p.forks.Add(-1)
		return append([]string{"exit"}, args[1:]...), true, nil
	case pipeForkMark:
		sh.forks.Add(1)
		if sh.p.forks.Add(1) > maxForks {
			sh.forks.Add(-1)
			sh.p.forks.Add(-1)
			fmt.Fprintln(stderr, "sh: can't fork: Resource temporarily unavailable")
			return []string{statusMark, "2"}, true, nil
		}
		return []string{":"}, true, nil
	case pipeReleaseMark:
		sh.forks.Add(-1)
		sh.p.forks.Add(-1)
		// The pipeline's status, which the shell's status builtins
		// cannot set (onExec answers it).
		return append([]string{statusMark}, args[1:]...), true, nil
	case "eval":
		src, err := guardSource(strings.Join(args[1:], " "))
		if err != nil {
			return []string{"eval", strings.Join(args[1:], " ")}, true, nil // the builtin words the error
		}
		return []string{"eval", src}, true, nil
	case "source", ".":
		if len(args) < 2 {
			return args, true, nil
		}
		name := args[1]
		if !path.IsAbs(name) {
			name = path.Join(dir, name)
		}
		data, err := sh.p.fs.read(name)
		if err != nil {
			fmt.Fprintf(stderr, "sh: %s: can't open '%s': %v\n", args[0], args[1], err)
			return []string{"false"}, true, nil
		}
		src, err := guardSource(string(data))
		if err != nil {
			fmt.Fprintf(stderr, "sh: %s: %v\n", args[1], parseErrorText(err))
			return []string{"exit", "2"}, true, nil
		}
		return []string{"eval", src}, true, nil
	}
	return args, false, nil
}

// releaseForks gives back the fork slots of a shell that was killed: its
// forked commands never reach their RELEASE.
func (sh *shell) releaseForks(ctx context.Context) {
	if ctx.Err() != nil {
		if n := sh.forks.Swap(0); n != 0 {
			sh.p.forks.Add(-n)
		}
	}
}

var framePool = sync.Pool{New: func() any { b := make([]uintptr, maxFrames+1); return &b }}

// tooDeep tells whether the calling goroutine's stack is deeper than
// maxFrames.
func tooDeep() bool {
	b := framePool.Get().(*[]uintptr)
	defer framePool.Put(b)
	return goruntime.Callers(0, *b) > maxFrames
}

// maxVarBytes bounds a shell's variables (x=$x$x in a loop would
// otherwise double until the node runs out of memory).
const maxVarBytes = 64 << 20

var tickMark = "__minik_tick_" + forkToken

// errOutOfMemory ends a script whose variables outgrow maxVarBytes, as
// the OOM killer ends a container.
var errOutOfMemory = errors.New("out of memory")

// guardMemory rewrites a parsed script so that the shell checks the size
// of its variables after each assignment and at each loop iteration (a
// TICK call, which keeps $?), and so that a loop of builtins alone still
// yields the CPU.
func guardMemory(n syntax.Node) {
	tick := func() *syntax.Stmt {
		return &syntax.Stmt{Cmd: &syntax.CallExpr{Args: []*syntax.Word{lit(tickMark)}}}
	}
	assigns := func(s *syntax.Stmt) bool {
		if s.Background || s.Disown {
			return false
		}
		switch c := s.Cmd.(type) {
		case *syntax.CallExpr:
			return len(c.Assigns) > 0 && len(c.Args) == 0
		case *syntax.DeclClause, *syntax.ArithmCmd, *syntax.LetClause:
			return true
		}
		return false
	}
	guard := func(stmts []*syntax.Stmt, loop bool) []*syntax.Stmt {
		out := make([]*syntax.Stmt, 0, len(stmts)+2)
		if loop {
			out = append(out, tick())
		}
		for _, s := range stmts {
			out = append(out, s)
			if assigns(s) {
				out = append(out, tick())
			}
		}
		return out
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.File:
			n.Stmts = guard(n.Stmts, false)
		case *syntax.Block:
			n.Stmts = guard(n.Stmts, false)
		case *syntax.Subshell:
			n.Stmts = guard(n.Stmts, false)
		case *syntax.CmdSubst:
			n.Stmts = guard(n.Stmts, false)
		case *syntax.CaseItem:
			n.Stmts = guard(n.Stmts, false)
		case *syntax.IfClause:
			n.Then = guard(n.Then, false)
		case *syntax.WhileClause:
			n.Do = guard(n.Do, true)
		case *syntax.ForClause:
			n.Do = guard(n.Do, true)
		}
		return true
	})
}

// checkMemory answers a TICK: an error when the shell's variables are
// too big, else the command that keeps the last status.
func checkMemory(hc interp.HandlerContext) ([]string, error) {
	total := 0
	for _, vr := range hc.Env.Each {
		total += len(vr.Str)
		for _, s := range vr.List {
			total += len(s)
		}
		for k, s := range vr.Map {
			total += len(k) + len(s)
		}
		if total > maxVarBytes {
			return nil, errOutOfMemory
		}
	}
	if hc.LastExitStatus == 0 {
		return []string{":"}, nil
	}
	return []string{statusMark, strconv.Itoa(hc.LastExitStatus)}, nil
}

// traceFilter keeps the markers out of set -x's trace: the interpreter
// writes each trace line at once.
type traceFilter struct{ w io.Writer }

func (f traceFilter) Write(b []byte) (int, error) {
	if len(b) > 0 && b[0] == '+' && bytes.Contains(b, []byte(forkToken)) {
		return len(b), nil
	}
	return f.w.Write(b)
}
