package dataplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// Events of the LoadBalancer controller, a cloud provider's service
// controller's reasons and messages.
const (
	ReasonEnsuringLoadBalancer   = "EnsuringLoadBalancer"
	ReasonEnsuredLoadBalancer    = "EnsuredLoadBalancer"
	ReasonDeletingLoadBalancer   = "DeletingLoadBalancer"
	ReasonDeletedLoadBalancer    = "DeletedLoadBalancer"
	ReasonSyncLoadBalancerFailed = "SyncLoadBalancerFailed"
)

// loadBalancerSource is the events' source component, the cloud
// controller manager's service controller.
const loadBalancerSource = "service-controller"

// loadBalancers is minik's service load balancer, in the manner of k3s's
// ServiceLB and cloud-provider-kind: every Service of type LoadBalancer
// (without a spec.loadBalancerClass, which names another implementation)
// gets a loopback address from the pool in status.loadBalancer.ingress
// (spec.loadBalancerIP when it is free in the pool, else the lowest free
// one), and the Service proxy answers its ports there. The address is
// released, and the status cleared, when the Service stops being one.
// One worker: allocations never race.
type loadBalancers struct {
	client   kubernetes.Interface
	services corelisters.ServiceLister
	pool     netip.Prefix
	exclude  netip.Addr
	log      *slog.Logger
	queue    workqueue.TypedRateLimitingInterface[types.NamespacedName]
	events   record.EventBroadcaster
	recorder record.EventRecorder

	mu sync.Mutex
	// assigned are the addresses given out, by Service: the lister may
	// not have seen the last status written yet.
	assigned map[types.NamespacedName]netip.Addr
}

func newLoadBalancers(client kubernetes.Interface, services corelisters.ServiceLister, pool netip.Prefix, exclude netip.Addr, log *slog.Logger) *loadBalancers {
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	return &loadBalancers{
		client: client, services: services, pool: pool.Masked(), exclude: exclude, log: log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "service-lb"}),
		events:   b,
		recorder: b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: loadBalancerSource}),
		assigned: map[types.NamespacedName]netip.Addr{},
	}
}

// run works the queue until ctx is done.
func (l *loadBalancers) run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		l.queue.ShutDown()
	}()
	for {
		key, quit := l.queue.Get()
		if quit {
			return
		}
		if err := l.sync(ctx, key); err != nil {
			if ctx.Err() == nil {
				l.log.Info("load balancer not synced; will retry", "service", key, "err", err)
			}
			l.queue.AddRateLimited(key)
		} else {
			l.queue.Forget(key)
		}
		l.queue.Done(key)
	}
}

// shutDown stops the queue and the event broadcaster.
func (l *loadBalancers) shutDown() {
	l.queue.ShutDown()
	l.events.Shutdown()
}

// ours reports whether this controller serves svc's load balancer.
func ours(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.LoadBalancerClass == nil
}

// errPoolExhausted: every address of the pool is given out.
var errPoolExhausted = errors.New("no address left")

// sync gives a LoadBalancer Service its address, or takes it back.
func (l *loadBalancers) sync(ctx context.Context, key types.NamespacedName) error {
	svc, err := l.services.Services(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		l.release(key)
		return nil
	}
	if err != nil {
		return err
	}
	if !ours(svc) {
		l.release(key)
		if !l.holdsPoolAddress(svc) {
			return nil
		}
		l.recorder.Event(svc, corev1.EventTypeNormal, ReasonDeletingLoadBalancer, "Deleting load balancer")
		if err := l.writeStatus(ctx, key, corev1.LoadBalancerStatus{}); err != nil {
			return err
		}
		l.recorder.Event(svc, corev1.EventTypeNormal, ReasonDeletedLoadBalancer, "Deleted load balancer")
		return nil
	}
	ip, err := l.allocate(key, svc)
	if err != nil {
		l.recorder.Event(svc, corev1.EventTypeWarning, ReasonSyncLoadBalancerFailed,
			fmt.Sprintf("Error syncing load balancer: failed to ensure load balancer: %v", err))
		return err
	}
	want := corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: ip.String(), IPMode: ptr.To(corev1.LoadBalancerIPModeVIP)}}}
	if equality.Semantic.DeepEqual(svc.Status.LoadBalancer, want) {
		return nil
	}
	l.recorder.Event(svc, corev1.EventTypeNormal, ReasonEnsuringLoadBalancer, "Ensuring load balancer")
	if err := l.writeStatus(ctx, key, want); err != nil {
		return err
	}
	l.recorder.Event(svc, corev1.EventTypeNormal, ReasonEnsuredLoadBalancer, "Ensured load balancer")
	return nil
}

// holdsPoolAddress reports whether svc's status names a pool address.
func (l *loadBalancers) holdsPoolAddress(svc *corev1.Service) bool {
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(ing.IP); err == nil && l.pool.Contains(a) {
			return true
		}
	}
	return false
}

func (l *loadBalancers) release(key types.NamespacedName) {
	l.mu.Lock()
	delete(l.assigned, key)
	l.mu.Unlock()
}

// usable reports whether a may be given out at all.
func (l *loadBalancers) usable(a netip.Addr) bool {
	if !l.pool.Contains(a) || a == l.pool.Addr() || a == l.exclude {
		return false
	}
	// The broadcast address of an IPv4 pool.
	if a.Is4() && !l.pool.Contains(a.Next()) {
		return false
	}
	return true
}

// allocate returns svc's address: the one it holds, else the one it asks
// for, else the lowest free one.
func (l *loadBalancers) allocate(key types.NamespacedName, svc *corev1.Service) (netip.Addr, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	used := map[netip.Addr]types.NamespacedName{}
	all, _ := l.services.List(labelsEverything)
	for _, other := range all {
		k := types.NamespacedName{Namespace: other.Namespace, Name: other.Name}
		if k == key || !ours(other) {
			continue
		}
		for _, ing := range other.Status.LoadBalancer.Ingress {
			if a, err := netip.ParseAddr(ing.IP); err == nil {
				used[a] = k
			}
		}
	}
	for k, a := range l.assigned {
		if k != key {
			used[a] = k
		}
	}
	free := func(a netip.Addr) bool {
		_, taken := used[a]
		return l.usable(a) && !taken
	}
	if a, ok := l.assigned[key]; ok && free(a) {
		return a, nil
	}
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(ing.IP); err == nil && free(a) {
			l.assigned[key] = a
			return a, nil
		}
	}
	if want := svc.Spec.LoadBalancerIP; want != "" {
		a, err := netip.ParseAddr(want)
		if err != nil || !l.usable(a) {
			return netip.Addr{}, fmt.Errorf("requested loadBalancerIP %q is not in the pool %s", want, l.pool)
		}
		if !free(a) {
			return netip.Addr{}, fmt.Errorf("requested loadBalancerIP %s is in use by Service %s", a, used[a])
		}
		l.assigned[key] = a
		return a, nil
	}
	for a := l.pool.Addr(); l.pool.Contains(a); a = a.Next() {
		if free(a) {
			l.assigned[key] = a
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("%w in the pool %s", errPoolExhausted, l.pool)
}

// writeStatus sets the Service's status.loadBalancer.
func (l *loadBalancers) writeStatus(ctx context.Context, key types.NamespacedName, want corev1.LoadBalancerStatus) error {
	cur, err := l.client.CoreV1().Services(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get service %s: %w", key, err)
	}
	cur.Status.LoadBalancer = want
	if _, err := l.client.CoreV1().Services(key.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update service %s status: %w", key, err)
	}
	return nil
}
