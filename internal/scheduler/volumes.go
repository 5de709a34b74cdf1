package scheduler

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	toolscache "k8s.io/client-go/tools/cache"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	pvutil "minik/internal/controllers/persistentvolume"
)

// This file is kube-scheduler's VolumeBinding plugin, simplified: a pod
// whose PersistentVolumeClaims do not exist, or whose Immediate claims are
// not bound yet, fits no node (PreFilter); a node fits when the volumes of
// the pod's bound claims are reachable from it, and its WaitForFirstConsumer
// claims can be served there by an available volume or by provisioning
// (Filter). Before binding the pod (PreBind), the scheduler binds such a
// volume to the claim, or asks for provisioning on the chosen node with
// the volume.kubernetes.io/selected-node annotation, then waits for the
// claims to be Bound.

// Reasons, worded as kube-scheduler's VolumeBinding plugin words them.
const (
	ReasonUnboundImmediateClaims = "pod has unbound immediate PersistentVolumeClaims"
	ReasonVolumeNodeConflict     = "node(s) had volume node affinity conflict"
	ReasonVolumeBindConflict     = "node(s) didn't find available persistent volumes to bind"
	ReasonVolumeNotExist         = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)

// volumeBindTimeout bounds the wait for a pod's claims to be bound, as
// kube-scheduler's bindTimeoutSeconds.
const volumeBindTimeout = 10 * time.Minute

// volumeBinder reads claims, volumes and classes, and wakes binds waiting
// for claims whenever one changes.
type volumeBinder struct {
	pvcs    corelisters.PersistentVolumeClaimLister
	pvs     corelisters.PersistentVolumeLister
	classes storagelisters.StorageClassLister

	mu      sync.Mutex
	changed chan struct{}
}

// podVolumes is the PreFilter's view of a pod's claims.
type podVolumes struct {
	// bound are the volumes of the bound claims (nil when missing).
	bound []*corev1.PersistentVolume
	// delayed are the unbound WaitForFirstConsumer claims, provisionable
	// telling, for each, whether its class has a provisioner.
	delayed       []*corev1.PersistentVolumeClaim
	provisionable []bool
	volumes       []*corev1.PersistentVolume
}

// startVolumes registers the claim, volume and class informers: any change
// retries the pods VolumeBinding rejected and wakes waiting binds.
func (s *Scheduler) startVolumes(factory informers.SharedInformerFactory) error {
	pvc := factory.Core().V1().PersistentVolumeClaims()
	pv := factory.Core().V1().PersistentVolumes()
	sc := factory.Storage().V1().StorageClasses()
	s.volumes = &volumeBinder{pvcs: pvc.Lister(), pvs: pv.Lister(), classes: sc.Lister(), changed: make(chan struct{})}
	handler := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.volumesChanged() },
		UpdateFunc: func(_, _ any) { s.volumesChanged() },
		DeleteFunc: func(any) { s.volumesChanged() },
	}
	for _, inf := range []toolscache.SharedIndexInformer{pvc.Informer(), pv.Informer(), sc.Informer()} {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return fmt.Errorf("scheduler: volume handler: %w", err)
		}
	}
	return nil
}

func (s *Scheduler) volumesChanged() {
	v := s.volumes
	v.mu.Lock()
	close(v.changed)
	v.changed = make(chan struct{})
	v.mu.Unlock()
	s.queue.moveAll(pluginVolumeBinding)
}

// wait returns a channel closed at the next change.
func (v *volumeBinder) wait() <-chan struct{} {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.changed
}

// claimNames are the claims a pod's volumes use.
func claimNames(pod *corev1.Pod) []string {
	var names []string
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim != nil {
			names = append(names, vol.PersistentVolumeClaim.ClaimName)
		}
	}
	return names
}

func isDelayed(class *storagev1.StorageClass) bool {
	return class != nil && class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
}

// preFilter reads the pod's claims: nil state for a pod without any, a
// rejection when one is missing, being deleted, or Immediate and unbound.
func (v *volumeBinder) preFilter(pod *corev1.Pod) (*podVolumes, *status) {
	names := claimNames(pod)
	if v == nil || len(names) == 0 {
		return nil, nil
	}
	reject := func(msg string) *status { return &status{codeUnresolvable, pluginVolumeBinding, []string{msg}} }
	pv := &podVolumes{}
	unboundImmediate := false
	for _, name := range names {
		pvc, err := v.pvcs.PersistentVolumeClaims(pod.Namespace).Get(name)
		if err != nil {
			return nil, reject(fmt.Sprintf("persistentvolumeclaim %q not found", name))
		}
		if pvc.DeletionTimestamp != nil {
			return nil, reject(fmt.Sprintf("persistentvolumeclaim %q is being deleted", name))
		}
		if pvc.Spec.VolumeName != "" && pvc.Annotations[pvutil.AnnBindCompleted] != "" {
			vol, err := v.pvs.Get(pvc.Spec.VolumeName)
			if err != nil {
				vol = nil
			}
			pv.bound = append(pv.bound, vol)
			continue
		}
		class, _ := v.classes.Get(storagehelpers.GetPersistentVolumeClaimClass(pvc))
		if !isDelayed(class) {
			unboundImmediate = true
			continue
		}
		pv.delayed = append(pv.delayed, pvc)
		pv.provisionable = append(pv.provisionable, class.Provisioner != pvutil.NoProvisioner)
	}
	if unboundImmediate {
		return nil, reject(ReasonUnboundImmediateClaims)
	}
	if len(pv.delayed) > 0 {
		pv.volumes, _ = v.pvs.List(labels.Everything())
	}
	return pv, nil
}

// filter is VolumeBinding's Filter on one node.
func (pv *podVolumes) filter(n *nodeInfo) *status {
	for _, vol := range pv.bound {
		if vol == nil {
			return &status{codeUnresolvable, pluginVolumeBinding, []string{ReasonVolumeNotExist}}
		}
		if !pvutil.FitsNode(vol, n.node) {
			return &status{codeUnresolvable, pluginVolumeBinding, []string{ReasonVolumeNodeConflict}}
		}
	}
	for i, pvc := range pv.delayed {
		if pv.provisionable[i] || pvutil.FindMatch(pvc, pv.volumes, n.node, true) != nil {
			continue
		}
		return &status{codeUnresolvable, pluginVolumeBinding, []string{ReasonVolumeBindConflict}}
	}
	return nil
}

// bindVolumes is VolumeBinding's PreBind for a pod going to node: each
// unbound WaitForFirstConsumer claim gets an available volume reachable
// from the node, or else the selected-node annotation asking its
// provisioner for one there; then it waits, up to volumeBindTimeout, until
// every claim of the pod is Bound.
func (s *Scheduler) bindVolumes(ctx context.Context, pod *corev1.Pod, nodeName string) error {
	v := s.volumes
	names := claimNames(pod)
	if v == nil || len(names) == 0 {
		return nil
	}
	s.mu.Lock()
	var node *corev1.Node
	if n := s.cache.nodes[nodeName]; n != nil {
		node = n.node
	}
	s.mu.Unlock()
	volumes, err := v.pvs.List(labels.Everything())
	if err != nil {
		return err
	}
	for _, name := range names {
		pvc, err := v.pvcs.PersistentVolumeClaims(pod.Namespace).Get(name)
		if err != nil {
			return err
		}
		class, _ := v.classes.Get(storagehelpers.GetPersistentVolumeClaimClass(pvc))
		if pvc.Spec.VolumeName != "" || !isDelayed(class) {
			continue
		}
		if vol := pvutil.FindMatch(pvc, volumes, node, true); vol != nil {
			if storagehelpers.IsVolumeBoundToClaim(vol, pvc) {
				continue
			}
			next := vol.DeepCopy()
			next.Spec.ClaimRef = pvutil.ClaimRef(pvc)
			metav1.SetMetaDataAnnotation(&next.ObjectMeta, pvutil.AnnBoundByController, "yes")
			if _, err := s.client.CoreV1().PersistentVolumes().Update(ctx, next, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("bind volume %s to claim %s/%s: %w", vol.Name, pvc.Namespace, pvc.Name, err)
			}
			continue
		}
		if pvc.Annotations[pvutil.AnnSelectedNode] == nodeName {
			continue
		}
		next := pvc.DeepCopy()
		metav1.SetMetaDataAnnotation(&next.ObjectMeta, pvutil.AnnSelectedNode, nodeName)
		if _, err := s.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, next, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("select node %s for claim %s/%s: %w", nodeName, pvc.Namespace, pvc.Name, err)
		}
	}
	timeout := s.cfg.Clock.After(volumeBindTimeout)
	for {
		changed := v.wait()
		bound := true
		for _, name := range names {
			pvc, err := v.pvcs.PersistentVolumeClaims(pod.Namespace).Get(name)
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("persistentvolumeclaim %q not found", name)
			}
			if err != nil {
				return err
			}
			bound = bound && pvc.Status.Phase == corev1.ClaimBound
		}
		if bound {
			return nil
		}
		select {
		case <-changed:
		case <-timeout:
			return fmt.Errorf("binding volumes: context deadline exceeded")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
