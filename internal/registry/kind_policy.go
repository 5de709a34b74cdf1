package registry

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// policyV1 is policy/v1: PodDisruptionBudgets (and the Eviction kind of
// the pods/eviction subresource, answered by internal/api).
var policyV1 = schema.GroupVersion{Group: "policy", Version: "v1"}

// podDisruptionBudgets: PodDisruptionBudgets keep
// metadata.generation, bumped on spec changes; their status is written by
// the disruption controller and by the eviction subresource.
var podDisruptionBudgets = &Resource{
	GroupVersion: policyV1, Name: "poddisruptionbudgets", SingularName: "poddisruptionbudget", Kind: "PodDisruptionBudget",
	Namespaced: true, ShortNames: []string{"pdb"}, HasStatus: true,
	Strategy: Strategy{
		Validate: validator(func(pdb *policyv1.PodDisruptionBudget) field.ErrorList {
			errs := validateObjectMeta(&pdb.ObjectMeta, true, nameIsDNSSubdomain)
			return append(errs, validatePDBSpec(&pdb.Spec, specPath)...)
		}),
		ValidateUpdate: updateValidator(func(pdb, old *policyv1.PodDisruptionBudget) field.ErrorList {
			errs := validateObjectMetaUpdate(&pdb.ObjectMeta, &old.ObjectMeta)
			errs = append(errs, validatePDBSpec(&pdb.Spec, specPath)...)
			return append(errs, validatePDBStatus(&pdb.Status, field.NewPath("status"))...)
		}),
		Table: tables.PodDisruptionBudget.Convertor(nil),
	},
}

var unhealthyPodEvictionPolicies = sets.New(string(policyv1.IfHealthyBudget), string(policyv1.AlwaysAllow))

// validatePDBSpec is kube's ValidatePodDisruptionBudgetSpec: at most one
// of minAvailable and maxUnavailable, each a non-negative integer or a
// percentage up to 100%, a valid selector and a known unhealthy pod
// eviction policy.
func validatePDBSpec(spec *policyv1.PodDisruptionBudgetSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.MinAvailable != nil && spec.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(p, spec, "minAvailable and maxUnavailable cannot be both set"))
	}
	for _, f := range []struct {
		name string
		v    *intstr.IntOrString
	}{{"minAvailable", spec.MinAvailable}, {"maxUnavailable", spec.MaxUnavailable}} {
		if f.v == nil {
			continue
		}
		errs = append(errs, validatePositiveIntOrPercent(*f.v, p.Child(f.name))...)
		if n, ok := percentValue(*f.v); ok && n > 100 {
			errs = append(errs, field.Invalid(p.Child(f.name), *f.v, "must not be greater than 100%"))
		}
	}
	errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector,
		metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: false}, p.Child("selector"))...)
	if pol := spec.UnhealthyPodEvictionPolicy; pol != nil && !unhealthyPodEvictionPolicies.Has(string(*pol)) {
		errs = append(errs, field.NotSupported(p.Child("unhealthyPodEvictionPolicy"), *pol, sets.List(unhealthyPodEvictionPolicies)))
	}
	return errs
}

// validatePDBStatus is kube's status validation: counts are non-negative
// and the conditions are well formed.
func validatePDBStatus(s *policyv1.PodDisruptionBudgetStatus, p *field.Path) field.ErrorList {
	errs := validateNonnegative(int64(s.DisruptionsAllowed), p.Child("disruptionsAllowed"))
	errs = append(errs, validateNonnegative(int64(s.CurrentHealthy), p.Child("currentHealthy"))...)
	errs = append(errs, validateNonnegative(int64(s.DesiredHealthy), p.Child("desiredHealthy"))...)
	errs = append(errs, validateNonnegative(int64(s.ExpectedPods), p.Child("expectedPods"))...)
	return append(errs, metav1validation.ValidateConditions(s.Conditions, p.Child("conditions"))...)
}
