package registry

import (
	"slices"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// leases: Leases have no generation; they are renewed every few
// seconds by node agents and leader electors.
var leases = &Resource{
	GroupVersion: coordinationV1, Name: "leases", SingularName: "lease", Kind: "Lease",
	Namespaced: true,
	Strategy: Strategy{
		Validate: validator(func(l *coordinationv1.Lease) field.ErrorList {
			errs := validateObjectMeta(&l.ObjectMeta, true, nameIsDNSSubdomain)
			return append(errs, validateLeaseSpec(&l.Spec, specPath)...)
		}),
		ValidateUpdate: updateValidator(func(l, old *coordinationv1.Lease) field.ErrorList {
			errs := validateObjectMetaUpdate(&l.ObjectMeta, &old.ObjectMeta)
			return append(errs, validateLeaseSpec(&l.Spec, specPath)...)
		}),
		NoGeneration: true,
		Table:        tables.Lease.Convertor(nil),
	},
}

var leaseStrategies = []coordinationv1.CoordinatedLeaseStrategy{coordinationv1.OldestEmulationVersion}

func validateLeaseSpec(spec *coordinationv1.LeaseSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if d := spec.LeaseDurationSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(p.Child("leaseDurationSeconds"), d, "must be greater than 0"))
	}
	if t := spec.LeaseTransitions; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(p.Child("leaseTransitions"), t, "must be greater than or equal to 0"))
	}
	if s := spec.Strategy; s != nil {
		sp := p.Child("strategy").Child("strategy")
		if !strings.Contains(string(*s), "/") {
			if !slices.Contains(leaseStrategies, *s) {
				errs = append(errs, field.NotSupported(sp, *s, leaseStrategies))
			}
		} else {
			for _, msg := range validation.IsQualifiedName(string(*s)) {
				errs = append(errs, field.Invalid(sp, *s, msg))
			}
		}
	}
	if h := spec.PreferredHolder; h != nil && *h != "" && (spec.Strategy == nil || *spec.Strategy == "") {
		errs = append(errs, field.Forbidden(p.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return errs
}
