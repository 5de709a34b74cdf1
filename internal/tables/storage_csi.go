package tables

import (
	"strings"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// storage.k8s.io tables of the CSI kinds and VolumeAttributesClasses,
// with kube's columns. Unset booleans print as their API defaults, as
// kube's printers do.

var csiDriverSpecDoc = storagev1.CSIDriverSpec{}.SwaggerDoc()

// CSIDriver is kube's CSIDriver printer: token request audiences joined
// by commas ("<unset>" without any), lifecycle modes likewise ("<none>").
var CSIDriver = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("AttachRequired", "boolean", csiDriverSpecDoc["attachRequired"]),
		col("PodInfoOnMount", "boolean", csiDriverSpecDoc["podInfoOnMount"]),
		col("StorageCapacity", "boolean", csiDriverSpecDoc["storageCapacity"]),
		col("TokenRequests", "string", csiDriverSpecDoc["tokenRequests"]),
		col("RequiresRepublish", "boolean", csiDriverSpecDoc["requiresRepublish"]),
		col("Modes", "string", csiDriverSpecDoc["volumeLifecycleModes"]),
		ageColumn(),
	},
	func(d *storagev1.CSIDriver, now time.Time) []interface{} {
		modes := make([]string, 0, len(d.Spec.VolumeLifecycleModes))
		for _, m := range d.Spec.VolumeLifecycleModes {
			modes = append(modes, string(m))
		}
		modeCell := strings.Join(modes, ",")
		if modeCell == "" {
			modeCell = "<none>"
		}
		tokens := "<unset>"
		if d.Spec.TokenRequests != nil {
			audiences := make([]string, 0, len(d.Spec.TokenRequests))
			for _, t := range d.Spec.TokenRequests {
				audiences = append(audiences, t.Audience)
			}
			tokens = strings.Join(audiences, ",")
		}
		return []interface{}{d.Name, boolOr(d.Spec.AttachRequired, true), boolOr(d.Spec.PodInfoOnMount, false),
			boolOr(d.Spec.StorageCapacity, false), tokens, boolOr(d.Spec.RequiresRepublish, false), modeCell, age(d.CreationTimestamp, now)}
	},
)

// CSINode is kube's CSINode printer: the number of registered drivers.
var CSINode = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node"),
		ageColumn(),
	},
	func(n *storagev1.CSINode, now time.Time) []interface{} {
		return []interface{}{n.Name, int64(len(n.Spec.Drivers)), age(n.CreationTimestamp, now)}
	},
)

// VolumeAttachment is kube's VolumeAttachment printer: the persistent
// volume's name (empty for an inline volume) and whether it is attached.
// kube declares the Attacher column with the "name" format too.
var VolumeAttachment = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Attacher", Type: "string", Format: "name", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["attacher"]},
		col("PV", "string", storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"]),
		col("Node", "string", storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["nodeName"]),
		col("Attached", "boolean", storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"]),
		ageColumn(),
	},
	func(va *storagev1.VolumeAttachment, now time.Time) []interface{} {
		pv := ""
		if va.Spec.Source.PersistentVolumeName != nil {
			pv = *va.Spec.Source.PersistentVolumeName
		}
		return []interface{}{va.Name, va.Spec.Attacher, pv, va.Spec.NodeName, va.Status.Attached, age(va.CreationTimestamp, now)}
	},
)

// CSIStorageCapacity is kube's CSIStorageCapacity printer: no Age
// column, and "<unset>" for an unknown capacity.
var CSIStorageCapacity = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("StorageClassName", "string", storagev1.CSIStorageCapacity{}.SwaggerDoc()["storageClassName"]),
		col("Capacity", "string", storagev1.CSIStorageCapacity{}.SwaggerDoc()["capacity"]),
	},
	func(c *storagev1.CSIStorageCapacity, _ time.Time) []interface{} {
		capacity := "<unset>"
		if c.Capacity != nil {
			capacity = c.Capacity.String()
		}
		return []interface{}{c.Name, c.StorageClassName, capacity}
	},
)

// VolumeAttributesClass is kube's VolumeAttributesClass printer.
var VolumeAttributesClass = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("DriverName", "string", storagev1.VolumeAttributesClass{}.SwaggerDoc()["driverName"]),
		ageColumn(),
	},
	func(c *storagev1.VolumeAttributesClass, now time.Time) []interface{} {
		return []interface{}{c.Name, c.DriverName, age(c.CreationTimestamp, now)}
	},
)

// boolOr is *b, or def when b is nil.
func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}
