// Package cronjob is the CronJob controller: it creates a Job from a
// CronJob's template at each time of its schedule, named
// "<cronjob>-<scheduled time in minutes since the epoch>", honouring the
// concurrency policy, the starting deadline and suspension; it tracks the
// CronJob's active Jobs and last schedule and success times, and deletes
// finished Jobs beyond the history limits, as kube-controller-manager's
// controller of that name (its v2) does.
//
// Schedules are robfig/cron's standard five fields or descriptors, in
// spec.timeZone when set and in the controller's local time zone
// otherwise. Time comes from the controller context's clock: a fake clock
// drives schedules in tests.
package cronjob

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
)

// Name is the controller's name in --controllers.
const Name = "cronjob"

// Component is the source of the controller's events.
const Component = "cronjob-controller"

// ScheduledTimestampAnnotation is on every Job the controller creates: the
// time it was scheduled for, RFC 3339 in the CronJob's time zone.
const ScheduledTimestampAnnotation = "batch.kubernetes.io/cronjob-scheduled-timestamp"

// Event reasons.
const (
	ReasonSuccessfulCreate    = "SuccessfulCreate"
	ReasonFailedCreate        = "FailedCreate"
	ReasonSuccessfulDelete    = "SuccessfulDelete"
	ReasonFailedDelete        = "FailedDelete"
	ReasonSawCompletedJob     = "SawCompletedJob"
	ReasonJobAlreadyActive    = "JobAlreadyActive"
	ReasonMissSchedule        = "MissSchedule"
	ReasonTooManyMissedTimes  = "TooManyMissedTimes"
	ReasonUnparseableSchedule = "UnparseableSchedule"
	ReasonUnknownTimeZone     = "UnknownTimeZone"
)

// nextScheduleDelta is added to the wait for the next scheduled time, so
// that the controller wakes after it, not just before.
const nextScheduleDelta = 100 * time.Millisecond

var controllerKind = batchv1.SchemeGroupVersion.WithKind("CronJob")

// Controller is the CronJob controller.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	clock    clock.WithTicker
	log      *slog.Logger

	cjLister   batchlisters.CronJobLister
	cjSynced   cache.InformerSynced
	jobLister  batchlisters.JobLister
	jobsSynced cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

// New builds the controller on cc's shared CronJob and Job informers. It
// implements controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	c := &Controller{
		client:   cc.Client,
		recorder: cc.Recorder(Component),
		clock:    cc.Clock,
		log:      cc.Logger,
		queue:    controllers.NewQueue[string](Name, cc.Clock, nil),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	cjInformer := cc.Informers.Batch().V1().CronJobs()
	if _, err := cjInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj interface{}) { c.enqueue(obj) },
		DeleteFunc: func(obj interface{}) {
			if cj, ok := controllers.Deleted[*batchv1.CronJob](obj); ok {
				c.enqueue(cj)
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("cronjob controller: watch cronjobs: %w", err)
	}
	c.cjLister = cjInformer.Lister()
	c.cjSynced = cjInformer.Informer().HasSynced

	jobInformer := cc.Informers.Batch().V1().Jobs()
	if _, err := jobInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.jobChanged,
		UpdateFunc: func(_, obj interface{}) { c.jobChanged(obj) },
		DeleteFunc: c.jobChanged,
	}); err != nil {
		return nil, fmt.Errorf("cronjob controller: watch jobs: %w", err)
	}
	c.jobLister = jobInformer.Lister()
	c.jobsSynced = jobInformer.Informer().HasSynced
	return c, nil
}

// Run reconciles with workers goroutines until ctx is done, then shuts the
// queue down and returns once every worker has stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllers.Workers[string]{
		Synced:    []cache.InformerSynced{c.cjSynced, c.jobsSynced},
		Queue:     c.queue,
		Reconcile: c.sync,
		OnError: func(key string, err error) {
			if apierrors.IsConflict(err) {
				c.log.Debug("sync failed, will retry", "cronjob", key, "err", err)
				return
			}
			c.log.Info("sync failed, will retry", "cronjob", key, "err", err)
		},
	}.Run(ctx, workers)
}

func (c *Controller) enqueue(obj interface{}) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

// jobChanged wakes the CronJob that controls a Job.
func (c *Controller) jobChanged(obj interface{}) {
	j, ok := controllers.Deleted[*batchv1.Job](obj)
	if !ok {
		return
	}
	if ref := metav1.GetControllerOfNoCopy(j); ref != nil && ref.Kind == controllerKind.Kind {
		c.queue.Add(j.Namespace + "/" + ref.Name)
	}
}

// sync reconciles one CronJob: it updates the active list from the Jobs
// it owns, deletes Jobs beyond the history limits, and starts the Job of
// the most recent scheduled time if it is due. It asks to be run again at
// the next scheduled time.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.cjLister.CronJobs(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get cronjob %s: %w", key, err)
	}
	cj := cached.DeepCopy()
	all, err := c.jobLister.Jobs(namespace).List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list jobs of cronjob %s: %w", key, err)
	}
	var jobs []*batchv1.Job
	for _, j := range all {
		if ref := metav1.GetControllerOfNoCopy(j); ref != nil && ref.UID == cj.UID {
			jobs = append(jobs, j)
		}
	}
	c.syncActive(ctx, cj, jobs)
	c.cleanupFinishedJobs(ctx, cj, jobs)

	requeue, syncErr := c.syncSchedule(ctx, cj)
	if !apiequality.Semantic.DeepEqual(cj.Status, cached.Status) {
		if _, err := c.client.BatchV1().CronJobs(namespace).UpdateStatus(ctx, cj, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update status of cronjob %s: %w", key, err)
		}
	}
	if syncErr != nil {
		return syncErr
	}
	if requeue > 0 {
		c.queue.AddAfter(key, requeue)
	}
	return nil
}

// syncActive brings status.active in line with the owned Jobs: finished
// ones leave it (reported as seen), running ones it missed join it, and
// references to Jobs that no longer exist go.
func (c *Controller) syncActive(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) {
	byUID := map[types.UID]*batchv1.Job{}
	for _, j := range jobs {
		byUID[j.UID] = j
	}
	var active []corev1.ObjectReference
	inActive := map[types.UID]bool{}
	for _, ref := range cj.Status.Active {
		j, ok := byUID[ref.UID]
		if !ok {
			// Deleted by someone else; a Job we created a moment ago
			// and do not see yet keeps its place.
			if _, err := c.client.BatchV1().Jobs(cj.Namespace).Get(ctx, ref.Name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				continue
			}
			active = append(active, ref)
			inActive[ref.UID] = true
			continue
		}
		inActive[ref.UID] = true
		if finished, cond := jobFinished(j); finished {
			c.recorder.Eventf(cj, corev1.EventTypeNormal, ReasonSawCompletedJob, "Saw completed job: %s, condition: %s", j.Name, cond)
			if cond == batchv1.JobComplete && j.Status.CompletionTime != nil &&
				(cj.Status.LastSuccessfulTime == nil || cj.Status.LastSuccessfulTime.Before(j.Status.CompletionTime)) {
				cj.Status.LastSuccessfulTime = j.Status.CompletionTime.DeepCopy()
			}
			continue
		}
		active = append(active, ref)
	}
	for _, j := range jobs {
		if finished, _ := jobFinished(j); !finished && !inActive[j.UID] {
			active = append(active, jobReference(j))
		}
	}
	cj.Status.Active = active
}

// cleanupFinishedJobs deletes the oldest finished Jobs beyond the
// CronJob's successful and failed history limits.
func (c *Controller) cleanupFinishedJobs(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) {
	if cj.DeletionTimestamp != nil {
		return
	}
	var succeeded, failed []*batchv1.Job
	for _, j := range jobs {
		if j.DeletionTimestamp != nil {
			continue
		}
		switch _, cond := jobFinished(j); cond {
		case batchv1.JobComplete:
			succeeded = append(succeeded, j)
		case batchv1.JobFailed:
			failed = append(failed, j)
		}
	}
	if l := cj.Spec.SuccessfulJobsHistoryLimit; l != nil {
		c.removeOldest(ctx, cj, succeeded, int(*l))
	}
	if l := cj.Spec.FailedJobsHistoryLimit; l != nil {
		c.removeOldest(ctx, cj, failed, int(*l))
	}
}

func (c *Controller) removeOldest(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job, keep int) {
	if len(jobs) <= keep {
		return
	}
	sort.Slice(jobs, func(a, b int) bool { return startTime(jobs[a]).Before(startTime(jobs[b])) })
	for _, j := range jobs[:len(jobs)-keep] {
		c.deleteJob(ctx, cj, j)
	}
}

func startTime(j *batchv1.Job) time.Time {
	if j.Status.StartTime != nil {
		return j.Status.StartTime.Time
	}
	return j.CreationTimestamp.Time
}

// deleteJob deletes a Job of cj with its pods in the background.
func (c *Controller) deleteJob(ctx context.Context, cj *batchv1.CronJob, j *batchv1.Job) bool {
	policy := metav1.DeletePropagationBackground
	err := c.client.BatchV1().Jobs(j.Namespace).Delete(ctx, j.Name, metav1.DeleteOptions{PropagationPolicy: &policy})
	if err != nil && !apierrors.IsNotFound(err) {
		c.recorder.Eventf(cj, corev1.EventTypeWarning, ReasonFailedDelete, "Deleted job: %v", err)
		return false
	}
	c.recorder.Eventf(cj, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted job %v", j.Name)
	return true
}

// syncSchedule starts the Job of the most recent scheduled time when it
// is due and allowed. It returns how long to wait for the next one.
func (c *Controller) syncSchedule(ctx context.Context, cj *batchv1.CronJob) (time.Duration, error) {
	if cj.DeletionTimestamp != nil || (cj.Spec.Suspend != nil && *cj.Spec.Suspend) {
		return 0, nil
	}
	loc := time.Local
	if tz := cj.Spec.TimeZone; tz != nil {
		l, err := time.LoadLocation(*tz)
		if err != nil {
			c.recorder.Eventf(cj, corev1.EventTypeWarning, ReasonUnknownTimeZone, "invalid timeZone: %q: %s", *tz, err)
			return 0, nil
		}
		loc = l
	}
	sched, err := cron.ParseStandard(formatSchedule(cj))
	if err != nil {
		c.recorder.Eventf(cj, corev1.EventTypeWarning, ReasonUnparseableSchedule, "unparseable schedule: %q : %s", cj.Spec.Schedule, err)
		return 0, nil
	}
	now := c.clock.Now()
	scheduled, missed := mostRecentScheduleTime(cj, sched, now)
	next := sched.Next(now).Sub(now) + nextScheduleDelta
	if scheduled == nil {
		return next, nil
	}
	if missed > 100 {
		c.recorder.Eventf(cj, corev1.EventTypeWarning, ReasonTooManyMissedTimes,
			"too many missed start times: %d. Set or decrease .spec.startingDeadlineSeconds or check clock skew", missed)
	}
	if sds := cj.Spec.StartingDeadlineSeconds; sds != nil && scheduled.Add(time.Duration(*sds)*time.Second).Before(now) {
		c.recorder.Eventf(cj, corev1.EventTypeWarning, ReasonMissSchedule, "Missed scheduled time to start a job: %s", scheduled.UTC().Format(time.RFC1123Z))
		return next, nil
	}
	name := JobName(cj, *scheduled)
	for _, ref := range cj.Status.Active {
		if ref.Name == name {
			return next, nil
		}
	}
	if cj.Status.LastScheduleTime != nil && !cj.Status.LastScheduleTime.Time.Before(*scheduled) {
		return next, nil
	}
	switch cj.Spec.ConcurrencyPolicy {
	case batchv1.ForbidConcurrent:
		if len(cj.Status.Active) > 0 {
			c.recorder.Eventf(cj, corev1.EventTypeNormal, ReasonJobAlreadyActive, "Not starting job because prior execution is running and concurrency policy is Forbid")
			return next, nil
		}
	case batchv1.ReplaceConcurrent:
		var keep []corev1.ObjectReference
		for _, ref := range cj.Status.Active {
			j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: ref.Namespace, UID: ref.UID}}
			if !c.deleteJob(ctx, cj, j) {
				keep = append(keep, ref)
			}
		}
		cj.Status.Active = keep
		if len(keep) > 0 {
			return 0, fmt.Errorf("cronjob %s/%s: replace the active jobs", cj.Namespace, cj.Name)
		}
	}
	job := jobFromTemplate(cj, name, scheduled.In(loc))
	created, err := c.client.BatchV1().Jobs(cj.Namespace).Create(ctx, job, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		existing, getErr := c.client.BatchV1().Jobs(cj.Namespace).Get(ctx, name, metav1.GetOptions{})
		if getErr != nil {
			return 0, getErr
		}
		if ref := metav1.GetControllerOfNoCopy(existing); ref == nil || ref.UID != cj.UID {
			c.recorder.Eventf(cj, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating job: %v", err)
			return next, nil
		}
		// Ours, created by an earlier sync whose status write failed.
		created = existing
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return 0, nil
	case err != nil:
		c.recorder.Eventf(cj, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating job: %v", err)
		return 0, fmt.Errorf("create job %s/%s: %w", cj.Namespace, name, err)
	default:
		c.recorder.Eventf(cj, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created job %v", created.Name)
	}
	if finished, _ := jobFinished(created); !finished {
		cj.Status.Active = append(cj.Status.Active, jobReference(created))
	}
	cj.Status.LastScheduleTime = &metav1.Time{Time: *scheduled}
	return next, nil
}

// formatSchedule puts the CronJob's time zone in front of its schedule,
// as robfig/cron reads it.
func formatSchedule(cj *batchv1.CronJob) string {
	if cj.Spec.TimeZone != nil && !strings.Contains(cj.Spec.Schedule, "TZ") {
		return fmt.Sprintf("TZ=%s %s", *cj.Spec.TimeZone, cj.Spec.Schedule)
	}
	return cj.Spec.Schedule
}

// mostRecentScheduleTime returns the latest scheduled time after the last
// one (or the CronJob's creation, or the starting deadline, whichever is
// later) and no later than now, and how many times were missed since.
func mostRecentScheduleTime(cj *batchv1.CronJob, sched cron.Schedule, now time.Time) (*time.Time, int) {
	earliest := cj.CreationTimestamp.Time
	if cj.Status.LastScheduleTime != nil {
		earliest = cj.Status.LastScheduleTime.Time
	}
	if sds := cj.Spec.StartingDeadlineSeconds; sds != nil {
		if d := now.Add(-time.Duration(*sds) * time.Second); d.After(earliest) {
			earliest = d
		}
	}
	var last *time.Time
	missed := 0
	for t := sched.Next(earliest); !t.IsZero() && !t.After(now); t = sched.Next(t) {
		last = &t
		missed++
		if missed > 100000 {
			// A schedule far behind: jump to the last minutes.
			for t2 := sched.Next(now.Add(-time.Hour)); !t2.IsZero() && !t2.After(now); t2 = sched.Next(t2) {
				last = &t2
			}
			break
		}
	}
	return last, missed
}

// JobName is the name of the Job of cj scheduled at t: the CronJob's name
// and t in minutes since the epoch.
func JobName(cj *batchv1.CronJob, t time.Time) string {
	return fmt.Sprintf("%s-%d", cj.Name, t.Unix()/60)
}

// jobFromTemplate builds the Job of cj for scheduled time t.
func jobFromTemplate(cj *batchv1.CronJob, name string, t time.Time) *batchv1.Job {
	tmpl := cj.Spec.JobTemplate
	annotations := map[string]string{}
	for k, v := range tmpl.Annotations {
		annotations[k] = v
	}
	annotations[ScheduledTimestampAnnotation] = t.Format(time.RFC3339)
	var lbls map[string]string
	if len(tmpl.Labels) > 0 {
		lbls = map[string]string{}
		for k, v := range tmpl.Labels {
			lbls[k] = v
		}
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       cj.Namespace,
			Labels:          lbls,
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, controllerKind)},
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
}

func jobReference(j *batchv1.Job) corev1.ObjectReference {
	return corev1.ObjectReference{
		APIVersion: "batch/v1", Kind: "Job",
		Namespace: j.Namespace, Name: j.Name, UID: j.UID, ResourceVersion: j.ResourceVersion,
	}
}

// jobFinished tells whether a Job is Complete or Failed, and which.
func jobFinished(j *batchv1.Job) (bool, batchv1.JobConditionType) {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true, c.Type
		}
	}
	return false, ""
}
