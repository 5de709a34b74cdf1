// Package apf is API Priority and Fairness as kube-apiserver runs it:
// the bootstrap FlowSchemas and PriorityLevelConfigurations of
// k8s.io/apiserver's bootstrap package kept (Maintainer, what
// kube-apiserver's APF config producer ensures), and the dispatcher that
// enforces them (FlowControl: k8s.io/apiserver's util/flowcontrol with its
// config controller, which also writes every FlowSchema's Dangling
// condition).
//
// The bootstrap rules are kube's (pkg/registry/flowcontrol/ensurer): a
// missing object is always created; a mandatory one (exempt, catch-all)
// always gets its bootstrap spec back; a suggested one gets it only while
// its apf.kubernetes.io/autoupdate-spec annotation is "true" (or, without
// a boolean annotation, while its generation is 1), the annotation being
// set to what was decided; an object annotated "true" that is no longer
// part of the bootstrap configuration is deleted.
//
// The dispatcher is kube's own: seats shared by nominalConcurrencyShares
// with lending and borrowing, queues with shuffle sharding by flow
// distinguisher, Reject levels, exempt levels never limited, the
// apiserver_flowcontrol_* metrics. The API server (internal/api) puts it
// in its handler chain as kube-apiserver's WithPriorityAndFairness.
package apf

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/client-go/kubernetes"

	"minik/internal/registry"
)

// ProducerFieldManager is the field manager of the bootstrap writes, as
// kube-apiserver's.
const ProducerFieldManager = "api-priority-and-fairness-config-producer-v1"

// object is what the ensure rules need of a configuration object.
type object interface {
	*flowcontrolv1.FlowSchema | *flowcontrolv1.PriorityLevelConfiguration
	metav1.Object
}

// ops are the API calls and spec rules of one kind.
type ops[T object] struct {
	kind   string
	get    func(ctx context.Context, name string) (T, error)
	list   func(ctx context.Context) ([]T, error)
	create func(ctx context.Context, obj T) error
	update func(ctx context.Context, obj T) error
	delete func(ctx context.Context, name string) error
	// specEqualish tells whether current has the bootstrap spec.
	specEqualish func(bootstrap, current T) bool
	// withSpec returns a copy of current with the bootstrap spec.
	withSpec func(current, bootstrap T) T
	deepCopy func(T) T
}

func flowSchemaOps(cs kubernetes.Interface) ops[*flowcontrolv1.FlowSchema] {
	c := cs.FlowcontrolV1().FlowSchemas()
	opts := metav1.CreateOptions{FieldManager: ProducerFieldManager}
	return ops[*flowcontrolv1.FlowSchema]{
		kind: "flowschema",
		get: func(ctx context.Context, name string) (*flowcontrolv1.FlowSchema, error) {
			return c.Get(ctx, name, metav1.GetOptions{})
		},
		list: func(ctx context.Context) ([]*flowcontrolv1.FlowSchema, error) {
			l, err := c.List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			out := make([]*flowcontrolv1.FlowSchema, len(l.Items))
			for i := range l.Items {
				out[i] = &l.Items[i]
			}
			return out, nil
		},
		create: func(ctx context.Context, obj *flowcontrolv1.FlowSchema) error {
			_, err := c.Create(ctx, obj, opts)
			return err
		},
		update: func(ctx context.Context, obj *flowcontrolv1.FlowSchema) error {
			_, err := c.Update(ctx, obj, metav1.UpdateOptions{FieldManager: ProducerFieldManager})
			return err
		},
		delete: func(ctx context.Context, name string) error {
			return c.Delete(ctx, name, metav1.DeleteOptions{})
		},
		specEqualish: func(boot, current *flowcontrolv1.FlowSchema) bool {
			want := boot.DeepCopy()
			registry.DefaultFlowSchema(want)
			return apiequality.Semantic.DeepEqual(want.Spec, current.Spec)
		},
		withSpec: func(current, boot *flowcontrolv1.FlowSchema) *flowcontrolv1.FlowSchema {
			c := current.DeepCopy()
			c.Spec = *boot.Spec.DeepCopy()
			return c
		},
		deepCopy: (*flowcontrolv1.FlowSchema).DeepCopy,
	}
}

func priorityLevelOps(cs kubernetes.Interface) ops[*flowcontrolv1.PriorityLevelConfiguration] {
	c := cs.FlowcontrolV1().PriorityLevelConfigurations()
	opts := metav1.CreateOptions{FieldManager: ProducerFieldManager}
	return ops[*flowcontrolv1.PriorityLevelConfiguration]{
		kind: "prioritylevelconfiguration",
		get: func(ctx context.Context, name string) (*flowcontrolv1.PriorityLevelConfiguration, error) {
			return c.Get(ctx, name, metav1.GetOptions{})
		},
		list: func(ctx context.Context) ([]*flowcontrolv1.PriorityLevelConfiguration, error) {
			l, err := c.List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			out := make([]*flowcontrolv1.PriorityLevelConfiguration, len(l.Items))
			for i := range l.Items {
				out[i] = &l.Items[i]
			}
			return out, nil
		},
		create: func(ctx context.Context, obj *flowcontrolv1.PriorityLevelConfiguration) error {
			_, err := c.Create(ctx, obj, opts)
			return err
		},
		update: func(ctx context.Context, obj *flowcontrolv1.PriorityLevelConfiguration) error {
			_, err := c.Update(ctx, obj, metav1.UpdateOptions{FieldManager: ProducerFieldManager})
			return err
		},
		delete: func(ctx context.Context, name string) error {
			return c.Delete(ctx, name, metav1.DeleteOptions{})
		},
		specEqualish: func(boot, current *flowcontrolv1.PriorityLevelConfiguration) bool {
			want := boot.DeepCopy()
			registry.DefaultPriorityLevelConfiguration(want)
			if boot.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
				// The exempt level's shares and lendable percent are
				// the administrator's.
				if current.Spec.Exempt == nil {
					return false
				}
				want.Spec.Exempt.NominalConcurrencyShares = current.Spec.Exempt.NominalConcurrencyShares
				want.Spec.Exempt.LendablePercent = current.Spec.Exempt.LendablePercent
			}
			return apiequality.Semantic.DeepEqual(want.Spec, current.Spec)
		},
		withSpec: func(current, boot *flowcontrolv1.PriorityLevelConfiguration) *flowcontrolv1.PriorityLevelConfiguration {
			c := current.DeepCopy()
			c.Spec = *boot.Spec.DeepCopy()
			return c
		},
		deepCopy: (*flowcontrolv1.PriorityLevelConfiguration).DeepCopy,
	}
}

// Ensure runs kube's bootstrap configuration ensurer once, through the
// API: the suggested objects, then the mandatory ones, then the removal
// of objects no longer in the bootstrap configuration.
func Ensure(ctx context.Context, cs kubernetes.Interface) error {
	pls, fss := priorityLevelOps(cs), flowSchemaOps(cs)
	if err := ensureAll(ctx, pls, bootstrap.SuggestedPriorityLevelConfigurations, false); err != nil {
		return fmt.Errorf("ensure suggested APF configuration: %w", err)
	}
	if err := ensureAll(ctx, fss, bootstrap.SuggestedFlowSchemas, false); err != nil {
		return fmt.Errorf("ensure suggested APF configuration: %w", err)
	}
	if err := ensureAll(ctx, pls, bootstrap.MandatoryPriorityLevelConfigurations, true); err != nil {
		return fmt.Errorf("ensure mandatory APF configuration: %w", err)
	}
	if err := ensureAll(ctx, fss, bootstrap.MandatoryFlowSchemas, true); err != nil {
		return fmt.Errorf("ensure mandatory APF configuration: %w", err)
	}
	if err := removeUnwanted(ctx, fss, append(bootstrap.MandatoryFlowSchemas, bootstrap.SuggestedFlowSchemas...)); err != nil {
		return fmt.Errorf("remove unwanted APF configuration: %w", err)
	}
	if err := removeUnwanted(ctx, pls, append(bootstrap.MandatoryPriorityLevelConfigurations, bootstrap.SuggestedPriorityLevelConfigurations...)); err != nil {
		return fmt.Errorf("remove unwanted APF configuration: %w", err)
	}
	return nil
}

func ensureAll[T object](ctx context.Context, o ops[T], boots []T, mandatory bool) error {
	for _, b := range boots {
		if err := ensureOne(ctx, o, b, mandatory); err != nil {
			return err
		}
	}
	return nil
}

// ensureOne is kube's EnsureConfiguration of one bootstrap object.
func ensureOne[T object](ctx context.Context, o ops[T], boot T, mandatory bool) error {
	name := boot.GetName()
	var current T
	for {
		var err error
		current, err = o.get(ctx, name)
		if err == nil {
			break
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("get %s %s: %w", o.kind, name, err)
		}
		// A missing object is always created again.
		err = o.create(ctx, o.deepCopy(boot))
		if err == nil {
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s %s: %w", o.kind, name, err)
		}
	}
	autoUpdate := mandatory || shouldUpdateSpec(current)
	updateAnnotation := annotationDiffers(current, autoUpdate)
	specChanged := autoUpdate && !o.specEqualish(boot, current)
	if !updateAnnotation && !specChanged {
		return nil
	}
	revised := o.deepCopy(current)
	if specChanged {
		revised = o.withSpec(current, boot)
	}
	if updateAnnotation {
		a := revised.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[flowcontrolv1.AutoUpdateAnnotationKey] = strconv.FormatBool(autoUpdate)
		revised.SetAnnotations(a)
	}
	err := o.update(ctx, revised)
	if err == nil || apierrors.IsConflict(err) {
		// A concurrent writer's version is looked at next time.
		return nil
	}
	return fmt.Errorf("update %s %s: %w", o.kind, name, err)
}

// shouldUpdateSpec is kube's: the annotation's boolean, else whether the
// object's spec was never changed (generation 1).
func shouldUpdateSpec(m metav1.Object) bool {
	if v, err := strconv.ParseBool(m.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]); err == nil {
		return v
	}
	return m.GetGeneration() == 1
}

// annotationDiffers tells whether the autoupdate-spec annotation is not
// the boolean want.
func annotationDiffers(m metav1.Object, want bool) bool {
	v, ok := m.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]
	if !ok {
		return true
	}
	cur, err := strconv.ParseBool(v)
	return err != nil || cur != want
}

// removeUnwanted is kube's RemoveUnwantedObjects: it deletes the objects
// annotated autoupdate-spec "true" that are not in boots.
func removeUnwanted[T object](ctx context.Context, o ops[T], boots []T) error {
	wanted := sets.New[string]()
	for _, b := range boots {
		wanted.Insert(b.GetName())
	}
	current, err := o.list(ctx)
	if err != nil {
		return fmt.Errorf("list %ss: %w", o.kind, err)
	}
	var errs []error
	for _, obj := range current {
		if wanted.Has(obj.GetName()) {
			continue
		}
		v, ok := obj.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]
		if !ok {
			continue
		}
		if auto, err := strconv.ParseBool(v); err != nil || !auto {
			continue
		}
		if err := o.delete(ctx, obj.GetName()); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete unwanted %s %s: %w", o.kind, obj.GetName(), err))
		}
	}
	return errors.Join(errs...)
}
