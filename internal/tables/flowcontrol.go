package tables

import (
	"cmp"
	"strings"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The flowcontrol.apiserver.k8s.io and storagemigration.k8s.io tables,
// with kube's columns.

// FlowSchema is kube's FlowSchema printer: the priority level, the
// matching precedence, the distinguisher method (<none>) and, last, the
// status of the Dangling condition ("?" without one); a list's rows in
// matching order (precedence, then name), as kube sorts them.
var FlowSchema = withOrder(kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("PriorityLevel", "string", flowcontrolv1.PriorityLevelConfigurationReference{}.SwaggerDoc()["name"]),
		col("MatchingPrecedence", "string", flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["matchingPrecedence"]),
		col("DistinguisherMethod", "string", flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["distinguisherMethod"]),
		ageColumn(),
		col("MissingPL", "string", "references a broken or non-existent PriorityLevelConfiguration"),
	},
	func(fs *flowcontrolv1.FlowSchema, now time.Time) []interface{} {
		dm := "<none>"
		if fs.Spec.DistinguisherMethod != nil {
			dm = string(fs.Spec.DistinguisherMethod.Type)
		}
		missing := "?"
		for _, c := range fs.Status.Conditions {
			if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
				missing = string(c.Status)
				break
			}
		}
		return []interface{}{fs.Name, fs.Spec.PriorityLevelConfiguration.Name, int64(fs.Spec.MatchingPrecedence), dm, age(fs.CreationTimestamp, now), missing}
	},
), func(a, b *flowcontrolv1.FlowSchema) int {
	if pa, pb := a.Spec.MatchingPrecedence, b.Spec.MatchingPrecedence; pa != pb {
		return cmp.Compare(pa, pb)
	}
	return strings.Compare(a.Name, b.Name)
})

// PriorityLevelConfiguration is kube's PriorityLevelConfiguration
// printer: the type, then a limited level's nominal concurrency shares
// and queuing (queues, hand size, queue length limit), <none> where the
// level has none.
var PriorityLevelConfiguration = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Type", "string", flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]),
		col("NominalConcurrencyShares", "string", flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()["nominalConcurrencyShares"]),
		col("Queues", "string", flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queues"]),
		col("HandSize", "string", flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["handSize"]),
		col("QueueLengthLimit", "string", flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queueLengthLimit"]),
		ageColumn(),
	},
	func(pl *flowcontrolv1.PriorityLevelConfiguration, now time.Time) []interface{} {
		var ncs, queues, handSize, limit interface{} = "<none>", "<none>", "<none>", "<none>"
		if l := pl.Spec.Limited; l != nil {
			if l.NominalConcurrencyShares != nil {
				ncs = int64(*l.NominalConcurrencyShares)
			}
			if q := l.LimitResponse.Queuing; q != nil {
				queues, handSize, limit = int64(q.Queues), int64(q.HandSize), int64(q.QueueLengthLimit)
			}
		}
		return []interface{}{pl.Name, string(pl.Spec.Type), ncs, queues, handSize, limit, age(pl.CreationTimestamp, now)}
	},
)

// StorageVersionMigration is kube's StorageVersionMigration printer: the
// group resource and the type of the last true condition among Running,
// Failed and Succeeded (Unknown without one). kube's Name column has no
// "name" format and the table no Age column.
var StorageVersionMigration = kindTable(
	[]metav1.TableColumnDefinition{
		col("Name", "string", objectMetaDoc["name"]),
		col("Resource", "string", "GroupResource to migrate"),
		col("Status", "string", "Status of the migration"),
	},
	func(m *storagemigrationv1.StorageVersionMigration, _ time.Time) []interface{} {
		status := "Unknown"
		for _, c := range m.Status.Conditions {
			if c.Status != metav1.ConditionTrue {
				continue
			}
			switch c.Type {
			case string(storagemigrationv1.MigrationRunning), string(storagemigrationv1.MigrationFailed), string(storagemigrationv1.MigrationSucceeded):
				status = c.Type
			}
		}
		return []interface{}{m.Name, m.Spec.Resource.String(), status}
	},
)
