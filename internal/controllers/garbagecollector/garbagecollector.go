// Package garbagecollector is the garbage collector: it deletes objects
// whose owners (metadata.ownerReferences) are gone, and carries out the
// propagation policies the API server records as finalizers, as
// kube-controller-manager's controller of that name does:
//
//   - background (the default): the owner goes at once; its dependents are
//     deleted once it is gone;
//   - foreground: the owner keeps a deletionTimestamp and the
//     foregroundDeletion finalizer while its dependents are deleted; the
//     finalizer is removed once no dependent with blockOwnerDeletion is
//     left;
//   - orphan: the orphan finalizer holds the owner until the collector has
//     removed the owner's reference from every dependent.
//
// It watches every resource discovered that can be listed, watched and
// deleted (events excepted): through the shared informers, or, for
// resources client-go has no types for (custom resources among them),
// through informers of object metadata of its own. Discovery is repeated
// every rediscoverInterval, so that resources added later (custom
// resources) are collected too, and those gone are no longer watched. It indexes objects by the UIDs of their owners and
// reconciles objects from one rate-limited workqueue. Owners are looked up
// by UID: a reference whose owner is missing from the informer cache is
// confirmed with a read from the API before anything is deleted, and every
// deletion is conditional on the version of the object decided on.
package garbagecollector

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/lru"

	"minik/internal/controllers"
)

// Name is the controller's name in --controllers.
const Name = "garbagecollector"

// ownerIndex indexes objects by the UIDs of their owners.
const ownerIndex = "garbagecollector.ownerUID"

// ignored are resources the collector does not watch: events come and go
// too often to be worth it, and nothing owns them.
var ignored = map[schema.GroupResource]bool{
	{Group: "", Resource: "events"}:              true,
	{Group: "events.k8s.io", Resource: "events"}: true,
}

// ref names one object of a resource, by UID as well as by name.
type ref struct {
	resource  schema.GroupVersionResource
	namespace string
	name      string
	uid       types.UID
}

func (r ref) String() string {
	if r.namespace == "" {
		return r.resource.Resource + "/" + r.name
	}
	return r.resource.Resource + " " + r.namespace + "/" + r.name
}

// monitor is one watched resource.
type monitor struct {
	resource   schema.GroupVersionResource
	namespaced bool
	informer   cache.SharedIndexInformer
	// own tells that the collector runs the informer; stop ends it.
	own  bool
	stop context.CancelFunc
}

// Collector is the garbage collector.
type Collector struct {
	log    *slog.Logger
	meta   metadata.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper

	// mu guards monitors and byKind, which rediscovery changes.
	mu       sync.RWMutex
	monitors map[schema.GroupResource]*monitor
	// byKind finds the monitor of an owner reference's kind without a
	// request: event handlers use it.
	byKind map[schema.GroupKind]*monitor
	// cc is what New was given: rediscovery asks its informer factory.
	cc *controllers.Context
	// absent remembers the UIDs of owners seen deleted or confirmed
	// missing: a UID is never reused, so their dependents need not ask the
	// API again.
	absent *lru.Cache

	queue workqueue.TypedRateLimitingInterface[ref]
}

// absentCacheSize bounds the UIDs remembered as absent.
const absentCacheSize = 1000

// New builds the collector: it discovers the API's resources and asks cc's
// shared informer factory for an informer of each one it can watch. It
// implements controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	disco := cc.Client.Discovery()
	c := &Collector{
		log:      cc.Logger,
		meta:     cc.Metadata,
		mapper:   restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)),
		monitors: map[schema.GroupResource]*monitor{},
		byKind:   map[schema.GroupKind]*monitor{},
		absent:   lru.New(absentCacheSize),
		cc:       cc,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[ref](),
			workqueue.TypedRateLimitingQueueConfig[ref]{Name: Name, Clock: cc.Clock},
		),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	found, err := c.discover()
	if err != nil {
		return nil, err
	}
	for _, f := range found {
		if err := c.watch(f.gvr, f.gk, f.namespaced, true); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// rediscoverInterval is how often the collector looks for resources added
// or removed since it started (custom resources come and go).
const rediscoverInterval = 10 * time.Second

type discovered struct {
	gvr        schema.GroupVersionResource
	gk         schema.GroupKind
	namespaced bool
}

// discover lists the resources the collector can watch and delete.
func (c *Collector) discover() ([]discovered, error) {
	lists, err := discovery.ServerPreferredResources(c.cc.Client.Discovery())
	if err != nil {
		if len(lists) == 0 {
			return nil, fmt.Errorf("garbage collector: discover resources: %w", err)
		}
		c.log.Warn("garbage collector: some resources could not be discovered", "err", err)
	}
	lists = discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"delete", "list", "watch"}}, lists)
	var out []discovered
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			gvr := gv.WithResource(r.Name)
			if strings.Contains(r.Name, "/") || ignored[gvr.GroupResource()] {
				continue
			}
			out = append(out, discovered{gvr: gvr, gk: gv.WithKind(r.Kind).GroupKind(), namespaced: r.Namespaced})
		}
	}
	return out, nil
}

// rediscover watches the resources discovered since the last time, with
// informers of their own that it starts, and stops watching those that
// are gone.
func (c *Collector) rediscover(ctx context.Context, wg *sync.WaitGroup) {
	found, err := c.discover()
	if err != nil {
		c.log.Info("garbage collector: rediscovery failed", "err", err)
		return
	}
	seen := map[schema.GroupResource]bool{}
	for _, f := range found {
		gr := f.gvr.GroupResource()
		seen[gr] = true
		if c.monitorFor(gr) != nil {
			continue
		}
		if err := c.watch(f.gvr, f.gk, f.namespaced, false); err != nil {
			c.log.Info("garbage collector: cannot watch", "resource", gr.String(), "err", err)
			continue
		}
		m := c.monitorFor(gr)
		c.startOwn(ctx, wg, m)
		c.log.Info("garbage collector watching", "resource", gr.String())
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.recheckDependents(ctx, m, f.gk)
		}()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for gr, m := range c.monitors {
		if seen[gr] || !m.own {
			continue
		}
		if m.stop != nil {
			m.stop()
		}
		delete(c.monitors, gr)
		for gk, km := range c.byKind {
			if km == m {
				delete(c.byKind, gk)
			}
		}
	}
}

// recheckDependents queues, once m's cache has synced, every object naming
// an owner of kind gk: until m watched that kind, an owner of it deleted
// in the meantime (a custom resource deleted within moments of its
// definition's creation) told no dependent that it was gone.
func (c *Collector) recheckDependents(ctx context.Context, m *monitor, gk schema.GroupKind) {
	if m == nil || !cache.WaitForCacheSync(ctx.Done(), m.informer.HasSynced) {
		return
	}
	for _, dm := range c.allMonitors() {
		for _, obj := range dm.informer.GetIndexer().List() {
			o := accessor(obj)
			if o == nil {
				continue
			}
			for _, r := range o.GetOwnerReferences() {
				gv, err := schema.ParseGroupVersion(r.APIVersion)
				if err == nil && gv.Group == gk.Group && r.Kind == gk.Kind {
					c.queue.Add(dm.refOf(o))
					break
				}
			}
		}
	}
}

// startOwn runs a monitor's own informer until ctx is done or the
// monitor is dropped.
func (c *Collector) startOwn(ctx context.Context, wg *sync.WaitGroup, m *monitor) {
	if m == nil || !m.own {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	m.stop = cancel
	c.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		m.informer.RunWithContext(ctx)
	}()
}

func (c *Collector) monitorFor(gr schema.GroupResource) *monitor {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.monitors[gr]
}

func (c *Collector) monitorOfKind(gk schema.GroupKind) *monitor {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.byKind[gk]
}

func (c *Collector) allMonitors() []*monitor {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*monitor, 0, len(c.monitors))
	for _, m := range c.monitors {
		out = append(out, m)
	}
	return out
}

// watch adds a monitor for gvr: the shared informer of its type, or, for a
// resource client-go has no type for (custom resources, such as the
// Gateway API's), an informer of its objects' metadata that the collector
// runs itself.
func (c *Collector) watch(gvr schema.GroupVersionResource, gk schema.GroupKind, namespaced, shared bool) error {
	m := &monitor{resource: gvr, namespaced: namespaced}
	var gi interface {
		Informer() cache.SharedIndexInformer
	}
	var err error
	if shared {
		gi, err = c.cc.Informers.ForResource(gvr)
	}
	if shared && err == nil {
		m.informer = gi.Informer()
	} else {
		m.informer = metadatainformer.NewFilteredMetadataInformer(c.meta, gvr, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
		m.own = true
	}
	if err := m.informer.AddIndexers(cache.Indexers{ownerIndex: indexByOwnerUID}); err != nil {
		return fmt.Errorf("garbage collector: index %s: %w", gvr.Resource, err)
	}
	if _, err := m.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { c.observe(m, nil, obj) },
		UpdateFunc: func(oldObj, newObj interface{}) { c.observe(m, oldObj, newObj) },
		DeleteFunc: func(obj interface{}) { c.gone(m, obj) },
	}); err != nil {
		return fmt.Errorf("garbage collector: watch %s: %w", gvr.Resource, err)
	}
	c.mu.Lock()
	c.monitors[gvr.GroupResource()] = m
	c.byKind[gk] = m
	c.mu.Unlock()
	return nil
}

func indexByOwnerUID(obj interface{}) ([]string, error) {
	o, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil
	}
	refs := o.GetOwnerReferences()
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		out = append(out, string(r.UID))
	}
	return out, nil
}

// ownSyncTimeout bounds the wait for the collector's own informers. The
// collector is correct without a full cache (it confirms with the API that
// an owner is gone), so one resource that cannot be listed must not stop it.
const ownSyncTimeout = 30 * time.Second

// Run collects with workers goroutines until ctx is done, then returns
// once every worker and informer it started has stopped.
func (c *Collector) Run(ctx context.Context, workers int) {
	defer c.queue.ShutDown()
	var wg sync.WaitGroup
	defer wg.Wait()
	var synced []cache.InformerSynced
	for _, m := range c.allMonitors() {
		if m.own {
			c.startOwn(ctx, &wg, m)
			synced = append(synced, m.informer.HasSynced)
		}
	}
	syncCtx, cancel := context.WithTimeout(ctx, ownSyncTimeout)
	if !cache.WaitForCacheSync(syncCtx.Done(), synced...) && ctx.Err() == nil {
		c.log.Warn("garbage collector: some resources not synced, collecting anyway", "timeout", ownSyncTimeout)
	}
	cancel()
	c.log.Info("garbage collector watching", "resources", len(c.allMonitors()))
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(rediscoverInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				c.rediscover(ctx, &wg)
			}
		}
	}()
	controllers.Workers[ref]{
		Queue:     c.queue,
		Reconcile: c.process,
		OnError: func(r ref, err error) {
			c.log.Info("garbage collection failed, will retry", "object", r.String(), "err", err)
		},
	}.Run(ctx, workers)
}

func accessor(obj interface{}) metav1.Object {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	o, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return o
}

func (m *monitor) refOf(o metav1.Object) ref {
	return ref{resource: m.resource, namespace: o.GetNamespace(), name: o.GetName(), uid: o.GetUID()}
}

// observe handles an added or updated object: it queues the object if it
// awaits the collector (an owner being deleted in the foreground or with
// orphaning; a dependent whose owner seems gone or waits for it), and
// wakes owners waiting for it if it dropped or unblocked their reference.
func (c *Collector) observe(m *monitor, oldObj, obj interface{}) {
	o := accessor(obj)
	if o == nil {
		return
	}
	if (o.GetDeletionTimestamp() != nil && hasGCFinalizer(o)) || c.needsCheck(o) {
		c.queue.Add(m.refOf(o))
	}
	if oldObj == nil {
		return
	}
	old := accessor(oldObj)
	if old == nil {
		return
	}
	cur := o.GetOwnerReferences()
	for _, or := range old.GetOwnerReferences() {
		i := slices.IndexFunc(cur, func(r metav1.OwnerReference) bool { return r.UID == or.UID })
		if i < 0 || (blocking(or) && !blocking(cur[i])) {
			c.wakeOwner(o.GetNamespace(), or)
		}
	}
}

// gone handles a deleted object: its dependents may now be garbage, and an
// owner may have been waiting for it.
func (c *Collector) gone(m *monitor, obj interface{}) {
	o := accessor(obj)
	if o == nil {
		return
	}
	c.absent.Add(o.GetUID(), struct{}{})
	for _, d := range c.dependents(o.GetUID()) {
		c.queue.Add(d.ref)
	}
	for _, r := range o.GetOwnerReferences() {
		c.wakeOwner(o.GetNamespace(), r)
	}
}

// wakeOwner queues the owner named by r if the cache shows it deleting its
// dependents in the foreground.
func (c *Collector) wakeOwner(namespace string, r metav1.OwnerReference) {
	m, owner := c.cachedOwner(namespace, r)
	if owner != nil && deletingDependents(owner) {
		c.queue.Add(m.refOf(owner))
	}
}

// needsCheck tells, from the cache, whether one of o's owners is missing
// or deleting its dependents.
func (c *Collector) needsCheck(o metav1.Object) bool {
	for _, r := range o.GetOwnerReferences() {
		_, owner := c.cachedOwner(o.GetNamespace(), r)
		if owner == nil || deletingDependents(owner) {
			return true
		}
	}
	return false
}

// cachedOwner returns the owner r names, as the cache holds it, or nil if
// the cache holds no object of that kind, name and UID.
func (c *Collector) cachedOwner(namespace string, r metav1.OwnerReference) (*monitor, metav1.Object) {
	gv, err := schema.ParseGroupVersion(r.APIVersion)
	if err != nil {
		return nil, nil
	}
	m := c.monitorOfKind(schema.GroupKind{Group: gv.Group, Kind: r.Kind})
	if m == nil {
		return nil, nil
	}
	key := r.Name
	if m.namespaced {
		key = namespace + "/" + r.Name
	}
	obj, ok, err := m.informer.GetIndexer().GetByKey(key)
	if err != nil || !ok {
		return m, nil
	}
	o := accessor(obj)
	if o == nil || o.GetUID() != r.UID {
		return m, nil
	}
	return m, o
}

// dependent is an object that names an owner, as the cache holds it.
type dependent struct {
	ref ref
	obj metav1.Object
}

// dependents returns the cached objects that name uid as an owner.
func (c *Collector) dependents(uid types.UID) []dependent {
	var out []dependent
	for _, m := range c.allMonitors() {
		objs, err := m.informer.GetIndexer().ByIndex(ownerIndex, string(uid))
		if err != nil {
			continue
		}
		for _, obj := range objs {
			if o := accessor(obj); o != nil {
				out = append(out, dependent{ref: m.refOf(o), obj: o})
			}
		}
	}
	return out
}

func hasFinalizer(o metav1.Object, f string) bool { return slices.Contains(o.GetFinalizers(), f) }

func hasGCFinalizer(o metav1.Object) bool {
	return hasFinalizer(o, metav1.FinalizerOrphanDependents) || hasFinalizer(o, metav1.FinalizerDeleteDependents)
}

// deletingDependents tells whether o is being deleted in the foreground.
func deletingDependents(o metav1.Object) bool {
	return o.GetDeletionTimestamp() != nil && hasFinalizer(o, metav1.FinalizerDeleteDependents)
}

func blocking(r metav1.OwnerReference) bool {
	return r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion
}

// blocks tells whether o holds back the foreground deletion of owner.
func blocks(o metav1.Object, owner types.UID) bool {
	for _, r := range o.GetOwnerReferences() {
		if r.UID == owner && blocking(r) {
			return true
		}
	}
	return false
}

// process reconciles one object. It decides on the cached object if the
// cache holds it: every write it then makes is conditional on that
// version, and on a conflict it decides again on the object read from the
// API.
func (c *Collector) process(ctx context.Context, r ref) error {
	if m := c.monitorFor(r.resource.GroupResource()); m != nil {
		if cached, ok := c.cached(m, r); ok {
			if cached.GetDeletionTimestamp() == nil && !c.needsCheck(cached) {
				// Its owners are all there: nothing to do.
				return nil
			}
			if err := c.decide(ctx, r, cached); !apierrors.IsConflict(err) {
				return err
			}
		}
	}
	obj, err := c.meta.Resource(r.resource).Namespace(r.namespace).Get(ctx, r.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get %s: %w", r, err)
	}
	if obj.GetUID() != r.uid {
		return nil
	}
	return c.decide(ctx, r, obj)
}

// decide acts on obj, a version of the object r names.
func (c *Collector) decide(ctx context.Context, r ref, obj metav1.Object) error {
	if obj.GetDeletionTimestamp() != nil {
		switch {
		case hasFinalizer(obj, metav1.FinalizerOrphanDependents):
			return c.orphanDependents(ctx, r, obj)
		case hasFinalizer(obj, metav1.FinalizerDeleteDependents):
			return c.deleteDependents(ctx, r, obj)
		}
		// Being deleted already: nothing for the collector to do.
		return nil
	}
	return c.collect(ctx, r, obj)
}

func (c *Collector) cached(m *monitor, r ref) (metav1.Object, bool) {
	key := r.name
	if m.namespaced {
		key = r.namespace + "/" + r.name
	}
	obj, ok, err := m.informer.GetIndexer().GetByKey(key)
	if err != nil || !ok {
		return nil, false
	}
	o := accessor(obj)
	if o == nil || o.GetUID() != r.uid {
		return nil, false
	}
	return o, true
}

// ownerState is what an owner reference leads to.
type ownerState int

const (
	ownerSolid   ownerState = iota // exists and is not deleting its dependents
	ownerAbsent                    // gone, or replaced by an object with another UID
	ownerWaiting                   // being deleted in the foreground
)

// collect decides on an object that is not being deleted, from the state
// of its owners (kube's attemptToDeleteItem):
//   - some owner exists: references to absent owners, and to owners
//     waiting for their dependents to go, are removed; the object stays;
//   - no owner exists, and some wait for their dependents: the object is
//     deleted in the foreground if it has dependents of its own (so that
//     its owners wait for them too), else at once;
//   - all owners are gone: the object is deleted, in the propagation its
//     own finalizers ask for, else in the background.
func (c *Collector) collect(ctx context.Context, r ref, obj metav1.Object) error {
	refs := obj.GetOwnerReferences()
	if len(refs) == 0 {
		return nil
	}
	var solid, dropped []types.UID
	waiting := false
	for _, or := range refs {
		st, err := c.ownerState(ctx, obj.GetNamespace(), or)
		if err != nil {
			return fmt.Errorf("owner %s %s of %s: %w", or.Kind, or.Name, r, err)
		}
		switch st {
		case ownerSolid:
			solid = append(solid, or.UID)
		case ownerWaiting:
			waiting = true
			dropped = append(dropped, or.UID)
		case ownerAbsent:
			dropped = append(dropped, or.UID)
		}
	}
	switch {
	case len(solid) > 0:
		if len(dropped) == 0 {
			return nil
		}
		c.log.Debug("removing references to owners that are gone or going", "object", r.String(), "owners", dropped)
		return c.patchOwnerRefs(ctx, r, func(or metav1.OwnerReference) *metav1.OwnerReference {
			if slices.Contains(dropped, or.UID) {
				return nil
			}
			return &or
		})
	case waiting && len(c.dependents(obj.GetUID())) > 0:
		for _, d := range c.dependents(obj.GetUID()) {
			if deletingDependents(d.obj) {
				// A dependent of this object waits for its own dependents:
				// stop blocking our owners so that a cycle of foreground
				// deletions cannot deadlock.
				if err := c.patchOwnerRefs(ctx, r, func(or metav1.OwnerReference) *metav1.OwnerReference {
					or.BlockOwnerDeletion = nil
					return &or
				}); err != nil {
					return err
				}
				break
			}
		}
		return c.delete(ctx, r, obj, metav1.DeletePropagationForeground)
	default:
		policy := metav1.DeletePropagationBackground
		switch {
		case hasFinalizer(obj, metav1.FinalizerOrphanDependents):
			policy = metav1.DeletePropagationOrphan
		case hasFinalizer(obj, metav1.FinalizerDeleteDependents):
			policy = metav1.DeletePropagationForeground
		}
		return c.delete(ctx, r, obj, policy)
	}
}

// ownerState finds the owner or names, from the cache if it holds it, else
// from the API: the cache may not show an owner created a moment ago.
func (c *Collector) ownerState(ctx context.Context, namespace string, or metav1.OwnerReference) (ownerState, error) {
	if _, owner := c.cachedOwner(namespace, or); owner != nil {
		if deletingDependents(owner) {
			return ownerWaiting, nil
		}
		return ownerSolid, nil
	}
	if _, ok := c.absent.Get(or.UID); ok {
		return ownerAbsent, nil
	}
	gv, err := schema.ParseGroupVersion(or.APIVersion)
	if err != nil {
		return ownerAbsent, nil
	}
	mapping, err := c.mapping(gv.WithKind(or.Kind))
	if err != nil {
		return 0, err
	}
	ownerNS := ""
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if namespace == "" {
			// A cluster-scoped object cannot have a namespaced owner.
			return ownerAbsent, nil
		}
		ownerNS = namespace
	}
	owner, err := c.meta.Resource(mapping.Resource).Namespace(ownerNS).Get(ctx, or.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) || (err == nil && owner.GetUID() != or.UID):
		c.absent.Add(or.UID, struct{}{})
		return ownerAbsent, nil
	case err != nil:
		return 0, err
	case deletingDependents(owner):
		return ownerWaiting, nil
	}
	return ownerSolid, nil
}

// mapping resolves a kind to its resource, refreshing discovery once if the
// kind is unknown.
func (c *Collector) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.mapper.Reset()
		m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	return m, err
}

// delete deletes the object the collector decided on, as long as it is
// still that object at that version.
func (c *Collector) delete(ctx context.Context, r ref, obj metav1.Object, policy metav1.DeletionPropagation) error {
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	c.log.Debug("deleting garbage", "object", r.String(), "propagation", policy)
	err := c.meta.Resource(r.resource).Namespace(r.namespace).Delete(ctx, r.name, metav1.DeleteOptions{
		Preconditions:     &metav1.Preconditions{UID: &uid, ResourceVersion: &rv},
		PropagationPolicy: &policy,
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s: %w", r, err)
	}
	return nil
}

// deleteDependents handles an owner deleted in the foreground: it queues
// its dependents for deletion, and removes the foregroundDeletion
// finalizer once none of them blocks it.
func (c *Collector) deleteDependents(ctx context.Context, r ref, owner metav1.Object) error {
	held := false
	for _, d := range c.dependents(owner.GetUID()) {
		if blocks(d.obj, owner.GetUID()) {
			held = true
		}
		if !deletingDependents(d.obj) {
			c.queue.Add(d.ref)
		}
	}
	if held {
		return nil
	}
	return c.removeFinalizer(ctx, r, metav1.FinalizerDeleteDependents)
}

// orphanDependents handles an owner deleted with orphaning: it removes the
// owner's reference from every dependent, then the orphan finalizer.
func (c *Collector) orphanDependents(ctx context.Context, r ref, owner metav1.Object) error {
	for _, d := range c.dependents(owner.GetUID()) {
		err := c.patchOwnerRefs(ctx, d.ref, func(or metav1.OwnerReference) *metav1.OwnerReference {
			if or.UID == owner.GetUID() {
				return nil
			}
			return &or
		})
		if err != nil {
			return err
		}
	}
	return c.removeFinalizer(ctx, r, metav1.FinalizerOrphanDependents)
}

// patchOwnerRefs rewrites the owner references of r's latest version
// through edit (nil drops a reference), with a merge patch conditional on
// that version, retrying on conflict. A vanished object is no error.
func (c *Collector) patchOwnerRefs(ctx context.Context, r ref, edit func(metav1.OwnerReference) *metav1.OwnerReference) error {
	return c.patchMeta(ctx, r, func(obj metav1.Object) (string, interface{}, bool) {
		var refs []metav1.OwnerReference
		for _, or := range obj.GetOwnerReferences() {
			if e := edit(or); e != nil {
				refs = append(refs, *e)
			}
		}
		if equalRefs(refs, obj.GetOwnerReferences()) {
			return "", nil, false
		}
		if len(refs) == 0 {
			return "ownerReferences", nil, true
		}
		return "ownerReferences", refs, true
	})
}

// removeFinalizer removes finalizer f from r's latest version.
func (c *Collector) removeFinalizer(ctx context.Context, r ref, f string) error {
	return c.patchMeta(ctx, r, func(obj metav1.Object) (string, interface{}, bool) {
		if !hasFinalizer(obj, f) {
			return "", nil, false
		}
		rest := slices.DeleteFunc(slices.Clone(obj.GetFinalizers()), func(s string) bool { return s == f })
		if len(rest) == 0 {
			return "finalizers", nil, true
		}
		return "finalizers", rest, true
	})
}

// patchMeta sets one metadata field of r's latest version to what change
// computes from it, with a JSON merge patch that carries the version read
// (so that the write fails rather than overwrite a concurrent change), and
// retries on conflict.
func (c *Collector) patchMeta(ctx context.Context, r ref, change func(metav1.Object) (field string, value interface{}, changed bool)) error {
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		obj, err := c.meta.Resource(r.resource).Namespace(r.namespace).Get(ctx, r.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if obj.GetUID() != r.uid {
			return apierrors.NewNotFound(r.resource.GroupResource(), r.name)
		}
		field, value, changed := change(obj)
		if !changed {
			return nil
		}
		patch, err := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{
			field: value, "resourceVersion": obj.GetResourceVersion(),
		}})
		if err != nil {
			return err
		}
		_, err = c.meta.Resource(r.resource).Namespace(r.namespace).Patch(ctx, r.name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("update metadata of %s: %w", r, err)
	}
	return nil
}

func equalRefs(a, b []metav1.OwnerReference) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].UID != b[i].UID || blocking(a[i]) != blocking(b[i]) {
			return false
		}
	}
	return true
}
