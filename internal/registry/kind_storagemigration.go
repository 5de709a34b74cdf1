package registry

import (
	"fmt"
	"strings"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// storagemigrationV1 is storagemigration.k8s.io/v1.
var storagemigrationV1 = schema.GroupVersion{Group: "storagemigration.k8s.io", Version: "v1"}

// storageVersionMigrations: a StorageVersionMigration asks that every
// object of one resource be written again, so that storage holds it at
// the current storage version; the storage version migrator controller
// (internal/controllers/storageversionmigrator) does it and reports
// through the status conditions. Cluster-scoped, no generation; the spec
// is immutable and the status follows kube's rules (a resourceVersion
// set once, Succeeded and Failed exclusive and final).
var storageVersionMigrations = &Resource{
	GroupVersion: storagemigrationV1, Name: "storageversionmigrations", SingularName: "storageversionmigration", Kind: "StorageVersionMigration",
	HasStatus: true,
	Strategy: Strategy{
		Validate: validator(validateStorageVersionMigration),
		ValidateUpdate: updateValidator(func(m, old *storagemigrationv1.StorageVersionMigration) field.ErrorList {
			errs := validateStorageVersionMigration(m)
			errs = append(errs, validateObjectMetaUpdate(&m.ObjectMeta, &old.ObjectMeta)...)
			errs = append(errs, validateImmutable(m.Spec, old.Spec, specPath)...)
			// A write of the object keeps the stored status, so these
			// hold but for writes through /status.
			return append(errs, validateStorageVersionMigrationStatus(m, old)...)
		}),
		NoGeneration: true,
		Table:        tables.StorageVersionMigration.Convertor(nil),
	},
}

// validateStorageVersionMigration is kube's
// ValidateStorageVersionMigration: the resource is a DNS-1035 label and
// the group, when set, a DNS-1123 subdomain.
func validateStorageVersionMigration(m *storagemigrationv1.StorageVersionMigration) field.ErrorList {
	errs := validateObjectMeta(&m.ObjectMeta, false, nameIsDNSSubdomain)
	rp := specPath.Child("resource", "resource")
	if r := m.Spec.Resource.Resource; r == "" {
		errs = append(errs, field.Required(rp, "resource is required to be set"))
	} else if msgs := validation.IsDNS1035Label(r); len(msgs) > 0 {
		errs = append(errs, field.Invalid(rp, r, strings.Join(msgs, ",")))
	}
	if g := m.Spec.Resource.Group; g != "" {
		if msgs := validation.IsDNS1123Subdomain(g); len(msgs) > 0 {
			errs = append(errs, field.Invalid(specPath.Child("resource", "group"), g, strings.Join(msgs, ",")))
		}
	}
	return errs
}

// validateStorageVersionMigrationStatus is the status part of kube's
// ValidateStorageVersionMigrationStatusUpdate.
func validateStorageVersionMigrationStatus(m, old *storagemigrationv1.StorageVersionMigration) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("status")
	if rv := m.Status.ResourceVersion; rv != "" {
		cmp, err := resourceversion.CompareResourceVersion(rv, rv)
		if err != nil || cmp != 0 {
			if err == nil {
				err = fmt.Errorf("unable to compare resource versions, %s is not equal to %s", rv, rv)
			}
			errs = append(errs, field.Invalid(sp.Child("resourceVersion"), rv, err.Error()))
		}
	}
	errs = append(errs, metav1validation.ValidateConditions(m.Status.Conditions, sp.Child("conditions"))...)
	if old.Status.ResourceVersion != "" && old.Status.ResourceVersion != m.Status.ResourceVersion {
		errs = append(errs, field.Invalid(sp.Child("resourceVersion"), m.Status.ResourceVersion, "field is immutable"))
	}
	cp := sp.Child("conditions")
	if migrationIs(m, storagemigrationv1.MigrationSucceeded) && migrationIs(m, storagemigrationv1.MigrationFailed) {
		errs = append(errs, field.Invalid(cp, m.Status.Conditions, "Both success and failed conditions cannot be true at the same time"))
	}
	if migrationIs(old, storagemigrationv1.MigrationSucceeded) && !migrationIs(m, storagemigrationv1.MigrationSucceeded) {
		errs = append(errs, field.Invalid(cp, m.Status.Conditions, "Success condition cannot be set to false once it is true"))
	}
	if migrationIs(old, storagemigrationv1.MigrationFailed) && !migrationIs(m, storagemigrationv1.MigrationFailed) {
		errs = append(errs, field.Invalid(cp, m.Status.Conditions, "Failed condition cannot be set to false once it is true"))
	}
	return errs
}

// migrationIs tells whether the migration's condition of type t is true.
func migrationIs(m *storagemigrationv1.StorageVersionMigration, t storagemigrationv1.MigrationConditionType) bool {
	c := meta.FindStatusCondition(m.Status.Conditions, string(t))
	return c != nil && c.Status == metav1.ConditionTrue
}
