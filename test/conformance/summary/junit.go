package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// junitSuites is the root element ginkgo writes (<testsuites>).
type junitSuites struct {
	Suites []junitSuite `xml:"testsuite"`
}

// junitSuite is one <testsuite>: e2e.test writes a single one holding
// every spec of the run, selected or not.
type junitSuite struct {
	Name  string      `xml:"name,attr"`
	Cases []junitCase `xml:"testcase"`
}

// junitCase is one <testcase>: a spec ("[It] [sig-apps] ...") or a suite
// node ("[SynchronizedBeforeSuite]").
type junitCase struct {
	Name string `xml:"name,attr"`
	// Status is ginkgo's spec state: passed, skipped, pending, failed,
	// timedout, interrupted, aborted or panicked. Other writers of JUnit
	// leave it out; then the child elements say.
	Status  string        `xml:"status,attr"`
	Time    float64       `xml:"time,attr"`
	Skipped *junitMessage `xml:"skipped"`
	Failure *junitMessage `xml:"failure"`
	Error   *junitMessage `xml:"error"`
}

// junitMessage is a <skipped>, <failure> or <error> element. e2e.test
// leaves the message attribute empty on failures (OmitFailureMessageAttr)
// and writes the whole failure, first line "[FAILED] ...", as the text.
type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// readJUnit decodes one JUnit report, whether its root is <testsuites>
// (ginkgo, e2e.test) or a single <testsuite> (go-junit-report and others).
func readJUnit(r io.Reader) ([]junitSuite, error) {
	dec := xml.NewDecoder(r)
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("find the root element: %w", err)
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch start.Name.Local {
		case "testsuites":
			var all junitSuites
			if err := dec.DecodeElement(&all, &start); err != nil {
				return nil, fmt.Errorf("decode <testsuites>: %w", err)
			}
			return all.Suites, nil
		case "testsuite":
			var one junitSuite
			if err := dec.DecodeElement(&one, &start); err != nil {
				return nil, fmt.Errorf("decode <testsuite>: %w", err)
			}
			return []junitSuite{one}, nil
		default:
			return nil, fmt.Errorf("root element <%s>, want <testsuites> or <testsuite>", start.Name.Local)
		}
	}
}

// outcome is what became of one test case.
type outcome int

const (
	// notRun: filtered out by focus or skip (ginkgo still lists it, as
	// "skipped" with no reason), or pending.
	notRun outcome = iota
	passed
	failed
	// skipped: selected, but skipped at run time (e2eskipper, a missing
	// provider feature, or the suite interrupted before it ran).
	skipped
)

// outcome classifies c from ginkgo's status, or the child elements when
// there is none.
func (c junitCase) outcome() outcome {
	switch c.Status {
	case "passed":
		return passed
	case "failed", "timedout", "interrupted", "aborted", "panicked":
		return failed
	case "pending":
		return notRun
	case "skipped":
		return c.skipKind()
	}
	switch {
	case c.Failure != nil || c.Error != nil:
		return failed
	case c.Skipped != nil:
		return c.skipKind()
	}
	return passed
}

// skipKind tells a spec skipped at run time ("skipped - REASON") from one
// the focus or skip never selected ("skipped", no reason, as ginkgo
// writes every spec outside the filter).
func (c junitCase) skipKind() outcome {
	if c.Skipped == nil {
		return skipped
	}
	switch strings.TrimSpace(c.Skipped.Message) {
	case "skipped", "pending":
		return notRun
	}
	return skipped
}

// firstFailureLine is the first non-empty line of c's failure or error:
// the message attribute if the writer filled it, else the element's text.
func (c junitCase) firstFailureLine() string {
	for _, m := range []*junitMessage{c.Failure, c.Error} {
		if m == nil {
			continue
		}
		for _, s := range []string{m.Message, m.Text} {
			if line := firstLine(s); line != "" {
				return line
			}
		}
		if m.Type != "" {
			return "[" + strings.ToUpper(m.Type) + "] (no message)"
		}
	}
	return "(no failure message)"
}

// shortLine is how long a first line must be to name a cause: gomega's
// "[FAILED] Expected" or "[FAILED] Failed after 2.076s." do not, and
// take the lines after them until the line is this long (at most
// maxLines lines).
const (
	shortLine = 60
	maxLines  = 4
)

// firstLine is the first line of s that is not blank, trimmed, joined
// with the next ones while it is shorter than shortLine.
func firstLine(s string) string {
	var parts []string
	n := 0
	for line := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "In [") {
			if len(parts) > 0 && line != "" {
				break // ginkgo's "In [It] at: file:line" ends the message
			}
			continue
		}
		parts = append(parts, line)
		n += len(line)
		if n >= shortLine || len(parts) == maxLines {
			break
		}
	}
	return strings.Join(parts, " ")
}
