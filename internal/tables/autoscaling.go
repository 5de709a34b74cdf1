package tables

import (
	"fmt"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var (
	hpaSpecDoc   = autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()
	hpaStatusDoc = autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()
)

// HorizontalPodAutoscaler is kube's HorizontalPodAutoscaler printer, of
// autoscaling/v2 objects (other versions print through Through): the
// target as Kind/name, the first two metrics as current/target ("cpu:
// 30%/80%", "<unknown>" before the controller measured), MINPODS
// "<unset>" without minReplicas.
var HorizontalPodAutoscaler = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Reference", "string", hpaSpecDoc["scaleTargetRef"]),
		col("Targets", "string", hpaSpecDoc["metrics"]),
		col("MinPods", "string", hpaSpecDoc["minReplicas"]),
		col("MaxPods", "string", hpaSpecDoc["maxReplicas"]),
		col("Replicas", "string", hpaStatusDoc["currentReplicas"]),
		ageColumn(),
	},
	func(h *autoscalingv2.HorizontalPodAutoscaler, now time.Time) []interface{} {
		minPods := "<unset>"
		if h.Spec.MinReplicas != nil {
			minPods = fmt.Sprint(*h.Spec.MinReplicas)
		}
		return []interface{}{h.Name, h.Spec.ScaleTargetRef.Kind + "/" + h.Spec.ScaleTargetRef.Name,
			FormatHPAMetrics(h.Spec.Metrics, h.Status.CurrentMetrics), minPods,
			int64(h.Spec.MaxReplicas), int64(h.Status.CurrentReplicas), age(h.CreationTimestamp, now)}
	},
)

// Through returns the table of another version of t's kind: each object
// is converted to t's version, then printed.
func (t Table) Through(convert func(runtime.Object) runtime.Object) Table {
	row := t.row
	t.row = func(obj runtime.Object, now time.Time) ([]interface{}, error) {
		return row(convert(obj), now)
	}
	if cond := t.conditions; cond != nil {
		t.conditions = func(obj runtime.Object) []metav1.TableRowCondition { return cond(convert(obj)) }
	}
	return t
}

// FormatHPAMetrics is kube's formatHPAMetrics: each metric as
// current/target, at most two, then "+ N more...".
func FormatHPAMetrics(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	var list []string
	status := func(i int) *autoscalingv2.MetricStatus {
		if i < len(statuses) {
			return &statuses[i]
		}
		return nil
	}
	for i, spec := range specs {
		st := status(i)
		current := "<unknown>"
		switch {
		case spec.Type == autoscalingv2.ExternalMetricSourceType && spec.External != nil:
			if spec.External.Target.AverageValue != nil {
				if st != nil && st.External != nil && st.External.Current.AverageValue != nil {
					current = st.External.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", current, spec.External.Target.AverageValue))
			} else {
				if st != nil && st.External != nil {
					current = st.External.Current.Value.String()
				}
				list = append(list, fmt.Sprintf("%s/%s", current, spec.External.Target.Value.String()))
			}
		case spec.Type == autoscalingv2.PodsMetricSourceType && spec.Pods != nil:
			if st != nil && st.Pods != nil {
				current = st.Pods.Current.AverageValue.String()
			}
			list = append(list, fmt.Sprintf("%s/%s", current, spec.Pods.Target.AverageValue.String()))
		case spec.Type == autoscalingv2.ObjectMetricSourceType && spec.Object != nil:
			if spec.Object.Target.AverageValue != nil {
				if st != nil && st.Object != nil && st.Object.Current.AverageValue != nil {
					current = st.Object.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", current, spec.Object.Target.AverageValue))
			} else {
				if st != nil && st.Object != nil {
					current = st.Object.Current.Value.String()
				}
				list = append(list, fmt.Sprintf("%s/%s", current, spec.Object.Target.Value.String()))
			}
		case spec.Type == autoscalingv2.ResourceMetricSourceType && spec.Resource != nil:
			var cur *autoscalingv2.MetricValueStatus
			if st != nil && st.Resource != nil {
				cur = &st.Resource.Current
			}
			list = append(list, resourceTarget(string(spec.Resource.Name), spec.Resource.Target, cur))
		case spec.Type == autoscalingv2.ContainerResourceMetricSourceType && spec.ContainerResource != nil:
			var cur *autoscalingv2.MetricValueStatus
			if st != nil && st.ContainerResource != nil {
				cur = &st.ContainerResource.Current
			}
			list = append(list, resourceTarget(string(spec.ContainerResource.Name), spec.ContainerResource.Target, cur))
		default:
			list = append(list, "<unknown type>")
		}
	}
	if len(list) > 2 {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:2], ", "), len(list)-2)
	}
	return strings.Join(list, ", ")
}

// resourceTarget is one resource metric: "cpu: 250m/500m" for an average
// value, "cpu: 30%/80%" for a utilization.
func resourceTarget(name string, target autoscalingv2.MetricTarget, cur *autoscalingv2.MetricValueStatus) string {
	current := "<unknown>"
	if target.AverageValue != nil {
		if cur != nil {
			current = cur.AverageValue.String()
		}
		return fmt.Sprintf("%s: %s/%s", name, current, target.AverageValue)
	}
	if cur != nil && cur.AverageUtilization != nil {
		current = fmt.Sprintf("%d%%", *cur.AverageUtilization)
	}
	want := "<auto>"
	if target.AverageUtilization != nil {
		want = fmt.Sprintf("%d%%", *target.AverageUtilization)
	}
	return fmt.Sprintf("%s: %s/%s", name, current, want)
}
