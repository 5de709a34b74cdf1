package main

import (
	"cmp"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// sigRE finds a spec's SIG, the first [sig-xxx] tag of its name.
var sigRE = regexp.MustCompile(`\[sig-[a-z0-9-]+\]`)

// suiteSIG is where failed suite nodes (a BeforeSuite that failed fails
// every spec) are counted; passed ones are not counted at all.
const suiteSIG = "(suite)"

// counts are one SIG's outcomes.
type counts struct {
	Passed, Failed, Skipped int
}

// add counts one more o.
func (c *counts) add(o outcome) {
	switch o {
	case passed:
		c.Passed++
	case failed:
		c.Failed++
	case skipped:
		c.Skipped++
	}
}

// failure is one failed spec and the first line of why.
type failure struct {
	SIG, Spec, Line string
}

// summary is a run's outcome per SIG and its failures.
type summary struct {
	Reports  int
	BySIG    map[string]*counts
	Total    counts
	NotRun   int
	Failures []failure
}

// summarize counts suites' specs per SIG and lists the failed ones, in
// the order of the reports (e2e.test sorts its specs by name).
func summarize(suites []junitSuite) *summary {
	s := &summary{BySIG: map[string]*counts{}}
	for _, suite := range suites {
		for _, c := range suite.Cases {
			o := c.outcome()
			sig, spec := specSIG(c.Name)
			if o == notRun || (sig == suiteSIG && o != failed) {
				if o == notRun {
					s.NotRun++
				}
				continue
			}
			if s.BySIG[sig] == nil {
				s.BySIG[sig] = &counts{}
			}
			s.BySIG[sig].add(o)
			s.Total.add(o)
			if o == failed {
				s.Failures = append(s.Failures, failure{SIG: sig, Spec: spec, Line: c.firstFailureLine()})
			}
		}
	}
	return s
}

// specSIG is the SIG a test case counts under and its name without
// ginkgo's leading "[It] ". A suite node ("[SynchronizedBeforeSuite]",
// "[ReportAfterSuite] Kubernetes e2e suite report") counts under
// suiteSIG; a spec without a SIG tag under "(no sig)".
func specSIG(name string) (sig, spec string) {
	spec, isIt := strings.CutPrefix(name, "[It] ")
	if !isIt && strings.HasPrefix(name, "[") {
		if node, _, _ := strings.Cut(name[1:], "]"); strings.Contains(node, "Suite") {
			return suiteSIG, name
		}
	}
	if m := sigRE.FindString(spec); m != "" {
		return strings.Trim(m, "[]"), spec
	}
	return "(no sig)", spec
}

// Generated parts of names and numbers that differ from spec to spec and
// would keep failures with one cause apart: UIDs, the random suffix of a
// generateName (Kubernetes' alphabet has no vowels and no 0, 1, 3), the
// number ending a name (the suite's namespaces are "<base>-<0..9999>")
// and numbers of three digits or more (ports, sizes, times). Shorter
// numbers elsewhere stay: they are versions and counts.
var (
	uidRE     = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	suffixRE  = regexp.MustCompile(`-[bcdfghjklmnpqrstvwxz2456789]{5}\b`)
	nameNumRE = regexp.MustCompile(`([a-z])-[0-9]+\b`)
	numberRE  = regexp.MustCompile(`[0-9]{3,}`)
)

// reason is line with the generated parts replaced, so that failures with
// the same cause group under one reason.
func reason(line string) string {
	line = uidRE.ReplaceAllString(line, "<uid>")
	line = suffixRE.ReplaceAllString(line, "-<rand>")
	line = nameNumRE.ReplaceAllString(line, "$1-<n>")
	return numberRE.ReplaceAllString(line, "<n>")
}

// group is one failure reason, how many specs it failed and the first.
type group struct {
	Reason  string
	Count   int
	Example failure
}

// groups are s's failures by reason, most frequent first, then by reason.
func (s *summary) groups() []group {
	var out []group
	index := map[string]int{}
	for _, f := range s.Failures {
		r := reason(f.Line)
		i, ok := index[r]
		if !ok {
			i = len(out)
			index[r] = i
			out = append(out, group{Reason: r, Example: f})
		}
		out[i].Count++
	}
	slices.SortStableFunc(out, func(a, b group) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Reason, b.Reason)
	})
	return out
}

// write prints s: the totals, a table of SIGs, the failure reasons most
// frequent first, then every failed spec with the first line of its
// failure.
func (s *summary) write(w io.Writer) error {
	p := &printer{w: w}
	ran := s.Total.Passed + s.Total.Failed + s.Total.Skipped
	p.printf("%d specs from %d report(s): %d passed, %d failed, %d skipped (%d not selected)\n\n",
		ran, s.Reports, s.Total.Passed, s.Total.Failed, s.Total.Skipped, s.NotRun)

	sigs := make([]string, 0, len(s.BySIG))
	width := len("total")
	for sig := range s.BySIG {
		sigs = append(sigs, sig)
		width = max(width, len(sig))
	}
	slices.Sort(sigs)
	row := func(name string, c counts) {
		p.printf("%-*s  %6d  %6d  %7d\n", width, name, c.Passed, c.Failed, c.Skipped)
	}
	p.printf("%-*s  %6s  %6s  %7s\n", width, "SIG", "passed", "failed", "skipped")
	for _, sig := range sigs {
		row(sig, *s.BySIG[sig])
	}
	row("total", s.Total)

	if len(s.Failures) == 0 {
		return p.err
	}
	groups := s.groups()
	p.printf("\nfailure reasons (%d, by the first line of the failure):\n", len(groups))
	for _, g := range groups {
		p.printf("%5d  %s\n       e.g. %s\n", g.Count, g.Reason, g.Example.Spec)
	}
	p.printf("\nfailed specs (%d):\n", len(s.Failures))
	for _, f := range s.Failures {
		p.printf("%s\n    %s\n", f.Spec, f.Line)
	}
	return p.err
}

// printer writes formatted lines to w and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

// printf writes unless an earlier write failed.
func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}
