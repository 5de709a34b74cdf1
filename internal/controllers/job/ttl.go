package job

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
)

// TTLName is the TTL-after-finished controller's name in --controllers.
const TTLName = "ttl-after-finished"

// TTLAfterFinished deletes finished Jobs once their
// spec.ttlSecondsAfterFinished has passed, in the foreground (their pods
// first), as kube-controller-manager's ttl-after-finished controller does.
type TTLAfterFinished struct {
	client     kubernetes.Interface
	clock      clock.WithTicker
	log        *slog.Logger
	jobLister  batchlisters.JobLister
	jobsSynced cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]
}

// NewTTLAfterFinished builds the controller on cc's shared Job informer.
// It implements controllers.Constructor.
func NewTTLAfterFinished(cc *controllers.Context) (controllers.Controller, error) {
	c := &TTLAfterFinished{
		client: cc.Client,
		clock:  cc.Clock,
		log:    cc.Logger,
		queue:  controllers.NewQueue[string](TTLName, cc.Clock, nil),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	inf := cc.Informers.Batch().V1().Jobs()
	enqueue := func(obj interface{}) {
		if j, ok := obj.(*batchv1.Job); ok && j.DeletionTimestamp == nil && j.Spec.TTLSecondsAfterFinished != nil && isFinishedJob(j) {
			if key, err := cache.MetaNamespaceKeyFunc(j); err == nil {
				c.queue.Add(key)
			}
		}
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj interface{}) { enqueue(obj) },
	}); err != nil {
		return nil, fmt.Errorf("ttl-after-finished controller: watch jobs: %w", err)
	}
	c.jobLister = inf.Lister()
	c.jobsSynced = inf.Informer().HasSynced
	return c, nil
}

// Run deletes expired Jobs with workers goroutines until ctx is done.
func (c *TTLAfterFinished) Run(ctx context.Context, workers int) {
	controllers.Workers[string]{
		Synced:    []cache.InformerSynced{c.jobsSynced},
		Queue:     c.queue,
		Reconcile: c.sync,
		OnError: func(key string, err error) {
			c.log.Info("sync failed, will retry", "job", key, "err", err)
		},
	}.Run(ctx, workers)
}

func (c *TTLAfterFinished) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	j, err := c.jobLister.Jobs(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if j.DeletionTimestamp != nil || j.Spec.TTLSecondsAfterFinished == nil || !isFinishedJob(j) {
		return nil
	}
	expireAt := finishTime(j).Add(time.Duration(*j.Spec.TTLSecondsAfterFinished) * time.Second)
	if left := expireAt.Sub(c.clock.Now()); left > 0 {
		return &controllers.RequeueAfter{Delay: left}
	}
	// The cache may be behind: check the stored Job before deleting it.
	fresh, err := c.client.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if fresh.UID != j.UID || fresh.Spec.TTLSecondsAfterFinished == nil || !isFinishedJob(fresh) ||
		finishTime(fresh).Add(time.Duration(*fresh.Spec.TTLSecondsAfterFinished)*time.Second).After(c.clock.Now()) {
		return nil
	}
	c.log.Info("deleting a finished job whose TTL expired", "job", key)
	policy := metav1.DeletePropagationForeground
	err = c.client.BatchV1().Jobs(namespace).Delete(ctx, name, metav1.DeleteOptions{
		PropagationPolicy: &policy,
		Preconditions:     &metav1.Preconditions{UID: &fresh.UID, ResourceVersion: &fresh.ResourceVersion},
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// finishTime is when the Job finished: its completionTime, or when its
// Complete or Failed condition became true.
func finishTime(j *batchv1.Job) time.Time {
	if j.Status.CompletionTime != nil {
		return j.Status.CompletionTime.Time
	}
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}
