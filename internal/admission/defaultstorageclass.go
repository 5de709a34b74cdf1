package admission

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	storagelisters "k8s.io/client-go/listers/storage/v1"
)

// DefaultStorageClass gives a new PersistentVolumeClaim that names no
// class the default StorageClass, as kube's plugin of that name does. A
// claim that says storageClassName "" (or has the beta class annotation)
// keeps what it says; with no default class the claim is left without
// one. Should several classes be marked default, the newest wins (then
// the first by name), as in kube since 1.26.
type DefaultStorageClass struct {
	// Lister reads StorageClasses from an informer cache. Required.
	Lister storagelisters.StorageClassLister
}

// Name implements Mutator.
func (*DefaultStorageClass) Name() string { return "DefaultStorageClass" }

// Admit implements Mutator.
func (d *DefaultStorageClass) Admit(_ context.Context, a *Attributes) error {
	if a.Operation != Create || a.Resource.Group != "" || a.Resource.Resource != "persistentvolumeclaims" || a.Subresource != "" {
		return nil
	}
	pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok || pvc.Spec.StorageClassName != nil {
		return nil
	}
	if _, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return nil
	}
	def, err := DefaultClass(d.Lister)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("failed to get default storage class: %v", err))
	}
	if def != nil {
		pvc.Spec.StorageClassName = new(def.Name)
	}
	return nil
}

// DefaultClass returns the default StorageClass, or nil when no class is
// marked default: the newest of those marked, then the first by name.
func DefaultClass(lister storagelisters.StorageClassLister) (*storagev1.StorageClass, error) {
	list, err := lister.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var defaults []*storagev1.StorageClass
	for _, sc := range list {
		if sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" ||
			sc.Annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true" {
			defaults = append(defaults, sc)
		}
	}
	if len(defaults) == 0 {
		return nil, nil
	}
	sort.Slice(defaults, func(i, j int) bool {
		a, b := defaults[i], defaults[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.After(b.CreationTimestamp.Time)
		}
		return a.Name < b.Name
	})
	return defaults[0], nil
}
