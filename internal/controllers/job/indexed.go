package job

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/storage/names"
)

// Indexed Jobs: every pod carries its completion index (kube's
// indexed_job_utils.go).

const (
	completionIndexEnvName = "JOB_COMPLETION_INDEX"
	unknownCompletionIndex = -1
)

func isIndexedJob(j *batchv1.Job) bool {
	return j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion
}

func hasBackoffLimitPerIndex(j *batchv1.Job) bool {
	return isIndexedJob(j) && j.Spec.BackoffLimitPerIndex != nil
}

func completions(j *batchv1.Job) int {
	if j.Spec.Completions == nil {
		return 0
	}
	return int(*j.Spec.Completions)
}

// interval is a range of completion indexes, both ends included.
type interval struct{ first, last int }

// orderedIntervals are disjoint, non-adjacent intervals in increasing
// order: the form of status.completedIndexes ("1,3-5").
type orderedIntervals []interval

// parseIndexes reads kube's compressed index list, ignoring indexes not
// below completions and malformed parts, as kube does.
func parseIndexes(s string, completions int) orderedIntervals {
	if s == "" {
		return nil
	}
	var out orderedIntervals
	for _, part := range strings.Split(s, ",") {
		bounds := strings.Split(part, "-")
		first, err := strconv.Atoi(bounds[0])
		if err != nil {
			continue
		}
		if first >= completions {
			break
		}
		last := first
		if len(bounds) > 1 {
			if last, err = strconv.Atoi(bounds[1]); err != nil {
				continue
			}
			last = min(last, completions-1)
		}
		if n := len(out); n > 0 && out[n-1].last == first-1 {
			out[n-1].last = last
		} else {
			out = append(out, interval{first, last})
		}
	}
	return out
}

// withIndexes returns the intervals with the given increasing indexes
// added.
func (oi orderedIntervals) withIndexes(ixs []int) orderedIntervals {
	add := make(orderedIntervals, len(ixs))
	for i, ix := range ixs {
		add[i] = interval{ix, ix}
	}
	return oi.merge(add)
}

func (oi orderedIntervals) merge(other orderedIntervals) orderedIntervals {
	var out orderedIntervals
	push := func(iv interval) {
		if n := len(out); n == 0 || iv.first > out[n-1].last+1 {
			out = append(out, iv)
		} else if out[n-1].last < iv.last {
			out[n-1].last = iv.last
		}
	}
	i, j := 0, 0
	for i < len(oi) && j < len(other) {
		if oi[i].first < other[j].first {
			push(oi[i])
			i++
		} else {
			push(other[j])
			j++
		}
	}
	for ; i < len(oi); i++ {
		push(oi[i])
	}
	for ; j < len(other); j++ {
		push(other[j])
	}
	return out
}

// total is the number of indexes.
func (oi orderedIntervals) total() int {
	n := 0
	for _, iv := range oi {
		n += iv.last - iv.first + 1
	}
	return n
}

// String is kube's format: "a-b" for three or more indexes in a row,
// "a,b" for two.
func (oi orderedIntervals) String() string {
	var b strings.Builder
	for _, iv := range oi {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(iv.first))
		if iv.last > iv.first {
			if iv.last == iv.first+1 {
				b.WriteByte(',')
			} else {
				b.WriteByte('-')
			}
			b.WriteString(strconv.Itoa(iv.last))
		}
	}
	return b.String()
}

func (oi orderedIntervals) has(ix int) bool {
	i := sort.Search(len(oi), func(i int) bool { return oi[i].last >= ix })
	return i < len(oi) && oi[i].first <= ix
}

// completionIndex is the pod's index annotation, or unknownCompletionIndex.
func completionIndex(p *corev1.Pod) int {
	v, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		return unknownCompletionIndex
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		return unknownCompletionIndex
	}
	return i
}

// validIndex tells whether the pod of an Indexed Job has an index below
// completions.
func validIndex(j *batchv1.Job, p *corev1.Pod) bool {
	ix := completionIndex(p)
	return ix != unknownCompletionIndex && ix < completions(j)
}

func indexesOf(pods []*corev1.Pod) sets.Set[int] {
	out := sets.New[int]()
	for _, p := range pods {
		if ix := completionIndex(p); ix != unknownCompletionIndex {
			out.Insert(ix)
		}
	}
	return out
}

// firstPendingIndexes returns up to count indexes below completions that
// no active pod runs and that neither succeeded nor failed, lowest first.
// With podReplacementPolicy Failed, the indexes of terminating pods are
// not pending either.
func firstPendingIndexes(jc *syncCtx, count int) []int {
	if count <= 0 {
		return nil
	}
	nonPending := jc.succeededIndexes.withIndexes(sets.List(indexesOf(jc.active)))
	if onlyReplaceFailedPods(jc.job) {
		nonPending = nonPending.withIndexes(sets.List(indexesOf(jc.terminatingPods)))
	}
	nonPending = nonPending.merge(jc.failedIndexes)
	n := completions(jc.job)
	out := make([]int, 0, count)
	candidate := 0
	for _, iv := range nonPending {
		for ; candidate < n && len(out) < count && candidate < iv.first; candidate++ {
			out = append(out, candidate)
		}
		candidate = max(candidate, iv.last+1)
	}
	for ; candidate < n && len(out) < count; candidate++ {
		out = append(out, candidate)
	}
	return out
}

// duplicatedIndexPods returns, of the active pods of an Indexed Job, those
// to delete: pods without a valid index, and for an index run by several
// pods all but the most advanced one. The others are returned as kept.
func duplicatedIndexPods(j *batchv1.Job, pods []*corev1.Pod) (rm, keep []*corev1.Pod) {
	byIndex := map[int][]*corev1.Pod{}
	for _, p := range pods {
		if !validIndex(j, p) {
			rm = append(rm, p)
			continue
		}
		ix := completionIndex(p)
		byIndex[ix] = append(byIndex[ix], p)
	}
	ixs := make([]int, 0, len(byIndex))
	for ix := range byIndex {
		ixs = append(ixs, ix)
	}
	sort.Ints(ixs)
	for _, ix := range ixs {
		same := byIndex[ix]
		sortLeastActiveFirst(same)
		rm = append(rm, same[:len(same)-1]...)
		keep = append(keep, same[len(same)-1])
	}
	return rm, keep
}

// addCompletionIndexEnv gives every container JOB_COMPLETION_INDEX, from
// the pod's completion index label through the downward API, unless it
// sets the variable itself.
func addCompletionIndexEnv(spec *corev1.PodSpec) {
	add := func(c *corev1.Container) {
		for _, e := range c.Env {
			if e.Name == completionIndexEnvName {
				return
			}
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: completionIndexEnvName, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: fmt.Sprintf("metadata.labels['%s']", batchv1.JobCompletionIndexAnnotation)},
		}})
	}
	for i := range spec.InitContainers {
		add(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		add(&spec.Containers[i])
	}
}

// podGenerateNameWithIndex is "<job>-<index>-", the job name cut so that
// the generated name stays within kube's limit.
func podGenerateNameWithIndex(jobName string, index int) string {
	suffix := "-" + strconv.Itoa(index) + "-"
	prefix := jobName + suffix
	if len(prefix) > names.MaxGeneratedNameLength {
		prefix = prefix[:names.MaxGeneratedNameLength-len(suffix)] + suffix
	}
	return prefix
}

// Failures per index (backoffLimitPerIndex).

func annotationInt32(p *corev1.Pod, key string) int32 {
	v, ok := p.Annotations[key]
	if !ok {
		return 0
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 || i > math.MaxInt32 {
		return 0
	}
	return int32(i)
}

// indexFailureCount is the pod's batch.kubernetes.io/job-index-failure-count:
// how many pods of its index failed before it.
func indexFailureCount(p *corev1.Pod) int32 {
	return annotationInt32(p, batchv1.JobIndexFailureCountAnnotation)
}

func indexAbsoluteFailureCount(p *corev1.Pod) int32 {
	return indexFailureCount(p) + annotationInt32(p, batchv1.JobIndexIgnoredFailureCountAnnotation)
}

// newIndexFailureCounts are the failure and ignored-failure counts of the
// pod that replaces failed (nil for an index's first pod).
func newIndexFailureCounts(j *batchv1.Job, failed *corev1.Pod) (int32, int32) {
	if failed == nil {
		return 0, 0
	}
	count, ignored := indexFailureCount(failed), annotationInt32(failed, batchv1.JobIndexIgnoredFailureCountAnnotation)
	if _, countFailed, _ := matchPodFailurePolicy(j.Spec.PodFailurePolicy, failed); countFailed {
		count++
	} else {
		ignored++
	}
	return count, ignored
}

// isIndexFailed tells whether the failed pod marks its index failed: the
// pod failure policy says FailIndex, or the pod's failure counts and its
// index had already failed backoffLimitPerIndex times.
func isIndexFailed(j *batchv1.Job, p *corev1.Pod) bool {
	if !isPodFailed(p, j) {
		return false
	}
	_, countFailed, action := matchPodFailurePolicy(j.Spec.PodFailurePolicy, p)
	if action != nil && *action == batchv1.PodFailurePolicyActionFailIndex {
		return true
	}
	return countFailed && indexFailureCount(p) >= *j.Spec.BackoffLimitPerIndex
}

// podsWithDelayedDeletion returns, per index with no active pod that has
// neither succeeded nor failed, its last failed pod: its tracking
// finalizer stays until the replacement pod exists, which takes over its
// failure count.
func podsWithDelayedDeletion(jc *syncCtx) map[int]*corev1.Pod {
	active := indexesOf(jc.active)
	out := map[int]*corev1.Pod{}
	for _, p := range jc.trackedPods {
		if !isPodFailed(p, jc.job) || !validIndex(jc.job, p) {
			continue
		}
		ix := completionIndex(p)
		if jc.succeededIndexes.has(ix) || jc.failedIndexes.has(ix) || active.Has(ix) {
			continue
		}
		if last, ok := out[ix]; !ok || indexAbsoluteFailureCount(last) <= indexAbsoluteFailureCount(p) && !finishedTime(p).Before(finishedTime(last)) {
			out[ix] = p
		}
	}
	return out
}

// finishedTime is when the pod finished: its containers' last finish, its
// Ready condition turning false, its deletion, or else its creation.
func finishedTime(p *corev1.Pod) time.Time {
	var last *time.Time
	complete := len(p.Status.ContainerStatuses) > 0
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Terminated == nil || cs.State.Terminated.FinishedAt.IsZero() {
			complete = false
			break
		}
		if t := cs.State.Terminated.FinishedAt.Time; last == nil || last.Before(t) {
			last = &t
		}
	}
	if complete && last != nil {
		return *last
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	if p.DeletionTimestamp != nil {
		grace := int64(0)
		if p.DeletionGracePeriodSeconds != nil {
			grace = *p.DeletionGracePeriodSeconds
		}
		return p.DeletionTimestamp.Add(-time.Duration(grace) * time.Second)
	}
	return p.CreationTimestamp.Time
}

// remainingBackoff is how long to wait, after failures failures the last
// of which at last, before the next pod: podFailureBackOff doubled per
// further failure, up to maxPodFailureBackOff.
func remainingBackoff(failures int32, last, now time.Time) time.Duration {
	if failures <= 0 {
		return 0
	}
	d := podFailureBackOff
	for i := int32(1); i < failures; i++ {
		d *= 2
		if d >= maxPodFailureBackOff {
			d = maxPodFailureBackOff
			break
		}
	}
	return max(d-now.Sub(last), 0)
}

// indexesReadyToCreate keeps the indexes whose per-index backoff has
// passed; when none has, it returns the shortest wait.
func indexesReadyToCreate(ixs []int, delayed map[int]*corev1.Pod, now time.Time) ([]int, time.Duration) {
	var ready []int
	var wait time.Duration
	for _, ix := range ixs {
		var left time.Duration
		if p := delayed[ix]; p != nil {
			left = remainingBackoff(indexAbsoluteFailureCount(p)+1, finishedTime(p), now)
		}
		if left == 0 {
			ready = append(ready, ix)
		} else if wait == 0 || left < wait {
			wait = left
		}
	}
	if len(ready) > 0 {
		return ready, 0
	}
	return nil, wait
}

// Pod failure policy (kube's pod_failure_policy.go).

// matchPodFailurePolicy returns, for a failed pod, the FailJob message
// when a FailJob rule matches, whether the failure counts towards the
// backoff limits (not for Ignore), and the matching rule's action.
func matchPodFailurePolicy(policy *batchv1.PodFailurePolicy, p *corev1.Pod) (*string, bool, *batchv1.PodFailurePolicyAction) {
	if policy == nil {
		return nil, true, nil
	}
	for i, rule := range policy.Rules {
		action := rule.Action
		var msg string
		switch {
		case rule.OnExitCodes != nil:
			cs := matchOnExitCodes(&p.Status, rule.OnExitCodes)
			if cs == nil {
				continue
			}
			msg = fmt.Sprintf("Container %s for pod %s/%s failed with exit code %v matching %v rule at index %d",
				cs.Name, p.Namespace, p.Name, cs.State.Terminated.ExitCode, rule.Action, i)
		case rule.OnPodConditions != nil:
			cond := matchOnPodConditions(&p.Status, rule.OnPodConditions)
			if cond == nil {
				continue
			}
			msg = fmt.Sprintf("Pod %s/%s has condition %v matching %v rule at index %d",
				p.Namespace, p.Name, cond.Type, rule.Action, i)
		default:
			continue
		}
		switch action {
		case batchv1.PodFailurePolicyActionIgnore:
			return nil, false, &action
		case batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyActionCount:
			return nil, true, &action
		case batchv1.PodFailurePolicyActionFailJob:
			return &msg, true, &action
		}
	}
	return nil, true, nil
}

func matchOnExitCodes(s *corev1.PodStatus, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *corev1.ContainerStatus {
	if cs := matchingContainer(s.ContainerStatuses, req); cs != nil {
		return cs
	}
	return matchingContainer(s.InitContainerStatuses, req)
}

func matchingContainer(statuses []corev1.ContainerStatus, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *corev1.ContainerStatus {
	for i := range statuses {
		cs := &statuses[i]
		if cs.State.Terminated == nil || cs.State.Terminated.ExitCode == 0 {
			continue
		}
		if req.ContainerName != nil && *req.ContainerName != cs.Name {
			continue
		}
		code := cs.State.Terminated.ExitCode
		in := false
		for _, v := range req.Values {
			if v == code {
				in = true
				break
			}
		}
		switch {
		case req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && in,
			req.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && !in:
			return cs
		}
	}
	return nil
}

func matchOnPodConditions(s *corev1.PodStatus, patterns []batchv1.PodFailurePolicyOnPodConditionsPattern) *corev1.PodCondition {
	for i := range s.Conditions {
		c := &s.Conditions[i]
		for _, pat := range patterns {
			if c.Type == pat.Type && c.Status == pat.Status {
				return c
			}
		}
	}
	return nil
}

// failJobMessage is the FailJob message of the first failed pod a FailJob
// rule matches.
func failJobMessage(j *batchv1.Job, pods []*corev1.Pod) *string {
	if j.Spec.PodFailurePolicy == nil {
		return nil
	}
	for _, p := range pods {
		if isPodFailed(p, j) {
			if msg, _, _ := matchPodFailurePolicy(j.Spec.PodFailurePolicy, p); msg != nil {
				return msg
			}
		}
	}
	return nil
}

// Success policy (kube's success_policy.go).

// matchSuccessPolicy returns kube's message naming the first rule the
// succeeded indexes satisfy.
func matchSuccessPolicy(policy *batchv1.SuccessPolicy, completions int, succeeded orderedIntervals) (string, bool) {
	if policy == nil || len(succeeded) == 0 {
		return "", false
	}
	for i, rule := range policy.Rules {
		if rule.SucceededIndexes != nil {
			required := parseIndexes(*rule.SucceededIndexes, completions)
			if len(required) == 0 {
				continue
			}
			if matchSucceededIndexes(required, succeeded, rule.SucceededCount) {
				return fmt.Sprintf("Matched rules at index %d", i), true
			}
		} else if rule.SucceededCount != nil && succeeded.total() >= int(*rule.SucceededCount) {
			return fmt.Sprintf("Matched rules at index %d", i), true
		}
	}
	return "", false
}

// matchSucceededIndexes: every required index succeeded, or at least
// count of them.
func matchSucceededIndexes(required, succeeded orderedIntervals, count *int32) bool {
	contains := 0
	for _, r := range required {
		for _, s := range succeeded {
			if overlap := min(r.last, s.last) - max(r.first, s.first) + 1; overlap > 0 {
				contains += overlap
			}
		}
	}
	return contains == required.total() || count != nil && contains >= int(*count)
}

// sortLeastActiveFirst orders pods as kube's controller.ActivePods: not
// scheduled before scheduled, pending before unknown before running, not
// ready before ready, ready for less time first, more restarts first,
// newer first.
func sortLeastActiveFirst(pods []*corev1.Pod) {
	phaseRank := map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if (a.Spec.NodeName == "") != (b.Spec.NodeName == "") {
			return a.Spec.NodeName == ""
		}
		if ra, rb := phaseRank[a.Status.Phase], phaseRank[b.Status.Phase]; ra != rb {
			return ra < rb
		}
		if readyA, readyB := isReady(a), isReady(b); readyA != readyB {
			return !readyA
		}
		if ra, rb := maxRestarts(a), maxRestarts(b); ra != rb {
			return ra > rb
		}
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	})
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func maxRestarts(p *corev1.Pod) int32 {
	var n int32
	for _, cs := range p.Status.ContainerStatuses {
		n = max(n, cs.RestartCount)
	}
	return n
}
