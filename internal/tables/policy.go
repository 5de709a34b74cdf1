package tables

import (
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Tables of policy kinds.

// PodDisruptionBudget is kube's PodDisruptionBudget table: the bound
// that is set ("N/A" for the other) and the disruptions allowed now.
var PodDisruptionBudget = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Min Available", "string", "The minimum number of pods that must be available."),
		col("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
		col("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
		ageColumn(),
	},
	func(pdb *policyv1.PodDisruptionBudget, now time.Time) []interface{} {
		return []interface{}{
			pdb.Name,
			intOrStringOrNA(pdb.Spec.MinAvailable),
			intOrStringOrNA(pdb.Spec.MaxUnavailable),
			int64(pdb.Status.DisruptionsAllowed),
			age(pdb.CreationTimestamp, now),
		}
	},
)

func intOrStringOrNA(v *intstr.IntOrString) string {
	if v == nil {
		return "N/A"
	}
	return v.String()
}
