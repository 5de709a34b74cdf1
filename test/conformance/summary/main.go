// Command summary reads the JUnit reports of a conformance run (what
// e2e.test writes into its --report-dir) and prints how many specs
// passed, failed and were skipped per SIG (the [sig-xxx] tag of the
// spec's name), the failure reasons grouped by the first line of the
// failure (with the lines after it while it is too short to name a cause,
// as gomega's "Expected"; generated names and long numbers masked; most
// frequent first), then every failed spec with that first line.
//
//	go run ./summary REPORT-DIR|FILE.xml ...
//
// A directory stands for its junit*.xml files. Specs that the focus or
// skip did not select (ginkgo lists them as skipped without a reason) are
// counted apart, as "not selected". It exits 1 when a report cannot be
// read, and 0 otherwise, failed specs or not: scripts/conformance.sh
// takes the run's status from ginkgo.
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "summary: %v\n", err)
		os.Exit(1)
	}
}

// run summarizes the reports that args name onto stdout.
func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: summary REPORT-DIR|FILE.xml ...")
	}
	files, err := reportFiles(args)
	if err != nil {
		return err
	}
	var suites []junitSuite
	for _, name := range files {
		got, err := readFile(name)
		if err != nil {
			return err
		}
		suites = append(suites, got...)
	}
	s := summarize(suites)
	s.Reports = len(files)
	return s.write(os.Stdout)
}

// reportFiles expands args: a directory to its junit*.xml files, a file
// to itself.
func reportFiles(args []string) ([]string, error) {
	var files []string
	for _, arg := range args {
		fi, err := os.Stat(arg)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		if !fi.IsDir() {
			files = append(files, arg)
			continue
		}
		matches, err := filepath.Glob(filepath.Join(arg, "junit*.xml"))
		if err != nil {
			return nil, fmt.Errorf("list reports in %s: %w", arg, err)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("no junit*.xml in %s", arg)
		}
		files = append(files, matches...)
	}
	return files, nil
}

// readFile decodes the JUnit report in the file name.
func readFile(name string) ([]junitSuite, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	defer f.Close()
	suites, err := readJUnit(f)
	if err != nil {
		return nil, fmt.Errorf("read report %s: %w", name, err)
	}
	return suites, nil
}
