package scheduler

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// This file is kube-scheduler's DefaultPreemption PostFilter, reduced: no
// PodDisruptionBudgets, no extenders, and the pod (anti-)affinity and
// spreading counts of the cycle are not adjusted for the pods a dry run
// removes (so preemption helps with resources, host ports and the pod
// count, as it mostly does in kube).
//
// A pod that fits no node, may preempt (its preemptionPolicy is not Never)
// and is not waiting for victims it already chose, is tried on each node
// that rejected it as Unschedulable (not UnschedulableAndUnresolvable):
// without every pod of lower priority, then giving back as many of them as
// still let it fit, most important first. Among the nodes where it then
// fits, the one with the least important victims is nominated
// (status.nominatedNodeName); the victims get the DisruptionTarget
// condition and a Preempted event, and are deleted. The pod is scheduled
// when they are gone; meanwhile the nominated node's room is kept for it
// against pods of lower priority.

// Event reasons and condition messages of preemption, as kube words them.
const (
	EventPreempted = "Preempted"
)

// Defaults of kube's DefaultPreemptionArgs: the dry run stops once it has
// max(10% of the candidate nodes, 100) candidates.
const (
	minCandidateNodesPercentage = 10
	minCandidateNodesAbsolute   = 100
)

// preemptionPlan is what the PostFilter decided for a pod that fits
// nowhere: the node to nominate ("" clears a nomination) and the pods to
// evict there, most important first.
type preemptionPlan struct {
	node    string
	victims []*podInfo
}

// candidate is a node where the pod fits once victims are gone.
type candidate struct {
	node    *nodeInfo
	victims []*podInfo
}

// postFilter runs DefaultPreemption for a pod that fits no node. It
// returns the "preemption: ..." part of the FailedScheduling message (empty
// when a node was found) and the plan; a nil plan leaves the pod's
// nomination as it is. The caller holds s.mu.
func (s *Scheduler) postFilter(st *cycleState, d *diagnosis) (string, *preemptionPlan) {
	if msg := s.notEligible(st, d); msg != "" {
		return "preemption: " + msg, nil
	}
	h := histogram{}
	visited := 0
	var cands []candidate
	if d.preFilter == nil {
		var potential []*nodeInfo
		for _, ns := range d.nodes {
			if ns.s.code == codeUnschedulable {
				potential = append(potential, ns.n)
			}
		}
		want := numPreemptionCandidates(len(potential))
		for _, n := range potential {
			visited++
			victims, rejected := s.selectVictims(st, n)
			if rejected == nil && len(victims) == 0 {
				rejected = &status{code: codeUnresolvable, reasons: []string{fmt.Sprintf("expected at least one victim pod on node %q", n.name)}}
			}
			if rejected != nil {
				h.addStatus(rejected, 1)
				continue
			}
			cands = append(cands, candidate{node: n, victims: victims})
			if len(cands) >= want {
				break
			}
		}
	}
	if len(cands) == 0 {
		if rest := d.numAllNodes - visited; rest > 0 {
			h[ReasonPreemptionNotHelpful] += rest
		}
		return "preemption: " + fitMessage(d.numAllNodes, "", h, ""), &preemptionPlan{}
	}
	best := pickCandidate(cands, s.now())
	return "", &preemptionPlan{node: best.node.name, victims: best.victims}
}

// notEligible says why the pod may not preempt, or "" when it may: its
// policy is Never, or pods of lower priority that it preempted are still
// terminating on its nominated node (unless that node cannot take it at
// all any more).
func (s *Scheduler) notEligible(st *cycleState, d *diagnosis) string {
	pod := st.pi.pod
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == corev1.PreemptNever {
		return ReasonNotEligibleNeverPreempt
	}
	nom := s.nominated[pod.UID]
	if nom == "" {
		nom = pod.Status.NominatedNodeName
	}
	if nom == "" {
		return ""
	}
	if ns := d.statusOf(nom); ns == nil || ns.code == codeUnresolvable {
		return ""
	}
	if n := s.cache.nodes[nom]; n != nil {
		for _, p := range n.pods {
			if p.priority < st.pi.priority && terminatingByPreemption(p.pod) {
				return ReasonNotEligibleTerminating
			}
		}
	}
	return ""
}

// statusOf is why node name was rejected, nil when the diagnosis does not
// say (kube counts such a node as UnschedulableAndUnresolvable).
func (d *diagnosis) statusOf(name string) *status {
	if d.preFilter != nil {
		return d.preFilter
	}
	for _, ns := range d.nodes {
		if ns.n.name == name {
			return ns.s
		}
	}
	return d.absent
}

// terminatingByPreemption tells whether a pod is being deleted because a
// scheduler preempted it.
func terminatingByPreemption(p *corev1.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			return c.Status == corev1.ConditionTrue && c.Reason == corev1.PodReasonPreemptionByScheduler
		}
	}
	return false
}

func numPreemptionCandidates(n int) int {
	return min(max(n*minCandidateNodesPercentage/100, minCandidateNodesAbsolute), n)
}

var statusNoVictims = &status{codeUnresolvable, 0, []string{ReasonNoPreemptionVictims}}

// selectVictims finds the fewest pods of lower priority on n whose
// removal lets the pod in: all of them go, then each is given back, most
// important first, if the pod still fits. It returns the rejection when
// the pod does not fit even without them.
func (s *Scheduler) selectVictims(st *cycleState, n *nodeInfo) ([]*podInfo, *status) {
	var potential []*podInfo
	for _, p := range n.pods {
		if p.priority < st.pi.priority {
			potential = append(potential, p)
		}
	}
	if len(potential) == 0 {
		return nil, statusNoVictims
	}
	without := n.clone()
	for _, v := range potential {
		without.removePod(v)
	}
	if rejected := s.filterWithNominated(st, without); rejected != nil {
		return nil, rejected
	}
	now := s.now()
	slices.SortFunc(potential, func(a, b *podInfo) int { return compareImportance(a, b, now) })
	var victims []*podInfo
	for _, v := range potential {
		without.addPod(v)
		if s.filterWithNominated(st, without) != nil {
			without.removePod(v)
			victims = append(victims, v)
		}
	}
	return victims, nil
}

// compareImportance orders pods most important first, as kube's
// MoreImportantPod: higher priority, then the longer running; the name
// breaks the remaining ties so that the choice is deterministic.
func compareImportance(a, b *podInfo, now time.Time) int {
	if a.priority != b.priority {
		return cmp.Compare(b.priority, a.priority)
	}
	if c := startTime(a.pod, now).Compare(startTime(b.pod, now)); c != 0 {
		return c
	}
	return cmp.Compare(podKey(a.pod.Namespace, a.pod.Name), podKey(b.pod.Namespace, b.pod.Name))
}

// startTime is when the pod started, or now if it has not.
func startTime(p *corev1.Pod, now time.Time) time.Time {
	if p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return now
}

// pickCandidate chooses the node to preempt on as kube does, each
// criterion breaking the ties of the one before: the lowest highest
// victim priority, the lowest sum of victim priorities, the fewest
// victims, the latest start among the highest-priority victims, then the
// first candidate found.
func pickCandidate(cands []candidate, now time.Time) candidate {
	scores := []func(c candidate) int64{
		func(c candidate) int64 { return -int64(c.victims[0].priority) },
		func(c candidate) int64 {
			var sum int64
			for _, v := range c.victims {
				// Offset so that negative priorities still add up.
				sum += int64(v.priority) + math.MaxInt32 + 1
			}
			return -sum
		},
		func(c candidate) int64 { return -int64(len(c.victims)) },
		func(c candidate) int64 {
			top := c.victims[0].priority
			earliest := startTime(c.victims[0].pod, now)
			for _, v := range c.victims[1:] {
				if v.priority == top {
					if t := startTime(v.pod, now); t.Before(earliest) {
						earliest = t
					}
				}
			}
			return earliest.UnixNano()
		},
	}
	for _, score := range scores {
		if len(cands) == 1 {
			break
		}
		best := int64(math.MinInt64)
		var kept []candidate
		for _, c := range cands {
			switch v := score(c); {
			case v > best:
				best, kept = v, append(kept[:0], c)
			case v == best:
				kept = append(kept, c)
			}
		}
		cands = kept
	}
	return cands[0]
}

// filterWithNominated filters n for the pod as if the pods nominated to n
// that are at least as important were already there, then as it is: the
// pod must pass both (kube's RunFilterPluginsWithNominatedPods).
func (s *Scheduler) filterWithNominated(st *cycleState, n *nodeInfo) *status {
	if noms := s.nominatedOn[n.name]; len(noms) > 0 {
		var with *nodeInfo
		for uid, p := range noms {
			if uid == st.pi.pod.UID || p.priority < st.pi.priority {
				continue
			}
			if with == nil {
				with = n.clone()
			}
			with.addPod(p)
		}
		if with != nil {
			if rejected := filter(st, with); rejected != nil {
				return rejected
			}
		}
	}
	return filter(st, n)
}

// nominate records that pi is to run on node (kube's nominator); an empty
// node forgets the nomination. The caller holds s.mu.
func (s *Scheduler) nominate(pi *podInfo, node string) {
	uid := pi.pod.UID
	if cur, ok := s.nominated[uid]; ok {
		if noms := s.nominatedOn[cur]; noms != nil {
			delete(noms, uid)
			if len(noms) == 0 {
				delete(s.nominatedOn, cur)
			}
		}
		delete(s.nominated, uid)
	}
	if node == "" {
		return
	}
	if s.nominated == nil {
		s.nominated = map[types.UID]string{}
		s.nominatedOn = map[string]map[types.UID]*podInfo{}
	}
	s.nominated[uid] = node
	if s.nominatedOn[node] == nil {
		s.nominatedOn[node] = map[types.UID]*podInfo{}
	}
	s.nominatedOn[node][uid] = pi
}

// forgetNomination drops a pod's nomination. The caller holds s.mu.
func (s *Scheduler) forgetNomination(pod *corev1.Pod) {
	if _, ok := s.nominated[pod.UID]; ok {
		s.nominate(&podInfo{pod: pod}, "")
	}
}

// updateNomination follows a pending pod's status.nominatedNodeName. A
// nomination this scheduler made is kept while the pod's updates do not
// carry one yet (its status write may be in flight), as kube's nominator
// does. The caller holds s.mu.
func (s *Scheduler) updateNomination(old, pod *corev1.Pod) {
	node := pod.Status.NominatedNodeName
	if node == "" && (old == nil || old.Status.NominatedNodeName == "") {
		node = s.nominated[pod.UID]
	}
	if node == "" {
		s.forgetNomination(pod)
		return
	}
	s.nominate(newPodInfo(pod), node)
}

// lowerNominated takes away the nominations to node of pods less
// important than pi, which may no longer fit there, and returns those
// pods. The caller holds s.mu.
func (s *Scheduler) lowerNominated(node string, pi *podInfo) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range s.nominatedOn[node] {
		if p.priority < pi.priority {
			out = append(out, p.pod)
		}
	}
	for _, p := range out {
		s.forgetNomination(p)
	}
	return out
}

func (s *Scheduler) now() time.Time {
	if s.cfg.Clock == nil {
		return time.Now()
	}
	return s.cfg.Clock.Now()
}

// preempt evicts the victims of preemptor on node, and clears the
// nominations of the pods of lower priority it displaced there. A victim
// already gone is skipped; errors are logged: the preemptor is retried
// either way.
func (s *Scheduler) preempt(ctx context.Context, preemptor *corev1.Pod, node string, victims []*corev1.Pod, displaced []*corev1.Pod) {
	for _, v := range victims {
		if v.DeletionTimestamp != nil {
			// Graceful deletion has begun: nothing more to ask.
			continue
		}
		if err := s.preemptPod(ctx, preemptor, node, v); err != nil && ctx.Err() == nil {
			s.log.Error("preemption failed", "preemptor", podKey(preemptor.Namespace, preemptor.Name),
				"victim", podKey(v.Namespace, v.Name), "node", node, "err", err)
		}
	}
	for _, p := range displaced {
		if p.Status.NominatedNodeName == "" {
			continue
		}
		next := p.Status.DeepCopy()
		next.NominatedNodeName = ""
		if err := s.patchPodStatus(ctx, p, next); err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) {
			s.log.Error("clear nominated node", "pod", podKey(p.Namespace, p.Name), "err", err)
		}
	}
}

// preemptPod marks victim as disrupted (DisruptionTarget=True, reason
// PreemptionByScheduler), deletes it and records the Preempted event, as
// kube-scheduler does. A victim found gone is not an error.
func (s *Scheduler) preemptPod(ctx context.Context, preemptor *corev1.Pod, node string, victim *corev1.Pod) error {
	cond := corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonPreemptionByScheduler,
		Message:            fmt.Sprintf("%s: preempting to accommodate a higher priority pod", cmp.Or(preemptor.Spec.SchedulerName, s.cfg.SchedulerName)),
		ObservedGeneration: victim.Generation,
	}
	next := victim.Status.DeepCopy()
	if setCondition(next, cond, metav1.NewTime(s.now())) {
		if err := s.patchPodStatus(ctx, victim, next); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("add DisruptionTarget condition to pod %s/%s: %w", victim.Namespace, victim.Name, err)
		}
	}
	err := s.client.CoreV1().Pods(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(victim.UID))})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		// Gone, or another pod by that name now.
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete pod %s/%s: %w", victim.Namespace, victim.Name, err)
	}
	s.recorder.Eventf(victim, corev1.EventTypeNormal, EventPreempted, "Preempted by pod %v on node %v", preemptor.UID, node)
	return nil
}

// patchPodStatus sends the change from pod's status to next as a
// strategic merge patch of pods/status, as kube's PatchPodStatus.
func (s *Scheduler) patchPodStatus(ctx context.Context, pod *corev1.Pod, next *corev1.PodStatus) error {
	oldData, err := json.Marshal(corev1.Pod{Status: pod.Status})
	if err != nil {
		return err
	}
	newData, err := json.Marshal(corev1.Pod{Status: *next})
	if err != nil {
		return err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, &corev1.Pod{})
	if err != nil {
		return fmt.Errorf("patch for pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if string(patch) == "{}" {
		return nil
	}
	_, err = s.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}
