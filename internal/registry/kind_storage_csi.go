package registry

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// This file holds the storage.k8s.io/v1 kinds of CSI drivers and volume
// attributes: CSIDrivers, CSINodes, CSIStorageCapacities,
// VolumeAttachments and VolumeAttributesClasses, with kube's defaulting
// and validation (its v1.37 feature gates: SELinuxMountReadWriteOncePod,
// MutableCSINodeAllocatableCount, CSIServiceAccountTokenSecrets and
// VolumeLimitScaling on, CSIVolumeHealth off). minik serves them; no
// controller attaches CSI volumes yet.

// Limits of kube's storage validation.
const (
	maxProvisionerParameterLen    = 512
	maxAttachedVolumeMetadataSize = 256 * (1 << 10)
	maxVolumeErrorMessageSize     = 1024
	csiNodeIDMaxLength            = 256
	maxStorageHealthConditions    = 16
)

// ---- CSIDriver ----

// csiDrivers: attachRequired and the lifecycle modes are fixed at
// creation. minik starts metadata.generation at 1 and bumps it on spec
// changes; kube's strategy only bumps it (from 0).
var csiDrivers = &Resource{
	GroupVersion: storageV1, Name: "csidrivers", SingularName: "csidriver", Kind: "CSIDriver",
	DeleteReturnsObject: true,
	Strategy: Strategy{
		Default: defaulter(defaultCSIDriver),
		Validate: validator(func(d *storagev1.CSIDriver) field.ErrorList {
			errs := validateObjectMeta(&d.ObjectMeta, false, nameIsDNSSubdomain)
			return append(errs, validateCSIDriverSpec(&d.Spec, specPath)...)
		}),
		ValidateUpdate: updateValidator(func(d, old *storagev1.CSIDriver) field.ErrorList {
			errs := validateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta)
			errs = append(errs, validateCSIDriverSpec(&d.Spec, specPath)...)
			// kube's path says "attachedRequired".
			errs = append(errs, validateImmutable(d.Spec.AttachRequired, old.Spec.AttachRequired, specPath.Child("attachedRequired"))...)
			return append(errs, validateImmutable(d.Spec.VolumeLifecycleModes, old.Spec.VolumeLifecycleModes, specPath.Child("volumeLifecycleModes"))...)
		}),
		Table: tables.CSIDriver.Convertor(nil),
	},
}

// defaultCSIDriver is kube's v1 defaulting with v1.37's gates.
func defaultCSIDriver(d *storagev1.CSIDriver) {
	s := &d.Spec
	for _, b := range []struct {
		field **bool
		def   bool
	}{
		{&s.AttachRequired, true}, {&s.PodInfoOnMount, false}, {&s.StorageCapacity, false},
		{&s.RequiresRepublish, false}, {&s.SELinuxMount, false}, {&s.PreventPodSchedulingIfMissing, false},
	} {
		if *b.field == nil {
			*b.field = new(b.def)
		}
	}
	if s.FSGroupPolicy == nil {
		s.FSGroupPolicy = new(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)
	}
	if len(s.VolumeLifecycleModes) == 0 {
		s.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}
	}
}

var (
	supportedFSGroupPolicies = sets.New(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy, storagev1.FileFSGroupPolicy, storagev1.NoneFSGroupPolicy)
	lifecycleModes           = []string{string(storagev1.VolumeLifecyclePersistent), string(storagev1.VolumeLifecycleEphemeral)}
)

// validateCSIDriverSpec is kube's validateCSIDriverSpec.
func validateCSIDriverSpec(s *storagev1.CSIDriverSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, b := range []struct {
		v    *bool
		name string
	}{
		// kube's path says "attachedRequired".
		{s.AttachRequired, "attachedRequired"}, {s.PodInfoOnMount, "podInfoOnMount"}, {s.StorageCapacity, "storageCapacity"},
	} {
		if b.v == nil {
			errs = append(errs, field.Required(p.Child(b.name), ""))
		}
	}
	if f := s.FSGroupPolicy; f != nil && !supportedFSGroupPolicies.Has(*f) {
		errs = append(errs, field.NotSupported(p.Child("fsGroupPolicy"), f, sets.List(supportedFSGroupPolicies)))
	}
	errs = append(errs, validateTokenRequests(s.TokenRequests, p.Child("tokenRequests"))...)
	for _, m := range s.VolumeLifecycleModes {
		if m != storagev1.VolumeLifecyclePersistent && m != storagev1.VolumeLifecycleEphemeral {
			errs = append(errs, field.NotSupported(p.Child("volumeLifecycleModes"), m, lifecycleModes))
		}
	}
	if s.SELinuxMount == nil {
		errs = append(errs, field.Required(p.Child("seLinuxMount"), ""))
	}
	if n := s.NodeAllocatableUpdatePeriodSeconds; n != nil && *n < 10 {
		errs = append(errs, field.Invalid(p.Child("nodeAllocatableUpdatePeriodSeconds"), *n, "must be greater than or equal to 10 seconds"))
	}
	if s.ServiceAccountTokenInSecrets != nil && len(s.TokenRequests) == 0 {
		errs = append(errs, field.Invalid(p.Child("serviceAccountTokenInSecrets"), s.ServiceAccountTokenInSecrets, "serviceAccountTokenInSecrets is set but no tokenRequests are specified"))
	}
	if s.PreventPodSchedulingIfMissing == nil {
		errs = append(errs, field.Required(p.Child("preventPodSchedulingIfMissing"), ""))
	}
	return errs
}

// validateTokenRequests: audiences differ, and expirations lie between
// 10 minutes and 2^32 seconds.
func validateTokenRequests(reqs []storagev1.TokenRequest, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, r := range reqs {
		ip := p.Index(i)
		if seen.Has(r.Audience) {
			errs = append(errs, field.Duplicate(ip.Child("audience"), r.Audience))
			continue
		}
		seen.Insert(r.Audience)
		if e := r.ExpirationSeconds; e != nil {
			if *e < 600 {
				errs = append(errs, field.Invalid(ip.Child("expirationSeconds"), *e, "may not specify a duration less than 10 minutes"))
			}
			if *e > 1<<32 {
				errs = append(errs, field.Invalid(ip.Child("expirationSeconds"), *e, "may not specify a duration larger than 2^32 seconds"))
			}
		}
	}
	return errs
}

// validateCSIDriverName is kube's core ValidateCSIDriverName.
func validateCSIDriverName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if len(name) > 63 {
		errs = append(errs, field.TooLong(p, "", 63))
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(name)) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// ---- CSINode ----

// csiNodes: a CSINode is named after its node; a driver's entry, once
// there, changes only its allocatable count. Its status is written
// through /status. minik keeps status.storageHealth as kube does with
// its CSIVolumeHealth gate on (kube v1.37's default drops it).
var csiNodes = &Resource{
	GroupVersion: storageV1, Name: "csinodes", SingularName: "csinode", Kind: "CSINode",
	HasStatus: true, DeleteReturnsObject: true,
	Strategy: Strategy{
		Validate:       validator(validateCSINode),
		ValidateUpdate: updateValidator(validateCSINodeUpdate),
		NoGeneration:   true,
		Table:          tables.CSINode.Convertor(nil),
	},
}

func validateCSINode(n *storagev1.CSINode) field.ErrorList {
	errs := validateObjectMeta(&n.ObjectMeta, false, nameIsDNSSubdomain)
	dp := specPath.Child("drivers")
	names := sets.New[string]()
	for i, d := range n.Spec.Drivers {
		ip := dp.Index(i)
		errs = append(errs, validateCSIDriverName(d.Name, ip.Child("name"))...)
		switch {
		case d.NodeID == "":
			errs = append(errs, field.Required(ip.Child("nodeID"), d.NodeID))
		case len(d.NodeID) > csiNodeIDMaxLength:
			errs = append(errs, field.Invalid(ip.Child("nodeID"), d.NodeID, fmt.Sprintf("must be %d characters or less", csiNodeIDMaxLength)))
		}
		if a := d.Allocatable; a != nil && a.Count != nil {
			errs = append(errs, validateNonnegative(int64(*a.Count), ip.Child("allocatable", "count"))...)
		}
		if names.Has(d.Name) {
			errs = append(errs, field.Duplicate(ip.Child("name"), d.Name))
		}
		names.Insert(d.Name)
		keys := sets.New[string]()
		for _, k := range d.TopologyKeys {
			if k == "" {
				errs = append(errs, field.Required(ip, k))
			}
			if keys.Has(k) {
				errs = append(errs, field.Duplicate(ip, k))
			}
			keys.Insert(k)
			errs = append(errs, validateQualifiedName(k, ip)...)
		}
	}
	return errs
}

// validateCSINodeUpdate is kube's ValidateCSINodeUpdate (with
// MutableCSINodeAllocatableCount on), plus its status rules, which a
// write through /status meets here.
func validateCSINodeUpdate(n, old *storagev1.CSINode) field.ErrorList {
	errs := validateCSINode(n)
	for _, od := range old.Spec.Drivers {
		for _, nd := range n.Spec.Drivers {
			if od.Name != nd.Name {
				continue
			}
			a, b := nd.DeepCopy(), od.DeepCopy()
			a.Allocatable, b.Allocatable = nil, nil
			errs = append(errs, validateImmutable(a, b, specPath.Child("drivers"))...)
		}
	}
	return append(errs, validateCSINodeStatus(&n.Status)...)
}

var (
	storageHealthStatuses = sets.New(storagev1.StorageUnreachable, storagev1.StorageDegraded)
	volumeModes           = []corev1.PersistentVolumeMode{corev1.PersistentVolumeFilesystem, corev1.PersistentVolumeBlock}
)

// validateCSINodeStatus is kube's ValidateCSINodeStatusUpdate.
func validateCSINodeStatus(st *storagev1.CSINodeStatus) field.ErrorList {
	var errs field.ErrorList
	hp := field.NewPath("status", "storageHealth")
	seen := sets.New[string]()
	for i, h := range st.StorageHealth {
		ip := hp.Index(i)
		if seen.Has(h.Name) {
			errs = append(errs, field.Duplicate(ip, h.Name))
		}
		seen.Insert(h.Name)
		if h.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			errs = append(errs, validateCSIDriverName(h.Name, ip.Child("name"))...)
		}
		cp := ip.Child("healthConditions")
		if len(h.HealthConditions) > maxStorageHealthConditions {
			errs = append(errs, field.TooMany(cp, len(h.HealthConditions), maxStorageHealthConditions))
			continue
		}
		for j, c := range h.HealthConditions {
			jp := cp.Index(j)
			if !storageHealthStatuses.Has(c.Status) {
				errs = append(errs, field.NotSupported(jp.Child("status"), c.Status, sets.List(storageHealthStatuses)))
			}
			if c.Reason == "" {
				errs = append(errs, field.Required(jp.Child("reason"), ""))
			} else {
				for _, msg := range metav1validation.IsValidConditionReason(c.Reason) {
					errs = append(errs, field.Invalid(jp.Child("reason"), c.Reason, msg))
				}
				if len(c.Reason) > 256 {
					errs = append(errs, field.TooLong(jp.Child("reason"), c.Reason, 256))
				}
			}
			if len(c.Message) > 1024 {
				errs = append(errs, field.TooLong(jp.Child("message"), c.Message, 1024))
			}
			if m := c.AccessMode; m != nil && !supportedAccessModes.Has(*m) {
				errs = append(errs, field.NotSupported(jp.Child("accessMode"), *m, sets.List(supportedAccessModes)))
			}
			if m := c.VolumeMode; m != nil && *m != corev1.PersistentVolumeFilesystem && *m != corev1.PersistentVolumeBlock {
				errs = append(errs, field.NotSupported(jp.Child("volumeMode"), *m, volumeModes))
			}
		}
	}
	return errs
}

// ---- CSIStorageCapacity ----

// csiStorageCapacities: the topology and class a capacity was reported
// for are fixed. No generation is kept.
var csiStorageCapacities = &Resource{
	GroupVersion: storageV1, Name: "csistoragecapacities", SingularName: "csistoragecapacity", Kind: "CSIStorageCapacity",
	Namespaced: true,
	Strategy: Strategy{
		Validate: validator(func(c *storagev1.CSIStorageCapacity) field.ErrorList {
			return validateCSIStorageCapacity(c, false)
		}),
		ValidateUpdate: updateValidator(func(c, old *storagev1.CSIStorageCapacity) field.ErrorList {
			errs := validateCSIStorageCapacity(c, len(validateLabelSelector(old.NodeTopology, nil)) > 0)
			errs = append(errs, validateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)...)
			if !apiequality.Semantic.DeepEqual(c.NodeTopology, old.NodeTopology) {
				errs = append(errs, field.Invalid(field.NewPath("nodeTopology"), c.NodeTopology, immutableMsg))
			}
			if c.StorageClassName != old.StorageClassName {
				errs = append(errs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, immutableMsg))
			}
			return errs
		}),
		NoGeneration: true,
		Table:        tables.CSIStorageCapacity.Convertor(nil),
	},
}

func validateCSIStorageCapacity(c *storagev1.CSIStorageCapacity, allowInvalidLabelValue bool) field.ErrorList {
	errs := validateObjectMeta(&c.ObjectMeta, true, nameIsDNSSubdomain)
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValue}
	errs = append(errs, metav1validation.ValidateLabelSelector(c.NodeTopology, opts, field.NewPath("nodeTopology"))...)
	errs = append(errs, validateClassName(c.StorageClassName, field.NewPath("storageClassName"))...)
	if q := c.Capacity; q != nil && q.Sign() < 0 {
		errs = append(errs, field.Invalid(field.NewPath("capacity"), q.String(), "must be greater than or equal to 0"))
	}
	return errs
}

// ---- VolumeAttachment ----

// volumeAttachments: the spec is fixed at creation; the attacher writes
// the status through /status. No generation is kept.
var volumeAttachments = &Resource{
	GroupVersion: storageV1, Name: "volumeattachments", SingularName: "volumeattachment", Kind: "VolumeAttachment",
	HasStatus: true, DeleteReturnsObject: true,
	Strategy: Strategy{
		Validate: validator(validateVolumeAttachment),
		ValidateUpdate: updateValidator(func(va, old *storagev1.VolumeAttachment) field.ErrorList {
			errs := validateVolumeAttachment(va)
			return append(errs, validateImmutableDeclared(va.Spec, old.Spec, specPath)...)
		}),
		NoGeneration: true,
		Table:        tables.VolumeAttachment.Convertor(nil),
	},
}

// validateVolumeAttachment is kube's ValidateVolumeAttachment, but for
// an inline volume spec, which minik checks only for being there.
func validateVolumeAttachment(va *storagev1.VolumeAttachment) field.ErrorList {
	errs := validateObjectMeta(&va.ObjectMeta, false, nameIsDNSSubdomain)
	errs = append(errs, validateCSIDriverName(va.Spec.Attacher, specPath.Child("attacher"))...)
	src, sp := va.Spec.Source, specPath.Child("source")
	const exactlyOne = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
	switch {
	case src.InlineVolumeSpec == nil && src.PersistentVolumeName == nil:
		errs = append(errs, field.Required(sp, exactlyOne))
	case src.InlineVolumeSpec != nil && src.PersistentVolumeName != nil:
		errs = append(errs, field.Forbidden(sp, exactlyOne))
	case src.PersistentVolumeName != nil && *src.PersistentVolumeName == "":
		errs = append(errs, field.Required(sp.Child("persistentVolumeName"), "must specify non empty persistentVolumeName"))
	}
	errs = append(errs, validateName(va.Spec.NodeName, nameIsDNSSubdomain, false, specPath.Child("nodeName"))...)
	stp := field.NewPath("status")
	size := 0
	for k, v := range va.Status.AttachmentMetadata {
		size += len(k) + len(v)
	}
	if size > maxAttachedVolumeMetadataSize {
		errs = append(errs, field.TooLong(stp.Child("attachmentMetadata"), "", maxAttachedVolumeMetadataSize))
	}
	for _, ve := range []struct {
		name string
		e    *storagev1.VolumeError
	}{{"attachError", va.Status.AttachError}, {"detachError", va.Status.DetachError}} {
		name, e := ve.name, ve.e
		if e == nil {
			continue
		}
		if len(e.Message) > maxVolumeErrorMessageSize {
			errs = append(errs, field.TooLong(stp.Child(name, "message"), "", maxVolumeErrorMessageSize))
		}
		if c := e.ErrorCode; c != nil && *c < 0 {
			errs = append(errs, field.Invalid(stp.Child(name, "errorCode"), *c, validation.InclusiveRangeError(0, math.MaxInt32)))
		}
	}
	if pv := src.PersistentVolumeName; pv != nil {
		for _, msg := range nameIsDNSSubdomain(*pv, false) {
			errs = append(errs, field.Invalid(field.NewPath("spec.source.persistentVolumeName"), *pv, msg))
		}
	}
	return errs
}

// ---- VolumeAttributesClass ----

// volumeAttributesClasses: the driver and parameters are fixed at
// creation. No generation is kept.
var volumeAttributesClasses = &Resource{
	GroupVersion: storageV1, Name: "volumeattributesclasses", SingularName: "volumeattributesclass", Kind: "VolumeAttributesClass",
	ShortNames: []string{"vac"}, DeleteReturnsObject: true,
	Strategy: Strategy{
		Validate: validator(validateVolumeAttributesClass),
		ValidateUpdate: updateValidator(func(c, old *storagev1.VolumeAttributesClass) field.ErrorList {
			errs := validateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)
			if c.DriverName != old.DriverName {
				errs = append(errs, field.Forbidden(field.NewPath("driverName"), "updates to driverName are forbidden."))
			}
			if !reflect.DeepEqual(c.Parameters, old.Parameters) {
				errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
			}
			return append(errs, validateVolumeAttributesClass(c)...)
		}),
		NoGeneration: true,
		Table:        tables.VolumeAttributesClass.Convertor(nil),
	},
}

func validateVolumeAttributesClass(c *storagev1.VolumeAttributesClass) field.ErrorList {
	errs := validateObjectMeta(&c.ObjectMeta, false, nameIsDNSSubdomain)
	dp := field.NewPath("driverName")
	if c.DriverName == "" {
		errs = append(errs, field.Required(dp, ""))
	} else {
		errs = append(errs, validateQualifiedName(strings.ToLower(c.DriverName), dp)...)
	}
	pp := field.NewPath("parameters")
	if len(c.Parameters) > maxProvisionerParameterLen {
		return append(errs, field.TooLong(pp, "", maxProvisionerParameterLen))
	}
	size := 0
	for k, v := range c.Parameters {
		if k == "" {
			errs = append(errs, field.Invalid(pp, k, "field can not be empty."))
		}
		size += len(k) + len(v)
	}
	if size > maxProvisionerParameterSize {
		errs = append(errs, field.TooLong(pp, "", maxProvisionerParameterSize))
	}
	if len(c.Parameters) == 0 {
		errs = append(errs, field.Required(pp, "must contain at least one key/value pair"))
	}
	return errs
}
