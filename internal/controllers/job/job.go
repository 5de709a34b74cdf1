// Package job is the Job controller: it runs a Job's pods to completion,
// creating them up to spec.parallelism while completions remain, counts
// the pods that succeeded and failed, and finishes the Job with kube's
// conditions (SuccessCriteriaMet then Complete, or FailureTarget then
// Failed on the backoff limit or the active deadline), as
// kube-controller-manager's controller of that name does. It also
// suspends and resumes Jobs, adopts the orphan pods a Job selects, and
// leaves alone the Jobs whose spec.managedBy names another controller.
//
// Indexed Jobs run one pod per completion index (its annotation and
// label, hostname and JOB_COMPLETION_INDEX), lowest pending index first,
// and record status.completedIndexes; with backoffLimitPerIndex each
// index has its own failure count (carried by the replacement pod's
// annotation) and status.failedIndexes, bounded by maxFailedIndexes. A
// pod failure policy fails the Job or an index, ignores a failure or
// counts it, by exit codes or pod conditions; a success policy completes
// an Indexed Job early.
//
// Finished pods are counted with kube's tracking finalizer
// (batch.kubernetes.io/job-tracking): every pod it creates carries it; a
// pod seen finished is first recorded in status.uncountedTerminatedPods,
// then its finalizer is removed, then it moves to status.succeeded or
// status.failed. A pod is thus counted exactly once even if the pod is
// deleted right after it finishes.
//
// The TTL-after-finished controller, which deletes finished Jobs, is in
// this package too (NewTTLAfterFinished).
package job

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
)

// Name is the controller's name in --controllers.
const Name = "job"

// Component is the source of the controller's events.
const Component = "job-controller"

// TrackingFinalizer is on every pod the controller creates until the pod
// has finished and been counted.
const TrackingFinalizer = "batch.kubernetes.io/job-tracking"

// Event reasons.
const (
	ReasonSuccessfulCreate     = "SuccessfulCreate"
	ReasonFailedCreate         = "FailedCreate"
	ReasonSuccessfulDelete     = "SuccessfulDelete"
	ReasonFailedDelete         = "FailedDelete"
	ReasonCompleted            = "Completed"
	ReasonSuspended            = "Suspended"
	ReasonResumed              = "Resumed"
	ReasonBackoffLimitExceeded = "BackoffLimitExceeded"
	ReasonDeadlineExceeded     = "DeadlineExceeded"
)

// Condition reasons and messages, as kube's.
const (
	reasonCompletionsReached  = "CompletionsReached"
	messageCompletionsReached = "Reached expected number of succeeded pods"
	messageBackoffLimit       = "Job has reached the specified backoff limit"
	messageDeadline           = "Job was active longer than specified deadline"
	messageMaxFailedIndexes   = "Job has exceeded the specified maximal number of failed indexes"
	messageFailedIndexes      = "Job has failed indexes"
	reasonJobSuspended        = "JobSuspended"
	reasonJobResumed          = "JobResumed"
)

var controllerKind = batchv1.SchemeGroupVersion.WithKind("Job")

// orphanPrefix marks a queue key naming a pod (not a Job) whose tracking
// finalizer must go because its Job is gone.
const orphanPrefix = "pod:"

// Controller is the Job controller.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	clock    clock.WithTicker
	log      *slog.Logger

	jobLister  batchlisters.JobLister
	jobsSynced cache.InformerSynced
	podLister  corelisters.PodLister
	podsSynced cache.InformerSynced

	expectations *expectations
	backoff      *backoffStore
	written      *writtenStore
	queue        workqueue.TypedRateLimitingInterface[string]
}

// New builds the controller on cc's shared Job and Pod informers. It
// implements controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	c := &Controller{
		client:       cc.Client,
		recorder:     cc.Recorder(Component),
		clock:        cc.Clock,
		log:          cc.Logger,
		expectations: newExpectations(cc.Clock),
		backoff:      newBackoffStore(),
		written:      newWrittenStore(),
		queue:        controllers.NewQueue[string](Name, cc.Clock, nil),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	jobInformer := cc.Informers.Batch().V1().Jobs()
	if _, err := jobInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { c.enqueue(obj.(*batchv1.Job)) },
		UpdateFunc: c.updateJob,
		DeleteFunc: c.deleteJob,
	}); err != nil {
		return nil, fmt.Errorf("job controller: watch jobs: %w", err)
	}
	c.jobLister = jobInformer.Lister()
	c.jobsSynced = jobInformer.Informer().HasSynced

	podInformer := cc.Informers.Core().V1().Pods()
	if _, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addPod,
		UpdateFunc: c.updatePod,
		DeleteFunc: c.deletePod,
	}); err != nil {
		return nil, fmt.Errorf("job controller: watch pods: %w", err)
	}
	c.podLister = podInformer.Lister()
	c.podsSynced = podInformer.Informer().HasSynced
	return c, nil
}

// Run reconciles with workers goroutines until ctx is done, then shuts the
// queue down and returns once every worker has stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllers.Workers[string]{
		Synced:    []cache.InformerSynced{c.jobsSynced, c.podsSynced},
		Queue:     c.queue,
		Reconcile: c.reconcile,
		OnError: func(key string, err error) {
			if apierrors.IsConflict(err) {
				// The cache is behind our own last write: routine.
				c.log.Debug("sync failed, will retry", "job", key, "err", err)
				return
			}
			c.log.Info("sync failed, will retry", "job", key, "err", err)
		},
	}.Run(ctx, workers)
}

func (c *Controller) reconcile(ctx context.Context, key string) error {
	if podKey, ok := strings.CutPrefix(key, orphanPrefix); ok {
		return c.releaseOrphan(ctx, podKey)
	}
	return c.sync(ctx, key)
}

func (c *Controller) enqueue(j *batchv1.Job) {
	if key, err := cache.MetaNamespaceKeyFunc(j); err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) updateJob(oldObj, newObj interface{}) {
	oldJob, curJob := oldObj.(*batchv1.Job), newObj.(*batchv1.Job)
	if oldJob.UID != curJob.UID {
		key, _ := cache.MetaNamespaceKeyFunc(oldJob)
		c.deleteJob(cache.DeletedFinalStateUnknown{Key: key, Obj: oldJob})
	}
	c.enqueue(curJob)
}

func (c *Controller) deleteJob(obj interface{}) {
	j, ok := controllers.Deleted[*batchv1.Job](obj)
	if !ok {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(j)
	if err != nil {
		return
	}
	c.expectations.Forget(key)
	c.backoff.forget(key)
	c.written.forget(key)
	c.queue.Add(key)
	// Its pods may still carry the tracking finalizer: release them.
	pods, err := c.podLister.Pods(j.Namespace).List(labelsEverything())
	if err != nil {
		return
	}
	for _, p := range pods {
		if isControlledBy(p, j) && hasTrackingFinalizer(p) {
			c.queue.Add(orphanPrefix + p.Namespace + "/" + p.Name)
		}
	}
}

// jobOf returns the key of the Job controlling pod, and whether that Job
// exists (same UID) in the cache.
func (c *Controller) jobOf(pod *corev1.Pod) (string, bool) {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || ref.Kind != controllerKind.Kind || ref.APIVersion != controllerKind.GroupVersion().String() {
		return "", false
	}
	key := pod.Namespace + "/" + ref.Name
	j, err := c.jobLister.Jobs(pod.Namespace).Get(ref.Name)
	return key, err == nil && j.UID == ref.UID
}

// orphaned handles a pod without a controller: the Jobs that select it
// may adopt it; when none will, its tracking finalizer goes.
func (c *Controller) orphaned(pod *corev1.Pod) {
	adopter := false
	jobs, _ := c.jobLister.GetPodJobs(pod)
	for i := range jobs {
		j := &jobs[i]
		if managedByOther(j) {
			continue
		}
		if j.DeletionTimestamp == nil && !isFinishedJob(j) {
			adopter = true
		}
		c.enqueue(j)
	}
	if !adopter && hasTrackingFinalizer(pod) {
		c.queue.Add(orphanPrefix + pod.Namespace + "/" + pod.Name)
	}
}

func (c *Controller) addPod(obj interface{}) {
	pod := obj.(*corev1.Pod)
	if metav1.GetControllerOfNoCopy(pod) == nil {
		c.orphaned(pod)
		return
	}
	key, ok := c.jobOf(pod)
	if key == "" {
		return
	}
	if !ok {
		c.releaseIfOrphan(pod)
		return
	}
	if pod.DeletionTimestamp == nil {
		c.expectations.CreationObserved(key)
	} else {
		c.expectations.DeletionObserved(key, pod.Namespace+"/"+pod.Name)
	}
	c.queue.Add(key)
}

func (c *Controller) updatePod(oldObj, newObj interface{}) {
	oldPod, curPod := oldObj.(*corev1.Pod), newObj.(*corev1.Pod)
	if curPod.ResourceVersion == oldPod.ResourceVersion {
		return
	}
	if !hasTrackingFinalizer(curPod) {
		c.expectations.finalizerGoneObserved(curPod.UID)
	}
	oldRef, curRef := metav1.GetControllerOfNoCopy(oldPod), metav1.GetControllerOfNoCopy(curPod)
	if oldRef != nil && (curRef == nil || curRef.UID != oldRef.UID) {
		// Released: its former Job counts without it.
		if key, ok := c.jobOf(oldPod); ok {
			c.queue.Add(key)
		}
	}
	if curRef == nil {
		if oldRef != nil || !apiequality.Semantic.DeepEqual(oldPod.Labels, curPod.Labels) || hasTrackingFinalizer(curPod) {
			c.orphaned(curPod)
		}
		return
	}
	key, ok := c.jobOf(curPod)
	if key == "" {
		return
	}
	if !ok {
		c.releaseIfOrphan(curPod)
		return
	}
	if curPod.DeletionTimestamp != nil && oldPod.DeletionTimestamp == nil {
		c.expectations.DeletionObserved(key, curPod.Namespace+"/"+curPod.Name)
	}
	c.queue.Add(key)
}

func (c *Controller) deletePod(obj interface{}) {
	pod, ok := controllers.Deleted[*corev1.Pod](obj)
	if !ok {
		return
	}
	c.expectations.finalizerGoneObserved(pod.UID)
	key, _ := c.jobOf(pod)
	if key == "" {
		return
	}
	c.expectations.DeletionObserved(key, pod.Namespace+"/"+pod.Name)
	c.queue.Add(key)
}

// releaseIfOrphan queues the removal of the tracking finalizer of a pod
// whose Job is gone, once the pod is finished or being deleted.
func (c *Controller) releaseIfOrphan(pod *corev1.Pod) {
	if hasTrackingFinalizer(pod) && (pod.DeletionTimestamp != nil || isFinished(pod)) {
		c.queue.Add(orphanPrefix + pod.Namespace + "/" + pod.Name)
	}
}

func hasTrackingFinalizer(p *corev1.Pod) bool {
	return slices.Contains(p.Finalizers, TrackingFinalizer)
}

func isFinished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

func isControlledBy(p *corev1.Pod, j *batchv1.Job) bool {
	ref := metav1.GetControllerOfNoCopy(p)
	return ref != nil && ref.UID == j.UID
}
