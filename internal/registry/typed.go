package registry

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The Strategy fields take runtime.Object; the per-kind code is written
// against the typed object. These adapters bridge the two. An object of the
// wrong type is ignored by the mutating adapters and reported as an internal
// error by the validating ones: it means the generic layer decoded a body
// into the wrong Go type, which no client can fix.

func defaulter[T runtime.Object](f func(T)) func(runtime.Object) {
	return func(obj runtime.Object) {
		if t, ok := obj.(T); ok {
			f(t)
		}
	}
}

func creator[T runtime.Object](f func(T)) func(context.Context, runtime.Object) {
	return func(_ context.Context, obj runtime.Object) {
		if t, ok := obj.(T); ok {
			f(t)
		}
	}
}

func updater[T runtime.Object](f func(obj, old T)) func(context.Context, runtime.Object, runtime.Object) {
	return func(_ context.Context, obj, old runtime.Object) {
		t, ok := obj.(T)
		o, ok2 := old.(T)
		if ok && ok2 {
			f(t, o)
		}
	}
}

func validator[T runtime.Object](f func(T) field.ErrorList) func(context.Context, runtime.Object) field.ErrorList {
	return func(_ context.Context, obj runtime.Object) field.ErrorList {
		t, ok := obj.(T)
		if !ok {
			return wrongType[T](obj)
		}
		return f(t)
	}
}

func updateValidator[T runtime.Object](f func(obj, old T) field.ErrorList) func(context.Context, runtime.Object, runtime.Object) field.ErrorList {
	return func(_ context.Context, obj, old runtime.Object) field.ErrorList {
		t, ok := obj.(T)
		if !ok {
			return wrongType[T](obj)
		}
		o, ok := old.(T)
		if !ok {
			return wrongType[T](old)
		}
		return f(t, o)
	}
}

func selectable[T runtime.Object](f func(T) fields.Set) func(runtime.Object) fields.Set {
	return func(obj runtime.Object) fields.Set {
		if t, ok := obj.(T); ok {
			return f(t)
		}
		return fields.Set{}
	}
}

func wrongType[T runtime.Object](obj runtime.Object) field.ErrorList {
	var want T
	return field.ErrorList{field.InternalError(nil, fmt.Errorf("unexpected object type %T, want %T", obj, want))}
}

// withGenericChecks returns r's strategy with the metadata checks
// kube-apiserver's generic registry runs for every resource, whatever its
// own validation, scoped by r.Namespaced:
//
//   - on create, only when the type's validation found nothing, the name is
//     checked as a path segment, the namespace against the scope, and labels,
//     annotations, owner references and finalizers for syntax (so that the
//     type's more specific messages win);
//   - on update, the same checks plus the metadata update rules (name,
//     namespace, uid and creationTimestamp immutable, resourceVersion set,
//     generation not decremented) come first, followed by the type's errors.
//
// Identical messages may then appear twice in the list, as they do in
// kube-apiserver; apierrors.NewInvalid prints each message once.
func withGenericChecks(r *Resource) Strategy {
	s, namespaced := r.Strategy, r.Namespaced
	validate := s.Validate
	s.Validate = func(ctx context.Context, obj runtime.Object) field.ErrorList {
		if validate != nil {
			if errs := validate(ctx, obj); len(errs) > 0 {
				return errs
			}
		}
		accessor, err := meta.Accessor(obj)
		if err != nil {
			return field.ErrorList{field.InternalError(metadataPath, err)}
		}
		return apivalidation.ValidateObjectMetaAccessor(accessor, namespaced, pathSegmentName, metadataPath)
	}
	validateUpdate := s.ValidateUpdate
	s.ValidateUpdate = func(ctx context.Context, obj, old runtime.Object) field.ErrorList {
		accessor, err := meta.Accessor(obj)
		if err != nil {
			return field.ErrorList{field.InternalError(metadataPath, err)}
		}
		oldAccessor, err := meta.Accessor(old)
		if err != nil {
			return field.ErrorList{field.InternalError(metadataPath, err)}
		}
		errs := apivalidation.ValidateObjectMetaAccessor(accessor, namespaced, pathSegmentName, metadataPath)
		errs = append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(accessor, oldAccessor, metadataPath)...)
		if validateUpdate != nil {
			errs = append(errs, validateUpdate(ctx, obj, old)...)
		}
		return errs
	}
	if !namespaced {
		s.PrepareForCreate = clearingNamespace(s.PrepareForCreate)
		s.PrepareForUpdate = clearingNamespaceOnUpdate(s.PrepareForUpdate)
	}
	return s
}

// clearingNamespace drops metadata.namespace from cluster-scoped objects
// before the type's own preparation, as kube-apiserver does, so that a
// manifest carrying a stray namespace is accepted.
func clearingNamespace(next func(context.Context, runtime.Object)) func(context.Context, runtime.Object) {
	return func(ctx context.Context, obj runtime.Object) {
		if accessor, err := meta.Accessor(obj); err == nil {
			accessor.SetNamespace("")
		}
		if next != nil {
			next(ctx, obj)
		}
	}
}

func clearingNamespaceOnUpdate(next func(context.Context, runtime.Object, runtime.Object)) func(context.Context, runtime.Object, runtime.Object) {
	return func(ctx context.Context, obj, old runtime.Object) {
		if accessor, err := meta.Accessor(obj); err == nil {
			accessor.SetNamespace("")
		}
		if next != nil {
			next(ctx, obj, old)
		}
	}
}
