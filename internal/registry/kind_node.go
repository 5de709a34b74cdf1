package registry

import (
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// nodeV1 is node.k8s.io/v1.
var nodeV1 = schema.GroupVersion{Group: "node.k8s.io", Version: "v1"}

// runtimeClasses: a RuntimeClass names the container runtime handler
// pods of the class run with, fixed at creation, with the pod overhead
// and scheduling constraints the class adds. No generation is kept.
// The RuntimeClass admission plugin (internal/admission) applies a
// class's overhead and scheduling to its pods.
var runtimeClasses = &Resource{
	GroupVersion: nodeV1, Name: "runtimeclasses", SingularName: "runtimeclass", Kind: "RuntimeClass",
	Strategy: Strategy{
		Validate: validator(validateRuntimeClass),
		ValidateUpdate: updateValidator(func(rc, old *nodev1.RuntimeClass) field.ErrorList {
			errs := validateRuntimeClass(rc)
			errs = append(errs, validateObjectMetaUpdate(&rc.ObjectMeta, &old.ObjectMeta)...)
			return append(errs, validateImmutableDeclared(rc.Handler, old.Handler, field.NewPath("handler"))...)
		}),
		NoGeneration: true,
		Table:        tables.RuntimeClass.Convertor(nil),
	},
}

// validateRuntimeClass is kube's ValidateRuntimeClass: the handler is a
// DNS label; the overhead is checked as container limits are; the
// scheduling node selector's labels and tolerations are checked, each
// toleration once.
func validateRuntimeClass(rc *nodev1.RuntimeClass) field.ErrorList {
	errs := validateObjectMeta(&rc.ObjectMeta, false, nameIsDNSSubdomain)
	hp := field.NewPath("handler")
	if rc.Handler == "" {
		errs = append(errs, field.Required(hp, ""))
	} else {
		errs = append(errs, validateName(rc.Handler, nameIsDNSLabel, false, hp)...)
	}
	if o := rc.Overhead; o != nil {
		errs = append(errs, validateResourceRequirements(&corev1.ResourceRequirements{Limits: o.PodFixed}, field.NewPath("overhead"))...)
	}
	if s := rc.Scheduling; s != nil {
		sp := field.NewPath("scheduling")
		if s.NodeSelector != nil {
			errs = append(errs, validateLabels(s.NodeSelector, sp.Child("nodeSelector"))...)
		}
		tp := sp.Child("tolerations")
		errs = append(errs, validateTolerations(s.Tolerations, tp)...)
		seen := map[corev1.Toleration]bool{}
		for i, t := range s.Tolerations {
			key := corev1.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect}
			if seen[key] {
				errs = append(errs, field.Duplicate(tp.Index(i), t))
			}
			seen[key] = true
		}
	}
	return errs
}
