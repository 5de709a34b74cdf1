package registry_test

import (
	"context"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"minik/internal/registry"
	"minik/internal/testserver"
)

// TestHPAServedAtBothVersions: one HorizontalPodAutoscaler, written through
// either autoscaling version, reads back through the other as kube's
// conversion has it, with its round-trip annotations; discovery prefers v2.
func TestHPAServedAtBothVersions(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{})
	cs := srv.Client(t)
	ctx := context.Background()
	const ns = "default"

	groups, err := cs.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups {
		if g.Name != "autoscaling" {
			continue
		}
		if g.PreferredVersion.Version != "v2" || len(g.Versions) != 2 || g.Versions[0].Version != "v2" || g.Versions[1].Version != "v1" {
			t.Errorf("autoscaling group %+v; want versions v2, v1 with v2 preferred", g)
		}
	}

	t.Run("v1 reads back as v2", func(t *testing.T) {
		v1 := &autoscalingv1.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: "from-v1"},
			Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
				MaxReplicas:    4,
			},
		}
		created, err := cs.AutoscalingV1().HorizontalPodAutoscalers(ns).Create(ctx, v1, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := created.Spec.TargetCPUUtilizationPercentage; c == nil || *c != 80 {
			t.Errorf("created v1 has targetCPUUtilizationPercentage %v; want kube's 80", c)
		}
		got, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "from-v1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Spec.Metrics) != 1 || got.Spec.Metrics[0].Resource == nil || got.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU ||
			*got.Spec.Metrics[0].Resource.Target.AverageUtilization != 80 || *got.Spec.MinReplicas != 1 {
			t.Errorf("v2 view: %+v", got.Spec)
		}
		if got.UID != created.UID || got.ResourceVersion != created.ResourceVersion {
			t.Errorf("v2 view is uid %s rv %s; want %s %s", got.UID, got.ResourceVersion, created.UID, created.ResourceVersion)
		}
		// A status written through v2 shows in v1's fields and annotations.
		got.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
			CurrentReplicas: 2, DesiredReplicas: 3,
			CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
				Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: new(int32(120))}}}},
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue,
				LastTransitionTime: metav1.Now(), Reason: "ReadyForNewScale", Message: "recommended size matches current size"}},
		}
		if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		back, err := cs.AutoscalingV1().HorizontalPodAutoscalers(ns).Get(ctx, "from-v1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := back.Status.CurrentCPUUtilizationPercentage; c == nil || *c != 120 || back.Status.DesiredReplicas != 3 {
			t.Errorf("v1 status %+v; want currentCPUUtilizationPercentage 120, desiredReplicas 3", back.Status)
		}
		if back.Annotations[registry.HPAConditionsAnnotation] == "" || back.Annotations[registry.HPACurrentMetricsAnnotation] == "" {
			t.Errorf("v1 annotations %v; want the conditions and current metrics", back.Annotations)
		}
		// Writing the v1 object back keeps the v2 status it carries.
		back.Labels = map[string]string{"touched": "yes"}
		if _, err := cs.AutoscalingV1().HorizontalPodAutoscalers(ns).Update(ctx, back, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		v2, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "from-v1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(v2.Status.Conditions) != 1 || len(v2.Annotations) != 0 || v2.Labels["touched"] != "yes" {
			t.Errorf("after a v1 update, v2 has conditions %v annotations %v labels %v", v2.Status.Conditions, v2.Annotations, v2.Labels)
		}
	})

	t.Run("v2 reads back as v1 with kube's annotations", func(t *testing.T) {
		v2 := &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: "from-v2"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
				MaxReplicas:    4,
				Metrics: []autoscalingv2.MetricSpec{
					{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
						Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: new(int32(70))}}},
				},
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: new(int32(10))}},
			},
		}
		if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, v2, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := cs.AutoscalingV1().HorizontalPodAutoscalers(ns).Get(ctx, "from-v2", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.TargetCPUUtilizationPercentage != nil {
			t.Errorf("targetCPUUtilizationPercentage %v; want none (the metric is memory)", *got.Spec.TargetCPUUtilizationPercentage)
		}
		want := map[string]string{
			registry.HPAMetricsAnnotation: `[{"type":"Resource","resource":{"name":"memory","targetAverageUtilization":70}}]`,
			registry.HPABehaviorAnnotation: `{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null},` +
				`"ScaleDown":{"StabilizationWindowSeconds":10,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null}}`,
		}
		for k, v := range want {
			if got.Annotations[k] != v {
				t.Errorf("annotation %s = %s; want %s", k, got.Annotations[k], v)
			}
		}
		if len(got.Annotations) != len(want) {
			t.Errorf("annotations %v; want %v", got.Annotations, want)
		}
		// A merge patch through v1 keeps what only v2 can say.
		if _, err := cs.AutoscalingV1().HorizontalPodAutoscalers(ns).Patch(ctx, "from-v2", types.MergePatchType, []byte(`{"spec":{"maxReplicas":6}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		after, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "from-v2", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if after.Spec.MaxReplicas != 6 || len(after.Spec.Metrics) != 1 || after.Spec.Metrics[0].Resource.Name != corev1.ResourceMemory ||
			after.Spec.Behavior == nil || *after.Spec.Behavior.ScaleDown.StabilizationWindowSeconds != 10 {
			t.Errorf("after a v1 patch, v2 spec %+v", after.Spec)
		}
	})

	t.Run("helm create's scaffold HPA applies", func(t *testing.T) {
		// templates/hpa.yaml of `helm create`, with autoscaling.enabled=true.
		manifest := []byte(`{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler",
"metadata":{"name":"release-name-mychart","labels":{"helm.sh/chart":"mychart-0.1.0","app.kubernetes.io/name":"mychart","app.kubernetes.io/instance":"release-name","app.kubernetes.io/version":"1.16.0","app.kubernetes.io/managed-by":"Helm"}},
"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"release-name-mychart"},"minReplicas":1,"maxReplicas":100,
"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}}]}}`)
		for range 2 {
			got, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Patch(ctx, "release-name-mychart", types.ApplyPatchType, manifest,
				metav1.PatchOptions{FieldManager: "helm", Force: new(true)})
			if err != nil {
				t.Fatal(err)
			}
			if got.Spec.MaxReplicas != 100 || len(got.ManagedFields) != 1 || got.ManagedFields[0].APIVersion != "autoscaling/v2" {
				t.Errorf("applied: maxReplicas %d, managedFields %+v", got.Spec.MaxReplicas, got.ManagedFields)
			}
		}
		v1, err := cs.AutoscalingV1().HorizontalPodAutoscalers(ns).Get(ctx, "release-name-mychart", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := v1.Spec.TargetCPUUtilizationPercentage; c == nil || *c != 80 || len(v1.Annotations) != 0 {
			t.Errorf("v1 view: targetCPUUtilizationPercentage %v, annotations %v", c, v1.Annotations)
		}
		// A v1 manager applying over it shares the fields through conversion.
		if _, err := cs.AutoscalingV1().HorizontalPodAutoscalers(ns).Patch(ctx, "release-name-mychart", types.ApplyPatchType,
			[]byte(`{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"release-name-mychart"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"release-name-mychart"},"maxReplicas":50}}`),
			metav1.PatchOptions{FieldManager: "ops", Force: new(true)}); err != nil {
			t.Fatal(err)
		}
		after, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "release-name-mychart", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if after.Spec.MaxReplicas != 50 || len(after.ManagedFields) != 2 {
			t.Errorf("after a v1 apply: maxReplicas %d, managedFields %+v", after.Spec.MaxReplicas, after.ManagedFields)
		}
	})
}
