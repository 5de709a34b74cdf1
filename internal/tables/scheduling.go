package tables

import (
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PriorityClass is kube's PriorityClass printer: the value as an
// integer, globalDefault as a boolean, then Age, then the preemption
// policy (empty when unset).
var PriorityClass = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Value", "integer", schedulingv1.PriorityClass{}.SwaggerDoc()["value"]),
		col("Global-Default", "boolean", schedulingv1.PriorityClass{}.SwaggerDoc()["globalDefault"]),
		ageColumn(),
		col("PreemptionPolicy", "string", schedulingv1.PriorityClass{}.SwaggerDoc()["preemptionPolicy"]),
	},
	func(pc *schedulingv1.PriorityClass, now time.Time) []interface{} {
		policy := ""
		if pc.PreemptionPolicy != nil {
			policy = string(*pc.PreemptionPolicy)
		}
		return []interface{}{pc.Name, int64(pc.Value), pc.GlobalDefault, age(pc.CreationTimestamp, now), policy}
	},
)
