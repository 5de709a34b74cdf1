package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
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
	maxPodFailureBackOff = 6 * time.Minute
)

func labelsEverything() labels.Selector { return labels.Everything() }

// podSets are a Job's pods, sorted by what they count for.
type podSets struct {
	active      []*corev1.Pod // running or pending, not being deleted
	terminating int           // being deleted, not finished
	ready       int32         // active and Ready
	// finished pods that still carry the tracking finalizer and are not
	// yet counted, by outcome.
	newSucceeded, newFailed []*corev1.Pod
	// all pods that carry the tracking finalizer, by UID.
	tracked map[types.UID]*corev1.Pod
	// pods whose finalizer goes without their being counted (deleted
	// because the Job was suspended).
	released map[types.UID]bool
	// restarts of the containers of active pods (for OnFailure Jobs).
	restarts int32
}

// sync reconciles one Job. It is never called twice at once for a key.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.jobLister.Jobs(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Forget(key)
		c.backoff.forget(key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get job %s: %w", key, err)
	}
	job := cached.DeepCopy()
	if isFinishedJob(job) {
		// Pods that finished after the Job did keep nothing from being
		// deleted.
		return c.releaseFinishedPods(ctx, job)
	}
	selector, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil {
		c.log.Error("job has an invalid selector", "job", key, "err", err)
		return nil
	}
	all, err := c.podLister.Pods(namespace).List(selector)
	if err != nil {
		return fmt.Errorf("list pods of job %s: %w", key, err)
	}
	needsManage := c.expectations.Satisfied(key)
	pods := c.classify(job, all)
	now := c.clock.Now()
	status := job.Status.DeepCopy()
	suspended := job.Spec.Suspend != nil && *job.Spec.Suspend

	// Start, suspend, resume.
	var events []func()
	if suspended {
		if setCondition(status, batchv1.JobSuspended, corev1.ConditionTrue, reasonJobSuspended, "Job suspended", now) {
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

	// Record the newly finished pods as uncounted before their finalizers
	// go, so that a crash in between loses none.
	newSucceeded := sets.New(uncountedSucceeded(status)...)
	newFailed := sets.New(uncountedFailed(status)...)
	for _, p := range pods.newSucceeded {
		newSucceeded.Insert(p.UID)
	}
	for _, p := range pods.newFailed {
		if !newSucceeded.Has(p.UID) {
			newFailed.Insert(p.UID)
		}
	}
	setUncounted(status, newSucceeded, newFailed)

	if len(pods.newFailed) > 0 {
		// Replacements of these pods back off from now.
		c.backoff.failed(job, now)
	}
	succeeded := status.Succeeded + int32(newSucceeded.Len())
	failed := status.Failed + int32(newFailed.Len())
	active := int32(len(pods.active))

	// Is the Job finishing?
	finishing := finishingCondition(status)
	if finishing == nil {
		switch {
		case failed > *backoffLimit(job) || pastBackoffLimitOnFailure(job, pods):
			finishing = newFailureTarget(batchv1.JobReasonBackoffLimitExceeded, messageBackoffLimit, now)
		case pastActiveDeadline(job, status, now):
			finishing = newFailureTarget(batchv1.JobReasonDeadlineExceeded, messageDeadline, now)
		case successCriteriaMet(job, succeeded, active):
			finishing = &batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue,
				Reason: reasonCompletionsReached, Message: messageCompletionsReached, LastProbeTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)}
		}
		if finishing != nil {
			status.Conditions = append(status.Conditions, *finishing)
		}
	}

	// Create or delete pods.
	var manageErr error
	if needsManage && job.DeletionTimestamp == nil {
		switch {
		case finishing != nil || suspended:
			manageErr = c.deletePods(ctx, key, job, pods.active)
			active = 0
		default:
			var retryIn time.Duration
			active, retryIn, manageErr = c.managePods(ctx, key, job, pods.active, succeeded, failed, now)
			if retryIn > 0 {
				c.queue.AddAfter(key, retryIn)
			}
		}
	}
	status.Active = active
	status.Ready = &pods.ready
	status.Terminating = new(int32(pods.terminating))

	// Persist the uncounted pods, then release them and count them.
	if !apiequality.Semantic.DeepEqual(status, &job.Status) {
		if job, err = c.updateStatus(ctx, job, status); err != nil {
			return errors.Join(manageErr, err)
		}
		status = job.Status.DeepCopy()
	}
	if err := c.countFinished(ctx, status, pods); err != nil {
		return errors.Join(manageErr, err)
	}

	// Finish: once every pod is gone or counted.
	if finishing != nil && status.Active == 0 && pods.terminating == 0 && len(pods.tracked) == 0 && uncountedEmpty(status) {
		switch finishing.Type {
		case batchv1.JobSuccessCriteriaMet:
			setCondition(status, batchv1.JobComplete, corev1.ConditionTrue, finishing.Reason, finishing.Message, now)
			status.CompletionTime = &metav1.Time{Time: now}
			events = append(events, func() { c.recorder.Event(job, corev1.EventTypeNormal, ReasonCompleted, "Job completed") })
		case batchv1.JobFailureTarget:
			setCondition(status, batchv1.JobFailed, corev1.ConditionTrue, finishing.Reason, finishing.Message, now)
			reason, msg := finishing.Reason, finishing.Message
			events = append(events, func() { c.recorder.Event(job, corev1.EventTypeWarning, reason, msg) })
		}
	}
	if !apiequality.Semantic.DeepEqual(status, &job.Status) {
		if job, err = c.updateStatus(ctx, job, status); err != nil {
			return errors.Join(manageErr, err)
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
	return manageErr
}

// classify sorts the Job's pods. Pods whose finalizer removal is still on
// its way to the cache were counted already and are left out.
func (c *Controller) classify(job *batchv1.Job, all []*corev1.Pod) podSets {
	s := podSets{tracked: map[types.UID]*corev1.Pod{}}
	suspended := job.Spec.Suspend != nil && *job.Spec.Suspend
	onlyFailed := job.Spec.PodReplacementPolicy != nil && *job.Spec.PodReplacementPolicy == batchv1.Failed
	for _, p := range all {
		if !isControlledBy(p, job) {
			continue
		}
		tracked := hasTrackingFinalizer(p) && !c.expectations.finalizerRemovalPending(p.UID)
		if tracked {
			s.tracked[p.UID] = p
		}
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			if tracked {
				s.newSucceeded = append(s.newSucceeded, p)
			}
		case p.Status.Phase == corev1.PodFailed:
			if tracked {
				s.newFailed = append(s.newFailed, p)
			}
		case p.DeletionTimestamp != nil:
			s.terminating++
			// A pod deleted before it finished counts as failed (kube's
			// podReplacementPolicy TerminatingOrFailed), except when the
			// Job's suspension deleted it.
			if tracked && !onlyFailed && !suspended {
				s.newFailed = append(s.newFailed, p)
			} else if tracked && suspended {
				s.newReleased(p)
			}
		default:
			s.active = append(s.active, p)
			if podutils.IsPodReady(p) {
				s.ready++
			}
			if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodPending {
				for _, st := range p.Status.InitContainerStatuses {
					s.restarts += st.RestartCount
				}
				for _, st := range p.Status.ContainerStatuses {
					s.restarts += st.RestartCount
				}
			}
		}
	}
	return s
}

// newReleased marks a pod whose finalizer goes without counting it.
func (s *podSets) newReleased(p *corev1.Pod) {
	if s.released == nil {
		s.released = map[types.UID]bool{}
	}
	s.released[p.UID] = true
}

// countFinished removes the tracking finalizer of every pod recorded as
// uncounted (and of pods released uncounted), then moves the uncounted
// pods to the counters.
func (c *Controller) countFinished(ctx context.Context, status *batchv1.JobStatus, pods podSets) error {
	var errs []error
	counted := func(uid types.UID) bool {
		p, ok := pods.tracked[uid]
		if !ok {
			// Gone, or released already: nothing holds it any more.
			return true
		}
		if err := c.removeFinalizer(ctx, p); err != nil {
			errs = append(errs, err)
			return false
		}
		delete(pods.tracked, uid)
		return true
	}
	var keepSucceeded, keepFailed []types.UID
	for _, uid := range uncountedSucceeded(status) {
		if counted(uid) {
			status.Succeeded++
		} else {
			keepSucceeded = append(keepSucceeded, uid)
		}
	}
	for _, uid := range uncountedFailed(status) {
		if counted(uid) {
			status.Failed++
		} else {
			keepFailed = append(keepFailed, uid)
		}
	}
	for uid := range pods.released {
		counted(uid)
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

// managePods creates pods until the Job has as many active ones as its
// parallelism and remaining completions allow, or deletes the excess. It
// returns the number of active pods, and how long to wait when replacing
// failed pods must back off.
func (c *Controller) managePods(ctx context.Context, key string, job *batchv1.Job, active []*corev1.Pod, succeeded, failed int32, now time.Time) (int32, time.Duration, error) {
	parallelism := int32(1)
	if job.Spec.Parallelism != nil {
		parallelism = *job.Spec.Parallelism
	}
	want := parallelism
	if job.Spec.Completions != nil {
		want = min(want, max(*job.Spec.Completions-succeeded, 0))
	} else if succeeded > 0 {
		// A work queue: once a pod succeeded no new one starts.
		want = min(want, int32(len(active)))
	}
	diff := want - int32(len(active))
	switch {
	case diff > 0:
		if wait := c.backoff.remaining(key, failed, now); wait > 0 {
			return int32(len(active)), wait, nil
		}
		n := int(min(diff, burstPods))
		c.expectations.ExpectCreations(key, n)
		created, err := controllers.SlowStartBatch(n, 1, func() error { return c.createPod(ctx, job) })
		for i := created; i < n; i++ {
			c.expectations.CreationObserved(key)
		}
		return int32(len(active) + created), 0, err
	case diff < 0:
		// Fewer wanted (parallelism lowered): delete the newest first.
		victims := append([]*corev1.Pod(nil), active...)
		sortNewestFirst(victims)
		victims = victims[:-diff]
		err := c.deletePods(ctx, key, job, victims)
		return want, 0, err
	}
	return int32(len(active)), 0, nil
}

// deletePods deletes pods of job (active ones when the Job finishes or is
// suspended), remembering the deletions.
func (c *Controller) deletePods(ctx context.Context, key string, job *batchv1.Job, pods []*corev1.Pod) error {
	if len(pods) == 0 {
		return nil
	}
	podKeys := make([]string, len(pods))
	for i, p := range pods {
		podKeys[i] = p.Namespace + "/" + p.Name
	}
	c.expectations.ExpectDeletions(key, podKeys)
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
			if err != nil {
				c.expectations.DeletionObserved(key, podKeys[i])
				if !apierrors.IsNotFound(err) {
					c.recorder.Eventf(job, corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting: %v", err)
					errs[i] = fmt.Errorf("delete pod %s: %w", podKeys[i], err)
				}
				return
			}
			c.recorder.Eventf(job, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted pod: %v", p.Name)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// createPod creates one pod of job, with the tracking finalizer.
func (c *Controller) createPod(ctx context.Context, job *batchv1.Job) error {
	t := &job.Spec.Template
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    job.Name + "-",
			Labels:          copyMap(t.Labels),
			Annotations:     copyMap(t.Annotations),
			Finalizers:      append(append([]string(nil), t.Finalizers...), TrackingFinalizer),
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
		return err
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
	return updated, nil
}
