package registry

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Name rules, as kube-apiserver applies them per kind.
var (
	// nameIsDNSSubdomain is the rule of most kinds (Pods, Deployments, ...).
	nameIsDNSSubdomain = apivalidation.NameIsDNSSubdomain
	// nameIsDNSLabel is the rule of Namespaces.
	nameIsDNSLabel = apivalidation.NameIsDNSLabel
	// nameIsDNS1035Label is the rule of Services: a label that starts with
	// a letter.
	nameIsDNS1035Label = apivalidation.NameIsDNS1035Label
	// nameIsPathSegment is the rule of RBAC objects.
	nameIsPathSegment = pathSegmentName
)

var (
	metadataPath = field.NewPath("metadata")
	specPath     = field.NewPath("spec")
)

// standardFinalizers are the finalizer names that need no domain prefix.
var standardFinalizers = sets.New("kubernetes", metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents)

const immutableMsg = apivalidation.FieldImmutableErrorMsg

// validateObjectMeta validates metadata on create as kube's core API
// validation does: apimachinery's rules plus the finalizer-name check.
func validateObjectMeta(m *metav1.ObjectMeta, namespaced bool, nameFn apivalidation.ValidateNameFunc) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(m, namespaced, nameFn, metadataPath)
	for i, f := range m.Finalizers {
		errs = append(errs, validateKubeFinalizerName(f, metadataPath.Child("finalizers").Index(i))...)
	}
	return errs
}

// validateObjectMetaUpdate validates metadata on update, as
// validateObjectMeta does on create.
func validateObjectMetaUpdate(m, old *metav1.ObjectMeta) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(m, old, metadataPath)
	for i, f := range m.Finalizers {
		errs = append(errs, validateKubeFinalizerName(f, metadataPath.Child("finalizers").Index(i))...)
	}
	return errs
}

// validateKubeFinalizerName rejects unprefixed finalizer names that are not
// one of Kubernetes' own.
func validateKubeFinalizerName(name string, p *field.Path) field.ErrorList {
	if !strings.Contains(name, "/") && !standardFinalizers.Has(name) {
		return field.ErrorList{field.Invalid(p, name, "name is neither a standard finalizer name nor is it fully qualified")}
	}
	return nil
}

// validateFinalizerName is the rule of Namespace spec.finalizers.
func validateFinalizerName(name string, p *field.Path) field.ErrorList {
	errs := apivalidation.ValidateFinalizerName(name, p)
	return append(errs, validateKubeFinalizerName(name, p)...)
}

func validateDNS1123Label(value string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(value) {
		errs = append(errs, field.Invalid(p, value, msg))
	}
	return errs
}

func validateDNS1123Subdomain(value string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(value) {
		errs = append(errs, field.Invalid(p, value, msg))
	}
	return errs
}

func validateQualifiedName(value string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(value) {
		errs = append(errs, field.Invalid(p, value, msg))
	}
	return errs
}

// validateName checks value with a name rule, reporting each message.
func validateName(value string, nameFn apivalidation.ValidateNameFunc, prefix bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range nameFn(value, prefix) {
		errs = append(errs, field.Invalid(p, value, msg))
	}
	return errs
}

func validateNonnegative(value int64, p *field.Path) field.ErrorList {
	return apivalidation.ValidateNonnegativeField(value, p)
}

func validateImmutable(value, old any, p *field.Path) field.ErrorList {
	return apivalidation.ValidateImmutableField(value, old, p)
}

func validateLabels(labels map[string]string, p *field.Path) field.ErrorList {
	return metav1validation.ValidateLabels(labels, p)
}

func validateAnnotations(annotations map[string]string, p *field.Path) field.ErrorList {
	return apivalidation.ValidateAnnotations(annotations, p)
}

func validateLabelSelector(s *metav1.LabelSelector, p *field.Path) field.ErrorList {
	return metav1validation.ValidateLabelSelector(s, metav1validation.LabelSelectorValidationOptions{}, p)
}

// validatePortNumOrName checks a port given by number (1-65535) or by IANA
// service name.
func validatePortNumOrName(port intstr.IntOrString, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch port.Type {
	case intstr.Int:
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			errs = append(errs, field.Invalid(p, port.IntValue(), msg))
		}
	case intstr.String:
		for _, msg := range validation.IsValidPortName(port.StrVal) {
			errs = append(errs, field.Invalid(p, port.StrVal, msg))
		}
	}
	return errs
}

// validateIP checks an IP address the lenient way kube-apiserver checks
// fields that predate strict IP validation.
func validateIP(value string, p *field.Path) field.ErrorList {
	return validation.IsValidIPForLegacyField(p, value, false, nil)
}

// validateCIDR checks a CIDR the lenient way, as validateIP does IPs.
func validateCIDR(value string, p *field.Path) field.ErrorList {
	return validation.IsValidCIDRForLegacyField(p, value, false, nil)
}

// pathSegmentName is apimachinery's ValidatePathSegmentName (deprecated
// there in favour of a local function): a name, or with prefix a
// generateName, that can be one segment of a URL path.
func pathSegmentName(name string, prefix bool) []string {
	if prefix {
		return content.IsPathSegmentPrefix(name)
	}
	return content.IsPathSegmentName(name)
}
