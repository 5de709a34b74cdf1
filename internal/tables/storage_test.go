package tables

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Fixtures of the persistent storage tables.

func gi(s string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(s)}
}

func persistentVolumeFixtures() []runtime.Object {
	fs, block := corev1.PersistentVolumeFilesystem, corev1.PersistentVolumeBlock
	provisioned := &corev1.PersistentVolume{
		ObjectMeta: clusterMeta("pvc-6f1c2a9e-1d2b-4c3d-8e4f-0a1b2c3d4e5f", 2*time.Hour),
		Spec: corev1.PersistentVolumeSpec{
			Capacity: gi("1Gi"), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete, StorageClassName: "standard", VolumeMode: &fs,
			ClaimRef: &corev1.ObjectReference{Namespace: "demo", Name: "data"},
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}
	available := &corev1.PersistentVolume{
		ObjectMeta: clusterMeta("static-10g", 3*24*time.Hour),
		Spec: corev1.PersistentVolumeSpec{
			Capacity: gi("10Gi"), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadOnlyMany},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain, VolumeMode: &block,
			VolumeAttributesClassName: ptrTo("gold"),
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable},
	}
	released := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "released", CreationTimestamp: ago(90 * time.Second), Annotations: map[string]string{corev1.BetaStorageClassAnnotation: "legacy"}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity: gi("500Mi"), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain, StorageClassName: "standard",
			ClaimRef: &corev1.ObjectReference{Namespace: "ci", Name: "cache"},
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeReleased},
	}
	failed := &corev1.PersistentVolume{
		ObjectMeta: clusterMeta("failed", time.Minute),
		Spec:       corev1.PersistentVolumeSpec{Capacity: gi("2Gi"), PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRecycle},
		Status:     corev1.PersistentVolumeStatus{Phase: corev1.VolumeFailed, Reason: "VolumeFailedRecycle"},
	}
	terminating := available.DeepCopy()
	terminating.Name = "terminating"
	t := ago(5 * time.Second)
	terminating.DeletionTimestamp = &t
	return []runtime.Object{provisioned, available, released, failed, terminating}
}

func persistentVolumeClaimFixtures() []runtime.Object {
	fs := corev1.PersistentVolumeFilesystem
	bound := &corev1.PersistentVolumeClaim{
		ObjectMeta: objMeta("data", 2*time.Hour),
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Resources: corev1.VolumeResourceRequirements{Requests: gi("1Gi")},
			StorageClassName: ptrTo("standard"), VolumeName: "pvc-6f1c2a9e-1d2b-4c3d-8e4f-0a1b2c3d4e5f", VolumeMode: &fs,
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: gi("1Gi"), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}},
	}
	pending := &corev1.PersistentVolumeClaim{
		ObjectMeta: objMeta("waiting", 30*time.Second),
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, Resources: corev1.VolumeResourceRequirements{Requests: gi("5Gi")},
			StorageClassName: ptrTo("standard"), VolumeMode: &fs, VolumeAttributesClassName: ptrTo("gold"),
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
	noClass := &corev1.PersistentVolumeClaim{
		ObjectMeta: objMeta("no-class", 10*time.Minute),
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Resources: corev1.VolumeResourceRequirements{Requests: gi("1Gi")},
			StorageClassName: ptrTo(""),
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
	lost := bound.DeepCopy()
	lost.Name, lost.Status.Phase = "lost", corev1.ClaimLost
	lost.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "legacy"}
	terminating := bound.DeepCopy()
	terminating.Name = "terminating"
	t := ago(5 * time.Second)
	terminating.DeletionTimestamp = &t
	return []runtime.Object{bound, pending, noClass, lost, terminating}
}

func storageClassFixtures() []runtime.Object {
	wffc, immediate := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	retain := corev1.PersistentVolumeReclaimRetain
	return []runtime.Object{
		&storagev1.StorageClass{
			ObjectMeta:  metav1.ObjectMeta{Name: "standard", CreationTimestamp: ago(30 * 24 * time.Hour), Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
			Provisioner: "minik.dev/hostpath", VolumeBindingMode: &wffc,
		},
		&storagev1.StorageClass{
			ObjectMeta:  clusterMeta("fast", time.Hour),
			Provisioner: "ebs.csi.aws.com", ReclaimPolicy: &retain, VolumeBindingMode: &immediate, AllowVolumeExpansion: ptrTo(true),
		},
		&storagev1.StorageClass{
			ObjectMeta:  metav1.ObjectMeta{Name: "legacy-default", CreationTimestamp: ago(2 * time.Minute), Annotations: map[string]string{"storageclass.beta.kubernetes.io/is-default-class": "true"}},
			Provisioner: "kubernetes.io/no-provisioner",
		},
	}
}
