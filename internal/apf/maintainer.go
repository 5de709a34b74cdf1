package apf

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	flowcontrolapply "k8s.io/client-go/applyconfigurations/flowcontrol/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	flowcontrollisters "k8s.io/client-go/listers/flowcontrol/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"minik/internal/syncwait"
)

// ConsumerFieldManager is the field manager of the FlowSchema status
// writes, as kube-apiserver's APF configuration controller's.
const ConsumerFieldManager = "api-priority-and-fairness-config-consumer-v1"

// DefaultInterval is how often kube-apiserver ensures the bootstrap
// configuration again once it has been ensured at start.
const DefaultInterval = time.Minute

// Maintainer keeps the bootstrap configuration (Ensure, at start and
// then every Interval) and the FlowSchemas' Dangling conditions, and
// serves the classification of requests (Classifier).
type Maintainer struct {
	client   kubernetes.Interface
	interval time.Duration
	log      *slog.Logger

	factory     informers.SharedInformerFactory
	flowSchemas flowcontrollisters.FlowSchemaLister
	levels      flowcontrollisters.PriorityLevelConfigurationLister
	synced      []cache.InformerSynced
	queue       workqueue.TypedRateLimitingInterface[string]

	// Classifier classifies requests by the informers' FlowSchemas.
	Classifier *Classifier
}

// New returns a maintainer that writes through cs, ensuring the
// bootstrap configuration every interval (DefaultInterval if 0).
func New(cs kubernetes.Interface, interval time.Duration, log *slog.Logger) *Maintainer {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := informers.NewSharedInformerFactory(cs, 0)
	fsi := f.Flowcontrol().V1().FlowSchemas()
	pli := f.Flowcontrol().V1().PriorityLevelConfigurations()
	m := &Maintainer{
		client: cs, interval: interval, log: log, factory: f,
		flowSchemas: fsi.Lister(), levels: pli.Lister(),
		synced: []cache.InformerSynced{fsi.Informer().HasSynced, pli.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "apf-configuration"}),
	}
	m.Classifier = newClassifier(fsi.Informer(), pli.Informer())
	enqueueFS := func(obj any) {
		if fs, ok := obj.(*flowcontrolv1.FlowSchema); ok {
			m.queue.Add(fs.Name)
		}
	}
	_, _ = fsi.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueueFS,
		UpdateFunc: func(_, obj any) { enqueueFS(obj) },
	})
	levelChanged := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		pl, ok := obj.(*flowcontrolv1.PriorityLevelConfiguration)
		if !ok {
			return
		}
		fss, _ := m.flowSchemas.List(labels.Everything())
		for _, fs := range fss {
			if fs.Spec.PriorityLevelConfiguration.Name == pl.Name {
				m.queue.Add(fs.Name)
			}
		}
	}
	_, _ = pli.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    levelChanged,
		DeleteFunc: levelChanged,
	})
	return m
}

// Run ensures the bootstrap configuration (retrying each second until
// it succeeds, as kube-apiserver's post-start hook does), calls ready,
// then keeps the configuration and the Dangling conditions until ctx is
// done.
func (m *Maintainer) Run(ctx context.Context, ready func()) error {
	defer m.queue.ShutDown()
	m.factory.Start(ctx.Done())
	defer m.factory.Shutdown()
	if !syncwait.Synced(ctx, m.synced...) {
		return fmt.Errorf("apf configuration: informers did not sync: %w", ctx.Err())
	}
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		if err := Ensure(ctx, m.client); err != nil {
			m.log.Error("APF bootstrap configuration", "err", err)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("apf bootstrap configuration: %w", err)
	}
	ready()
	go func() {
		for m.processNext(ctx) {
		}
	}()
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := Ensure(ctx, m.client); err != nil && ctx.Err() == nil {
			m.log.Error("APF bootstrap configuration", "err", err)
		}
	}, m.interval)
	return nil
}

func (m *Maintainer) processNext(ctx context.Context) bool {
	name, quit := m.queue.Get()
	if quit {
		return false
	}
	defer m.queue.Done(name)
	if err := m.syncStatus(ctx, name); err != nil {
		m.log.Error("FlowSchema status", "flowschema", name, "err", err)
		m.queue.AddRateLimited(name)
		return true
	}
	m.queue.Forget(name)
	return true
}

// DanglingCondition is the Dangling condition kube's APF configuration
// controller wants on a FlowSchema whose priority level does (found) or
// does not exist; its transition time is left to the caller.
func DanglingCondition(plName string, found bool) flowcontrolv1.FlowSchemaCondition {
	if found {
		return flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionFalse, Reason: "Found",
			Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q and it exists", plName)}
	}
	return flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionTrue, Reason: "NotFound",
		Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q but there is no such object", plName)}
}

// syncStatus writes a FlowSchema's Dangling condition when it is not the
// one its priority level's existence calls for, as kube does: a
// server-side apply of the status, forced, by ConsumerFieldManager.
func (m *Maintainer) syncStatus(ctx context.Context, name string) error {
	fs, err := m.flowSchemas.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get flowschema %s: %w", name, err)
	}
	plName := fs.Spec.PriorityLevelConfiguration.Name
	_, err = m.levels.Get(plName)
	want := DanglingCondition(plName, err == nil)
	for _, c := range fs.Status.Conditions {
		if c.Type == want.Type && c.Status == want.Status && c.Reason == want.Reason && c.Message == want.Message {
			return nil
		}
	}
	cond := flowcontrolapply.FlowSchemaCondition().WithType(want.Type).WithStatus(want.Status).
		WithReason(want.Reason).WithMessage(want.Message).WithLastTransitionTime(metav1.Now())
	ac := flowcontrolapply.FlowSchema(name).WithStatus(flowcontrolapply.FlowSchemaStatus().WithConditions(cond))
	_, err = m.client.FlowcontrolV1().FlowSchemas().ApplyStatus(ctx, ac, metav1.ApplyOptions{FieldManager: ConsumerFieldManager, Force: true})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("apply status of flowschema %s: %w", name, err)
	}
	return nil
}
