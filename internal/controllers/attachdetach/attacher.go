package attachdetach

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/csiattach"
)

// syncAttachment is the simulated external-attacher of the
// VolumeAttachment's driver, if the driver has a CSIDriver object: it
// attaches (finalizer, then status.attached) a live attachment and
// detaches (status.attached=false, then no finalizer) a deleted one, as
// the sidecar does around ControllerPublish and ControllerUnpublish.
func (c *Controller) syncAttachment(ctx context.Context, name string) error {
	va, err := c.vaLister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := c.driverLister.Get(va.Spec.Attacher); err != nil {
		// No CSIDriver: no attacher is deployed for this driver.
		return nil
	}
	finalizer := csiattach.FinalizerName(va.Spec.Attacher)
	api := c.client.StorageV1().VolumeAttachments()
	if va.DeletionTimestamp != nil {
		if !slices.Contains(va.Finalizers, finalizer) {
			return nil
		}
		upd := va.DeepCopy()
		if upd.Status.Attached {
			upd.Status.Attached, upd.Status.AttachmentMetadata, upd.Status.DetachError = false, nil, nil
			out, err := api.UpdateStatus(ctx, upd, metav1.UpdateOptions{})
			if err != nil {
				return ignoreGone(fmt.Errorf("detach volumeattachment %s: %w", name, err))
			}
			upd = out
		}
		upd.Finalizers = slices.DeleteFunc(upd.Finalizers, func(f string) bool { return f == finalizer })
		if _, err := api.Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
			return ignoreGone(fmt.Errorf("remove finalizer of volumeattachment %s: %w", name, err))
		}
		return nil
	}
	if !slices.Contains(va.Finalizers, finalizer) {
		upd := va.DeepCopy()
		upd.Finalizers = append(upd.Finalizers, finalizer)
		// The informer brings the updated attachment back to attach it.
		if _, err := api.Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
			return ignoreGone(fmt.Errorf("add finalizer to volumeattachment %s: %w", name, err))
		}
		return nil
	}
	if va.Status.Attached {
		return nil
	}
	upd := va.DeepCopy()
	upd.Status.Attached = true
	upd.Status.AttachError = nil
	// What a driver's ControllerPublishVolume returns for the node plugin;
	// the simulated driver's is where the device would be.
	upd.Status.AttachmentMetadata = map[string]string{"devicePath": "/dev/disk/by-id/" + name}
	if _, err := api.UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil {
		return ignoreGone(fmt.Errorf("attach volumeattachment %s: %w", name, err))
	}
	return nil
}

// ignoreGone absorbs the NotFound of an attachment deleted meanwhile.
func ignoreGone(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
