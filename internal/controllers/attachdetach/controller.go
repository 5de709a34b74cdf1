// Package attachdetach is the attach/detach controller for CSI volumes,
// with a simulated external-attacher standing in for every CSI driver's.
//
// The controller (kube-controller-manager's
// persistentvolume-attach-detach-controller) reconciles per node: every
// PersistentVolume with spec.csi, bound to a claim that a pod scheduled to
// the node (and not terminated) uses, whose driver needs attaching
// (csiattach.AttachRequired: its CSIDriver says attachRequired true, or
// there is no CSIDriver object), gets a VolumeAttachment named as kube
// names it (csiattach.AttachmentName) with spec.attacher the driver,
// source.persistentVolumeName and nodeName. When the attacher reports it
// attached, the volume is listed in the node's status.volumesAttached and
// the pods using it get the event SuccessfulAttachVolume ("AttachVolume.
// Attach succeeded for volume ..."); an attachError becomes
// FailedAttachVolume. When no pod on the node uses the volume any more,
// the VolumeAttachment is deleted (detach) and the volume leaves
// volumesAttached at once.
//
// The simulated external-attacher handles the VolumeAttachments of every
// driver that has a CSIDriver object, as if the driver's sidecar were
// deployed: it puts its finalizer (csiattach.FinalizerName) on the
// attachment, then sets status.attached=true with attachment metadata;
// on deletion it sets attached=false and removes its finalizer. An
// attachment of a driver without a CSIDriver object stays unattached
// (nobody attaches it), and the pods using it wait.
//
// Deliberate differences: no wait for the kubelet's volumesInUse before
// detaching (kube waits up to 6 minutes for the unmount), no inline CSI
// volumes (only PersistentVolumes), no PV finalizer from the attacher.
package attachdetach

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"minik/internal/controllers"
)

// Name is the controller's name in --controllers.
const Name = "persistentvolume-attach-detach-controller"

// Component is the source of the controller's events.
const Component = "attachdetach-controller"

// AttacherComponent is the source of the simulated attacher's events.
const AttacherComponent = "csi-attacher"

// Event reasons, kube's.
const (
	// ReasonSuccessfulAttachVolume: a pod's volume was attached.
	ReasonSuccessfulAttachVolume = "SuccessfulAttachVolume"
	// ReasonFailedAttachVolume: attaching a pod's volume failed.
	ReasonFailedAttachVolume = "FailedAttachVolume"
)

// Controller is the attach/detach controller and the simulated attacher.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	log      *slog.Logger

	podLister      corelisters.PodLister
	podsSynced     cache.InformerSynced
	nodeLister     corelisters.NodeLister
	nodesSynced    cache.InformerSynced
	pvLister       corelisters.PersistentVolumeLister
	pvsSynced      cache.InformerSynced
	pvcLister      corelisters.PersistentVolumeClaimLister
	pvcsSynced     cache.InformerSynced
	driverLister   storagelisters.CSIDriverLister
	driversSynced  cache.InformerSynced
	vaLister       storagelisters.VolumeAttachmentLister
	vasSynced      cache.InformerSynced
	queue          workqueue.TypedRateLimitingInterface[string]
	attacherQueue  workqueue.TypedRateLimitingInterface[string]
	attacherEvents record.EventRecorder

	// reported remembers, per VolumeAttachment, the last outcome told to
	// its pods (attached, or the error message), so that each is told
	// once.
	mu       sync.Mutex
	reported map[string]string
}

// New builds the controller on cc's shared informers. It implements
// controllers.Constructor.
func New(cc *controllers.Context) (controllers.Controller, error) {
	limiter := func() workqueue.TypedRateLimiter[string] {
		return workqueue.NewTypedItemExponentialFailureRateLimiter[string](10*time.Millisecond, 100*time.Second)
	}
	c := &Controller{
		client:         cc.Client,
		recorder:       cc.Recorder(Component),
		attacherEvents: cc.Recorder(AttacherComponent),
		log:            cc.Logger,
		queue:          controllers.NewQueue(Name, cc.Clock, limiter()),
		attacherQueue:  controllers.NewQueue(Name+"-attacher", cc.Clock, limiter()),
		reported:       map[string]string{},
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	f := cc.Informers
	pods := f.Core().V1().Pods()
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.podChanged,
		UpdateFunc: func(oldObj, obj interface{}) {
			c.podChanged(oldObj)
			c.podChanged(obj)
		},
		DeleteFunc: c.podChanged,
	}); err != nil {
		return nil, fmt.Errorf("attachdetach controller: watch pods: %w", err)
	}
	c.podLister, c.podsSynced = pods.Lister(), pods.Informer().HasSynced

	nodes := f.Core().V1().Nodes()
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			if n, ok := obj.(*corev1.Node); ok {
				c.queue.Add(n.Name)
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("attachdetach controller: watch nodes: %w", err)
	}
	c.nodeLister, c.nodesSynced = nodes.Lister(), nodes.Informer().HasSynced

	// A claim bound, a volume or a driver changed: any node may care.
	all := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { c.queueAllNodes() },
		UpdateFunc: func(_, _ interface{}) { c.queueAllNodes() },
		DeleteFunc: func(interface{}) { c.queueAllNodes() },
	}
	pvs := f.Core().V1().PersistentVolumes()
	if _, err := pvs.Informer().AddEventHandler(all); err != nil {
		return nil, fmt.Errorf("attachdetach controller: watch persistentvolumes: %w", err)
	}
	c.pvLister, c.pvsSynced = pvs.Lister(), pvs.Informer().HasSynced
	pvcs := f.Core().V1().PersistentVolumeClaims()
	if _, err := pvcs.Informer().AddEventHandler(all); err != nil {
		return nil, fmt.Errorf("attachdetach controller: watch persistentvolumeclaims: %w", err)
	}
	c.pvcLister, c.pvcsSynced = pvcs.Lister(), pvcs.Informer().HasSynced
	drivers := f.Storage().V1().CSIDrivers()
	if _, err := drivers.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(interface{}) {
			c.queueAllNodes()
			c.queueAllAttachments()
		},
		UpdateFunc: func(_, _ interface{}) { c.queueAllNodes() },
		DeleteFunc: func(interface{}) { c.queueAllNodes() },
	}); err != nil {
		return nil, fmt.Errorf("attachdetach controller: watch csidrivers: %w", err)
	}
	c.driverLister, c.driversSynced = drivers.Lister(), drivers.Informer().HasSynced

	vas := f.Storage().V1().VolumeAttachments()
	vaChanged := func(obj interface{}) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		va, ok := obj.(*storagev1.VolumeAttachment)
		if !ok {
			return
		}
		c.queue.Add(va.Spec.NodeName)
		c.attacherQueue.Add(va.Name)
	}
	if _, err := vas.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    vaChanged,
		UpdateFunc: func(_, obj interface{}) { vaChanged(obj) },
		DeleteFunc: vaChanged,
	}); err != nil {
		return nil, fmt.Errorf("attachdetach controller: watch volumeattachments: %w", err)
	}
	c.vaLister, c.vasSynced = vas.Lister(), vas.Informer().HasSynced
	return c, nil
}

// Run reconciles nodes and, as the simulated attacher, attachments, each
// with workers goroutines, until ctx is done; it returns once every
// worker has stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	synced := []cache.InformerSynced{c.podsSynced, c.nodesSynced, c.pvsSynced, c.pvcsSynced, c.driversSynced, c.vasSynced}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		controllers.Workers[string]{
			Synced: synced, Queue: c.queue, Reconcile: c.syncNode, Logger: c.log, MaxRetries: 15,
			OnError: func(key string, err error) { c.log.Info("sync failed, will retry", "node", key, "err", err) },
		}.Run(ctx, workers)
	}()
	go func() {
		defer wg.Done()
		controllers.Workers[string]{
			Synced: synced, Queue: c.attacherQueue, Reconcile: c.syncAttachment, Logger: c.log, MaxRetries: 15,
			OnError: func(key string, err error) {
				c.log.Info("attacher sync failed, will retry", "volumeattachment", key, "err", err)
			},
		}.Run(ctx, workers)
	}()
	wg.Wait()
}

func (c *Controller) podChanged(obj interface{}) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if pod, ok := obj.(*corev1.Pod); ok && pod.Spec.NodeName != "" {
		c.queue.Add(pod.Spec.NodeName)
	}
}

func (c *Controller) queueAllNodes() {
	nodes, err := c.nodeLister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, n := range nodes {
		c.queue.Add(n.Name)
	}
}

func (c *Controller) queueAllAttachments() {
	vas, err := c.vaLister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, va := range vas {
		c.attacherQueue.Add(va.Name)
	}
}
