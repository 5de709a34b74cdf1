package runtime

import (
	"os"
	goruntime "runtime"
	"strings"
	"testing"
	"time"
)

// TestShell runs scripts through the simulated shell: what they print
// (stdout and stderr, in order) and their exit code.
func TestShell(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		env          map[string]string
		out          string
		code         int32
	}{
		{"single and double quotes", `echo 'a  b' "c  $X" d\ e`, map[string]string{"X": "x"}, "a  b c  x d e", 0},
		{"unquoted expansions split", `X="1 2  3"; for i in $X; do echo "[$i]"; done`, nil, "[1] [2] [3]", 0},
		{"defaults and lengths", `echo ${UNSET:-dflt} ${#HOME} ${UNSET-} ${HOME:+set}`, nil, "dflt 5 set", 0},
		{"arithmetic", `i=7; echo $((i * 6)) $(( (i + 1) / 2 )) $((i % 4))`, nil, "42 4 3", 0},
		{"command substitution", `echo "host: $(hostname)"; N=$(echo 5); echo $((N+1))`, nil, "host: test-pod 6", 0},
		{"if elif else", `x=2; if [ $x -eq 1 ]; then echo one; elif [ $x -eq 2 ]; then echo two; else echo many; fi`, nil, "two", 0},
		{"while with break", `i=0; while true; do i=$((i+1)); [ $i -ge 3 ] && break; done; echo $i`, nil, "3", 0},
		{"until and continue", `i=0; until [ $i -ge 4 ]; do i=$((i+1)); [ $i -eq 2 ] && continue; echo $i; done`, nil, "1 3 4", 0},
		{"and or", `false && echo no || echo yes; true || echo no; ! false && echo negated`, nil, "yes negated", 0},
		{"pipes feed the next command", `printf 'b\na\nb\n' | grep -c b; echo hello | cat`, nil, "2 hello", 0},
		{"redirections to files", `echo one > /tmp/f; echo two >> /tmp/f; cat /tmp/f; wc -l < /tmp/f`, nil, "one two 2", 0},
		{"stderr to stdout and to null", `ls /nope 2>&1; ls /nope 2>/dev/null; echo $?`, nil, "ls: /nope: No such file or directory 1", 0},
		{"exit code of the last command", `echo hi; false`, nil, "hi", 1},
		{"exit N", `exit 42`, nil, "", 42},
		{"set -e stops at a failure", `set -e; echo a; false; echo b`, nil, "a", 1},
		{"set -e spares conditions", `set -e; if false; then echo x; fi; while false; do :; done; echo ok`, nil, "ok", 0},
		{"set -x traces", `set -x; echo traced`, nil, "+ echo traced traced", 0},
		{"set -x traces what the script runs, nothing else", `set -x; x=1; for i in 1; do true; done; y=2`, nil, "+ x=1 + for i in 1 + true + y=2", 0},
		{"an unknown command is 127", `nope; echo $?`, nil, "sh: nope: not found 127", 0},
		{"process substitution is refused, as busybox's ash does", `cat <(echo x)`, nil, `sh: line 1: syntax error: unexpected "("`, 2},
		{"a syntax error is busybox's", `if true; then echo x`, nil, "sh: syntax error: `if` statement must end with `fi`", 2},
		{"env and printenv", `export A=1; printenv A; env | grep ^A=`, nil, "1 A=1", 0},
		{"test operators", `[ -z "" ] && [ -n x ] && [ a = a ] && [ a != b ] && [ 2 -lt 3 ] && [ ! -f /x ] && echo all`, nil, "all", 0},
		{"positional arguments of sh -c", `sh -c 'echo $0 $1 $#' name one`, nil, "name one 1", 0},
		{"seq and head and tail", `seq 5 | tail -n 2; seq 3 | head -n 1`, nil, "4 5 1", 0},
		{"processes are bounded as a pids limit bounds them", `s='sh -c "$0" "$0"'; sh -c "$s" "$s"`, nil, "sh: can't fork: Resource temporarily unavailable", 2},
		{"background jobs are bounded", `i=0; while [ $i -lt 600 ]; do sleep infinity & i=$((i+1)); done 2>&1 | grep -q "can't fork" && echo bounded`, nil, "bounded", 0},
		{"a pipeline keeps its status", `true | false; echo $?; false | true; echo $?; ! true | false; echo $?`, nil, "1 0 0", 0},
		{"deep recursion ends the script", `f() { f; }; f; echo never`, nil, "sh: maximum function nesting level exceeded", 2},
		{"eval'd and sourced code runs", `echo 'echo sourced $1 | cat' > /tmp/s; . /tmp/s; eval 'echo evaluated | cat'`, nil, "sourced evaluated", 0},
		{"variables are bounded as memory is", `x=y; while true; do x=$x$x; done; echo never`, nil, "sh: out of memory", 2},
		{"the last status survives the shell's checks", `x=$(false); echo $?; for i in 1; do false; done; echo $?; if y=$(exit 3); then :; else echo $?; fi`, nil, "1 1 3", 0},
		{"tail counts bytes", `printf abcdef | tail -c +3; echo; printf abcdef | tail -c 2`, nil, "cdef ef", 0},
		{"exec replaces the shell", `exec sh -c 'exit 7'; echo never`, nil, "", 7},
		{"awk fields, separators, patterns and blocks", `printf 'a:1\nb:2\nc:3\n' > /tmp/kv; awk -F: '$2 >= 2 {print $1 "=" $2}' /tmp/kv; awk -F: 'NR==1' /tmp/kv; echo 'x y z' | awk '{print $NF, NF}'; awk -F: '/b/ {print NR} END {print "done", NR}' /tmp/kv; awk -v p=pre 'BEGIN {print p}'`, nil, "b=2 c=3 a:1 z 3 2 done 3 pre", 0},
		{"awk refuses what it cannot run", `echo x | awk '{ n += 1 }'`, nil, `awk: cmd. line:1: minik's awk does not run this program: "{ n += 1 }"`, 2},
		{"tail reads /dev/null as empty", `printf 'a\nb\n' > /tmp/t; tail -n 1 /tmp/t /dev/null; tail /dev/null; echo end`, nil, "b end", 0},
		{"wc names its file", `echo hi > /tmp/w; wc -l /tmp/w; wc -l < /tmp/w`, nil, "1 /tmp/w 1", 0},
		{"awk prints a field, as the conformance restart-count script uses it", "f=/tmp/rc\ncount=$(echo 'hello' >> $f ; wc -l $f | awk {'print $1'})\nif [ $count -eq 1 ]; then\n\texit 1\nfi\necho $count", nil, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := ContainerSpec{Image: "busybox:1.36", Command: []string{"sh", "-c", tc.script}}
			for k, v := range tc.env {
				spec.Env = append(spec.Env, EnvVar{Name: k, Value: v})
			}
			lines, exit := runToEnd(t, spec, PolicyCatalog)
			var out []string
			for _, l := range lines {
				_, text, _ := strings.Cut(l, ": ")
				out = append(out, text)
			}
			if got := strings.Join(out, " "); got != tc.out || exit.Code != tc.code {
				t.Errorf("got %q exit %d, want %q exit %d", got, exit.Code, tc.out, tc.code)
			}
		})
	}
}

// TestForkBombsAreBounded runs fork bombs: their pipelines and
// background jobs take at most maxForks goroutines and pipes, until the
// container is killed.
func TestForkBombsAreBounded(t *testing.T) {
	for _, script := range []string{`f() { f | f; }; f`, `f() { f & f; }; f`, `eval 'g() { g | g & }; g'; wait`} {
		t.Run(script, func(t *testing.T) {
			rt := New(Config{Speed: 1000})
			g0, fd0 := goruntime.NumGoroutine(), countFDs(t)
			c, logs := startOn(t, rt, ContainerSpec{Image: "busybox", Command: []string{"sh", "-c", script}})
			// The bomb holds every fork slot, or has ended on the
			// nesting bound.
			for deadline := time.Now().Add(20 * time.Second); c.p.forks.Load() < maxForks && c.Exit() == nil; {
				if time.Now().After(deadline) {
					t.Fatalf("the bomb holds %d forks", c.p.forks.Load())
				}
				time.Sleep(time.Millisecond)
			}
			if e := c.Exit(); e != nil {
				t.Logf("ended: %+v, logs %q", e, logs.get())
			}
			if g, fds := goruntime.NumGoroutine()-g0, countFDs(t)-fd0; g > 4*maxForks || fds > 2*maxForks+64 {
				t.Errorf("%d goroutines and %d file descriptors for %d forks", g, fds, maxForks)
			}
			c.Kill()
			waitDone(t, c)
		})
	}
}

func countFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	return len(ents)
}
