//go:build tools

// Package tools pins the conformance suite and its runner in this module:
// k8s.io/kubernetes/test/e2e (built into e2e.test with go test -c) and
// ginkgo's CLI (which runs e2e.test's specs in parallel).
package tools

import (
	_ "github.com/onsi/ginkgo/v2/ginkgo"
	_ "k8s.io/kubernetes/test/e2e"
)
