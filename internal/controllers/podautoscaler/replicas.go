package podautoscaler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// podMetric is one pod's usage sample (milli-units).
type podMetric struct {
	timestamp time.Time
	window    time.Duration
	value     int64
}

// resourceMetrics is kube's resource metrics client: the pods' usage of
// a resource (summed over their containers, or one container's) from
// metrics.k8s.io, and the time of the samples.
func (c *Controller) resourceMetrics(ctx context.Context, res corev1.ResourceName, ns string, selector labels.Selector, container string) (map[string]podMetric, time.Time, error) {
	raw, err := c.client.CoreV1().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces", ns, "pods").
		Param("labelSelector", selector.String()).DoRaw(ctx)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from resource metrics API: %w", err)
	}
	var list metricsv1beta1.PodMetricsList
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from resource metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned from resource metrics API")
	}
	out := make(map[string]podMetric, len(list.Items))
	for _, m := range list.Items {
		sum, missing := int64(0), len(m.Containers) == 0
		for _, ct := range m.Containers {
			if container != "" && ct.Name != container {
				continue
			}
			v, ok := ct.Usage[res]
			if !ok {
				missing = true
				break
			}
			sum += v.MilliValue()
			if container != "" {
				break
			}
		}
		if container != "" && !hasContainer(m.Containers, container) {
			missing = true
		}
		if !missing {
			out[m.Name] = podMetric{timestamp: m.Timestamp.Time, window: m.Window.Duration, value: sum}
		}
	}
	return out, list.Items[0].Timestamp.Time, nil
}

func hasContainer(cs []metricsv1beta1.ContainerMetrics, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}

// tolerances are the scale-down and scale-up tolerances of an HPA: the
// controller's, or its behavior's (HPAConfigurableTolerance).
type tolerances struct{ down, up float64 }

func (t tolerances) within(ratio float64) bool { return 1-t.down <= ratio && ratio <= 1+t.up }

func (c *Controller) tolerancesFor(hpa *autoscalingv2.HorizontalPodAutoscaler) tolerances {
	t := tolerances{c.cfg.Tolerance, c.cfg.Tolerance}
	if b := hpa.Spec.Behavior; b != nil {
		if b.ScaleDown != nil && b.ScaleDown.Tolerance != nil {
			t.down = b.ScaleDown.Tolerance.AsApproximateFloat64()
		}
		if b.ScaleUp != nil && b.ScaleUp.Tolerance != nil {
			t.up = b.ScaleUp.Tolerance.AsApproximateFloat64()
		}
	}
	return t
}

// resourceProposal is kube's computeStatusForResourceMetricGeneric: the
// replicas an average value or utilization target asks for, the current
// value, and the metric's name in rescale reasons.
func (c *Controller) resourceProposal(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, current int32, target autoscalingv2.MetricTarget,
	res corev1.ResourceName, container string, selector labels.Selector, source autoscalingv2.MetricSourceType) (int32, *autoscalingv2.MetricValueStatus, string, error) {
	tol := c.tolerancesFor(hpa)
	if target.AverageValue != nil {
		proposal, usage, err := c.rawResourceReplicas(ctx, current, target.AverageValue.MilliValue(), res, tol, hpa.Namespace, selector, container)
		if err != nil {
			return 0, nil, "", fmt.Errorf("failed to get %s usage: %w", res, err)
		}
		q := buildQuantity(res, usage)
		return proposal, &autoscalingv2.MetricValueStatus{AverageValue: &q}, fmt.Sprintf("%s resource", res), nil
	}
	if target.AverageUtilization == nil {
		return 0, nil, "", errors.New("invalid resource metric source: neither an average utilization target nor an average value (usage) target was set")
	}
	proposal, utilization, raw, err := c.resourceReplicas(ctx, current, *target.AverageUtilization, res, tol, hpa.Namespace, selector, container)
	if err != nil {
		return 0, nil, "", fmt.Errorf("failed to get %s utilization: %w", res, err)
	}
	name := fmt.Sprintf("%s resource utilization (percentage of request)", res)
	if source == autoscalingv2.ContainerResourceMetricSourceType {
		name = fmt.Sprintf("%s container resource utilization (percentage of request)", res)
	}
	q := buildQuantity(res, raw)
	return proposal, &autoscalingv2.MetricValueStatus{AverageUtilization: &utilization, AverageValue: &q}, name, nil
}

func buildQuantity(res corev1.ResourceName, milli int64) resource.Quantity {
	format := resource.DecimalSI
	if res == corev1.ResourceMemory {
		format = resource.BinarySI
	}
	return *resource.NewMilliQuantity(milli, format)
}

// resourceReplicas is kube's GetResourceReplicas: the usage ratio of the
// ready pods against the target utilization; unready pods (when scaling
// up) and pods without metrics are then counted at 0 or at their request
// (whichever damps the change) and the ratio recomputed, and a change the
// recount reverses or brings within tolerance is dropped.
func (c *Controller) resourceReplicas(ctx context.Context, current, targetUtilization int32, res corev1.ResourceName, tol tolerances, ns string, selector labels.Selector, container string) (int32, int32, int64, error) {
	metrics, _, err := c.resourceMetrics(ctx, res, ns, selector, container)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("unable to get metrics for resource %s: %w", res, err)
	}
	pods, err := c.pods.Pods(ns).List(selector)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("unable to get pods while calculating replica count: %w", err)
	}
	if len(pods) == 0 {
		return 0, 0, 0, errors.New("no pods returned by selector while calculating replica count")
	}
	ready, unready, missing, ignored := c.groupPods(pods, metrics, res)
	for name := range ignored {
		delete(metrics, name)
	}
	for name := range unready {
		delete(metrics, name)
	}
	if len(metrics) == 0 {
		return 0, 0, 0, errors.New("did not receive metrics for targeted pods (pods might be unready)")
	}
	requests, err := podRequests(pods, container, res)
	if err != nil {
		return 0, 0, 0, err
	}
	ratio, utilization, raw, err := utilizationRatio(metrics, requests, targetUtilization)
	if err != nil {
		return 0, 0, 0, err
	}
	scaleUpWithUnready := len(unready) > 0 && ratio > 1.0
	if !scaleUpWithUnready && len(missing) == 0 {
		if tol.within(ratio) {
			return current, utilization, raw, nil
		}
		return int32(math.Ceil(ratio * float64(ready))), utilization, raw, nil
	}
	if len(missing) > 0 {
		for name := range missing {
			switch {
			case ratio < 1.0:
				metrics[name] = podMetric{value: requests[name] * int64(max(100, targetUtilization)) / 100}
			case ratio > 1.0:
				metrics[name] = podMetric{}
			}
		}
	}
	if scaleUpWithUnready {
		for name := range unready {
			metrics[name] = podMetric{}
		}
	}
	newRatio, _, _, err := utilizationRatio(metrics, requests, targetUtilization)
	if err != nil {
		return 0, utilization, raw, err
	}
	if tol.within(newRatio) || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0) {
		return current, utilization, raw, nil
	}
	n := int32(math.Ceil(newRatio * float64(len(metrics))))
	if (newRatio < 1.0 && n > current) || (newRatio > 1.0 && n < current) {
		return current, utilization, raw, nil
	}
	return n, utilization, raw, nil
}

// rawResourceReplicas is kube's GetRawResourceReplicas: the pods' average
// usage against a target average value (calcPlainMetricReplicas).
func (c *Controller) rawResourceReplicas(ctx context.Context, current int32, target int64, res corev1.ResourceName, tol tolerances, ns string, selector labels.Selector, container string) (int32, int64, error) {
	metrics, _, err := c.resourceMetrics(ctx, res, ns, selector, container)
	if err != nil {
		return 0, 0, fmt.Errorf("unable to get metrics for resource %s: %w", res, err)
	}
	pods, err := c.pods.Pods(ns).List(selector)
	if err != nil {
		return 0, 0, fmt.Errorf("unable to get pods while calculating replica count: %w", err)
	}
	if len(pods) == 0 {
		return 0, 0, errors.New("no pods returned by selector while calculating replica count")
	}
	ready, unready, missing, ignored := c.groupPods(pods, metrics, res)
	for name := range ignored {
		delete(metrics, name)
	}
	for name := range unready {
		delete(metrics, name)
	}
	if len(metrics) == 0 {
		return 0, 0, errors.New("did not receive metrics for targeted pods (pods might be unready)")
	}
	ratio, usage := usageRatio(metrics, target)
	scaleUpWithUnready := len(unready) > 0 && ratio > 1.0
	if !scaleUpWithUnready && len(missing) == 0 {
		if tol.within(ratio) {
			return current, usage, nil
		}
		return int32(math.Ceil(ratio * float64(ready))), usage, nil
	}
	for name := range missing {
		switch {
		case ratio < 1.0:
			metrics[name] = podMetric{value: target}
		default:
			metrics[name] = podMetric{}
		}
	}
	if scaleUpWithUnready {
		for name := range unready {
			metrics[name] = podMetric{}
		}
	}
	newRatio, _ := usageRatio(metrics, target)
	if tol.within(newRatio) || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0) {
		return current, usage, nil
	}
	n := int32(math.Ceil(newRatio * float64(len(metrics))))
	if (newRatio < 1.0 && n > current) || (newRatio > 1.0 && n < current) {
		return current, usage, nil
	}
	return n, usage, nil
}

// groupPods is kube's: deleted and failed pods are ignored, pending ones
// unready, pods without a sample missing; for CPU, a pod is also unready
// while its samples may predate its readiness (within the CPU
// initialization period) or when it has not yet been ready at all.
func (c *Controller) groupPods(pods []*corev1.Pod, metrics map[string]podMetric, res corev1.ResourceName) (ready int, unready, missing, ignored sets.Set[string]) {
	unready, missing, ignored = sets.New[string](), sets.New[string](), sets.New[string]()
	now := c.clock.Now()
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodFailed {
			ignored.Insert(pod.Name)
			continue
		}
		if pod.Status.Phase == corev1.PodPending {
			unready.Insert(pod.Name)
			continue
		}
		metric, found := metrics[pod.Name]
		if !found {
			missing.Insert(pod.Name)
			continue
		}
		if res == corev1.ResourceCPU {
			var cond *corev1.PodCondition
			for i := range pod.Status.Conditions {
				if pod.Status.Conditions[i].Type == corev1.PodReady {
					cond = &pod.Status.Conditions[i]
				}
			}
			isUnready := false
			switch {
			case cond == nil || pod.Status.StartTime == nil:
				isUnready = true
			case pod.Status.StartTime.Add(c.cfg.CPUInitializationPeriod).After(now):
				isUnready = cond.Status == corev1.ConditionFalse || metric.timestamp.Before(cond.LastTransitionTime.Add(metric.window))
			default:
				isUnready = cond.Status == corev1.ConditionFalse && pod.Status.StartTime.Add(c.cfg.DelayOfInitialReadinessStatus).After(cond.LastTransitionTime.Time)
			}
			if isUnready {
				unready.Insert(pod.Name)
				continue
			}
		}
		ready++
	}
	return ready, unready, missing, ignored
}

// podRequests are the pods' requests of a resource (milli-units): their
// containers' and restartable init containers', or one container's.
func podRequests(pods []*corev1.Pod, container string, res corev1.ResourceName) (map[string]int64, error) {
	out := make(map[string]int64, len(pods))
	for _, pod := range pods {
		containers := append([]corev1.Container{}, pod.Spec.Containers...)
		for _, ic := range pod.Spec.InitContainers {
			if ic.RestartPolicy != nil && *ic.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				containers = append(containers, ic)
			}
		}
		var total int64
		found := container == ""
		for _, ct := range containers {
			if container != "" && ct.Name != container {
				continue
			}
			q, ok := ct.Resources.Requests[res]
			if !ok {
				return nil, fmt.Errorf("missing request for %s in container %s of Pod %s", res, ct.Name, pod.Name)
			}
			total += q.MilliValue()
			if container != "" {
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("container %s not found in Pod %s", container, pod.Name)
		}
		out[pod.Name] = total
	}
	return out, nil
}

// utilizationRatio is kube's GetResourceUtilizationRatio.
func utilizationRatio(metrics map[string]podMetric, requests map[string]int64, target int32) (float64, int32, int64, error) {
	var total, requested int64
	n := 0
	for name, m := range metrics {
		r, ok := requests[name]
		if !ok {
			continue
		}
		total += m.value
		requested += r
		n++
	}
	if requested == 0 {
		return 0, 0, 0, errors.New("no metrics returned matched known pods")
	}
	utilization := int32(total * 100 / requested)
	return float64(utilization) / float64(target), utilization, total / int64(n), nil
}

// usageRatio is kube's GetMetricUsageRatio.
func usageRatio(metrics map[string]podMetric, target int64) (float64, int64) {
	var total int64
	for _, m := range metrics {
		total += m.value
	}
	usage := total / int64(len(metrics))
	return float64(usage) / float64(target), usage
}

// ---- normalization: stabilization, limits and rates ----

func (c *Controller) recordInitialRecommendation(current int32, key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.recommendations[key] == nil {
		c.recommendations[key] = []timestampedRecommendation{{current, c.clock.Now()}}
	}
}

// stabilize is kube's stabilizeRecommendation: the highest
// recommendation of the downscale stabilization window.
func (c *Controller) stabilize(key string, desired int32) int32 {
	highest := desired
	now := c.clock.Now()
	cutoff := now.Add(-c.cfg.DownscaleStabilization)
	c.mu.Lock()
	defer c.mu.Unlock()
	old := -1
	for i, rec := range c.recommendations[key] {
		if rec.timestamp.Before(cutoff) {
			old = i
		} else if rec.recommendation > highest {
			highest = rec.recommendation
		}
	}
	if old >= 0 {
		c.recommendations[key][old] = timestampedRecommendation{desired, now}
	} else {
		c.recommendations[key] = append(c.recommendations[key], timestampedRecommendation{desired, now})
	}
	return highest
}

// normalize is kube's normalizeDesiredReplicas, for HPAs without
// behavior.
func (c *Controller) normalize(hpa *autoscalingv2.HorizontalPodAutoscaler, key string, current, desired, minReplicas int32) int32 {
	stabilized := c.stabilize(key, desired)
	if stabilized != desired {
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation")
	} else {
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size")
	}
	out, reason, message := limitWithRules(current, stabilized, minReplicas, hpa.Spec.MaxReplicas)
	status := corev1.ConditionTrue
	if out == stabilized {
		status = corev1.ConditionFalse
	}
	c.setCondition(hpa, autoscalingv2.ScalingLimited, status, reason, "%s", message)
	return out
}

// limitWithRules is kube's convertDesiredReplicasWithRules.
func limitWithRules(current, desired, minReplicas, maxReplicas int32) (int32, string, string) {
	upLimit := int32(math.Max(scaleUpLimitFactor*float64(current), scaleUpLimitMinimum))
	maximum, reason, message := maxReplicas, "TooManyReplicas", "the desired replica count is more than the maximum replica count"
	if maxReplicas > upLimit {
		maximum, reason, message = upLimit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
	}
	switch {
	case desired < minReplicas:
		return minReplicas, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
	case desired > maximum:
		return maximum, reason, message
	}
	return desired, "DesiredWithinRange", "the desired count is within the acceptable range"
}

// normalizeWithBehaviors is kube's normalizeDesiredReplicasWithBehaviors.
func (c *Controller) normalizeWithBehaviors(hpa *autoscalingv2.HorizontalPodAutoscaler, key string, current, desired, minReplicas int32) int32 {
	b := hpa.Spec.Behavior
	if b.ScaleDown != nil && b.ScaleDown.StabilizationWindowSeconds == nil {
		w := int32(c.cfg.DownscaleStabilization.Seconds())
		b.ScaleDown.StabilizationWindowSeconds = &w
	}
	up, down := b.ScaleUp, b.ScaleDown
	stabilized, reason, message := c.stabilizeWithBehaviors(key, up, down, current, desired)
	if stabilized != desired {
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, reason, "%s", message)
	} else {
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size")
	}
	out, reason, message := c.limitWithBehaviorRate(key, up, down, current, stabilized, minReplicas, hpa.Spec.MaxReplicas)
	status := corev1.ConditionTrue
	if out == stabilized {
		status = corev1.ConditionFalse
	}
	c.setCondition(hpa, autoscalingv2.ScalingLimited, status, reason, "%s", message)
	return out
}

// stabilizeWithBehaviors is kube's stabilizeRecommendationWithBehaviors:
// the lowest recommendation of the scale-up window and the highest of
// the scale-down window bound the current replicas.
func (c *Controller) stabilizeWithBehaviors(key string, up, down *autoscalingv2.HPAScalingRules, current, desired int32) (int32, string, string) {
	now := c.clock.Now()
	upRec, downRec := desired, desired
	upCutoff := now.Add(-time.Second * time.Duration(*up.StabilizationWindowSeconds))
	downCutoff := now.Add(-time.Second * time.Duration(*down.StabilizationWindowSeconds))
	c.mu.Lock()
	defer c.mu.Unlock()
	old := -1
	for i, rec := range c.recommendations[key] {
		if rec.timestamp.After(upCutoff) {
			upRec = min(rec.recommendation, upRec)
		}
		if rec.timestamp.After(downCutoff) {
			downRec = max(rec.recommendation, downRec)
		}
		if rec.timestamp.Before(upCutoff) && rec.timestamp.Before(downCutoff) {
			old = i
		}
	}
	rec := max(current, upRec)
	rec = min(rec, downRec)
	if old >= 0 {
		c.recommendations[key][old] = timestampedRecommendation{desired, now}
	} else {
		c.recommendations[key] = append(c.recommendations[key], timestampedRecommendation{desired, now})
	}
	if desired >= current {
		return rec, "ScaleUpStabilized", "recent recommendations were lower than current one, applying the lowest recent recommendation"
	}
	return rec, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation"
}

// limitWithBehaviorRate is kube's convertDesiredReplicasWithBehaviorRate.
func (c *Controller) limitWithBehaviorRate(key string, up, down *autoscalingv2.HPAScalingRules, current, desired, minReplicas, maxReplicas int32) (int32, string, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	switch {
	case desired > current:
		limit := max(scaleUpLimit(now, current, c.scaleUps[key], c.scaleDowns[key], up), current)
		maximum, reason, message := maxReplicas, "TooManyReplicas", "the desired replica count is more than the maximum replica count"
		if maxReplicas > limit {
			maximum, reason, message = limit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
		}
		if desired > maximum {
			return maximum, reason, message
		}
	case desired < current:
		limit := min(scaleDownLimit(now, current, c.scaleUps[key], c.scaleDowns[key], down), current)
		minimum, reason, message := minReplicas, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
		if minReplicas < limit {
			minimum, reason, message = limit, "ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate"
		}
		if desired < minimum {
			return minimum, reason, message
		}
	}
	return desired, "DesiredWithinRange", "the desired count is within the acceptable range"
}

// changeInPeriod is the replicas scale events changed in the last period.
func changeInPeriod(now time.Time, periodSeconds int32, events []timestampedScaleEvent) int32 {
	cutoff := now.Add(-time.Second * time.Duration(periodSeconds))
	var n int32
	for _, e := range events {
		if e.timestamp.After(cutoff) {
			n += e.replicaChange
		}
	}
	return n
}

// scaleUpLimit is kube's calculateScaleUpLimitWithScalingRules.
func scaleUpLimit(now time.Time, current int32, ups, downs []timestampedScaleEvent, rules *autoscalingv2.HPAScalingRules) int32 {
	if *rules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	result, pick := int32(math.MinInt32), func(a, b int32) int32 { return max(a, b) }
	if *rules.SelectPolicy == autoscalingv2.MinChangePolicySelect {
		result, pick = math.MaxInt32, func(a, b int32) int32 { return min(a, b) }
	}
	for _, p := range rules.Policies {
		start := current - changeInPeriod(now, p.PeriodSeconds, ups) + changeInPeriod(now, p.PeriodSeconds, downs)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start + p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		result = pick(result, proposed)
	}
	return result
}

// scaleDownLimit is kube's calculateScaleDownLimitWithBehaviors.
func scaleDownLimit(now time.Time, current int32, ups, downs []timestampedScaleEvent, rules *autoscalingv2.HPAScalingRules) int32 {
	if *rules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	result, pick := int32(math.MaxInt32), func(a, b int32) int32 { return min(a, b) }
	if *rules.SelectPolicy == autoscalingv2.MinChangePolicySelect {
		result, pick = math.MinInt32, func(a, b int32) int32 { return max(a, b) }
	}
	for _, p := range rules.Policies {
		start := current - changeInPeriod(now, p.PeriodSeconds, ups) + changeInPeriod(now, p.PeriodSeconds, downs)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start - p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		result = pick(result, proposed)
	}
	return result
}

// storeScaleEvent is kube's: with behavior, each rescale is remembered
// for the longest policy period of its direction.
func (c *Controller) storeScaleEvent(b *autoscalingv2.HorizontalPodAutoscalerBehavior, key string, prev, next int32) {
	if b == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	events, rules, change := c.scaleUps, b.ScaleUp, next-prev
	if next <= prev {
		events, rules, change = c.scaleDowns, b.ScaleDown, prev-next
	}
	var longest int32
	if rules != nil {
		for _, p := range rules.Policies {
			longest = max(longest, p.PeriodSeconds)
		}
	}
	cutoff := now.Add(-time.Second * time.Duration(longest))
	list := events[key]
	old := -1
	for i := range list {
		if list[i].timestamp.Before(cutoff) {
			list[i].outdated = true
		}
		if list[i].outdated {
			old = i
		}
	}
	e := timestampedScaleEvent{replicaChange: change, timestamp: now}
	if old >= 0 {
		list[old] = e
	} else {
		list = append(list, e)
	}
	events[key] = list
}
