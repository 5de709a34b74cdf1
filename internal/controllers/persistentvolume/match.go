package persistentvolume

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Annotations and finalizers of persistent storage, as kube names them.
const (
	// AnnBindCompleted on a claim: the binder finished binding it.
	AnnBindCompleted = "pv.kubernetes.io/bind-completed"
	// AnnBoundByController on a claim or volume: the binder, not a user,
	// made the binding (so it may undo it).
	AnnBoundByController = "pv.kubernetes.io/bound-by-controller"
	// AnnSelectedNode on a claim: the node the scheduler chose for the
	// first pod using a WaitForFirstConsumer claim.
	AnnSelectedNode = "volume.kubernetes.io/selected-node"
	// AnnStorageProvisioner (and its beta form) on a claim: the
	// provisioner asked to provision it.
	AnnStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	AnnBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
	// AnnProvisionedBy on a volume: the provisioner that made it.
	AnnProvisionedBy = "pv.kubernetes.io/provisioned-by"
	// AnnIsDefaultClass marks the default StorageClass.
	AnnIsDefaultClass = "storageclass.kubernetes.io/is-default-class"

	// PVCProtectionFinalizer and PVProtectionFinalizer keep claims used by
	// pods and bound volumes from going away.
	PVCProtectionFinalizer = "kubernetes.io/pvc-protection"
	PVProtectionFinalizer  = "kubernetes.io/pv-protection"

	// NoProvisioner is the provisioner of classes whose volumes are made
	// by hand.
	NoProvisioner = "kubernetes.io/no-provisioner"
)

// HostPathProvisioner is minik's simulated provisioner: it makes a
// hostPath volume for a claim of a class naming it. Nothing is written:
// the path, under the system temporary directory, only names the volume.
const HostPathProvisioner = "minik.dev/hostpath"

// StandardClassName is the default StorageClass minikd creates.
const StandardClassName = "standard"

// StandardClass returns the default StorageClass minikd creates at start:
// "standard", provisioned by minik.dev/hostpath, binding when the first pod
// is scheduled, as kind's local-path class does.
func StandardClass() *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: StandardClassName, Annotations: map[string]string{AnnIsDefaultClass: "true"}},
		Provisioner:       HostPathProvisioner,
		ReclaimPolicy:     new(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: new(storagev1.VolumeBindingWaitForFirstConsumer),
	}
}

// hostPathRoot is where the simulated provisioner's volumes live.
func hostPathRoot() string { return filepath.Join(os.TempDir(), "minik-hostpath") }

// ClaimClass is a claim's class: the beta annotation, else the field.
func ClaimClass(pvc *corev1.PersistentVolumeClaim) string {
	if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return c
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return ""
}

// VolumeClass is a volume's class: the beta annotation, else the field.
func VolumeClass(pv *corev1.PersistentVolume) string {
	if c, ok := pv.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return c
	}
	return pv.Spec.StorageClassName
}

// BoundToClaim tells whether a volume's claimRef names the claim (by
// namespace and name, and by UID when it has one).
func BoundToClaim(pv *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim) bool {
	ref := pv.Spec.ClaimRef
	return ref != nil && ref.Namespace == pvc.Namespace && ref.Name == pvc.Name && (ref.UID == "" || ref.UID == pvc.UID)
}

// Mismatch says why a volume cannot serve a claim ("" when it can): the
// class, volume mode, access modes, size and selector, as kube's
// checkVolumeSatisfyClaim and findMatchingVolume compare them.
func Mismatch(pv *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim) string {
	if VolumeClass(pv) != ClaimClass(pvc) {
		return "storageClassName does not match"
	}
	if mode(pv.Spec.VolumeMode) != mode(pvc.Spec.VolumeMode) {
		return "incompatible volumeMode"
	}
	for _, m := range pvc.Spec.AccessModes {
		found := false
		for _, have := range pv.Spec.AccessModes {
			found = found || have == m
		}
		if !found {
			return "incompatible accessMode"
		}
	}
	want := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	have := pv.Spec.Capacity[corev1.ResourceStorage]
	if have.Cmp(want) < 0 {
		return "requested PV is too small"
	}
	if pvc.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(pvc.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pv.Labels)) {
			return "volume does not match the claim's selector"
		}
	}
	return ""
}

func mode(m *corev1.PersistentVolumeMode) corev1.PersistentVolumeMode {
	if m == nil {
		return corev1.PersistentVolumeFilesystem
	}
	return *m
}

// FitsNode tells whether a volume's node affinity admits node (a volume
// without one is reachable from every node).
func FitsNode(pv *corev1.PersistentVolume, node *corev1.Node) bool {
	na := pv.Spec.NodeAffinity
	if na == nil || na.Required == nil || node == nil {
		return true
	}
	for _, term := range na.Required.NodeSelectorTerms {
		if termMatches(term, node) {
			return true
		}
	}
	return false
}

// termMatches tells whether a node selector term (its expressions and
// fields, all of them) admits node; an empty term admits none.
func termMatches(t corev1.NodeSelectorTerm, node *corev1.Node) bool {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		return false
	}
	for _, r := range t.MatchExpressions {
		v, ok := node.Labels[r.Key]
		if !requirementHolds(r, v, ok) {
			return false
		}
	}
	for _, r := range t.MatchFields {
		if r.Key != "metadata.name" || !requirementHolds(r, node.Name, true) {
			return false
		}
	}
	return true
}

func requirementHolds(r corev1.NodeSelectorRequirement, v string, ok bool) bool {
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return ok && slices.Contains(r.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !ok || !slices.Contains(r.Values, v)
	case corev1.NodeSelectorOpExists:
		return ok
	case corev1.NodeSelectorOpDoesNotExist:
		return !ok
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !ok || len(r.Values) != 1 {
			return false
		}
		have, err1 := strconv.ParseInt(v, 10, 64)
		want, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Operator == corev1.NodeSelectorOpGt {
			return have > want
		}
		return have < want
	}
	return false
}

// FindMatch returns the volume that best serves a claim, or nil: a volume
// pre-bound to the claim first, otherwise the smallest available one that
// matches. With node set (the scheduler's view) the volume must be
// reachable from it; without (the binder's), a claim whose binding waits
// for its first consumer matches only pre-bound volumes, as in kube.
func FindMatch(pvc *corev1.PersistentVolumeClaim, volumes []*corev1.PersistentVolume, node *corev1.Node, delayBinding bool) *corev1.PersistentVolume {
	sorted := append([]*corev1.PersistentVolume(nil), volumes...)
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i].Spec.Capacity[corev1.ResourceStorage], sorted[j].Spec.Capacity[corev1.ResourceStorage]
		if c := a.Cmp(b); c != 0 {
			return c < 0
		}
		return sorted[i].Name < sorted[j].Name
	})
	var best *corev1.PersistentVolume
	for _, pv := range sorted {
		if pv.DeletionTimestamp != nil || Mismatch(pv, pvc) != "" || !FitsNode(pv, node) {
			continue
		}
		if BoundToClaim(pv, pvc) {
			return pv
		}
		if pv.Spec.ClaimRef != nil || pv.Status.Phase != corev1.VolumeAvailable && pv.Status.Phase != corev1.VolumePending {
			continue
		}
		if node == nil && delayBinding {
			continue
		}
		if best == nil {
			best = pv
		}
	}
	return best
}

// ClaimRef is the reference a volume bound to pvc carries.
func ClaimRef(pvc *corev1.PersistentVolumeClaim) *corev1.ObjectReference {
	return &corev1.ObjectReference{
		Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name,
		UID: pvc.UID, ResourceVersion: pvc.ResourceVersion,
	}
}

// provisionedName is the name of the volume provisioned for a claim.
func provisionedName(pvc *corev1.PersistentVolumeClaim) string { return fmt.Sprintf("pvc-%s", pvc.UID) }
