package registry

import (
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// This file holds the autoscaling group: HorizontalPodAutoscalers, served
// at autoscaling/v2 (kube's storage and preferred version) and at
// autoscaling/v1, a view of the same stored objects converted as kube's
// pkg/apis/autoscaling/v1 conversion does (autoscaling_convert.go). kube
// validates the internal form, whose shape is v2's, so both versions are
// validated as v2 objects, with v2's field paths. v1.37's gates:
// HPAScaleToZero (beta, on: minReplicas may be 0 with an Object or
// External metric), HPAConfigurableTolerance (on) and HPAGeneration (on:
// metadata.generation bumped on spec changes, as the generic layer does).

var (
	autoscalingV1 = schema.GroupVersion{Group: "autoscaling", Version: "v1"}
	autoscalingV2 = schema.GroupVersion{Group: "autoscaling", Version: "v2"}
)

// horizontalPodAutoscalers: autoscaling/v2 HorizontalPodAutoscalers, the
// stored form.
var horizontalPodAutoscalers = &Resource{
	GroupVersion: autoscalingV2, Name: "horizontalpodautoscalers", SingularName: "horizontalpodautoscaler", Kind: "HorizontalPodAutoscaler",
	Namespaced: true, ShortNames: []string{"hpa"}, Categories: []string{"all"}, HasStatus: true,
	Strategy: Strategy{
		Default:        defaulter(defaultHPA),
		Validate:       validator(validateHPA),
		ValidateUpdate: updateValidator(validateHPAUpdate),
		Table:          tables.HorizontalPodAutoscaler.Convertor(nil),
	},
}

// horizontalPodAutoscalersV1: autoscaling/v1 HorizontalPodAutoscalers, a
// view of the v2 objects.
var horizontalPodAutoscalersV1 = &Resource{
	GroupVersion: autoscalingV1, Name: "horizontalpodautoscalers", SingularName: "horizontalpodautoscaler", Kind: "HorizontalPodAutoscaler",
	Namespaced: true, ShortNames: []string{"hpa"}, Categories: []string{"all"}, HasStatus: true,
	StoredAs: hpaV1View,
	Strategy: Strategy{
		Default: defaulter(defaultHPAV1),
		Validate: validator(func(h *autoscalingv1.HorizontalPodAutoscaler) field.ErrorList {
			return validateHPA(hpaV1ToV2(h))
		}),
		ValidateUpdate: updateValidator(func(h, old *autoscalingv1.HorizontalPodAutoscaler) field.ErrorList {
			return validateHPAUpdate(hpaV1ToV2(h), hpaV1ToV2(old))
		}),
		Table: tables.HorizontalPodAutoscaler.Through(hpaV1View.ToStored).Convertor(nil),
	},
}

// hpaV1View serves the stored v2 objects as autoscaling/v1 ones.
var hpaV1View = &StorageView{
	Resource: "horizontalpodautoscalers",
	New:      func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
	ToStored: func(obj runtime.Object) runtime.Object {
		h := hpaV1ToV2(obj.(*autoscalingv1.HorizontalPodAutoscaler))
		// kube applies v2's defaults whenever it decodes the stored form.
		defaultHPA(h)
		return h
	},
	FromStored: func(obj runtime.Object) runtime.Object {
		return hpaV2ToV1(obj.(*autoscalingv2.HorizontalPodAutoscaler))
	},
}

// Kube's autoscaling/v2 behavior defaults: scale up by at most 4 pods or
// 100% every 15 s, whichever is more, with no stabilization; scale down
// by up to 100% every 15 s, stabilized over the controller's window (the
// field is left unset).
const (
	hpaScaleUpLimitPercent     int32 = 100
	hpaScaleUpLimitMinimumPods int32 = 4
	hpaScaleUpPeriod           int32 = 15
	hpaScaleDownLimitPercent   int32 = 100
	hpaScaleDownPeriod         int32 = 15
	// hpaDefaultCPUUtilization is the target of an HPA without metrics.
	hpaDefaultCPUUtilization int32 = 80
)

// defaultHPA is kube's SetDefaults_HorizontalPodAutoscaler (v2).
// It also drops v1's round-trip annotations, as kube's conversion from
// v2 does on every write.
func defaultHPA(h *autoscalingv2.HorizontalPodAutoscaler) {
	h.Annotations = dropHPARoundTripAnnotations(h.Annotations)
	if h.Spec.MinReplicas == nil {
		h.Spec.MinReplicas = new(int32(1))
	}
	if len(h.Spec.Metrics) == 0 {
		h.Spec.Metrics = []autoscalingv2.MetricSpec{defaultCPUMetric()}
	}
	if b := h.Spec.Behavior; b != nil {
		b.ScaleUp = hpaScaleUpRules(b.ScaleUp)
		b.ScaleDown = hpaScaleDownRules(b.ScaleDown)
	}
}

// defaultCPUMetric is the metric of an HPA that names none: 80% of the
// pods' CPU requests.
func defaultCPUMetric() autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{
			Name:   corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: new(hpaDefaultCPUUtilization)},
		},
	}
}

// hpaScaleUpRules returns rules with kube's scale-up defaults filled in
// where unset (kube's GenerateHPAScaleUpRules); nil rules are the
// defaults.
func hpaScaleUpRules(rules *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	sel := autoscalingv2.MaxChangePolicySelect
	return mergeScalingRules(rules, &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: new(int32(0)),
		SelectPolicy:               &sel,
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: hpaScaleUpLimitMinimumPods, PeriodSeconds: hpaScaleUpPeriod},
			{Type: autoscalingv2.PercentScalingPolicy, Value: hpaScaleUpLimitPercent, PeriodSeconds: hpaScaleUpPeriod},
		},
	})
}

// hpaScaleDownRules is hpaScaleUpRules for scale-down (kube's
// GenerateHPAScaleDownRules); the stabilization window stays unset,
// meaning the controller's default.
func hpaScaleDownRules(rules *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	sel := autoscalingv2.MaxChangePolicySelect
	return mergeScalingRules(rules, &autoscalingv2.HPAScalingRules{
		SelectPolicy: &sel,
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: hpaScaleDownLimitPercent, PeriodSeconds: hpaScaleDownPeriod},
		},
	})
}

// mergeScalingRules is kube's copyHPAScalingRules: from's set fields over
// the defaults to.
func mergeScalingRules(from, to *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if from == nil {
		return to
	}
	if from.SelectPolicy != nil {
		to.SelectPolicy = from.SelectPolicy
	}
	if from.StabilizationWindowSeconds != nil {
		to.StabilizationWindowSeconds = from.StabilizationWindowSeconds
	}
	if from.Policies != nil {
		to.Policies = from.Policies
	}
	if from.Tolerance != nil {
		to.Tolerance = from.Tolerance
	}
	return to
}

// defaultHPAV1 is kube's v1 defaulting: minReplicas 1. The CPU target
// of an HPA without metrics is defaulted in conversion (hpaV1ToV2), which
// sees the metrics annotation.
func defaultHPAV1(h *autoscalingv1.HorizontalPodAutoscaler) {
	if h.Spec.MinReplicas == nil {
		h.Spec.MinReplicas = new(int32(1))
	}
}

// ---- validation (kube's pkg/apis/autoscaling/validation) ----

// Limits of kube's HPA validation.
const (
	hpaMaxPeriodSeconds              int32 = 1800
	hpaMaxStabilizationWindowSeconds int32 = 3600
)

func validateHPA(h *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	errs := validateObjectMeta(&h.ObjectMeta, true, nameIsDNSSubdomain)
	return append(errs, validateHPASpec(&h.Spec, specPath, nil)...)
}

// validateHPAUpdate validates an update of either the object or its
// status (a status write keeps the spec, a main write the status): kube's
// update and status-update rules together.
func validateHPAUpdate(h, old *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	errs := validateObjectMetaUpdate(&h.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateHPASpec(&h.Spec, specPath, old)...)
	for i, c := range h.Status.Conditions {
		if c.ObservedGeneration != nil {
			errs = append(errs, validateNonnegative(*c.ObservedGeneration, field.NewPath("status", "conditions").Index(i).Child("observedGeneration"))...)
		}
	}
	errs = append(errs, validateNonnegative(int64(h.Status.CurrentReplicas), field.NewPath("status", "currentReplicas"))...)
	return append(errs, validateNonnegative(int64(h.Status.DesiredReplicas), field.NewPath("status", "desiredReplicas"))...)
}

// refOptions are kube's CrossVersionObjectReferenceValidationOptions.
type refOptions struct {
	allowEmptyAPIGroup, allowInvalidAPIVersion bool
}

// validateHPASpec is kube's validateHorizontalPodAutoscalerSpec with the
// options its strategy computes from the stored object (old, nil on
// create).
func validateHPASpec(s *autoscalingv2.HorizontalPodAutoscalerSpec, p *field.Path, old *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	var errs field.ErrorList
	// HPAScaleToZero is on in v1.37: the lower bound is 0.
	if s.MinReplicas != nil && *s.MinReplicas < 0 {
		errs = append(errs, field.Invalid(p.Child("minReplicas"), *s.MinReplicas, "must be greater than or equal to 0"))
	}
	if s.MaxReplicas == 0 {
		errs = append(errs, field.Required(p.Child("maxReplicas"), "must be set and greater than 0"))
	} else if s.MaxReplicas < 0 {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be greater than or equal to 1"))
	}
	if s.MinReplicas != nil && s.MaxReplicas < *s.MinReplicas {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	targetOpts := refOptions{}
	switch {
	case old != nil && old.Spec.ScaleTargetRef.APIVersion == s.ScaleTargetRef.APIVersion && old.Spec.ScaleTargetRef.Kind == s.ScaleTargetRef.Kind:
		targetOpts.allowInvalidAPIVersion = true
	case s.ScaleTargetRef.Kind == "ReplicationController":
		targetOpts.allowEmptyAPIGroup = true
	}
	errs = append(errs, validateCrossVersionRef(s.ScaleTargetRef, p.Child("scaleTargetRef"), targetOpts)...)
	metricOpts := refOptions{allowEmptyAPIGroup: true}
	if old != nil {
		for _, m := range old.Spec.Metrics {
			if m.Type == autoscalingv2.ObjectMetricSourceType && m.Object != nil && validateRefAPIVersion(m.Object.DescribedObject, metricOpts) != nil {
				metricOpts.allowInvalidAPIVersion = true
				break
			}
		}
	}
	errs = append(errs, validateHPAMetrics(s.Metrics, p.Child("metrics"), s.MinReplicas, metricOpts)...)
	if b := s.Behavior; b != nil {
		errs = append(errs, validateScalingRules(b.ScaleUp, p.Child("behavior", "scaleUp"))...)
		errs = append(errs, validateScalingRules(b.ScaleDown, p.Child("behavior", "scaleDown"))...)
	}
	return errs
}

func validateCrossVersionRef(ref autoscalingv2.CrossVersionObjectReference, p *field.Path, opts refOptions) field.ErrorList {
	var errs field.ErrorList
	if ref.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	} else {
		for _, msg := range pathSegmentName(ref.Kind, false) {
			errs = append(errs, field.Invalid(p.Child("kind"), ref.Kind, msg))
		}
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		for _, msg := range pathSegmentName(ref.Name, false) {
			errs = append(errs, field.Invalid(p.Child("name"), ref.Name, msg))
		}
	}
	if err := validateRefAPIVersion(ref, opts); err != nil {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), ref.APIVersion, err.Error()))
	}
	return errs
}

// validateRefAPIVersion is kube's ValidateAPIVersion.
func validateRefAPIVersion(ref autoscalingv2.CrossVersionObjectReference, opts refOptions) error {
	if opts.allowInvalidAPIVersion {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return err
	}
	if !opts.allowEmptyAPIGroup && gv.Group == "" {
		return fmt.Errorf("apiVersion must specify API group")
	}
	return nil
}

func validateHPAMetrics(metrics []autoscalingv2.MetricSpec, p *field.Path, minReplicas *int32, opts refOptions) field.ErrorList {
	var errs field.ErrorList
	objectOrExternal := false
	for i, m := range metrics {
		errs = append(errs, validateMetricSpec(m, p.Index(i), opts)...)
		if m.Type == autoscalingv2.ObjectMetricSourceType || m.Type == autoscalingv2.ExternalMetricSourceType {
			objectOrExternal = true
		}
	}
	if minReplicas != nil && *minReplicas == 0 && !objectOrExternal {
		errs = append(errs, field.Forbidden(p, "must specify at least one Object or External metric to support scaling to zero replicas"))
	}
	return errs
}

var (
	validSelectPolicies = []string{string(autoscalingv2.DisabledPolicySelect), string(autoscalingv2.MaxChangePolicySelect), string(autoscalingv2.MinChangePolicySelect)}
	validPolicyTypes    = []string{string(autoscalingv2.PercentScalingPolicy), string(autoscalingv2.PodsScalingPolicy)}
	validMetricSources  = []string{
		string(autoscalingv2.ContainerResourceMetricSourceType), string(autoscalingv2.ExternalMetricSourceType),
		string(autoscalingv2.ObjectMetricSourceType), string(autoscalingv2.PodsMetricSourceType), string(autoscalingv2.ResourceMetricSourceType),
	}
)

func validateScalingRules(r *autoscalingv2.HPAScalingRules, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if w := r.StabilizationWindowSeconds; w != nil && *w < 0 {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), w, "must be greater than or equal to zero"))
	}
	if w := r.StabilizationWindowSeconds; w != nil && *w > hpaMaxStabilizationWindowSeconds {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), w, fmt.Sprintf("must be less than or equal to %v", hpaMaxStabilizationWindowSeconds)))
	}
	if s := r.SelectPolicy; s != nil && !sets.New(validSelectPolicies...).Has(string(*s)) {
		errs = append(errs, field.NotSupported(p.Child("selectPolicy"), s, validSelectPolicies))
	}
	pp := p.Child("policies")
	if len(r.Policies) == 0 {
		errs = append(errs, field.Required(pp, "must specify at least one Policy"))
	}
	for i, pol := range r.Policies {
		ip := pp.Index(i)
		if pol.Type != autoscalingv2.PodsScalingPolicy && pol.Type != autoscalingv2.PercentScalingPolicy {
			errs = append(errs, field.NotSupported(ip.Child("type"), pol.Type, validPolicyTypes))
		}
		if pol.Value <= 0 {
			errs = append(errs, field.Invalid(ip.Child("value"), pol.Value, "must be greater than zero"))
		}
		if pol.PeriodSeconds <= 0 {
			errs = append(errs, field.Invalid(ip.Child("periodSeconds"), pol.PeriodSeconds, "must be greater than zero"))
		}
		if pol.PeriodSeconds > hpaMaxPeriodSeconds {
			errs = append(errs, field.Invalid(ip.Child("periodSeconds"), pol.PeriodSeconds, fmt.Sprintf("must be less than or equal to %v", hpaMaxPeriodSeconds)))
		}
	}
	if t := r.Tolerance; t != nil && t.Cmp(resource.Quantity{}) < 0 {
		errs = append(errs, field.Invalid(p.Child("tolerance"), t.String(), "must be greater than or equal to 0"))
	}
	return errs
}

// validateMetricSpec is kube's: exactly the source its type names, and
// that source's rules.
func validateMetricSpec(m autoscalingv2.MetricSpec, p *field.Path, opts refOptions) field.ErrorList {
	var errs field.ErrorList
	if m.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric source type"))
	}
	if !sets.New(validMetricSources...).Has(string(m.Type)) {
		errs = append(errs, field.NotSupported(p.Child("type"), m.Type, validMetricSources))
	}
	present := sets.New[string]()
	if m.Object != nil {
		present.Insert("object")
		if present.Len() == 1 {
			errs = append(errs, validateObjectMetricSource(m.Object, p.Child("object"), opts)...)
		}
	}
	if m.External != nil {
		present.Insert("external")
		if present.Len() == 1 {
			errs = append(errs, validateExternalMetricSource(m.External, p.Child("external"))...)
		}
	}
	if m.Pods != nil {
		present.Insert("pods")
		if present.Len() == 1 {
			errs = append(errs, validatePodsMetricSource(m.Pods, p.Child("pods"))...)
		}
	}
	if m.Resource != nil {
		present.Insert("resource")
		if present.Len() == 1 {
			errs = append(errs, validateResourceMetricSource(m.Resource.Name, m.Resource.Target, p.Child("resource"))...)
		}
	}
	if m.ContainerResource != nil {
		present.Insert("containerResource")
		if present.Len() == 1 {
			errs = append(errs, validateContainerResourceMetricSource(m.ContainerResource, p.Child("containerResource"))...)
		}
	}
	expected := ""
	switch m.Type {
	case autoscalingv2.ObjectMetricSourceType:
		expected = "object"
		if m.Object == nil {
			errs = append(errs, field.Required(p.Child(expected), "must populate information for the given metric source"))
		}
	case autoscalingv2.PodsMetricSourceType:
		expected = "pods"
		if m.Pods == nil {
			errs = append(errs, field.Required(p.Child(expected), "must populate information for the given metric source"))
		}
	case autoscalingv2.ResourceMetricSourceType:
		expected = "resource"
		if m.Resource == nil {
			errs = append(errs, field.Required(p.Child(expected), "must populate information for the given metric source"))
		}
	case autoscalingv2.ExternalMetricSourceType:
		expected = "external"
		if m.External == nil {
			errs = append(errs, field.Required(p.Child(expected), "must populate information for the given metric source"))
		}
	case autoscalingv2.ContainerResourceMetricSourceType:
		expected = "containerResource"
		if m.ContainerResource == nil {
			errs = append(errs, field.Required(p.Child(expected), "must populate information for the given metric source"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), m.Type, validMetricSources))
	}
	if present.Len() != 1 {
		present.Delete(expected)
		for _, typ := range sets.List(present) {
			errs = append(errs, field.Forbidden(p.Child(typ), "must populate the given metric source only"))
		}
	}
	return errs
}

func validateObjectMetricSource(s *autoscalingv2.ObjectMetricSource, p *field.Path, opts refOptions) field.ErrorList {
	errs := validateCrossVersionRef(s.DescribedObject, p.Child("describedObject"), opts)
	errs = append(errs, validateMetricIdentifier(s.Metric, p.Child("metric"))...)
	errs = append(errs, validateMetricTarget(s.Target, p.Child("target"))...)
	if s.Target.Value == nil && s.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value or averageValue"))
	}
	return errs
}

func validateExternalMetricSource(s *autoscalingv2.ExternalMetricSource, p *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(s.Metric, p.Child("metric"))
	errs = append(errs, validateMetricTarget(s.Target, p.Child("target"))...)
	if s.Target.Value == nil && s.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value for metric or a per-pod target"))
	}
	if s.Target.Value != nil && s.Target.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("target", "value"), "may not set both a target value for metric and a per-pod target"))
	}
	return errs
}

func validatePodsMetricSource(s *autoscalingv2.PodsMetricSource, p *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(s.Metric, p.Child("metric"))
	errs = append(errs, validateMetricTarget(s.Target, p.Child("target"))...)
	if s.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must specify a positive target averageValue"))
	}
	return errs
}

func validateContainerResourceMetricSource(s *autoscalingv2.ContainerResourceMetricSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	} else {
		errs = append(errs, validateContainerResourceName(s.Name, p.Child("name"))...)
	}
	if s.Container == "" {
		errs = append(errs, field.Required(p.Child("container"), "must specify a container"))
	} else {
		errs = append(errs, validateDNS1123Label(s.Container, p.Child("container"))...)
	}
	return append(errs, validateUtilizationOrValue(s.Target, p.Child("target"))...)
}

func validateResourceMetricSource(name corev1.ResourceName, t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	}
	return append(errs, validateUtilizationOrValue(t, p.Child("target"))...)
}

// validateUtilizationOrValue: a resource target is a utilization or an
// average value, not both.
func validateUtilizationOrValue(t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	errs := validateMetricTarget(t, p)
	if t.AverageUtilization == nil && t.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if t.AverageUtilization != nil && t.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return errs
}

func validateMetricTarget(t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric target type"))
	}
	if t.Type != autoscalingv2.UtilizationMetricType && t.Type != autoscalingv2.ValueMetricType && t.Type != autoscalingv2.AverageValueMetricType {
		errs = append(errs, field.Invalid(p.Child("type"), t.Type, "must be either Utilization, Value, or AverageValue"))
	}
	if t.Value != nil && t.Value.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("averageValue"), t.AverageValue, "must be positive"))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(p.Child("averageUtilization"), t.AverageUtilization, "must be greater than 0"))
	}
	return errs
}

func validateMetricIdentifier(id autoscalingv2.MetricIdentifier, p *field.Path) field.ErrorList {
	if id.Name == "" {
		return field.ErrorList{field.Required(p.Child("name"), "must specify a metric name")}
	}
	var errs field.ErrorList
	for _, msg := range pathSegmentName(id.Name, false) {
		errs = append(errs, field.Invalid(p.Child("name"), id.Name, msg))
	}
	return errs
}
