package replicaset

import (
	"context"
	"fmt"
	"log/slog"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"minik/internal/controllers"
)

// workload is the kind whose replicas the controller keeps: apps/v1
// ReplicaSets, or core/v1 ReplicationControllers. As kube's replication
// manager does (pkg/controller/replication), the sync loop works on
// ReplicaSets only and a ReplicationController is converted to one on
// the way in and back on the way out; nothing else differs.
type workload struct {
	// kind is the kind pods' controller references name.
	kind schema.GroupVersionKind
	// noun names the kind in logs and errors ("replicaset").
	noun string
	// informer is the kind's shared informer.
	informer cache.SharedIndexInformer
	// toRS returns an informer's object as a ReplicaSet, sharing its
	// fields (callers never write it); ok is false for any other object.
	toRS func(obj interface{}) (*appsv1.ReplicaSet, bool)
	// object returns the API object rs was converted from, for events.
	object func(rs *appsv1.ReplicaSet) runtime.Object
	// get reads the object from the API server.
	get func(ctx context.Context, ns, name string) (*appsv1.ReplicaSet, error)
	// updateStatus writes rs's status through the status subresource.
	updateStatus func(ctx context.Context, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error)
	// terminatingReplicas tells whether the kind reports
	// status.terminatingReplicas (ReplicationControllers do not).
	terminatingReplicas bool
}

// replicaSets is the workload of ReplicaSets.
func replicaSets(cc *controllers.Context) *workload {
	client := cc.Client
	return &workload{
		kind:     appsv1.SchemeGroupVersion.WithKind("ReplicaSet"),
		noun:     "replicaset",
		informer: cc.Informers.Apps().V1().ReplicaSets().Informer(),
		toRS: func(obj interface{}) (*appsv1.ReplicaSet, bool) {
			rs, ok := obj.(*appsv1.ReplicaSet)
			return rs, ok
		},
		object: func(rs *appsv1.ReplicaSet) runtime.Object { return rs },
		get: func(ctx context.Context, ns, name string) (*appsv1.ReplicaSet, error) {
			return client.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
		},
		updateStatus: func(ctx context.Context, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
			return client.AppsV1().ReplicaSets(rs.Namespace).UpdateStatus(ctx, rs, metav1.UpdateOptions{})
		},
		terminatingReplicas: true,
	}
}

// replicationControllers is the workload of ReplicationControllers.
func replicationControllers(cc *controllers.Context) *workload {
	client := cc.Client
	return &workload{
		kind:     corev1.SchemeGroupVersion.WithKind("ReplicationController"),
		noun:     "replicationcontroller",
		informer: cc.Informers.Core().V1().ReplicationControllers().Informer(),
		toRS: func(obj interface{}) (*appsv1.ReplicaSet, bool) {
			rc, ok := obj.(*corev1.ReplicationController)
			if !ok {
				return nil, false
			}
			return rcToRS(rc), true
		},
		object: func(rs *appsv1.ReplicaSet) runtime.Object { return rsToRC(rs) },
		get: func(ctx context.Context, ns, name string) (*appsv1.ReplicaSet, error) {
			rc, err := client.CoreV1().ReplicationControllers(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return rcToRS(rc), nil
		},
		updateStatus: func(ctx context.Context, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
			rc, err := client.CoreV1().ReplicationControllers(rs.Namespace).UpdateStatus(ctx, rsToRC(rs), metav1.UpdateOptions{})
			if err != nil {
				return nil, err
			}
			return rcToRS(rc), nil
		},
	}
}

// newWorkloadController builds the controller of w's kind on cc.
func newWorkloadController(cc *controllers.Context, w *workload, queueName, component string) (*Controller, error) {
	c := &Controller{
		w:            w,
		client:       cc.Client,
		recorder:     cc.Recorder(component),
		clock:        cc.Clock,
		log:          cc.Logger,
		expectations: controllers.NewExpectations(cc.Clock),
		queue:        controllers.NewQueue[string](queueName, cc.Clock, nil),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if _, err := w.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addRS,
		UpdateFunc: c.updateRS,
		DeleteFunc: c.deleteRS,
	}); err != nil {
		return nil, fmt.Errorf("%s controller: watch %ss: %w", w.noun, w.noun, err)
	}
	if err := w.informer.AddIndexers(cache.Indexers{controllerUIDIndex: indexByControllerUID}); err != nil {
		return nil, fmt.Errorf("%s controller: index %ss: %w", w.noun, w.noun, err)
	}
	c.rsSynced = w.informer.HasSynced
	c.rsIndexer = w.informer.GetIndexer()

	podInformer := cc.Informers.Core().V1().Pods()
	if _, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addPod,
		UpdateFunc: c.updatePod,
		DeleteFunc: c.deletePod,
	}); err != nil {
		return nil, fmt.Errorf("%s controller: watch pods: %w", w.noun, err)
	}
	// The ReplicaSet and replication controllers share the pod informer,
	// and the index: the first one built adds it.
	if _, ok := podInformer.Informer().GetIndexer().GetIndexers()[podOwnerIndex]; !ok {
		if err := podInformer.Informer().AddIndexers(cache.Indexers{podOwnerIndex: indexPodByOwner}); err != nil {
			return nil, fmt.Errorf("%s controller: index pods: %w", w.noun, err)
		}
	}
	c.podLister = podInformer.Lister()
	c.podIndexer = podInformer.Informer().GetIndexer()
	c.podsSynced = podInformer.Informer().HasSynced
	return c, nil
}

// cached returns the object ns/name from the informer's cache, as a
// ReplicaSet; nil when there is none.
func (c *Controller) cached(ns, name string) *appsv1.ReplicaSet {
	obj, ok, err := c.rsIndexer.GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return nil
	}
	rs, _ := c.w.toRS(obj)
	return rs
}

// rcToRS is a ReplicationController as the ReplicaSet the sync loop
// works on (kube's conversion of the two): its selector becomes
// matchLabels. It shares rc's maps and template.
func rcToRS(rc *corev1.ReplicationController) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: rc.ObjectMeta,
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        rc.Spec.Replicas,
			MinReadySeconds: rc.Spec.MinReadySeconds,
		},
		Status: appsv1.ReplicaSetStatus{
			Replicas:             rc.Status.Replicas,
			FullyLabeledReplicas: rc.Status.FullyLabeledReplicas,
			ReadyReplicas:        rc.Status.ReadyReplicas,
			AvailableReplicas:    rc.Status.AvailableReplicas,
			ObservedGeneration:   rc.Status.ObservedGeneration,
		},
	}
	if rc.Spec.Selector != nil {
		rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: rc.Spec.Selector}
	}
	if rc.Spec.Template != nil {
		rs.Spec.Template = *rc.Spec.Template
	}
	for _, cond := range rc.Status.Conditions {
		rs.Status.Conditions = append(rs.Status.Conditions, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetConditionType(cond.Type), Status: cond.Status,
			LastTransitionTime: cond.LastTransitionTime, Reason: cond.Reason, Message: cond.Message,
		})
	}
	return rs
}

// rsToRC is the ReplicationController a converted ReplicaSet came from,
// with the ReplicaSet's status.
func rsToRC(rs *appsv1.ReplicaSet) *corev1.ReplicationController {
	rc := &corev1.ReplicationController{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ReplicationController"},
		ObjectMeta: rs.ObjectMeta,
		Spec: corev1.ReplicationControllerSpec{
			Replicas:        rs.Spec.Replicas,
			MinReadySeconds: rs.Spec.MinReadySeconds,
			Template:        &rs.Spec.Template,
		},
		Status: corev1.ReplicationControllerStatus{
			Replicas:             rs.Status.Replicas,
			FullyLabeledReplicas: rs.Status.FullyLabeledReplicas,
			ReadyReplicas:        rs.Status.ReadyReplicas,
			AvailableReplicas:    rs.Status.AvailableReplicas,
			ObservedGeneration:   rs.Status.ObservedGeneration,
		},
	}
	if rs.Spec.Selector != nil {
		rc.Spec.Selector = rs.Spec.Selector.MatchLabels
	}
	for _, cond := range rs.Status.Conditions {
		rc.Status.Conditions = append(rc.Status.Conditions, corev1.ReplicationControllerCondition{
			Type: corev1.ReplicationControllerConditionType(cond.Type), Status: cond.Status,
			LastTransitionTime: cond.LastTransitionTime, Reason: cond.Reason, Message: cond.Message,
		})
	}
	return rc
}
