package scheduler

import (
	"minik/internal/podutil"
)

// maxNodeScore is the top score of one scoring plugin.
const maxNodeScore int64 = 100

// Weights of the scores, as in kube-scheduler's default profile.
const (
	weightTaintToleration = 3
	weightNodeAffinity    = 2
	weightResourcesFit    = 1
	weightBalanced        = 1
	weightTopologySpread  = 2
)

// scorer ranks feasible nodes. Its buffers are reused from one pod to the
// next: only the scheduling loop uses it.
type scorer struct {
	taints, affinity, spread, total []int64
}

// pick scores the feasible nodes and returns the best one: least
// allocated and balanced resources, fewest untolerated PreferNoSchedule
// taints, most preferred node affinity, fewest pods of the same group
// (spreading). Ties go to the node whose name sorts first, so the choice
// is deterministic.
func (s *scorer) pick(st *cycleState, feasible []*nodeInfo) *nodeInfo {
	if len(feasible) == 1 {
		return feasible[0]
	}
	k := len(feasible)
	s.taints = resize(s.taints, k)
	s.affinity = resize(s.affinity, k)
	s.spread = resize(s.spread, k)
	s.total = resize(s.total, k)
	pi := st.pi
	for i, n := range feasible {
		s.total[i] = weightResourcesFit*leastAllocated(pi, n) + weightBalanced*balancedAllocation(pi, n)
		s.taints[i] = intolerablePreferTaints(pi, n)
		s.affinity[i] = preferredAffinity(pi, n)
		if pi.spreadKey != "" {
			s.spread[i] = int64(n.spread[pi.spreadKey])
		}
	}
	normalize(s.taints, true)
	normalize(s.affinity, false)
	normalizeSpread(s.spread)
	best := -1
	for i, n := range feasible {
		s.total[i] += weightTaintToleration*s.taints[i] + weightNodeAffinity*s.affinity[i] + weightTopologySpread*s.spread[i]
		if best < 0 || s.total[i] > s.total[best] || (s.total[i] == s.total[best] && n.name < feasible[best].name) {
			best = i
		}
	}
	return feasible[best]
}

func resize(b []int64, n int) []int64 {
	if cap(b) < n {
		return make([]int64, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// leastAllocated is NodeResourcesFit's default score: the share of cpu and
// memory left free once the pod is placed (with the scoring defaults for
// containers that request nothing), averaged.
func leastAllocated(pi *podInfo, n *nodeInfo) int64 {
	free := func(requested, allocatable int64) int64 {
		if allocatable == 0 || requested > allocatable {
			return 0
		}
		return (allocatable - requested) * maxNodeScore / allocatable
	}
	cpu := free(n.nonZero.milliCPU+pi.nonZero.milliCPU, n.allocatable.milliCPU)
	mem := free(n.nonZero.memory+pi.nonZero.memory, n.allocatable.memory)
	return (cpu + mem) / 2
}

// balancedAllocation is NodeResourcesBalancedAllocation's score: nodes
// whose cpu and memory fill up evenly score higher.
func balancedAllocation(pi *podInfo, n *nodeInfo) int64 {
	frac := func(requested, allocatable int64) float64 {
		if allocatable == 0 {
			return 1
		}
		return min(float64(requested)/float64(allocatable), 1)
	}
	c := frac(n.nonZero.milliCPU+pi.nonZero.milliCPU, n.allocatable.milliCPU)
	m := frac(n.nonZero.memory+pi.nonZero.memory, n.allocatable.memory)
	d := c - m
	if d < 0 {
		d = -d
	}
	return int64((1 - d/2) * float64(maxNodeScore))
}

func intolerablePreferTaints(pi *podInfo, n *nodeInfo) int64 {
	var count int64
	for i := range n.preferTaints {
		if !podutil.ToleratesTaint(pi.pod.Spec.Tolerations, &n.preferTaints[i]) {
			count++
		}
	}
	return count
}

func preferredAffinity(pi *podInfo, n *nodeInfo) int64 {
	if pi.preferred == nil || n.node == nil {
		return 0
	}
	return pi.preferred.Score(n.node)
}

// normalize scales scores to 0..maxNodeScore (kube's
// DefaultNormalizeScore); reverse makes the smallest raw value best.
func normalize(scores []int64, reverse bool) {
	var top int64
	for _, v := range scores {
		top = max(top, v)
	}
	for i, v := range scores {
		switch {
		case top == 0 && reverse:
			scores[i] = maxNodeScore
		case top == 0:
			scores[i] = 0
		case reverse:
			scores[i] = maxNodeScore - maxNodeScore*v/top
		default:
			scores[i] = maxNodeScore * v / top
		}
	}
}

// normalizeSpread turns counts of same-group pods into scores, fewest
// best, as PodTopologySpread normalizes its skew counts.
func normalizeSpread(counts []int64) {
	var lo, hi int64 = -1, 0
	for _, v := range counts {
		hi = max(hi, v)
		if lo < 0 || v < lo {
			lo = v
		}
	}
	for i, v := range counts {
		if hi == 0 {
			counts[i] = maxNodeScore
			continue
		}
		counts[i] = maxNodeScore * (hi + lo - v) / hi
	}
}
