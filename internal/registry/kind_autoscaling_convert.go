package registry

import (
	"encoding/json"
	"maps"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Conversion between autoscaling/v1 and autoscaling/v2
// HorizontalPodAutoscalers, as kube's pkg/apis/autoscaling/v1 conversion
// does through the internal type: v1's targetCPUUtilizationPercentage is
// v2's Resource cpu Utilization metric, and what v1 cannot express rides
// in annotations — the other metrics, the current metrics, the conditions
// and the behavior — which the conversion back to v2 (or to internal, in
// kube) takes out again.

// The round-trip annotations of autoscaling/v1 HorizontalPodAutoscalers.
const (
	// HPAMetricsAnnotation holds the v2 metrics other than the CPU
	// utilization target, in v1's MetricSpec form.
	HPAMetricsAnnotation = "autoscaling.alpha.kubernetes.io/metrics"
	// HPACurrentMetricsAnnotation holds status.currentMetrics, in v1's
	// MetricStatus form.
	HPACurrentMetricsAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
	// HPAConditionsAnnotation holds status.conditions.
	HPAConditionsAnnotation = "autoscaling.alpha.kubernetes.io/conditions"
	// HPABehaviorAnnotation holds spec.behavior, in kube's internal
	// type's JSON form (Go field names).
	HPABehaviorAnnotation = "autoscaling.alpha.kubernetes.io/behavior"
	// hpaScaleDownToleranceAnnotation and hpaScaleUpToleranceAnnotation
	// are dropped with the others, as kube drops them.
	hpaScaleDownToleranceAnnotation = "autoscaling.alpha.kubernetes.io/scale-down-tolerance"
	hpaScaleUpToleranceAnnotation   = "autoscaling.alpha.kubernetes.io/scale-up-tolerance"
)

var hpaRoundTripAnnotations = []string{
	HPAMetricsAnnotation, HPABehaviorAnnotation, hpaScaleDownToleranceAnnotation, hpaScaleUpToleranceAnnotation,
	HPACurrentMetricsAnnotation, HPAConditionsAnnotation,
}

// dropHPARoundTripAnnotations returns the annotations without the
// round-trip ones (a copy when any was there).
func dropHPARoundTripAnnotations(in map[string]string) map[string]string {
	found := false
	for _, k := range hpaRoundTripAnnotations {
		if _, ok := in[k]; ok {
			found = true
		}
	}
	if !found {
		return in
	}
	out := maps.Clone(in)
	for _, k := range hpaRoundTripAnnotations {
		delete(out, k)
	}
	return out
}

// internalHPABehavior and its parts are kube's internal behavior type,
// whose JSON (untagged Go field names) is the behavior annotation's.
type internalHPABehavior struct {
	ScaleUp   *internalHPAScalingRules
	ScaleDown *internalHPAScalingRules
}

type internalHPAScalingRules struct {
	StabilizationWindowSeconds *int32
	SelectPolicy               *autoscalingv2.ScalingPolicySelect
	Policies                   []internalHPAScalingPolicy
	Tolerance                  *resource.Quantity
}

type internalHPAScalingPolicy struct {
	Type          autoscalingv2.HPAScalingPolicyType
	Value         int32
	PeriodSeconds int32
}

func toInternalRules(r *autoscalingv2.HPAScalingRules) *internalHPAScalingRules {
	if r == nil {
		return nil
	}
	out := &internalHPAScalingRules{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
	if r.Policies != nil {
		out.Policies = make([]internalHPAScalingPolicy, len(r.Policies))
		for i, p := range r.Policies {
			out.Policies[i] = internalHPAScalingPolicy(p)
		}
	}
	return out
}

func fromInternalRules(r *internalHPAScalingRules) *autoscalingv2.HPAScalingRules {
	if r == nil {
		return nil
	}
	out := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
	if r.Policies != nil {
		out.Policies = make([]autoscalingv2.HPAScalingPolicy, len(r.Policies))
		for i, p := range r.Policies {
			out.Policies[i] = autoscalingv2.HPAScalingPolicy(p)
		}
	}
	return out
}

// isCPUUtilization tells whether a v2 metric is what v1's
// targetCPUUtilizationPercentage says.
func isCPUUtilization(m autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && m.Resource.Target.AverageUtilization != nil
}

// hpaV2ToV1 is kube's conversion of a HorizontalPodAutoscaler to
// autoscaling/v1 (through the internal type).
func hpaV2ToV1(in *autoscalingv2.HorizontalPodAutoscaler) *autoscalingv1.HorizontalPodAutoscaler {
	out := &autoscalingv1.HorizontalPodAutoscaler{
		TypeMeta:   in.TypeMeta,
		ObjectMeta: *in.ObjectMeta.DeepCopy(),
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
			MinReplicas:    clonePtr(in.Spec.MinReplicas),
			MaxReplicas:    in.Spec.MaxReplicas,
		},
		Status: autoscalingv1.HorizontalPodAutoscalerStatus{
			ObservedGeneration: clonePtr(in.Status.ObservedGeneration),
			LastScaleTime:      in.Status.LastScaleTime.DeepCopy(),
			CurrentReplicas:    in.Status.CurrentReplicas,
			DesiredReplicas:    in.Status.DesiredReplicas,
		},
	}
	if out.APIVersion != "" {
		out.APIVersion = autoscalingV1.String()
	}
	for _, m := range in.Spec.Metrics {
		if isCPUUtilization(m) {
			out.Spec.TargetCPUUtilizationPercentage = clonePtr(m.Resource.Target.AverageUtilization)
			break
		}
	}
	for _, m := range in.Status.CurrentMetrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && m.Resource.Current.AverageUtilization != nil {
			out.Status.CurrentCPUUtilizationPercentage = clonePtr(m.Resource.Current.AverageUtilization)
		}
	}
	ann := dropHPARoundTripAnnotations(out.Annotations)
	set := func(k string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			return
		}
		if ann == nil {
			ann = map[string]string{}
		}
		ann[k] = string(b)
	}
	var other []autoscalingv1.MetricSpec
	for _, m := range in.Spec.Metrics {
		if !isCPUUtilization(m) {
			other = append(other, metricSpecToV1(m))
		}
	}
	if len(other) > 0 {
		set(HPAMetricsAnnotation, other)
	}
	if len(in.Status.CurrentMetrics) > 0 {
		cur := make([]autoscalingv1.MetricStatus, len(in.Status.CurrentMetrics))
		for i, m := range in.Status.CurrentMetrics {
			cur[i] = metricStatusToV1(m)
		}
		set(HPACurrentMetricsAnnotation, cur)
	}
	if b := in.Spec.Behavior; b != nil {
		set(HPABehaviorAnnotation, internalHPABehavior{ScaleUp: toInternalRules(b.ScaleUp), ScaleDown: toInternalRules(b.ScaleDown)})
	}
	if len(in.Status.Conditions) > 0 {
		conds := make([]autoscalingv1.HorizontalPodAutoscalerCondition, len(in.Status.Conditions))
		for i, c := range in.Status.Conditions {
			conds[i] = autoscalingv1.HorizontalPodAutoscalerCondition{
				Type: autoscalingv1.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status,
				LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
				ObservedGeneration: clonePtr(c.ObservedGeneration),
			}
		}
		set(HPAConditionsAnnotation, conds)
	}
	out.Annotations = ann
	return out
}

// hpaV1ToV2 is kube's conversion of an autoscaling/v1
// HorizontalPodAutoscaler (to the internal type, whose shape is v2's),
// with the implicit 80% CPU target of an HPA that names no metric.
func hpaV1ToV2(in *autoscalingv1.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	out := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   in.TypeMeta,
		ObjectMeta: *in.ObjectMeta.DeepCopy(),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
			MinReplicas:    clonePtr(in.Spec.MinReplicas),
			MaxReplicas:    in.Spec.MaxReplicas,
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			ObservedGeneration: clonePtr(in.Status.ObservedGeneration),
			LastScaleTime:      in.Status.LastScaleTime.DeepCopy(),
			CurrentReplicas:    in.Status.CurrentReplicas,
			DesiredReplicas:    in.Status.DesiredReplicas,
		},
	}
	if out.APIVersion != "" {
		out.APIVersion = autoscalingV2.String()
	}
	if t := in.Spec.TargetCPUUtilizationPercentage; t != nil {
		m := defaultCPUMetric()
		m.Resource.Target.AverageUtilization = new(*t)
		out.Spec.Metrics = []autoscalingv2.MetricSpec{m}
	}
	if c := in.Status.CurrentCPUUtilizationPercentage; c != nil {
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{
			Type:     autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: new(*c)}},
		}}
	}
	ann := in.Annotations
	if enc, ok := ann[HPAMetricsAnnotation]; ok {
		var other []autoscalingv1.MetricSpec
		if err := json.Unmarshal([]byte(enc), &other); err == nil {
			metrics := make([]autoscalingv2.MetricSpec, 0, len(other)+1)
			for _, m := range other {
				metrics = append(metrics, metricSpecToV2(m))
			}
			if len(out.Spec.Metrics) > 0 {
				metrics = append(metrics, out.Spec.Metrics[0])
			}
			out.Spec.Metrics = metrics
		}
	}
	if enc, ok := ann[HPABehaviorAnnotation]; ok {
		var b internalHPABehavior
		if err := json.Unmarshal([]byte(enc), &b); err == nil && (b.ScaleUp != nil || b.ScaleDown != nil) {
			out.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: fromInternalRules(b.ScaleUp), ScaleDown: fromInternalRules(b.ScaleDown)}
		}
	}
	if enc, ok := ann[HPACurrentMetricsAnnotation]; ok {
		var cur []autoscalingv1.MetricStatus
		if err := json.Unmarshal([]byte(enc), &cur); err == nil {
			out.Status.CurrentMetrics = make([]autoscalingv2.MetricStatus, len(cur))
			for i, m := range cur {
				out.Status.CurrentMetrics[i] = metricStatusToV2(m)
			}
		}
	}
	if len(out.Spec.Metrics) == 0 {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{defaultCPUMetric()}
	}
	if enc, ok := ann[HPAConditionsAnnotation]; ok {
		var conds []autoscalingv1.HorizontalPodAutoscalerCondition
		if err := json.Unmarshal([]byte(enc), &conds); err == nil {
			out.Status.Conditions = make([]autoscalingv2.HorizontalPodAutoscalerCondition, len(conds))
			for i, c := range conds {
				out.Status.Conditions[i] = autoscalingv2.HorizontalPodAutoscalerCondition{
					Type: autoscalingv2.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status,
					LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
					ObservedGeneration: clonePtr(c.ObservedGeneration),
				}
			}
		}
	}
	out.Annotations = dropHPARoundTripAnnotations(out.Annotations)
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	return new(*p)
}

func v1Ref(r autoscalingv2.CrossVersionObjectReference) autoscalingv1.CrossVersionObjectReference {
	return autoscalingv1.CrossVersionObjectReference(r)
}

func v2Ref(r autoscalingv1.CrossVersionObjectReference) autoscalingv2.CrossVersionObjectReference {
	return autoscalingv2.CrossVersionObjectReference(r)
}

// metricSpecToV1 is kube's conversion of one metric to v1's MetricSpec.
func metricSpecToV1(m autoscalingv2.MetricSpec) autoscalingv1.MetricSpec {
	out := autoscalingv1.MetricSpec{Type: autoscalingv1.MetricSourceType(m.Type)}
	if s := m.Object; s != nil {
		o := &autoscalingv1.ObjectMetricSource{
			Target: v1Ref(s.DescribedObject), MetricName: s.Metric.Name, Selector: s.Metric.Selector,
			AverageValue: s.Target.AverageValue,
		}
		if s.Target.Value != nil {
			o.TargetValue = *s.Target.Value
		}
		out.Object = o
	}
	if s := m.Pods; s != nil {
		o := &autoscalingv1.PodsMetricSource{MetricName: s.Metric.Name, Selector: s.Metric.Selector}
		if s.Target.AverageValue != nil {
			o.TargetAverageValue = *s.Target.AverageValue
		}
		out.Pods = o
	}
	if s := m.Resource; s != nil {
		out.Resource = &autoscalingv1.ResourceMetricSource{Name: s.Name, TargetAverageUtilization: s.Target.AverageUtilization, TargetAverageValue: s.Target.AverageValue}
	}
	if s := m.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricSource{
			Name: s.Name, Container: s.Container, TargetAverageUtilization: s.Target.AverageUtilization, TargetAverageValue: s.Target.AverageValue,
		}
	}
	if s := m.External; s != nil {
		out.External = &autoscalingv1.ExternalMetricSource{
			MetricName: s.Metric.Name, MetricSelector: s.Metric.Selector, TargetValue: s.Target.Value, TargetAverageValue: s.Target.AverageValue,
		}
	}
	return out
}

// metricSpecToV2 is kube's conversion of one v1 MetricSpec.
func metricSpecToV2(m autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(m.Type)}
	if s := m.Object; s != nil {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, AverageValue: s.AverageValue}
		if s.AverageValue == nil {
			t.Value = new(s.TargetValue)
		} else {
			t.Type = autoscalingv2.AverageValueMetricType
			// A zero targetValue beside an averageValue is v1's
			// unomittable field, not a target.
			if !s.TargetValue.IsZero() {
				t.Value = new(s.TargetValue)
			}
		}
		out.Object = &autoscalingv2.ObjectMetricSource{
			DescribedObject: v2Ref(s.Target), Target: t,
			Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
		}
	}
	if s := m.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: new(s.TargetAverageValue)},
		}
	}
	if s := m.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: s.Name, Target: utilizationOrAverage(s.TargetAverageUtilization, s.TargetAverageValue)}
	}
	if s := m.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{
			Name: s.Name, Container: s.Container, Target: utilizationOrAverage(s.TargetAverageUtilization, s.TargetAverageValue),
		}
	}
	if s := m.External; s != nil {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: s.TargetValue, AverageValue: s.TargetAverageValue}
		if s.TargetValue == nil {
			t.Type = autoscalingv2.AverageValueMetricType
		}
		out.External = &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector}, Target: t,
		}
	}
	return out
}

func utilizationOrAverage(utilization *int32, average *resource.Quantity) autoscalingv2.MetricTarget {
	t := autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: utilization, AverageValue: average}
	if utilization == nil {
		t.Type = autoscalingv2.AverageValueMetricType
	}
	return t
}

// metricStatusToV1 is kube's conversion of one current metric to v1's
// MetricStatus.
func metricStatusToV1(m autoscalingv2.MetricStatus) autoscalingv1.MetricStatus {
	out := autoscalingv1.MetricStatus{Type: autoscalingv1.MetricSourceType(m.Type)}
	if s := m.Object; s != nil {
		o := &autoscalingv1.ObjectMetricStatus{
			Target: v1Ref(s.DescribedObject), MetricName: s.Metric.Name, Selector: s.Metric.Selector,
			AverageValue: clonePtr(s.Current.AverageValue),
		}
		if s.Current.Value != nil {
			o.CurrentValue = *s.Current.Value
		}
		out.Object = o
	}
	if s := m.Pods; s != nil {
		o := &autoscalingv1.PodsMetricStatus{MetricName: s.Metric.Name, Selector: s.Metric.Selector}
		if s.Current.AverageValue != nil {
			o.CurrentAverageValue = *s.Current.AverageValue
		}
		out.Pods = o
	}
	if s := m.Resource; s != nil {
		o := &autoscalingv1.ResourceMetricStatus{Name: s.Name, CurrentAverageUtilization: s.Current.AverageUtilization}
		if s.Current.AverageValue != nil {
			o.CurrentAverageValue = *s.Current.AverageValue
		}
		out.Resource = o
	}
	if s := m.ContainerResource; s != nil {
		o := &autoscalingv1.ContainerResourceMetricStatus{Name: s.Name, Container: s.Container, CurrentAverageUtilization: s.Current.AverageUtilization}
		if s.Current.AverageValue != nil {
			o.CurrentAverageValue = *s.Current.AverageValue
		}
		out.ContainerResource = o
	}
	if s := m.External; s != nil {
		o := &autoscalingv1.ExternalMetricStatus{MetricName: s.Metric.Name, MetricSelector: s.Metric.Selector, CurrentAverageValue: s.Current.AverageValue}
		if s.Current.Value != nil {
			o.CurrentValue = *s.Current.Value
		}
		out.External = o
	}
	return out
}

// metricStatusToV2 is kube's conversion of one v1 MetricStatus.
func metricStatusToV2(m autoscalingv1.MetricStatus) autoscalingv2.MetricStatus {
	out := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(m.Type)}
	if s := m.Object; s != nil {
		out.Object = &autoscalingv2.ObjectMetricStatus{
			DescribedObject: v2Ref(s.Target),
			Metric:          autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Current:         autoscalingv2.MetricValueStatus{Value: new(s.CurrentValue), AverageValue: s.AverageValue},
		}
	}
	if s := m.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Current: autoscalingv2.MetricValueStatus{AverageValue: new(s.CurrentAverageValue)},
		}
	}
	if s := m.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricStatus{Name: s.Name,
			Current: autoscalingv2.MetricValueStatus{AverageValue: new(s.CurrentAverageValue), AverageUtilization: s.CurrentAverageUtilization}}
	}
	if s := m.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{Name: s.Name, Container: s.Container,
			Current: autoscalingv2.MetricValueStatus{AverageValue: new(s.CurrentAverageValue), AverageUtilization: s.CurrentAverageUtilization}}
	}
	if s := m.External; s != nil {
		out.External = &autoscalingv2.ExternalMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector},
			Current: autoscalingv2.MetricValueStatus{Value: new(s.CurrentValue), AverageValue: s.CurrentAverageValue},
		}
	}
	return out
}
