// Package persistentvolume is minik's persistent volume controller, as
// kube-controller-manager's "persistentvolume-binder": it binds each
// PersistentVolumeClaim to a PersistentVolume that serves it (size, access
// modes, class, volume mode, selector, or the volume the claim or the
// volume names), records the binding with kube's annotations
// (pv.kubernetes.io/bind-completed, pv.kubernetes.io/bound-by-controller),
// keeps the phases (claims Pending, Bound, Lost; volumes Pending,
// Available, Bound, Released, Failed), and reclaims released volumes:
// Retain leaves them Released, Delete removes the ones a provisioner made.
//
// A claim no volume serves is provisioned when its class names a
// provisioner: the controller annotates it for the provisioner
// (volume.kubernetes.io/storage-provisioner) and records
// ExternalProvisioning, as kube does for external provisioners. minik's
// own simulated provisioner, minik.dev/hostpath, runs here: it creates a
// hostPath volume pre-bound to the claim (nothing is written to disk) and
// records Provisioning and ProvisioningSucceeded. A claim of a
// WaitForFirstConsumer class waits, with the WaitForFirstConsumer event,
// until the scheduler picks a node for its first pod
// (volume.kubernetes.io/selected-node); the provisioned volume is then
// pinned to that node. A claim with no class gets the default class when
// one appears (kube's retroactive default), else FailedBinding.
//
// Claims and volumes have a rate-limited workqueue each, fed by their
// informers; a new or freed volume, or a new class, requeues the pending
// claims.
package persistentvolume

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
)

// Name is the controller's name in --controllers.
const Name = "persistentvolume-binder"

// Event reasons, as kube's persistent volume controller and external
// provisioners record them.
const (
	EventWaitForFirstConsumer  = "WaitForFirstConsumer"
	EventFailedBinding         = "FailedBinding"
	EventVolumeMismatch        = "VolumeMismatch"
	EventExternalProvisioning  = "ExternalProvisioning"
	EventProvisioning          = "Provisioning"
	EventProvisioningSucceeded = "ProvisioningSucceeded"
	EventProvisioningFailed    = "ProvisioningFailed"
	EventClaimLost             = "ClaimLost"
	EventClaimMisbound         = "ClaimMisbound"
	EventVolumeFailedDelete    = "VolumeFailedDelete"
	EventVolumeFailedRecycle   = "VolumeFailedRecycle"
)

// Controller binds claims to volumes and provisions minik.dev/hostpath
// volumes.
type Controller struct {
	client      kubernetes.Interface
	logger      *slog.Logger
	clock       clock.PassiveClock
	recorder    record.EventRecorder
	provisioner record.EventRecorder

	pvLister  corelisters.PersistentVolumeLister
	pvSynced  cache.InformerSynced
	pvcLister corelisters.PersistentVolumeClaimLister
	pvcSynced cache.InformerSynced
	scLister  storagelisters.StorageClassLister
	scSynced  cache.InformerSynced

	claims  workqueue.TypedRateLimitingInterface[string]
	volumes workqueue.TypedRateLimitingInterface[string]
}

// New builds the controller from the controller manager's context,
// registering its informers (PersistentVolumes, PersistentVolumeClaims,
// StorageClasses). It has the controllers.Constructor signature.
func New(cc *controllers.Context) (controllers.Controller, error) {
	return NewController(cc)
}

// NewController is New with the concrete type.
func NewController(cc *controllers.Context) (*Controller, error) {
	switch {
	case cc == nil:
		return nil, errors.New(Name + ": a controller context is required")
	case cc.Client == nil:
		return nil, errors.New(Name + ": a client is required")
	case cc.Informers == nil:
		return nil, errors.New(Name + ": an informer factory is required")
	case cc.Recorder == nil:
		return nil, errors.New(Name + ": an event recorder is required")
	}
	logger := cc.Logger
	if logger == nil {
		logger = slog.Default()
	}
	var clk clock.PassiveClock = clock.RealClock{}
	if cc.Clock != nil {
		clk = cc.Clock
	}
	pvInf := cc.Informers.Core().V1().PersistentVolumes()
	pvcInf := cc.Informers.Core().V1().PersistentVolumeClaims()
	scInf := cc.Informers.Storage().V1().StorageClasses()
	queue := func(name string) workqueue.TypedRateLimitingInterface[string] {
		cfg := workqueue.TypedRateLimitingQueueConfig[string]{Name: name}
		if cc.Clock != nil {
			cfg.Clock = cc.Clock
		}
		return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](), cfg)
	}
	c := &Controller{
		client:      cc.Client,
		logger:      logger,
		clock:       clk,
		recorder:    cc.Recorder("persistentvolume-controller"),
		provisioner: cc.Recorder(HostPathProvisioner),
		pvLister:    pvInf.Lister(),
		pvSynced:    pvInf.Informer().HasSynced,
		pvcLister:   pvcInf.Lister(),
		pvcSynced:   pvcInf.Informer().HasSynced,
		scLister:    scInf.Lister(),
		scSynced:    scInf.Informer().HasSynced,
		claims:      queue("claims"),
		volumes:     queue("volumes"),
	}
	if _, err := pvcInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueClaim,
		UpdateFunc: func(_, obj any) { c.enqueueClaim(obj) },
		DeleteFunc: c.claimDeleted,
	}); err != nil {
		return nil, fmt.Errorf("%s: claim handler: %w", Name, err)
	}
	if _, err := pvInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueVolume,
		UpdateFunc: func(_, obj any) { c.enqueueVolume(obj) },
		DeleteFunc: c.volumeDeleted,
	}); err != nil {
		return nil, fmt.Errorf("%s: volume handler: %w", Name, err)
	}
	if _, err := scInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.enqueuePendingClaims() },
		UpdateFunc: func(_, _ any) { c.enqueuePendingClaims() },
	}); err != nil {
		return nil, fmt.Errorf("%s: class handler: %w", Name, err)
	}
	return c, nil
}

func (c *Controller) enqueueClaim(obj any) {
	if pvc, ok := controllers.Deleted[*corev1.PersistentVolumeClaim](obj); ok {
		c.claims.Add(pvc.Namespace + "/" + pvc.Name)
	}
}

// claimDeleted syncs the volume the claim was bound to: it is released.
func (c *Controller) claimDeleted(obj any) {
	pvc, ok := controllers.Deleted[*corev1.PersistentVolumeClaim](obj)
	if !ok {
		return
	}
	if pvc.Spec.VolumeName != "" {
		c.volumes.Add(pvc.Spec.VolumeName)
	}
}

func (c *Controller) enqueueVolume(obj any) {
	pv, ok := controllers.Deleted[*corev1.PersistentVolume](obj)
	if !ok {
		return
	}
	c.volumes.Add(pv.Name)
	if ref := pv.Spec.ClaimRef; ref != nil {
		c.claims.Add(ref.Namespace + "/" + ref.Name)
	} else {
		c.enqueuePendingClaims()
	}
}

// volumeDeleted syncs the claim bound to a deleted volume: it is lost.
func (c *Controller) volumeDeleted(obj any) {
	if pv, ok := controllers.Deleted[*corev1.PersistentVolume](obj); ok && pv.Spec.ClaimRef != nil {
		c.claims.Add(pv.Spec.ClaimRef.Namespace + "/" + pv.Spec.ClaimRef.Name)
	}
}

// enqueuePendingClaims queues the claims not yet bound: a volume or a
// class they may use has appeared.
func (c *Controller) enqueuePendingClaims() {
	claims, err := c.pvcLister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, pvc := range claims {
		if pvc.Status.Phase != corev1.ClaimBound {
			c.claims.Add(pvc.Namespace + "/" + pvc.Name)
		}
	}
}

// Run reconciles claims and volumes, each with workers, until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer c.claims.ShutDown()
	defer c.volumes.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), c.pvSynced, c.pvcSynced, c.scSynced) {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		controllers.Workers[string]{Queue: c.volumes, Reconcile: c.syncVolume, MaxRetries: 15,
			OnError: func(key string, err error) { c.logger.Warn("sync persistent volume", "volume", key, "err", err) },
		}.Run(ctx, workers)
	}()
	controllers.Workers[string]{Queue: c.claims, Reconcile: c.syncClaim, MaxRetries: 15,
		OnError: func(key string, err error) { c.logger.Warn("sync persistent volume claim", "claim", key, "err", err) },
	}.Run(ctx, workers)
	<-done
}

// ---- claims ----

func (c *Controller) syncClaim(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pvc, err := c.pvcLister.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if pvc.Annotations[AnnBindCompleted] == "" {
		return c.syncUnboundClaim(ctx, pvc)
	}
	return c.syncBoundClaim(ctx, pvc)
}

func (c *Controller) syncUnboundClaim(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	if pvc.Spec.VolumeName != "" {
		return c.syncPrebound(ctx, pvc)
	}
	class, err := c.claimClass(pvc)
	if err != nil {
		return err
	}
	delay := class != nil && class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
	volumes, err := c.pvLister.List(labels.Everything())
	if err != nil {
		return err
	}
	if pv := FindMatch(pvc, volumes, nil, delay); pv != nil {
		return c.bind(ctx, pv, pvc)
	}
	node := pvc.Annotations[AnnSelectedNode]
	switch {
	case delay && node == "":
		c.recorder.Event(pvc, corev1.EventTypeNormal, EventWaitForFirstConsumer, "waiting for first consumer to be created before binding")
	case storagehelpers.GetPersistentVolumeClaimClass(pvc) == "":
		if pvc.Spec.StorageClassName == nil {
			if assigned, err := c.assignDefaultClass(ctx, pvc); assigned || err != nil {
				return err
			}
		}
		c.recorder.Event(pvc, corev1.EventTypeNormal, EventFailedBinding, "no persistent volumes available for this claim and no storage class is set")
	case class == nil:
		c.recorder.Event(pvc, corev1.EventTypeWarning, EventProvisioningFailed, fmt.Sprintf("storageclass.storage.k8s.io %q not found", storagehelpers.GetPersistentVolumeClaimClass(pvc)))
	case class.Provisioner == NoProvisioner:
		c.recorder.Event(pvc, corev1.EventTypeNormal, EventFailedBinding, "no persistent volumes available for this claim and no storage class is set")
	default:
		if err := c.provision(ctx, pvc, class, node); err != nil {
			return err
		}
	}
	return c.setClaimPhase(ctx, pvc, corev1.ClaimPending, nil)
}

// claimClass is the StorageClass a claim names, nil when it names none or
// one that does not exist.
func (c *Controller) claimClass(pvc *corev1.PersistentVolumeClaim) (*storagev1.StorageClass, error) {
	name := storagehelpers.GetPersistentVolumeClaimClass(pvc)
	if name == "" {
		return nil, nil
	}
	sc, err := c.scLister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return sc, err
}

// assignDefaultClass gives a claim without a class the default class, as
// kube's binder does since RetroactiveDefaultStorageClass. It reports
// whether it did.
func (c *Controller) assignDefaultClass(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (bool, error) {
	classes, err := c.scLister.List(labels.Everything())
	if err != nil {
		return false, err
	}
	var def *storagev1.StorageClass
	for _, sc := range classes {
		if sc.Annotations[AnnIsDefaultClass] != "true" && sc.Annotations["storageclass.beta.kubernetes.io/is-default-class"] != "true" {
			continue
		}
		if def == nil || sc.CreationTimestamp.After(def.CreationTimestamp.Time) ||
			sc.CreationTimestamp.Equal(&def.CreationTimestamp) && sc.Name < def.Name {
			def = sc
		}
	}
	if def == nil {
		return false, nil
	}
	next := pvc.DeepCopy()
	next.Spec.StorageClassName = &def.Name
	if _, err := c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, next, metav1.UpdateOptions{}); err != nil {
		return false, fmt.Errorf("assign default class to claim %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	return true, nil
}

// syncPrebound binds a claim to the volume it names, if that volume can
// serve it.
func (c *Controller) syncPrebound(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	pv, err := c.pvLister.Get(pvc.Spec.VolumeName)
	if apierrors.IsNotFound(err) {
		return c.setClaimPhase(ctx, pvc, corev1.ClaimPending, nil)
	}
	if err != nil {
		return err
	}
	switch {
	case pv.Spec.ClaimRef == nil:
		if why := Mismatch(pv, pvc); why != "" {
			c.recorder.Event(pvc, corev1.EventTypeWarning, EventVolumeMismatch, fmt.Sprintf("Cannot bind to requested volume %q: %s", pv.Name, why))
			return c.setClaimPhase(ctx, pvc, corev1.ClaimPending, nil)
		}
		return c.bind(ctx, pv, pvc)
	case storagehelpers.IsVolumeBoundToClaim(pv, pvc):
		return c.bind(ctx, pv, pvc)
	default:
		c.recorder.Event(pvc, corev1.EventTypeWarning, EventFailedBinding, fmt.Sprintf("volume %q already bound to a different claim.", pv.Name))
		return c.setClaimPhase(ctx, pvc, corev1.ClaimPending, nil)
	}
}

func (c *Controller) syncBoundClaim(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	if pvc.Spec.VolumeName == "" {
		if pvc.Status.Phase != corev1.ClaimLost {
			c.recorder.Event(pvc, corev1.EventTypeWarning, EventClaimLost, "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!")
		}
		return c.setClaimPhase(ctx, pvc, corev1.ClaimLost, nil)
	}
	pv, err := c.pvLister.Get(pvc.Spec.VolumeName)
	if apierrors.IsNotFound(err) {
		if pvc.Status.Phase != corev1.ClaimLost {
			c.recorder.Event(pvc, corev1.EventTypeWarning, EventClaimLost, "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
		}
		return c.setClaimPhase(ctx, pvc, corev1.ClaimLost, nil)
	}
	if err != nil {
		return err
	}
	if pv.Spec.ClaimRef == nil || storagehelpers.IsVolumeBoundToClaim(pv, pvc) {
		return c.bind(ctx, pv, pvc)
	}
	if pvc.Status.Phase != corev1.ClaimLost {
		c.recorder.Event(pvc, corev1.EventTypeWarning, EventClaimMisbound, "Two claims are bound to the same volume, this one is bound incorrectly")
	}
	return c.setClaimPhase(ctx, pvc, corev1.ClaimLost, nil)
}

// bind binds pv and pvc to each other, as kube's binder: the volume's
// claimRef and phase Bound first, then the claim's volumeName and
// annotations, then its phase Bound with the volume's capacity and access
// modes. Each step is skipped when already done.
func (c *Controller) bind(ctx context.Context, pv *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim) error {
	if ref := pv.Spec.ClaimRef; ref == nil || ref.UID != pvc.UID || ref.Namespace != pvc.Namespace || ref.Name != pvc.Name {
		next := pv.DeepCopy()
		if ref == nil {
			metav1.SetMetaDataAnnotation(&next.ObjectMeta, AnnBoundByController, "yes")
		}
		next.Spec.ClaimRef = ClaimRef(pvc)
		updated, err := c.client.CoreV1().PersistentVolumes().Update(ctx, next, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("bind volume %s to claim %s/%s: %w", pv.Name, pvc.Namespace, pvc.Name, err)
		}
		pv = updated
	}
	pv, err := c.setVolumePhase(ctx, pv, corev1.VolumeBound, "")
	if err != nil {
		return err
	}
	if pvc.Spec.VolumeName != pv.Name || pvc.Annotations[AnnBindCompleted] == "" {
		next := pvc.DeepCopy()
		if next.Spec.VolumeName == "" {
			metav1.SetMetaDataAnnotation(&next.ObjectMeta, AnnBoundByController, "yes")
		}
		next.Spec.VolumeName = pv.Name
		metav1.SetMetaDataAnnotation(&next.ObjectMeta, AnnBindCompleted, "yes")
		updated, err := c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, next, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("bind claim %s/%s to volume %s: %w", pvc.Namespace, pvc.Name, pv.Name, err)
		}
		pvc = updated
	}
	return c.setClaimPhase(ctx, pvc, corev1.ClaimBound, pv)
}

// setClaimPhase writes a claim's phase and, bound to pv, the volume's
// capacity and access modes.
func (c *Controller) setClaimPhase(ctx context.Context, pvc *corev1.PersistentVolumeClaim, phase corev1.PersistentVolumeClaimPhase, pv *corev1.PersistentVolume) error {
	next := pvc.DeepCopy()
	next.Status.Phase = phase
	if pv != nil {
		next.Status.AccessModes = pv.Spec.AccessModes
		next.Status.Capacity = pv.Spec.Capacity
	}
	if phase == pvc.Status.Phase && (pv == nil || equalStatus(pvc, next)) {
		return nil
	}
	if _, err := c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status of claim %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	return nil
}

func equalStatus(a, b *corev1.PersistentVolumeClaim) bool {
	if len(a.Status.AccessModes) != len(b.Status.AccessModes) || len(a.Status.Capacity) != len(b.Status.Capacity) {
		return false
	}
	for i := range a.Status.AccessModes {
		if a.Status.AccessModes[i] != b.Status.AccessModes[i] {
			return false
		}
	}
	for k, v := range a.Status.Capacity {
		if w, ok := b.Status.Capacity[k]; !ok || w.Cmp(v) != 0 {
			return false
		}
	}
	return true
}

// ---- provisioning ----

// provision asks the class's provisioner for a volume: the claim is
// annotated for it, and minik's own provisioner creates the volume.
func (c *Controller) provision(ctx context.Context, pvc *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, node string) error {
	if pvc.Annotations[AnnStorageProvisioner] != class.Provisioner {
		next := pvc.DeepCopy()
		metav1.SetMetaDataAnnotation(&next.ObjectMeta, AnnStorageProvisioner, class.Provisioner)
		metav1.SetMetaDataAnnotation(&next.ObjectMeta, AnnBetaStorageProvisioner, class.Provisioner)
		if _, err := c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, next, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("annotate claim %s/%s for provisioner %s: %w", pvc.Namespace, pvc.Name, class.Provisioner, err)
		}
		c.recorder.Event(pvc, corev1.EventTypeNormal, EventExternalProvisioning, fmt.Sprintf(
			"Waiting for a volume to be created either by the external provisioner '%s' or manually by the system administrator. "+
				"If volume creation is delayed, please verify that the provisioner is running and correctly registered.", class.Provisioner))
		// The update brings the claim back, annotated.
		return nil
	}
	if class.Provisioner != HostPathProvisioner {
		return nil
	}
	name := provisionedName(pvc)
	if _, err := c.pvLister.Get(name); err == nil {
		return nil
	}
	c.provisioner.Event(pvc, corev1.EventTypeNormal, EventProvisioning, fmt.Sprintf("External provisioner is provisioning volume for claim \"%s/%s\"", pvc.Namespace, pvc.Name))
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{AnnProvisionedBy: HostPathProvisioner}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: pvc.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   pvc.Spec.AccessModes,
			ClaimRef:                      ClaimRef(pvc),
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              class.Name,
			MountOptions:                  class.MountOptions,
			VolumeMode:                    pvc.Spec.VolumeMode,
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: filepath.Join(hostPathRoot(), name), Type: new(corev1.HostPathDirectoryOrCreate),
			}},
		},
	}
	if class.ReclaimPolicy != nil {
		pv.Spec.PersistentVolumeReclaimPolicy = *class.ReclaimPolicy
	}
	if node != "" {
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}}}}
	}
	_, err := c.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		c.provisioner.Event(pvc, corev1.EventTypeWarning, EventProvisioningFailed, fmt.Sprintf("failed to provision volume with StorageClass %q: %v", class.Name, err))
		return fmt.Errorf("provision volume for claim %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	if err == nil {
		c.provisioner.Event(pvc, corev1.EventTypeNormal, EventProvisioningSucceeded, fmt.Sprintf("Successfully provisioned volume %s", name))
	}
	return nil
}

// ---- volumes ----

func (c *Controller) syncVolume(ctx context.Context, name string) error {
	pv, err := c.pvLister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	ref := pv.Spec.ClaimRef
	if ref == nil {
		_, err = c.setVolumePhase(ctx, pv, corev1.VolumeAvailable, "")
		return err
	}
	if ref.UID == "" {
		// Pre-bound by a user to a claim: the claim's sync binds it.
		c.claims.Add(ref.Namespace + "/" + ref.Name)
		_, err = c.setVolumePhase(ctx, pv, corev1.VolumeAvailable, "")
		return err
	}
	pvc, err := c.pvcLister.PersistentVolumeClaims(ref.Namespace).Get(ref.Name)
	if apierrors.IsNotFound(err) {
		// The cache may lag behind a claim created a moment ago.
		pvc, err = c.client.CoreV1().PersistentVolumeClaims(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if apierrors.IsNotFound(err) || pvc.UID != ref.UID {
		return c.release(ctx, pv)
	}
	switch pvc.Spec.VolumeName {
	case "":
		// The claim's sync completes the binding.
		c.claims.Add(pvc.Namespace + "/" + pvc.Name)
		return nil
	case pv.Name:
		_, err = c.setVolumePhase(ctx, pv, corev1.VolumeBound, "")
		return err
	}
	// The claim is bound to another volume.
	if pv.Annotations[AnnBoundByController] == "" {
		_, err = c.setVolumePhase(ctx, pv, corev1.VolumeAvailable, "")
		return err
	}
	next := pv.DeepCopy()
	next.Spec.ClaimRef = nil
	delete(next.Annotations, AnnBoundByController)
	updated, err := c.client.CoreV1().PersistentVolumes().Update(ctx, next, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("unbind volume %s: %w", pv.Name, err)
	}
	_, err = c.setVolumePhase(ctx, updated, corev1.VolumeAvailable, "")
	return err
}

// release marks a volume whose claim is gone Released and reclaims it:
// Retain keeps it, Delete removes a volume minik provisioned (another
// provisioner's is its to delete), Recycle is not supported.
func (c *Controller) release(ctx context.Context, pv *corev1.PersistentVolume) error {
	if pv.Status.Phase != corev1.VolumeReleased && pv.Status.Phase != corev1.VolumeFailed {
		var err error
		if pv, err = c.setVolumePhase(ctx, pv, corev1.VolumeReleased, ""); err != nil {
			return err
		}
	}
	switch pv.Spec.PersistentVolumeReclaimPolicy {
	case corev1.PersistentVolumeReclaimDelete:
		switch by := pv.Annotations[AnnProvisionedBy]; {
		case by == HostPathProvisioner:
			if pv.DeletionTimestamp != nil {
				return nil
			}
			err := c.client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete released volume %s: %w", pv.Name, err)
			}
		case by == "" && pv.Status.Phase != corev1.VolumeFailed:
			msg := fmt.Sprintf("error getting deleter volume plugin for volume %q: no deletable volume plugin matched", pv.Name)
			c.recorder.Event(pv, corev1.EventTypeWarning, EventVolumeFailedDelete, msg)
			_, err := c.setVolumePhase(ctx, pv, corev1.VolumeFailed, EventVolumeFailedDelete)
			return err
		}
	case corev1.PersistentVolumeReclaimRecycle:
		if pv.Status.Phase != corev1.VolumeFailed {
			c.recorder.Event(pv, corev1.EventTypeWarning, EventVolumeFailedRecycle, "No recycler plugin found for the volume!")
			_, err := c.setVolumePhase(ctx, pv, corev1.VolumeFailed, EventVolumeFailedRecycle)
			return err
		}
	}
	return nil
}

// setVolumePhase writes a volume's phase (and reason), stamping the
// transition time.
func (c *Controller) setVolumePhase(ctx context.Context, pv *corev1.PersistentVolume, phase corev1.PersistentVolumePhase, reason string) (*corev1.PersistentVolume, error) {
	if pv.Status.Phase == phase && pv.Status.Reason == reason {
		return pv, nil
	}
	next := pv.DeepCopy()
	next.Status.Phase, next.Status.Reason, next.Status.Message = phase, reason, ""
	now := metav1.NewTime(c.clock.Now())
	next.Status.LastPhaseTransitionTime = &now
	updated, err := c.client.CoreV1().PersistentVolumes().UpdateStatus(ctx, next, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("update status of volume %s: %w", pv.Name, err)
	}
	return updated, nil
}
