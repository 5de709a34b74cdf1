package registry

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// StatefulSets, DaemonSets and the ControllerRevisions both keep their
// history in, with kube's defaults (pkg/apis/apps/v1 defaults) and
// validation messages (pkg/apis/apps/validation).

// statefulSets: StatefulSets keep metadata.generation, bumped on
// spec changes.
var statefulSets = &Resource{
	GroupVersion: appsV1, Name: "statefulsets", SingularName: "statefulset", Kind: "StatefulSet",
	Namespaced: true, ShortNames: []string{"sts"}, Categories: []string{"all"}, HasStatus: true, HasScale: true,
	Strategy: Strategy{
		Default:        defaulter(defaultStatefulSet),
		Validate:       validator(validateStatefulSet),
		ValidateUpdate: updateValidator(validateStatefulSetUpdate),
		Table:          tables.StatefulSet.Convertor(nil),
	},
}

func defaultStatefulSet(s *appsv1.StatefulSet) {
	if s.Spec.Replicas == nil {
		s.Spec.Replicas = new(int32(1))
	}
	if s.Spec.PodManagementPolicy == "" {
		s.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	u := &s.Spec.UpdateStrategy
	if u.Type == "" {
		u.Type = appsv1.RollingUpdateStatefulSetStrategyType
	}
	if u.Type == appsv1.RollingUpdateStatefulSetStrategyType {
		if u.RollingUpdate == nil {
			u.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
		if u.RollingUpdate.Partition == nil {
			u.RollingUpdate.Partition = new(int32(0))
		}
	}
	if s.Spec.RevisionHistoryLimit == nil {
		s.Spec.RevisionHistoryLimit = new(int32(10))
	}
	if s.Spec.PersistentVolumeClaimRetentionPolicy == nil {
		s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	r := s.Spec.PersistentVolumeClaimRetentionPolicy
	if r.WhenDeleted == "" {
		r.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if r.WhenScaled == "" {
		r.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	for i := range s.Spec.VolumeClaimTemplates {
		c := &s.Spec.VolumeClaimTemplates[i]
		if c.Spec.VolumeMode == nil {
			c.Spec.VolumeMode = new(corev1.PersistentVolumeFilesystem)
		}
		if c.Status.Phase == "" {
			c.Status.Phase = corev1.ClaimPending
		}
	}
	defaultPodTemplateSpec(&s.Spec.Template)
}

func validateStatefulSet(s *appsv1.StatefulSet) field.ErrorList {
	errs := validateObjectMeta(&s.ObjectMeta, true, nameIsDNSSubdomain)
	return append(errs, validateStatefulSetSpec(&s.Spec, specPath)...)
}

// validateStatefulSetUpdate allows kube's mutable fields only: replicas,
// ordinals, template, updateStrategy, revisionHistoryLimit,
// persistentVolumeClaimRetentionPolicy and minReadySeconds.
func validateStatefulSetUpdate(s, old *appsv1.StatefulSet) field.ErrorList {
	errs := validateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateStatefulSetSpec(&s.Spec, specPath)...)
	a, b := s.Spec.DeepCopy(), old.Spec.DeepCopy()
	for _, spec := range []*appsv1.StatefulSetSpec{a, b} {
		spec.Replicas, spec.Ordinals, spec.Template = nil, nil, corev1.PodTemplateSpec{}
		spec.UpdateStrategy, spec.RevisionHistoryLimit = appsv1.StatefulSetUpdateStrategy{}, nil
		spec.PersistentVolumeClaimRetentionPolicy, spec.MinReadySeconds = nil, 0
	}
	if !apiequality.Semantic.DeepEqual(a, b) {
		errs = append(errs, field.Forbidden(specPath, "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"))
	}
	return errs
}

func validateStatefulSetSpec(spec *appsv1.StatefulSetSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch spec.PodManagementPolicy {
	case "":
		errs = append(errs, field.Required(p.Child("podManagementPolicy"), ""))
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.Invalid(p.Child("podManagementPolicy"), spec.PodManagementPolicy,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement)))
	}
	up := p.Child("updateStrategy")
	switch u := spec.UpdateStrategy; u.Type {
	case "":
		errs = append(errs, field.Required(up, ""))
	case appsv1.OnDeleteStatefulSetStrategyType:
		if u.RollingUpdate != nil {
			errs = append(errs, field.Invalid(up.Child("rollingUpdate"), u.RollingUpdate,
				fmt.Sprintf("only allowed for updateStrategy '%s'", appsv1.RollingUpdateStatefulSetStrategyType)))
		}
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if u.RollingUpdate != nil && u.RollingUpdate.Partition != nil {
			errs = append(errs, validateNonnegative(int64(*u.RollingUpdate.Partition), up.Child("rollingUpdate", "partition"))...)
		}
	default:
		errs = append(errs, field.Invalid(up, u,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType)))
	}
	if r := spec.PersistentVolumeClaimRetentionPolicy; r != nil {
		rp := p.Child("persistentVolumeClaimRetentionPolicy")
		errs = append(errs, validateRetentionPolicyType(r.WhenDeleted, rp.Child("whenDeleted"))...)
		errs = append(errs, validateRetentionPolicyType(r.WhenScaled, rp.Child("whenScaled"))...)
	}
	errs = append(errs, validateNonnegative(int64(replicasOf(spec.Replicas)), p.Child("replicas"))...)
	if spec.Ordinals != nil {
		errs = append(errs, validateNonnegative(int64(spec.Ordinals.Start), p.Child("ordinals", "start"))...)
	}
	errs = append(errs, validateNonnegative(int64(spec.MinReadySeconds), p.Child("minReadySeconds"))...)
	if spec.RevisionHistoryLimit != nil {
		errs = append(errs, validateNonnegative(int64(*spec.RevisionHistoryLimit), p.Child("revisionHistoryLimit"))...)
	}
	if spec.ServiceName != "" {
		errs = append(errs, validateDNS1123Label(spec.ServiceName, p.Child("serviceName"))...)
	}
	errs = append(errs, validateSelectorOf(spec.Selector, "statefulset", p)...)
	if selector, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil {
		errs = append(errs, validateStatefulSetTemplate(&spec.Template, selector, p.Child("template"))...)
	}
	return errs
}

// validateStatefulSetTemplate is kube's light check of a StatefulSet's
// template: labels matching the selector, labels and annotations, restart
// policy and no active deadline. kube does not validate the pod spec
// itself here, since its volume mounts may name volumeClaimTemplates.
func validateStatefulSetTemplate(t *corev1.PodTemplateSpec, selector labels.Selector, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !selector.Empty() && !selector.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(p.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, validateLabels(t.Labels, p.Child("labels"))...)
	errs = append(errs, validateAnnotations(t.Annotations, p.Child("annotations"))...)
	errs = append(errs, validatePodSpecificAnnotations(t.Annotations, &t.Spec, p.Child("annotations"))...)
	if t.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(p.Child("spec", "restartPolicy"), t.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Invalid(p.Child("spec", "activeDeadlineSeconds"), t.Spec.ActiveDeadlineSeconds, "must not be specified"))
	}
	return errs
}

func validateRetentionPolicyType(t appsv1.PersistentVolumeClaimRetentionPolicyType, p *field.Path) field.ErrorList {
	switch t {
	case appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType:
		return nil
	}
	return field.ErrorList{field.NotSupported(p, t, []string{
		string(appsv1.RetainPersistentVolumeClaimRetentionPolicyType), string(appsv1.DeletePersistentVolumeClaimRetentionPolicyType)})}
}

// validateSelectorOf checks the selector of a StatefulSet or DaemonSet;
// kube names the kind in the empty-selector message.
func validateSelectorOf(sel *metav1.LabelSelector, kind string, p *field.Path) field.ErrorList {
	if sel == nil {
		return field.ErrorList{field.Required(p.Child("selector"), "")}
	}
	errs := validateLabelSelector(sel, p.Child("selector"))
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(p.Child("selector"), sel, "empty selector is invalid for "+kind))
	}
	if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
		errs = append(errs, field.Invalid(p.Child("selector"), sel, ""))
	}
	return errs
}

// daemonSets: DaemonSets keep metadata.generation, bumped on spec
// changes.
var daemonSets = &Resource{
	GroupVersion: appsV1, Name: "daemonsets", SingularName: "daemonset", Kind: "DaemonSet",
	Namespaced: true, ShortNames: []string{"ds"}, Categories: []string{"all"}, HasStatus: true,
	Strategy: Strategy{
		Default:        defaulter(defaultDaemonSet),
		Validate:       validator(validateDaemonSet),
		ValidateUpdate: updateValidator(validateDaemonSetUpdate),
		Table:          tables.DaemonSet.Convertor(nil),
	},
}

func defaultDaemonSet(d *appsv1.DaemonSet) {
	u := &d.Spec.UpdateStrategy
	if u.Type == "" {
		u.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if u.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if u.RollingUpdate == nil {
			u.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if u.RollingUpdate.MaxUnavailable == nil {
			u.RollingUpdate.MaxUnavailable = new(intstr.FromInt32(1))
		}
		if u.RollingUpdate.MaxSurge == nil {
			u.RollingUpdate.MaxSurge = new(intstr.FromInt32(0))
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = new(int32(10))
	}
	defaultPodTemplateSpec(&d.Spec.Template)
}

func validateDaemonSet(d *appsv1.DaemonSet) field.ErrorList {
	errs := validateObjectMeta(&d.ObjectMeta, true, nameIsDNSSubdomain)
	return append(errs, validateDaemonSetSpec(&d.Spec, specPath)...)
}

func validateDaemonSetUpdate(d, old *appsv1.DaemonSet) field.ErrorList {
	errs := validateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateImmutable(d.Spec.Selector, old.Spec.Selector, specPath.Child("selector"))...)
	return append(errs, validateDaemonSetSpec(&d.Spec, specPath)...)
}

func validateDaemonSetSpec(spec *appsv1.DaemonSetSpec, p *field.Path) field.ErrorList {
	errs := validateSelectorOf(spec.Selector, "daemonset", p)
	if selector, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil {
		errs = append(errs, validatePodTemplateForReplicas(&spec.Template, selector, "DaemonSet", p.Child("template"))...)
	}
	errs = append(errs, validateNonnegative(int64(spec.MinReadySeconds), p.Child("minReadySeconds"))...)
	errs = append(errs, validateDaemonSetUpdateStrategy(&spec.UpdateStrategy, p.Child("updateStrategy"))...)
	if spec.RevisionHistoryLimit != nil {
		errs = append(errs, validateNonnegative(int64(*spec.RevisionHistoryLimit), p.Child("revisionHistoryLimit"))...)
	}
	return errs
}

func validateDaemonSetUpdateStrategy(s *appsv1.DaemonSetUpdateStrategy, p *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
	case appsv1.RollingUpdateDaemonSetStrategyType:
		if s.RollingUpdate == nil {
			return field.ErrorList{field.Required(p.Child("rollingUpdate"), "")}
		}
		return validateRollingUpdateDeployment(&appsv1.RollingUpdateDeployment{
			MaxUnavailable: s.RollingUpdate.MaxUnavailable, MaxSurge: s.RollingUpdate.MaxSurge,
		}, p.Child("rollingUpdate"))
	default:
		return field.ErrorList{field.NotSupported(p, s, []string{string(appsv1.RollingUpdateDaemonSetStrategyType), string(appsv1.OnDeleteDaemonSetStrategyType)})}
	}
	return nil
}

// controllerRevisions: ControllerRevisions are immutable snapshots
// of a controller's template; their data and revision may not change.
var controllerRevisions = &Resource{
	GroupVersion: appsV1, Name: "controllerrevisions", SingularName: "controllerrevision", Kind: "ControllerRevision",
	Namespaced: true,
	Strategy: Strategy{
		NoGeneration: true,
		Validate:     validator(validateControllerRevision),
		ValidateUpdate: updateValidator(func(r, old *appsv1.ControllerRevision) field.ErrorList {
			errs := validateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta)
			errs = append(errs, validateControllerRevision(r)...)
			return append(errs, validateImmutable(r.Data, old.Data, field.NewPath("data"))...)
		}),
		Table: tables.ControllerRevision.Convertor(nil),
	},
}

func validateControllerRevision(r *appsv1.ControllerRevision) field.ErrorList {
	errs := validateObjectMeta(&r.ObjectMeta, true, nameIsDNSSubdomain)
	if r.Data.Raw == nil && r.Data.Object == nil {
		errs = append(errs, field.Required(field.NewPath("data"), "data is mandatory"))
	}
	return append(errs, validateNonnegative(r.Revision, field.NewPath("revision"))...)
}
