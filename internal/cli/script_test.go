package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"minik/internal/testserver"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts of testdata/script/*.txtar with the actual output")

// TestScripts runs the CLI transcripts of testdata/script against a real
// minikd. Each .txtar archive holds a "script" file — commands ("$ minikctl
// ARGS [< FILE]"), each followed by its expected output (stdout, then
// "[stderr]" and stderr, then "[exit N]" for a failure) — and the files the
// commands use, written to a fresh working directory together with the
// repository's testdata/web.yaml. A "testserver:" line in the comment
// turns on controllers and the scheduler (see serverOptions). Outputs are normalized (ages, timestamps,
// uids, resource versions) before comparison; -update rewrites the
// expected outputs.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/script/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scripts in testdata/script")
	}
	web, err := os.ReadFile("../../testdata/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if file, err = filepath.Abs(file); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			ar := parseTxtar(data)
			script, ok := ar.file("script")
			if !ok {
				t.Fatalf("%s has no script file", file)
			}
			work := t.TempDir()
			if err := os.WriteFile(filepath.Join(work, "web.yaml"), web, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, f := range ar.files {
				if f.name == "script" {
					continue
				}
				path := filepath.Join(work, filepath.FromSlash(f.name))
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, f.data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			srv := testserver.StartWith(t, serverOptions(string(ar.comment)))
			t.Chdir(work)
			got := runScript(t, string(script), func(line string) string { return runCommand(t, line, srv.KubeconfigPath) })
			if got == string(script) {
				compareWithKubectl(t, ar, string(script), web)
				return
			}
			if *update {
				ar.setFile("script", []byte(got))
				if err := os.WriteFile(file, ar.format(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			t.Errorf("%s: transcript differs (run with -update to accept):\n%s", file, lineDiff(string(script), got))
		})
	}
}

// serverOptions reads the "testserver:" line of a script's comment:
// "controllers" runs every controller, "scheduler" the scheduler, "nodes"
// one simulated node that runs the pods. Without
// it, minikd serves the API alone.
func serverOptions(comment string) testserver.Options {
	var o testserver.Options
	for _, line := range strings.Split(comment, "\n") {
		rest, ok := strings.CutPrefix(line, "testserver:")
		if !ok {
			continue
		}
		for _, word := range strings.Fields(rest) {
			switch word {
			case "controllers":
				o.Controllers = []string{"*"}
			case "scheduler":
				o.Scheduler = true
			case "nodes":
				o.Nodes = 1
			}
		}
	}
	return o
}

// eventually marks a command whose outcome depends on a cache catching
// up (an RBAC change reaching the authorizer): it is run again, for a few
// seconds, until its output is the transcript's.
const eventually = "   # eventually"

// notKubectl marks a command whose output real kubectl (the older
// /usr/bin/kubectl of the test machine) legitimately prints otherwise; the
// comment after it says why. compareWithKubectl skips it.
const notKubectl = "   # kubectl differs:"

// commandOf strips a command line's annotations ("   # ...").
func commandOf(line string) string {
	if i := strings.Index(line, "   # "); i >= 0 {
		return line[:i]
	}
	return line
}

// compareWithKubectl runs script, when its comment says "compare:
// kubectl" and /usr/bin/kubectl exists, with real kubectl against a second
// fresh minikd in a second working directory holding the same files, and
// fails where kubectl's output differs from the transcript's (kubectl's
// name replaced by minikctl's in messages), except for the commands
// marked notKubectl.
func compareWithKubectl(t *testing.T, ar *txtar, script string, web []byte) {
	if !strings.Contains(string(ar.comment), "compare: kubectl") {
		return
	}
	kubectl, err := exec.LookPath("/usr/bin/kubectl")
	if err != nil {
		t.Log("no /usr/bin/kubectl: outputs not compared with kubectl's")
		return
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "web.yaml"), web, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.files {
		if f.name == "script" {
			continue
		}
		path := filepath.Join(work, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := testserver.StartWith(t, serverOptions(string(ar.comment)))
	got := runScript(t, script, func(line string) string {
		return runKubectl(t, kubectl, work, line, srv.KubeconfigPath)
	})
	want, have := expectedOutputs(script), expectedOutputs(got)
	var lines []string
	for _, line := range strings.Split(script, "\n") {
		if strings.HasPrefix(line, "$ minikctl") {
			lines = append(lines, line)
		}
	}
	for i, line := range lines {
		if strings.Contains(line, notKubectl) || i >= len(have) {
			continue
		}
		if want[i] != have[i] {
			t.Errorf("kubectl prints otherwise for %q:\n--- minikctl\n%s\n--- kubectl\n%s", line, want[i], have[i])
		}
	}
}

// runKubectl runs one "$ minikctl ..." line with real kubectl in dir and
// returns its transcript output, normalized as minikctl's.
func runKubectl(t *testing.T, kubectl, dir, line, kubeconfig string) string {
	args, stdinFile, err := splitCommand(strings.TrimPrefix(line, "$ minikctl"))
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECTL_KUBERC=false", "HOME="+dir)
	if stdinFile != "" {
		f, err := os.Open(filepath.Join(dir, stdinFile))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("%s: %v", line, err)
		}
		code = exit.ExitCode()
	}
	// kubectl v1.32 prints the zero creationTimestamp as null; v1.37's
	// ObjectMeta omits it (omitzero), as minikctl does.
	stdout = *bytes.NewBufferString(nullTimestampRE.ReplaceAllString(stdout.String(), ""))
	rename := strings.NewReplacer("'kubectl ", "'minikctl ", `for "kubectl"`, `for "minikctl"`, "\n  kubectl ", "\n  minikctl ", `Use "kubectl `, `Use "minikctl `)
	var out strings.Builder
	out.WriteString(normalize(rename.Replace(stdout.String())))
	if stdout.Len() > 0 && !strings.HasSuffix(stdout.String(), "\n") {
		out.WriteString("\n[no newline at end of output]\n")
	}
	if stderr.Len() > 0 {
		out.WriteString("[stderr]\n")
		out.WriteString(normalize(rename.Replace(stderr.String())))
	}
	if code != 0 {
		fmt.Fprintf(&out, "[exit %d]\n", code)
	}
	return out.String()
}

// expectedOutputs returns, per command line of script in order, the output
// the transcript records for it.
func expectedOutputs(script string) []string {
	var outs []string
	var cur *strings.Builder
	for _, line := range strings.Split(script, "\n") {
		if strings.HasPrefix(line, "$ minikctl") {
			if cur != nil {
				outs = append(outs, strings.TrimSuffix(cur.String(), "\n"))
			}
			cur = &strings.Builder{}
			continue
		}
		if cur != nil {
			cur.WriteString(line + "\n")
		}
	}
	if cur != nil {
		outs = append(outs, strings.TrimSuffix(cur.String(), "\n"))
	}
	return outs
}

// runScript runs the commands of script with run and returns the
// transcript.
func runScript(t *testing.T, script string, run func(line string) string) string {
	var out strings.Builder
	expected := expectedOutputs(script)
	n := -1
	for _, line := range strings.Split(script, "\n") {
		if !strings.HasPrefix(line, "$ minikctl") {
			continue
		}
		n++
		if n > 0 {
			out.WriteString("\n")
		}
		out.WriteString(line + "\n")
		retry := strings.HasSuffix(line, eventually)
		if retry && *update {
			// No transcript to wait for: give the caches a moment.
			time.Sleep(500 * time.Millisecond)
			retry = false
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			got := run(commandOf(line))
			if !retry || got == expected[n] || time.Now().After(deadline) {
				out.WriteString(got)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return out.String()
}

// runCommand runs one "$ minikctl ..." line and returns its transcript
// output.
func runCommand(t *testing.T, line, kubeconfig string) string {
	var out strings.Builder
	args, stdinFile, err := splitCommand(strings.TrimPrefix(line, "$ minikctl"))
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	streams, in, stdout, stderr := TestStreams()
	if stdinFile != "" {
		data, err := os.ReadFile(stdinFile)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		in.Write(data)
	}
	args = append([]string{"--kubeconfig", kubeconfig}, args...)
	start := time.Now()
	code := Run(context.Background(), args, streams)
	if d := time.Since(start); d > 5*time.Second {
		t.Logf("%s took %v", line, d.Round(time.Second))
	}
	out.WriteString(normalize(stdout.String()))
	if stdout.Len() > 0 && !strings.HasSuffix(stdout.String(), "\n") {
		out.WriteString("\n[no newline at end of output]\n")
	}
	if stderr.Len() > 0 {
		out.WriteString("[stderr]\n")
		out.WriteString(normalize(stderr.String()))
	}
	if code != 0 {
		fmt.Fprintf(&out, "[exit %d]\n", code)
	}
	return out.String()
}

// splitCommand splits a command line like a shell would (single and
// double quotes, no expansion); a final "< FILE" names the stdin.
func splitCommand(line string) (args []string, stdin string, err error) {
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, "", fmt.Errorf("unterminated quote")
	}
	if inWord {
		args = append(args, cur.String())
	}
	if n := len(args); n >= 2 && args[n-2] == "<" {
		return args[:n-2], args[n-1], nil
	}
	return args, "", nil
}

var (
	timestampRE     = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z`)
	uidRE           = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	rvRE            = regexp.MustCompile(`("?resourceVersion"?: )"[^"]+"`)
	rfc1123zRE      = regexp.MustCompile(`[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}`)
	podNameRE       = regexp.MustCompile(`\b([a-z0-9-]+-[0-9a-f]{6,10})-[b-df-hj-np-tv-z2-9]{5}\b`)
	gapRE           = regexp.MustCompile(`(\S)   +`)
	ipMidRE         = regexp.MustCompile(`\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}  `)
	ipRE            = regexp.MustCompile(`\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b`)
	describeRVRE    = regexp.MustCompile(`(?m)^(\s+Resource Version:\s+)\d+$`)
	diffTimeRE      = regexp.MustCompile(`\t\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)? [+-]\d{4}`)
	diffDirRE       = regexp.MustCompile(`\S*/(LIVE|MERGED)-\d+`)
	nullTimestampRE = regexp.MustCompile(`(?m)^ *creationTimestamp: null\n`)
	ageRE           = regexp.MustCompile(`^(\d+[smhdy])+$`)
	durationRE      = regexp.MustCompile(`(?m)^(Duration:\s+)(\d+[smhdy])+$`)
)

// normalize replaces what changes from run to run: timestamps (RFC 3339
// and describe's RFC 1123), describe's Job Duration, uids, resource versions, IP addresses, the
// random suffix of generated pod names (kept the same length, so tables
// stay aligned); and the AGE cells of tables, which become "0s" while
// keeping the columns after them in place.
func normalize(s string) string {
	s = diffTimeRE.ReplaceAllString(s, "\t<time>")
	s = diffDirRE.ReplaceAllString(s, "$1-XXX")
	s = timestampRE.ReplaceAllString(s, "<time>")
	s = uidRE.ReplaceAllString(s, "<uid>")
	s = rvRE.ReplaceAllString(s, `$1"<rv>"`)
	s = describeRVRE.ReplaceAllString(s, "${1}<rv>")
	s = rfc1123zRE.ReplaceAllString(s, "<time>")
	s = durationRE.ReplaceAllString(s, "${1}<duration>")
	s = podNameRE.ReplaceAllString(s, "${1}-xxxxx")
	if ipMidRE.MatchString(s) {
		// Allocated addresses vary in width from run to run, and so do the
		// columns around them: compare such outputs with gaps collapsed.
		s = gapRE.ReplaceAllString(s, "$1   ")
	}
	s = ipRE.ReplaceAllString(s, "<ip>")
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		lines[i] = normalizeAges(line)
	}
	return strings.Join(lines, "\n")
}

// normalizeAges rewrites table cells that are durations ("7s", "3m2s").
func normalizeAges(line string) string {
	b := []byte(line)
	changed := false
	for i := 0; i < len(b); {
		if b[i] == ' ' {
			i++
			continue
		}
		j := i
		for j < len(b) && b[j] != ' ' {
			j++
		}
		// A cell after a description label ("cpu:   100m") is a quantity,
		// not an age.
		afterLabel := false
		if k := bytes.LastIndexFunc(b[:i], func(r rune) bool { return r != ' ' }); k >= 0 && b[k] == ':' {
			afterLabel = true
		}
		cellStart := !afterLabel && (i == 0 || (i >= 2 && b[i-1] == ' ' && b[i-2] == ' '))
		cellEnd := j == len(b) || (j+1 < len(b) && b[j+1] == ' ')
		if cellStart && cellEnd && ageRE.Match(b[i:j]) {
			copy(b[i:j], bytes.Repeat([]byte{' '}, j-i))
			copy(b[i:], "0s")
			changed = true
		}
		i = j
	}
	if !changed {
		return line
	}
	return strings.TrimRight(string(b), " ")
}

// lineDiff shows the first lines where two transcripts differ.
func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			from := max(0, i-3)
			return fmt.Sprintf("line %d:\n  want: %q\n  got:  %q\ncontext (got):\n%s", i+1, w, g, strings.Join(gl[from:min(len(gl), i+4)], "\n"))
		}
	}
	return ""
}

// txtar is a minimal reader and writer of txtar archives: a comment, then
// files introduced by "-- NAME --" lines.
type txtar struct {
	comment []byte
	files   []txtarFile
}

type txtarFile struct {
	name string
	data []byte
}

func parseTxtar(data []byte) *txtar {
	ar := &txtar{}
	var cur *txtarFile
	for _, line := range strings.SplitAfter(string(data), "\n") {
		trimmed := strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			ar.files = append(ar.files, txtarFile{name: strings.TrimSpace(trimmed[3 : len(trimmed)-3])})
			cur = &ar.files[len(ar.files)-1]
			continue
		}
		if cur == nil {
			ar.comment = append(ar.comment, line...)
		} else {
			cur.data = append(cur.data, line...)
		}
	}
	return ar
}

func (a *txtar) file(name string) ([]byte, bool) {
	for _, f := range a.files {
		if f.name == name {
			return f.data, true
		}
	}
	return nil, false
}

func (a *txtar) setFile(name string, data []byte) {
	for i := range a.files {
		if a.files[i].name == name {
			a.files[i].data = data
			return
		}
	}
	a.files = append(a.files, txtarFile{name: name, data: data})
}

func (a *txtar) format() []byte {
	var b bytes.Buffer
	b.Write(a.comment)
	for _, f := range a.files {
		fmt.Fprintf(&b, "-- %s --\n", f.name)
		b.Write(f.data)
		if len(f.data) > 0 && f.data[len(f.data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
