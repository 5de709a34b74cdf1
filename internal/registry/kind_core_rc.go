package registry

import (
	"context"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// This file holds core/v1 ReplicationControllers, the ancestors of
// ReplicaSets (kube's pkg/registry/core/replicationcontroller), and the
// top-level core/v1 bindings resource, pods/binding's older form.

// replicationControllers: ReplicationControllers keep metadata.generation,
// bumped on spec changes; their scale subresource is autoscaling/v1's,
// with the selector printed from the label set; a delete without a
// propagation policy orphans their pods.
var replicationControllers = &Resource{
	GroupVersion: coreV1, Name: "replicationcontrollers", SingularName: "replicationcontroller", Kind: "ReplicationController",
	Namespaced: true, ShortNames: []string{"rc"}, Categories: []string{"all"}, HasStatus: true, HasScale: true,
	Strategy: Strategy{
		Default:        defaulter(defaultReplicationController),
		Validate:       validator(validateReplicationController),
		ValidateUpdate: updateValidator(validateReplicationControllerUpdate),
		ValidateStatus: validator(validateReplicationControllerStatus),
		Fields:         selectable(replicationControllerFields),
		// kube's core/v1 default: "for back compatibility".
		OrphansByDefault: true,
		Table:            tables.ReplicationController.Convertor(nil),
	},
}

// defaultReplicationController is kube's SetDefaults_ReplicationController
// and the declarative default of spec.replicas: the selector and, when
// the object has none, its labels come from the template's labels.
func defaultReplicationController(rc *corev1.ReplicationController) {
	if t := rc.Spec.Template; t != nil && t.Labels != nil {
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = copyLabels(t.Labels)
		}
		if len(rc.Labels) == 0 {
			rc.Labels = copyLabels(t.Labels)
		}
	}
	if rc.Spec.Replicas == nil {
		rc.Spec.Replicas = new(int32(1))
	}
	if rc.Spec.Template != nil {
		defaultPodTemplateSpec(rc.Spec.Template)
	}
}

func validateReplicationController(rc *corev1.ReplicationController) field.ErrorList {
	errs := validateObjectMeta(&rc.ObjectMeta, true, nameIsDNSSubdomain)
	return append(errs, validateReplicationControllerSpec(&rc.Spec, specPath)...)
}

// validateReplicationControllerUpdate is kube's: unlike a ReplicaSet's,
// the selector of a ReplicationController may change.
func validateReplicationControllerUpdate(rc, old *corev1.ReplicationController) field.ErrorList {
	errs := validateObjectMetaUpdate(&rc.ObjectMeta, &old.ObjectMeta)
	return append(errs, validateReplicationControllerSpec(&rc.Spec, specPath)...)
}

func validateReplicationControllerSpec(spec *corev1.ReplicationControllerSpec, p *field.Path) field.ErrorList {
	errs := validateNonnegative(int64(spec.MinReadySeconds), p.Child("minReadySeconds"))
	// kube checks the label set for emptiness only.
	selector := labels.Set(spec.Selector).AsSelector()
	if selector.Empty() {
		errs = append(errs, field.Required(p.Child("selector"), ""))
	}
	if spec.Replicas == nil {
		errs = append(errs, field.Required(p.Child("replicas"), ""))
	} else {
		errs = append(errs, validateNonnegative(int64(*spec.Replicas), p.Child("replicas"))...)
	}
	if spec.Template == nil {
		return append(errs, field.Required(p.Child("template"), ""))
	}
	return append(errs, validatePodTemplateForReplicas(spec.Template, selector, "ReplicationController", p.Child("template"))...)
}

func validateReplicationControllerStatus(rc *corev1.ReplicationController) field.ErrorList {
	st := rc.Status
	return validateReplicaCounts(replicaCounts{st.Replicas, st.FullyLabeledReplicas, st.ReadyReplicas, st.AvailableReplicas, st.ObservedGeneration, nil}, field.NewPath("status"))
}

// validateReplicaSetStatus is kube's ValidateReplicaSetStatus, the
// ReplicationController's with status.terminatingReplicas.
func validateReplicaSetStatus(rs *appsv1.ReplicaSet) field.ErrorList {
	st := rs.Status
	return validateReplicaCounts(replicaCounts{st.Replicas, st.FullyLabeledReplicas, st.ReadyReplicas, st.AvailableReplicas, st.ObservedGeneration, st.TerminatingReplicas}, field.NewPath("status"))
}

// replicaCounts are the counts the status of a ReplicaSet or
// ReplicationController reports.
type replicaCounts struct {
	replicas, fullyLabeled, ready, available int32
	observedGeneration                       int64
	terminating                              *int32
}

// validateReplicaCounts is kube's ValidateReplicaSetStatus and
// ValidateReplicationControllerStatus: counts are non-negative and
// within status.replicas, available within ready.
func validateReplicaCounts(c replicaCounts, p *field.Path) field.ErrorList {
	errs := validateNonnegative(int64(c.replicas), p.Child("replicas"))
	errs = append(errs, validateNonnegative(int64(c.fullyLabeled), p.Child("fullyLabeledReplicas"))...)
	errs = append(errs, validateNonnegative(int64(c.ready), p.Child("readyReplicas"))...)
	errs = append(errs, validateNonnegative(int64(c.available), p.Child("availableReplicas"))...)
	errs = append(errs, validateNonnegative(c.observedGeneration, p.Child("observedGeneration"))...)
	if c.terminating != nil {
		errs = append(errs, validateNonnegative(int64(*c.terminating), p.Child("terminatingReplicas"))...)
	}
	const msg = "cannot be greater than status.replicas"
	if c.fullyLabeled > c.replicas {
		errs = append(errs, field.Invalid(p.Child("fullyLabeledReplicas"), c.fullyLabeled, msg))
	}
	if c.ready > c.replicas {
		errs = append(errs, field.Invalid(p.Child("readyReplicas"), c.ready, msg))
	}
	if c.available > c.replicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), c.available, msg))
	}
	if c.available > c.ready {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), c.available, "cannot be greater than readyReplicas"))
	}
	return errs
}

func replicationControllerFields(rc *corev1.ReplicationController) fields.Set {
	return fields.Set{"status.replicas": strconv.Itoa(int(rc.Status.Replicas))}
}

// ScaleSelector is the status.selector of the Scale of obj when its kind
// selects with a label set rather than a LabelSelector (a
// ReplicationController), as kube's scaleFromRC prints it; ok is false
// for every other kind.
func ScaleSelector(obj runtime.Object) (selector string, ok bool) {
	rc, ok := obj.(*corev1.ReplicationController)
	if !ok {
		return "", false
	}
	return labels.SelectorFromSet(rc.Spec.Selector).String(), true
}

// bindings is the top-level core/v1 bindings resource: a create of a
// Binding named after a pod of the namespace binds the pod as
// pods/binding does (kube's LegacyBindingREST over its BindingREST).
var bindings = &Resource{
	GroupVersion: coreV1, Name: "bindings", SingularName: "binding", Kind: "Binding",
	Namespaced: true,
	Answer:     answerBinding,
}

func answerBinding(ctx context.Context, env Env, ns string, obj runtime.Object) (runtime.Object, error) {
	b, ok := obj.(*corev1.Binding)
	if !ok {
		return nil, wrongBody(obj)
	}
	return createBinding(ctx, env, ns, b.Name, b, dryRunOf(ctx))
}

type dryRunKey struct{}

// WithDryRun returns ctx telling a create-only kind's Answer that the
// request is a dry run: it must not persist anything.
func WithDryRun(ctx context.Context, dryRun bool) context.Context {
	return context.WithValue(ctx, dryRunKey{}, dryRun)
}

// dryRunOf tells whether ctx carries a dry run (WithDryRun).
func dryRunOf(ctx context.Context) bool {
	d, _ := ctx.Value(dryRunKey{}).(bool)
	return d
}
