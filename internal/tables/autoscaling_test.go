package tables

import (
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

func cpuUtilization(target int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptrTo(target)}}}
}

func hpaFixtures() []runtime.Object {
	target := autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	qps := resource.MustParse("10")
	mem := resource.MustParse("256Mi")
	return []runtime.Object{
		// Measured: "cpu: 30%/80%".
		&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: objMeta("web", 3*time.Hour),
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: target, MinReplicas: ptrTo[int32](2), MaxReplicas: 5,
				Metrics: []autoscalingv2.MetricSpec{cpuUtilization(80)}},
			Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, CurrentMetrics: []autoscalingv2.MetricStatus{{
				Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
					Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptrTo[int32](30)}}}}}},
		// Not measured yet, and more than two metrics.
		&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: objMeta("api", 10*time.Second),
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: target, MaxReplicas: 10, Metrics: []autoscalingv2.MetricSpec{
				cpuUtilization(80),
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &mem}}},
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &qps}}},
			}}},
		// No metrics at all.
		&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: objMeta("bare", time.Minute),
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: target, MaxReplicas: 3}},
	}
}

// TestHPAThroughAnotherVersion: a v1 HPA prints through its v2 form.
func TestHPAThroughAnotherVersion(t *testing.T) {
	table := HorizontalPodAutoscaler.Through(func(obj runtime.Object) runtime.Object {
		h := obj.(*autoscalingv1.HorizontalPodAutoscaler)
		return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: h.ObjectMeta,
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference(h.Spec.ScaleTargetRef),
				MaxReplicas: h.Spec.MaxReplicas, Metrics: []autoscalingv2.MetricSpec{cpuUtilization(*h.Spec.TargetCPUUtilizationPercentage)}}}
	}).Convertor(nil)
	cells, err := table.Row(&autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: objMeta("v1", time.Hour),
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web"},
			MaxReplicas: 4, TargetCPUUtilizationPercentage: ptrTo[int32](50)}})
	if err != nil {
		t.Fatal(err)
	}
	if cells[1] != "Deployment/web" || cells[2] != "cpu: <unknown>/50%" || cells[3] != "<unset>" || cells[4] != int64(4) {
		t.Errorf("cells %v", cells)
	}
}
