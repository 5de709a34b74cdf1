package registry

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"minik/internal/tables"
)

// apiregistrationV1 is apiregistration.k8s.io/v1.
var apiregistrationV1 = schema.GroupVersion{Group: "apiregistration.k8s.io", Version: "v1"}

// apiServices: an APIService says who serves one group version, as
// kube-aggregator's registry keeps them: the API server itself (Local, no
// service) or an extension API server behind a Service, which minikd then
// proxies to (see internal/aggregator). A local APIService is created
// Available (reason Local); the status of the others is the availability
// controller's. No generation is kept.
var apiServices = &Resource{
	GroupVersion: apiregistrationV1, Name: "apiservices", SingularName: "apiservice", Kind: "APIService",
	Categories: []string{"api-extensions"},
	HasStatus:  true,
	Strategy: Strategy{
		Default:          defaulter(defaultAPIService),
		PrepareForCreate: creator(prepareAPIServiceForCreate),
		Validate:         validator(validateAPIService),
		ValidateUpdate: updateValidator(func(as, old *apiregistrationv1.APIService) field.ErrorList {
			return append(validateAPIService(as), validateAPIServiceStatus(&as.Status)...)
		}),
		NoGeneration: true,
		Table:        tables.APIService.Convertor(nil),
	},
}

// defaultAPIService is kube-aggregator's defaulting: a service reference's
// port is 443 unless set.
func defaultAPIService(as *apiregistrationv1.APIService) {
	if s := as.Spec.Service; s != nil && s.Port == nil {
		port := int32(443)
		s.Port = &port
	}
}

// LocalAPIServiceAvailable is the condition of a local APIService, as
// kube-aggregator sets it: local APIServices are always available.
func LocalAPIServiceAvailable(now metav1.Time) apiregistrationv1.APIServiceCondition {
	return apiregistrationv1.APIServiceCondition{
		Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue, LastTransitionTime: now,
		Reason: "Local", Message: "Local APIServices are always available",
	}
}

// prepareAPIServiceForCreate is kube-aggregator's PrepareForCreate: the
// status starts empty (the generic layer resets it), and a local
// APIService is Available at once.
func prepareAPIServiceForCreate(as *apiregistrationv1.APIService) {
	if as.Spec.Service == nil {
		as.Status.Conditions = []apiregistrationv1.APIServiceCondition{LocalAPIServiceAvailable(metav1.Now())}
	}
}

// validateAPIService is kube-aggregator's ValidateAPIService: the name is
// <version>.<group>, the group a DNS subdomain (empty only for the legacy
// v1), the version a DNS-1035 label, the priorities in range, and a local
// APIService has neither caBundle nor insecureSkipTLSVerify, while a
// service reference names a namespace, a name and a valid port, with at
// most one of caBundle and insecureSkipTLSVerify.
func validateAPIService(as *apiregistrationv1.APIService) field.ErrorList {
	required := as.Spec.Version + "." + as.Spec.Group
	errs := validateObjectMeta(&as.ObjectMeta, false, func(name string, prefix bool) []string {
		if msgs := pathSegmentName(name, prefix); len(msgs) > 0 {
			return msgs
		}
		if name != required {
			return []string{fmt.Sprintf("must be `spec.version+\".\"+spec.group`: %q", required)}
		}
		return nil
	})
	sp := specPath
	if as.Spec.Group == "" && as.Spec.Version != "v1" {
		errs = append(errs, field.Required(sp.Child("group"), "only v1 may have an empty group and it better be legacy kube"))
	}
	if as.Spec.Group != "" {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(as.Spec.Group) {
			errs = append(errs, field.Invalid(sp.Child("group"), as.Spec.Group, msg))
		}
	}
	for _, msg := range utilvalidation.IsDNS1035Label(as.Spec.Version) {
		errs = append(errs, field.Invalid(sp.Child("version"), as.Spec.Version, msg))
	}
	if p := as.Spec.GroupPriorityMinimum; p <= 0 || p > 20000 {
		errs = append(errs, field.Invalid(sp.Child("groupPriorityMinimum"), p, "must be positive and less than 20000"))
	}
	if p := as.Spec.VersionPriority; p <= 0 || p > 1000 {
		errs = append(errs, field.Invalid(sp.Child("versionPriority"), p, "must be positive and less than 1000"))
	}
	svc := as.Spec.Service
	if svc == nil {
		if len(as.Spec.CABundle) != 0 {
			errs = append(errs, field.Invalid(sp.Child("caBundle"), fmt.Sprintf("%d bytes", len(as.Spec.CABundle)), "local APIServices may not have a caBundle"))
		}
		if as.Spec.InsecureSkipTLSVerify {
			errs = append(errs, field.Invalid(sp.Child("insecureSkipTLSVerify"), as.Spec.InsecureSkipTLSVerify, "local APIServices may not have insecureSkipTLSVerify"))
		}
		return errs
	}
	if svc.Namespace == "" {
		errs = append(errs, field.Required(sp.Child("service", "namespace"), ""))
	}
	if svc.Name == "" {
		errs = append(errs, field.Required(sp.Child("service", "name"), ""))
	}
	port := int32(443)
	if svc.Port != nil {
		port = *svc.Port
	}
	if msgs := utilvalidation.IsValidPortNum(int(port)); msgs != nil {
		errs = append(errs, field.Invalid(sp.Child("service", "port"), port, "port is not valid: "+strings.Join(msgs, ", ")))
	}
	if as.Spec.InsecureSkipTLSVerify && len(as.Spec.CABundle) > 0 {
		errs = append(errs, field.Invalid(sp.Child("insecureSkipTLSVerify"), as.Spec.InsecureSkipTLSVerify, "may not be true if caBundle is present"))
	}
	return errs
}

// validateAPIServiceStatus is kube-aggregator's ValidateAPIServiceStatus:
// each condition's status is True, False or Unknown.
func validateAPIServiceStatus(st *apiregistrationv1.APIServiceStatus) field.ErrorList {
	var errs field.ErrorList
	for i, c := range st.Conditions {
		switch c.Status {
		case apiregistrationv1.ConditionTrue, apiregistrationv1.ConditionFalse, apiregistrationv1.ConditionUnknown:
		default:
			errs = append(errs, field.NotSupported(field.NewPath("status", "conditions").Index(i).Child("status"), c.Status,
				[]string{string(apiregistrationv1.ConditionTrue), string(apiregistrationv1.ConditionFalse), string(apiregistrationv1.ConditionUnknown)}))
		}
	}
	return errs
}
