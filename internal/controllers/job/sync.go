package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubectl/pkg/util/podutils"

	"minik/internal/controllers"
)

const (
	// burstPods bounds the pods created in one sync.
	burstPods = 500
	// podFailureBackOff is the delay before a failed pod is replaced,
	// doubled with every further failure up to maxPodFailureBackOff.
	podFailureBackOff    = 10 * time.Second
	maxPodFailureBackOff = 10 * time.Minute
)

func labelsEverything() labels.Selector { return labels.Everything() }

// maxUncountedPods bounds the finished pods one sync records and
// releases, as kube's MaxUncountedPods.
const maxUncountedPods = 500

// syncCtx is what one sync knows of a Job and its pods.
type syncCtx struct {
	job *batchv1.Job
	// pods controlled by the Job.
	pods []*corev1.Pod
	// active: running or pending, not being deleted.
	active []*corev1.Pod
	// terminatingPods: being deleted, not finished.
	terminatingPods []*corev1.Pod
	// trackedPods carry the tracking finalizer and have not been counted.
	trackedPods []*corev1.Pod
	ready       int32
	terminating int32
	// restarts of the containers of active pods (for OnFailure Jobs).
	restarts int32
	// succeeded and failed pods (succeeded indexes for an Indexed Job),
	// counted or not yet.
	succeeded, failed int32
	// Indexed Jobs: the indexes that succeeded before this sync and now,
	// the failed indexes (backoffLimitPerIndex), and per index the failed
	// pod whose finalizer waits for its replacement.
	prevSucceededIndexes, succeededIndexes orderedIntervals
	failedIndexes                          orderedIntervals
	delayed                                map[int]*corev1.Pod
	// backoff counts the failures since the last success, these pods
	// included.
	backoff backoffRecord
}

// managedByOther tells whether spec.managedBy hands the Job to another
// controller (kube's JobManagedBy, on in v1.37).
func managedByOther(j *batchv1.Job) bool {
	return j.Spec.ManagedBy != nil && *j.Spec.ManagedBy != batchv1.JobControllerName
}

func onlyReplaceFailedPods(j *batchv1.Job) bool {
	return j.Spec.PodReplacementPolicy != nil && *j.Spec.PodReplacementPolicy == batchv1.Failed
}

// isPodFailed: the pod failed, or (unless only failed pods are replaced)
// is being deleted before it finished.
func isPodFailed(p *corev1.Pod, j *batchv1.Job) bool {
	if p.Status.Phase == corev1.PodFailed {
		return true
	}
	if onlyReplaceFailedPods(j) {
		return false
	}
	return p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded
}

func isSuspended(j *batchv1.Job) bool { return j.Spec.Suspend != nil && *j.Spec.Suspend }

func newCondition(t batchv1.JobConditionType, reason, message string, now time.Time) *batchv1.JobCondition {
	return &batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message,
		LastProbeTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)}
}

func trueCondition(s *batchv1.JobStatus, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range s.Conditions {
		if c := &s.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			out := *c
			return &out
		}
	}
	return nil
}

// sync reconciles one Job, as kube's syncJob. It is never called twice at
// once for a key.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.jobLister.Jobs(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Forget(key)
		c.backoff.forget(key)
		c.written.forget(key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get job %s: %w", key, err)
	}
	if c.written.stale(key, cached) {
		// Our last status write is on its way to the cache, which will
		// queue the Job again.
		return nil
	}
	if managedByOther(cached) {
		// Another controller reconciles it.
		return nil
	}
	job := cached.DeepCopy()
	if isFinishedJob(job) {
		// Pods that finished after the Job did keep nothing from being
		// deleted.
		return c.releaseFinishedPods(ctx, job)
	}
	if m := job.Spec.CompletionMode; m != nil && *m != batchv1.NonIndexedCompletion && *m != batchv1.IndexedCompletion {
		c.recorder.Event(job, corev1.EventTypeWarning, "UnknownCompletionMode", "Skipped Job sync because completion mode is unknown")
		return nil
	}
	selector, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil {
		c.log.Error("job has an invalid selector", "job", key, "err", err)
		return nil
	}
	// Expectations first: a pod created after the listing then waits
	// for the next sync.
	needsManage := c.expectations.Satisfied(key)
	pods, err := c.podsOf(ctx, job, selector)
	if err != nil {
		return err
	}
	jc := c.newSyncCtx(job, pods)
	now := c.clock.Now()
	status := job.Status.DeepCopy()
	suspended := isSuspended(job)
	indexed := isIndexedJob(job)

	// Start, suspend, resume.
	var events []func()
	if suspended {
		if setCondition(status, batchv1.JobSuspended, corev1.ConditionTrue, reasonJobSuspended, "Job suspended", now) {
			// kube (MutableSchedulingDirectivesForSuspendedJobs): a
			// suspended Job has no start time.
			status.StartTime = nil
			events = append(events, func() { c.recorder.Event(job, corev1.EventTypeNormal, ReasonSuspended, "Job suspended") })
		}
	} else {
		if setCondition(status, batchv1.JobSuspended, corev1.ConditionFalse, reasonJobResumed, "Job resumed", now) {
			// Resumed: the active deadline counts from now.
			status.StartTime = nil
			events = append(events, func() { c.recorder.Event(job, corev1.EventTypeNormal, ReasonResumed, "Job resumed") })
		}
		if status.StartTime == nil {
			status.StartTime = &metav1.Time{Time: now}
		}
	}

	// The pods that finished since they were last counted.
	uncountedS := sets.New(uncountedSucceeded(status)...)
	uncountedF := sets.New(uncountedFailed(status)...)
	var newSucceeded, newFailed []*corev1.Pod
	var newCountedFailed int32
	for _, p := range jc.trackedPods {
		if indexed && !validIndex(job, p) {
			continue
		}
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			if !uncountedS.Has(p.UID) {
				newSucceeded = append(newSucceeded, p)
			}
		case isPodFailed(p, job):
			if !uncountedF.Has(p.UID) {
				newFailed = append(newFailed, p)
				if _, counts, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p); counts {
					newCountedFailed++
				}
			}
		}
	}
	jc.succeeded = status.Succeeded + int32(len(newSucceeded)+uncountedS.Len())
	jc.failed = status.Failed + newCountedFailed + int32(uncountedF.Len())
	// Replacements of failed pods back off.
	jc.backoff = c.backoff.newRecord(key, newSucceeded, newFailed)

	// Is the Job finishing? In kube's order: a finishing condition it has
	// already, the pod failure policy, the backoff limit, the active
	// deadline, failed indexes, the success policy.
	finishing := trueCondition(status, batchv1.JobSuccessCriteriaMet)
	if finishing == nil {
		finishing = trueCondition(status, batchv1.JobFailureTarget)
		if finishing == nil {
			if msg := failJobMessage(job, jc.pods); msg != nil {
				finishing = newCondition(batchv1.JobFailureTarget, batchv1.JobReasonPodFailurePolicy, *msg, now)
			}
		}
	}
	if finishing == nil {
		switch {
		case jc.failed > *backoffLimit(job) || pastBackoffLimitOnFailure(job, jc.restarts):
			finishing = newCondition(batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded, messageBackoffLimit, now)
		case !suspended && pastActiveDeadline(job, status, now):
			finishing = newCondition(batchv1.JobFailureTarget, batchv1.JobReasonDeadlineExceeded, messageDeadline, now)
		}
	}
	if indexed {
		c.countIndexes(jc, status)
		if hasBackoffLimitPerIndex(job) {
			if finishing == nil {
				failedN := jc.failedIndexes.total()
				switch {
				case job.Spec.MaxFailedIndexes != nil && failedN > int(*job.Spec.MaxFailedIndexes):
					finishing = newCondition(batchv1.JobFailureTarget, batchv1.JobReasonMaxFailedIndexesExceeded, messageMaxFailedIndexes, now)
				case failedN > 0 && failedN+jc.succeededIndexes.total() >= completions(job):
					finishing = newCondition(batchv1.JobFailureTarget, batchv1.JobReasonFailedIndexes, messageFailedIndexes, now)
				}
			}
			jc.delayed = podsWithDelayedDeletion(jc)
		}
		if finishing == nil {
			if msg, met := matchSuccessPolicy(job.Spec.SuccessPolicy, completions(job), jc.succeededIndexes); met {
				finishing = newCondition(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonSuccessPolicy, msg, now)
			}
		}
	}

	// Create or delete pods.
	active := int32(len(jc.active))
	var manageErr error
	if finishing != nil {
		if !needsManage {
			// Pods may not be in the cache yet: decide once they are,
			// deleting them and releasing them in the same sync.
			finishing = nil
		} else {
			// Finishing: no pod may run on.
			deleted, deletedReady, err := c.deletePods(ctx, key, job, jc.active, false)
			manageErr = err
			if deleted != active {
				finishing = nil
			}
			active -= deleted
			jc.terminating += deleted
			jc.ready -= deletedReady
		}
	} else {
		if needsManage && job.DeletionTimestamp == nil {
			active, manageErr = c.manageJob(ctx, key, jc, now)
		}
		if successCriteriaMet(job, jc.succeeded, active) {
			finishing = newCondition(batchv1.JobSuccessCriteriaMet, reasonCompletionsReached, messageCompletionsReached, now)
		}
	}
	status.Active = active
	status.Ready = &jc.ready
	status.Terminating = &jc.terminating

	// Record the pods that finished as uncounted (succeeded indexes in
	// completedIndexes), persist that, then release them.
	reachedMax := false
	var release []*corev1.Pod
	var newSucceededIndexes []int
	for _, p := range jc.trackedPods {
		failed := isPodFailed(p, job)
		if !c.canRemoveFinalizer(jc, finishing, p, failed) {
			continue
		}
		release = append(release, p)
		switch {
		case p.Status.Phase == corev1.PodSucceeded && !uncountedF.Has(p.UID):
			if indexed {
				if ix := completionIndex(p); validIndex(job, p) && !jc.prevSucceededIndexes.has(ix) {
					newSucceededIndexes = append(newSucceededIndexes, ix)
				}
			} else {
				uncountedS.Insert(p.UID)
			}
		case failed || finishing != nil && finishing.Type != batchv1.JobSuccessCriteriaMet:
			// When the Job fails, every pod that has not finished counts
			// as failed.
			if !uncountedF.Has(p.UID) && (!indexed || validIndex(job, p)) {
				if _, counts, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p); counts {
					uncountedF.Insert(p.UID)
				}
			}
		}
		if len(newSucceededIndexes)+uncountedS.Len()+uncountedF.Len() >= maxUncountedPods {
			reachedMax = true
			break
		}
	}
	setUncounted(status, uncountedS, uncountedF)
	if indexed {
		sort.Ints(newSucceededIndexes)
		jc.succeededIndexes = jc.succeededIndexes.withIndexes(newSucceededIndexes)
		status.CompletedIndexes = jc.succeededIndexes.String()
		status.Succeeded = int32(jc.succeededIndexes.total())
		status.FailedIndexes = nil
		if hasBackoffLimitPerIndex(job) {
			status.FailedIndexes = new(jc.failedIndexes.String())
		}
	}
	// The interim condition goes first, the final one once every pod is
	// counted.
	var final *batchv1.JobCondition
	if finishing != nil {
		if trueCondition(status, finishing.Type) == nil {
			status.Conditions = append(status.Conditions, *finishing)
		}
		switch finishing.Type {
		case batchv1.JobFailureTarget:
			final = newCondition(batchv1.JobFailed, finishing.Reason, finishing.Message, now)
		case batchv1.JobSuccessCriteriaMet:
			final = newCondition(batchv1.JobComplete, finishing.Reason, finishing.Message, now)
		}
	}
	if !apiequality.Semantic.DeepEqual(status, &job.Status) {
		if job, err = c.updateStatus(ctx, job, status); err != nil {
			return errors.Join(manageErr, err)
		}
		status = job.Status.DeepCopy()
		// The finished pods are recorded: they count for the backoff.
		c.backoff.update(key, jc.backoff)
	}
	rmErr := c.countFinished(ctx, status, jc, release)

	// Finish: once every pod is counted and none is terminating.
	if final != nil && !reachedMax && uncountedEmpty(status) && jc.terminating == 0 {
		setCondition(status, final.Type, corev1.ConditionTrue, final.Reason, final.Message, now)
		if final.Type == batchv1.JobComplete {
			status.CompletionTime = &metav1.Time{Time: now}
			events = append(events, func() {
				if job.Spec.Completions != nil && job.Status.Succeeded > *job.Spec.Completions {
					c.recorder.Event(job, corev1.EventTypeWarning, "TooManySucceededPods", "Too many succeeded pods running after completion count reached")
				}
				c.recorder.Event(job, corev1.EventTypeNormal, ReasonCompleted, "Job completed")
			})
		} else {
			events = append(events, func() { c.recorder.Event(job, corev1.EventTypeWarning, final.Reason, final.Message) })
		}
	}
	if !apiequality.Semantic.DeepEqual(status, &job.Status) {
		if job, err = c.updateStatus(ctx, job, status); err != nil {
			return errors.Join(manageErr, rmErr, err)
		}
	}
	for _, e := range events {
		e()
	}
	// Look again when the active deadline passes.
	if finishing == nil && !suspended && job.Spec.ActiveDeadlineSeconds != nil && job.Status.StartTime != nil {
		deadline := job.Status.StartTime.Add(time.Duration(*job.Spec.ActiveDeadlineSeconds) * time.Second)
		c.queue.AddAfter(key, deadline.Sub(now)+10*time.Millisecond)
	}
	if isFinishedJob(job) && job.Spec.TTLSecondsAfterFinished == nil {
		c.backoff.forget(key)
	}
	if reachedMax {
		c.queue.Add(key)
	}
	return errors.Join(manageErr, rmErr)
}

// newSyncCtx sorts the Job's pods. Pods whose finalizer removal is still
// on its way to the cache were counted already and are not tracked.
func (c *Controller) newSyncCtx(job *batchv1.Job, all []*corev1.Pod) *syncCtx {
	jc := &syncCtx{job: job}
	for _, p := range all {
		if !isControlledBy(p, job) {
			continue
		}
		jc.pods = append(jc.pods, p)
		if hasTrackingFinalizer(p) && !c.expectations.finalizerRemovalPending(p.UID) {
			jc.trackedPods = append(jc.trackedPods, p)
		}
		if isFinished(p) {
			continue
		}
		if p.DeletionTimestamp != nil {
			jc.terminatingPods = append(jc.terminatingPods, p)
			continue
		}
		jc.active = append(jc.active, p)
		if podutils.IsPodReady(p) {
			jc.ready++
		}
		for _, st := range p.Status.InitContainerStatuses {
			jc.restarts += st.RestartCount
		}
		for _, st := range p.Status.ContainerStatuses {
			jc.restarts += st.RestartCount
		}
	}
	jc.terminating = int32(len(jc.terminatingPods))
	if isIndexedJob(job) {
		// Indexes are recorded in order.
		sort.SliceStable(jc.trackedPods, func(a, b int) bool {
			return completionIndex(jc.trackedPods[a]) < completionIndex(jc.trackedPods[b])
		})
	}
	return jc
}

// countIndexes computes the succeeded and failed indexes of an Indexed
// Job: those of its status and those of its finished, uncounted pods.
func (c *Controller) countIndexes(jc *syncCtx, status *batchv1.JobStatus) {
	job := jc.job
	n := completions(job)
	jc.prevSucceededIndexes = parseIndexes(status.CompletedIndexes, n)
	succeeded, failed := sets.New[int](), sets.New[int]()
	perIndex := hasBackoffLimitPerIndex(job)
	for _, p := range jc.trackedPods {
		if !validIndex(job, p) {
			continue
		}
		if p.Status.Phase == corev1.PodSucceeded {
			succeeded.Insert(completionIndex(p))
		} else if perIndex && isIndexFailed(job, p) {
			failed.Insert(completionIndex(p))
		}
	}
	jc.succeededIndexes = jc.prevSucceededIndexes.withIndexes(sets.List(succeeded))
	jc.succeeded = int32(jc.succeededIndexes.total())
	if perIndex {
		var prev orderedIntervals
		if status.FailedIndexes != nil {
			prev = parseIndexes(*status.FailedIndexes, n)
		}
		jc.failedIndexes = prev.withIndexes(sets.List(failed))
	}
}

// canRemoveFinalizer: the pod is released when the Job is deleted or
// finishing, when it succeeded, or when it failed, unless it is the
// failed pod of an index whose replacement does not exist yet.
func (c *Controller) canRemoveFinalizer(jc *syncCtx, finishing *batchv1.JobCondition, p *corev1.Pod, failed bool) bool {
	if jc.job.DeletionTimestamp != nil || finishing != nil || p.Status.Phase == corev1.PodSucceeded {
		return true
	}
	if !failed {
		return false
	}
	if ix := completionIndex(p); ix != unknownCompletionIndex && jc.delayed != nil {
		if d, ok := jc.delayed[ix]; ok && d.UID == p.UID {
			return false
		}
	}
	return true
}

// countFinished removes the tracking finalizer of the released pods, then
// moves the uncounted pods that no longer carry it to the counters.
func (c *Controller) countFinished(ctx context.Context, status *batchv1.JobStatus, jc *syncCtx, release []*corev1.Pod) error {
	withFinalizer := sets.New[types.UID]()
	for _, p := range jc.trackedPods {
		withFinalizer.Insert(p.UID)
	}
	errs := make([]error, len(release))
	var wg sync.WaitGroup
	for i, p := range release {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.removeFinalizer(ctx, p)
		}()
	}
	wg.Wait()
	for i, p := range release {
		if errs[i] == nil {
			withFinalizer.Delete(p.UID)
		}
	}
	var keepSucceeded, keepFailed []types.UID
	for _, uid := range uncountedSucceeded(status) {
		if withFinalizer.Has(uid) {
			keepSucceeded = append(keepSucceeded, uid)
		} else {
			status.Succeeded++
		}
	}
	for _, uid := range uncountedFailed(status) {
		if withFinalizer.Has(uid) {
			keepFailed = append(keepFailed, uid)
		} else {
			status.Failed++
		}
	}
	setUncounted(status, sets.New(keepSucceeded...), sets.New(keepFailed...))
	return errors.Join(errs...)
}

// releaseFinishedPods removes the tracking finalizer of the pods of a
// finished Job.
func (c *Controller) releaseFinishedPods(ctx context.Context, job *batchv1.Job) error {
	pods, err := c.podLister.Pods(job.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range pods {
		if isControlledBy(p, job) && hasTrackingFinalizer(p) && !c.expectations.finalizerRemovalPending(p.UID) &&
			(isFinished(p) || p.DeletionTimestamp != nil) {
			errs = append(errs, c.removeFinalizer(ctx, p))
		}
	}
	return errors.Join(errs...)
}

// releaseOrphan removes the tracking finalizer of a pod whose Job is gone.
func (c *Controller) releaseOrphan(ctx context.Context, podKey string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(podKey)
	if err != nil {
		return nil
	}
	p, err := c.podLister.Pods(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || !hasTrackingFinalizer(p) {
		return err
	}
	if _, exists := c.jobOf(p); exists {
		return nil
	}
	return c.removeFinalizer(ctx, p)
}

// removeFinalizer removes the tracking finalizer of p with a strategic
// merge patch, which no other writer of the pod conflicts with.
func (c *Controller) removeFinalizer(ctx context.Context, p *corev1.Pod) error {
	patch, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{
			"$deleteFromPrimitiveList/finalizers": []string{TrackingFinalizer},
			"uid":                                 p.UID,
		},
	})
	_, err := c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("remove tracking finalizer of pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	c.expectations.finalizerRemoved(p.UID)
	return nil
}

// manageJob creates pods until the Job runs as many as its parallelism
// and remaining completions allow (for an Indexed Job, one per pending
// index, lowest first), or deletes the excess and, for an Indexed Job,
// the pods of a duplicated or invalid index; a suspended Job's pods are
// all deleted. It returns the number of active pods.
func (c *Controller) manageJob(ctx context.Context, key string, jc *syncCtx, now time.Time) (int32, error) {
	job := jc.job
	active := int32(len(jc.active))
	if isSuspended(job) {
		deleted, deletedReady, err := c.deletePods(ctx, key, job, jc.active, true)
		jc.terminating += deleted
		jc.ready -= deletedReady
		return active - deleted, err
	}
	parallelism := int32(1)
	if job.Spec.Parallelism != nil {
		parallelism = *job.Spec.Parallelism
	}
	var want int32
	switch {
	case job.Spec.Completions == nil && jc.succeeded > 0:
		// A work queue: once a pod succeeded no new one starts.
		want = active
	case job.Spec.Completions == nil:
		want = parallelism
	default:
		want = min(max(*job.Spec.Completions-jc.succeeded, 0), parallelism)
	}

	if victims := activePodsForRemoval(job, jc.active, int(max(active-want, 0))); len(victims) > 0 {
		if len(victims) > burstPods {
			victims = victims[:burstPods]
		}
		deleted, deletedReady, err := c.deletePods(ctx, key, job, victims, true)
		jc.terminating += deleted
		jc.ready -= deletedReady
		// Deleting and creating in one sync could fight: deletion first.
		return active - deleted, err
	}

	var terminating int32
	if onlyReplaceFailedPods(job) {
		terminating = jc.terminating
	}
	diff := want - terminating - active
	if diff <= 0 {
		return active, nil
	}
	if !hasBackoffLimitPerIndex(job) {
		if wait := jc.backoff.remaining(now); wait > 0 {
			c.queue.AddAfter(key, wait)
			return active, nil
		}
	}
	diff = min(diff, burstPods)
	var indexes []int
	if isIndexedJob(job) {
		indexes = firstPendingIndexes(jc, int(diff))
		if hasBackoffLimitPerIndex(job) {
			var wait time.Duration
			if indexes, wait = indexesReadyToCreate(indexes, jc.delayed, now); wait > 0 {
				c.queue.AddAfter(key, wait)
				return active, nil
			}
		}
		diff = int32(len(indexes))
		if diff == 0 {
			return active, nil
		}
	}

	template := job.Spec.Template.DeepCopy()
	if isIndexedJob(job) {
		addCompletionIndexEnv(&template.Spec)
	}
	if !slices.Contains(template.Finalizers, TrackingFinalizer) {
		template.Finalizers = append(template.Finalizers, TrackingFinalizer)
	}
	n := int(diff)
	c.expectations.ExpectCreations(key, n)
	var next atomic.Int32
	created, err := controllers.SlowStartBatch(n, 1, func() error {
		ix := unknownCompletionIndex
		if indexes != nil {
			ix = indexes[next.Add(1)-1]
		}
		return c.createPod(ctx, jc, template, ix)
	})
	for i := created; i < n; i++ {
		c.expectations.CreationObserved(key)
	}
	return active + int32(created), err
}

// activePodsForRemoval returns at least rmAtLeast active pods to delete,
// the least advanced first; for an Indexed Job also those without a valid
// index and all but one of each index's pods.
func activePodsForRemoval(job *batchv1.Job, pods []*corev1.Pod, rmAtLeast int) []*corev1.Pod {
	var rm []*corev1.Pod
	left := append([]*corev1.Pod(nil), pods...)
	if isIndexedJob(job) {
		rm, left = duplicatedIndexPods(job, left)
	}
	if len(rm) < rmAtLeast {
		sortLeastActiveFirst(left)
		rm = append(rm, left[:rmAtLeast-len(rm)]...)
	}
	return rm
}

// deletePods deletes pods of job, remembering the deletions, and returns
// how many, and how many of them were ready, it deleted. With release,
// it removes their tracking finalizer first, so that they do not count
// (pods of a suspended Job, or in excess).
func (c *Controller) deletePods(ctx context.Context, key string, job *batchv1.Job, pods []*corev1.Pod, release bool) (int32, int32, error) {
	if len(pods) == 0 {
		return 0, 0, nil
	}
	podKeys := make([]string, len(pods))
	for i, p := range pods {
		podKeys[i] = p.Namespace + "/" + p.Name
	}
	c.expectations.ExpectDeletions(key, podKeys)
	errs := make([]error, len(pods))
	var deleted, deletedReady atomic.Int32
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if release && hasTrackingFinalizer(p) {
				err = c.removeFinalizer(ctx, p)
			}
			if err == nil {
				err = c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
			}
			if err != nil {
				c.expectations.DeletionObserved(key, podKeys[i])
				if !apierrors.IsNotFound(err) {
					c.recorder.Eventf(job, corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting: %v", err)
					errs[i] = fmt.Errorf("delete pod %s of job %s/%s: %w", podKeys[i], job.Namespace, job.Name, err)
					return
				}
			} else {
				c.recorder.Eventf(job, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted pod: %v", p.Name)
			}
			deleted.Add(1)
			if podutils.IsPodReady(p) {
				deletedReady.Add(1)
			}
		}()
	}
	wg.Wait()
	return deleted.Load(), deletedReady.Load(), errors.Join(errs...)
}

// createPod creates one pod of the Job from template (which carries the
// tracking finalizer); for an Indexed Job with its completion index
// (annotation and label), hostname and, with backoffLimitPerIndex, the
// failure counts of its index.
func (c *Controller) createPod(ctx context.Context, jc *syncCtx, template *corev1.PodTemplateSpec, index int) error {
	job := jc.job
	t := template
	generateName := job.Name + "-"
	if index != unknownCompletionIndex {
		t = template.DeepCopy()
		if t.Annotations == nil {
			t.Annotations = map[string]string{}
		}
		if t.Labels == nil {
			t.Labels = map[string]string{}
		}
		t.Annotations[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(index)
		t.Labels[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(index)
		t.Spec.Hostname = fmt.Sprintf("%s-%d", job.Name, index)
		generateName = podGenerateNameWithIndex(job.Name, index)
		if hasBackoffLimitPerIndex(job) {
			count, ignored := newIndexFailureCounts(job, jc.delayed[index])
			t.Annotations[batchv1.JobIndexFailureCountAnnotation] = strconv.Itoa(int(count))
			if ignored > 0 {
				t.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation] = strconv.Itoa(int(ignored))
			}
		}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    generateName,
			Labels:          copyMap(t.Labels),
			Annotations:     copyMap(t.Annotations),
			Finalizers:      append([]string(nil), t.Finalizers...),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, controllerKind)},
		},
		Spec: *t.Spec.DeepCopy(),
	}
	created, err := c.client.CoreV1().Pods(job.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
		c.recorder.Eventf(job, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating: %v", err)
		return fmt.Errorf("create pod of job %s/%s: %w", job.Namespace, job.Name, err)
	}
	c.recorder.Eventf(job, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created pod: %v", created.Name)
	return nil
}

func (c *Controller) updateStatus(ctx context.Context, job *batchv1.Job, status *batchv1.JobStatus) (*batchv1.Job, error) {
	job = job.DeepCopy()
	job.Status = *status
	updated, err := c.client.BatchV1().Jobs(job.Namespace).UpdateStatus(ctx, job, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("update status of job %s/%s: %w", job.Namespace, job.Name, err)
	}
	c.written.wrote(job.Namespace+"/"+job.Name, updated)
	return updated, nil
}
