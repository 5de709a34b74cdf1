package attachdetach_test

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"minik/internal/controllers/attachdetach"
	"minik/internal/controllers/ctrltest"
	pvctrl "minik/internal/controllers/persistentvolume"
	"minik/internal/csiattach"
	"minik/internal/testserver"
)

const (
	ns     = "default"
	node   = "minik-node-1"
	driver = "hostpath.csi.k8s.io"
)

// csiClaim creates a CSI PersistentVolume with the handle and a claim
// bound to it, and waits for the binder to bind them.
func csiClaim(t *testing.T, cs kubernetes.Interface, name, handle string) {
	t.Helper()
	ctx := context.Background()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
		Capacity:         corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		StorageClassName: "",
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
			Driver: driver, VolumeHandle: handle,
		}},
	}}
	if _, err := cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	empty := ""
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		StorageClassName: &empty,
		VolumeName:       name,
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}}
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "claim "+name+" bound", func() bool {
		c, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && c.Status.Phase == corev1.ClaimBound
	})
}

func podUsing(t *testing.T, cs kubernetes.Interface, name, claim string) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
		NodeName:   node,
		Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sleep", "3600"}}},
		Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
		}}},
	}}
	if _, err := cs.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func running(cs kubernetes.Interface, name string) bool {
	p, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	return err == nil && p.Status.Phase == corev1.PodRunning
}

func hasEvent(cs kubernetes.Interface, pod, reason, message string) bool {
	evs, err := cs.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + pod + ",reason=" + reason,
	})
	if err != nil {
		return false
	}
	return slices.ContainsFunc(evs.Items, func(e corev1.Event) bool { return message == "" || e.Message == message })
}

func volumesAttached(cs kubernetes.Interface) []corev1.UniqueVolumeName {
	n, err := cs.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	var out []corev1.UniqueVolumeName
	for _, a := range n.Status.VolumesAttached {
		out = append(out, a.Name)
	}
	return out
}

// TestCSIVolumeIsAttachedBeforeThePodStarts: a pod on a node using a CSI
// volume gets its VolumeAttachment, named as kube names it; with no
// attacher for the driver (no CSIDriver object) it stays unattached and
// the pod waits in ContainerCreating; once the CSIDriver exists the
// simulated attacher attaches it (finalizer, status), the node lists it
// in volumesAttached, the pod is told SuccessfulAttachVolume and runs.
// Deleting the pod detaches the volume.
func TestCSIVolumeIsAttachedBeforeThePodStarts(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{attachdetach.Name, pvctrl.Name}, Nodes: 1})
	cs := srv.Client(t)
	ctx := context.Background()
	csiClaim(t, cs, "data", "vol-1")
	podUsing(t, cs, "app", "data")

	vaName := csiattach.AttachmentName("vol-1", driver, node)
	var va *storagev1.VolumeAttachment
	ctrltest.Wait(t, "the VolumeAttachment "+vaName, func() bool {
		var err error
		va, err = cs.StorageV1().VolumeAttachments().Get(ctx, vaName, metav1.GetOptions{})
		return err == nil
	})
	if va.Spec.Attacher != driver || va.Spec.NodeName != node || va.Spec.Source.PersistentVolumeName == nil || *va.Spec.Source.PersistentVolumeName != "data" {
		t.Errorf("spec %+v; want attacher %s, node %s, volume data", va.Spec, driver, node)
	}
	ctrltest.Wait(t, "the pod's FailedMount while unattached", func() bool { return hasEvent(cs, "app", "FailedMount", "") })
	if running(cs, "app") {
		t.Fatal("the pod runs before its volume is attached")
	}
	if va, err := cs.StorageV1().VolumeAttachments().Get(ctx, vaName, metav1.GetOptions{}); err != nil || va.Status.Attached {
		t.Fatalf("attachment %v (err %v) attached without an attacher", va.Status, err)
	}

	if _, err := cs.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: driver}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "the volume attached, with the attacher's finalizer", func() bool {
		va, err := cs.StorageV1().VolumeAttachments().Get(ctx, vaName, metav1.GetOptions{})
		return err == nil && va.Status.Attached && slices.Contains(va.Finalizers, "external-attacher/hostpath-csi-k8s-io")
	})
	unique := corev1.UniqueVolumeName(csiattach.UniqueVolumeName(driver, "vol-1"))
	ctrltest.Wait(t, "the node listing the volume attached", func() bool { return slices.Contains(volumesAttached(cs), unique) })
	ctrltest.Wait(t, "SuccessfulAttachVolume on the pod", func() bool {
		return hasEvent(cs, "app", attachdetach.ReasonSuccessfulAttachVolume, `AttachVolume.Attach succeeded for volume "data" `)
	})
	ctrltest.Wait(t, "the pod running", func() bool { return running(cs, "app") })

	zero := int64(0)
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "app", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "the attachment gone (detached, finalizer removed)", func() bool {
		_, err := cs.StorageV1().VolumeAttachments().Get(ctx, vaName, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	ctrltest.Wait(t, "the node listing no volume attached", func() bool { return len(volumesAttached(cs)) == 0 })
}

// TestNoAttachWhenTheDriverSaysSo: a driver whose CSIDriver has
// attachRequired false gets no VolumeAttachment, and its pods start.
func TestNoAttachWhenTheDriverSaysSo(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{attachdetach.Name, pvctrl.Name}, Nodes: 1})
	cs := srv.Client(t)
	ctx := context.Background()
	no := false
	if _, err := cs.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: driver},
		Spec: storagev1.CSIDriverSpec{AttachRequired: &no}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	csiClaim(t, cs, "data", "vol-2")
	podUsing(t, cs, "app", "data")
	ctrltest.Wait(t, "the pod running", func() bool { return running(cs, "app") })
	l, err := cs.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 0 {
		t.Errorf("attachments %v (err %v); want none", l, err)
	}
}
