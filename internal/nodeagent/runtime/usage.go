package runtime

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"mvdan.cc/sh/v3/syntax"
)

// Resource usage of simulated containers: what the kubelet's Summary API
// and metrics.k8s.io report. It is deterministic — no sampling, no
// randomness — and follows what the container's program does:
//
//   - a program of rules.yaml uses what usageByProgram gives it (by its
//     first name, else by its server style): an idle server a little CPU
//     and a few MiB, the pause program nothing;
//   - a shell script uses a shell's few hundred KiB plus, for each
//     CPU-bound thing it runs, one core: an endless loop that never
//     sleeps or waits (`while true; do :; done`), a utility that spins
//     (`yes`, `md5sum /dev/zero`, `dd if=/dev/zero ...`), and stress or
//     stress-ng workers (`--cpu N` cores, `--cpu-load P` percent of each,
//     `--vm N --vm-bytes B` of memory each, 256M by default);
//   - a sleeping or waiting shell uses almost nothing.
//
// Demand is that steady rate; the node agent caps it by the container's
// limits (and the node's capacity) or replaces it with the pod's
// metrics.minik.dev/usage annotation (ParseUsageOverrides). Cumulative
// CPU grows with the container's simulated run time.

// Demand is what a container's process uses when nothing limits it: a
// steady CPU rate and its memory.
type Demand struct {
	// NanoCores is the CPU rate in billionths of a core.
	NanoCores uint64
	// WorkingSetBytes is the memory the process uses and would be
	// OOM-killed by (the kubelet's working set).
	WorkingSetBytes uint64
	// RSSBytes is its resident anonymous memory (at most the working set).
	RSSBytes uint64
}

// Usage is a container's usage at one instant, as the kubelet's Summary
// API reports it.
type Usage struct {
	// Time is when the figures were taken.
	Time time.Time
	// NanoCores is the CPU rate, CoreNanoSeconds the CPU used since the
	// container started (simulated time).
	NanoCores, CoreNanoSeconds uint64
	// WorkingSetBytes and RSSBytes are as in Demand.
	WorkingSetBytes, RSSBytes uint64
}

// usageEntry is one row of the usage table: CPU and memory as quantities.
type usageEntry struct {
	cpu, memory string
}

// usageByProgram is what an idle program uses, keyed by a program's first
// name in rules.yaml or, for programs not listed, "style:" and its server
// style. "(generic)" is what an unknown image runs, "(shell)" a shell
// that waits or sleeps, "(utility)" a shell utility run as the container's
// command (sleep 3600).
var usageByProgram = map[string]usageEntry{
	"nginx":            {"1m", "6Mi"},
	"httpd-foreground": {"1m", "12Mi"},
	"/http-echo":       {"1m", "3Mi"},
	"/whoami":          {"1m", "4Mi"},
	"/hello-app":       {"1m", "5Mi"},
	"/agnhost":         {"1m", "10Mi"},
	"/pause":           {"0", "256Ki"},
	"redis-server":     {"2m", "8Mi"},
	"postgres":         {"3m", "32Mi"},
	"(generic)":        {"1m", "16Mi"},
	"(shell)":          {"0", "512Ki"},
	"(utility)":        {"0", "256Ki"},
	"style:nginx":      {"1m", "6Mi"},
	"style:httpd":      {"1m", "12Mi"},
	"style:echo":       {"1m", "3Mi"},
	"style:whoami":     {"1m", "4Mi"},
	"style:hello":      {"1m", "5Mi"},
	"style:generic":    {"1m", "16Mi"},
	"style:tcp":        {"2m", "8Mi"},
}

// spinners are utilities that keep a core busy for as long as they run.
var spinners = map[string]bool{
	"yes": true, "md5sum": true, "sha1sum": true, "sha256sum": true, "sha512sum": true,
	"dd": true, "openssl": true, "gzip": true, "bzip2": true, "xz": true,
}

// waiters are utilities that block: an endless loop that runs one does
// not spin.
var waiters = map[string]bool{
	"sleep": true, "usleep": true, "read": true, "wait": true, "nc": true, "tail": true,
	"wget": true, "curl": true, "timeout": true, "inotifywait": true, "stress": true, "stress-ng": true,
}

const (
	core = 1_000_000_000 // nanocores of one core
	// defaultVMBytes is what one stress --vm worker allocates without
	// --vm-bytes (stress and stress-ng both use 256M).
	defaultVMBytes = 256 << 20
	// maxCores and maxBytes bound what a command line can ask for, so
	// that sums and products stay far from overflowing.
	maxCores = 1 << 16
	maxBytes = 1 << 50
)

// Demand is what the container's process uses by the rules (see the top
// of this file), before limits.
func (c *Container) Demand() Demand {
	var img *ImageRule
	if c.p != nil {
		img = c.p.image
	}
	return c.rt.rules.demand(img, c.argv())
}

// DemandOf is what a container would use by the rules: its image (as a
// pod names it) and command line. It is Container.Demand for a container
// not created.
func (r *Rules) DemandOf(spec ContainerSpec) Demand {
	var img *ImageRule
	if ref, err := ParseReference(spec.Image); err == nil {
		img = r.image(ref.Repository)
	}
	c := &Container{spec: spec, p: &process{rules: r, image: img}}
	return r.demand(img, c.argv())
}

func (r *Rules) demand(img *ImageRule, argv []string) Demand {
	// Entry-point wrappers run the rest of argv (or the image's cmd).
	for depth := 0; depth < 8 && len(argv) > 0; depth++ {
		p := r.program(argv[0])
		if p == nil || !p.Wrapper {
			break
		}
		argv = argv[1:]
		if len(argv) == 0 && img != nil {
			argv = img.Cmd
		}
	}
	if len(argv) == 0 {
		return entryDemand("(generic)")
	}
	p := r.program(argv[0])
	switch {
	case p != nil && p.Shell:
		return shellDemand(argv[1:])
	case p != nil:
		if _, ok := usageByProgram[p.Names[0]]; ok {
			return entryDemand(p.Names[0])
		}
		if p.Serve != nil {
			if _, ok := usageByProgram["style:"+p.Serve.Style]; ok {
				return entryDemand("style:" + p.Serve.Style)
			}
		}
		if p.Forever {
			return entryDemand("/pause")
		}
		return entryDemand("(utility)")
	}
	// A utility or a program the rules do not know (stress in its own
	// image): what its command line does.
	d := entryDemand("(utility)")
	if img == nil && !isKnownCommand(argv[0]) {
		d = entryDemand("(generic)")
	}
	return d.plus(commandDemand(argv))
}

// isKnownCommand tells whether a command's usage is described here.
func isKnownCommand(name string) bool {
	n := baseName(name)
	return spinners[n] || waiters[n]
}

func entryDemand(key string) Demand {
	e := usageByProgram[key]
	memQ, cpuQ := resource.MustParse(e.memory), resource.MustParse(e.cpu)
	mem := uint64(memQ.Value())
	return Demand{
		NanoCores:       uint64(cpuQ.MilliValue()) * 1_000_000,
		WorkingSetBytes: mem,
		RSSBytes:        mem * 3 / 4,
	}
}

func (d Demand) plus(o Demand) Demand {
	return Demand{
		NanoCores:       min(d.NanoCores+o.NanoCores, maxCores*core),
		WorkingSetBytes: min(d.WorkingSetBytes+o.WorkingSetBytes, maxBytes),
		RSSBytes:        min(d.RSSBytes+o.RSSBytes, maxBytes),
	}
}

// Capped is d limited to cpu nanocores and memory bytes; zero means no
// limit. A process never uses more CPU than its limit (the kernel
// throttles it); memory stays at the limit (OOM kills are not simulated).
func (d Demand) Capped(nanoCores, memoryBytes uint64) Demand {
	if nanoCores > 0 && d.NanoCores > nanoCores {
		d.NanoCores = nanoCores
	}
	if memoryBytes > 0 && d.WorkingSetBytes > memoryBytes {
		d.WorkingSetBytes = memoryBytes
	}
	if d.RSSBytes > d.WorkingSetBytes {
		d.RSSBytes = d.WorkingSetBytes
	}
	return d
}

// shellDemand is what the shell uses for its arguments: with -c, what its
// script does; otherwise (an interactive or script-file shell) it waits.
func shellDemand(args []string) Demand {
	d := entryDemand("(shell)")
	for i, a := range args {
		if a == "-c" && i+1 < len(args) {
			return d.plus(scriptDemand(args[i+1]))
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
	}
	return d
}

// scriptDemand walks a script: every spinning command and every endless
// loop that never blocks adds a core; stress workers add theirs. A script
// that does not parse is a shell that exits at once, and uses nothing.
func scriptDemand(script string) Demand {
	f, err := syntax.NewParser().Parse(strings.NewReader(script), "")
	if err != nil {
		return Demand{}
	}
	var d Demand
	visit := func(node syntax.Node) bool {
		switch n := node.(type) {
		case *syntax.WhileClause:
			if endless(n) && !blocks(n.Do) {
				d = d.plus(Demand{NanoCores: core, WorkingSetBytes: 64 << 10, RSSBytes: 64 << 10})
			}
		case *syntax.ForClause:
			if loop, ok := n.Loop.(*syntax.CStyleLoop); ok && loop.Cond == nil && !blocks(n.Do) {
				d = d.plus(Demand{NanoCores: core, WorkingSetBytes: 64 << 10, RSSBytes: 64 << 10})
			}
		case *syntax.CallExpr:
			if argv := literalArgs(n); len(argv) > 0 {
				d = d.plus(commandDemand(argv))
			}
		}
		return true
	}
	syntax.Walk(f, visit)
	return d
}

// endless tells whether a while (until) loop's condition is true (false)
// for ever: `true`, `:`, `[ 1 ]`.
func endless(w *syntax.WhileClause) bool {
	if len(w.Cond) != 1 {
		return false
	}
	call, ok := w.Cond[0].Cmd.(*syntax.CallExpr)
	if !ok {
		return false
	}
	argv := literalArgs(call)
	if len(argv) == 0 {
		return false
	}
	if w.Until {
		return argv[0] == "false" && len(argv) == 1
	}
	switch {
	case len(argv) == 1 && (argv[0] == "true" || argv[0] == ":"):
		return true
	case len(argv) == 3 && argv[0] == "[" && argv[2] == "]" && argv[1] != "":
		return true
	}
	return false
}

// blocks tells whether statements run something that waits.
func blocks(stmts []*syntax.Stmt) bool {
	found := false
	for _, s := range stmts {
		syntax.Walk(s, func(node syntax.Node) bool {
			if call, ok := node.(*syntax.CallExpr); ok {
				if argv := literalArgs(call); len(argv) > 0 && waiters[baseName(argv[0])] {
					found = true
				}
			}
			return !found
		})
	}
	return found
}

// literalArgs are a call's words that are plain literals (quotes
// removed); a word with expansions ends the list.
func literalArgs(call *syntax.CallExpr) []string {
	var out []string
	for _, w := range call.Args {
		s, ok := literalWord(w)
		if !ok {
			break
		}
		out = append(out, s)
	}
	return out
}

func literalWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// commandDemand is what one command line adds: a spinner a core, stress
// and stress-ng their workers.
func commandDemand(argv []string) Demand {
	name := baseName(argv[0])
	switch {
	case name == "stress" || name == "stress-ng":
		return stressDemand(argv[1:])
	case name == "dd":
		for _, a := range argv[1:] {
			if a == "if=/dev/zero" || a == "if=/dev/urandom" {
				return Demand{NanoCores: core, WorkingSetBytes: 1 << 20, RSSBytes: 1 << 20}
			}
		}
		return Demand{}
	case spinners[name]:
		return Demand{NanoCores: core, WorkingSetBytes: 512 << 10, RSSBytes: 512 << 10}
	}
	return Demand{}
}

// stressDemand reads stress's and stress-ng's flags: --cpu/-c N, --vm/-m
// N, --vm-bytes B, --cpu-load P (stress-ng), --io/-i N (a little CPU
// each), --matrix N (stress-ng, a core each).
func stressDemand(args []string) Demand {
	var cpus, vms, ios, load uint64 = 0, 0, 0, 100
	vmBytes := uint64(defaultVMBytes)
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		consumed := false
		count := func() uint64 {
			consumed = !hasValue
			n, err := strconv.ParseUint(value, 10, 32)
			if err != nil {
				return 0
			}
			if n == 0 {
				n = 1 // stress-ng: 0 means every online CPU; count one
			}
			return min(n, maxCores)
		}
		switch name {
		case "--cpu", "-c", "--matrix":
			cpus = min(cpus+count(), maxCores)
		case "--vm", "-m":
			vms = min(vms+count(), maxCores)
		case "--io", "-i", "--hdd", "-d":
			ios = min(ios+count(), maxCores)
		case "--cpu-load", "-l":
			consumed = !hasValue
			if n, err := strconv.ParseUint(strings.TrimSuffix(value, "%"), 10, 8); err == nil && n <= 100 {
				load = n
			}
		case "--vm-bytes":
			consumed = !hasValue
			if n, ok := parseStressBytes(value); ok {
				vmBytes = n
			}
		case "--timeout", "-t", "--backoff", "--vm-stride", "--vm-hang", "--hdd-bytes", "--vm-keep", "--metrics-brief":
			consumed = !hasValue && !strings.HasPrefix(value, "-")
			if name == "--vm-keep" || name == "--metrics-brief" {
				consumed = false
			}
		}
		if consumed {
			i++
		}
	}
	d := Demand{
		NanoCores:       cpus*core*load/100 + vms*core + ios*core/10,
		WorkingSetBytes: min(vms*vmBytes, maxBytes) + 1<<20,
	}
	d.RSSBytes = d.WorkingSetBytes
	return d
}

// parseStressBytes reads a size as stress writes it: 128M, 1g, 512k, 64B.
func parseStressBytes(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	mult := uint64(1)
	switch s[len(s)-1] {
	case 'b', 'B':
		s = s[:len(s)-1]
	case 'k', 'K':
		mult, s = 1<<10, s[:len(s)-1]
	case 'm', 'M':
		mult, s = 1<<20, s[:len(s)-1]
	case 'g', 'G':
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > maxBytes/mult {
		return 0, false
	}
	return n * mult, true
}

// Usage is the container's usage at now for a steady demand d (the rules'
// Demand, capped or overridden by the kubelet): its CPU time is d's rate
// over the simulated time the container has run, until it ended.
func (c *Container) Usage(d Demand, now time.Time) Usage {
	c.mu.Lock()
	started := c.started
	end := now
	if c.exit != nil {
		end = c.exit.Finished
	}
	c.mu.Unlock()
	ran := end.Sub(started)
	if started.IsZero() || ran < 0 {
		ran = 0
	}
	simulated := ran.Seconds() * c.rt.cfg.Speed
	cum := float64(d.NanoCores) * simulated
	if cum > math.MaxUint64/2 {
		cum = math.MaxUint64 / 2
	}
	return Usage{
		Time: now, NanoCores: d.NanoCores, CoreNanoSeconds: uint64(cum),
		WorkingSetBytes: d.WorkingSetBytes, RSSBytes: d.RSSBytes,
	}
}

// UsageOverride replaces what the rules say a container uses; a nil field
// keeps the rules' figure.
type UsageOverride struct {
	CPU, Memory *resource.Quantity
}

// UsageAnnotation is the pod annotation that sets its containers' usage:
// `app=cpu:250m,memory:64Mi; sidecar=cpu:5m` (container "*" means every
// container not named).
const UsageAnnotation = "metrics.minik.dev/usage"

// maxOverrides bounds the containers one annotation names.
const maxOverrides = 64

// ParseUsageOverrides reads a UsageAnnotation value, by container name.
func ParseUsageOverrides(s string) (map[string]UsageOverride, error) {
	out := map[string]UsageOverride{}
	entries := 0
	for _, entry := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == '\n' }) {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		if entries++; entries > maxOverrides {
			return nil, fmt.Errorf("more than %d containers", maxOverrides)
		}
		name, spec, ok := strings.Cut(entry, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("%q: want <container>=cpu:<quantity>,memory:<quantity>", entry)
		}
		var o UsageOverride
		for _, kv := range strings.Split(spec, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), ":")
			if !ok {
				return nil, fmt.Errorf("%q: want cpu:<quantity> or memory:<quantity>", kv)
			}
			q, err := resource.ParseQuantity(strings.TrimSpace(v))
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", name, k, err)
			}
			if q.Sign() < 0 {
				return nil, fmt.Errorf("%s %s: must be greater than or equal to 0", name, k)
			}
			switch k {
			case "cpu":
				if q.Cmp(*resource.NewQuantity(maxCores, resource.DecimalSI)) > 0 {
					return nil, fmt.Errorf("%s cpu: must be at most %d", name, maxCores)
				}
				o.CPU = &q
			case "memory":
				if q.Cmp(*resource.NewQuantity(maxBytes, resource.BinarySI)) > 0 {
					return nil, fmt.Errorf("%s memory: must be at most %d", name, int64(maxBytes))
				}
				o.Memory = &q
			default:
				return nil, fmt.Errorf("%s: unknown resource %q (cpu, memory)", name, k)
			}
		}
		out[name] = o
	}
	return out, nil
}

// Apply is d with the override's figures.
func (o UsageOverride) Apply(d Demand) Demand {
	if o.CPU != nil {
		d.NanoCores = uint64(o.CPU.MilliValue()) * 1_000_000
	}
	if o.Memory != nil {
		d.WorkingSetBytes = uint64(o.Memory.Value())
		d.RSSBytes = d.WorkingSetBytes * 3 / 4
	}
	return d
}
