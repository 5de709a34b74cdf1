package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/operation"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// Validation of the resource.k8s.io kinds: kube's
// pkg/apis/resource/validation, on the v1 types, with v1.37's default
// gates. Where v1.37's declarative validation (enforced at beta) answers
// differently from the handwritten code it covers, the declarative answer
// is kept (a device attribute's union, the claim spec's immutability,
// constraint attribute names, allocation results' pools and share IDs),
// with apimachinery's validate functions where they are exported.
// CEL selectors compile with k8s.io/dynamic-resource-allocation/cel, the
// compiler kube-apiserver uses.

// Limits of kube's internal resource API that k8s.io/api does not export.
const (
	resourceSliceMaxCounterSets                         = 8
	resourceSliceMaxCountersPerCounterSet               = 32
	resourceSliceMaxDeviceCounterConsumptionsPerDevice  = 2
	resourceSliceMaxCountersPerDeviceCounterConsumption = 32
	capacityRequestPolicyDiscreteMaxOptions             = 10
	resourceSliceMaxAttributesAndCapacitiesPerDevice    = 32
	resourceSliceMaxAttributeValuesPerDevice            = 48
	deviceMaxDomainLength                               = 63
	deviceMaxIDLength                                   = 32
	deviceAttributeMaxValueLength                       = 64
	deviceTaintRuleStatusMaxConditions                  = 8
	allocatedDeviceStatusMaxConditions                  = 8
	attributeAndCapacityMaxKeyLength                    = deviceMaxDomainLength + 1 + deviceMaxIDLength
)

// draCompiler is kube-apiserver's CEL compiler of device selectors, with
// DRAConsumableCapacity on and DRAListTypeAttributes off.
var draCompiler = dracel.GetCompiler(dracel.Features{EnableConsumableCapacity: true})

// validatePoolName: slash-separated DNS subdomains, 253 characters at most.
func validatePoolName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if len(name) > resourcev1.PoolNameMaxLength {
		errs = append(errs, field.TooLong(p, "", resourcev1.PoolNameMaxLength))
	}
	for _, part := range strings.Split(name, "/") {
		errs = append(errs, validateDNS1123Subdomain(part, p)...)
	}
	return errs
}

// validateDriverNameDeclared is the driver name check of v1.37's
// declarative validation (required, at most 63 characters, a DNS
// subdomain in any case), which replaces the handwritten one for opaque
// configuration and allocation results.
func validateDriverNameDeclared(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if len(name) > resourcev1.DriverNameMaxLength {
		errs = append(errs, field.TooLong(p, "", resourcev1.DriverNameMaxLength))
	}
	//lint:ignore SA1019 kube v1.37's declarative validation checks driver names caseless, so does minik.
	for _, msg := range content.IsDNS1123SubdomainCaseless(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// ---- ResourceClaim spec ----

// requestNames maps a claim's request names to their subrequests' names.
type requestNames map[string]sets.Set[string]

// Has tells whether s names a request ("req") or a subrequest ("req/sub").
func (r requestNames) Has(s string) bool {
	segments := strings.Split(s, "/")
	if len(segments) > 2 {
		return false
	}
	subs, found := r[segments[0]]
	if !found {
		return false
	}
	return len(segments) == 1 || subs.Has(segments[1])
}

func gatherRequestNames(c *resourcev1.DeviceClaim) requestNames {
	names := requestNames{}
	for _, r := range c.Requests {
		if len(r.FirstAvailable) == 0 {
			names[r.Name] = nil
			continue
		}
		subs := sets.New[string]()
		for _, s := range r.FirstAvailable {
			subs.Insert(s.Name)
		}
		names[r.Name] = subs
	}
	return names
}

// validateResourceClaimSpec is kube's validateResourceClaimSpec; stored
// skips the compilation of CEL expressions already stored.
func validateResourceClaimSpec(spec *resourcev1.ResourceClaimSpec, p *field.Path, stored bool) field.ErrorList {
	c := &spec.Devices
	dp := p.Child("devices")
	names := gatherRequestNames(c)
	errs := validateResourceSet(c.Requests, resourcev1.DeviceRequestsMaxSize,
		func(r resourcev1.DeviceRequest, p *field.Path) field.ErrorList {
			return validateDeviceRequest(r, p, stored)
		},
		func(r resourcev1.DeviceRequest) string { return r.Name }, dp.Child("requests"))
	errs = append(errs, validateResourceSlice(c.Constraints, resourcev1.DeviceConstraintsMaxSize,
		func(ct resourcev1.DeviceConstraint, p *field.Path) field.ErrorList {
			return validateDeviceConstraint(ct, p, names)
		}, dp.Child("constraints"))...)
	errs = append(errs, validateResourceSlice(c.Config, resourcev1.DeviceConfigMaxSize,
		func(cfg resourcev1.DeviceClaimConfiguration, p *field.Path) field.ErrorList {
			errs := validateResourceSet(cfg.Requests, resourcev1.DeviceRequestsMaxSize,
				func(name string, p *field.Path) field.ErrorList { return validateRequestNameRef(name, p, names) },
				func(s string) string { return s }, p.Child("requests"))
			return append(errs, validateDeviceConfiguration(cfg.DeviceConfiguration, p, stored)...)
		}, dp.Child("config"))...)
	return errs
}

func validateDeviceRequest(r resourcev1.DeviceRequest, p *field.Path, stored bool) field.ErrorList {
	errs := validateDNS1123Label(r.Name, p.Child("name"))
	hasFirst, hasExactly := len(r.FirstAvailable) > 0, r.Exactly != nil
	switch {
	case !hasFirst && !hasExactly:
		errs = append(errs, field.Required(p, "exactly one of `exactly` or `firstAvailable` is required"))
	case hasFirst && hasExactly:
		errs = append(errs, field.Invalid(p, nil, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"))
	case hasFirst:
		errs = append(errs, validateResourceSet(r.FirstAvailable, resourcev1.FirstAvailableDeviceRequestMaxSize,
			func(s resourcev1.DeviceSubRequest, p *field.Path) field.ErrorList {
				errs := validateDNS1123Label(s.Name, p.Child("name"))
				return append(errs, validateDeviceRequestCommon(s.DeviceClassName, s.Selectors, s.AllocationMode, s.Count, s.Tolerations, p, stored)...)
			},
			func(s resourcev1.DeviceSubRequest) string { return s.Name }, p.Child("firstAvailable"))...)
	default:
		e := r.Exactly
		errs = append(errs, validateDeviceRequestCommon(e.DeviceClassName, e.Selectors, e.AllocationMode, e.Count, e.Tolerations, p.Child("exactly"), stored)...)
	}
	return errs
}

// validateDeviceRequestCommon checks what exact requests and subrequests
// share: the class, selectors, allocation mode and tolerations.
func validateDeviceRequestCommon(class string, selectors []resourcev1.DeviceSelector, mode resourcev1.DeviceAllocationMode, count int64, tolerations []resourcev1.DeviceToleration, p *field.Path, stored bool) field.ErrorList {
	var errs field.ErrorList
	if class == "" {
		errs = append(errs, field.Required(p.Child("deviceClassName"), ""))
	} else {
		errs = append(errs, validateDNS1123Subdomain(class, p.Child("deviceClassName"))...)
	}
	errs = append(errs, validateSelectors(selectors, p.Child("selectors"), stored)...)
	switch mode {
	case resourcev1.DeviceAllocationModeAll:
		if count != 0 {
			errs = append(errs, field.Invalid(p.Child("count"), count, fmt.Sprintf("must not be specified when allocationMode is '%s'", mode)))
		}
	case resourcev1.DeviceAllocationModeExactCount:
		if count <= 0 {
			errs = append(errs, field.Invalid(p.Child("count"), count, "must be greater than zero"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("allocationMode"), mode, []resourcev1.DeviceAllocationMode{resourcev1.DeviceAllocationModeAll, resourcev1.DeviceAllocationModeExactCount}))
	}
	if len(tolerations) > resourcev1.DeviceTolerationsMaxLength {
		return append(errs, field.TooMany(p.Child("tolerations"), len(tolerations), resourcev1.DeviceTolerationsMaxLength))
	}
	for i, t := range tolerations {
		errs = append(errs, validateDeviceToleration(t, p.Child("tolerations").Index(i))...)
	}
	return errs
}

func validateSelectors(selectors []resourcev1.DeviceSelector, p *field.Path, stored bool) field.ErrorList {
	return validateResourceSlice(selectors, resourcev1.DeviceSelectorsMaxSize, func(s resourcev1.DeviceSelector, p *field.Path) field.ErrorList {
		if s.CEL == nil {
			return field.ErrorList{field.Required(p.Child("cel"), "")}
		}
		return validateCELSelector(s.CEL.Expression, p.Child("cel", "expression"), stored)
	}, p)
}

// validateCELSelector compiles a selector as kube-apiserver does: too
// long, not compiling, not a bool or too costly are errors; a stored
// expression is not compiled again.
func validateCELSelector(expression string, p *field.Path, stored bool) field.ErrorList {
	if stored {
		return nil
	}
	if len(expression) > resourcev1.CELSelectorExpressionMaxLength {
		return field.ErrorList{field.TooLong(p, "", resourcev1.CELSelectorExpressionMaxLength)}
	}
	envType := environment.NewExpressions
	result := draCompiler.CompileCELExpression(expression, dracel.Options{EnvType: &envType})
	if result.Error != nil {
		return field.ErrorList{celFieldError(p, expression, result.Error)}
	}
	if result.MaxCost > resourcev1.CELSelectorExpressionMaxCost {
		return field.ErrorList{field.Forbidden(p, "too complex, exceeds cost limit")}
	}
	return nil
}

// celFieldError is kube's convertCELErrorToValidationError.
func celFieldError(p *field.Path, expression string, err *apiservercel.Error) *field.Error {
	var celErr *apiservercel.Error
	if errors.As(err, &celErr) {
		switch celErr.Type {
		case apiservercel.ErrorTypeRequired:
			return field.Required(p, celErr.Detail)
		case apiservercel.ErrorTypeInvalid:
			return field.Invalid(p, expression, celErr.Detail)
		case apiservercel.ErrorTypeInternal:
			return field.InternalError(p, celErr)
		}
	}
	return field.InternalError(p, fmt.Errorf("unsupported error type: %w", err))
}

func validateDeviceConstraint(c resourcev1.DeviceConstraint, p *field.Path, names requestNames) field.ErrorList {
	errs := validateResourceSet(c.Requests, resourcev1.DeviceRequestsMaxSize,
		func(name string, p *field.Path) field.ErrorList { return validateRequestNameRef(name, p, names) },
		func(s string) string { return s }, p.Child("requests"))
	switch {
	case c.MatchAttribute != nil:
		errs = append(errs, validate.ResourceFullyQualifiedName(context.Background(), operation.Operation{}, p.Child("matchAttribute"), c.MatchAttribute, nil)...)
	case c.DistinctAttribute != nil:
		errs = append(errs, validate.ResourceFullyQualifiedName(context.Background(), operation.Operation{}, p.Child("distinctAttribute"), c.DistinctAttribute, nil)...)
	default:
		errs = append(errs, field.Required(p, `exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set`))
	}
	return errs
}

const requestRefMsg = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"

func validateRequestNameRef(name string, p *field.Path, names requestNames) field.ErrorList {
	segments := strings.Split(name, "/")
	if len(segments) > 2 {
		return field.ErrorList{field.Invalid(p, name, requestRefMsg)}
	}
	var errs field.ErrorList
	for _, s := range segments {
		errs = append(errs, validateDNS1123Label(s, p)...)
	}
	if !names.Has(name) {
		errs = append(errs, field.Invalid(p, name, requestRefMsg))
	}
	return errs
}

func validateDeviceConfiguration(c resourcev1.DeviceConfiguration, p *field.Path, stored bool) field.ErrorList {
	if c.Opaque == nil {
		return field.ErrorList{field.Required(p.Child("opaque"), "")}
	}
	op := p.Child("opaque")
	errs := validateDriverNameDeclared(c.Opaque.Driver, op.Child("driver"))
	return append(errs, validateRawExtension(c.Opaque.Parameters, op.Child("parameters"), stored, resourcev1.OpaqueParametersMaxLength)...)
}

// validateRawExtension: a JSON object, of limited size when new.
func validateRawExtension(raw runtime.RawExtension, p *field.Path, stored bool, maxLength int) field.ErrorList {
	var v any
	switch {
	case len(raw.Raw) == 0:
		return field.ErrorList{field.Required(p, "")}
	case !stored && len(raw.Raw) > maxLength:
		return field.ErrorList{field.TooLong(p, "", maxLength)}
	}
	if err := json.Unmarshal(raw.Raw, &v); err != nil {
		return field.ErrorList{field.Invalid(p, "<value omitted>", fmt.Sprintf("error parsing data as JSON: %v", err.Error()))}
	}
	if v == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	if _, ok := v.(map[string]any); !ok {
		return field.ErrorList{field.Invalid(p, "<value omitted>", "must be a valid JSON object")}
	}
	return nil
}

// ---- ResourceClaim status ----

// validateResourceClaimStatusUpdate is kube's: reservations need an
// allocation and, once the claim is deleted, may only shrink; an
// allocation, once made, is fixed.
func validateResourceClaimStatusUpdate(st, old *resourcev1.ResourceClaimStatus, deleted bool, names requestNames, p *field.Path) field.ErrorList {
	errs := validateResourceSet(st.ReservedFor, resourcev1.ResourceClaimReservedForMaxSize,
		func(r resourcev1.ResourceClaimConsumerReference, p *field.Path) field.ErrorList {
			var errs field.ErrorList
			if r.Resource == "" {
				errs = append(errs, field.Required(p.Child("resource"), ""))
			}
			if r.Name == "" {
				errs = append(errs, field.Required(p.Child("name"), ""))
			}
			if r.UID == "" {
				errs = append(errs, field.Required(p.Child("uid"), ""))
			}
			return errs
		},
		func(r resourcev1.ResourceClaimConsumerReference) string { return string(r.UID) }, p.Child("reservedFor"))
	allocated := sets.New[deviceKey]()
	if a := st.Allocation; a != nil {
		for i := range a.Devices.Results {
			allocated.Insert(resultKey(&a.Devices.Results[i]))
		}
	}
	errs = append(errs, validateResourceSet(st.Devices, -1,
		func(d resourcev1.AllocatedDeviceStatus, p *field.Path) field.ErrorList {
			return validateAllocatedDeviceStatus(d, p, allocated)
		},
		func(d resourcev1.AllocatedDeviceStatus) deviceKey { return statusKey(&d) }, p.Child("devices"))...)
	if len(st.ReservedFor) > 0 {
		switch {
		case st.Allocation == nil:
			errs = append(errs, field.Forbidden(p.Child("reservedFor"), "may not be specified when `allocated` is not set"))
		case deleted && !sets.New(old.ReservedFor...).IsSuperset(sets.New(st.ReservedFor...)):
			errs = append(errs, field.Forbidden(p.Child("reservedFor"), "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"))
		}
	}
	switch {
	case old.Allocation != nil && st.Allocation != nil:
		// Declarative validation's +k8s:update=NoModify, enforced at beta
		// in place of the handwritten immutability check.
		if !apiequality.Semantic.DeepEqual(st.Allocation, old.Allocation) {
			errs = append(errs, field.Invalid(p.Child("allocation"), nil, "field cannot be modified once set"))
		}
	case st.Allocation != nil:
		errs = append(errs, validateAllocationResult(st.Allocation, p.Child("allocation"), names)...)
	}
	return errs
}

func validateAllocationResult(a *resourcev1.AllocationResult, p *field.Path, names requestNames) field.ErrorList {
	dp := p.Child("devices")
	errs := validateResourceSlice(a.Devices.Results, resourcev1.AllocationResultsMaxSize,
		func(r resourcev1.DeviceRequestAllocationResult, p *field.Path) field.ErrorList {
			errs := validateRequestNameRef(r.Request, p.Child("request"), names)
			errs = append(errs, validateDriverNameDeclared(r.Driver, p.Child("driver"))...)
			if r.Pool == "" {
				errs = append(errs, field.Required(p.Child("pool"), ""))
			} else {
				errs = append(errs, validate.ResourcePoolName(context.Background(), operation.Operation{}, p.Child("pool"), &r.Pool, nil)...)
			}
			errs = append(errs, validateDNS1123Label(r.Device, p.Child("device"))...)
			errs = append(errs, validateBindingConditions(r.BindingConditions, r.BindingFailureConditions, p)...)
			for i, t := range r.Tolerations {
				errs = append(errs, validateDeviceToleration(t, p.Child("tolerations").Index(i))...)
			}
			errs = append(errs, validate.UUID(context.Background(), operation.Operation{}, p.Child("shareID"), r.ShareID, nil)...)
			return errs
		}, dp.Child("results"))
	errs = append(errs, validateResourceSlice(a.Devices.Config, 2*resourcev1.DeviceConfigMaxSize,
		func(c resourcev1.DeviceAllocationConfiguration, p *field.Path) field.ErrorList {
			var errs field.ErrorList
			switch c.Source {
			case "":
				errs = append(errs, field.Required(p.Child("source"), ""))
			case resourcev1.AllocationConfigSourceClaim, resourcev1.AllocationConfigSourceClass:
			default:
				errs = append(errs, field.NotSupported(p.Child("source"), c.Source, []resourcev1.AllocationConfigSource{resourcev1.AllocationConfigSourceClaim, resourcev1.AllocationConfigSourceClass}))
			}
			errs = append(errs, validateResourceSet(c.Requests, resourcev1.DeviceRequestsMaxSize,
				func(name string, p *field.Path) field.ErrorList { return validateRequestNameRef(name, p, names) },
				func(s string) string { return s }, p.Child("requests"))...)
			return append(errs, validateDeviceConfiguration(c.DeviceConfiguration, p, false)...)
		}, dp.Child("config"))...)
	if a.NodeSelector != nil {
		errs = append(errs, validateNodeSelector(a.NodeSelector, p.Child("nodeSelector"))...)
	}
	return errs
}

func validateAllocatedDeviceStatus(d resourcev1.AllocatedDeviceStatus, p *field.Path, allocated sets.Set[deviceKey]) field.ErrorList {
	errs := validateCSIDriverName(d.Driver, p.Child("driver"))
	errs = append(errs, validatePoolName(d.Pool, p.Child("pool"))...)
	errs = append(errs, validateDNS1123Label(d.Device, p.Child("device"))...)
	errs = append(errs, validate.UUID(context.Background(), operation.Operation{}, p.Child("shareID"), d.ShareID, nil)...)
	if k := statusKey(&d); !allocated.Has(k) {
		id := k.driver + "/" + k.pool + "/" + k.device
		if k.shareID != "" {
			id += "/" + k.shareID
		}
		errs = append(errs, field.Invalid(p, id, "must be an allocated device in the claim"))
	}
	if len(d.Conditions) > allocatedDeviceStatusMaxConditions {
		errs = append(errs, field.TooMany(p.Child("conditions"), len(d.Conditions), allocatedDeviceStatusMaxConditions))
	}
	errs = append(errs, metav1validation.ValidateConditions(d.Conditions, p.Child("conditions"))...)
	if d.Data != nil && len(d.Data.Raw) > 0 {
		errs = append(errs, validateRawExtension(*d.Data, p.Child("data"), false, resourcev1.AllocatedDeviceStatusDataMaxLength)...)
	}
	if n := d.NetworkData; n != nil {
		np := p.Child("networkData")
		if len(n.InterfaceName) > resourcev1.NetworkDeviceDataInterfaceNameMaxLength {
			errs = append(errs, field.TooLong(np.Child("interfaceName"), "", resourcev1.NetworkDeviceDataInterfaceNameMaxLength))
		}
		if len(n.HardwareAddress) > resourcev1.NetworkDeviceDataHardwareAddressMaxLength {
			errs = append(errs, field.TooLong(np.Child("hardwareAddress"), "", resourcev1.NetworkDeviceDataHardwareAddressMaxLength))
		}
		errs = append(errs, validateResourceSet(n.IPs, resourcev1.NetworkDeviceDataMaxIPs,
			func(ip string, p *field.Path) field.ErrorList { return validation.IsValidInterfaceAddress(p, ip) },
			func(s string) string { return s }, np.Child("ips"))...)
	}
	return errs
}

// ---- DeviceClass ----

// validateDeviceClassSpec: selectors and configuration unchanged since
// the stored class are not checked again.
func validateDeviceClassSpec(spec, old *resourcev1.DeviceClassSpec, p *field.Path) field.ErrorList {
	stored := old != nil && apiequality.Semantic.DeepEqual(spec.Selectors, old.Selectors)
	errs := validateSelectors(spec.Selectors, p.Child("selectors"), stored)
	stored = old != nil && apiequality.Semantic.DeepEqual(spec.Config, old.Config)
	errs = append(errs, validateResourceSlice(spec.Config, resourcev1.DeviceConfigMaxSize,
		func(c resourcev1.DeviceClassConfiguration, p *field.Path) field.ErrorList {
			return validateDeviceConfiguration(c.DeviceConfiguration, p, stored)
		}, p.Child("config"))...)
	if n := spec.ExtendedResourceName; n != nil && !isExtendedResource(corev1.ResourceName(*n)) {
		errs = append(errs, field.Invalid(p.Child("extendedResourceName"), *n, "must be a valid extended resource name"))
	}
	return errs
}

// ---- ResourceSlice ----

const exactlyOneNodeMsg = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"

func validateResourceSliceSpec(spec, old *resourcev1.ResourceSliceSpec, p *field.Path) field.ErrorList {
	errs := validateCSIDriverName(spec.Driver, p.Child("driver"))
	pp := p.Child("pool")
	errs = append(errs, validatePoolName(spec.Pool.Name, pp.Child("name"))...)
	if spec.Pool.ResourceSliceCount <= 0 {
		errs = append(errs, field.Invalid(pp.Child("resourceSliceCount"), spec.Pool.ResourceSliceCount, "must be greater than zero"))
	}
	if spec.Pool.Generation < 0 {
		errs = append(errs, field.Invalid(pp.Child("generation"), spec.Pool.Generation, "must be greater than or equal to zero"))
	}
	if old != nil {
		errs = append(errs, validateImmutable(spec.Pool.Name, old.Pool.Name, pp.Child("name"))...)
		errs = append(errs, validateImmutable(spec.Driver, old.Driver, p.Child("driver"))...)
		errs = append(errs, validateImmutable(spec.NodeName, old.NodeName, p.Child("nodeName"))...)
	}
	var set []string
	if spec.NodeName != nil {
		if *spec.NodeName != "" {
			set = append(set, "`nodeName`")
			errs = append(errs, validateName(*spec.NodeName, nameIsDNSSubdomain, false, p.Child("nodeName"))...)
		} else {
			errs = append(errs, field.Invalid(p.Child("nodeName"), *spec.NodeName, "must be either unset or set to a non-empty string"))
		}
	}
	if spec.NodeSelector != nil {
		set = append(set, "`nodeSelector`")
		errs = append(errs, validateNodeSelector(spec.NodeSelector, p.Child("nodeSelector"))...)
		if len(spec.NodeSelector.NodeSelectorTerms) != 1 {
			errs = append(errs, field.Invalid(p.Child("nodeSelector", "nodeSelectorTerms"), spec.NodeSelector.NodeSelectorTerms, "must have exactly one node selector term"))
		}
	}
	for _, b := range []struct {
		v    *bool
		name string
	}{{spec.AllNodes, "allNodes"}, {spec.PerDeviceNodeSelection, "perDeviceNodeSelection"}} {
		if b.v == nil {
			continue
		}
		if *b.v {
			set = append(set, "`"+b.name+"`")
		} else {
			errs = append(errs, field.Invalid(p.Child(b.name), *b.v, "must be either unset or set to true"))
		}
	}
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(p, exactlyOneNodeMsg))
	case 1:
	default:
		errs = append(errs, field.Invalid(p, fmt.Sprintf("{%s}", strings.Join(set, ", ")), exactlyOneNodeMsg+", but multiple fields are set"))
	}
	if spec.SharedCounters != nil && spec.Devices != nil {
		errs = append(errs, field.Invalid(p, "", "only one of `sharedCounters` or `devices` is allowed"))
	}
	maxDevices := resourcev1.ResourceSliceMaxDevices
	for _, d := range spec.Devices {
		if len(d.Taints) > 0 || len(d.ConsumesCounters) > 0 {
			maxDevices = resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures
		}
	}
	errs = append(errs, validateResourceSet(spec.Devices, maxDevices,
		func(d resourcev1.Device, p *field.Path) field.ErrorList {
			return validateDevice(d, lookupDevice(old, d.Name), p, spec.PerDeviceNodeSelection)
		},
		func(d resourcev1.Device) string { return d.Name }, p.Child("devices"))...)
	errs = append(errs, validateResourceSet(spec.SharedCounters, resourceSliceMaxCounterSets,
		func(cs resourcev1.CounterSet, p *field.Path) field.ErrorList {
			var errs field.ErrorList
			if cs.Name == "" {
				errs = append(errs, field.Required(p.Child("name"), ""))
			} else {
				errs = append(errs, validateDNS1123Label(cs.Name, p.Child("name"))...)
			}
			if len(cs.Counters) == 0 {
				return append(errs, field.Required(p.Child("counters"), ""))
			}
			return append(errs, validateCounters(cs.Counters, resourceSliceMaxCountersPerCounterSet, p.Child("counters"))...)
		},
		func(cs resourcev1.CounterSet) string { return cs.Name }, p.Child("sharedCounters"))...)
	return errs
}

func lookupDevice(spec *resourcev1.ResourceSliceSpec, name string) *resourcev1.Device {
	if spec == nil {
		return nil
	}
	for i := range spec.Devices {
		if spec.Devices[i].Name == name {
			return &spec.Devices[i]
		}
	}
	return nil
}

func validateCounters(counters map[string]resourcev1.Counter, maxSize int, p *field.Path) field.ErrorList {
	if len(counters) > maxSize {
		return field.ErrorList{field.TooMany(p, len(counters), maxSize)}
	}
	var errs field.ErrorList
	for _, name := range sets.List(sets.KeySet(counters)) {
		errs = append(errs, validateDNS1123Label(name, p)...)
	}
	return errs
}

const perDeviceNodeMsg = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"

func validateDevice(d resourcev1.Device, old *resourcev1.Device, p *field.Path, perDevice *bool) field.ErrorList {
	errs := validateDNS1123Label(d.Name, p.Child("name"))
	if n := len(d.Attributes) + len(d.Capacity); n > resourceSliceMaxAttributesAndCapacitiesPerDevice {
		errs = append(errs, field.Invalid(p, n, fmt.Sprintf("the total number of attributes and capacities must not exceed %d", resourceSliceMaxAttributesAndCapacitiesPerDevice)))
	}
	if n := len(d.Attributes); n > resourceSliceMaxAttributeValuesPerDevice {
		errs = append(errs, field.Invalid(p, n, fmt.Sprintf("the total number of attribute values must not exceed %d", resourceSliceMaxAttributeValuesPerDevice)))
	}
	ap := p.Child("attributes")
	for _, k := range sets.List(sets.KeySet(d.Attributes)) {
		errs = append(errs, validateQualifiedAttributeName(k, ap)...)
		errs = append(errs, validateDeviceAttribute(d.Attributes[k], ap.Key(truncateKey(string(k), attributeAndCapacityMaxKeyLength)))...)
	}
	multi := d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations
	if old == nil || !apiequality.Semantic.DeepEqual(old.Capacity, d.Capacity) {
		cp := p.Child("capacity")
		for _, k := range sets.List(sets.KeySet(d.Capacity)) {
			c := d.Capacity[k]
			errs = append(errs, validateQualifiedAttributeName(k, cp)...)
			kp := cp.Key(truncateKey(string(k), attributeAndCapacityMaxKeyLength))
			if c.RequestPolicy == nil {
				continue
			}
			if !multi {
				errs = append(errs, field.Forbidden(kp.Child("requestPolicy"), "allowMultipleAllocations must be true"))
				continue
			}
			errs = append(errs, validateRequestPolicy(c.Value, c.RequestPolicy, kp.Child("requestPolicy"))...)
		}
	}
	if old == nil || !apiequality.Semantic.DeepEqual(old.Taints, d.Taints) {
		errs = append(errs, validateResourceSlice(d.Taints, resourcev1.DeviceTaintsMaxLength,
			func(t resourcev1.DeviceTaint, p *field.Path) field.ErrorList { return validateDeviceTaint(t, nil, p) },
			p.Child("taints"))...)
	}
	errs = append(errs, validateResourceSet(d.ConsumesCounters, resourceSliceMaxDeviceCounterConsumptionsPerDevice,
		func(c resourcev1.DeviceCounterConsumption, p *field.Path) field.ErrorList {
			var errs field.ErrorList
			if c.CounterSet == "" {
				errs = append(errs, field.Required(p.Child("counterSet"), ""))
			} else {
				errs = append(errs, validateDNS1123Label(c.CounterSet, p.Child("counterSet"))...)
			}
			if len(c.Counters) == 0 {
				return append(errs, field.Required(p.Child("counters"), ""))
			}
			return append(errs, validateCounters(c.Counters, resourceSliceMaxCountersPerDeviceCounterConsumption, p.Child("counters"))...)
		},
		func(c resourcev1.DeviceCounterConsumption) string { return c.CounterSet }, p.Child("consumesCounters"))...)
	if perDevice != nil && *perDevice {
		var set []string
		if d.NodeName != nil {
			if *d.NodeName != "" {
				set = append(set, "`nodeName`")
				errs = append(errs, validateName(*d.NodeName, nameIsDNSSubdomain, false, p.Child("nodeName"))...)
			} else {
				errs = append(errs, field.Invalid(p.Child("nodeName"), *d.NodeName, "must not be empty"))
			}
		}
		if d.NodeSelector != nil {
			set = append(set, "`nodeSelector`")
			errs = append(errs, validateNodeSelector(d.NodeSelector, p.Child("nodeSelector"))...)
		}
		if d.AllNodes != nil {
			if *d.AllNodes {
				set = append(set, "`allNodes`")
			} else {
				errs = append(errs, field.Invalid(p.Child("allNodes"), *d.AllNodes, "must be either unset or set to true"))
			}
		}
		switch len(set) {
		case 0:
			errs = append(errs, field.Required(p, perDeviceNodeMsg))
		case 1:
		default:
			errs = append(errs, field.Invalid(p, fmt.Sprintf("{%s}", strings.Join(set, ", ")), perDeviceNodeMsg))
		}
	} else if d.NodeName != nil || d.NodeSelector != nil || d.AllNodes != nil {
		errs = append(errs, field.Invalid(p, nil, "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec"))
	}
	return append(errs, validateBindingConditions(d.BindingConditions, d.BindingFailureConditions, p)...)
}

// deviceAttributeFields are the members of a device attribute's union, as
// v1.37's declarative validation names them.
const deviceAttributeFields = "`int`, `bool`, `string`, `version`, `ints`, `bools`, `strings`, `versions`"

// semverRe is kube's semantic version 2.0.0 pattern.
var semverRe = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?` +
	`(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`)

// validateDeviceAttribute: exactly one value, as the declarative union
// check says it (list values are dropped: DRAListTypeAttributes is off).
func validateDeviceAttribute(a resourcev1.DeviceAttribute, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	var set []string
	if a.IntValue != nil {
		set = append(set, "int")
	}
	if a.BoolValue != nil {
		set = append(set, "bool")
	}
	if a.StringValue != nil {
		set = append(set, "string")
		if len(*a.StringValue) > deviceAttributeMaxValueLength {
			errs = append(errs, field.TooLong(p.Child("string"), "", deviceAttributeMaxValueLength))
		}
	}
	if v := a.VersionValue; v != nil {
		set = append(set, "version")
		if !semverRe.MatchString(*v) {
			errs = append(errs, field.Invalid(p.Child("version"), *v, "must be a string compatible with semver.org spec 2.0.0"))
		}
		if len(*v) > deviceAttributeMaxValueLength {
			errs = append(errs, field.TooLong(p.Child("version"), "", deviceAttributeMaxValueLength))
		}
	}
	switch len(set) {
	case 0:
		errs = append(errs, field.Invalid(p, "", "must specify one of: "+deviceAttributeFields))
	case 1:
	default:
		errs = append(errs, field.Invalid(p, fmt.Sprintf("{%s}", strings.Join(set, ", ")), "must specify exactly one of: "+deviceAttributeFields))
	}
	return errs
}

// validateRequestPolicy is kube's, with DRAFractionalCapacityRange off.
func validateRequestPolicy(maxCapacity apiresource.Quantity, policy *resourcev1.CapacityRequestPolicy, p *field.Path) field.ErrorList {
	switch {
	case len(policy.ValidValues) > 0 && policy.ValidRange != nil:
		return field.ErrorList{field.Forbidden(p, `exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time`)}
	case len(policy.ValidValues) > 0:
		if policy.Default == nil {
			return field.ErrorList{field.Required(p.Child("default"), "required when validValues is defined")}
		}
		return validateRequestPolicyValidValues(*policy.Default, maxCapacity, policy.ValidValues, p.Child("validValues"))
	case policy.ValidRange != nil:
		if policy.Default == nil {
			return field.ErrorList{field.Required(p.Child("default"), "required when validRange is defined")}
		}
		return validateRequestPolicyRange(*policy.Default, maxCapacity, *policy.ValidRange, p.Child("validRange"))
	}
	return nil
}

func validateRequestPolicyValidValues(def, maxCapacity apiresource.Quantity, values []apiresource.Quantity, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range len(values) - 1 {
		if values[i].Cmp(values[i+1]) > 0 {
			errs = append(errs, field.Invalid(p.Index(i+1), values[i+1].String(), "values must be sorted in ascending order"))
		}
	}
	found := false
	errs = append(errs, validateResourceSet(values, capacityRequestPolicyDiscreteMaxOptions,
		func(v apiresource.Quantity, p *field.Path) field.ErrorList {
			if v.Cmp(def) == 0 {
				found = true
			}
			if v.Cmp(maxCapacity) > 0 {
				return field.ErrorList{field.Invalid(p, v.String(), fmt.Sprintf("option is larger than capacity value: %s", maxCapacity.String()))}
			}
			return nil
		},
		func(v apiresource.Quantity) string { return strconv.FormatInt(v.Value(), 10) }, p)...)
	if !found {
		errs = append(errs, field.Invalid(p, def.String(), "default value is not valid according to the requestPolicy"))
	}
	return errs
}

func validateRequestPolicyRange(def, maxCapacity apiresource.Quantity, r resourcev1.CapacityRequestPolicyRange, p *field.Path) field.ErrorList {
	if r.Min == nil {
		return field.ErrorList{field.Required(p.Child("min"), "required when validRange is defined")}
	}
	var errs field.ErrorList
	if r.Min.Cmp(maxCapacity) > 0 {
		errs = append(errs, field.Invalid(p.Child("min"), r.Min.String(), fmt.Sprintf("min is larger than capacity value: %s", maxCapacity.String())))
	}
	if def.Cmp(*r.Min) < 0 {
		errs = append(errs, field.Invalid(p.Child("default"), def.String(), fmt.Sprintf("default is less than min: %s", r.Min.String())))
	}
	if r.Max != nil {
		if r.Min.Cmp(*r.Max) > 0 {
			errs = append(errs, field.Invalid(p.Child("max"), r.Min.String(), fmt.Sprintf("min is larger than max: %s", r.Max.String())))
		}
		if r.Max.Cmp(maxCapacity) > 0 {
			errs = append(errs, field.Invalid(p.Child("max"), r.Max.String(), fmt.Sprintf("max is larger than capacity value: %s", maxCapacity.String())))
		}
		if def.Cmp(*r.Max) > 0 {
			errs = append(errs, field.Invalid(p.Child("default"), def.String(), fmt.Sprintf("default is more than max: %s", r.Max.String())))
		}
	}
	if r.Step == nil {
		return errs
	}
	if r.Step.Sign() <= 0 {
		return append(errs, field.Invalid(p.Child("step"), r.Step.String(), "must be greater than zero"))
	}
	added := r.Min.DeepCopy()
	added.Add(*r.Step)
	if added.Cmp(maxCapacity) > 0 {
		errs = append(errs, field.Invalid(p.Child("step"), r.Step.String(), fmt.Sprintf("one step %s is larger than capacity value: %s", added.String(), maxCapacity.String())))
	}
	unsafe := false
	for _, q := range []struct {
		q    *apiresource.Quantity
		name string
	}{{&def, "default"}, {r.Min, "min"}, {r.Max, "max"}, {r.Step, "step"}} {
		if q.q == nil {
			continue
		}
		switch {
		case q.q.Sign() < 0:
			errs = append(errs, field.Invalid(p.Child(q.name), q.q.String(), apivalidation.IsNegativeErrorMsg))
			unsafe = true
		case q.q.CmpInt64(math.MaxInt64) > 0:
			errs = append(errs, field.Invalid(p.Child(q.name), q.q.String(), "must not be larger than 9223372036854775807"))
			unsafe = true
		}
	}
	if unsafe {
		return errs
	}
	for _, v := range []*apiresource.Quantity{&def, r.Max} {
		if v != nil && (v.Value()-r.Min.Value())%r.Step.Value() != 0 {
			errs = append(errs, field.Invalid(p.Child("step"), v.String(), fmt.Sprintf("value is not a multiple of a given step (%s) from (%s)", r.Step.String(), r.Min.String())))
		}
	}
	return errs
}

// validateQualifiedAttributeName is kube's validateQualifiedName of
// attribute and capacity names: a C identifier, optionally after a
// driver-name domain and a slash.
func validateQualifiedAttributeName(name resourcev1.QualifiedName, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	parts := strings.Split(string(name), "/")
	switch len(parts) {
	case 1:
		errs = append(errs, validateCIdentifier(parts[0], p)...)
	case 2:
		if parts[0] == "" {
			errs = append(errs, field.Invalid(p, "", "the domain must not be empty"))
		} else {
			errs = append(errs, validateCSIDriverName(parts[0], p)...)
		}
		if parts[1] == "" {
			errs = append(errs, field.Invalid(p, "", "the name must not be empty"))
		} else {
			errs = append(errs, validateCIdentifier(parts[1], p)...)
		}
	}
	return errs
}

func validateCIdentifier(id string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(id) > deviceMaxIDLength {
		errs = append(errs, field.TooLong(p, "", deviceMaxIDLength))
	}
	for _, msg := range content.IsCIdentifier(id) {
		errs = append(errs, field.Invalid(p, id, msg))
	}
	return errs
}

// truncateKey shortens a long map key in the middle for an error path.
func truncateKey(s string, maxLen int) string {
	maxLen = max(maxLen, 16)
	if len(s) <= maxLen {
		return s
	}
	remaining := maxLen - 3
	return s[:(remaining+1)/2] + "..." + s[len(s)-remaining/2:]
}

// ---- Taints and tolerations ----

var (
	deviceTaintEffects         = sets.New(resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNoExecute, resourcev1.DeviceTaintEffectNone)
	deviceTolerationOperators  = []resourcev1.DeviceTolerationOperator{resourcev1.DeviceTolerationOpEqual, resourcev1.DeviceTolerationOpExists}
	deviceTaintRuleStatusCondP = field.NewPath("status", "conditions")
)

func validateDeviceTaint(t resourcev1.DeviceTaint, old *resourcev1.DeviceTaint, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabelName(t.Key, p.Child("key"))
	if t.Value != "" {
		errs = append(errs, validateLabelValue(t.Value, p.Child("value"))...)
	}
	if old == nil || old.Effect != t.Effect {
		switch {
		case t.Effect == "":
			errs = append(errs, field.Required(p.Child("effect"), ""))
		case !deviceTaintEffects.Has(t.Effect):
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, sets.List(deviceTaintEffects)))
		}
	}
	return errs
}

func validateDeviceToleration(t resourcev1.DeviceToleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		errs = append(errs, metav1validation.ValidateLabelName(t.Key, p.Child("key"))...)
	}
	switch t.Operator {
	case resourcev1.DeviceTolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be empty for operator `Exists`"))
		}
	case resourcev1.DeviceTolerationOpEqual:
		errs = append(errs, validateLabelValue(t.Value, p.Child("value"))...)
	case "":
		errs = append(errs, field.Required(p.Child("operator"), ""))
	default:
		errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, deviceTolerationOperators))
	}
	if t.Effect != "" && !deviceTaintEffects.Has(t.Effect) {
		errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, sets.List(deviceTaintEffects)))
	}
	return errs
}

func validateLabelValue(v string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsValidLabelValue(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func validateBindingConditions(conds, failures []string, p *field.Path) field.ErrorList {
	cp, fp := p.Child("bindingConditions"), p.Child("bindingFailureConditions")
	errs := validateResourceSlice(conds, resourcev1.BindingConditionsMaxSize, metav1validation.ValidateLabelName, cp)
	errs = append(errs, validateResourceSlice(failures, resourcev1.BindingFailureConditionsMaxSize, metav1validation.ValidateLabelName, fp)...)
	seen := sets.New[string]()
	for i, c := range conds {
		if seen.Has(c) {
			errs = append(errs, field.Duplicate(cp.Index(i), c))
		}
		seen.Insert(c)
	}
	seenFailures := sets.New[string]()
	for i, c := range failures {
		if seenFailures.Has(c) {
			errs = append(errs, field.Duplicate(fp.Index(i), c))
		}
		seenFailures.Insert(c)
		if seen.Has(c) {
			errs = append(errs, field.Invalid(fp.Index(i), c, "bindingFailureConditions must not overlap with bindingConditions"))
		}
	}
	if len(conds) == 0 && len(failures) > 0 {
		errs = append(errs, field.Invalid(cp, conds, "bindingConditions are required to use bindingFailureConditions"))
	}
	if len(failures) == 0 && len(conds) > 0 {
		errs = append(errs, field.Invalid(fp, failures, "bindingFailureConditions are required to use bindingConditions"))
	}
	return errs
}

// ---- DeviceTaintRule ----

func validateDeviceTaintRuleSpec(spec, old *resourcev1.DeviceTaintRuleSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s := spec.DeviceSelector; s != nil {
		sp := p.Child("deviceSelector")
		if s.Driver != nil {
			errs = append(errs, validateCSIDriverName(*s.Driver, sp.Child("driver"))...)
		}
		if s.Pool != nil {
			errs = append(errs, validatePoolName(*s.Pool, sp.Child("pool"))...)
		}
		if s.Device != nil {
			errs = append(errs, validateDNS1123Label(*s.Device, sp.Child("device"))...)
		}
	}
	var oldTaint *resourcev1.DeviceTaint
	if old != nil {
		oldTaint = &old.Taint
	}
	return append(errs, validateDeviceTaint(spec.Taint, oldTaint, p.Child("taint"))...)
}

func validateDeviceTaintRuleStatus(st *resourcev1.DeviceTaintRuleStatus) field.ErrorList {
	errs := metav1validation.ValidateConditions(st.Conditions, deviceTaintRuleStatusCondP)
	if len(st.Conditions) > deviceTaintRuleStatusMaxConditions {
		errs = append(errs, field.TooMany(deviceTaintRuleStatusCondP, len(st.Conditions), deviceTaintRuleStatusMaxConditions))
	}
	return errs
}

// ---- Generic helpers ----

// validateTemplateObjectMeta is kube's ValidateTemplateObjectMeta: only
// labels and annotations may be set.
func validateTemplateObjectMeta(m *metav1.ObjectMeta, p *field.Path) field.ErrorList {
	errs := validateAnnotations(m.Annotations, p.Child("annotations"))
	errs = append(errs, validateLabels(m.Labels, p.Child("labels"))...)
	t, v := reflect.TypeOf(*m), reflect.ValueOf(*m)
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name == "Labels" || f.Name == "Annotations" {
			continue
		}
		if !v.Field(i).IsZero() {
			r, n := utf8.DecodeRuneInString(f.Name)
			errs = append(errs, field.Forbidden(p.Child(string(unicode.ToLower(r))+f.Name[n:]), "cannot be set"))
		}
	}
	return errs
}

// validateResourceSlice is kube's validateSlice: a list of at most
// maxSize items (a negative maxSize has no limit), each valid; a list too
// long is reported alone.
func validateResourceSlice[T any](items []T, maxSize int, validateItem func(T, *field.Path) field.ErrorList, p *field.Path) field.ErrorList {
	if maxSize >= 0 && len(items) > maxSize {
		return field.ErrorList{field.TooMany(p, len(items), maxSize)}
	}
	var errs field.ErrorList
	for i, item := range items {
		errs = append(errs, validateItem(item, p.Index(i))...)
	}
	return errs
}

// validateResourceSet is kube's validateSet: validateResourceSlice, and
// no two items with the same key.
func validateResourceSet[T any, K comparable](items []T, maxSize int, validateItem func(T, *field.Path) field.ErrorList, key func(T) K, p *field.Path) field.ErrorList {
	if maxSize >= 0 && len(items) > maxSize {
		return field.ErrorList{field.TooMany(p, len(items), maxSize)}
	}
	errs := validateResourceSlice(items, -1, validateItem, p)
	seen := sets.New[K]()
	for i, item := range items {
		k := key(item)
		if seen.Has(k) {
			errs = append(errs, field.Duplicate(p.Index(i), k))
		}
		seen.Insert(k)
	}
	return errs
}
