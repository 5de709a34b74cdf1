package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// RefManager claims objects for one controller during one sync, as kube's
// ControllerRefManager does: an object the controller controls and
// matches is claimed; one it controls but no longer matches is released
// (its controller reference removed) unless the controller is being
// deleted; an orphan it matches, in its namespace and not being deleted, is
// adopted (given a controller reference) and claimed. Objects controlled
// by another owner are never touched. A RefManager serves one sync: the
// CanAdopt check runs at most once.
type RefManager[T metav1.Object] struct {
	// Controller is the owner, of kind Kind.
	Controller metav1.Object
	Kind       schema.GroupVersionKind
	// Match tells whether the controller selects obj: its label selector
	// and any further condition (a StatefulSet's pod names).
	Match func(obj T) bool
	// CanAdopt, called once before the first adoption, confirms with a
	// live read that the controller still exists and is not being
	// deleted: the cache may be behind, and a controller being deleted
	// must not adopt. Nil means it may.
	CanAdopt func(ctx context.Context) error
	// Patch applies a strategic merge patch to obj.
	Patch func(ctx context.Context, obj T, patch []byte) error

	once        sync.Once
	canAdoptErr error
}

// Claim returns the objects the controller controls after adopting and
// releasing as described on RefManager, and every adoption or release
// error, aggregated. An object that is gone, or that changed so that the
// release no longer applies, is skipped silently. objs come from a lister
// and are returned unchanged: callers copy before writing them.
func (m *RefManager[T]) Claim(ctx context.Context, objs []T) ([]T, error) {
	var claimed []T
	var errs []error
	for _, obj := range objs {
		ok, err := m.claim(ctx, obj)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			claimed = append(claimed, obj)
		}
	}
	return claimed, utilerrors.NewAggregate(errs)
}

func (m *RefManager[T]) claim(ctx context.Context, obj T) (bool, error) {
	owner := m.Controller
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		if ref.UID != owner.GetUID() {
			return false, nil
		}
		if m.Match(obj) {
			return true, nil
		}
		if owner.GetDeletionTimestamp() != nil {
			return false, nil
		}
		return false, m.release(ctx, obj)
	}
	if owner.GetDeletionTimestamp() != nil || !m.Match(obj) || obj.GetDeletionTimestamp() != nil ||
		owner.GetNamespace() != "" && owner.GetNamespace() != obj.GetNamespace() {
		return false, nil
	}
	if err := m.adopt(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// ownerPatch is a strategic merge patch of an object's owner references;
// the object's UID makes it fail on an object recreated under the name.
func ownerPatch(obj metav1.Object, refs any) []byte {
	data, _ := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": refs, "uid": obj.GetUID()}})
	return data
}

func (m *RefManager[T]) adopt(ctx context.Context, obj T) error {
	m.once.Do(func() {
		if m.CanAdopt != nil {
			m.canAdoptErr = m.CanAdopt(ctx)
		}
	})
	what := fmt.Sprintf("%s %s/%s", m.Kind.Kind, m.Controller.GetNamespace(), m.Controller.GetName())
	if m.canAdoptErr != nil {
		return fmt.Errorf("%s can't adopt %s/%s: %w", what, obj.GetNamespace(), obj.GetName(), m.canAdoptErr)
	}
	ref := metav1.NewControllerRef(m.Controller, m.Kind)
	if err := m.Patch(ctx, obj, ownerPatch(obj, []metav1.OwnerReference{*ref})); err != nil {
		return fmt.Errorf("%s adopt %s/%s: %w", what, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// release removes the controller's reference. NotFound: the object is
// gone. Invalid: it was recreated (its UID differs) or lost the reference
// already. Either way there is nothing to release.
func (m *RefManager[T]) release(ctx context.Context, obj T) error {
	err := m.Patch(ctx, obj, ownerPatch(obj, []map[string]any{{"$patch": "delete", "uid": m.Controller.GetUID()}}))
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) {
		return fmt.Errorf("%s %s/%s release %s/%s: %w", m.Kind.Kind, m.Controller.GetNamespace(), m.Controller.GetName(), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// RecheckDeletionTimestamp returns a RefManager's CanAdopt from a live
// read of the controller, as kube's RecheckDeletionTimestamp: it fails
// when the controller is gone, was recreated (another UID) or is being
// deleted.
func RecheckDeletionTimestamp(controller metav1.Object, get func(ctx context.Context) (metav1.Object, error)) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		fresh, err := get(ctx)
		if err != nil {
			return err
		}
		if fresh.GetUID() != controller.GetUID() {
			return fmt.Errorf("original %s/%s is gone: got uid %v, wanted %v", controller.GetNamespace(), controller.GetName(), fresh.GetUID(), controller.GetUID())
		}
		if fresh.GetDeletionTimestamp() != nil {
			return fmt.Errorf("%s/%s has just been deleted at %v", controller.GetNamespace(), controller.GetName(), fresh.GetDeletionTimestamp())
		}
		return nil
	}
}
