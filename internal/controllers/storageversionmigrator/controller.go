// Package storageversionmigrator is kube-controller-manager's storage
// version migrator (storage-version-migrator-controller, on by default
// since kube 1.37): a StorageVersionMigration names a resource whose
// objects are all written again, with a no-op update, so that storage
// holds each at the current storage version.
//
// One controller runs kube's three loops over each migration, keyed by
// its name: the migration runner starts the oldest waiting migration of
// a resource (Running True, and the CustomResourceDefinition's
// StorageMigrating condition for a custom resource) once no other one of
// that resource is running; the resource version step records the
// resource's current list resourceVersion in status.resourceVersion;
// the migration patches every object not changed since then (a merge
// patch of its apiVersion, kind and resourceVersion, as field manager
// storage-version-migrator-controller: a conflict or a deletion means
// the object was written or removed meanwhile) and sets Succeeded, or
// Failed with kube's messages; the runner then turns Running False and,
// for a custom resource, records the migration in the definition (its
// status.storedVersions reduced to the storage version when the
// definition did not change meanwhile, as kube does whatever the
// outcome). Difference from kube: the
// objects are listed from the API at the migration's start instead of
// the garbage collector's cache.
package storageversionmigrator

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	svmlisters "k8s.io/client-go/listers/storagemigration/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
)

// Name is the controller's name in --controllers, as
// kube-controller-manager's; it is also the field manager of its patches.
const Name = "storage-version-migrator-controller"

// RunnerFieldManager is the field manager of the runner's writes to a
// CustomResourceDefinition's status, as kube's.
const RunnerFieldManager = "migration-runner-controller"

// kube's reasons and messages.
const (
	reasonRunning   = "MigrationRunning"
	reasonSucceeded = "StorageVersionMigrationSucceeded"
	reasonFailed    = "StorageVersionMigrationFailed"
	reasonCompleted = "MigrationCompleted"
	msgCompleted    = "Migration completed"
	// discoveryGrace is how long a resource missing from discovery is
	// waited for (a CRD just created) before the migration fails.
	discoveryGrace = time.Minute
)

// verbsRequired are the verbs a resource needs to be migrated.
var verbsRequired = []string{"update", "patch", "list"}

// crdPath is the CustomResourceDefinitions' collection.
const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// Controller is the storage version migrator.
type Controller struct {
	client kubernetes.Interface
	meta   metadata.Interface
	rest   rest.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
	clock  clock.PassiveClock
	log    *slog.Logger

	lister svmlisters.StorageVersionMigrationLister
	synced cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
}

// New builds the controller on cc's shared StorageVersionMigration
// informer. It implements controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	disco := cc.Client.Discovery()
	c := &Controller{
		client: cc.Client,
		meta:   cc.Metadata,
		rest:   disco.RESTClient(),
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)),
		clock:  cc.Clock,
		log:    cc.Logger,
		queue:  controllers.NewQueue(Name, cc.Clock, workqueue.DefaultTypedControllerRateLimiter[string]()),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.clock == nil {
		c.clock = clock.RealClock{}
	}
	inf := cc.Informers.Storagemigration().V1().StorageVersionMigrations()
	enqueue := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		m, ok := obj.(*svmv1.StorageVersionMigration)
		if !ok {
			return
		}
		c.queue.Add(m.Name)
		// A migration that ends or goes lets the next of its resource
		// start.
		if isTerminal(m) || m.DeletionTimestamp != nil {
			c.enqueueResource(m.Spec.Resource)
		}
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}); err != nil {
		return nil, fmt.Errorf("%s: watch storageversionmigrations: %w", Name, err)
	}
	c.lister, c.synced = inf.Lister(), inf.Informer().HasSynced
	return c, nil
}

// Run reconciles with workers goroutines until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllers.Workers[string]{
		Synced:    []cache.InformerSynced{c.synced},
		Queue:     c.queue,
		Reconcile: c.sync,
		OnError: func(key string, err error) {
			c.log.Info("sync failed, will retry", "storageversionmigration", key, "err", err)
		},
	}.Run(ctx, workers)
}

func (c *Controller) enqueueResource(gr metav1.GroupResource) {
	all, _ := c.lister.List(labels.Everything())
	for _, m := range all {
		if m.Spec.Resource == gr {
			c.queue.Add(m.Name)
		}
	}
}

func isTerminal(m *svmv1.StorageVersionMigration) bool {
	return meta.IsStatusConditionTrue(m.Status.Conditions, string(svmv1.MigrationSucceeded)) ||
		meta.IsStatusConditionTrue(m.Status.Conditions, string(svmv1.MigrationFailed))
}

func isRunning(m *svmv1.StorageVersionMigration) bool {
	return meta.IsStatusConditionTrue(m.Status.Conditions, string(svmv1.MigrationRunning))
}

// runningMessage is kube's migrationRunningMessage.
func runningMessage(toPatch, total *int, transient error) string {
	msg := "The migration is running"
	if toPatch != nil && total != nil && *total > 0 {
		if *toPatch > 0 {
			msg += fmt.Sprintf(", %d/%d objects not yet migrated", *toPatch, *total)
		} else {
			msg += fmt.Sprintf(", %d objects verified migrated", *total)
		}
	}
	if transient != nil {
		msg += fmt.Sprintf("; transient error: %s", transient.Error())
	}
	return msg
}

// sync moves one migration a step on.
func (c *Controller) sync(ctx context.Context, name string) error {
	cur, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get storageversionmigration %s: %w", name, err)
	}
	m := cur.DeepCopy()
	switch {
	case isTerminal(m):
		if isRunning(m) {
			return c.cleanup(ctx, m)
		}
		return nil
	case !isRunning(m):
		return c.promote(ctx, m)
	case m.Status.ResourceVersion == "":
		return c.recordResourceVersion(ctx, m)
	default:
		return c.migrate(ctx, m)
	}
}

func (c *Controller) updateStatus(ctx context.Context, m *svmv1.StorageVersionMigration) error {
	if _, err := c.client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, m, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status of storageversionmigration %s: %w", m.Name, err)
	}
	return nil
}

// promote starts m if it is the oldest waiting migration of its
// resource and none of that resource runs, as kube's runner does.
func (c *Controller) promote(ctx context.Context, m *svmv1.StorageVersionMigration) error {
	all, err := c.lister.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list storageversionmigrations: %w", err)
	}
	for _, o := range all {
		if o.Spec.Resource != m.Spec.Resource || o.Name == m.Name {
			continue
		}
		if isRunning(o) {
			return nil
		}
		if !isTerminal(o) && compare(o, m) < 0 {
			return nil
		}
	}
	crd, err := c.crdFor(ctx, m.Spec.Resource)
	if err != nil {
		return err
	}
	if crd != nil {
		cond := map[string]any{"type": string(apiextensionsv1.StorageMigrating), "status": "True", "lastTransitionTime": metav1.Now(),
			"reason": reasonRunning, "message": fmt.Sprintf("Migration %s is running", m.Name), "observedGeneration": crd.Generation}
		if err := c.applyCRDStatus(ctx, crd, map[string]any{"conditions": []any{cond}}); err != nil {
			return err
		}
	}
	meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: string(svmv1.MigrationRunning), Status: metav1.ConditionTrue,
		Reason: reasonRunning, Message: runningMessage(nil, nil, nil)})
	return c.updateStatus(ctx, m)
}

func compare(a, b *svmv1.StorageVersionMigration) int {
	if i := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); i != 0 {
		return i
	}
	return strings.Compare(a.Name, b.Name)
}

// fail sets Failed with kube's message, once.
func (c *Controller) fail(ctx context.Context, m *svmv1.StorageVersionMigration, message string) error {
	if meta.FindStatusCondition(m.Status.Conditions, string(svmv1.MigrationFailed)) != nil {
		return nil
	}
	meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: string(svmv1.MigrationFailed), Status: metav1.ConditionTrue,
		Reason: reasonFailed, Message: message})
	return c.updateStatus(ctx, m)
}

// resourceFor finds the served version of a group resource; ok is false
// when discovery does not list it.
func (c *Controller) resourceFor(gr metav1.GroupResource) (gvr schema.GroupVersionResource, ok bool, err error) {
	gvrs, err := c.mapper.ResourcesFor(schema.GroupVersionResource{Group: gr.Group, Resource: gr.Resource})
	if meta.IsNoMatchError(err) {
		return gvr, false, nil
	}
	if err != nil {
		return gvr, false, fmt.Errorf("find resource %s: %w", gr.String(), err)
	}
	for _, g := range gvrs {
		if g.Group == gr.Group && g.Resource == gr.Resource {
			return g, true, nil
		}
	}
	return gvr, false, nil
}

// recordResourceVersion is kube's resource version controller: the
// resource's current list resourceVersion goes to status.
func (c *Controller) recordResourceVersion(ctx context.Context, m *svmv1.StorageVersionMigration) error {
	gvr, ok, err := c.resourceFor(m.Spec.Resource)
	if err != nil {
		return err
	}
	if !ok {
		if wait := m.CreationTimestamp.Add(discoveryGrace).Sub(c.clock.Now()); wait > 0 {
			c.mapper.Reset()
			return &controllers.RequeueAfter{Delay: min(wait, 2*time.Second)}
		}
		return c.fail(ctx, m, "resource does not exist in discovery")
	}
	list, err := c.client.Discovery().ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("discover %s: %w", gvr.GroupVersion(), err)
	}
	migratable := false
	if list != nil {
		for _, r := range list.APIResources {
			if r.Name == gvr.Resource {
				migratable = hasAll(r.Verbs, verbsRequired)
			}
		}
	}
	if !migratable {
		return c.fail(ctx, m, fmt.Sprintf("resource %q does not support discovery operations: %v", gvr.String(), verbsRequired))
	}
	l, err := c.meta.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return fmt.Errorf("error getting latest resourceVersion for %s: %w", gvr.String(), err)
	}
	rv := l.GetResourceVersion()
	if _, err := resourceversion.CompareResourceVersion(rv, rv); err != nil {
		return c.fail(ctx, m, fmt.Sprintf("latest resourceVersion for %s is not valid: %v", gvr.String(), err))
	}
	m.Status.ResourceVersion = rv
	return c.updateStatus(ctx, m)
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// migrate writes every object not changed since the recorded
// resourceVersion again, then marks the migration succeeded; a write
// failing otherwise than by a conflict or a deletion fails it.
func (c *Controller) migrate(ctx context.Context, m *svmv1.StorageVersionMigration) error {
	gvr, ok, err := c.resourceFor(m.Spec.Resource)
	if err != nil {
		return err
	}
	if !ok {
		return c.fail(ctx, m, "migration encountered unhandled error: unable to obtain GVR from discovery")
	}
	gvk, err := c.mapper.KindFor(gvr)
	if err != nil {
		return c.fail(ctx, m, fmt.Sprintf("migration encountered unhandled error: %s", err))
	}
	listRV := m.Status.ResourceVersion
	objs, err := c.meta.Resource(gvr).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list %s: %w", gvr.String(), err)
	}
	total := len(objs.Items)
	var candidates []metav1.PartialObjectMetadata
	for _, o := range objs.Items {
		cmp, err := resourceversion.CompareResourceVersion(o.ResourceVersion, listRV)
		if err != nil {
			return c.fail(ctx, m, fmt.Sprintf("migration encountered unhandled error: %s", err))
		}
		if cmp <= 0 {
			candidates = append(candidates, o)
		}
	}
	toPatch := len(candidates)
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	for _, o := range candidates {
		body, err := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"resourceVersion": o.ResourceVersion}})
		if err != nil {
			return fmt.Errorf("patch body of %s %s: %w", gvr.Resource, o.Name, err)
		}
		_, err = c.meta.Resource(gvr).Namespace(o.Namespace).Patch(ctx, o.Name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: Name})
		switch {
		case err == nil, apierrors.IsConflict(err), apierrors.IsNotFound(err):
			// Written now, or written or removed meanwhile.
			toPatch--
		case retriable(err):
			meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: string(svmv1.MigrationRunning), Status: metav1.ConditionTrue,
				Reason: reasonRunning, Message: runningMessage(&toPatch, &total, err)})
			_ = c.updateStatus(ctx, m)
			return fmt.Errorf("migrate %s %s/%s: %w", gvr.Resource, o.Namespace, o.Name, err)
		default:
			meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: string(svmv1.MigrationRunning), Status: metav1.ConditionTrue,
				Reason: reasonRunning, Message: runningMessage(&toPatch, &total, nil)})
			meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: string(svmv1.MigrationFailed), Status: metav1.ConditionTrue,
				Reason: reasonFailed, Message: fmt.Sprintf("%d/%d not yet migrated. migration encountered unhandled error: %s", toPatch, total, err)})
			return c.updateStatus(ctx, m)
		}
	}
	meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: string(svmv1.MigrationRunning), Status: metav1.ConditionTrue,
		Reason: reasonRunning, Message: runningMessage(&toPatch, &total, nil)})
	meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: string(svmv1.MigrationSucceeded), Status: metav1.ConditionTrue,
		Reason: reasonSucceeded, Message: msgCompleted})
	return c.updateStatus(ctx, m)
}

// retriable is kube's isRetriableError.
func retriable(err error) bool {
	return utilnet.IsConnectionReset(err) || utilnet.IsHTTP2ConnectionLost(err) || utilnet.IsProbableEOF(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsInternalError(err) || apierrors.IsTimeout(err)
}

// cleanup ends a finished migration: Running turns False, and a custom
// resource's definition records the outcome.
func (c *Controller) cleanup(ctx context.Context, m *svmv1.StorageVersionMigration) error {
	crd, err := c.crdFor(ctx, m.Spec.Resource)
	if err != nil {
		return err
	}
	if crd != nil {
		if err := c.finishCRD(ctx, crd, meta.IsStatusConditionTrue(m.Status.Conditions, string(svmv1.MigrationSucceeded))); err != nil {
			return err
		}
	}
	meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: string(svmv1.MigrationRunning), Status: metav1.ConditionFalse,
		Reason: reasonCompleted, Message: msgCompleted, ObservedGeneration: m.Generation})
	return c.updateStatus(ctx, m)
}

// crdFor returns the CustomResourceDefinition of a group resource, or
// nil for a built-in one.
func (c *Controller) crdFor(ctx context.Context, gr metav1.GroupResource) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	err := c.rest.Get().AbsPath(crdPath, gr.Resource+"."+gr.Group).Do(ctx).Into(crd)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get customresourcedefinition %s.%s: %w", gr.Resource, gr.Group, err)
	}
	return crd, nil
}

// applyCRDStatus applies status fields to a definition as the runner,
// guarded by the resourceVersion read, as kube does.
func (c *Controller) applyCRDStatus(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, status map[string]any) error {
	body, err := json.Marshal(map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": crd.Name, "resourceVersion": crd.ResourceVersion},
		"status":   status,
	})
	if err != nil {
		return fmt.Errorf("status of customresourcedefinition %s: %w", crd.Name, err)
	}
	err = c.rest.Patch(types.ApplyPatchType).AbsPath(crdPath, crd.Name, "status").
		Param("fieldManager", RunnerFieldManager).Param("force", "true").Body(body).Do(ctx).Error()
	if err != nil {
		return fmt.Errorf("apply status of customresourcedefinition %s: %w", crd.Name, err)
	}
	return nil
}

// finishCRD is kube's finishCRDMigration: StorageMigrating turns False
// and, after a success on an unchanged definition, the stored versions
// are the storage version alone.
func (c *Controller) finishCRD(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, success bool) error {
	var migrating *apiextensionsv1.CustomResourceDefinitionCondition
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == apiextensionsv1.StorageMigrating {
			migrating = &crd.Status.Conditions[i]
		}
	}
	canUpdate := migrating != nil && migrating.ObservedGeneration == crd.Generation
	reason, msg := "MigrationFailed", "The migration has failed"
	if success {
		reason, msg = "MigrationSucceeded", "The migration has succeeded"
		if canUpdate {
			msg += " and the stored versions have been updated"
		} else {
			msg += " but the stored versions have not been updated due to a generation mismatch"
		}
	}
	status := map[string]any{"conditions": []any{map[string]any{"type": string(apiextensionsv1.StorageMigrating), "status": "False",
		"lastTransitionTime": metav1.Now(), "reason": reason, "message": msg, "observedGeneration": crd.Generation}}}
	if canUpdate {
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				status["storedVersions"] = []string{v.Name}
				break
			}
		}
	}
	return c.applyCRDStatus(ctx, crd, status)
}
