package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/cel"
	draclaim "k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"
)

// This file is kube-scheduler's DynamicResources plugin for claims with
// structured parameters. PreFilter resolves the pod's ResourceClaims (a
// claim from a template exists once the resourceclaim controller has
// named it in the pod's status.resourceClaimStatuses): the pod waits
// while one is missing, being deleted, in use by others, or its device
// class does not exist; an allocated claim pins the pod to its
// allocation's node selector; for the others it sets up the structured
// allocator (k8s.io/dynamic-resource-allocation/structured) over the
// ResourceSlices, the DeviceClasses and the devices already allocated
// (to claims, or to claims of pods being bound). Filter asks the
// allocator whether the unallocated claims fit on the node. Before the
// pod is bound (PreBind), each claim gets the scheduler's finalizer, its
// allocation and the pod in status.reservedFor. The resourceclaim
// controller releases and deallocates the claims of pods that are done.

// Reasons, worded as kube-scheduler's DynamicResources plugin words them.
const (
	ReasonCannotAllocateClaims = "cannot allocate all claims"
	ReasonClaimNotAvailable    = "resourceclaim not available on the node"
	ReasonClaimInUse           = "resourceclaim in use"
)

var (
	statusCannotAllocate    = &status{codeUnresolvable, pluginDynamicResources, []string{ReasonCannotAllocateClaims}}
	statusClaimNotAvailable = &status{codeUnresolvable, pluginDynamicResources, []string{ReasonClaimNotAvailable}}
)

// allocatorFeatures are the optional allocation features on by default in
// kube v1.37 that the API serves.
var allocatorFeatures = structured.Features{AdminAccess: true, PrioritizedList: true}

// claimAllocator reads claims, slices and classes, and remembers the
// allocations of pods being bound until the informer shows them (kube's
// in-flight allocations).
type claimAllocator struct {
	ctx      context.Context
	claims   resourcelisters.ResourceClaimLister
	slices   resourcelisters.ResourceSliceLister
	classes  resourcelisters.DeviceClassLister
	celCache *cel.Cache

	mu       sync.Mutex
	inFlight map[types.UID]*resourcev1.AllocationResult
}

// podClaims is the PreFilter's view of a pod's claims.
type podClaims struct {
	a *claimAllocator
	// claims are the pod's claims, podClaims the pod's entries naming
	// them.
	claims    []*resourcev1.ResourceClaim
	podClaims []*corev1.PodResourceClaim
	// availableOn are the node selectors of the allocated claims.
	availableOn []*nodeaffinity.NodeSelector
	// toAllocate are the unallocated claims; allocator allocates them.
	toAllocate []*resourcev1.ResourceClaim
	allocator  structured.Allocator
	// results are the allocations Filter found, by node.
	results map[string][]resourcev1.AllocationResult
}

// claimPlan is what PreBind writes for a pod going to a node: its claims,
// and the allocations of those that had none.
type claimPlan struct {
	claims      []*resourcev1.ResourceClaim
	podClaims   []*corev1.PodResourceClaim
	allocations map[types.UID]*resourcev1.AllocationResult
}

// startClaims registers the claim, slice and class informers: any change
// retries the pods DynamicResources rejected; a claim seen allocated ends
// its in-flight allocation.
func (s *Scheduler) startClaims(ctx context.Context, factory informers.SharedInformerFactory) error {
	rc := factory.Resource().V1().ResourceClaims()
	rs := factory.Resource().V1().ResourceSlices()
	dc := factory.Resource().V1().DeviceClasses()
	a := &claimAllocator{
		ctx: ctx, claims: rc.Lister(), slices: rs.Lister(), classes: dc.Lister(),
		celCache: cel.NewCache(10, cel.Features{}),
		inFlight: map[types.UID]*resourcev1.AllocationResult{},
	}
	s.claims = a
	changed := func(any) { s.queue.moveAll(pluginDynamicResources) }
	claimChanged := func(obj any, deleted bool) {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if c, ok := obj.(*resourcev1.ResourceClaim); ok && (deleted || c.Status.Allocation != nil) {
			a.mu.Lock()
			delete(a.inFlight, c.UID)
			a.mu.Unlock()
		}
		s.queue.moveAll(pluginDynamicResources)
	}
	if _, err := rc.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { claimChanged(obj, false) },
		UpdateFunc: func(_, obj any) { claimChanged(obj, false) },
		DeleteFunc: func(obj any) { claimChanged(obj, true) },
	}); err != nil {
		return fmt.Errorf("scheduler: resource claim handler: %w", err)
	}
	handler := toolscache.ResourceEventHandlerFuncs{AddFunc: changed, UpdateFunc: func(_, obj any) { changed(obj) }, DeleteFunc: changed}
	for _, inf := range []toolscache.SharedIndexInformer{rs.Informer(), dc.Informer()} {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return fmt.Errorf("scheduler: dra handler: %w", err)
		}
	}
	return nil
}

// unresolvable is a DynamicResources rejection of every node.
func unresolvable(msg string) *status {
	return &status{codeUnresolvable, pluginDynamicResources, []string{msg}}
}

// preFilter is DynamicResources' PreFilter: nil for a pod without claims.
func (a *claimAllocator) preFilter(pod *corev1.Pod) (*podClaims, *status) {
	if a == nil || len(pod.Spec.ResourceClaims) == 0 {
		return nil, nil
	}
	pc := &podClaims{a: a}
	for i := range pod.Spec.ResourceClaims {
		ref := &pod.Spec.ResourceClaims[i]
		name, checkOwner, err := draclaim.Name(pod, ref)
		if err != nil {
			return nil, unresolvable(err.Error())
		}
		if name == nil {
			continue
		}
		claim, err := a.claims.ResourceClaims(pod.Namespace).Get(*name)
		if err != nil {
			return nil, unresolvable(err.Error())
		}
		if claim.DeletionTimestamp != nil {
			return nil, unresolvable(fmt.Sprintf("resourceclaim %q is being deleted", claim.Name))
		}
		if checkOwner {
			if err := draclaim.IsForPod(pod, claim, false); err != nil {
				return nil, unresolvable(err.Error())
			}
		}
		pc.claims = append(pc.claims, claim)
		pc.podClaims = append(pc.podClaims, ref)
		if alloc := claim.Status.Allocation; alloc != nil {
			if !draclaim.CanBeReserved(claim) && !draclaim.IsReservedForPod(pod, claim, false) {
				return nil, unresolvable(ReasonClaimInUse)
			}
			var sel *nodeaffinity.NodeSelector
			if alloc.NodeSelector != nil {
				if sel, err = nodeaffinity.NewNodeSelector(alloc.NodeSelector); err != nil {
					return nil, unresolvable(fmt.Sprintf("resource claim %s/%s: %v", claim.Namespace, claim.Name, err))
				}
			}
			pc.availableOn = append(pc.availableOn, sel)
			continue
		}
		a.mu.Lock()
		_, busy := a.inFlight[claim.UID]
		a.mu.Unlock()
		if busy {
			return nil, unresolvable(fmt.Sprintf("resource claim %s/%s is in the process of being allocated", claim.Namespace, claim.Name))
		}
		if s := a.checkClasses(claim); s != nil {
			return nil, s
		}
		pc.toAllocate = append(pc.toAllocate, claim)
	}
	if len(pc.toAllocate) == 0 {
		return pc, nil
	}
	slices, err := a.slices.List(labels.Everything())
	if err != nil {
		return nil, unresolvable(err.Error())
	}
	allocator, err := structured.NewAllocator(a.ctx, allocatorFeatures, a.allocatedState(), classLister{a.classes}, slices, a.celCache)
	if err != nil {
		return nil, unresolvable(err.Error())
	}
	pc.allocator = allocator
	pc.results = map[string][]resourcev1.AllocationResult{}
	return pc, nil
}

// classLister is the allocator's view of the DeviceClass lister.
type classLister struct {
	l resourcelisters.DeviceClassLister
}

func (c classLister) List() ([]*resourcev1.DeviceClass, error) { return c.l.List(labels.Everything()) }
func (c classLister) Get(name string) (*resourcev1.DeviceClass, error) {
	return c.l.Get(name)
}

// checkClasses rejects a claim whose requests name a DeviceClass that
// does not exist.
func (a *claimAllocator) checkClasses(claim *resourcev1.ResourceClaim) *status {
	check := func(class, request string) *status {
		if class == "" {
			return unresolvable(fmt.Sprintf("request %s: unsupported request type", request))
		}
		if _, err := a.classes.Get(class); apierrors.IsNotFound(err) {
			return unresolvable(fmt.Sprintf("request %s: device class %s does not exist", request, class))
		}
		return nil
	}
	for _, r := range claim.Spec.Devices.Requests {
		switch {
		case r.Exactly != nil:
			if s := check(r.Exactly.DeviceClassName, r.Name); s != nil {
				return s
			}
		case len(r.FirstAvailable) > 0:
			for _, sub := range r.FirstAvailable {
				if s := check(sub.DeviceClassName, r.Name+"/"+sub.Name); s != nil {
					return s
				}
			}
		default:
			return unresolvable(fmt.Sprintf("resource claim %s/%s, request %s: unknown request type", claim.Namespace, claim.Name, r.Name))
		}
	}
	return nil
}

// allocatedState is every device allocated to a claim, or to a claim of
// a pod being bound; admin access does not take a device.
func (a *claimAllocator) allocatedState() structured.AllocatedState {
	devices := sets.New[structured.DeviceID]()
	add := func(alloc *resourcev1.AllocationResult) {
		for _, r := range alloc.Devices.Results {
			if r.AdminAccess != nil && *r.AdminAccess {
				continue
			}
			devices.Insert(structured.MakeDeviceID(r.Driver, r.Pool, r.Device))
		}
	}
	claims, _ := a.claims.List(labels.Everything())
	for _, c := range claims {
		if c.Status.Allocation != nil {
			add(c.Status.Allocation)
		}
	}
	a.mu.Lock()
	for _, alloc := range a.inFlight {
		add(alloc)
	}
	a.mu.Unlock()
	return structured.AllocatedState{
		AllocatedDevices:         devices,
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
}

// filter is DynamicResources' Filter on one node: the allocated claims
// must be available there and the others allocatable there.
func (pc *podClaims) filter(n *nodeInfo) *status {
	for _, sel := range pc.availableOn {
		if sel != nil && !sel.Match(n.node) {
			return statusClaimNotAvailable
		}
	}
	if pc.allocator == nil {
		return nil
	}
	results, err := pc.allocator.Allocate(pc.a.ctx, n.node, pc.toAllocate)
	switch {
	case errors.Is(err, structured.ErrFailedAllocationOnNode):
		return unresolvable(err.Error())
	case err != nil:
		// A broken CEL expression in a class or claim: kube aborts the
		// attempt with the error; every node gets it here.
		return unresolvable(err.Error())
	case len(results) != len(pc.toAllocate):
		return statusCannotAllocate
	}
	pc.results[n.name] = results
	return nil
}

// reserve is DynamicResources' Reserve for the chosen node: the new
// allocations count as taken until the informer shows them (or the
// binding fails). It returns what PreBind writes.
func (pc *podClaims) reserve(node string) *claimPlan {
	if pc == nil {
		return nil
	}
	plan := &claimPlan{claims: pc.claims, podClaims: pc.podClaims}
	results := pc.results[node]
	if len(results) == 0 {
		return plan
	}
	plan.allocations = map[types.UID]*resourcev1.AllocationResult{}
	pc.a.mu.Lock()
	defer pc.a.mu.Unlock()
	for i, claim := range pc.toAllocate {
		alloc := results[i].DeepCopy()
		plan.allocations[claim.UID] = alloc
		pc.a.inFlight[claim.UID] = alloc
	}
	return plan
}

// unreserve forgets the plan's in-flight allocations and takes the pod
// out of the claims it reserved (kube's Unreserve); the claims stay
// allocated, so the pod, retried, goes where they are.
func (s *Scheduler) unreserve(ctx context.Context, pod *corev1.Pod, plan *claimPlan) {
	if plan == nil {
		return
	}
	a := s.claims
	a.mu.Lock()
	for uid := range plan.allocations {
		delete(a.inFlight, uid)
	}
	a.mu.Unlock()
	for _, claim := range plan.claims {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := s.client.ResourceV1().ResourceClaims(claim.Namespace).Get(ctx, claim.Name, metav1.GetOptions{})
			if err != nil || cur.UID != claim.UID {
				return err
			}
			i := slices.IndexFunc(cur.Status.ReservedFor, func(r resourcev1.ResourceClaimConsumerReference) bool { return r.UID == pod.UID })
			if i < 0 {
				return nil
			}
			cur.Status.ReservedFor = slices.Delete(cur.Status.ReservedFor, i, i+1)
			_, err = s.client.ResourceV1().ResourceClaims(claim.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
			s.log.Error("unreserve resource claim", "pod", podKey(pod.Namespace, pod.Name),
				"err", fmt.Errorf("unreserve claim %s/%s: %w", claim.Namespace, claim.Name, err))
		}
	}
}

// bindClaims is DynamicResources' PreBind: each claim of the pod gets
// the scheduler's finalizer and its allocation (when it had none), and
// the pod in status.reservedFor, retrying on conflicts as kube does.
func (s *Scheduler) bindClaims(ctx context.Context, pod *corev1.Pod, plan *claimPlan) error {
	if plan == nil {
		return nil
	}
	for i, claim := range plan.claims {
		consumer, err := draclaim.BindTo(pod, nil, plan.podClaims[i])
		if err != nil {
			return err
		}
		allocation := plan.allocations[claim.UID]
		refresh := false
		cur := claim.DeepCopy()
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if refresh {
				got, err := s.client.ResourceV1().ResourceClaims(claim.Namespace).Get(ctx, claim.Name, metav1.GetOptions{})
				if err != nil {
					return fmt.Errorf("get updated claim %s/%s after conflict: %w", claim.Namespace, claim.Name, err)
				}
				cur = got
			}
			refresh = true
			if cur.UID != claim.UID || cur.DeletionTimestamp != nil {
				return fmt.Errorf("claim %s/%s got deleted in the meantime", claim.Namespace, claim.Name)
			}
			if allocation != nil {
				if cur.Status.Allocation != nil {
					return fmt.Errorf("claim %s/%s got allocated elsewhere in the meantime", claim.Namespace, claim.Name)
				}
				if !slices.Contains(cur.Finalizers, resourcev1.Finalizer) {
					cur.Finalizers = append(cur.Finalizers, resourcev1.Finalizer)
					updated, err := s.client.ResourceV1().ResourceClaims(cur.Namespace).Update(ctx, cur, metav1.UpdateOptions{})
					if err != nil {
						return fmt.Errorf("add finalizer to claim %s/%s: %w", cur.Namespace, cur.Name, err)
					}
					cur = updated
				}
				cur.Status.Allocation = allocation
			} else if cur.Status.Allocation == nil {
				return fmt.Errorf("claim %s/%s got deallocated elsewhere in the meantime", claim.Namespace, claim.Name)
			}
			reserved := draclaim.IsReservedForPod(pod, cur, false)
			if reserved && allocation == nil {
				return nil
			}
			if !reserved {
				cur.Status.ReservedFor = append(cur.Status.ReservedFor, consumer)
			}
			updated, err := s.client.ResourceV1().ResourceClaims(cur.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
			if err != nil {
				if allocation != nil {
					return fmt.Errorf("add allocation and reservation to claim %s/%s: %w", cur.Namespace, cur.Name, err)
				}
				return fmt.Errorf("add reservation to claim %s/%s: %w", cur.Namespace, cur.Name, err)
			}
			cur = updated
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
