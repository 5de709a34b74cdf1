package registry

import (
	"encoding/json"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/equality"
)

// Validation, defaults and version conversion of HorizontalPodAutoscalers,
// with kube's messages and annotations.

const hpaHead = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: demo}
`

const hpaTarget = "scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}"

func TestHPAValidation(t *testing.T) {
	runCreateCases(t, []createCase{
		{"helm's scaffold is valid", hpaHead + "spec: {" + hpaTarget + ", minReplicas: 1, maxReplicas: 100, " +
			"metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}]}", ""},
		{"maxReplicas is required", hpaHead + "spec: {" + hpaTarget + "}",
			"spec.maxReplicas: Required value: must be set and greater than 0\n" +
				"spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`"},
		{"maxReplicas is at least minReplicas", hpaHead + "spec: {" + hpaTarget + ", minReplicas: 3, maxReplicas: 2}",
			"spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"},
		{"the target names its group", hpaHead + "spec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 2}",
			`spec.scaleTargetRef.apiVersion: Invalid value: "": apiVersion must specify API group`},
		{"a ReplicationController target may be in the core group", hpaHead + "spec: {scaleTargetRef: {apiVersion: v1, kind: ReplicationController, name: web}, maxReplicas: 2}", ""},
		{"the target has a kind and a name", hpaHead + "spec: {scaleTargetRef: {apiVersion: apps/v1}, maxReplicas: 2}",
			"spec.scaleTargetRef.kind: Required value\nspec.scaleTargetRef.name: Required value"},
		{"scaling to zero needs an Object or External metric", hpaHead + "spec: {" + hpaTarget + ", minReplicas: 0, maxReplicas: 2}",
			"spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas"},
		{"utilization is positive", hpaHead + "spec: {" + hpaTarget + ", maxReplicas: 2, metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 0}}}]}",
			"spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0"},
		{"a metric populates its own source", hpaHead + "spec: {" + hpaTarget + ", maxReplicas: 2, metrics: [{type: Pods, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]}",
			"spec.metrics[0].pods: Required value: must populate information for the given metric source"},
		{"and only that one", hpaHead + "spec: {" + hpaTarget + ", maxReplicas: 2, metrics: [{type: Pods, pods: {metric: {name: qps}, target: {type: AverageValue, averageValue: 1}}, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]}",
			"spec.metrics[0].resource: Forbidden: must populate the given metric source only"},
		{"metric types are kube's", hpaHead + "spec: {" + hpaTarget + ", maxReplicas: 2, metrics: [{type: Bogus}]}",
			`spec.metrics[0].type: Unsupported value: "Bogus": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"` + "\n" +
				`spec.metrics[0].type: Unsupported value: "Bogus": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"`},
		{"a resource target is a utilization or a value", hpaHead + "spec: {" + hpaTarget + ", maxReplicas: 2, metrics: [{type: Resource, resource: {name: memory, target: {type: AverageValue}}}]}",
			"spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization"},
		{"behavior rules are bounded", hpaHead + "spec: {" + hpaTarget + ", maxReplicas: 2, behavior: {scaleUp: {stabilizationWindowSeconds: 4000, selectPolicy: Most, policies: [{type: Bogus, value: 0, periodSeconds: 2000}]}, scaleDown: {policies: []}}}",
			"spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 4000: must be less than or equal to 3600\n" +
				`spec.behavior.scaleUp.selectPolicy: Unsupported value: "Most": supported values: "Disabled", "Max", "Min"` + "\n" +
				`spec.behavior.scaleUp.policies[0].type: Unsupported value: "Bogus": supported values: "Percent", "Pods"` + "\n" +
				"spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero\n" +
				"spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 2000: must be less than or equal to 1800\n" +
				"spec.behavior.scaleDown.policies: Required value: must specify at least one Policy"},
		{"v1 is validated in v2's terms", "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: web, namespace: demo}\n" +
			"spec: {" + hpaTarget + ", maxReplicas: 2, targetCPUUtilizationPercentage: 0}",
			"spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0"},
	})
}

func TestHPADefaults(t *testing.T) {
	t.Run("v2: minReplicas 1, 80% CPU, behavior filled in where given", func(t *testing.T) {
		h := decode(t, hpaHead+"spec: {"+hpaTarget+", maxReplicas: 5, behavior: {scaleDown: {stabilizationWindowSeconds: 60}}}")
		sameJSON(t, defaulted(h), hpaHead+`spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 5
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}]
  behavior:
    scaleUp:
      stabilizationWindowSeconds: 0
      selectPolicy: Max
      policies: [{type: Pods, value: 4, periodSeconds: 15}, {type: Percent, value: 100, periodSeconds: 15}]
    scaleDown:
      stabilizationWindowSeconds: 60
      selectPolicy: Max
      policies: [{type: Percent, value: 100, periodSeconds: 15}]
status: {currentMetrics: null, desiredReplicas: 0}
`)
	})
	t.Run("v1: minReplicas 1; the CPU target comes with conversion", func(t *testing.T) {
		h := decode(t, "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: web, namespace: demo}\nspec: {"+hpaTarget+", maxReplicas: 5}").(*autoscalingv1.HorizontalPodAutoscaler)
		defaulted(h)
		back := hpaV1View.FromStored(hpaV1View.ToStored(h)).(*autoscalingv1.HorizontalPodAutoscaler)
		if m, c := back.Spec.MinReplicas, back.Spec.TargetCPUUtilizationPercentage; m == nil || *m != 1 || c == nil || *c != 80 {
			t.Errorf("minReplicas %v, targetCPUUtilizationPercentage %v; want 1 and 80", m, c)
		}
		if len(back.Annotations) != 0 {
			t.Errorf("annotations %v; want none", back.Annotations)
		}
	})
	t.Run("v2 drops v1's round-trip annotations", func(t *testing.T) {
		h := decode(t, "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n"+
			"metadata: {name: web, namespace: demo, annotations: {autoscaling.alpha.kubernetes.io/conditions: '[]', keep: me}}\n"+
			"spec: {"+hpaTarget+", maxReplicas: 5}").(*autoscalingv2.HorizontalPodAutoscaler)
		defaulted(h)
		if len(h.Annotations) != 1 || h.Annotations["keep"] != "me" {
			t.Errorf("annotations %v; want keep=me only", h.Annotations)
		}
	})
}

// TestHPAConversion: what v1 cannot say rides in kube's annotations,
// in kube's encodings, and comes back.
func TestHPAConversion(t *testing.T) {
	v2 := decode(t, hpaHead+`spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - {type: Pods, pods: {metric: {name: qps}, target: {type: AverageValue, averageValue: "10"}}}
  - {type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}
  behavior:
    scaleDown: {stabilizationWindowSeconds: 30, policies: [{type: Pods, value: 1, periodSeconds: 60}]}
status:
  currentReplicas: 2
  desiredReplicas: 3
  currentMetrics:
  - {type: Resource, resource: {name: cpu, current: {averageUtilization: 90, averageValue: 90m}}}
  conditions:
  - {type: AbleToScale, status: "True", lastTransitionTime: "2026-01-01T00:00:00Z", reason: SucceededRescale, message: done}
`).(*autoscalingv2.HorizontalPodAutoscaler)
	v1 := hpaV2ToV1(v2)
	if c := v1.Spec.TargetCPUUtilizationPercentage; c == nil || *c != 60 {
		t.Errorf("targetCPUUtilizationPercentage %v; want 60", c)
	}
	if c := v1.Status.CurrentCPUUtilizationPercentage; c == nil || *c != 90 {
		t.Errorf("currentCPUUtilizationPercentage %v; want 90", c)
	}
	want := map[string]string{
		HPAMetricsAnnotation:        `[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]`,
		HPACurrentMetricsAnnotation: `[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":90,"currentAverageValue":"90m"}}]`,
		HPAConditionsAnnotation:     `[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"SucceededRescale","message":"done"}]`,
		HPABehaviorAnnotation:       `{"ScaleUp":null,"ScaleDown":{"StabilizationWindowSeconds":30,"SelectPolicy":null,"Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":60}],"Tolerance":null}}`,
	}
	if !equality.Semantic.DeepEqual(v1.Annotations, want) {
		got, _ := json.MarshalIndent(v1.Annotations, "", "  ")
		t.Errorf("annotations\n%s", got)
	}
	back := hpaV1ToV2(v1)
	if !equality.Semantic.DeepEqual(back, v2) {
		g, _ := json.Marshal(back)
		w, _ := json.Marshal(v2)
		t.Errorf("v2 → v1 → v2 =\n%s\nwant\n%s", g, w)
	}
}
