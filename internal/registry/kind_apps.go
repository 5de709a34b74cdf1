package registry

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// deployments: Deployments keep metadata.generation, bumped on spec
// changes and, because annotations are copied to the ReplicaSets, on
// annotation changes too.
var deployments = &Resource{
	GroupVersion: appsV1, Name: "deployments", SingularName: "deployment", Kind: "Deployment",
	Namespaced: true, ShortNames: []string{"deploy"}, Categories: []string{"all"}, HasStatus: true, HasScale: true,
	Strategy: Strategy{
		Default:                  defaulter(defaultDeployment),
		PrepareForUpdate:         updater(prepareDeploymentForUpdate),
		Validate:                 validator(validateDeployment),
		ValidateUpdate:           updateValidator(validateDeploymentUpdate),
		StatusUpdatesAnnotations: true,
		Table:                    tables.Deployment.Convertor(nil),
	},
}

func defaultDeployment(d *appsv1.Deployment) {
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = new(int32(1))
	}
	s := &d.Spec.Strategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if s.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if s.RollingUpdate.MaxUnavailable == nil {
			s.RollingUpdate.MaxUnavailable = new(intstr.FromString("25%"))
		}
		if s.RollingUpdate.MaxSurge == nil {
			s.RollingUpdate.MaxSurge = new(intstr.FromString("25%"))
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = new(int32(10))
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = new(int32(600))
	}
	defaultPodTemplateSpec(&d.Spec.Template)
}

// prepareDeploymentForUpdate bumps the generation on annotation changes; the
// generic layer already bumps it on spec changes.
func prepareDeploymentForUpdate(d, old *appsv1.Deployment) {
	if d.Generation <= old.Generation && !apiequality.Semantic.DeepEqual(d.Annotations, old.Annotations) {
		d.Generation = old.Generation + 1
	}
}

func validateDeployment(d *appsv1.Deployment) field.ErrorList {
	errs := validateObjectMeta(&d.ObjectMeta, true, nameIsDNSSubdomain)
	return append(errs, validateDeploymentSpec(&d.Spec, specPath)...)
}

func validateDeploymentUpdate(d, old *appsv1.Deployment) field.ErrorList {
	errs := validateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateDeploymentSpec(&d.Spec, specPath)...)
	return append(errs, validateImmutable(d.Spec.Selector, old.Spec.Selector, specPath.Child("selector"))...)
}

func validateDeploymentSpec(spec *appsv1.DeploymentSpec, p *field.Path) field.ErrorList {
	errs := validateNonnegative(int64(replicasOf(spec.Replicas)), p.Child("replicas"))
	errs = append(errs, validateWorkloadSelector(spec.Selector, &spec.Template, "Deployment", p)...)
	errs = append(errs, validateDeploymentStrategy(&spec.Strategy, p.Child("strategy"))...)
	errs = append(errs, validateNonnegative(int64(spec.MinReadySeconds), p.Child("minReadySeconds"))...)
	if spec.RevisionHistoryLimit != nil {
		errs = append(errs, validateNonnegative(int64(*spec.RevisionHistoryLimit), p.Child("revisionHistoryLimit"))...)
	}
	if pds := spec.ProgressDeadlineSeconds; pds != nil {
		errs = append(errs, validateNonnegative(int64(*pds), p.Child("progressDeadlineSeconds"))...)
		if *pds <= spec.MinReadySeconds {
			errs = append(errs, field.Invalid(p.Child("progressDeadlineSeconds"), pds, "must be greater than minReadySeconds"))
		}
	}
	return errs
}

func replicasOf(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// validateWorkloadSelector checks the selector of a Deployment or ReplicaSet
// and the template it must select.
func validateWorkloadSelector(sel *metav1.LabelSelector, t *corev1.PodTemplateSpec, kind string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sel == nil {
		errs = append(errs, field.Required(p.Child("selector"), ""))
	} else {
		errs = append(errs, validateLabelSelector(sel, p.Child("selector"))...)
		if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
			// kube-apiserver says "deployment" for ReplicaSets too.
			errs = append(errs, field.Invalid(p.Child("selector"), sel, "empty selector is invalid for deployment"))
		}
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return append(errs, field.Invalid(p.Child("selector"), sel, "invalid label selector"))
	}
	return append(errs, validatePodTemplateForReplicas(t, selector, kind, p.Child("template"))...)
}

// deploymentStrategyValue renders a DeploymentStrategy in error messages as
// kube-apiserver does, from its internal type.
type deploymentStrategyValue struct {
	Type          appsv1.DeploymentStrategyType
	RollingUpdate *rollingUpdateValue
}

type rollingUpdateValue struct {
	MaxUnavailable intstr.IntOrString
	MaxSurge       intstr.IntOrString
}

func validateDeploymentStrategy(s *appsv1.DeploymentStrategy, p *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(p.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'")}
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		if s.RollingUpdate == nil {
			return field.ErrorList{field.Required(p.Child("rollingUpdate"), "this should be defaulted and never be nil")}
		}
		return validateRollingUpdateDeployment(s.RollingUpdate, p.Child("rollingUpdate"))
	default:
		v := deploymentStrategyValue{Type: s.Type}
		if ru := s.RollingUpdate; ru != nil {
			v.RollingUpdate = &rollingUpdateValue{intOrZero(ru.MaxUnavailable), intOrZero(ru.MaxSurge)}
		}
		return field.ErrorList{field.NotSupported(p, v, []string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)})}
	}
	return nil
}

func intOrZero(v *intstr.IntOrString) intstr.IntOrString {
	if v == nil {
		return intstr.IntOrString{}
	}
	return *v
}

func validateRollingUpdateDeployment(ru *appsv1.RollingUpdateDeployment, p *field.Path) field.ErrorList {
	maxUnavailable, maxSurge := intOrZero(ru.MaxUnavailable), intOrZero(ru.MaxSurge)
	errs := validatePositiveIntOrPercent(maxUnavailable, p.Child("maxUnavailable"))
	errs = append(errs, validatePositiveIntOrPercent(maxSurge, p.Child("maxSurge"))...)
	if intOrPercentValue(maxUnavailable) == 0 && intOrPercentValue(maxSurge) == 0 {
		errs = append(errs, field.Invalid(p.Child("maxUnavailable"), maxUnavailable, "may not be 0 when `maxSurge` is 0"))
	}
	if v, ok := percentValue(maxUnavailable); ok && v > 100 {
		errs = append(errs, field.Invalid(p.Child("maxUnavailable"), maxUnavailable, "must not be greater than 100%"))
	}
	return errs
}

func validatePositiveIntOrPercent(v intstr.IntOrString, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch v.Type {
	case intstr.String:
		for _, msg := range validation.IsValidPercent(v.StrVal) {
			errs = append(errs, field.Invalid(p, v, msg))
		}
	case intstr.Int:
		errs = append(errs, validateNonnegative(int64(v.IntValue()), p)...)
	}
	return errs
}

// percentValue returns the number of a valid percentage string.
func percentValue(v intstr.IntOrString) (int, bool) {
	if v.Type != intstr.String || len(validation.IsValidPercent(v.StrVal)) != 0 {
		return 0, false
	}
	n, _ := strconv.Atoi(v.StrVal[:len(v.StrVal)-1])
	return n, true
}

func intOrPercentValue(v intstr.IntOrString) int {
	if n, ok := percentValue(v); ok {
		return n
	}
	return v.IntValue()
}

// replicaSets: ReplicaSets keep metadata.generation.
var replicaSets = &Resource{
	GroupVersion: appsV1, Name: "replicasets", SingularName: "replicaset", Kind: "ReplicaSet",
	Namespaced: true, ShortNames: []string{"rs"}, Categories: []string{"all"}, HasStatus: true, HasScale: true,
	Strategy: Strategy{
		Default:                  defaulter(defaultReplicaSet),
		Validate:                 validator(validateReplicaSet),
		ValidateUpdate:           updateValidator(validateReplicaSetUpdate),
		ValidateStatus:           validator(validateReplicaSetStatus),
		Fields:                   selectable(replicaSetFields),
		StatusUpdatesAnnotations: true,
		Table:                    tables.ReplicaSet.Convertor(nil),
	},
}

func defaultReplicaSet(rs *appsv1.ReplicaSet) {
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = new(int32(1))
	}
	defaultPodTemplateSpec(&rs.Spec.Template)
}

func validateReplicaSet(rs *appsv1.ReplicaSet) field.ErrorList {
	errs := validateObjectMeta(&rs.ObjectMeta, true, nameIsDNSSubdomain)
	return append(errs, validateReplicaSetSpec(&rs.Spec, specPath)...)
}

func validateReplicaSetUpdate(rs, old *appsv1.ReplicaSet) field.ErrorList {
	errs := validateObjectMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateReplicaSetSpec(&rs.Spec, specPath)...)
	return append(errs, validateImmutable(rs.Spec.Selector, old.Spec.Selector, specPath.Child("selector"))...)
}

func validateReplicaSetSpec(spec *appsv1.ReplicaSetSpec, p *field.Path) field.ErrorList {
	errs := validateNonnegative(int64(replicasOf(spec.Replicas)), p.Child("replicas"))
	errs = append(errs, validateNonnegative(int64(spec.MinReadySeconds), p.Child("minReadySeconds"))...)
	return append(errs, validateWorkloadSelector(spec.Selector, &spec.Template, "ReplicaSet", p)...)
}

func replicaSetFields(rs *appsv1.ReplicaSet) fields.Set {
	return fields.Set{"status.replicas": strconv.Itoa(int(rs.Status.Replicas))}
}
