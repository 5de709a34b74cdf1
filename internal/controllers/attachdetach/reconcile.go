package attachdetach

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"minik/internal/csiattach"
)

// volume is one CSI volume a node's pods need attached.
type volume struct {
	pv     *corev1.PersistentVolume
	driver string
	handle string
	pods   []*corev1.Pod
}

// desired lists the CSI volumes needing attachment on a node, by
// VolumeAttachment name.
func (c *Controller) desired(nodeName string) (map[string]*volume, error) {
	pods, err := c.podLister.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	out := map[string]*volume{}
	for _, pod := range pods {
		if pod.Spec.NodeName != nodeName || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		for i := range pod.Spec.Volumes {
			src := pod.Spec.Volumes[i].PersistentVolumeClaim
			if src == nil {
				continue
			}
			pvc, err := c.pvcLister.PersistentVolumeClaims(pod.Namespace).Get(src.ClaimName)
			if err != nil || pvc.Spec.VolumeName == "" || pvc.Status.Phase != corev1.ClaimBound {
				continue
			}
			pv, err := c.pvLister.Get(pvc.Spec.VolumeName)
			if err != nil || pv.Spec.CSI == nil {
				continue
			}
			driver, err := c.driverLister.Get(pv.Spec.CSI.Driver)
			if err != nil {
				driver = nil
			}
			if !csiattach.AttachRequired(driver) {
				continue
			}
			name := csiattach.AttachmentName(pv.Spec.CSI.VolumeHandle, pv.Spec.CSI.Driver, nodeName)
			v := out[name]
			if v == nil {
				v = &volume{pv: pv, driver: pv.Spec.CSI.Driver, handle: pv.Spec.CSI.VolumeHandle}
				out[name] = v
			}
			v.pods = append(v.pods, pod)
		}
	}
	return out, nil
}

// syncNode attaches what a node's pods need, detaches what they no
// longer need, reports outcomes to the pods and writes the node's
// status.volumesAttached.
func (c *Controller) syncNode(ctx context.Context, nodeName string) error {
	if nodeName == "" {
		return nil
	}
	want, err := c.desired(nodeName)
	if err != nil {
		return err
	}
	all, err := c.vaLister.List(labels.Everything())
	if err != nil {
		return err
	}
	api := c.client.StorageV1().VolumeAttachments()
	var errs []error
	var attached []corev1.AttachedVolume
	for _, va := range all {
		if va.Spec.NodeName != nodeName || va.Spec.Source.PersistentVolumeName == nil {
			continue
		}
		v, ok := want[va.Name]
		if !ok {
			// Detach: nobody on the node uses the volume any more.
			if va.DeletionTimestamp == nil {
				err := api.Delete(ctx, va.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &va.UID}})
				if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
					errs = append(errs, fmt.Errorf("delete volumeattachment %s: %w", va.Name, err))
				}
			}
			c.forgetReported(va.Name)
			continue
		}
		delete(want, va.Name)
		if va.DeletionTimestamp != nil {
			// Being detached; attach again once it is gone.
			continue
		}
		c.report(va, v)
		if va.Status.Attached {
			attached = append(attached, corev1.AttachedVolume{Name: corev1.UniqueVolumeName(csiattach.UniqueVolumeName(v.driver, v.handle))})
		}
	}
	for _, name := range sortedKeys(want) {
		v := want[name]
		pvName := v.pv.Name
		va := &storagev1.VolumeAttachment{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: storagev1.VolumeAttachmentSpec{
				Attacher: v.driver,
				Source:   storagev1.VolumeAttachmentSource{PersistentVolumeName: &pvName},
				NodeName: nodeName,
			},
		}
		if _, err := api.Create(ctx, va, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			errs = append(errs, fmt.Errorf("create volumeattachment %s for volume %s on node %s: %w", name, pvName, nodeName, err))
		}
	}
	if err := c.writeAttached(ctx, nodeName, attached); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// report tells a volume's pods the attachment's outcome, once per change:
// SuccessfulAttachVolume when attached, FailedAttachVolume with the
// attacher's error.
func (c *Controller) report(va *storagev1.VolumeAttachment, v *volume) {
	var outcome, reason, eventType, msg string
	switch {
	case va.Status.Attached:
		outcome, reason, eventType = "attached", ReasonSuccessfulAttachVolume, corev1.EventTypeNormal
		msg = fmt.Sprintf("AttachVolume.Attach succeeded for volume %q ", v.pv.Name)
	case va.Status.AttachError != nil:
		outcome, reason, eventType = "error: "+va.Status.AttachError.Message, ReasonFailedAttachVolume, corev1.EventTypeWarning
		msg = fmt.Sprintf("AttachVolume.Attach failed for volume %q  : %s", v.pv.Name, va.Status.AttachError.Message)
	default:
		return
	}
	c.mu.Lock()
	told := c.reported[va.Name] == outcome
	c.reported[va.Name] = outcome
	c.mu.Unlock()
	if told {
		return
	}
	for _, pod := range v.pods {
		c.recorder.Event(pod, eventType, reason, msg)
	}
}

func (c *Controller) forgetReported(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.reported, name)
}

// writeAttached sets a node's status.volumesAttached to the CSI volumes
// attached there (other volumes listed are left alone).
func (c *Controller) writeAttached(ctx context.Context, nodeName string, attached []corev1.AttachedVolume) error {
	node, err := c.nodeLister.Get(nodeName)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var keep []corev1.AttachedVolume
	for _, a := range node.Status.VolumesAttached {
		if !isCSI(a.Name) {
			keep = append(keep, a)
		}
	}
	next := append(keep, attached...)
	sort.Slice(next, func(i, j int) bool { return next[i].Name < next[j].Name })
	if slices.Equal(next, node.Status.VolumesAttached) || len(next) == 0 && len(node.Status.VolumesAttached) == 0 {
		return nil
	}
	upd := node.DeepCopy()
	upd.Status.VolumesAttached = next
	if _, err := c.client.CoreV1().Nodes().UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update node %s volumesAttached: %w", nodeName, err)
	}
	return nil
}

func isCSI(name corev1.UniqueVolumeName) bool {
	return len(name) > len(csiattach.PluginName)+1 && string(name[:len(csiattach.PluginName)+1]) == csiattach.PluginName+"/"
}

func sortedKeys(m map[string]*volume) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
