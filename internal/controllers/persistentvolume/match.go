package persistentvolume

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
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

// Mismatch says why a volume cannot serve the claim that names it in
// spec.volumeName ("" when it can): the checks of kube's
// checkVolumeSatisfyClaim, with its messages. The claim's selector is not
// checked: naming the volume overrides it, as in kube.
func Mismatch(pv *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim) string {
	want := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	have := pv.Spec.Capacity[corev1.ResourceStorage]
	switch {
	case pv.DeletionTimestamp != nil:
		return fmt.Sprintf("the volume is marked for deletion %q", pv.Name)
	case have.Value() < want.Value():
		return "requested PV is too small"
	case storagehelpers.GetPersistentVolumeClass(pv) != storagehelpers.GetPersistentVolumeClaimClass(pvc):
		return "storageClassName does not match"
	case ptr.Deref(pv.Spec.VolumeAttributesClassName, "") != ptr.Deref(pvc.Spec.VolumeAttributesClassName, ""):
		return "volumeAttributesClassName does not match"
	case storagehelpers.CheckVolumeModeMismatches(&pvc.Spec, &pv.Spec):
		return "incompatible volumeMode"
	case !storagehelpers.CheckAccessModes(pvc, pv):
		return "incompatible accessMode"
	}
	return ""
}

// FitsNode tells whether a volume's node affinity admits node (a volume
// without one is reachable from every node; so is any volume when node is
// nil), with kube's CheckNodeAffinity: the node's labels decide.
func FitsNode(pv *corev1.PersistentVolume, node *corev1.Node) bool {
	return node == nil || storagehelpers.CheckNodeAffinity(pv, node.Labels) == nil
}

// FindMatch returns the volume that best serves a claim, or nil, with
// kube's FindMatchingVolume: a volume pre-bound to the claim first,
// otherwise the smallest Available one that matches (ties: by name). With
// node set (the scheduler's view) the volume must be reachable from it;
// without (the binder's), a claim whose binding waits for its first
// consumer matches only pre-bound volumes. Volumes lacking one of the
// claim's access modes are left out first, as the binder's index of
// volumes by access modes does in kube.
func FindMatch(pvc *corev1.PersistentVolumeClaim, volumes []*corev1.PersistentVolume, node *corev1.Node, delayBinding bool) *corev1.PersistentVolume {
	candidates := make([]*corev1.PersistentVolume, 0, len(volumes))
	for _, pv := range volumes {
		if storagehelpers.CheckAccessModes(pvc, pv) {
			candidates = append(candidates, pv)
		}
	}
	sort.Slice(candidates, func(i, j int) bool {
		a, b := candidates[i].Spec.Capacity[corev1.ResourceStorage], candidates[j].Spec.Capacity[corev1.ResourceStorage]
		if c := a.Cmp(b); c != 0 {
			return c < 0
		}
		return candidates[i].Name < candidates[j].Name
	})
	// VolumeAttributesClass is GA (kube v1.34): compare the classes. An
	// error means a selector that does not parse: nothing matches.
	pv, err := storagehelpers.FindMatchingVolume(pvc, candidates, node, nil, delayBinding, true)
	if err != nil {
		return nil
	}
	return pv
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
