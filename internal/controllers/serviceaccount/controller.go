// Package serviceaccount is minik's ServiceAccount controller, as
// kube-controller-manager's "serviceaccount" controller: every active
// namespace has a ServiceAccount named "default", recreated if deleted.
//
// It is a client of the API server like any other: Namespace and
// ServiceAccount informers feed a rate-limited workqueue of namespace
// names; each sync is at most one create.
package serviceaccount

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

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
const Name = "serviceaccount"

// DefaultName is the service account every namespace gets.
const DefaultName = "default"

// Controller ensures the default ServiceAccount of every namespace.
type Controller struct {
	client kubernetes.Interface
	logger *slog.Logger

	nsLister corelisters.NamespaceLister
	nsSynced cache.InformerSynced
	saLister corelisters.ServiceAccountLister
	saSynced cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]
}

// New builds the controller from the controller manager's context,
// registering its informers (Namespaces, ServiceAccounts). It has the
// controllers.Constructor signature.
func New(cc *controllers.Context) (controllers.Controller, error) {
	return NewController(cc)
}

// NewController is New with the concrete type.
func NewController(cc *controllers.Context) (*Controller, error) {
	switch {
	case cc == nil:
		return nil, errors.New("serviceaccount controller: a controller context is required")
	case cc.Client == nil:
		return nil, errors.New("serviceaccount controller: a client is required")
	case cc.Informers == nil:
		return nil, errors.New("serviceaccount controller: an informer factory is required")
	}
	logger := cc.Logger
	if logger == nil {
		logger = slog.Default()
	}
	nsInf := cc.Informers.Core().V1().Namespaces()
	saInf := cc.Informers.Core().V1().ServiceAccounts()
	c := &Controller{
		client:   cc.Client,
		logger:   logger,
		nsLister: nsInf.Lister(),
		nsSynced: nsInf.Informer().HasSynced,
		saLister: saInf.Lister(),
		saSynced: saInf.Informer().HasSynced,
		queue:    controllers.NewQueue[string](Name, cc.Clock, nil),
	}
	if _, err := nsInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueNamespace,
		UpdateFunc: func(_, obj any) { c.enqueueNamespace(obj) },
	}); err != nil {
		return nil, fmt.Errorf("serviceaccount controller: namespace handler: %w", err)
	}
	if _, err := saInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: c.deleteServiceAccount,
	}); err != nil {
		return nil, fmt.Errorf("serviceaccount controller: serviceaccount handler: %w", err)
	}
	return c, nil
}

func (c *Controller) enqueueNamespace(obj any) {
	if ns, ok := obj.(*corev1.Namespace); ok {
		c.queue.Add(ns.Name)
	}
}

func (c *Controller) deleteServiceAccount(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if sa, ok := obj.(*corev1.ServiceAccount); ok && sa.Name == DefaultName {
		c.queue.Add(sa.Namespace)
	}
}

// Run reconciles with workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllers.Workers[string]{
		Synced:    []cache.InformerSynced{c.nsSynced, c.saSynced},
		Queue:     c.queue,
		Reconcile: c.sync,
		OnError: func(ns string, err error) {
			c.logger.Warn("ensure default service account", "namespace", ns, "err", err)
		},
	}.Run(ctx, workers)
}

func (c *Controller) sync(ctx context.Context, name string) error {
	ns, err := c.nsLister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.Status.Phase == corev1.NamespaceTerminating || ns.DeletionTimestamp != nil {
		return nil
	}
	if _, err := c.saLister.ServiceAccounts(name).Get(DefaultName); err == nil {
		return nil
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	_, err = c.client.CoreV1().ServiceAccounts(name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultName}}, metav1.CreateOptions{})
	switch {
	case err == nil, apierrors.IsAlreadyExists(err):
		return nil
	case apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return nil
	case apierrors.IsForbidden(err):
		// The namespace began terminating between the read and the write;
		// its next update requeues it if it is still there.
		return nil
	}
	return fmt.Errorf("create serviceaccount %s/%s: %w", name, DefaultName, err)
}
