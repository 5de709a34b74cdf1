package admission

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1"
)

// systemPriorityClassNames are the classes the API server creates at start
// (registry.SystemPriorityClasses, which this package cannot import) and
// never lets go.
var systemPriorityClassNames = map[string]bool{"system-node-critical": true, "system-cluster-critical": true}

// Priority resolves the priority of new pods from their PriorityClass, as
// kube's plugin of that name does.
//
// Admitting a pod create, it sets spec.priority and spec.preemptionPolicy
// from spec.priorityClassName; a pod naming no class gets the global
// default class (its name too) or, with none, priority 0 and
// PreemptLowerPriority. An unknown class is refused ("no PriorityClass with
// name foo was found"), and so is a pod that sets spec.priority or
// spec.preemptionPolicy to something other than what its class says. On
// update the resolved fields are kept when a client leaves them out.
//
// Validating PriorityClass writes, it allows only one globalDefault class
// ("PriorityClass x is already marked as default. Only one default can
// exist"), and it refuses to delete a system class ("this is a system
// priority class and cannot be deleted", which kube's PriorityClass
// storage says).
type Priority struct {
	// Lister reads PriorityClasses from an informer cache. Required.
	Lister schedulinglisters.PriorityClassLister
	// Client reads a PriorityClass live when the cache does not have it
	// (one created a moment ago). Optional.
	Client kubernetes.Interface
}

// Name implements Mutator and Validator.
func (*Priority) Name() string { return "Priority" }

// Admit implements Mutator: it resolves a new pod's priority.
func (p *Priority) Admit(ctx context.Context, a *Attributes) error {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" || a.Subresource != "" {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	switch a.Operation {
	case Update:
		// The plugin set these on create; validation keeps them from
		// changing, so an update that leaves them out keeps them.
		if old, ok := a.OldObject.(*corev1.Pod); ok {
			if pod.Spec.Priority == nil && old.Spec.Priority != nil {
				pod.Spec.Priority = old.Spec.Priority
			}
			if pod.Spec.PreemptionPolicy == nil && old.Spec.PreemptionPolicy != nil {
				pod.Spec.PreemptionPolicy = old.Spec.PreemptionPolicy
			}
		}
		return nil
	case Create:
		return p.admitNewPod(ctx, a, pod)
	}
	return nil
}

func (p *Priority) admitNewPod(ctx context.Context, a *Attributes, pod *corev1.Pod) error {
	var priority int32
	var policy *corev1.PreemptionPolicy
	if pod.Spec.PriorityClassName == "" {
		def, err := p.defaultClass()
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to get default priority class: %v", err))
		}
		if def != nil {
			pod.Spec.PriorityClassName, priority, policy = def.Name, def.Value, def.PreemptionPolicy
		} else {
			policy = new(corev1.PreemptLowerPriority)
		}
	} else {
		pc, err := p.class(ctx, pod.Spec.PriorityClassName)
		if apierrors.IsNotFound(err) {
			return NewForbidden(a, fmt.Errorf("no PriorityClass with name %v was found", pod.Spec.PriorityClassName))
		}
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to get PriorityClass with name %s: %v", pod.Spec.PriorityClassName, err))
		}
		priority, policy = pc.Value, pc.PreemptionPolicy
	}
	if pod.Spec.Priority != nil && *pod.Spec.Priority != priority {
		return NewForbidden(a, fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, priority))
	}
	pod.Spec.Priority = &priority
	if policy != nil {
		if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != *policy {
			return NewForbidden(a, fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, *policy))
		}
		pod.Spec.PreemptionPolicy = new(*policy)
	}
	return nil
}

// class reads a PriorityClass from the cache, then live.
func (p *Priority) class(ctx context.Context, name string) (*schedulingv1.PriorityClass, error) {
	pc, err := p.Lister.Get(name)
	if apierrors.IsNotFound(err) && p.Client != nil {
		return p.Client.SchedulingV1().PriorityClasses().Get(ctx, name, metav1.GetOptions{})
	}
	return pc, err
}

// defaultClass is the global default class: should a race have made two,
// the one of the lowest value, as kube picks.
func (p *Priority) defaultClass() (*schedulingv1.PriorityClass, error) {
	list, err := p.Lister.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var def *schedulingv1.PriorityClass
	for _, pc := range list {
		if pc.GlobalDefault && (def == nil || pc.Value < def.Value) {
			def = pc
		}
	}
	return def, nil
}

// Validate implements Validator: one global default, and the system
// classes stay.
func (p *Priority) Validate(_ context.Context, a *Attributes) error {
	if a.Resource.Group != "scheduling.k8s.io" || a.Resource.Resource != "priorityclasses" || a.Subresource != "" {
		return nil
	}
	if a.Operation == Delete {
		if systemPriorityClassNames[a.Name] {
			return NewForbidden(a, errors.New("this is a system priority class and cannot be deleted"))
		}
		return nil
	}
	if a.Operation != Create && a.Operation != Update {
		return nil
	}
	pc, ok := a.Object.(*schedulingv1.PriorityClass)
	if !ok || !pc.GlobalDefault {
		return nil
	}
	def, err := p.defaultClass()
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("failed to get default priority class: %v", err))
	}
	if def != nil && (a.Operation == Create || def.Name != pc.Name) {
		return NewForbidden(a, fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", def.Name))
	}
	return nil
}
