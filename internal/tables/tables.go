package tables

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// metaTable builds a table whose cells need only the object's metadata, so
// it accepts objects of any kind.
func metaTable(columns []metav1.TableColumnDefinition, row func(m metav1.Object, now time.Time) []interface{}) Table {
	return Table{
		columns: columns,
		row: func(obj runtime.Object, now time.Time) ([]interface{}, error) {
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil, fmt.Errorf("print %T as a table: %w", obj, err)
			}
			return row(m, now), nil
		},
	}
}

// CreatedAt is kube-apiserver's generic table for built-in kinds that
// have no printer (rbac Role and ClusterRole, LimitRange among those we
// serve): Name and
// "Created At", an RFC 3339 UTC timestamp of type "date".
var CreatedAt = metaTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Created At", "date", objectMetaDoc["creationTimestamp"]),
	},
	func(m metav1.Object, _ time.Time) []interface{} {
		return []interface{}{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)}
	},
)
