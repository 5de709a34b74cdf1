package registry

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// RBAC objects have no generation; their names are path segments, so that
// "system:controller:..." is a valid name.

var roles = &Resource{
	GroupVersion: rbacV1, Name: "roles", SingularName: "role", Kind: "Role",
	Namespaced: true,
	Strategy: Strategy{
		Validate: validator(func(r *rbacv1.Role) field.ErrorList {
			return validateRole(&r.ObjectMeta, r.Rules, true)
		}),
		ValidateUpdate: updateValidator(func(r, old *rbacv1.Role) field.ErrorList {
			errs := validateRole(&r.ObjectMeta, r.Rules, true)
			return append(errs, validateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta)...)
		}),
		NoGeneration: true,
		Table:        tables.CreatedAt.Convertor(nil),
	},
}

var clusterRoles = &Resource{
	GroupVersion: rbacV1, Name: "clusterroles", SingularName: "clusterrole", Kind: "ClusterRole",
	Strategy: Strategy{
		Validate: validator(validateClusterRole),
		ValidateUpdate: updateValidator(func(r, old *rbacv1.ClusterRole) field.ErrorList {
			errs := validateClusterRole(r)
			return append(errs, validateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta)...)
		}),
		NoGeneration: true,
		Table:        tables.CreatedAt.Convertor(nil),
	},
}

func validateRole(m *metav1.ObjectMeta, rules []rbacv1.PolicyRule, namespaced bool) field.ErrorList {
	errs := validateObjectMeta(m, namespaced, nameIsPathSegment)
	for i, r := range rules {
		errs = append(errs, validatePolicyRule(r, namespaced, field.NewPath("rules").Index(i))...)
	}
	return errs
}

func validateClusterRole(r *rbacv1.ClusterRole) field.ErrorList {
	errs := validateRole(&r.ObjectMeta, r.Rules, false)
	if ar := r.AggregationRule; ar != nil {
		sp := field.NewPath("aggregationRule", "clusterRoleSelectors")
		if len(ar.ClusterRoleSelectors) == 0 {
			errs = append(errs, field.Required(sp, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
		}
		for i := range ar.ClusterRoleSelectors {
			sel := &ar.ClusterRoleSelectors[i]
			errs = append(errs, validateLabelSelector(sel, sp.Index(i))...)
			if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
				errs = append(errs, field.Invalid(sp.Index(i), sel, "invalid label selector."))
			}
		}
	}
	return errs
}

func validatePolicyRule(r rbacv1.PolicyRule, namespaced bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Verbs) == 0 {
		errs = append(errs, field.Required(p.Child("verbs"), "verbs must contain at least one value"))
	}
	if len(r.NonResourceURLs) > 0 {
		if namespaced {
			errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), r.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
		}
		if len(r.APIGroups) > 0 || len(r.Resources) > 0 || len(r.ResourceNames) > 0 {
			errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), r.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
		return errs
	}
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), "resource rules must supply at least one api group"))
	}
	if len(r.Resources) == 0 {
		errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
	}
	return errs
}

var roleBindings = &Resource{
	GroupVersion: rbacV1, Name: "rolebindings", SingularName: "rolebinding", Kind: "RoleBinding",
	Namespaced: true,
	Strategy: Strategy{
		Default: defaulter(func(b *rbacv1.RoleBinding) { defaultBinding(&b.RoleRef, b.Subjects) }),
		Validate: validator(func(b *rbacv1.RoleBinding) field.ErrorList {
			return validateBinding(&b.ObjectMeta, b.RoleRef, b.Subjects, true)
		}),
		ValidateUpdate: updateValidator(func(b, old *rbacv1.RoleBinding) field.ErrorList {
			return validateBindingUpdate(&b.ObjectMeta, &old.ObjectMeta, b.RoleRef, old.RoleRef, b.Subjects, true)
		}),
		NoGeneration: true,
		Table:        tables.RoleBinding.Convertor(nil),
	},
}

var clusterRoleBindings = &Resource{
	GroupVersion: rbacV1, Name: "clusterrolebindings", SingularName: "clusterrolebinding", Kind: "ClusterRoleBinding",
	Strategy: Strategy{
		Default: defaulter(func(b *rbacv1.ClusterRoleBinding) { defaultBinding(&b.RoleRef, b.Subjects) }),
		Validate: validator(func(b *rbacv1.ClusterRoleBinding) field.ErrorList {
			return validateBinding(&b.ObjectMeta, b.RoleRef, b.Subjects, false)
		}),
		ValidateUpdate: updateValidator(func(b, old *rbacv1.ClusterRoleBinding) field.ErrorList {
			return validateBindingUpdate(&b.ObjectMeta, &old.ObjectMeta, b.RoleRef, old.RoleRef, b.Subjects, false)
		}),
		NoGeneration: true,
		Table:        tables.ClusterRoleBinding.Convertor(nil),
	},
}

// defaultBinding fills the API groups of the role reference and of User
// and Group subjects.
func defaultBinding(ref *rbacv1.RoleRef, subjects []rbacv1.Subject) {
	if ref.APIGroup == "" {
		ref.APIGroup = rbacv1.GroupName
	}
	for i := range subjects {
		s := &subjects[i]
		if s.APIGroup == "" && (s.Kind == rbacv1.UserKind || s.Kind == rbacv1.GroupKind) {
			s.APIGroup = rbacv1.GroupName
		}
	}
}

func validateBinding(m *metav1.ObjectMeta, ref rbacv1.RoleRef, subjects []rbacv1.Subject, namespaced bool) field.ErrorList {
	errs := validateObjectMeta(m, namespaced, nameIsPathSegment)
	refPath := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(refPath.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	kinds := []string{"ClusterRole"}
	if namespaced {
		kinds = []string{"Role", "ClusterRole"}
	}
	if ref.Kind != "ClusterRole" && (!namespaced || ref.Kind != "Role") {
		errs = append(errs, field.NotSupported(refPath.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(refPath.Child("name"), ""))
	} else {
		errs = append(errs, validateName(ref.Name, nameIsPathSegment, false, refPath.Child("name"))...)
	}
	for i, s := range subjects {
		errs = append(errs, validateSubject(s, namespaced, field.NewPath("subjects").Index(i))...)
	}
	return errs
}

func validateBindingUpdate(m, oldMeta *metav1.ObjectMeta, ref, oldRef rbacv1.RoleRef, subjects []rbacv1.Subject, namespaced bool) field.ErrorList {
	errs := validateBinding(m, ref, subjects, namespaced)
	errs = append(errs, validateObjectMetaUpdate(m, oldMeta)...)
	if ref != oldRef {
		errs = append(errs, field.Invalid(field.NewPath("roleRef"), roleRefValue(ref), "cannot change roleRef"))
	}
	return errs
}

// roleRefValue renders a RoleRef in error messages as kube-apiserver does,
// from its internal type.
type roleRefValue struct {
	APIGroup string
	Kind     string
	Name     string
}

func validateSubject(s rbacv1.Subject, namespaced bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if s.Name != "" {
			errs = append(errs, validateName(s.Name, nameIsDNSSubdomain, false, p.Child("name"))...)
		}
		if s.APIGroup != "" {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{""}))
		}
		if !namespaced && s.Namespace == "" {
			errs = append(errs, field.Required(p.Child("namespace"), ""))
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		if s.APIGroup != rbacv1.GroupName {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("kind"), s.Kind, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
	}
	return errs
}
