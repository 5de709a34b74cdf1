// Package rootcacertpublisher is minik's root CA publisher, as
// kube-controller-manager's "root-ca-cert-publisher" controller: every
// namespace that is not terminating has a ConfigMap "kube-root-ca.crt"
// whose "ca.crt" is the cluster's CA certificate, so that pods can verify
// the API server. A deleted ConfigMap is recreated; one whose data or
// description annotation was changed is put back.
//
// Namespace and ConfigMap informers feed a rate-limited workqueue of
// namespace names; each sync is at most one create or one update.
package rootcacertpublisher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"minik/internal/controllers"
)

// Name is the controller's name in --controllers.
const Name = "root-ca-cert-publisher"

const (
	// ConfigMapName is the ConfigMap every namespace gets.
	ConfigMapName = "kube-root-ca.crt"
	// DataKey is the ConfigMap's key holding the CA bundle.
	DataKey = "ca.crt"
	// DescriptionAnnotation is the annotation describing the ConfigMap.
	DescriptionAnnotation = "kubernetes.io/description"
	// Description is kube's text for DescriptionAnnotation.
	Description = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// Controller publishes the root CA in every namespace.
type Controller struct {
	client kubernetes.Interface
	logger *slog.Logger
	rootCA string

	nsLister corelisters.NamespaceLister
	nsSynced cache.InformerSynced
	cmLister corelisters.ConfigMapLister
	cmSynced cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

// New builds the controller from the controller manager's context,
// registering its informers (Namespaces, ConfigMaps). It has the
// controllers.Constructor signature.
func New(cc *controllers.Context) (controllers.Controller, error) {
	return NewController(cc)
}

// NewController is New with the concrete type. The context's RootCA is
// required.
func NewController(cc *controllers.Context) (*Controller, error) {
	switch {
	case cc == nil:
		return nil, errors.New("root-ca-cert-publisher: a controller context is required")
	case cc.Client == nil:
		return nil, errors.New("root-ca-cert-publisher: a client is required")
	case cc.Informers == nil:
		return nil, errors.New("root-ca-cert-publisher: an informer factory is required")
	case len(cc.RootCA) == 0:
		return nil, errors.New("root-ca-cert-publisher: the root CA certificate is required")
	}
	logger := cc.Logger
	if logger == nil {
		logger = slog.Default()
	}
	nsInf := cc.Informers.Core().V1().Namespaces()
	cmInf := cc.Informers.Core().V1().ConfigMaps()
	c := &Controller{
		client:   cc.Client,
		logger:   logger,
		rootCA:   string(cc.RootCA),
		nsLister: nsInf.Lister(),
		nsSynced: nsInf.Informer().HasSynced,
		cmLister: cmInf.Lister(),
		cmSynced: cmInf.Informer().HasSynced,
		queue:    controllers.NewQueue[string]("root_ca_cert_publisher", cc.Clock, nil),
	}
	if _, err := nsInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueNamespace,
		UpdateFunc: func(_, obj any) { c.enqueueNamespace(obj) },
	}); err != nil {
		return nil, fmt.Errorf("root-ca-cert-publisher: namespace handler: %w", err)
	}
	if _, err := cmInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { c.enqueueConfigMap(obj) },
		DeleteFunc: c.enqueueConfigMap,
	}); err != nil {
		return nil, fmt.Errorf("root-ca-cert-publisher: configmap handler: %w", err)
	}
	return c, nil
}

func (c *Controller) enqueueNamespace(obj any) {
	if ns, ok := obj.(*corev1.Namespace); ok && !terminating(ns) {
		c.queue.Add(ns.Name)
	}
}

// enqueueConfigMap queues the namespace of an updated or deleted
// kube-root-ca.crt, whoever changed it.
func (c *Controller) enqueueConfigMap(obj any) {
	if cm, ok := controllers.Deleted[*corev1.ConfigMap](obj); ok && cm.Name == ConfigMapName {
		c.queue.Add(cm.Namespace)
	}
}

func terminating(ns *corev1.Namespace) bool {
	return ns.Status.Phase == corev1.NamespaceTerminating || ns.DeletionTimestamp != nil
}

// Run reconciles with workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllers.Workers[string]{
		Synced:    []cache.InformerSynced{c.nsSynced, c.cmSynced},
		Queue:     c.queue,
		Reconcile: c.sync,
		OnError: func(ns string, err error) {
			c.logger.Warn("publish root CA", "namespace", ns, "err", err)
		},
	}.Run(ctx, workers)
}

// sync makes namespace name's kube-root-ca.crt hold the root CA and the
// description, creating it if missing.
func (c *Controller) sync(ctx context.Context, name string) error {
	ns, err := c.nsLister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if terminating(ns) {
		return nil
	}
	want := map[string]string{DataKey: c.rootCA}
	cm, err := c.cmLister.ConfigMaps(name).Get(ConfigMapName)
	switch {
	case apierrors.IsNotFound(err):
		_, err = c.client.CoreV1().ConfigMaps(name).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name:        ConfigMapName,
				Annotations: map[string]string{DescriptionAnnotation: Description},
			},
			Data: want,
		}, metav1.CreateOptions{})
		switch {
		case err == nil, apierrors.IsAlreadyExists(err):
			// Already there: its add (or an update) is in the cache soon,
			// and an update requeues it if it needs repair.
			return nil
		case apierrors.IsNotFound(err), apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
			// The namespace went away or began terminating since the read.
			return nil
		}
		return fmt.Errorf("create configmap %s/%s: %w", name, ConfigMapName, err)
	case err != nil:
		return err
	}
	// Only the data and the one annotation are the controller's: labels,
	// other annotations and binaryData a user adds stay, as in kube.
	if maps.Equal(cm.Data, want) && cm.Annotations[DescriptionAnnotation] != "" {
		return nil
	}
	cm = cm.DeepCopy()
	cm.Data = want
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[DescriptionAnnotation] = Description
	if _, err := c.client.CoreV1().ConfigMaps(name).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update configmap %s/%s: %w", name, ConfigMapName, err)
	}
	return nil
}
