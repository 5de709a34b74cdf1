package tables

import (
	"time"

	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RuntimeClass is kube's RuntimeClass printer. Its Handler column's
// description is empty in kube (the printer looks "handler" up in
// ObjectMeta's docs); minik serves the same.
var RuntimeClass = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Handler", "string", objectMetaDoc["handler"]),
		ageColumn(),
	},
	func(rc *nodev1.RuntimeClass, now time.Time) []interface{} {
		return []interface{}{rc.Name, rc.Handler, age(rc.CreationTimestamp, now)}
	},
)
