package auth

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// InformerGetter is an ObjectGetter reading informer caches and, on a
// miss, the API (an object created an instant ago may not be cached yet),
// as kube-apiserver's service account token getter does.
type InformerGetter struct {
	client          kubernetes.Interface
	serviceAccounts corelisters.ServiceAccountLister
	pods            corelisters.PodLister
	secrets         corelisters.SecretLister
	nodes           corelisters.NodeLister
}

// NewInformerGetter registers the service account, pod, secret and node
// informers with f; the caller starts f.
func NewInformerGetter(f informers.SharedInformerFactory, client kubernetes.Interface) *InformerGetter {
	core := f.Core().V1()
	return &InformerGetter{
		client:          client,
		serviceAccounts: core.ServiceAccounts().Lister(),
		pods:            core.Pods().Lister(),
		secrets:         core.Secrets().Lister(),
		nodes:           core.Nodes().Lister(),
	}
}

// GetServiceAccount implements ObjectGetter.
func (g *InformerGetter) GetServiceAccount(ctx context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	if sa, err := g.serviceAccounts.ServiceAccounts(ns).Get(name); err == nil {
		return sa, nil
	}
	return g.client.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
}

// GetPod implements ObjectGetter.
func (g *InformerGetter) GetPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	if p, err := g.pods.Pods(ns).Get(name); err == nil {
		return p, nil
	}
	return g.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
}

// GetSecret implements ObjectGetter.
func (g *InformerGetter) GetSecret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	if s, err := g.secrets.Secrets(ns).Get(name); err == nil {
		return s, nil
	}
	return g.client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
}

// GetNode implements ObjectGetter.
func (g *InformerGetter) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	if n, err := g.nodes.Get(name); err == nil {
		return n, nil
	}
	return g.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}
