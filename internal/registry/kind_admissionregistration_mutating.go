package registry

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/admission/cel"
	"minik/internal/tables"
)

// MutatingAdmissionPolicies and their bindings
// (admissionregistration.k8s.io/v1, GA and on by default since kube
// 1.36): cluster-scoped, with generation, no status. Defaults and
// validation are kube's; the policy's CEL expressions (variables, match
// conditions, mutations) are compiled when it is written, as the
// ValidatingAdmissionPolicy's are.

var mutatingAdmissionPolicies = &Resource{
	GroupVersion: admissionregistrationV1, Name: "mutatingadmissionpolicies", SingularName: "mutatingadmissionpolicy", Kind: "MutatingAdmissionPolicy",
	Categories: []string{"api-extensions"},
	Strategy:   configurationStrategy(defaultMutatingAdmissionPolicy, validateMutatingAdmissionPolicy, tables.MutatingAdmissionPolicy),
}

var mutatingAdmissionPolicyBindings = &Resource{
	GroupVersion: admissionregistrationV1, Name: "mutatingadmissionpolicybindings", SingularName: "mutatingadmissionpolicybinding", Kind: "MutatingAdmissionPolicyBinding",
	Categories: []string{"api-extensions"},
	Strategy:   configurationStrategy(defaultMutatingAdmissionPolicyBinding, validateMutatingAdmissionPolicyBinding, tables.MutatingAdmissionPolicyBinding),
}

func defaultMutatingAdmissionPolicy(p *admissionregistrationv1.MutatingAdmissionPolicy) {
	if p.Spec.FailurePolicy == nil {
		f := admissionregistrationv1.Fail
		p.Spec.FailurePolicy = &f
	}
	defaultMatchResources(p.Spec.MatchConstraints)
}

func defaultMutatingAdmissionPolicyBinding(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) {
	defaultMatchResources(b.Spec.MatchResources)
}

var (
	// supportedMutatingOperations: a mutating policy cannot act on DELETE.
	supportedMutatingOperations = sets.New(string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Create),
		string(admissionregistrationv1.Update), string(admissionregistrationv1.Connect))
	supportedPatchTypes = sets.New(string(admissionregistrationv1.PatchTypeApplyConfiguration), string(admissionregistrationv1.PatchTypeJSONPatch))
)

// validateMutatingOperations is kube's check that a mutating policy's or
// binding's rules name no operation but CREATE, UPDATE, CONNECT or *.
func validateMutatingOperations(rules []admissionregistrationv1.NamedRuleWithOperations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, r := range rules {
		for _, op := range r.Operations {
			if !supportedMutatingOperations.Has(string(op)) {
				errs = append(errs, field.NotSupported(p, op, sets.List(supportedMutatingOperations)))
			}
		}
	}
	return errs
}

// validateMutatingAdmissionPolicy is kube's ValidateMutatingAdmissionPolicy.
func validateMutatingAdmissionPolicy(pol *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	errs := validateObjectMeta(&pol.ObjectMeta, false, nameIsDNSSubdomain)
	spec := &pol.Spec
	if fp := spec.FailurePolicy; fp == nil {
		errs = append(errs, field.Required(specPath.Child("failurePolicy"), ""))
	} else if !supportedFailurePolicies.Has(string(*fp)) {
		errs = append(errs, field.NotSupported(specPath.Child("failurePolicy"), *fp, sets.List(supportedFailurePolicies)))
	}
	if pk := spec.ParamKind; pk != nil {
		errs = append(errs, validateParamKind(pk, specPath.Child("paramKind"))...)
	}
	mp := specPath.Child("matchConstraints")
	if spec.MatchConstraints == nil {
		errs = append(errs, field.Required(mp, ""))
	} else {
		errs = append(errs, validateMatchResources(spec.MatchConstraints, mp, true)...)
		errs = append(errs, validateMutatingOperations(spec.MatchConstraints.ResourceRules, mp.Child("resourceRules", "operations"))...)
	}
	compiler, varErrs := policyCompiler(spec.Variables)
	if compiler == nil {
		return append(errs, field.InternalError(specPath.Child("variables"), errCompi))
	}
	errs = append(errs, validateMatchConditionsIn(compiler, spec.MatchConditions, specPath.Child("matchConditions"))...)
	errs = append(errs, validateVariables(spec.Variables, varErrs, specPath.Child("variables"))...)
	if len(spec.Mutations) == 0 {
		errs = append(errs, field.Required(specPath.Child("mutations"), "mutations must contain at least one item"))
	}
	for i, m := range spec.Mutations {
		errs = append(errs, validateMutation(compiler, &m, specPath.Child("mutations").Index(i))...)
	}
	rp := specPath.Child("reinvocationPolicy")
	if spec.ReinvocationPolicy == "" {
		errs = append(errs, field.Required(rp, ""))
	} else if !supportedReinvocation.Has(string(spec.ReinvocationPolicy)) {
		errs = append(errs, field.NotSupported(rp, spec.ReinvocationPolicy, sets.List(supportedReinvocation)))
	}
	return errs
}

// validateMutation is kube's check of one mutation: its patch type and
// the one expression of that type, compiled.
func validateMutation(c *cel.Compiler, m *admissionregistrationv1.Mutation, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch m.PatchType {
	case "":
		errs = append(errs, field.Required(p.Child("patchType"), ""))
	case admissionregistrationv1.PatchTypeJSONPatch:
		if m.JSONPatch == nil {
			errs = append(errs, field.Required(p.Child("jsonPatch"), "must be specified when patchType is JSONPatch"))
		} else {
			errs = append(errs, validateMutationExpression(c, m.JSONPatch.Expression, true, p.Child("jsonPatch", "expression"))...)
		}
		if m.ApplyConfiguration != nil {
			errs = append(errs, field.Invalid(p.Child("applyConfiguration"), "{applyConfiguration}", "must not be specified when patchType is JSONPatch"))
		}
	case admissionregistrationv1.PatchTypeApplyConfiguration:
		if m.ApplyConfiguration == nil {
			errs = append(errs, field.Required(p.Child("applyConfiguration"), "must be specified when patchType is ApplyConfiguration"))
		} else {
			errs = append(errs, validateMutationExpression(c, m.ApplyConfiguration.Expression, false, p.Child("applyConfiguration", "expression"))...)
		}
		if m.JSONPatch != nil {
			errs = append(errs, field.Invalid(p.Child("jsonPatch"), "{jsonPatch}", "must not be specified when patchType is ApplyConfiguration"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("patchType"), m.PatchType, sets.List(supportedPatchTypes)))
	}
	return errs
}

func validateMutationExpression(c *cel.Compiler, expr string, jsonPatch bool, p *field.Path) field.ErrorList {
	trimmed := strings.TrimSpace(expr)
	if trimmed == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if _, err := c.CompileMutation(trimmed, jsonPatch); err != nil {
		return field.ErrorList{field.Invalid(p, trimmed, err.Error())}
	}
	return nil
}

// validateMutatingAdmissionPolicyBinding is kube's
// ValidateMutatingAdmissionPolicyBinding.
func validateMutatingAdmissionPolicyBinding(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	errs := validateObjectMeta(&b.ObjectMeta, false, nameIsDNSSubdomain)
	spec := &b.Spec
	if spec.PolicyName == "" {
		errs = append(errs, field.Required(specPath.Child("policyName"), ""))
	} else {
		errs = append(errs, validateName(spec.PolicyName, nameIsDNSSubdomain, false, specPath.Child("policyName"))...)
	}
	errs = append(errs, validateParamRef(spec.ParamRef, specPath.Child("paramRef"))...)
	if m := spec.MatchResources; m != nil {
		mp := specPath.Child("matchResources")
		errs = append(errs, validateMatchResources(m, mp, false)...)
		errs = append(errs, validateMutatingOperations(m.ResourceRules, mp.Child("resourceRules", "operations"))...)
	}
	return errs
}

// validateParamRef is kube's validateParamRef of a policy binding: a
// name (a path segment) or a selector, not both, and an action when the
// parameter is not found.
func validateParamRef(r *admissionregistrationv1.ParamRef, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if r.Name != "" {
		errs = append(errs, validateName(r.Name, nameIsPathSegment, false, p.Child("name"))...)
		if r.Selector != nil {
			errs = append(errs, field.Forbidden(p.Child("name"), `name and selector are mutually exclusive`))
		}
	}
	if r.Selector != nil {
		errs = append(errs, validateLabelSelector(r.Selector, p.Child("selector"))...)
		if r.Name != "" {
			errs = append(errs, field.Forbidden(p.Child("selector"), `name and selector are mutually exclusive`))
		}
	}
	if r.Name == "" && r.Selector == nil {
		errs = append(errs, field.Required(p, `one of name or selector must be specified`))
	}
	ap := p.Child("parameterNotFoundAction")
	if r.ParameterNotFoundAction == nil || *r.ParameterNotFoundAction == "" {
		errs = append(errs, field.Required(ap, ""))
	} else if a := *r.ParameterNotFoundAction; a != admissionregistrationv1.DenyAction && a != admissionregistrationv1.AllowAction {
		errs = append(errs, field.NotSupported(ap, r.ParameterNotFoundAction, []string{string(admissionregistrationv1.DenyAction), string(admissionregistrationv1.AllowAction)}))
	}
	return errs
}
