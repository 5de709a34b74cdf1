package tables

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Lease is kubectl's table of coordination.k8s.io Leases.
var Lease = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Holder", "string", coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]),
		ageColumn(),
	},
	func(l *coordinationv1.Lease, now time.Time) []interface{} {
		holder := ""
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		return []interface{}{l.Name, holder, age(l.CreationTimestamp, now)}
	},
)
