// Package podautoscaler is kube-controller-manager's
// "horizontalpodautoscaling" controller: every HorizontalPodAutoscaler's
// target is scaled to what its metrics ask for.
//
// Each sync (every Config.SyncPeriod, 15 s by default, and when the HPA
// changes) reads the target's scale subresource, the pods its selector
// picks, and their usage from the metrics.k8s.io API (internal/metricsapi
// serves it from the simulated nodes); it computes the desired replicas
// with kube's algorithm — the usage ratio against the target within a
// tolerance of 0.1, unready and metric-less pods counted conservatively,
// the recommendations of the scale-down stabilization window (5 min by
// default) or the HPA's behavior (stabilization windows and rate
// policies), clamped to minReplicas and maxReplicas — writes the scale when
// it changes, and the status: currentReplicas, desiredReplicas,
// currentMetrics, lastScaleTime and the AbleToScale, ScalingActive,
// ScalingLimited (and ScaledToZero) conditions, with kube's reasons,
// messages and events (SuccessfulRescale, FailedGetResourceMetric, …).
//
// Resource and ContainerResource metrics are computed; minik serves no
// custom or external metrics API, so Pods, Object and External metrics
// fail as they do on a cluster without an adapter.
package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	autoscalinglisters "k8s.io/client-go/listers/autoscaling/v2"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
)

// Name is the controller's name in --controllers, as kube's.
const Name = "horizontalpodautoscaling"

// Component is the source of the controller's events, as kube's.
const Component = "horizontal-pod-autoscaler"

// Kube's defaults (kube-controller-manager's --horizontal-pod-autoscaler-*
// flags).
const (
	DefaultSyncPeriod                    = 15 * time.Second
	DefaultDownscaleStabilization        = 5 * time.Minute
	DefaultTolerance                     = 0.1
	DefaultCPUInitializationPeriod       = 5 * time.Minute
	DefaultDelayOfInitialReadinessStatus = 30 * time.Second
)

// Without behavior, a scale-up goes at most to twice the replicas, or 4.
const (
	scaleUpLimitFactor  = 2.0
	scaleUpLimitMinimum = 4.0
)

// Config tunes the controller; zero fields mean kube's defaults.
type Config struct {
	// SyncPeriod is how often each HPA is looked at.
	SyncPeriod time.Duration
	// DownscaleStabilization is the window of recommendations a
	// scale-down takes the highest of.
	DownscaleStabilization time.Duration
	// Tolerance is how far from 1 the usage ratio must be to scale.
	Tolerance float64
	// CPUInitializationPeriod is how long after a pod starts its CPU
	// samples may be skipped.
	CPUInitializationPeriod time.Duration
	// DelayOfInitialReadinessStatus is how long after a pod starts a
	// readiness change counts as its initial one.
	DelayOfInitialReadinessStatus time.Duration
}

// Controller is the HPA controller.
type Controller struct {
	cfg      Config
	client   kubernetes.Interface
	scales   scale.ScalesGetter
	mapper   *restmapper.DeferredDiscoveryRESTMapper
	clock    clock.WithTicker
	log      *slog.Logger
	recorder record.EventRecorder

	hpas       autoscalinglisters.HorizontalPodAutoscalerLister
	hpasSynced cache.InformerSynced
	pods       corelisters.PodLister
	podsSynced cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]

	mu sync.Mutex
	// recommendations are each HPA's recent unstabilized recommendations,
	// scaleUps and scaleDowns its recent scale events (for behavior
	// policies), by key.
	recommendations map[string][]timestampedRecommendation
	scaleUps        map[string][]timestampedScaleEvent
	scaleDowns      map[string][]timestampedScaleEvent
	// selectors are the pod selectors of the HPAs' targets last seen, by
	// namespace and key (kube's hpaSelectorStore), to find pods two HPAs
	// would scale; an HPA not yet synced selects nothing.
	selectors map[string]map[string]labels.Selector
}

type timestampedRecommendation struct {
	recommendation int32
	timestamp      time.Time
}

type timestampedScaleEvent struct {
	replicaChange int32
	timestamp     time.Time
	outdated      bool
}

// New builds the controller with kube's defaults. It implements
// controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	return NewWithConfig(cc, Config{})
}

// fixedInterval is kube's HPA rate limiter: every requeue waits one sync
// period.
type fixedInterval time.Duration

func (f fixedInterval) When(string) time.Duration { return time.Duration(f) }
func (fixedInterval) NumRequeues(string) int      { return 1 }
func (fixedInterval) Forget(string)               {}

// NewWithConfig builds the controller on cc's shared HPA and Pod
// informers.
func NewWithConfig(cc *controllers.Context, cfg Config) (*Controller, error) {
	if cfg.SyncPeriod <= 0 {
		cfg.SyncPeriod = DefaultSyncPeriod
	}
	if cfg.DownscaleStabilization <= 0 {
		cfg.DownscaleStabilization = DefaultDownscaleStabilization
	}
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = DefaultTolerance
	}
	if cfg.CPUInitializationPeriod <= 0 {
		cfg.CPUInitializationPeriod = DefaultCPUInitializationPeriod
	}
	if cfg.DelayOfInitialReadinessStatus <= 0 {
		cfg.DelayOfInitialReadinessStatus = DefaultDelayOfInitialReadinessStatus
	}
	c := &Controller{
		cfg: cfg, client: cc.Client, clock: cc.Clock, log: cc.Logger,
		recommendations: map[string][]timestampedRecommendation{},
		scaleUps:        map[string][]timestampedScaleEvent{},
		scaleDowns:      map[string][]timestampedScaleEvent{},
		selectors:       map[string]map[string]labels.Selector{},
	}
	if c.clock == nil {
		c.clock = clock.RealClock{}
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if cc.Recorder != nil {
		c.recorder = cc.Recorder(Component)
	} else {
		c.recorder = &record.FakeRecorder{}
	}
	c.queue = controllers.NewQueue[string](Name, c.clock, fixedInterval(cfg.SyncPeriod))
	disc := cc.Client.Discovery()
	c.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	c.scales = scale.New(cc.Client.CoreV1().RESTClient(), c.mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(disc))

	hpaInf := cc.Informers.Autoscaling().V2().HorizontalPodAutoscalers()
	if _, err := hpaInf.Informer().AddEventHandlerWithResyncPeriod(cache.ResourceEventHandlerFuncs{
		AddFunc: c.add,
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*autoscalingv2.HorizontalPodAutoscaler)
			n, ok2 := cur.(*autoscalingv2.HorizontalPodAutoscaler)
			// HPAGeneration: a spec change is looked at now, anything
			// else at the next period.
			if ok1 && ok2 && o.Generation != n.Generation {
				c.enqueue(cur)
				return
			}
			if key, err := cache.MetaNamespaceKeyFunc(cur); err == nil {
				c.queue.AddRateLimited(key)
			}
		},
		DeleteFunc: c.remove,
	}, cfg.SyncPeriod); err != nil {
		return nil, fmt.Errorf("hpa controller: watch horizontalpodautoscalers: %w", err)
	}
	podInf := cc.Informers.Core().V1().Pods()
	c.hpas, c.hpasSynced = hpaInf.Lister(), hpaInf.Informer().HasSynced
	c.pods, c.podsSynced = podInf.Lister(), podInf.Informer().HasSynced
	return c, nil
}

// add tracks a new HPA's selector (none yet) and syncs it.
func (c *Controller) add(obj any) {
	if h, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler); ok {
		c.mu.Lock()
		if c.selectors[h.Namespace] == nil {
			c.selectors[h.Namespace] = map[string]labels.Selector{}
		}
		if _, ok := c.selectors[h.Namespace][h.Name]; !ok {
			c.selectors[h.Namespace][h.Name] = labels.Nothing()
		}
		c.mu.Unlock()
	}
	c.enqueue(obj)
}

// remove forgets a deleted HPA's selector; its sync forgets the rest.
func (c *Controller) remove(obj any) {
	if h, ok := controllers.Deleted[*autoscalingv2.HorizontalPodAutoscaler](obj); ok {
		c.mu.Lock()
		delete(c.selectors[h.Namespace], h.Name)
		if len(c.selectors[h.Namespace]) == 0 {
			delete(c.selectors, h.Namespace)
		}
		c.mu.Unlock()
	}
	c.enqueue(obj)
}

func (c *Controller) enqueue(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

// Run reconciles until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllers.Workers[string]{
		Synced:    []cache.InformerSynced{c.hpasSynced, c.podsSynced},
		Queue:     c.queue,
		Reconcile: c.sync,
		Logger:    c.log,
	}.Run(ctx, workers)
}

// sync reconciles one HPA and asks for it again after a period, as kube's
// fixed-interval queue does, unless it is gone.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	hpa, err := c.hpas.HorizontalPodAutoscalers(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.mu.Lock()
		delete(c.recommendations, key)
		delete(c.scaleUps, key)
		delete(c.scaleDowns, key)
		c.mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	if err := c.reconcile(ctx, hpa.DeepCopy(), key); err != nil && ctx.Err() == nil {
		c.log.Info("reconcile failed", "hpa", key, "err", err)
	}
	return &controllers.RequeueAfter{Delay: c.cfg.SyncPeriod}
}

// errNoSelector and its kin are the selector failures kube reports.
var errNoSelector = errors.New("selector is required")

// reconcile is kube's reconcileAutoscaler.
func (c *Controller) reconcile(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, key string) error {
	original := hpa.Status.DeepCopy()
	ref := hpa.Spec.ScaleTargetRef
	reference := fmt.Sprintf("%s/%s/%s", ref.Kind, hpa.Namespace, ref.Name)

	failScale := func(err error, what string) error {
		c.recorder.Event(hpa, corev1.EventTypeWarning, "FailedGetScale", err.Error())
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale", "the HPA controller was unable to get the target's current scale: %v", err)
		c.updateStatusIfNeeded(ctx, original, hpa)
		return fmt.Errorf("%s %s: %w", what, reference, err)
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return failScale(err, "invalid API version in scale target reference of")
	}
	mappings, err := c.mapper.RESTMappings(schema.GroupKind{Group: gv.Group, Kind: ref.Kind})
	if err != nil {
		c.mapper.Reset()
		return failScale(err, "unable to determine resource for scale target reference")
	}
	sc, targetGR, err := c.scaleFor(ctx, hpa.Namespace, ref.Name, mappings)
	if err != nil {
		return failScale(err, "failed to query scale subresource for")
	}
	c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale")
	current := sc.Spec.Replicas
	c.recordInitialRecommendation(current, key)

	minReplicas := int32(1)
	if hpa.Spec.MinReplicas != nil {
		minReplicas = *hpa.Spec.MinReplicas
	}
	hasObjectOrExternal := false
	for _, m := range hpa.Spec.Metrics {
		if m.Type == autoscalingv2.ObjectMetricSourceType || m.Type == autoscalingv2.ExternalMetricSourceType {
			hasObjectOrExternal = true
		}
	}
	scaledToZero := conditionTrue(hpa, autoscalingv2.ScaledToZero)
	var (
		desired       int32
		rescaleReason string
		statuses      []autoscalingv2.MetricStatus
		retErr        error
	)
	rescale, compute := true, true
	switch {
	case current == 0:
		if !((minReplicas != 0 && scaledToZero) || (scaledToZero && hasObjectOrExternal)) {
			compute, rescale = false, false
			c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero")
		}
	case current > hpa.Spec.MaxReplicas:
		rescaleReason, desired, compute = "Current number of replicas above Spec.MaxReplicas", hpa.Spec.MaxReplicas, false
	case current < minReplicas:
		rescaleReason, desired, compute = "Current number of replicas below Spec.MinReplicas", minReplicas, false
	}
	if compute {
		metricDesired, metricName, st, err := c.computeReplicasForMetrics(ctx, hpa, sc)
		statuses = st
		if err != nil && metricDesired == -1 {
			c.setStatus(hpa, current, hpa.Status.DesiredReplicas, statuses, false)
			c.updateStatusIfNeeded(ctx, original, hpa)
			c.recorder.Event(hpa, corev1.EventTypeWarning, "FailedComputeMetricsReplicas", err.Error())
			return fmt.Errorf("failed to compute desired number of replicas based on listed metrics for %s: %w", reference, err)
		}
		retErr = err
		rescaleMetric := ""
		if metricDesired > desired {
			desired, rescaleMetric = metricDesired, metricName
		}
		if desired > current {
			rescaleReason = fmt.Sprintf("%s above target", rescaleMetric)
		}
		if desired < current {
			rescaleReason = "All metrics below target"
		}
		if hpa.Spec.Behavior == nil {
			desired = c.normalize(hpa, key, current, desired, minReplicas)
		} else {
			desired = c.normalizeWithBehaviors(hpa, key, current, desired, minReplicas)
		}
		if current == 0 && minReplicas != 0 && scaledToZero && desired < minReplicas {
			desired = minReplicas
			if rescaleReason == "" {
				rescaleReason = "Current number of replicas below Spec.MinReplicas"
			}
		}
		rescale = desired != current
	}
	if rescale {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			sc.Spec.Replicas = desired
			_, err := c.scales.Scales(hpa.Namespace).Update(ctx, targetGR, sc, metav1.UpdateOptions{})
			if err == nil {
				return nil
			}
			if latest, gerr := c.scales.Scales(hpa.Namespace).Get(ctx, targetGR, ref.Name, metav1.GetOptions{}); gerr == nil {
				sc = latest
			}
			return err
		})
		if err != nil {
			c.recorder.Eventf(hpa, corev1.EventTypeWarning, "FailedRescale", "New size: %d; reason: %s; error: %v", desired, rescaleReason, err.Error())
			c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedUpdateScale", "the HPA controller was unable to update the target scale: %v", err)
			c.setStatus(hpa, current, hpa.Status.DesiredReplicas, statuses, false)
			c.updateStatusIfNeeded(ctx, original, hpa)
			return fmt.Errorf("failed to rescale %s: %w", reference, err)
		}
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale", "the HPA controller was able to update the target scale to %d", desired)
		c.recorder.Eventf(hpa, corev1.EventTypeNormal, "SuccessfulRescale", "New size: %d; reason: %s", desired, rescaleReason)
		c.storeScaleEvent(hpa.Spec.Behavior, key, current, desired)
		c.log.Info("rescaled", "hpa", key, "from", current, "to", desired, "reason", rescaleReason)
		// HPAScaleToZero is on in v1.37.
		if current > 0 && desired == 0 && minReplicas == 0 && hasObjectOrExternal {
			c.setCondition(hpa, autoscalingv2.ScaledToZero, corev1.ConditionTrue, "ScaledToZero", "the HPA controller scaled the workload to zero")
		} else {
			c.setCondition(hpa, autoscalingv2.ScaledToZero, corev1.ConditionFalse, "NotScaledToZero", "the HPA controller did not scale the workload to zero")
		}
	} else {
		desired = current
	}
	c.setStatus(hpa, current, desired, statuses, rescale)
	if err := c.updateStatusIfNeeded(ctx, original, hpa); err != nil {
		return err
	}
	return retErr
}

// scaleFor reads the target's scale through the first mapping that
// serves it.
func (c *Controller) scaleFor(ctx context.Context, ns, name string, mappings []*apimeta.RESTMapping) (*autoscalingv1.Scale, schema.GroupResource, error) {
	var first error
	for i, m := range mappings {
		gr := m.Resource.GroupResource()
		sc, err := c.scales.Scales(ns).Get(ctx, gr, name, metav1.GetOptions{})
		if err == nil {
			return sc, gr, nil
		}
		if i == 0 {
			first = err
		}
	}
	if first == nil {
		first = errors.New("unrecognized resource")
	}
	return nil, schema.GroupResource{}, first
}

// computeReplicasForMetrics is kube's: the highest proposal of the valid
// metrics, or -1 when none is valid (or an invalid one could ask for more
// than the others allow a scale-down to).
func (c *Controller) computeReplicasForMetrics(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, sc *autoscalingv1.Scale) (int32, string, []autoscalingv2.MetricStatus, error) {
	selector, err := c.parseSelector(hpa, sc.Status.Selector)
	if err != nil {
		return -1, "", nil, err
	}
	specs := hpa.Spec.Metrics
	statuses := make([]autoscalingv2.MetricStatus, len(specs))
	var (
		replicas       int32
		metric         string
		invalid        int
		firstErr       error
		firstCondition autoscalingv2.HorizontalPodAutoscalerCondition
	)
	for i, spec := range specs {
		proposal, name, cond, err := c.computeReplicasForMetric(ctx, hpa, spec, sc.Spec.Replicas, selector, &statuses[i])
		if err != nil {
			if invalid == 0 {
				firstCondition, firstErr = cond, err
			}
			invalid++
			continue
		}
		if replicas == 0 || proposal > replicas {
			replicas, metric = proposal, name
		}
	}
	if firstErr != nil {
		firstErr = fmt.Errorf("invalid metrics (%v invalid out of %v), first error is: %w", invalid, len(specs), firstErr)
	}
	if invalid >= len(specs) || (invalid > 0 && replicas < sc.Spec.Replicas) {
		c.setCondition(hpa, firstCondition.Type, firstCondition.Status, firstCondition.Reason, "%s", firstCondition.Message)
		return -1, "", statuses, firstErr
	}
	c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", "the HPA was able to successfully calculate a replica count from %s", metric)
	return replicas, metric, statuses, firstErr
}

// parseSelector is kube's validateAndParseSelector: the target's
// selector, which no other HPA's may share pods with.
func (c *Controller) parseSelector(hpa *autoscalingv2.HorizontalPodAutoscaler, selector string) (labels.Selector, error) {
	if selector == "" {
		c.recorder.Event(hpa, corev1.EventTypeWarning, "SelectorRequired", errNoSelector.Error())
		c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", "the HPA target's scale is missing a selector")
		return nil, errNoSelector
	}
	parsed, err := labels.Parse(selector)
	if err != nil {
		msg := fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err)
		c.recorder.Event(hpa, corev1.EventTypeWarning, "InvalidSelector", msg)
		c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", "%s", msg)
		return nil, errors.New(msg)
	}
	c.mu.Lock()
	_, tracked := c.selectors[hpa.Namespace][hpa.Name]
	if tracked {
		c.selectors[hpa.Namespace][hpa.Name] = parsed
	}
	c.mu.Unlock()
	if !tracked {
		return nil, fmt.Errorf("HPA %s/%s was deleted during reconciliation", hpa.Namespace, hpa.Name)
	}
	pods, err := c.pods.Pods(hpa.Namespace).List(parsed)
	if err != nil {
		return nil, err
	}
	if selecting := c.hpasMatching(hpa.Namespace, pods, 2); len(selecting) > 1 {
		msg := fmt.Sprintf("pods by selector %v are controlled by more than one HPA (e.g. %v)", selector, selecting)
		c.recorder.Event(hpa, corev1.EventTypeWarning, "AmbiguousSelector", msg)
		c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "AmbiguousSelector", "%s", msg)
		return nil, errors.New(msg)
	}
	return parsed, nil
}

// hpasMatching is kube's HPAsMatchingPods: up to limit HPAs of the
// namespace whose last selector matches one of the pods, as
// "namespace/name".
func (c *Controller) hpasMatching(ns string, pods []*corev1.Pod, limit int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, pod := range pods {
		set := labels.Set(pod.Labels)
		for name, sel := range c.selectors[ns] {
			if seen[name] || !sel.Matches(set) {
				continue
			}
			seen[name] = true
			out = append(out, ns+"/"+name)
			if len(out) >= limit {
				return out
			}
		}
	}
	return out
}

// computeReplicasForMetric is one metric's proposal and status.
func (c *Controller) computeReplicasForMetric(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec,
	current int32, selector labels.Selector, status *autoscalingv2.MetricStatus) (int32, string, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
	unable := func(reason string, err error) autoscalingv2.HorizontalPodAutoscalerCondition {
		c.recorder.Event(hpa, corev1.EventTypeWarning, reason, err.Error())
		return autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionFalse, Reason: reason,
			Message: fmt.Sprintf("the HPA was unable to compute the replica count: %v", err)}
	}
	switch {
	case spec.Type == autoscalingv2.ResourceMetricSourceType && spec.Resource != nil:
		r := spec.Resource
		proposal, value, name, err := c.resourceProposal(ctx, hpa, current, r.Target, r.Name, "", selector, spec.Type)
		if err != nil {
			return 0, "", unable("FailedGetResourceMetric", err), fmt.Errorf("failed to get %s resource metric value: %w", r.Name, err)
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, Resource: &autoscalingv2.ResourceMetricStatus{Name: r.Name, Current: *value}}
		return proposal, name, autoscalingv2.HorizontalPodAutoscalerCondition{}, nil
	case spec.Type == autoscalingv2.ContainerResourceMetricSourceType && spec.ContainerResource != nil:
		r := spec.ContainerResource
		proposal, value, name, err := c.resourceProposal(ctx, hpa, current, r.Target, r.Name, r.Container, selector, spec.Type)
		if err != nil {
			return 0, "", unable("FailedGetContainerResourceMetric", err), fmt.Errorf("failed to get %s container metric value: %w", r.Container, err)
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{Name: r.Name, Container: r.Container, Current: *value}}
		return proposal, name, autoscalingv2.HorizontalPodAutoscalerCondition{}, nil
	case spec.Type == autoscalingv2.PodsMetricSourceType && spec.Pods != nil:
		err := fmt.Errorf("unable to get metric %s: %w", spec.Pods.Metric.Name, errNoCustomMetrics)
		return 0, "", unable("FailedGetPodsMetric", err), fmt.Errorf("failed to get pods metric value: %w", err)
	case spec.Type == autoscalingv2.ObjectMetricSourceType && spec.Object != nil:
		err := fmt.Errorf("unable to get metric %s: %s on %s %s/%w", spec.Object.Metric.Name, spec.Object.DescribedObject.Kind, hpa.Namespace, spec.Object.DescribedObject.Name, errNoCustomMetrics)
		return 0, "", unable("FailedGetObjectMetric", err), fmt.Errorf("failed to get object metric value: %w", err)
	case spec.Type == autoscalingv2.ExternalMetricSourceType && spec.External != nil:
		err := fmt.Errorf("unable to get external metric %s/%s: %w", hpa.Namespace, spec.External.Metric.Name, errNoExternalMetrics)
		return 0, "", unable("FailedGetExternalMetric", err), fmt.Errorf("failed to get %s external metric value: %w", spec.External.Metric.Name, err)
	}
	err := fmt.Errorf("unknown metric source type %q", string(spec.Type))
	return 0, "", unable("InvalidMetricSourceType", err), err
}

// minik serves neither custom.metrics.k8s.io nor external.metrics.k8s.io.
var (
	errNoCustomMetrics   = errors.New("no custom metrics API (custom.metrics.k8s.io) is served")
	errNoExternalMetrics = errors.New("no external metrics API (external.metrics.k8s.io) is served")
)

// setStatus is kube's: the status of this sync, keeping the last scale
// time unless it rescaled and the conditions set along the way.
func (c *Controller) setStatus(hpa *autoscalingv2.HorizontalPodAutoscaler, current, desired int32, statuses []autoscalingv2.MetricStatus, rescale bool) {
	gen := hpa.Generation
	hpa.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
		CurrentReplicas: current, DesiredReplicas: desired,
		LastScaleTime: hpa.Status.LastScaleTime, CurrentMetrics: statuses, Conditions: hpa.Status.Conditions,
		ObservedGeneration: &gen,
	}
	if rescale {
		now := metav1.NewTime(c.clock.Now())
		hpa.Status.LastScaleTime = &now
	}
}

// updateStatusIfNeeded writes the status when it changed; a failure is
// reported with kube's FailedUpdateStatus event.
func (c *Controller) updateStatusIfNeeded(ctx context.Context, old *autoscalingv2.HorizontalPodAutoscalerStatus, hpa *autoscalingv2.HorizontalPodAutoscaler) error {
	if apiequality.Semantic.DeepEqual(old, &hpa.Status) {
		return nil
	}
	if _, err := c.client.AutoscalingV2().HorizontalPodAutoscalers(hpa.Namespace).UpdateStatus(ctx, hpa, metav1.UpdateOptions{}); err != nil {
		c.recorder.Event(hpa, corev1.EventTypeWarning, "FailedUpdateStatus", err.Error())
		return fmt.Errorf("failed to update status for %s/%s: %w", hpa.Namespace, hpa.Name, err)
	}
	return nil
}

// setCondition is kube's: the condition's transition time moves only
// when its status does.
func (c *Controller) setCondition(hpa *autoscalingv2.HorizontalPodAutoscaler, typ autoscalingv2.HorizontalPodAutoscalerConditionType, status corev1.ConditionStatus, reason, format string, args ...any) {
	var cond *autoscalingv2.HorizontalPodAutoscalerCondition
	for i := range hpa.Status.Conditions {
		if hpa.Status.Conditions[i].Type == typ {
			cond = &hpa.Status.Conditions[i]
			break
		}
	}
	if cond == nil {
		hpa.Status.Conditions = append(hpa.Status.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{Type: typ})
		cond = &hpa.Status.Conditions[len(hpa.Status.Conditions)-1]
	}
	if cond.Status != status {
		cond.LastTransitionTime = metav1.NewTime(c.clock.Now())
	}
	cond.Status, cond.Reason, cond.Message = status, reason, fmt.Sprintf(format, args...)
}

func conditionTrue(hpa *autoscalingv2.HorizontalPodAutoscaler, typ autoscalingv2.HorizontalPodAutoscalerConditionType) bool {
	for _, c := range hpa.Status.Conditions {
		if c.Type == typ {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
