package tables

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Persistent storage tables: PersistentVolumes, PersistentVolumeClaims
// and StorageClasses, with kube's columns.

var (
	pvSpecDoc    = corev1.PersistentVolumeSpec{}.SwaggerDoc()
	pvStatusDoc  = corev1.PersistentVolumeStatus{}.SwaggerDoc()
	pvcSpecDoc   = corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()
	pvcStatusDoc = corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()
	scDoc        = storagev1.StorageClass{}.SwaggerDoc()
)

// PersistentVolume is kube's PersistentVolume printer: CLAIM is
// namespace/name, a volume being deleted shows Terminating, and unset
// volume mode and attributes class show "<unset>".
var PersistentVolume = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Capacity", "string", pvSpecDoc["capacity"]),
		col("Access Modes", "string", pvSpecDoc["accessModes"]),
		col("Reclaim Policy", "string", pvSpecDoc["persistentVolumeReclaimPolicy"]),
		col("Status", "string", pvStatusDoc["phase"]),
		col("Claim", "string", pvSpecDoc["claimRef"]),
		col("StorageClass", "string", "StorageClass of the pv"),
		col("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
		col("Reason", "string", pvStatusDoc["reason"]),
		ageColumn(),
		wide("VolumeMode", "string", pvSpecDoc["volumeMode"]),
	},
	func(pv *corev1.PersistentVolume, now time.Time) []interface{} {
		claim := ""
		if ref := pv.Spec.ClaimRef; ref != nil {
			claim = ref.Namespace + "/" + ref.Name
		}
		size := pv.Spec.Capacity[corev1.ResourceStorage]
		phase := string(pv.Status.Phase)
		if pv.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		class := pv.Spec.StorageClassName
		if c, ok := pv.Annotations[corev1.BetaStorageClassAnnotation]; ok {
			class = c
		}
		return []interface{}{pv.Name, size.String(), accessModesString(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
			phase, claim, class, orUnset(pv.Spec.VolumeAttributesClassName), pv.Status.Reason, age(pv.CreationTimestamp, now),
			volumeModeString(pv.Spec.VolumeMode)}
	},
)

// PersistentVolumeClaim is kube's PersistentVolumeClaim printer:
// capacity and access modes are the bound volume's, empty until then.
var PersistentVolumeClaim = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Status", "string", pvcStatusDoc["phase"]),
		col("Volume", "string", pvcSpecDoc["volumeName"]),
		col("Capacity", "string", pvcStatusDoc["capacity"]),
		col("Access Modes", "string", pvcStatusDoc["accessModes"]),
		col("StorageClass", "string", "StorageClass of the pvc"),
		col("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
		ageColumn(),
		wide("VolumeMode", "string", pvcSpecDoc["volumeMode"]),
	},
	func(pvc *corev1.PersistentVolumeClaim, now time.Time) []interface{} {
		phase := string(pvc.Status.Phase)
		if pvc.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		capacity, modes := "", ""
		if pvc.Spec.VolumeName != "" {
			size := pvc.Status.Capacity[corev1.ResourceStorage]
			capacity, modes = size.String(), accessModesString(pvc.Status.AccessModes)
		}
		class := ""
		if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
			class = c
		} else if pvc.Spec.StorageClassName != nil {
			class = *pvc.Spec.StorageClassName
		}
		return []interface{}{pvc.Name, phase, pvc.Spec.VolumeName, capacity, modes, class,
			orUnset(pvc.Spec.VolumeAttributesClassName), age(pvc.CreationTimestamp, now), volumeModeString(pvc.Spec.VolumeMode)}
	},
)

// StorageClass is kube's StorageClass printer: the default class's
// name says so, and unset fields show their defaults.
var StorageClass = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Provisioner", "string", scDoc["provisioner"]),
		col("ReclaimPolicy", "string", scDoc["reclaimPolicy"]),
		col("VolumeBindingMode", "string", scDoc["volumeBindingMode"]),
		col("AllowVolumeExpansion", "string", scDoc["allowVolumeExpansion"]),
		ageColumn(),
	},
	func(sc *storagev1.StorageClass, now time.Time) []interface{} {
		name := sc.Name
		if sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" ||
			sc.Annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true" {
			name += " (default)"
		}
		reclaim := string(corev1.PersistentVolumeReclaimDelete)
		if sc.ReclaimPolicy != nil {
			reclaim = string(*sc.ReclaimPolicy)
		}
		mode := string(storagev1.VolumeBindingImmediate)
		if sc.VolumeBindingMode != nil {
			mode = string(*sc.VolumeBindingMode)
		}
		expansion := sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
		return []interface{}{name, sc.Provisioner, reclaim, mode, expansion, age(sc.CreationTimestamp, now)}
	},
)

// accessModesString is kubectl's rendering of access modes: their short
// forms, each once, in kube's order (RWO,ROX,RWX,RWOP).
func accessModesString(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{{corev1.ReadWriteOnce, "RWO"}, {corev1.ReadOnlyMany, "ROX"}, {corev1.ReadWriteMany, "RWX"}, {corev1.ReadWriteOncePod, "RWOP"}} {
		for _, have := range modes {
			if have == m.mode {
				out = append(out, m.short)
				break
			}
		}
	}
	return strings.Join(out, ",")
}

func volumeModeString(m *corev1.PersistentVolumeMode) string {
	if m == nil {
		return "<unset>"
	}
	return string(*m)
}

func orUnset(s *string) string {
	if s == nil {
		return "<unset>"
	}
	return *s
}
