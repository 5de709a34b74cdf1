// Package csiattach names CSI volume attachments as Kubernetes does, so
// that the attach/detach controller, the simulated external-attacher and
// the simulated kubelet agree: the VolumeAttachment of a volume on a
// node, the volume's unique name in node.status.volumesAttached, the
// attacher's finalizer, and whether a driver needs attaching at all.
package csiattach

import (
	"crypto/sha256"
	"fmt"
	"regexp"

	storagev1 "k8s.io/api/storage/v1"
)

// PluginName is the in-tree name of the CSI volume plugin, the prefix of
// a CSI volume's unique name.
const PluginName = "kubernetes.io/csi"

// AttachmentName is the name of the VolumeAttachment of a CSI volume on a
// node: "csi-" and the hex SHA-256 of volume handle, driver and node
// name, as kube's CSI attacher computes it (getAttachmentName).
func AttachmentName(volumeHandle, driver, nodeName string) string {
	sum := sha256.Sum256([]byte(volumeHandle + driver + nodeName))
	return fmt.Sprintf("csi-%x", sum)
}

// UniqueVolumeName is a CSI volume's name in a node's status
// (volumesAttached, volumesInUse): "kubernetes.io/csi/<driver>^<handle>".
func UniqueVolumeName(driver, volumeHandle string) string {
	return PluginName + "/" + driver + "^" + volumeHandle
}

// AttachRequired tells whether a driver's volumes are attached before
// use: a driver without a CSIDriver object (nil), or whose
// spec.attachRequired is unset or true, needs it.
func AttachRequired(driver *storagev1.CSIDriver) bool {
	return driver == nil || driver.Spec.AttachRequired == nil || *driver.Spec.AttachRequired
}

var unsafe = regexp.MustCompile(`[^a-zA-Z0-9-]`)

// FinalizerName is the finalizer a driver's external-attacher puts on
// the VolumeAttachments it attaches: "external-attacher/" and the driver
// name with every character but letters, digits and '-' made '-' (and an
// 'X' after a trailing '-'), as the sidecar's SanitizeDriverName.
func FinalizerName(driver string) string {
	name := unsafe.ReplaceAllString(driver, "-")
	if name != "" && name[len(name)-1] == '-' {
		name += "X"
	}
	return "external-attacher/" + name
}
