package registry

import (
	"context"
	"fmt"
	"strings"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/admission"
	"minik/internal/tables"
)

// This file holds resource.k8s.io/v1, the kinds of Dynamic Resource
// Allocation: DeviceClasses, DeviceTaintRules, ResourceClaims,
// ResourceClaimTemplates and ResourceSlices, as kube v1.37 serves them
// with its default feature gates (DRAPrioritizedList, DRAAdminAccess,
// DRADeviceTaints, DRADeviceTaintRules, DRAConsumableCapacity,
// DRAPartitionableDevices, DRADeviceBindingConditions,
// DRAResourceClaimDeviceStatus and DRAExtendedResource on;
// DRADerivedAttributes, DRAListTypeAttributes, DRANodeAllocatableResources,
// DRAPartitionableDevicesType, DRADeviceCompatibilityGroups and
// DRAOptionalNodeOperations off, so their fields are dropped on every
// write, which is what kube's "drop unless already in use" amounts to when
// no stored object can have them). v1beta1, v1beta2 and v1alpha3
// (ResourcePoolStatusRequests) are off by default in kube and not served.
// The resourceclaim controller (internal/controllers/resourceclaim)
// creates the claims of pods' templates; nothing allocates devices.

// resourceV1 is resource.k8s.io/v1.
var resourceV1 = schema.GroupVersion{Group: "resource.k8s.io", Version: "v1"}

// resourceClaimsGR is resource.k8s.io's resourceclaims, as the claim
// authorization checks name them.
var resourceClaimsGR = schema.GroupResource{Group: resourceV1.Group, Resource: "resourceclaims"}

// ---- DeviceClass ----

// deviceClasses: a DeviceClass's selectors and configuration; generation
// starts at 1 and is bumped on spec changes, as kube's strategy does.
var deviceClasses = &Resource{
	GroupVersion: resourceV1, Name: "deviceclasses", SingularName: "deviceclass", Kind: "DeviceClass",
	DeleteReturnsObject: true,
	Strategy: Strategy{
		Validate: validator(func(c *resourcev1.DeviceClass) field.ErrorList {
			errs := validateObjectMeta(&c.ObjectMeta, false, nameIsDNSSubdomain)
			return append(errs, validateDeviceClassSpec(&c.Spec, nil, specPath)...)
		}),
		ValidateUpdate: updateValidator(func(c, old *resourcev1.DeviceClass) field.ErrorList {
			errs := validateObjectMeta(&c.ObjectMeta, false, nameIsDNSSubdomain)
			errs = append(errs, validateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)...)
			return append(errs, validateDeviceClassSpec(&c.Spec, &old.Spec, specPath)...)
		}),
		Table: tables.DeviceClass.Convertor(nil),
	},
}

// ---- DeviceTaintRule ----

// deviceTaintRules: a rule taints the devices its selector picks. Its
// status (conditions) is written through /status. A change of the taint's
// effect that keeps timeAdded moves timeAdded to now, as kube's strategy
// does. As kube's v1 registry, DELETE answers a Status and an update must
// name the resourceVersion it replaces.
var deviceTaintRules = &Resource{
	GroupVersion: resourceV1, Name: "devicetaintrules", SingularName: "devicetaintrule", Kind: "DeviceTaintRule",
	HasStatus: true,
	Strategy: Strategy{
		Default: defaulter(func(r *resourcev1.DeviceTaintRule) { defaultDeviceTaint(&r.Spec.Taint) }),
		PrepareForUpdate: updater(func(r, old *resourcev1.DeviceTaintRule) {
			if r.Spec.Taint.Effect != old.Spec.Taint.Effect && r.Spec.Taint.TimeAdded.Equal(old.Spec.Taint.TimeAdded) {
				r.Spec.Taint.TimeAdded = &metav1.Time{Time: time.Now().Truncate(time.Second)}
			}
		}),
		Validate: validator(func(r *resourcev1.DeviceTaintRule) field.ErrorList {
			errs := validateObjectMeta(&r.ObjectMeta, false, nameIsDNSSubdomain)
			return append(errs, validateDeviceTaintRuleSpec(&r.Spec, nil, specPath)...)
		}),
		ValidateUpdate: updateValidator(func(r, old *resourcev1.DeviceTaintRule) field.ErrorList {
			errs := validateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta)
			return append(errs, validateDeviceTaintRuleSpec(&r.Spec, &old.Spec, specPath)...)
		}),
		Status: &SubresourceStrategy{
			Merge: func(current, sent runtime.Object) runtime.Object {
				cur, ok := current.(*resourcev1.DeviceTaintRule)
				in, ok2 := sent.(*resourcev1.DeviceTaintRule)
				if ok && ok2 {
					cur.Status = *in.Status.DeepCopy()
				}
				return current
			},
			ValidateUpdate: updateValidator(func(r, old *resourcev1.DeviceTaintRule) field.ErrorList {
				errs := validateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateDeviceTaintRuleStatus(&r.Status)...)
			}),
		},
		RequireResourceVersion: true,
		Table:                  tables.DeviceTaintRule.Convertor(nil),
	},
}

// defaultDeviceTaint is kube's SetDefaults_DeviceTaint: a taint is added
// now, to the second.
func defaultDeviceTaint(t *resourcev1.DeviceTaint) {
	if t.TimeAdded == nil {
		t.TimeAdded = &metav1.Time{Time: time.Now().Truncate(time.Second)}
	}
}

// ---- ResourceClaim ----

// resourceClaims: the spec is fixed at creation; the scheduler and the
// drivers write the allocation, the reservations and the devices' status
// through /status, with kube's status strategy (Status). kube keeps no
// generation for claims. A status write that removes an allocated device
// drops that device's status entry.
var resourceClaims = &Resource{
	GroupVersion: resourceV1, Name: "resourceclaims", SingularName: "resourceclaim", Kind: "ResourceClaim",
	Namespaced: true, HasStatus: true, DeleteReturnsObject: true,
	Strategy: Strategy{
		Default: defaulter(func(c *resourcev1.ResourceClaim) {
			defaultResourceClaimSpec(&c.Spec)
			if a := c.Status.Allocation; a != nil {
				for i := range a.Devices.Results {
					r := &a.Devices.Results[i]
					defaultDeviceTolerations(r.Tolerations)
					// DRAOptionalNodeOperations is off.
					r.SkipNodeOperations = nil
				}
			}
		}),
		Validate: func(ctx context.Context, obj runtime.Object) field.ErrorList {
			c, ok := obj.(*resourcev1.ResourceClaim)
			if !ok {
				return wrongType[*resourcev1.ResourceClaim](obj)
			}
			errs := authorizedForAdmin(ctx, c.Spec.Devices.Requests, c.Namespace)
			errs = append(errs, validateObjectMeta(&c.ObjectMeta, true, nameIsDNSSubdomain)...)
			return append(errs, validateResourceClaimSpec(&c.Spec, specPath, false)...)
		},
		ValidateUpdate: updateValidator(func(c, old *resourcev1.ResourceClaim) field.ErrorList {
			// The spec is immutable, as its declarative validation says.
			errs := validateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)
			return append(errs, validateImmutableDeclared(c.Spec, old.Spec, specPath)...)
		}),
		Status: &SubresourceStrategy{
			Merge: mergeResourceClaimStatus,
			ValidateUpdate: func(ctx context.Context, obj, old runtime.Object) field.ErrorList {
				c, ok := obj.(*resourcev1.ResourceClaim)
				o, ok2 := old.(*resourcev1.ResourceClaim)
				if !ok || !ok2 {
					return wrongType[*resourcev1.ResourceClaim](obj)
				}
				return validateResourceClaimStatusWrite(ctx, c, o)
			},
		},
		NoGeneration: true,
		Table:        tables.ResourceClaim.Convertor(nil),
	},
}

// mergeResourceClaimStatus is kube's status strategy: only the status
// is written, and the status of devices no longer allocated goes.
func mergeResourceClaimStatus(current, sent runtime.Object) runtime.Object {
	cur, ok := current.(*resourcev1.ResourceClaim)
	in, ok2 := sent.(*resourcev1.ResourceClaim)
	if !ok || !ok2 {
		return current
	}
	old := cur.DeepCopy()
	cur.Status = *in.Status.DeepCopy()
	dropDeallocatedStatusDevices(cur, old)
	return cur
}

// validateResourceClaimStatusWrite is kube's status strategy's
// ValidateUpdate: who may write what of the status (authorization
// checks first), then ValidateResourceClaimStatusUpdate.
func validateResourceClaimStatusWrite(ctx context.Context, c, old *resourcev1.ResourceClaim) field.ErrorList {
	errs := authorizedForAdminStatus(ctx, &c.Status, &old.Status, c.Namespace)
	errs = append(errs, authorizedForBinding(ctx, &c.Status, &old.Status)...)
	if c.Status.Allocation != nil {
		errs = append(errs, authorizedForDeviceStatus(ctx, &c.Status, &old.Status, c.Namespace)...)
	}
	errs = append(errs, validateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)...)
	return append(errs, validateResourceClaimStatusUpdate(&c.Status, &old.Status, c.DeletionTimestamp != nil, gatherRequestNames(&c.Spec.Devices), field.NewPath("status"))...)
}

// defaultResourceClaimSpec is kube's v1 defaulting of a claim's requests
// (allocationMode ExactCount with count 1, tolerations' operator Equal),
// with the fields of v1.37's disabled gates dropped.
func defaultResourceClaimSpec(s *resourcev1.ResourceClaimSpec) {
	for i := range s.Devices.Requests {
		r := &s.Devices.Requests[i]
		if e := r.Exactly; e != nil {
			defaultAllocationMode(&e.AllocationMode, &e.Count)
			defaultDeviceTolerations(e.Tolerations)
			// DRADerivedAttributes is off.
			e.DerivedAttributes = nil
		}
		for j := range r.FirstAvailable {
			sub := &r.FirstAvailable[j]
			defaultAllocationMode(&sub.AllocationMode, &sub.Count)
			defaultDeviceTolerations(sub.Tolerations)
			sub.DerivedAttributes = nil
		}
	}
}

func defaultAllocationMode(mode *resourcev1.DeviceAllocationMode, count *int64) {
	if *mode == "" {
		*mode = resourcev1.DeviceAllocationModeExactCount
	}
	if *mode == resourcev1.DeviceAllocationModeExactCount && *count == 0 {
		*count = 1
	}
}

func defaultDeviceTolerations(ts []resourcev1.DeviceToleration) {
	for i := range ts {
		if ts[i].Operator == "" {
			ts[i].Operator = resourcev1.DeviceTolerationOpEqual
		}
	}
}

// deviceKey names an allocated device, shared or not.
type deviceKey struct {
	driver, pool, device, shareID string
}

func resultKey(r *resourcev1.DeviceRequestAllocationResult) deviceKey {
	k := deviceKey{driver: r.Driver, pool: r.Pool, device: r.Device}
	if r.ShareID != nil {
		k.shareID = string(*r.ShareID)
	}
	return k
}

func statusKey(d *resourcev1.AllocatedDeviceStatus) deviceKey {
	k := deviceKey{driver: d.Driver, pool: d.Pool, device: d.Device}
	if d.ShareID != nil {
		k.shareID = *d.ShareID
	}
	return k
}

// dropDeallocatedStatusDevices is kube's: a status write that removes an
// allocated device also removes that device's status entry.
func dropDeallocatedStatusDevices(c, old *resourcev1.ResourceClaim) {
	gone := map[deviceKey]bool{}
	if a := old.Status.Allocation; a != nil {
		for i := range a.Devices.Results {
			gone[resultKey(&a.Devices.Results[i])] = true
		}
	}
	if a := c.Status.Allocation; a != nil {
		for i := range a.Devices.Results {
			delete(gone, resultKey(&a.Devices.Results[i]))
		}
	}
	n := 0
	for _, d := range c.Status.Devices {
		if !gone[statusKey(&d)] {
			c.Status.Devices[n] = d
			n++
		}
	}
	c.Status.Devices = c.Status.Devices[:n]
	if len(c.Status.Devices) == 0 {
		c.Status.Devices = nil
	}
}

// ---- ResourceClaimTemplate ----

// resourceClaimTemplates: the spec of the claims made for pods; fixed at
// creation. No generation is kept.
var resourceClaimTemplates = &Resource{
	GroupVersion: resourceV1, Name: "resourceclaimtemplates", SingularName: "resourceclaimtemplate", Kind: "ResourceClaimTemplate",
	Namespaced: true, DeleteReturnsObject: true,
	Strategy: Strategy{
		Default: defaulter(func(t *resourcev1.ResourceClaimTemplate) { defaultResourceClaimSpec(&t.Spec.Spec) }),
		Validate: func(ctx context.Context, obj runtime.Object) field.ErrorList {
			t, ok := obj.(*resourcev1.ResourceClaimTemplate)
			if !ok {
				return wrongType[*resourcev1.ResourceClaimTemplate](obj)
			}
			return append(authorizedForAdmin(ctx, t.Spec.Spec.Devices.Requests, t.Namespace), validateResourceClaimTemplate(t)...)
		},
		ValidateUpdate: updateValidator(func(t, old *resourcev1.ResourceClaimTemplate) field.ErrorList {
			errs := validateResourceClaimTemplate(t)
			errs = append(errs, validateObjectMetaUpdate(&t.ObjectMeta, &old.ObjectMeta)...)
			return append(errs, validateImmutable(t.Spec, old.Spec, specPath)...)
		}),
		NoGeneration: true,
		Table:        tables.ResourceClaimTemplate.Convertor(nil),
	},
}

func validateResourceClaimTemplate(t *resourcev1.ResourceClaimTemplate) field.ErrorList {
	errs := validateObjectMeta(&t.ObjectMeta, true, nameIsDNSSubdomain)
	errs = append(errs, validateTemplateObjectMeta(&t.Spec.ObjectMeta, specPath.Child("metadata"))...)
	return append(errs, validateResourceClaimSpec(&t.Spec.Spec, specPath.Child("spec"), false)...)
}

// ---- ResourceSlice ----

// resourceSlices: a driver's devices of one pool, on a node or reachable
// from nodes; the driver, pool name and node are fixed. Generation starts
// at 1 and is bumped on spec changes. Lists select on spec.nodeName,
// spec.driver and spec.pool.name.
var resourceSlices = &Resource{
	GroupVersion: resourceV1, Name: "resourceslices", SingularName: "resourceslice", Kind: "ResourceSlice",
	DeleteReturnsObject: true,
	Strategy: Strategy{
		Default: defaulter(defaultResourceSlice),
		Validate: func(ctx context.Context, obj runtime.Object) field.ErrorList {
			s, ok := obj.(*resourcev1.ResourceSlice)
			if !ok {
				return wrongType[*resourcev1.ResourceSlice](obj)
			}
			errs := validateObjectMeta(&s.ObjectMeta, false, nameIsDNSSubdomain)
			return warnUppercaseDriver(ctx, s, append(errs, validateResourceSliceSpec(&s.Spec, nil, specPath)...))
		},
		ValidateUpdate: func(ctx context.Context, obj, old runtime.Object) field.ErrorList {
			s, ok := obj.(*resourcev1.ResourceSlice)
			o, ok2 := old.(*resourcev1.ResourceSlice)
			if !ok || !ok2 {
				return wrongType[*resourcev1.ResourceSlice](obj)
			}
			errs := validateObjectMetaUpdate(&s.ObjectMeta, &o.ObjectMeta)
			return warnUppercaseDriver(ctx, s, append(errs, validateResourceSliceSpec(&s.Spec, &o.Spec, specPath)...))
		},
		Fields: selectable(func(s *resourcev1.ResourceSlice) fields.Set {
			node := ""
			if s.Spec.NodeName != nil {
				node = *s.Spec.NodeName
			}
			return fields.Set{
				resourcev1.ResourceSliceSelectorNodeName: node,
				resourcev1.ResourceSliceSelectorDriver:   s.Spec.Driver,
				resourcev1.ResourceSliceSelectorPoolName: s.Spec.Pool.Name,
			}
		}),
		Table: tables.ResourceSlice.Convertor(nil),
	},
}

// warnUppercaseDriver sends kube's warning about a valid slice whose
// driver name is not lower case, and returns errs.
func warnUppercaseDriver(ctx context.Context, s *resourcev1.ResourceSlice, errs field.ErrorList) field.ErrorList {
	if len(errs) == 0 && s.Spec.Driver != strings.ToLower(s.Spec.Driver) {
		admission.AddWarning(ctx, fmt.Sprintf("spec.driver: driver names should be lowercase; %q contains uppercase characters", s.Spec.Driver))
	}
	return errs
}

// defaultResourceSlice is kube's v1 defaulting (taints' timeAdded) with
// the fields of v1.37's disabled gates dropped.
func defaultResourceSlice(s *resourcev1.ResourceSlice) {
	spec := &s.Spec
	// DRAPartitionableDevicesType and DRAOptionalNodeOperations are off.
	spec.PartitionTypeAttribute = nil
	spec.SkipNodeOperations = nil
	for i := range spec.Devices {
		d := &spec.Devices[i]
		for j := range d.Taints {
			defaultDeviceTaint(&d.Taints[j])
		}
		// DRANodeAllocatableResources is off.
		d.NodeAllocatableResources = nil
		// DRADeviceCompatibilityGroups is off.
		for j := range d.ConsumesCounters {
			d.ConsumesCounters[j].CompatibilityGroups = nil
		}
		// DRAListTypeAttributes is off.
		for k, a := range d.Attributes {
			if a.BoolValues != nil || a.IntValues != nil || a.StringValues != nil || a.VersionValues != nil {
				a.BoolValues, a.IntValues, a.StringValues, a.VersionValues = nil, nil, nil, nil
				d.Attributes[k] = a
			}
		}
	}
}
