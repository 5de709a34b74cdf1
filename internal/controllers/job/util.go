package job

import (
	"sort"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// isFinishedJob tells whether the Job has its Complete or Failed
// condition.
func isFinishedJob(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// setCondition sets a condition's status, reason and message and reports
// whether anything changed. A False condition the Job never had is not
// added.
func setCondition(s *batchv1.JobStatus, t batchv1.JobConditionType, status corev1.ConditionStatus, reason, message string, now time.Time) bool {
	for i := range s.Conditions {
		c := &s.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status == status {
			return false
		}
		c.Status, c.Reason, c.Message = status, reason, message
		c.LastProbeTime, c.LastTransitionTime = metav1.NewTime(now), metav1.NewTime(now)
		return true
	}
	if status == corev1.ConditionFalse {
		return false
	}
	s.Conditions = append(s.Conditions, batchv1.JobCondition{Type: t, Status: status, Reason: reason, Message: message,
		LastProbeTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)})
	return true
}

func backoffLimit(j *batchv1.Job) *int32 {
	if j.Spec.BackoffLimit == nil {
		return new(int32(6))
	}
	return j.Spec.BackoffLimit
}

// pastBackoffLimitOnFailure tells whether the containers of an OnFailure
// Job's running pods restarted as often as its backoff limit allows: the
// kubelet restarts them in place, so no pod fails.
func pastBackoffLimitOnFailure(j *batchv1.Job, restarts int32) bool {
	if j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		return false
	}
	limit := *backoffLimit(j)
	if limit == 0 {
		return restarts > 0
	}
	return restarts >= limit
}

func pastActiveDeadline(j *batchv1.Job, s *batchv1.JobStatus, now time.Time) bool {
	if j.Spec.ActiveDeadlineSeconds == nil || s.StartTime == nil {
		return false
	}
	return !now.Before(s.StartTime.Add(time.Duration(*j.Spec.ActiveDeadlineSeconds) * time.Second))
}

// successCriteriaMet: as many pods (indexes) succeeded as completions
// asks and none still runs; for a work queue (no completions), one
// succeeded and none still runs.
func successCriteriaMet(j *batchv1.Job, succeeded, active int32) bool {
	if j.Spec.Completions != nil {
		return succeeded >= *j.Spec.Completions && active == 0
	}
	return succeeded > 0 && active == 0
}

func uncountedSucceeded(s *batchv1.JobStatus) []types.UID {
	if s.UncountedTerminatedPods == nil {
		return nil
	}
	return s.UncountedTerminatedPods.Succeeded
}

func uncountedFailed(s *batchv1.JobStatus) []types.UID {
	if s.UncountedTerminatedPods == nil {
		return nil
	}
	return s.UncountedTerminatedPods.Failed
}

func uncountedEmpty(s *batchv1.JobStatus) bool {
	return len(uncountedSucceeded(s)) == 0 && len(uncountedFailed(s)) == 0
}

// setUncounted writes the uncounted pods, sorted; kube keeps an empty
// uncountedTerminatedPods once it has had any.
func setUncounted(s *batchv1.JobStatus, succeeded, failed sets.Set[types.UID]) {
	if s.UncountedTerminatedPods == nil && succeeded.Len() == 0 && failed.Len() == 0 {
		return
	}
	s.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: sets.List(succeeded), Failed: sets.List(failed)}
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// backoffRecord is how many pods of a Job failed since one last
// succeeded, and when the last of them did (kube's backoffRecord).
type backoffRecord struct {
	failuresAfterLastSuccess int32
	lastFailureTime          *time.Time
}

// remaining is how long the Job must still wait before it creates pods:
// podFailureBackOff after the first failure, doubling with each further
// one, up to maxPodFailureBackOff.
func (r backoffRecord) remaining(now time.Time) time.Duration {
	if r.lastFailureTime == nil {
		return 0
	}
	return remainingBackoff(r.failuresAfterLastSuccess, *r.lastFailureTime, now)
}

// backoffStore keeps each Job's backoffRecord.
type backoffStore struct {
	mu      sync.Mutex
	records map[string]backoffRecord
}

func newBackoffStore() *backoffStore { return &backoffStore{records: map[string]backoffRecord{}} }

// newRecord is the Job's record once the pods that finished since the
// last count are: a success resets it, failures after the last success
// count.
func (b *backoffStore) newRecord(key string, succeeded, failed []*corev1.Pod) backoffRecord {
	b.mu.Lock()
	rec := b.records[key]
	b.mu.Unlock()
	sortByFinishedTime(succeeded)
	sortByFinishedTime(failed)
	if len(succeeded) == 0 {
		if len(failed) > 0 {
			rec.failuresAfterLastSuccess += int32(len(failed))
			last := finishedTime(failed[len(failed)-1])
			rec.lastFailureTime = &last
		}
		return rec
	}
	rec = backoffRecord{}
	lastSuccess := finishedTime(succeeded[len(succeeded)-1])
	for i := len(failed) - 1; i >= 0; i-- {
		t := finishedTime(failed[i])
		if !t.After(lastSuccess) {
			break
		}
		if rec.lastFailureTime == nil {
			rec.lastFailureTime = &t
		}
		rec.failuresAfterLastSuccess++
	}
	return rec
}

func (b *backoffStore) update(key string, rec backoffRecord) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.records[key] = rec
}

func (b *backoffStore) forget(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.records, key)
}

func sortByFinishedTime(pods []*corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool { return finishedTime(pods[i]).Before(finishedTime(pods[j])) })
}
