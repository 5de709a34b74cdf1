package scheduler

import (
	"sort"
	"strconv"
	"strings"
)

// diagnosis records why a pod fits no node: kube-scheduler's Diagnosis and
// FitError.
type diagnosis struct {
	numAllNodes int
	// preFilter, when set, rejected every node before any was visited.
	preFilter *status
	// nodes are the visited nodes and why each was rejected.
	nodes []nodeStatus
	// absent is the status of the nodes never visited (those a required
	// node affinity on metadata.name leaves out); absentCount how many.
	absent      *status
	absentCount int
	// plugins are the filters that rejected some node.
	plugins plugin
}

type nodeStatus struct {
	n *nodeInfo
	s *status
}

func (d *diagnosis) add(n *nodeInfo, s *status) {
	d.nodes = append(d.nodes, nodeStatus{n, s})
	d.plugins |= s.plugin
}

// histogram counts reasons across nodes.
type histogram map[string]int

func (h histogram) addStatus(s *status, count int) {
	for _, r := range s.reasons {
		h[r] += count
	}
}

// String formats the counts as kube does: "N reason" items sorted as
// strings (so by count digit by digit, then alphabetically), joined with
// ", ".
func (h histogram) String() string {
	items := make([]string, 0, len(h))
	for r, n := range h {
		items = append(items, strconv.Itoa(n)+" "+r)
	}
	sort.Strings(items)
	return strings.Join(items, ", ")
}

// fitMessage is FitError.Error(): "0/N nodes are available: <prefilter or
// reasons>. <postfilter>".
func fitMessage(numAllNodes int, preFilter string, h histogram, postFilter string) string {
	var b strings.Builder
	b.WriteString("0/")
	b.WriteString(strconv.Itoa(numAllNodes))
	b.WriteString(" nodes are available:")
	if preFilter != "" {
		b.WriteString(" ")
		b.WriteString(preFilter)
		b.WriteString(".")
	} else if len(h) > 0 {
		b.WriteString(" ")
		b.WriteString(h.String())
		b.WriteString(".")
	}
	if postFilter != "" {
		b.WriteString(" ")
		b.WriteString(postFilter)
	}
	return b.String()
}

// message is the FailedScheduling message for d, the preemption verdict
// (postFilter) appended.
func (d *diagnosis) message(postFilter string) string {
	if d.preFilter != nil {
		return fitMessage(d.numAllNodes, strings.Join(d.preFilter.reasons, ", "), nil, postFilter)
	}
	h := histogram{}
	for _, ns := range d.nodes {
		h.addStatus(ns.s, 1)
	}
	if d.absent != nil && d.absentCount > 0 {
		h.addStatus(d.absent, d.absentCount)
	}
	return fitMessage(d.numAllNodes, "", h, postFilter)
}
