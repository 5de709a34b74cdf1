package runtime

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files")

type ruleCase struct {
	Name    string            `json:"name"`
	Image   string            `json:"image"`
	Command []string          `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Ports   []int32           `json:"ports"`
	Policy  ImagePolicy       `json:"policy"`
	Run     bool              `json:"run"`
}

// logLines collects a container's output.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Line(stream, line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, stream+": "+line)
}

func (l *logLines) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// runToEnd runs a container at a very high simulation speed until it
// exits, and returns its output and exit.
func runToEnd(t *testing.T, spec ContainerSpec, policy ImagePolicy) ([]string, *Exit) {
	t.Helper()
	rt := New(Config{Speed: 1e6, Policy: policy})
	if _, err := rt.Pull(t.Context(), spec.Image); err != nil {
		t.Fatalf("pull %s: %v", spec.Image, err)
	}
	logs := &logLines{}
	spec.Log, spec.IP, spec.Hostname, spec.Pod, spec.Node = logs, "127.0.0.1", "test-pod", "default/test-pod", "node-1"
	c, err := rt.Create(spec)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Start()
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		c.Kill()
		t.Fatalf("container %v did not end", spec.Command)
	}
	return logs.get(), c.Exit()
}

// TestRulesGolden documents the rules by example: for each case of
// testdata/cases.yaml, what the runtime does (rules.golden). Run with
// -update to rewrite it.
func TestRulesGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "cases.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []ruleCase
	if err := yaml.UnmarshalStrict(data, &cases); err != nil {
		t.Fatal(err)
	}
	rules := DefaultRules()
	var out bytes.Buffer
	for _, c := range cases {
		spec := ContainerSpec{Image: c.Image, Command: c.Command, Args: c.Args, Ports: c.Ports}
		names := make([]string, 0, len(c.Env))
		for k := range c.Env {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			spec.Env = append(spec.Env, EnvVar{Name: k, Value: c.Env[k]})
		}
		fmt.Fprintf(&out, "== %s\n", c.Name)
		fmt.Fprintf(&out, "image: %s", c.Image)
		if len(c.Command) > 0 {
			fmt.Fprintf(&out, "  command: %s", quoteArgv(c.Command))
		}
		if len(c.Args) > 0 {
			fmt.Fprintf(&out, "  args: %s", quoteArgv(c.Args))
		}
		if c.Policy != "" {
			fmt.Fprintf(&out, "  policy: %s", c.Policy)
		}
		out.WriteString("\n")
		out.WriteString(rules.Describe(spec, c.Policy))
		if c.Run {
			lines, exit := runToEnd(t, spec, c.Policy)
			for _, l := range lines {
				fmt.Fprintf(&out, "  %s\n", l)
			}
			fmt.Fprintf(&out, "exit: %d (%s)\n", exit.Code, exit.Reason)
		}
		out.WriteString("\n")
	}
	golden := filepath.Join("testdata", "rules.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := out.String(); got != string(want) {
		t.Errorf("rules.golden differs (run with -update to accept):\n%s", lineDiff(string(want), got))
	}
}

// lineDiff shows the lines that differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %q\n  got  %q\n", i+1, wl, gl)
		}
	}
	return b.String()
}

func TestEmbeddedRulesParse(t *testing.T) {
	r := DefaultRules()
	if r.image("docker.io/library/nginx") == nil || r.program("nginx") == nil {
		t.Fatal("nginx missing from the rules")
	}
	if _, err := ParseRules([]byte("images:\n- repository: x\n  tags: ['(']\n")); err == nil {
		t.Fatal("a bad tag pattern was accepted")
	}
	if _, err := ParseRules([]byte("programs:\n- names: [x]\n  serve: {style: ftp}\n")); err == nil {
		t.Fatal("an unknown serve style was accepted")
	}
}
