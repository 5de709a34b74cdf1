package main

import (
	"os"
	"strings"
	"testing"
)

// TestSummaryOfASampleRun summarizes testdata/junit_01.xml, shaped as
// e2e.test writes it (a passed suite node, a spec the focus did not
// select, a pending one, passed, failed, timed-out, panicked and
// interrupted-before-running specs), and compares the whole output.
func TestSummaryOfASampleRun(t *testing.T) {
	f, err := os.Open("testdata/junit_01.xml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	suites, err := readJUnit(f)
	if err != nil {
		t.Fatal(err)
	}
	s := summarize(suites)
	s.Reports = 1
	var out strings.Builder
	if err := s.write(&out); err != nil {
		t.Fatal(err)
	}
	want := `6 specs from 1 report(s): 1 passed, 4 failed, 1 skipped (2 not selected)

SIG                passed  failed  skipped
sig-api-machinery       1       0        0
sig-apps                0       2        0
sig-network             0       0        1
sig-node                0       2        0
total                   1       4        1

failure reasons (3, by the first line of the failure):
    2  [FAILED] pod "test-cleanup-deployment-<rand>-<rand>" in namespace "deployment-<n>" did not start: image "agnhost:2.66.1" not found
       e.g. [sig-apps] Deployment deployment should delete old replica sets [Conformance]
    1  [PANICKED] Test Panicked
       e.g. [sig-node] Downward API volume should provide podname only [NodeConformance] [Conformance]
    1  [TIMEDOUT] A suite timeout occurred
       e.g. [sig-node] Pods should be submitted and removed [NodeConformance] [Conformance]

failed specs (4):
[sig-apps] Deployment deployment should delete old replica sets [Conformance]
    [FAILED] pod "test-cleanup-deployment-7d9f5-xk2bz" in namespace "deployment-4721" did not start: image "agnhost:2.66.1" not found
[sig-apps] Deployment should run the lifecycle of a Deployment [Conformance]
    [FAILED] pod "test-cleanup-deployment-5c6c8-q9wtv" in namespace "deployment-88" did not start: image "agnhost:2.66.1" not found
[sig-node] Pods should be submitted and removed [NodeConformance] [Conformance]
    [TIMEDOUT] A suite timeout occurred
[sig-node] Downward API volume should provide podname only [NodeConformance] [Conformance]
    [PANICKED] Test Panicked
`
	if got := out.String(); got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
}

func TestOutcome(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    junitCase
		want outcome
	}{
		{"a passed spec passed", junitCase{Status: "passed"}, passed},
		{"a timed-out spec failed", junitCase{Status: "timedout"}, failed},
		{"an interrupted spec failed", junitCase{Status: "interrupted"}, failed},
		{"a spec outside the focus was not run", junitCase{Status: "skipped", Skipped: &junitMessage{Message: "skipped"}}, notRun},
		{"a spec skipped with a reason was skipped", junitCase{Status: "skipped", Skipped: &junitMessage{Message: "skipped - no provider"}}, skipped},
		{"a pending spec was not run", junitCase{Status: "pending"}, notRun},
		{"without a status, a failure element means failed", junitCase{Failure: &junitMessage{Text: "boom"}}, failed},
		{"without a status, an error element means failed", junitCase{Error: &junitMessage{Text: "boom"}}, failed},
		{"without a status, a skipped element with a reason means skipped", junitCase{Skipped: &junitMessage{Message: "skipped - why"}}, skipped},
		{"without a status or child elements, the case passed", junitCase{}, passed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.outcome(); got != tc.want {
				t.Errorf("outcome = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestSpecSIG(t *testing.T) {
	for _, tc := range []struct {
		name, in, sig, spec string
	}{
		{"a spec counts under its first sig tag", "[It] [sig-apps] [sig-node] x [Conformance]", "sig-apps", "[sig-apps] [sig-node] x [Conformance]"},
		{"a suite node counts under the suite", "[SynchronizedBeforeSuite]", suiteSIG, "[SynchronizedBeforeSuite]"},
		{"a suite node with a text counts under the suite", "[ReportAfterSuite] Kubernetes e2e suite report", suiteSIG, "[ReportAfterSuite] Kubernetes e2e suite report"},
		{"a spec without a sig tag counts apart", "[It] [Feature:X] y", "(no sig)", "[Feature:X] y"},
		{"a name without ginkgo's node type keeps its sig", "[sig-cli] Kubectl client z", "sig-cli", "[sig-cli] Kubectl client z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sig, spec := specSIG(tc.in)
			if sig != tc.sig || spec != tc.spec {
				t.Errorf("specSIG(%q) = %q, %q; want %q, %q", tc.in, sig, spec, tc.sig, tc.spec)
			}
		})
	}
}

func TestReadJUnitAcceptsABareTestsuite(t *testing.T) {
	suites, err := readJUnit(strings.NewReader(`<?xml version="1.0"?>
<testsuite name="go"><testcase name="TestA"/><testcase name="TestB"><failure message="want 1, got 2">trace</failure></testcase></testsuite>`))
	if err != nil {
		t.Fatal(err)
	}
	s := summarize(suites)
	if s.Total != (counts{Passed: 1, Failed: 1}) {
		t.Errorf("total = %+v, want 1 passed, 1 failed", s.Total)
	}
	if len(s.Failures) != 1 || s.Failures[0].Line != "want 1, got 2" {
		t.Errorf("failures = %+v, want TestB's message attribute as its line", s.Failures)
	}
}

func TestReadJUnitRefusesOtherXML(t *testing.T) {
	if _, err := readJUnit(strings.NewReader(`<html><body/></html>`)); err == nil || !strings.Contains(err.Error(), "<html>") {
		t.Errorf("err = %v, want one naming the root element <html>", err)
	}
	if _, err := readJUnit(strings.NewReader(``)); err == nil {
		t.Error("an empty report was accepted")
	}
}

func TestReasonMasksGeneratedParts(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"a namespace's number", `namespace "webhook-4721"`, `namespace "webhook-<n>"`},
		{"a generateName suffix", `pod "web-7d9f5-xk2bz"`, `pod "web-<rand>-<rand>"`},
		{"a UID", `uid 0f8fad5b-d9cb-469f-a165-70867728950e gone`, `uid <uid> gone`},
		{"a long number", `Timed out after 300.001s`, `Timed out after <n>.<n>s`},
		{"an image version stays", `image "agnhost:2.66.1" not found`, `image "agnhost:2.66.1" not found`},
		{"a word without vowels that is not a suffix stays", `the rhythm is off`, `the rhythm is off`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := reason(tc.in); got != tc.want {
				t.Errorf("reason(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestFirstLineTakesMoreWhenTooShortToNameACause(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"a long first line stands alone", "\n[FAILED] failed to list all PodTemplates: the server could not find the requested resource\nIn [It] at: x.go:1\n",
			"[FAILED] failed to list all PodTemplates: the server could not find the requested resource"},
		{"gomega's Expected takes the lines after it", "[FAILED] Expected\n    <int64>: 1\nto be equivalent to\n    <int>: 2\nIn [It] at: x.go:1",
			"[FAILED] Expected <int64>: 1 to be equivalent to <int>: 2"},
		{"a short message stops at ginkgo's location line", "[PANICKED] Test Panicked\nIn [It] at: runtime/panic.go:115\n", "[PANICKED] Test Panicked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := firstLine(tc.in); got != tc.want {
				t.Errorf("firstLine = %q, want %q", got, tc.want)
			}
		})
	}
}
