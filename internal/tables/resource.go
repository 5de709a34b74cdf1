package tables

import (
	"strings"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// resource.k8s.io tables, as kube's printers draw them.

// DeviceClass is kube's DeviceClass printer.
var DeviceClass = kindTable(
	[]metav1.TableColumnDefinition{nameColumn(), ageColumn()},
	func(c *resourcev1.DeviceClass, now time.Time) []interface{} {
		return []interface{}{c.Name, age(c.CreationTimestamp, now)}
	},
)

// DeviceTaintRule is kube's DeviceTaintRule printer: the taint, not the
// selector; TimeAdded empty when unset.
var DeviceTaintRule = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Key", "string", resourcev1.DeviceTaint{}.SwaggerDoc()["key"]),
		col("Value", "string", resourcev1.DeviceTaint{}.SwaggerDoc()["value"]),
		col("Effect", "string", resourcev1.DeviceTaint{}.SwaggerDoc()["effect"]),
		col("TimeAdded", "string", resourcev1.DeviceTaint{}.SwaggerDoc()["timeAdded"]),
		ageColumn(),
	},
	func(r *resourcev1.DeviceTaintRule, now time.Time) []interface{} {
		added := ""
		if t := r.Spec.Taint.TimeAdded; t != nil {
			added = age(*t, now)
		}
		return []interface{}{r.Name, r.Spec.Taint.Key, r.Spec.Taint.Value, string(r.Spec.Taint.Effect), added, age(r.CreationTimestamp, now)}
	},
)

// ResourceClaim is kube's ResourceClaim printer: the state joins
// "deleted", then "pending" or "allocated" and "reserved".
var ResourceClaim = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("State", "string", "A summary of the current state (allocated, pending, reserved, etc.)."),
		ageColumn(),
	},
	func(c *resourcev1.ResourceClaim, now time.Time) []interface{} {
		return []interface{}{c.Name, ResourceClaimState(c), age(c.CreationTimestamp, now)}
	},
)

// ResourceClaimState is kube's resourceClaimState, the State cell.
func ResourceClaimState(c *resourcev1.ResourceClaim) string {
	var states []string
	if c.DeletionTimestamp != nil {
		states = append(states, "deleted")
	}
	switch {
	case c.Status.Allocation != nil:
		states = append(states, "allocated")
		if len(c.Status.ReservedFor) > 0 {
			states = append(states, "reserved")
		}
	case c.DeletionTimestamp == nil:
		states = append(states, "pending")
	}
	return strings.Join(states, ",")
}

// ResourceClaimTemplate is kube's ResourceClaimTemplate printer.
var ResourceClaimTemplate = kindTable(
	[]metav1.TableColumnDefinition{nameColumn(), ageColumn()},
	func(t *resourcev1.ResourceClaimTemplate, now time.Time) []interface{} {
		return []interface{}{t.Name, age(t.CreationTimestamp, now)}
	},
)

// ResourceSlice is kube's ResourceSlice printer: the node is empty for a
// slice of devices reachable from several nodes.
var ResourceSlice = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Node", "string", resourcev1.ResourceSliceSpec{}.SwaggerDoc()["nodeName"]),
		col("Driver", "string", resourcev1.ResourceSliceSpec{}.SwaggerDoc()["driver"]),
		col("Pool", "string", resourcev1.ResourcePool{}.SwaggerDoc()["name"]),
		ageColumn(),
	},
	func(s *resourcev1.ResourceSlice, now time.Time) []interface{} {
		node := ""
		if s.Spec.NodeName != nil {
			node = *s.Spec.NodeName
		}
		return []interface{}{s.Name, node, s.Spec.Driver, s.Spec.Pool.Name, age(s.CreationTimestamp, now)}
	},
)
