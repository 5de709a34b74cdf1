package registry

import (
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// This file holds persistent storage: core/v1 PersistentVolumes and
// PersistentVolumeClaims, and storage.k8s.io/v1 StorageClasses, with
// kube's defaulting and validation. None of them maintains
// metadata.generation. The persistentvolume-binder controller
// (internal/controllers/persistentvolume) binds and provisions them.

// storageV1 is storage.k8s.io/v1.
var storageV1 = schema.GroupVersion{Group: "storage.k8s.io", Version: "v1"}

// Storage annotations kube's API and controllers read.
const (
	// BetaStorageClassAnnotation is the claim's or volume's class before
	// spec.storageClassName existed; it still wins when set.
	BetaStorageClassAnnotation = corev1.BetaStorageClassAnnotation
	// IsDefaultStorageClassAnnotation marks the default StorageClass.
	IsDefaultStorageClassAnnotation = "storageclass.kubernetes.io/is-default-class"
	// BetaIsDefaultStorageClassAnnotation is its beta form, still honoured.
	BetaIsDefaultStorageClassAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
)

var (
	supportedAccessModes = sets.New(corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod)
	supportedVolumeModes = sets.New(corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem)
	// supportedReclaimPolicies are a volume's; a class may not say Recycle.
	supportedReclaimPolicies      = sets.New(corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRecycle, corev1.PersistentVolumeReclaimRetain)
	supportedClassReclaimPolicies = sets.New(corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRetain)
	supportedBindingModes         = sets.New(storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer)
)

// ---- PersistentVolume ----

// persistentVolumes: a volume starts Pending (the binder makes it
// Available); its source, volume mode and node affinity are fixed.
var persistentVolumes = &Resource{
	GroupVersion: coreV1, Name: "persistentvolumes", SingularName: "persistentvolume", Kind: "PersistentVolume",
	ShortNames: []string{"pv"}, HasStatus: true, DeleteReturnsObject: true,
	Strategy: Strategy{
		Default: defaulter(defaultPersistentVolume),
		PrepareForCreate: creator(func(pv *corev1.PersistentVolume) {
			pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending}
		}),
		Validate:       validator(validatePersistentVolume),
		ValidateUpdate: updateValidator(validatePersistentVolumeUpdate),
		NoGeneration:   true,
		Fields: selectable(func(pv *corev1.PersistentVolume) fields.Set {
			return fields.Set{"name": pv.Name}
		}),
		Table: tables.PersistentVolume.Convertor(nil),
	},
}

// defaultPersistentVolume is kube's v1 defaulting: reclaim policy Retain,
// volume mode Filesystem, phase Pending, a hostPath's type "".
func defaultPersistentVolume(pv *corev1.PersistentVolume) {
	if pv.Status.Phase == "" {
		pv.Status.Phase = corev1.VolumePending
	}
	if pv.Spec.PersistentVolumeReclaimPolicy == "" {
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	if pv.Spec.VolumeMode == nil {
		pv.Spec.VolumeMode = new(corev1.PersistentVolumeFilesystem)
	}
	if hp := pv.Spec.HostPath; hp != nil && hp.Type == nil {
		hp.Type = new(corev1.HostPathUnset)
	}
}

func validatePersistentVolume(pv *corev1.PersistentVolume) field.ErrorList {
	errs := validateObjectMeta(&pv.ObjectMeta, false, nameIsDNSSubdomain)
	spec := &pv.Spec
	errs = append(errs, validateAccessModes(spec.AccessModes, specPath.Child("accessModes"), "")...)
	capPath := specPath.Child("capacity")
	if len(spec.Capacity) == 0 {
		errs = append(errs, field.Required(capPath, ""))
	}
	if _, ok := spec.Capacity[corev1.ResourceStorage]; !ok || len(spec.Capacity) > 1 {
		errs = append(errs, field.NotSupported(capPath, spec.Capacity, []corev1.ResourceName{corev1.ResourceStorage}))
	}
	for _, r := range sortedResourceNames(spec.Capacity) {
		errs = append(errs, validateStorageQuantity(spec.Capacity[r], capPath.Key(string(r)))...)
	}
	if spec.StorageClassName != "" {
		errs = append(errs, validateClassName(spec.StorageClassName, specPath.Child("storageClassName"))...)
	}
	if m := spec.VolumeMode; m != nil && !supportedVolumeModes.Has(*m) {
		errs = append(errs, field.NotSupported(specPath.Child("volumeMode"), *m, sets.List(supportedVolumeModes)))
	}
	if p := spec.PersistentVolumeReclaimPolicy; p != "" && !supportedReclaimPolicies.Has(p) {
		errs = append(errs, field.NotSupported(specPath.Child("persistentVolumeReclaimPolicy"), p, sets.List(supportedReclaimPolicies)))
	}
	if ref := spec.ClaimRef; ref != nil && ref.Name == "" {
		errs = append(errs, field.Required(specPath.Child("claimRef", "name"), ""))
	}
	if na := spec.NodeAffinity; na != nil {
		if na.Required == nil {
			errs = append(errs, field.Required(specPath.Child("nodeAffinity", "required"), "must specify required node constraints"))
		} else {
			errs = append(errs, validateNodeSelector(na.Required, specPath.Child("nodeAffinity", "required"))...)
		}
	}
	return append(errs, validatePersistentVolumeSource(pv)...)
}

// validatePersistentVolumeSource checks that exactly one volume type is
// given, and the ones minik looks into (hostPath, local) in detail.
func validatePersistentVolumeSource(pv *corev1.PersistentVolume) field.ErrorList {
	var errs field.ErrorList
	v := reflect.ValueOf(pv.Spec.PersistentVolumeSource)
	t := v.Type()
	seen := 0
	for i := range t.NumField() {
		if v.Field(i).IsNil() {
			continue
		}
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if seen++; seen > 1 {
			errs = append(errs, field.Forbidden(specPath.Child(name), "may not specify more than 1 volume type"))
		}
	}
	if seen == 0 {
		return append(errs, field.Required(specPath, "must specify a volume type"))
	}
	if hp := pv.Spec.HostPath; hp != nil {
		p := specPath.Child("hostPath")
		if hp.Path == "" {
			errs = append(errs, field.Required(p.Child("path"), ""))
		} else {
			errs = append(errs, validatePathNoBacksteps(hp.Path, p.Child("path"))...)
			if pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle && strings.TrimRight(hp.Path, "/") == "" {
				errs = append(errs, field.Forbidden(specPath.Child("persistentVolumeReclaimPolicy"), "may not be 'recycle' for a hostPath mount of '/'"))
			}
		}
		if hp.Type != nil && !supportedHostPathTypes.Has(*hp.Type) {
			errs = append(errs, field.NotSupported(p.Child("type"), *hp.Type, sets.List(supportedHostPathTypes)))
		}
	}
	if l := pv.Spec.Local; l != nil {
		p := specPath.Child("local")
		if l.Path == "" {
			errs = append(errs, field.Required(p.Child("path"), ""))
		} else {
			errs = append(errs, validatePathNoBacksteps(l.Path, p.Child("path"))...)
		}
		if pv.Spec.NodeAffinity == nil {
			errs = append(errs, field.Required(specPath.Child("nodeAffinity"), "Local volume requires node affinity"))
		}
	}
	return errs
}

// validatePersistentVolumeUpdate is kube's: the source, the volume mode
// and a node affinity once set are fixed.
func validatePersistentVolumeUpdate(pv, old *corev1.PersistentVolume) field.ErrorList {
	errs := validateObjectMetaUpdate(&pv.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validatePersistentVolume(pv)...)
	if !apiequality.Semantic.DeepEqual(pv.Spec.PersistentVolumeSource, old.Spec.PersistentVolumeSource) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"), "spec.persistentvolumesource is immutable after creation"))
	}
	errs = append(errs, validateImmutable(pv.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if old.Spec.NodeAffinity != nil {
		errs = append(errs, validateImmutable(pv.Spec.NodeAffinity, old.Spec.NodeAffinity, specPath.Child("nodeAffinity"))...)
	}
	return errs
}

// ---- PersistentVolumeClaim ----

// persistentVolumeClaims: a claim starts Pending; its spec is
// fixed but for the binder setting volumeName once, a bound claim's
// storage request growing (expansion), its volumeAttributesClassName,
// and a class set on a claim that had none (the retroactive default).
var persistentVolumeClaims = &Resource{
	GroupVersion: coreV1, Name: "persistentvolumeclaims", SingularName: "persistentvolumeclaim", Kind: "PersistentVolumeClaim",
	Namespaced: true, ShortNames: []string{"pvc"}, HasStatus: true, DeleteReturnsObject: true,
	Strategy: Strategy{
		Default: defaulter(defaultPersistentVolumeClaim),
		PrepareForCreate: creator(func(pvc *corev1.PersistentVolumeClaim) {
			pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}
		}),
		Validate:       validator(validatePersistentVolumeClaim),
		ValidateUpdate: updateValidator(validatePersistentVolumeClaimUpdate),
		NoGeneration:   true,
		Fields: selectable(func(pvc *corev1.PersistentVolumeClaim) fields.Set {
			return fields.Set{"name": pvc.Name}
		}),
		Table: tables.PersistentVolumeClaim.Convertor(nil),
	},
}

// defaultPersistentVolumeClaim is kube's v1 defaulting: phase Pending and
// volume mode Filesystem. The class is the DefaultStorageClass admission
// plugin's.
func defaultPersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) {
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
	defaultPersistentVolumeClaimSpec(&pvc.Spec)
}

func defaultPersistentVolumeClaimSpec(spec *corev1.PersistentVolumeClaimSpec) {
	if spec.VolumeMode == nil {
		spec.VolumeMode = new(corev1.PersistentVolumeFilesystem)
	}
}

func validatePersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) field.ErrorList {
	errs := validateObjectMeta(&pvc.ObjectMeta, true, nameIsDNSSubdomain)
	return append(errs, validatePersistentVolumeClaimSpec(&pvc.Spec, specPath)...)
}

// validatePersistentVolumeClaimSpec is kube's ValidatePersistentVolumeClaimSpec
// (also what a StatefulSet's volumeClaimTemplates must pass).
func validatePersistentVolumeClaimSpec(spec *corev1.PersistentVolumeClaimSpec, p *field.Path) field.ErrorList {
	errs := validateAccessModes(spec.AccessModes, p.Child("accessModes"), "at least 1 access mode is required")
	if spec.Selector != nil {
		errs = append(errs, validateLabelSelector(spec.Selector, p.Child("selector"))...)
	}
	storagePath := p.Child("resources").Key(string(corev1.ResourceStorage))
	if q, ok := spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		errs = append(errs, field.Required(storagePath, ""))
	} else {
		errs = append(errs, validateStorageQuantity(q, storagePath)...)
	}
	if c := spec.StorageClassName; c != nil && *c != "" {
		errs = append(errs, validateClassName(*c, p.Child("storageClassName"))...)
	}
	if m := spec.VolumeMode; m != nil && !supportedVolumeModes.Has(*m) {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), *m, sets.List(supportedVolumeModes)))
	}
	if c := spec.VolumeAttributesClassName; c != nil && *c == "" {
		errs = append(errs, field.Required(p.Child("volumeAttributesClassName"), "an empty string is disallowed"))
	}
	return errs
}

// immutableClaimSpecMessage is kube's, without the spec diff it appends.
const immutableClaimSpecMessage = "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"

// validatePersistentVolumeClaimUpdate is kube's ValidatePersistentVolumeClaimUpdate.
func validatePersistentVolumeClaimUpdate(pvc, old *corev1.PersistentVolumeClaim) field.ErrorList {
	errs := validateObjectMetaUpdate(&pvc.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validatePersistentVolumeClaim(pvc)...)
	newSpec, oldSpec := pvc.Spec.DeepCopy(), old.Spec.DeepCopy()
	if oldSpec.VolumeName == "" {
		// The binder sets volumeName once.
		oldSpec.VolumeName = newSpec.VolumeName
	}
	oldAnn, hadAnn := old.Annotations[BetaStorageClassAnnotation]
	newAnn := pvc.Annotations[BetaStorageClassAnnotation]
	switch {
	case hadAnn && oldSpec.StorageClassName == nil && newSpec.StorageClassName != nil && *newSpec.StorageClassName == oldAnn && newAnn == oldAnn:
		// Moving the beta annotation's class to the field.
		newSpec.StorageClassName = nil
	default:
		errs = append(errs, validateImmutable(newAnn, oldAnn, metadataPath.Child("annotations").Key(BetaStorageClassAnnotation))...)
		if !hadAnn && oldSpec.StorageClassName == nil && newSpec.StorageClassName != nil && *newSpec.StorageClassName != "" {
			// A class given to a claim that had none (the binder's
			// retroactive default).
			oldSpec.StorageClassName = newSpec.StorageClassName
		}
	}
	if pvc.Status.Phase == corev1.ClaimBound && newSpec.Resources.Requests != nil {
		newSpec.Resources.Requests[corev1.ResourceStorage] = old.Spec.Resources.Requests[corev1.ResourceStorage]
	}
	newSpec.VolumeAttributesClassName = oldSpec.VolumeAttributesClassName
	if !apiequality.Semantic.DeepEqual(newSpec, oldSpec) {
		errs = append(errs, field.Forbidden(specPath, immutableClaimSpecMessage))
	}
	newSize, oldSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage], old.Spec.Resources.Requests[corev1.ResourceStorage]
	if newSize.Cmp(oldSize) < 0 {
		errs = append(errs, field.Forbidden(specPath.Child("resources", "requests", "storage"), "field can not be less than previous value"))
	}
	return append(errs, validateImmutable(pvc.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
}

// ---- StorageClass ----

// storageClasses: a class's provisioner, parameters, reclaim policy
// and binding mode are fixed at creation.
var storageClasses = &Resource{
	GroupVersion: storageV1, Name: "storageclasses", SingularName: "storageclass", Kind: "StorageClass",
	ShortNames: []string{"sc"}, DeleteReturnsObject: true,
	Strategy: Strategy{
		Default:        defaulter(defaultStorageClass),
		Validate:       validator(validateStorageClass),
		ValidateUpdate: updateValidator(validateStorageClassUpdate),
		NoGeneration:   true,
		Table:          tables.StorageClass.Convertor(nil),
	},
}

// defaultStorageClass is kube's v1 defaulting: reclaim policy Delete,
// binding mode Immediate.
func defaultStorageClass(sc *storagev1.StorageClass) {
	if sc.ReclaimPolicy == nil {
		sc.ReclaimPolicy = new(corev1.PersistentVolumeReclaimDelete)
	}
	if sc.VolumeBindingMode == nil {
		sc.VolumeBindingMode = new(storagev1.VolumeBindingImmediate)
	}
}

// maxProvisionerParameterSize bounds the total size of a class's
// parameters, as kube does.
const maxProvisionerParameterSize = 256 * (1 << 10)

func validateStorageClass(sc *storagev1.StorageClass) field.ErrorList {
	errs := validateObjectMeta(&sc.ObjectMeta, false, nameIsDNSSubdomain)
	p := field.NewPath("provisioner")
	if sc.Provisioner == "" {
		errs = append(errs, field.Required(p, ""))
	} else {
		for _, msg := range validation.IsQualifiedName(strings.ToLower(sc.Provisioner)) {
			errs = append(errs, field.Invalid(p, sc.Provisioner, msg))
		}
	}
	size := 0
	for k, v := range sc.Parameters {
		if k == "" {
			errs = append(errs, field.Invalid(field.NewPath("parameters"), sc.Parameters, "parameter keys may not be empty"))
		}
		size += len(k) + len(v)
	}
	if size > maxProvisionerParameterSize {
		errs = append(errs, field.TooLong(field.NewPath("parameters"), "", maxProvisionerParameterSize))
	}
	if rp := sc.ReclaimPolicy; rp != nil && !supportedClassReclaimPolicies.Has(*rp) {
		errs = append(errs, field.NotSupported(field.NewPath("reclaimPolicy"), *rp, sets.List(supportedClassReclaimPolicies)))
	}
	mp := field.NewPath("volumeBindingMode")
	switch m := sc.VolumeBindingMode; {
	case m == nil:
		errs = append(errs, field.Required(mp, ""))
	case !supportedBindingModes.Has(*m):
		errs = append(errs, field.NotSupported(mp, *m, sets.List(supportedBindingModes)))
	}
	return errs
}

func validateStorageClassUpdate(sc, old *storagev1.StorageClass) field.ErrorList {
	errs := validateObjectMetaUpdate(&sc.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateStorageClass(sc)...)
	if !reflect.DeepEqual(sc.Parameters, old.Parameters) {
		errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	if sc.Provisioner != old.Provisioner {
		errs = append(errs, field.Forbidden(field.NewPath("provisioner"), "updates to provisioner are forbidden."))
	}
	if !reflect.DeepEqual(sc.ReclaimPolicy, old.ReclaimPolicy) {
		errs = append(errs, field.Forbidden(field.NewPath("reclaimPolicy"), "updates to reclaimPolicy are forbidden."))
	}
	return append(errs, validateImmutable(sc.VolumeBindingMode, old.VolumeBindingMode, field.NewPath("volumeBindingMode"))...)
}

// ---- shared ----

// validateAccessModes: at least one (required says why), each known, and
// ReadWriteOncePod alone.
func validateAccessModes(modes []corev1.PersistentVolumeAccessMode, p *field.Path, required string) field.ErrorList {
	var errs field.ErrorList
	if len(modes) == 0 {
		errs = append(errs, field.Required(p, required))
	}
	rwop, other := false, false
	for _, m := range modes {
		if !supportedAccessModes.Has(m) {
			errs = append(errs, field.NotSupported(p, m, sets.List(supportedAccessModes)))
		}
		if m == corev1.ReadWriteOncePod {
			rwop = true
		} else {
			other = true
		}
	}
	if rwop && other {
		errs = append(errs, field.Forbidden(p, "may not use ReadWriteOncePod with other access modes"))
	}
	return errs
}

// validateStorageQuantity: a storage size is positive.
func validateStorageQuantity(q resource.Quantity, p *field.Path) field.ErrorList {
	if q.Sign() <= 0 {
		return field.ErrorList{field.Invalid(p, q.String(), "must be greater than zero")}
	}
	return nil
}

// validateClassName: a StorageClass name is a DNS subdomain.
func validateClassName(name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range nameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}
