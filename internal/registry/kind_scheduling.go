package registry

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// PriorityClass values, as kube's scheduling API defines them.
const (
	// HighestUserDefinablePriority is the largest value a PriorityClass
	// outside the system classes may have.
	HighestUserDefinablePriority int32 = 1000000000
	// SystemCriticalPriority is the value of system-cluster-critical;
	// system-node-critical is 1000 above it.
	SystemCriticalPriority int32 = 2 * HighestUserDefinablePriority
	// SystemPriorityClassPrefix is the name prefix reserved to the system
	// classes.
	SystemPriorityClassPrefix = "system-"
	// SystemClusterCritical and SystemNodeCritical name the system classes.
	SystemClusterCritical = SystemPriorityClassPrefix + "cluster-critical"
	SystemNodeCritical    = SystemPriorityClassPrefix + "node-critical"
)

// SystemPriorityClasses returns the PriorityClasses every cluster has,
// created by the API server at start (kube's
// scheduling/bootstrap-system-priority-classes hook). The objects are new
// on each call.
func SystemPriorityClasses() []*schedulingv1.PriorityClass {
	return []*schedulingv1.PriorityClass{
		{
			ObjectMeta:  metav1.ObjectMeta{Name: SystemNodeCritical},
			Value:       SystemCriticalPriority + 1000,
			Description: "Used for system critical pods that must not be moved from their current node.",
		},
		{
			ObjectMeta:  metav1.ObjectMeta{Name: SystemClusterCritical},
			Value:       SystemCriticalPriority,
			Description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
		},
	}
}

// isKnownSystemPriorityClass tells whether name, value and globalDefault
// are those of a system class, and if not, why, in kube's words.
func isKnownSystemPriorityClass(name string, value int32, globalDefault bool) error {
	for _, spc := range SystemPriorityClasses() {
		if spc.Name != name {
			continue
		}
		if spc.Value != value {
			return fmt.Errorf("value of %v PriorityClass must be %v", spc.Name, spc.Value)
		}
		if spc.GlobalDefault != globalDefault {
			return fmt.Errorf("globalDefault of %v PriorityClass must be %v", spc.Name, spc.GlobalDefault)
		}
		return nil
	}
	return fmt.Errorf("%v is not a known system priority class", name)
}

// priorityClasses: a PriorityClass's metadata.generation is 1 from
// creation on and never bumped, as kube's strategy has it; its value and
// preemptionPolicy are fixed at creation. That only one class is the
// global default is the Priority admission plugin's check, as in kube.
var priorityClasses = &Resource{
	GroupVersion: schedulingV1, Name: "priorityclasses", SingularName: "priorityclass", Kind: "PriorityClass",
	ShortNames: []string{"pc"},
	Strategy: Strategy{
		NoGeneration:     true,
		PrepareForCreate: creator(func(pc *schedulingv1.PriorityClass) { pc.Generation = 1 }),
		Default:          defaulter(defaultPriorityClass),
		Validate:         validator(validatePriorityClass),
		ValidateUpdate: updateValidator(func(pc, old *schedulingv1.PriorityClass) field.ErrorList {
			errs := validateObjectMetaUpdate(&pc.ObjectMeta, &old.ObjectMeta)
			if pc.Value != old.Value {
				errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
			}
			return append(errs, validateImmutable(pc.PreemptionPolicy, old.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
		}),
		Table: tables.PriorityClass.Convertor(nil),
	},
}

// defaultPriorityClass is kube's v1 defaulting: PreemptLowerPriority.
func defaultPriorityClass(pc *schedulingv1.PriorityClass) {
	if pc.PreemptionPolicy == nil {
		pc.PreemptionPolicy = new(corev1.PreemptLowerPriority)
	}
}

func validatePriorityClass(pc *schedulingv1.PriorityClass) field.ErrorList {
	errs := validateObjectMeta(&pc.ObjectMeta, false, nameIsDNSSubdomain)
	if strings.HasPrefix(pc.Name, SystemPriorityClassPrefix) {
		if err := isKnownSystemPriorityClass(pc.Name, pc.Value, pc.GlobalDefault); err != nil {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "name"),
				"priority class names with '"+SystemPriorityClassPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		}
	} else if pc.Value > HighestUserDefinablePriority {
		errs = append(errs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %v", HighestUserDefinablePriority)))
	}
	return append(errs, validatePreemptionPolicy(pc.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
}

// validatePreemptionPolicy checks a pod's or a PriorityClass's
// preemptionPolicy, as kube's ValidatePreemptionPolicy.
func validatePreemptionPolicy(pp *corev1.PreemptionPolicy, p *field.Path) field.ErrorList {
	if pp == nil {
		return nil
	}
	switch *pp {
	case corev1.PreemptLowerPriority, corev1.PreemptNever:
		return nil
	case "":
		return field.ErrorList{field.Required(p, "")}
	default:
		return field.ErrorList{field.NotSupported(p, pp, []corev1.PreemptionPolicy{corev1.PreemptLowerPriority, corev1.PreemptNever})}
	}
}
