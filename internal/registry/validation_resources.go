package registry

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Resource names Kubernetes defines without a domain prefix, by use.
var (
	standardContainerResources = sets.New[corev1.ResourceName](
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)

	standardResources = sets.New[corev1.ResourceName](
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices,
		corev1.ResourceReplicationControllers, corev1.ResourceSecrets, corev1.ResourcePersistentVolumeClaims,
		corev1.ResourceStorage, corev1.ResourceRequestsStorage,
		corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers, corev1.ResourceConfigMaps)

	standardQuotaResources = sets.New[corev1.ResourceName](
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsStorage,
		corev1.ResourceRequestsEphemeralStorage,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices,
		corev1.ResourceReplicationControllers, corev1.ResourceSecrets, corev1.ResourcePersistentVolumeClaims,
		corev1.ResourceConfigMaps, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers)

	// integerResources are counted in whole units.
	integerResources = sets.New[corev1.ResourceName](
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices,
		corev1.ResourceReplicationControllers, corev1.ResourceSecrets, corev1.ResourceConfigMaps,
		corev1.ResourcePersistentVolumeClaims, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers)
)

const (
	hugePagesPrefix         = "hugepages-"
	requestsHugePagesPrefix = "requests.hugepages-"
)

func isHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), hugePagesPrefix)
}

// isQuotaHugePages reports whether a name is a huge-page resource as quota
// and node capacity name them.
func isQuotaHugePages(name corev1.ResourceName) bool {
	return isHugePages(name) || strings.HasPrefix(string(name), requestsHugePagesPrefix)
}

// isNativeResource reports whether a resource name belongs to Kubernetes:
// unprefixed, or under kubernetes.io/.
func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

// isExtendedResource reports whether a name is a vendor resource that a
// container may request ("example.com/gpu").
func isExtendedResource(name corev1.ResourceName) bool {
	if isNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

// overcommitAllowed reports whether requests may be below limits for a
// resource: native non-hugepage resources only.
func overcommitAllowed(name corev1.ResourceName) bool {
	return isNativeResource(name) && !isHugePages(name)
}

func isIntegerResource(name corev1.ResourceName) bool {
	return integerResources.Has(name) || isExtendedResource(name)
}

// validateResourceName checks a resource name is qualified and, when
// unprefixed, one Kubernetes defines.
func validateResourceName(name corev1.ResourceName, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if !strings.Contains(string(name), "/") && !standardResources.Has(name) && !isQuotaHugePages(name) {
		errs = append(errs, field.Invalid(p, name, "must be a standard resource type or fully qualified"))
	}
	return errs
}

// validateContainerResourceName checks a name in a container's requests or
// limits.
func validateContainerResourceName(name corev1.ResourceName, p *field.Path) field.ErrorList {
	errs := validateResourceName(name, p)
	if !strings.Contains(string(name), "/") {
		if !standardContainerResources.Has(name) && !isHugePages(name) {
			return append(errs, field.Invalid(p, name, "must be a standard resource for containers"))
		}
	} else if !isNativeResource(name) && !isExtendedResource(name) {
		return append(errs, field.Invalid(p, name, "doesn't follow extended resource name standard"))
	}
	return errs
}

// validateQuotaResourceName checks a name in a ResourceQuota.
func validateQuotaResourceName(name corev1.ResourceName, p *field.Path) field.ErrorList {
	errs := validateResourceName(name, p)
	if !strings.Contains(string(name), "/") && !standardQuotaResources.Has(name) && !isQuotaHugePages(name) {
		errs = append(errs, field.Invalid(p, name, "must be a standard resource for quota"))
	}
	return errs
}

// validateResourceQuantity checks a quantity is not negative, and whole for
// resources counted in units.
func validateResourceQuantity(name corev1.ResourceName, q resource.Quantity, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.Cmp(resource.Quantity{}) < 0 {
		errs = append(errs, field.Invalid(p, q.String(), "must be greater than or equal to 0"))
	}
	if isIntegerResource(name) && q.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(p, q, "must be an integer"))
	}
	return errs
}

// validateResourceRequirements checks a container's requests and limits.
func validateResourceRequirements(r *corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	limPath, reqPath := p.Child("limits"), p.Child("requests")
	limCPUOrMemory, reqCPUOrMemory, hugePages := false, false, false
	for _, name := range sortedResourceNames(r.Limits) {
		q := r.Limits[name]
		fp := limPath.Key(string(name))
		errs = append(errs, validateContainerResourceName(name, fp)...)
		errs = append(errs, validateResourceQuantity(name, q, fp)...)
		hugePages = hugePages || isHugePages(name)
		limCPUOrMemory = limCPUOrMemory || name == corev1.ResourceCPU || name == corev1.ResourceMemory
	}
	for _, name := range sortedResourceNames(r.Requests) {
		q := r.Requests[name]
		fp := reqPath.Key(string(name))
		errs = append(errs, validateContainerResourceName(name, fp)...)
		errs = append(errs, validateResourceQuantity(name, q, fp)...)
		if lim, ok := r.Limits[name]; ok {
			if q.Cmp(lim) != 0 && !overcommitAllowed(name) {
				errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, lim.String())))
			} else if q.Cmp(lim) > 0 {
				errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
			}
		} else if !overcommitAllowed(name) {
			errs = append(errs, field.Required(limPath, "Limit must be set for non overcommitable resources"))
		}
		hugePages = hugePages || isHugePages(name)
		reqCPUOrMemory = reqCPUOrMemory || name == corev1.ResourceCPU || name == corev1.ResourceMemory
	}
	if hugePages && !limCPUOrMemory && !reqCPUOrMemory {
		errs = append(errs, field.Forbidden(p, "HugePages require cpu or memory"))
	}
	for i, c := range r.Claims {
		if c.Name == "" {
			errs = append(errs, field.Required(p.Child("claims").Index(i), ""))
		}
	}
	return errs
}

// sortedResourceNames returns the keys of a resource list in a stable order,
// so that error lists do not change from one request to the next.
func sortedResourceNames(l corev1.ResourceList) []corev1.ResourceName {
	return sets.List(sets.KeySet(l))
}
