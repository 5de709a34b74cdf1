package nodeagent

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/csiattach"
)

// csiAttached checks that a CSI persistent volume whose driver needs
// attaching is attached to this node, as the kubelet's CSI plugin waits
// for its VolumeAttachment (named as csiattach.AttachmentName) to say
// attached before mounting: until then the mount fails and is retried
// with the mount back-off, and the pod's containers do not start. Other
// volumes pass at once.
func (w *podWorker) csiAttached(pv *corev1.PersistentVolume) error {
	src := pv.Spec.CSI
	if src == nil {
		return nil
	}
	var driver *storagev1.CSIDriver
	err := w.related(func() (err error) {
		driver, err = w.n.cs.StorageV1().CSIDrivers().Get(w.ctx, src.Driver, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		driver, err = nil, nil
	}
	if err != nil {
		return fmt.Errorf("get CSIDriver %s: %w", src.Driver, err)
	}
	if !csiattach.AttachRequired(driver) {
		return nil
	}
	name := csiattach.AttachmentName(src.VolumeHandle, src.Driver, w.n.name)
	var va *storagev1.VolumeAttachment
	err = w.related(func() (err error) {
		va, err = w.n.cs.StorageV1().VolumeAttachments().Get(w.ctx, name, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("volume %q is not attached to node %q yet: volumeattachment %s not found", pv.Name, w.n.name, name)
	}
	if err != nil {
		return fmt.Errorf("get volumeattachment %s: %w", name, err)
	}
	switch {
	case va.DeletionTimestamp != nil:
		return fmt.Errorf("volume %q: volume attachment %s is being deleted", pv.Name, name)
	case va.Status.AttachError != nil:
		return fmt.Errorf("volume %q: attachment %s failed: %s", pv.Name, name, va.Status.AttachError.Message)
	case !va.Status.Attached:
		return fmt.Errorf("volume %q is not attached to node %q yet (volumeattachment %s)", pv.Name, w.n.name, name)
	}
	return nil
}
