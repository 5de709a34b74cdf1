// Package resourceclaim is the resource claim controller of Dynamic
// Resource Allocation, as kube-controller-manager's controller of that
// name: for each claim a pod's spec.resourceClaims makes from a
// ResourceClaimTemplate it creates the ResourceClaim (generateName
// <pod>-<claim>-, the pod its controlling owner, the template's labels and
// annotations plus resource.kubernetes.io/pod-claim-name) and records it
// in the pod's status.resourceClaimStatuses, with a server-side apply as
// field manager ResourceClaimController; it reserves an allocated claim
// for a scheduled pod that uses it; and it removes from a claim's
// status.reservedFor the pods that are gone or done, deallocating a claim
// nobody uses any more (when the scheduler's finalizer
// resource.kubernetes.io/delete-protection marks it as allocated by it,
// then lifting that finalizer), and deletes a generated claim whose pod
// will not run.
//
// It watches Pods, ResourceClaims and ResourceClaimTemplates through the
// shared informers and reconciles from one rate-limited workqueue of
// "pod:<ns>/<name>" and "claim:<ns>/<name>" keys. Differences from kube:
// PodGroup claims (DRAWorkloadResourceClaims, off by default) and the
// claims of extended resources are not handled; no metrics are exported;
// the controller runs with the controller manager's client rather than
// its own service account. The scheduler allocates claims (and adds the
// finalizer) when it places their pods.
package resourceclaim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	draclaim "k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/utils/lru"

	"minik/internal/controllers"
)

// Name is the controller's name in --controllers.
const Name = "resourceclaim-controller"

// Component is the source of the controller's events, as kube's.
const Component = "resource_claim"

// FieldManager manages the pods' status.resourceClaimStatuses.
const FieldManager = "ResourceClaimController"

// ReasonFailedResourceClaimCreation: a pod's claim could not be made.
const ReasonFailedResourceClaimCreation = "FailedResourceClaimCreation"

// Queue key prefixes and informer index names.
const (
	podKeyPrefix   = "pod:"
	claimKeyPrefix = "claim:"

	podClaimIndex    = "resourceclaim-controller/podResourceClaim"
	podTemplateIndex = "resourceclaim-controller/podResourceClaimTemplate"
	claimOwnerIndex  = "resourceclaim-controller/claimPodOwner"

	// deletedPodsRemembered bounds the memory of deleted pods' UIDs.
	deletedPodsRemembered = 500
	// createdClaimsTTL is how long a claim this controller created is
	// trusted before the informer shows it.
	createdClaimsTTL = time.Minute
)

// Controller is the resource claim controller.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	log      *slog.Logger

	podLister      corelisters.PodLister
	podIndexer     cache.Indexer
	podsSynced     cache.InformerSynced
	claimLister    resourcelisters.ResourceClaimLister
	claimCache     cache.MutationCache
	claimsSynced   cache.InformerSynced
	templateLister resourcelisters.ResourceClaimTemplateLister
	templateSynced cache.InformerSynced

	// deletedPods remembers the UIDs of deleted pods, so that their
	// reservations go without asking the API server.
	deletedPods *lru.Cache

	queue workqueue.TypedRateLimitingInterface[string]
}

// New builds the controller on cc's shared Pod, ResourceClaim and
// ResourceClaimTemplate informers. It implements controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	c := &Controller{
		client:      cc.Client,
		recorder:    cc.Recorder(Component),
		log:         cc.Logger,
		deletedPods: lru.New(deletedPodsRemembered),
		queue:       controllers.NewQueue[string](Name, cc.Clock, nil),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	podInformer := cc.Informers.Core().V1().Pods()
	if _, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueuePod(obj, false) },
		UpdateFunc: func(_, obj any) { c.enqueuePod(obj, false) },
		DeleteFunc: func(obj any) { c.enqueuePod(obj, true) },
	}); err != nil {
		return nil, fmt.Errorf("resourceclaim controller: watch pods: %w", err)
	}
	if err := podInformer.Informer().AddIndexers(cache.Indexers{
		podClaimIndex:    podClaimIndexFunc,
		podTemplateIndex: podTemplateIndexFunc,
	}); err != nil {
		return nil, fmt.Errorf("resourceclaim controller: index pods: %w", err)
	}
	c.podLister, c.podIndexer, c.podsSynced = podInformer.Lister(), podInformer.Informer().GetIndexer(), podInformer.Informer().HasSynced

	claimInformer := cc.Informers.Resource().V1().ResourceClaims()
	if _, err := claimInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueueClaim(obj, false) },
		UpdateFunc: func(_, obj any) { c.enqueueClaim(obj, false) },
		DeleteFunc: func(obj any) { c.enqueueClaim(obj, true) },
	}); err != nil {
		return nil, fmt.Errorf("resourceclaim controller: watch resource claims: %w", err)
	}
	if err := claimInformer.Informer().AddIndexers(cache.Indexers{claimOwnerIndex: claimOwnerIndexFunc}); err != nil {
		return nil, fmt.Errorf("resourceclaim controller: index resource claims: %w", err)
	}
	c.claimLister, c.claimsSynced = claimInformer.Lister(), claimInformer.Informer().HasSynced
	// Claims just created are seen before the informer shows them, so
	// that a pod synced again meanwhile does not get a second one.
	c.claimCache = cache.NewIntegerResourceVersionMutationCache(logr.Discard(), claimInformer.Informer().GetStore(), claimInformer.Informer().GetIndexer(), createdClaimsTTL, true)

	templateInformer := cc.Informers.Resource().V1().ResourceClaimTemplates()
	if _, err := templateInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueTemplate,
		UpdateFunc: func(_, obj any) { c.enqueueTemplate(obj) },
	}); err != nil {
		return nil, fmt.Errorf("resourceclaim controller: watch resource claim templates: %w", err)
	}
	c.templateLister, c.templateSynced = templateInformer.Lister(), templateInformer.Informer().HasSynced
	return c, nil
}

// Run reconciles with workers goroutines until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllers.Workers[string]{
		Synced:    []cache.InformerSynced{c.podsSynced, c.claimsSynced, c.templateSynced},
		Queue:     c.queue,
		Reconcile: c.sync,
		OnError: func(key string, err error) {
			c.log.Info("sync failed, will retry", "key", key, "err", err)
		},
		Logger: c.log,
	}.Run(ctx, workers)
}

// enqueueTemplate queues the pods that make claims from the template.
func (c *Controller) enqueueTemplate(obj any) {
	t, ok := controllers.Deleted[*resourcev1.ResourceClaimTemplate](obj)
	if !ok {
		return
	}
	pods, err := c.podIndexer.ByIndex(podTemplateIndex, t.Namespace+"/"+t.Name)
	if err != nil {
		return
	}
	for _, p := range pods {
		c.enqueuePod(p, false)
	}
}

// enqueuePod is kube's: the claims of a pod that no longer needs them
// are queued, and the pod itself when a claim is to be made or reserved.
func (c *Controller) enqueuePod(obj any, deleted bool) {
	pod, ok := controllers.Deleted[*corev1.Pod](obj)
	if !ok || len(pod.Spec.ResourceClaims) == 0 {
		return
	}
	if deleted {
		c.deletedPods.Add(pod.UID, struct{}{})
	}
	if !podNeedsClaims(pod, deleted) {
		for name := range draclaim.PodClaims(pod) {
			c.queue.Add(claimKeyPrefix + pod.Namespace + "/" + name)
		}
	}
	if c.podNeedsWork(pod) {
		c.queue.Add(podKeyPrefix + pod.Namespace + "/" + pod.Name)
	}
}

// podNeedsClaims tells whether the pod may still run.
func podNeedsClaims(pod *corev1.Pod, deleted bool) bool {
	switch {
	case deleted:
		return false
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		return false
	case pod.DeletionTimestamp != nil && pod.Spec.NodeName == "":
		return false
	}
	return true
}

// podNeedsWork tells whether a claim of the pod is to be made from its
// template, or an allocated claim reserved for the scheduled pod.
func (c *Controller) podNeedsWork(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	for i := range pod.Spec.ResourceClaims {
		pc := &pod.Spec.ResourceClaims[i]
		name, checkOwner, err := draclaim.Name(pod, pc)
		if err != nil {
			// A claim not made yet from its template, or one of an API
			// this controller does not know.
			return true
		}
		if name == nil {
			continue
		}
		claim, err := c.claimLister.ResourceClaims(pod.Namespace).Get(*name)
		switch {
		case apierrors.IsNotFound(err):
			if pc.ResourceClaimTemplateName != nil {
				return true
			}
			continue
		case err != nil:
			return true
		}
		if checkOwner && draclaim.IsForPod(pod, claim, false) != nil {
			continue
		}
		if pod.Spec.NodeName != "" && claim.Status.Allocation != nil && !draclaim.IsReservedForPod(pod, claim, false) {
			return true
		}
	}
	return false
}

// enqueueClaim queues a live claim (its reservations may name pods gone)
// and the pods that use it.
func (c *Controller) enqueueClaim(obj any, deleted bool) {
	claim, ok := controllers.Deleted[*resourcev1.ResourceClaim](obj)
	if !ok {
		return
	}
	if !deleted {
		c.queue.Add(claimKeyPrefix + claim.Namespace + "/" + claim.Name)
	}
	pods, err := c.podIndexer.ByIndex(podClaimIndex, claim.Namespace+"/"+claim.Name)
	if err != nil {
		return
	}
	for _, p := range pods {
		c.enqueuePod(p, false)
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	prefix, object, ok := strings.Cut(key, ":")
	if !ok {
		return fmt.Errorf("unexpected key %q", key)
	}
	ns, name, err := cache.SplitMetaNamespaceKey(object)
	if err != nil {
		return err
	}
	switch prefix + ":" {
	case podKeyPrefix:
		return c.syncPod(ctx, ns, name)
	case claimKeyPrefix:
		return c.syncClaim(ctx, ns, name)
	}
	return fmt.Errorf("unexpected key %q", key)
}

// syncPod makes the pod's claims from their templates, records them in
// its status and reserves the allocated ones for it once it is
// scheduled.
func (c *Controller) syncPod(ctx context.Context, ns, name string) error {
	pod, err := c.podLister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if pod.DeletionTimestamp != nil {
		return nil
	}
	made := map[string]string{}
	for _, pc := range pod.Spec.ResourceClaims {
		if err := c.handleClaim(ctx, pod, pc, made); err != nil {
			c.recorder.Event(pod, corev1.EventTypeWarning, ReasonFailedResourceClaimCreation, fmt.Sprintf("PodResourceClaim %s: %v", pc.Name, err))
			return fmt.Errorf("pod %s/%s, PodResourceClaim %s: %w", ns, name, pc.Name, err)
		}
	}
	if len(made) > 0 {
		merged := map[string]string{}
		for _, s := range pod.Status.ResourceClaimStatuses {
			if s.ResourceClaimName != nil {
				merged[s.Name] = *s.ResourceClaimName
			}
		}
		maps.Copy(merged, made)
		statuses := make([]*corev1apply.PodResourceClaimStatusApplyConfiguration, 0, len(merged))
		for _, n := range slices.Sorted(maps.Keys(merged)) {
			statuses = append(statuses, corev1apply.PodResourceClaimStatus().WithName(n).WithResourceClaimName(merged[n]))
		}
		apply := corev1apply.Pod(name, ns).WithStatus(corev1apply.PodStatus().WithResourceClaimStatuses(statuses...))
		if _, err := c.client.CoreV1().Pods(ns).ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return fmt.Errorf("update pod %s/%s ResourceClaimStatuses: %w", ns, name, err)
		}
	}
	if pod.Spec.NodeName == "" {
		// The scheduler reserves the claims of a pod it places.
		return nil
	}
	for i := range pod.Spec.ResourceClaims {
		pc := &pod.Spec.ResourceClaims[i]
		claimName, checkOwner, err := draclaim.Name(pod, pc)
		if err != nil {
			return err
		}
		if claimName == nil {
			continue
		}
		claim, err := c.claimLister.ResourceClaims(ns).Get(*claimName)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("retrieve claim %s/%s: %w", ns, *claimName, err)
		}
		if checkOwner {
			if err := draclaim.IsForPod(pod, claim, false); err != nil {
				return err
			}
		}
		if claim.Status.Allocation != nil && !draclaim.IsReservedForPod(pod, claim, false) && draclaim.CanBeReserved(claim) {
			consumer, err := draclaim.BindTo(pod, nil, pc)
			if err != nil {
				return err
			}
			claim = claim.DeepCopy()
			claim.Status.ReservedFor = append(claim.Status.ReservedFor, consumer)
			if _, err := c.client.ResourceV1().ResourceClaims(ns).UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("reserve claim %s/%s: %w", ns, claim.Name, err)
			}
		}
	}
	return nil
}

// handleClaim makes one claim of the pod from its template unless it
// exists, noting the name of a claim made (or found orphaned) in made.
func (c *Controller) handleClaim(ctx context.Context, pod *corev1.Pod, pc corev1.PodResourceClaim, made map[string]string) error {
	claimName, checkOwner, err := draclaim.Name(pod, &pc)
	switch {
	case errors.Is(err, draclaim.ErrClaimNotFound):
	case err != nil:
		return fmt.Errorf("checking for claim before creating it: %w", err)
	case claimName == nil:
		return nil
	case *claimName != "":
		exists, err := c.claimExists(ctx, pod, *claimName, checkOwner)
		if err != nil || exists {
			return err
		}
	}
	if pc.ResourceClaimTemplateName == nil {
		return nil
	}
	claim, err := c.findPodClaim(pod, pc.Name)
	if err != nil {
		return err
	}
	if claim == nil {
		template, err := c.templateLister.ResourceClaimTemplates(pod.Namespace).Get(*pc.ResourceClaimTemplateName)
		if err != nil {
			return fmt.Errorf("resource claim template %q: %w", *pc.ResourceClaimTemplateName, err)
		}
		claim = claimFor(pod, pc.Name, template)
		created, err := c.client.ResourceV1().ResourceClaims(pod.Namespace).Create(ctx, claim, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create ResourceClaim %s: %w", claim.Name, err)
		}
		c.claimCache.Mutation(created)
		claim = created
	}
	made[pc.Name] = claim.Name
	return nil
}

// claimFor is the claim made for the pod's claim podClaim from template:
// generateName <pod>-<claim>- (both shortened in proportion to fit 57
// characters), the pod its controlling owner.
func claimFor(pod *corev1.Pod, podClaim string, template *resourcev1.ResourceClaimTemplate) *resourcev1.ResourceClaim {
	annotations := maps.Clone(template.Spec.ObjectMeta.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[resourcev1.PodResourceClaimAnnotation] = podClaim
	generateName := pod.Name + "-" + podClaim + "-"
	const maxBaseLen = 57 // Room for 5 random characters in 63.
	if len(generateName) > maxBaseLen {
		generateName = pod.Name[:len(pod.Name)*maxBaseLen/len(generateName)] + "-" + podClaim[:len(podClaim)*maxBaseLen/len(generateName)]
	}
	controller := true
	return &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    generateName,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: &controller}},
			Annotations:     annotations,
			Labels:          template.Spec.ObjectMeta.Labels,
		},
		Spec: *template.Spec.Spec.DeepCopy(),
	}
}

// claimExists tells whether the claim recorded for the pod still exists
// (and, checkOwner, is still the pod's); a claim deleted by accident is
// made again.
func (c *Controller) claimExists(ctx context.Context, pod *corev1.Pod, name string, checkOwner bool) (bool, error) {
	obj, exists, err := c.claimCache.GetByKey(pod.Namespace + "/" + name)
	if err != nil {
		return false, err
	}
	var claim *resourcev1.ResourceClaim
	if exists {
		claim, _ = obj.(*resourcev1.ResourceClaim)
	}
	if claim == nil {
		claim, err = c.client.ResourceV1().ResourceClaims(pod.Namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("get ResourceClaim %s/%s: %w", pod.Namespace, name, err)
		}
	}
	if checkOwner && draclaim.IsForPod(pod, claim, false) != nil {
		c.log.Info("the claim made for the pod is no longer the pod's; making a new one", "pod", pod.Namespace+"/"+pod.Name, "claim", name)
		return false, nil
	}
	return true, nil
}

// findPodClaim finds a claim made for the pod's claim whose name did not
// reach the pod's status.
func (c *Controller) findPodClaim(pod *corev1.Pod, podClaim string) (*resourcev1.ResourceClaim, error) {
	objs, err := c.claimCache.ByIndex(claimOwnerIndex, pod.Namespace+"/"+string(pod.UID))
	if err != nil {
		return nil, err
	}
	for _, obj := range objs {
		claim, ok := obj.(*resourcev1.ResourceClaim)
		if ok && claim.Annotations[resourcev1.PodResourceClaimAnnotation] == podClaim {
			return claim, nil
		}
	}
	return nil, nil
}

// syncClaim drops the claim's reservations for pods gone or done,
// deallocates it when nobody uses it any more, and deletes a claim made
// for a pod that will not run.
func (c *Controller) syncClaim(ctx context.Context, ns, name string) error {
	claim, err := c.claimLister.ResourceClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	remaining := make([]resourcev1.ResourceClaimConsumerReference, 0, len(claim.Status.ReservedFor))
	for _, r := range claim.Status.ReservedFor {
		keep := true
		if r.APIGroup == "" && r.Resource == "pods" {
			keep, err = c.podMayUse(ctx, ns, r.Name, r.UID)
			if err != nil {
				return err
			}
		}
		if keep {
			remaining = append(remaining, r)
		}
	}
	finalizer := slices.Index(claim.Finalizers, resourcev1.Finalizer)
	switch {
	case len(remaining) < len(claim.Status.ReservedFor):
		claim = claim.DeepCopy()
		claim.Status.ReservedFor = remaining
		if len(remaining) == 0 && finalizer >= 0 {
			// Allocated by the scheduler: deallocated once unused.
			claim.Status.Allocation = nil
		}
		if claim, err = c.client.ResourceV1().ResourceClaims(ns).UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("release claim %s/%s: %w", ns, name, err)
		}
		if i := slices.Index(claim.Finalizers, resourcev1.Finalizer); i >= 0 && claim.Status.Allocation == nil {
			claim.Finalizers = slices.Delete(claim.Finalizers, i, i+1)
			if _, err := c.client.ResourceV1().ResourceClaims(ns).Update(ctx, claim, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("remove finalizer of claim %s/%s: %w", ns, name, err)
			}
		}
	case finalizer >= 0 && claim.DeletionTimestamp != nil && len(remaining) == 0:
		claim = claim.DeepCopy()
		if claim.Status.Allocation != nil {
			claim.Status.Allocation = nil
			if claim, err = c.client.ResourceV1().ResourceClaims(ns).UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("deallocate claim %s/%s: %w", ns, name, err)
			}
		}
		if i := slices.Index(claim.Finalizers, resourcev1.Finalizer); i >= 0 {
			claim.Finalizers = slices.Delete(claim.Finalizers, i, i+1)
			if _, err := c.client.ResourceV1().ResourceClaims(ns).Update(ctx, claim, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("remove finalizer of claim %s/%s: %w", ns, name, err)
			}
		}
	}
	if len(remaining) > 0 {
		return nil
	}
	podName, podUID := owningPod(claim)
	if podName == "" {
		return nil
	}
	pod, err := c.podLister.Pods(ns).Get(podName)
	switch {
	case apierrors.IsNotFound(err):
		// The garbage collector removes the claim of a pod gone.
		return nil
	case err != nil:
		return err
	}
	if pod.UID != podUID || podDone(pod) {
		err := c.client.ResourceV1().ResourceClaims(ns).Delete(ctx, claim.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete unused generated claim %s/%s: %w", ns, claim.Name, err)
		}
	}
	return nil
}

// podMayUse tells whether the pod a reservation names may still use the
// claim: it exists, is the same pod and is not done. A pod the informer
// does not know is asked of the API server before its reservation goes.
func (c *Controller) podMayUse(ctx context.Context, ns, name string, uid types.UID) (bool, error) {
	if _, deleted := c.deletedPods.Get(uid); deleted {
		return false, nil
	}
	pod, err := c.podLister.Pods(ns).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		pod, err = c.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("get pod %s/%s: %w", ns, name, err)
		}
		return pod.UID == uid, nil
	case err != nil:
		return false, err
	}
	return pod.UID == uid && !podDone(pod), nil
}

// podDone tells that none of the pod's containers runs or will run.
func podDone(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed ||
		pod.DeletionTimestamp != nil && pod.Spec.NodeName == ""
}

// owningPod is the pod controlling the claim, if a pod does.
func owningPod(claim *resourcev1.ResourceClaim) (string, types.UID) {
	for _, o := range claim.OwnerReferences {
		if o.Controller != nil && *o.Controller && o.APIVersion == "v1" && o.Kind == "Pod" {
			return o.Name, o.UID
		}
	}
	return "", ""
}

// podClaimIndexFunc indexes pods by the claims they use (namespace/name).
func podClaimIndexFunc(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	keys := sets.New[string]()
	for i := range pod.Spec.ResourceClaims {
		if name, _, err := draclaim.Name(pod, &pod.Spec.ResourceClaims[i]); err == nil && name != nil {
			keys.Insert(pod.Namespace + "/" + *name)
		}
	}
	return sets.List(keys), nil
}

// podTemplateIndexFunc indexes pods by the templates they make claims of.
func podTemplateIndexFunc(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	keys := sets.New[string]()
	for _, pc := range pod.Spec.ResourceClaims {
		if pc.ResourceClaimTemplateName != nil {
			keys.Insert(pod.Namespace + "/" + *pc.ResourceClaimTemplateName)
		}
	}
	return sets.List(keys), nil
}

// claimOwnerIndexFunc indexes claims by their controlling pod
// (namespace/uid).
func claimOwnerIndexFunc(obj any) ([]string, error) {
	claim, ok := obj.(*resourcev1.ResourceClaim)
	if !ok {
		return nil, nil
	}
	if _, uid := owningPod(claim); uid != "" {
		return []string{claim.Namespace + "/" + string(uid)}, nil
	}
	return nil, nil
}
