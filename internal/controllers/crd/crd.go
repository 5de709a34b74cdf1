// Package crd is the CustomResourceDefinition controller: kube's
// apiextensions-apiserver naming, establishing and finalizing controllers
// in one. It accepts a definition's names unless another definition of
// the group uses them (NamesAccepted), then establishes it (Established),
// after which the API server lists its resources in discovery. When a
// definition is deleted (the API server adds the
// customresourcecleanup.apiextensions.k8s.io finalizer and the Terminating
// condition), it deletes the custom resources and then the finalizer.
package crd

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"minik/internal/controllers"
	"minik/internal/registry"
)

// Name is the controller's name in --controllers.
const Name = "crd"

const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// Controller reconciles CustomResourceDefinitions.
type Controller struct {
	log      *slog.Logger
	rest     rest.Interface
	informer cache.SharedIndexInformer
	queue    workqueue.TypedRateLimitingInterface[string]
	// builtin are the API server's own resources: a definition naming one
	// is never served, so deleting it deletes no objects.
	builtin map[schema.GroupResource]bool
}

// New builds the controller. It implements controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	c := &Controller{
		log:     cc.Logger,
		rest:    cc.Client.Discovery().RESTClient(),
		builtin: map[schema.GroupResource]bool{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: Name, Clock: cc.Clock},
		),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	for _, r := range registry.All() {
		c.builtin[r.GroupResource()] = true
	}
	c.informer = cache.NewSharedIndexInformer(
		// The controller manager's clientset has no apiextensions client.
		controllers.JSONListWatch[apiextensionsv1.CustomResourceDefinition, apiextensionsv1.CustomResourceDefinitionList](c.rest, crdPath), &apiextensionsv1.CustomResourceDefinition{}, 0, cache.Indexers{})
	enqueue := func(obj interface{}) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
	}
	if _, err := c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj interface{}) { enqueue(obj) },
		DeleteFunc: enqueue,
	}); err != nil {
		return nil, fmt.Errorf("crd: %w", err)
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx is done, and returns
// once they and the controller's informer have stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer c.queue.ShutDown()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.informer.RunWithContext(ctx)
	}()
	defer func() { <-done }()
	if !cache.WaitForCacheSync(ctx.Done(), c.informer.HasSynced) {
		return
	}
	controllers.Workers[string]{
		Queue:     c.queue,
		Reconcile: c.sync,
		OnError: func(key string, err error) {
			c.log.Info("custom resource definition sync failed, will retry", "crd", key, "err", err)
		},
	}.Run(ctx, workers)
}

func (c *Controller) sync(ctx context.Context, name string) error {
	obj, exists, err := c.informer.GetStore().GetByKey(name)
	if err != nil || !exists {
		return err
	}
	crd := obj.(*apiextensionsv1.CustomResourceDefinition).DeepCopy()
	if crd.DeletionTimestamp != nil {
		return c.finalize(ctx, crd)
	}
	names, namesAccepted, established := c.calculateNamesAndConditions(crd)
	if namesAccepted.Status == apiextensionsv1.ConditionTrue && apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.NamesAccepted) &&
		!apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
		// The establishing controller's step: the API server serves the
		// accepted names already.
		established = apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue,
			Reason: "InitialNamesAccepted", Message: "the initial names have been accepted",
		}
	}
	updated := crd.DeepCopy()
	updated.Status.AcceptedNames = names
	apihelpers.SetCRDCondition(updated, namesAccepted)
	apihelpers.SetCRDCondition(updated, established)
	if equality.Semantic.DeepEqual(updated.Status, crd.Status) {
		return nil
	}
	return c.updateStatus(ctx, updated)
}

// calculateNamesAndConditions is kube's naming controller: each requested
// name is accepted unless another definition of the group has accepted
// it; Established stays false ("Installing") until names are accepted.
func (c *Controller) calculateNamesAndConditions(in *apiextensionsv1.CustomResourceDefinition) (apiextensionsv1.CustomResourceDefinitionNames, apiextensionsv1.CustomResourceDefinitionCondition, apiextensionsv1.CustomResourceDefinitionCondition) {
	resources, kinds := map[string]bool{}, map[string]bool{}
	for _, obj := range c.informer.GetStore().List() {
		other := obj.(*apiextensionsv1.CustomResourceDefinition)
		if other.Name == in.Name || other.Spec.Group != in.Spec.Group {
			continue
		}
		n := other.Status.AcceptedNames
		for _, s := range append([]string{n.Plural, n.Singular}, n.ShortNames...) {
			resources[s] = true
		}
		kinds[n.Kind], kinds[n.ListKind] = true, true
	}
	cond := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionUnknown}
	conflict := func(reason string, err error) {
		cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionFalse, reason, err.Error()
	}
	requested, accepted := in.Spec.Names, in.Status.AcceptedNames
	names := accepted
	if err := acceptable(requested.Plural, accepted.Plural, resources); err != nil {
		conflict("PluralConflict", err)
	} else {
		names.Plural = requested.Plural
	}
	if err := acceptable(requested.Singular, accepted.Singular, resources); err != nil {
		conflict("SingularConflict", err)
	} else {
		names.Singular = requested.Singular
	}
	if !slices.Equal(requested.ShortNames, accepted.ShortNames) {
		var errs []string
		for _, s := range requested.ShortNames {
			if slices.Contains(accepted.ShortNames, s) {
				continue
			}
			if resources[s] {
				errs = append(errs, fmt.Sprintf("%q is already in use", s))
			}
		}
		if len(errs) > 0 {
			conflict("ShortNamesConflict", fmt.Errorf("%s", errs[0]))
		} else {
			names.ShortNames = requested.ShortNames
		}
	}
	if err := acceptable(requested.Kind, accepted.Kind, kinds); err != nil {
		conflict("KindConflict", err)
	} else {
		names.Kind = requested.Kind
	}
	if err := acceptable(requested.ListKind, accepted.ListKind, kinds); err != nil {
		conflict("ListKindConflict", err)
	} else {
		names.ListKind = requested.ListKind
	}
	names.Categories = requested.Categories
	if cond.Status == apiextensionsv1.ConditionUnknown {
		cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found"
	}
	established := apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse, Reason: "NotAccepted", Message: "not all names are accepted",
	}
	if old := apihelpers.FindCRDCondition(in, apiextensionsv1.Established); old != nil {
		established = *old
	}
	if established.Status != apiextensionsv1.ConditionTrue && cond.Status == apiextensionsv1.ConditionTrue {
		established = apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse, Reason: "Installing", Message: "the initial names have been accepted",
		}
	}
	return names, cond, established
}

// acceptable is kube's equalToAcceptedOrFresh.
func acceptable(requested, accepted string, used map[string]bool) error {
	if requested == accepted || !used[requested] {
		return nil
	}
	return fmt.Errorf("%q is already in use", requested)
}

// finalize deletes a deleted definition's custom resources, then its
// cleanup finalizer, reporting progress in the Terminating condition as
// kube's finalizing controller does.
func (c *Controller) finalize(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	if !apihelpers.CRDHasFinalizer(crd, apiextensionsv1.CustomResourceCleanupFinalizer) {
		return nil
	}
	gr := schema.GroupResource{Group: crd.Spec.Group, Resource: crd.Spec.Names.Plural}
	var cond apiextensionsv1.CustomResourceDefinitionCondition
	switch {
	case c.builtin[gr]:
		cond = apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionFalse,
			Reason: "OverlappingBuiltInResource", Message: "instances overlap with built-in resources in storage",
		}
	case apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established):
		progress := crd.DeepCopy()
		apihelpers.SetCRDCondition(progress, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
			Reason: "InstanceDeletionInProgress", Message: "CustomResource deletion is in progress",
		})
		if !equality.Semantic.DeepEqual(progress.Status, crd.Status) {
			if err := c.updateStatus(ctx, progress); err != nil {
				return err
			}
		}
		var err error
		cond, err = c.deleteInstances(ctx, crd)
		if err != nil {
			failed := crd.DeepCopy()
			apihelpers.SetCRDCondition(failed, cond)
			if uerr := c.updateStatus(ctx, failed); uerr != nil && !apierrors.IsNotFound(uerr) {
				return uerr
			}
			return err
		}
	default:
		cond = apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionFalse,
			Reason: "NeverEstablished", Message: "resource was never established",
		}
	}
	done := crd.DeepCopy()
	apihelpers.SetCRDCondition(done, cond)
	if err := c.updateStatus(ctx, done); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	apihelpers.CRDRemoveFinalizer(done, apiextensionsv1.CustomResourceCleanupFinalizer)
	patch, err := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{"finalizers": done.Finalizers}})
	if err != nil {
		return err
	}
	err = c.rest.Patch(types.MergePatchType).AbsPath(crdPath, crd.Name).SetHeader("Accept", "application/json").Body(patch).Do(ctx).Error()
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// instanceCheckInterval and instanceCheckTimeout pace the wait for the
// deleted custom resources to go (finalizers may hold them).
const (
	instanceCheckInterval = 200 * time.Millisecond
	instanceCheckTimeout  = time.Minute
)

// deleteInstances deletes every custom resource of a definition,
// namespace by namespace, and waits until none is left.
func (c *Controller) deleteInstances(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) (apiextensionsv1.CustomResourceDefinitionCondition, error) {
	failed := func(format string, err error) (apiextensionsv1.CustomResourceDefinitionCondition, error) {
		return apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
			Reason: "InstanceDeletionFailed", Message: fmt.Sprintf(format, err),
		}, err
	}
	version, err := apihelpers.GetCRDStorageVersion(crd)
	if err != nil {
		return failed("could not find storage version: %v", err)
	}
	base := "/apis/" + crd.Spec.Group + "/" + version
	plural := crd.Spec.Names.Plural
	items, err := c.listInstances(ctx, base+"/"+plural)
	if err != nil {
		return failed("could not list instances: %v", err)
	}
	namespaces := map[string]bool{}
	for _, it := range items {
		namespaces[it.Namespace] = true
	}
	for ns := range namespaces {
		p := base + "/" + plural
		if ns != "" {
			p = base + "/namespaces/" + ns + "/" + plural
		}
		body := []byte(`{"kind":"DeleteOptions","apiVersion":"meta.k8s.io/v1"}`)
		err := c.rest.Delete().AbsPath(p).SetHeader("Accept", "application/json").SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
		if err != nil && !apierrors.IsNotFound(err) {
			return failed("could not issue all deletes: %v", err)
		}
	}
	deadline := time.Now().Add(instanceCheckTimeout)
	for {
		left, err := c.listInstances(ctx, base+"/"+plural)
		if err != nil {
			return failed("could not confirm zero CustomResources remaining: %v", err)
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return failed("could not confirm zero CustomResources remaining: %v", fmt.Errorf("%d remaining", len(left)))
		}
		select {
		case <-ctx.Done():
			return failed("could not confirm zero CustomResources remaining: %v", ctx.Err())
		case <-time.After(instanceCheckInterval):
		}
	}
	return apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionFalse,
		Reason: "InstanceDeletionCompleted", Message: "removed all instances",
	}, nil
}

func (c *Controller) listInstances(ctx context.Context, p string) ([]metav1.ObjectMeta, error) {
	body, err := c.rest.Get().AbsPath(p).SetHeader("Accept", "application/json").Do(ctx).Raw()
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	out := make([]metav1.ObjectMeta, 0, len(list.Items))
	for _, it := range list.Items {
		out = append(out, it.Metadata)
	}
	return out, nil
}

func (c *Controller) updateStatus(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	crd.APIVersion, crd.Kind = apiextensionsv1.SchemeGroupVersion.String(), "CustomResourceDefinition"
	body, err := json.Marshal(crd)
	if err != nil {
		return err
	}
	return c.rest.Put().AbsPath(crdPath, crd.Name, "status").SetHeader("Accept", "application/json").
		SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
}
