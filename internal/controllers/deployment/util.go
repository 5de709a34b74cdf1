package deployment

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/dump"
)

// Annotations the controller keeps on ReplicaSets (and the revision on the
// Deployment), as kube names them.
const (
	// RevisionAnnotation is the rollout sequence number of a ReplicaSet.
	RevisionAnnotation = "deployment.kubernetes.io/revision"
	// RevisionHistoryAnnotation lists the earlier revisions a ReplicaSet
	// served (when a rollback made an old one new again).
	RevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	// DesiredReplicasAnnotation is spec.replicas of the Deployment when it
	// last sized the ReplicaSet: it tells scaling events from rollouts.
	DesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	// MaxReplicasAnnotation is spec.replicas + maxSurge at that time: the
	// base of proportional scaling.
	MaxReplicasAnnotation = "deployment.kubernetes.io/max-replicas"
)

// Condition reasons, as kube reports them.
const (
	// ReasonReplicaSetUpdated (Progressing=True): a ReplicaSet was scaled
	// or its pods became ready or available.
	ReasonReplicaSetUpdated = "ReplicaSetUpdated"
	// ReasonReplicaSetCreateError (Progressing=False): the new ReplicaSet
	// could not be created.
	ReasonReplicaSetCreateError = "ReplicaSetCreateError"
	// ReasonNewReplicaSetCreated (Progressing=True): a new ReplicaSet was
	// created.
	ReasonNewReplicaSetCreated = "NewReplicaSetCreated"
	// ReasonFoundNewReplicaSet (Progressing=True): an existing ReplicaSet
	// was found to match the template.
	ReasonFoundNewReplicaSet = "FoundNewReplicaSet"
	// ReasonNewReplicaSetAvailable (Progressing=True): the rollout is
	// complete.
	ReasonNewReplicaSetAvailable = "NewReplicaSetAvailable"
	// ReasonProgressDeadlineExceeded (Progressing=False): no progress within
	// progressDeadlineSeconds.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonDeploymentPaused (Progressing=Unknown): spec.paused was set.
	ReasonDeploymentPaused = "DeploymentPaused"
	// ReasonDeploymentResumed (Progressing=Unknown): spec.paused was
	// cleared.
	ReasonDeploymentResumed = "DeploymentResumed"
	// ReasonMinimumReplicasAvailable (Available=True).
	ReasonMinimumReplicasAvailable = "MinimumReplicasAvailable"
	// ReasonMinimumReplicasUnavailable (Available=False).
	ReasonMinimumReplicasUnavailable = "MinimumReplicasUnavailable"
)

// maxRevHistoryLengthInChars bounds the revision-history annotation.
const maxRevHistoryLengthInChars = 2000

// PodTemplateHash is the pod-template-hash of a template, computed as
// kube-controller-manager computes it (controller.ComputeHash): FNV-1a
// (32 bits) over the template's deep-hash rendering (k8s.io/utils/dump's
// ForHash, a spew dump), then, if collisionCount is set, over its value as
// eight little-endian bytes (four used), the sum's decimal digits encoded
// with rand.SafeEncodeString. Because the rendering lists every field of
// the Go types, the same template hashes the same on a cluster whose
// kube-controller-manager is built on the same k8s.io/api version.
func PodTemplateHash(template *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(*template))
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		h.Write(b)
	}
	return rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}

func replicas(r *int32) int32 {
	if r == nil {
		return 0
	}
	return *r
}

// newCondition is a deployment condition stamped with now.
func newCondition(now time.Time, t appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason, message string) appsv1.DeploymentCondition {
	ts := metav1.NewTime(now)
	return appsv1.DeploymentCondition{Type: t, Status: status, LastUpdateTime: ts, LastTransitionTime: ts, Reason: reason, Message: message}
}

// getCondition returns a copy of the condition of type t, or nil.
func getCondition(status appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			c := status.Conditions[i]
			return &c
		}
	}
	return nil
}

// setCondition sets cond unless a condition of its type with the same
// status and reason is there already; the transition time is kept while
// the status is unchanged. The condition moves to the end of the list, as
// kube's does.
func setCondition(status *appsv1.DeploymentStatus, cond appsv1.DeploymentCondition) {
	cur := getCondition(*status, cond.Type)
	if cur != nil && cur.Status == cond.Status && cur.Reason == cond.Reason {
		return
	}
	if cur != nil && cur.Status == cond.Status {
		cond.LastTransitionTime = cur.LastTransitionTime
	}
	status.Conditions = append(filterOutCondition(status.Conditions, cond.Type), cond)
}

func removeCondition(status *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) {
	status.Conditions = filterOutCondition(status.Conditions, t)
}

func filterOutCondition(conds []appsv1.DeploymentCondition, t appsv1.DeploymentConditionType) []appsv1.DeploymentCondition {
	var out []appsv1.DeploymentCondition
	for _, c := range conds {
		if c.Type != t {
			out = append(out, c)
		}
	}
	return out
}

// replicaSetToDeploymentCondition promotes a ReplicaSet's failure
// condition to its Deployment.
func replicaSetToDeploymentCondition(c appsv1.ReplicaSetCondition) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{
		Type:               appsv1.DeploymentConditionType(c.Type),
		Status:             c.Status,
		LastTransitionTime: c.LastTransitionTime,
		LastUpdateTime:     c.LastTransitionTime,
		Reason:             c.Reason,
		Message:            c.Message,
	}
}

// setDeploymentRevision sets the revision annotation of d; it reports
// whether it changed.
func setDeploymentRevision(d *appsv1.Deployment, revision string) bool {
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	if d.Annotations[RevisionAnnotation] == revision {
		return false
	}
	d.Annotations[RevisionAnnotation] = revision
	return true
}

// revision is the revision annotation of an object; a missing one is 0.
func revision(m metav1.Object) (int64, error) {
	v, ok := m.GetAnnotations()[RevisionAnnotation]
	if !ok {
		return 0, nil
	}
	return strconv.ParseInt(v, 10, 64)
}

// maxRevision is the highest revision among the ReplicaSets, skipping the
// ones whose annotation does not parse.
func maxRevision(rss []*appsv1.ReplicaSet) int64 {
	var highest int64
	for _, rs := range rss {
		if v, err := revision(rs); err == nil && v > highest {
			highest = v
		}
	}
	return highest
}

// annotationsToSkip are the Deployment annotations never copied to its
// ReplicaSets.
var annotationsToSkip = map[string]bool{
	corev1.LastAppliedConfigAnnotation: true,
	RevisionAnnotation:                 true,
	RevisionHistoryAnnotation:          true,
	DesiredReplicasAnnotation:          true,
	MaxReplicasAnnotation:              true,
	appsv1.DeprecatedRollbackTo:        true,
}

// copyDeploymentAnnotations copies d's annotations (but the skipped ones)
// to rs and reports whether rs changed.
func copyDeploymentAnnotations(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	changed := false
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	for k, v := range d.Annotations {
		if annotationsToSkip[k] {
			continue
		}
		if rs.Annotations[k] == v {
			continue
		}
		rs.Annotations[k] = v
		changed = true
	}
	return changed
}

// setNewReplicaSetAnnotations brings the new ReplicaSet's annotations up to
// date: d's annotations, the revision (raised to newRevision if lower,
// remembering the old one in the revision history) and, for a ReplicaSet
// about to be created, the replica annotations. It reports a change.
func setNewReplicaSetAnnotations(d *appsv1.Deployment, rs *appsv1.ReplicaSet, newRevision string, exists bool) bool {
	changed := copyDeploymentAnnotations(d, rs)
	oldRevision, had := rs.Annotations[RevisionAnnotation]
	oldRev, err := strconv.ParseInt(oldRevision, 10, 64)
	if err != nil {
		if oldRevision != "" {
			return false
		}
		oldRev = 0
	}
	newRev, err := strconv.ParseInt(newRevision, 10, 64)
	if err != nil {
		return false
	}
	if oldRev < newRev {
		rs.Annotations[RevisionAnnotation] = newRevision
		changed = true
	}
	if had && oldRev < newRev {
		history := rs.Annotations[RevisionHistoryAnnotation]
		old := strings.Split(history, ",")
		if len(old[0]) == 0 {
			rs.Annotations[RevisionHistoryAnnotation] = oldRevision
		} else {
			total := len(history) + len(oldRevision) + 1
			start := 0
			for total > maxRevHistoryLengthInChars && start < len(old) {
				total -= len(old[start]) + 1
				start++
			}
			if total <= maxRevHistoryLengthInChars {
				rs.Annotations[RevisionHistoryAnnotation] = strings.Join(append(old[start:], oldRevision), ",")
			}
		}
	}
	if !exists && setReplicasAnnotations(rs, replicas(d.Spec.Replicas), replicas(d.Spec.Replicas)+maxSurge(d)) {
		changed = true
	}
	return changed
}

// setReplicasAnnotations sets the desired- and max-replicas annotations and
// reports a change.
func setReplicasAnnotations(rs *appsv1.ReplicaSet, desired, max int32) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	changed := false
	if s := strconv.Itoa(int(desired)); rs.Annotations[DesiredReplicasAnnotation] != s {
		rs.Annotations[DesiredReplicasAnnotation] = s
		changed = true
	}
	if s := strconv.Itoa(int(max)); rs.Annotations[MaxReplicasAnnotation] != s {
		rs.Annotations[MaxReplicasAnnotation] = s
		changed = true
	}
	return changed
}

func replicasAnnotationsNeedUpdate(rs *appsv1.ReplicaSet, desired, max int32) bool {
	return rs.Annotations[DesiredReplicasAnnotation] != strconv.Itoa(int(desired)) ||
		rs.Annotations[MaxReplicasAnnotation] != strconv.Itoa(int(max))
}

func intAnnotation(rs *appsv1.ReplicaSet, key string) (int32, bool) {
	v, ok := rs.Annotations[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

func isRollingUpdate(d *appsv1.Deployment) bool {
	return d.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType
}

// resolveFenceposts turns maxSurge and maxUnavailable into numbers of pods
// for desired replicas: a percentage of surge rounds up, of unavailability
// down; when both come to zero, one pod may be unavailable (validation
// refuses both zero, but rounding can get there).
func resolveFenceposts(maxSurge, maxUnavailable *intstr.IntOrString, desired int32) (int32, int32, error) {
	surge, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(maxSurge, intstr.FromInt32(0)), int(desired), true)
	if err != nil {
		return 0, 0, err
	}
	unavailable, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(maxUnavailable, intstr.FromInt32(0)), int(desired), false)
	if err != nil {
		return 0, 0, err
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return int32(surge), int32(unavailable), nil
}

// maxUnavailable is how many of d's pods a rolling update may have
// unavailable (never more than its replicas).
func maxUnavailable(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) || replicas(d.Spec.Replicas) == 0 || d.Spec.Strategy.RollingUpdate == nil {
		return 0
	}
	_, unavailable, _ := resolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, replicas(d.Spec.Replicas))
	return min(unavailable, replicas(d.Spec.Replicas))
}

// maxSurge is how many pods above its replicas a rolling update may run.
func maxSurge(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) || d.Spec.Strategy.RollingUpdate == nil {
		return 0
	}
	surge, _, _ := resolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, replicas(d.Spec.Replicas))
	return surge
}

// proportion estimates how many replicas rs gains (or loses, negative)
// when toAdd replicas are spread over the active ReplicaSets, added of
// them already spread.
func proportion(rs *appsv1.ReplicaSet, d *appsv1.Deployment, toAdd, added int32) int32 {
	if rs == nil || replicas(rs.Spec.Replicas) == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	fraction := replicaSetFraction(rs, d)
	allowed := toAdd - added
	if toAdd > 0 {
		// Scaling up never adds more than allowed.
		return min(fraction, allowed)
	}
	// Scaling down never removes more than allowed.
	return max(fraction, allowed)
}

// replicaSetFraction is rs's share of d's new size, from the size d had
// when it last sized rs (the max-replicas annotation).
func replicaSetFraction(rs *appsv1.ReplicaSet, d *appsv1.Deployment) int32 {
	if replicas(d.Spec.Replicas) == 0 {
		return -replicas(rs.Spec.Replicas)
	}
	deploymentReplicas := replicas(d.Spec.Replicas) + maxSurge(d)
	annotated, ok := intAnnotation(rs, MaxReplicasAnnotation)
	if !ok {
		// Without the annotation, the Deployment's current size: not exact,
		// but the min/max in proportion keep the result within bounds.
		annotated = d.Status.Replicas
	}
	if annotated == 0 {
		return 0
	}
	newSize := float64(replicas(rs.Spec.Replicas)*deploymentReplicas) / float64(annotated)
	return int32(math.Round(newSize)) - replicas(rs.Spec.Replicas)
}

// equalIgnoreHash compares two pod templates, ignoring the
// pod-template-hash label.
func equalIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	delete(b.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	return apiequality.Semantic.DeepEqual(a, b)
}

// findNewReplicaSet returns the ReplicaSet whose template is d's (the
// oldest, should there be several), or nil. It sorts rsList.
func findNewReplicaSet(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	sort.Sort(byCreationTimestamp(rsList))
	for _, rs := range rsList {
		if equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			return rs
		}
	}
	return nil
}

// findOldReplicaSets returns the ReplicaSets other than the new one: those
// with replicas, and all of them.
func findOldReplicaSets(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) ([]*appsv1.ReplicaSet, []*appsv1.ReplicaSet) {
	newRS := findNewReplicaSet(d, rsList)
	var active, all []*appsv1.ReplicaSet
	for _, rs := range rsList {
		if newRS != nil && rs.UID == newRS.UID {
			continue
		}
		all = append(all, rs)
		if replicas(rs.Spec.Replicas) != 0 {
			active = append(active, rs)
		}
	}
	return active, all
}

// findActiveOrLatest returns the only ReplicaSet with replicas, or, with
// none, the newest one; nil when several have replicas.
func findActiveOrLatest(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	if newRS == nil && len(oldRSs) == 0 {
		return nil
	}
	sort.Sort(sort.Reverse(byCreationTimestamp(oldRSs)))
	active := filterActive(append(oldRSs[:len(oldRSs):len(oldRSs)], newRS))
	switch len(active) {
	case 0:
		if newRS != nil {
			return newRS
		}
		return oldRSs[0]
	case 1:
		return active[0]
	default:
		return nil
	}
}

// filterActive keeps the non-nil ReplicaSets with replicas.
func filterActive(rss []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range rss {
		if rs != nil && replicas(rs.Spec.Replicas) > 0 {
			out = append(out, rs)
		}
	}
	return out
}

func sumReplicas(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += replicas(rs.Spec.Replicas)
		}
	}
	return n
}

func sumStatus(rss []*appsv1.ReplicaSet, f func(*appsv1.ReplicaSetStatus) int32) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += f(&rs.Status)
		}
	}
	return n
}

func actualReplicas(s *appsv1.ReplicaSetStatus) int32    { return s.Replicas }
func readyReplicas(s *appsv1.ReplicaSetStatus) int32     { return s.ReadyReplicas }
func availableReplicas(s *appsv1.ReplicaSetStatus) int32 { return s.AvailableReplicas }

// terminatingReplicas sums the ReplicaSets' terminating pods; it is nil
// when a ReplicaSet its controller has synced does not report the number.
func terminatingReplicas(rss []*appsv1.ReplicaSet) *int32 {
	var n int32
	for _, rs := range rss {
		switch {
		case rs == nil:
		case rs.Status.ObservedGeneration == 0 && rs.Status.TerminatingReplicas == nil:
			// Never synced: it has no terminating pods to count.
		case rs.Status.TerminatingReplicas == nil:
			return nil
		default:
			n += *rs.Status.TerminatingReplicas
		}
	}
	return &n
}

// isSaturated: the new ReplicaSet has all d's replicas, available, and
// both agree on the number.
func isSaturated(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	if rs == nil {
		return false
	}
	desired, err := strconv.Atoi(rs.Annotations[DesiredReplicasAnnotation])
	if err != nil {
		return false
	}
	want := replicas(d.Spec.Replicas)
	return replicas(rs.Spec.Replicas) == want && int32(desired) == want && rs.Status.AvailableReplicas == want
}

// deploymentComplete: every desired replica is updated and available, no
// old one runs, and the status is of the current generation.
func deploymentComplete(d *appsv1.Deployment, s *appsv1.DeploymentStatus) bool {
	want := replicas(d.Spec.Replicas)
	return s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want && s.ObservedGeneration >= d.Generation
}

// deploymentProgressing: compared with d's recorded status, new pods were
// created, old ones removed, or pods became ready or available.
func deploymentProgressing(d *appsv1.Deployment, s *appsv1.DeploymentStatus) bool {
	old := d.Status
	oldOld := old.Replicas - old.UpdatedReplicas
	newOld := s.Replicas - s.UpdatedReplicas
	return s.UpdatedReplicas > old.UpdatedReplicas || newOld < oldOld ||
		s.ReadyReplicas > old.ReadyReplicas || s.AvailableReplicas > old.AvailableReplicas
}

func hasProgressDeadline(d *appsv1.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

func hasRevisionHistoryLimit(d *appsv1.Deployment) bool {
	return d.Spec.RevisionHistoryLimit != nil && *d.Spec.RevisionHistoryLimit != math.MaxInt32
}

// deploymentTimedOut: the Progressing condition (in s) has not been updated
// for longer than progressDeadlineSeconds, or already says it timed out.
func deploymentTimedOut(d *appsv1.Deployment, s *appsv1.DeploymentStatus, now time.Time) bool {
	if !hasProgressDeadline(d) {
		return false
	}
	cond := getCondition(*s, appsv1.DeploymentProgressing)
	if cond == nil {
		return false
	}
	// A completed rollout is not estimated again: a resync may come before
	// the cache shows the condition of a new ReplicaSet.
	if cond.Reason == ReasonNewReplicaSetAvailable {
		return false
	}
	if cond.Reason == ReasonProgressDeadlineExceeded {
		return true
	}
	deadline := cond.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second)
	return deadline.Before(now)
}

// newRSNewReplicas is the size the new ReplicaSet may have now: with
// RollingUpdate, as many more as the surge allows, up to d's replicas;
// with Recreate, d's replicas.
func newRSNewReplicas(d *appsv1.Deployment, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (int32, error) {
	switch d.Spec.Strategy.Type {
	case appsv1.RollingUpdateDeploymentStrategyType:
		var surgeValue *intstr.IntOrString
		if d.Spec.Strategy.RollingUpdate != nil {
			surgeValue = d.Spec.Strategy.RollingUpdate.MaxSurge
		}
		surge, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(surgeValue, intstr.FromInt32(0)), int(replicas(d.Spec.Replicas)), true)
		if err != nil {
			return 0, fmt.Errorf("deployment %s/%s: maxSurge: %w", d.Namespace, d.Name, err)
		}
		current := sumReplicas(allRSs)
		maxTotal := replicas(d.Spec.Replicas) + int32(surge)
		if current >= maxTotal {
			return replicas(newRS.Spec.Replicas), nil
		}
		up := min(maxTotal-current, replicas(d.Spec.Replicas)-replicas(newRS.Spec.Replicas))
		return replicas(newRS.Spec.Replicas) + up, nil
	case appsv1.RecreateDeploymentStrategyType:
		return replicas(d.Spec.Replicas), nil
	default:
		return 0, fmt.Errorf("deployment type %v isn't supported", d.Spec.Strategy.Type)
	}
}

// byCreationTimestamp orders ReplicaSets oldest first, then by name.
type byCreationTimestamp []*appsv1.ReplicaSet

func (o byCreationTimestamp) Len() int      { return len(o) }
func (o byCreationTimestamp) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o byCreationTimestamp) Less(i, j int) bool {
	if o[i].CreationTimestamp.Equal(&o[j].CreationTimestamp) {
		return o[i].Name < o[j].Name
	}
	return o[i].CreationTimestamp.Before(&o[j].CreationTimestamp)
}

// bySizeOlder orders ReplicaSets largest first, older first among equals
// (scaling down takes from old ones first).
type bySizeOlder []*appsv1.ReplicaSet

func (o bySizeOlder) Len() int      { return len(o) }
func (o bySizeOlder) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o bySizeOlder) Less(i, j int) bool {
	if replicas(o[i].Spec.Replicas) == replicas(o[j].Spec.Replicas) {
		return byCreationTimestamp(o).Less(i, j)
	}
	return replicas(o[i].Spec.Replicas) > replicas(o[j].Spec.Replicas)
}

// bySizeNewer orders ReplicaSets largest first, newer first among equals
// (scaling up gives to new ones first).
type bySizeNewer []*appsv1.ReplicaSet

func (o bySizeNewer) Len() int      { return len(o) }
func (o bySizeNewer) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o bySizeNewer) Less(i, j int) bool {
	if replicas(o[i].Spec.Replicas) == replicas(o[j].Spec.Replicas) {
		return byCreationTimestamp(o).Less(j, i)
	}
	return replicas(o[i].Spec.Replicas) > replicas(o[j].Spec.Replicas)
}

// byRevision orders ReplicaSets by revision, then by age.
type byRevision []*appsv1.ReplicaSet

func (o byRevision) Len() int      { return len(o) }
func (o byRevision) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o byRevision) Less(i, j int) bool {
	r1, _ := revision(o[i])
	r2, _ := revision(o[j])
	if r1 == r2 {
		return byCreationTimestamp(o).Less(i, j)
	}
	return r1 < r2
}
