package admission

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
)

// NamespaceGetter reads a Namespace; it returns a NotFound Status error
// when the namespace does not exist.
type NamespaceGetter func(ctx context.Context, name string) (*corev1.Namespace, error)

// ObjectGetter reads objects of one resource, as the API server's own
// store does.
type ObjectGetter interface {
	Get(ctx context.Context, ns, name string) (runtime.Object, error)
}

// NewNamespaceLifecycle is the plugin reading namespaces from the API
// server's own store, with kube's immortal namespaces (default,
// kube-system, kube-public, kube-node-lease).
func NewNamespaceLifecycle(namespaces ObjectGetter) *NamespaceLifecycle {
	return &NamespaceLifecycle{
		Get: func(ctx context.Context, name string) (*corev1.Namespace, error) {
			obj, err := namespaces.Get(ctx, "", name)
			if err != nil {
				return nil, err
			}
			ns, ok := obj.(*corev1.Namespace)
			if !ok {
				return nil, fmt.Errorf("namespace %s is a %T", name, obj)
			}
			return ns, nil
		},
		Immortal: map[string]bool{"default": true, "kube-system": true, "kube-public": true, "kube-node-lease": true},
	}
}

// forceLiveLookupTTL is how long, after a namespace's deletion was
// admitted, its state is read live rather than from the cache.
const forceLiveLookupTTL = 30 * time.Second

// missingNamespaceWait is how long a create into a namespace the cache does
// not know waits for the cache to catch up before asking the API.
const missingNamespaceWait = 50 * time.Millisecond

// NamespaceLifecycle refuses objects in namespaces that do not exist or are
// being terminated, and the deletion of the namespaces the system needs, as
// kube's plugin of that name does.
//
// Kube runs it first in the mutating phase (so that no other plugin works
// for a request into a namespace that cannot take it). The API server's
// REST layer runs only the validating phase for deletions, so in minikd's
// chain the plugin sits in both lists with Mutating set: Admit checks
// creates, Validate guards deletions.
type NamespaceLifecycle struct {
	// Get reads a namespace from the API (or storage): the authority.
	Get NamespaceGetter
	// Cached, when set, reads a namespace from an informer cache first;
	// Get is asked only when the cache does not have it, or when its
	// deletion was admitted in the last 30 seconds (the cache may not have
	// seen it yet).
	Cached NamespaceGetter
	// Immortal namespaces may not be deleted.
	Immortal map[string]bool
	// Mutating makes Validate check only deletions, Admit doing the rest.
	Mutating bool
	// Clock tells the time; nil means the real clock.
	Clock clock.PassiveClock

	mu         sync.Mutex
	forceLive  map[string]time.Time
	waitForNew func(time.Duration)
}

// Name implements Mutator and Validator.
func (*NamespaceLifecycle) Name() string { return "NamespaceLifecycle" }

// Admit implements Mutator: it refuses creates into missing or terminating
// namespaces.
func (p *NamespaceLifecycle) Admit(ctx context.Context, a *Attributes) error {
	return p.check(ctx, a)
}

// Validate implements Validator.
func (p *NamespaceLifecycle) Validate(ctx context.Context, a *Attributes) error {
	if p.Mutating && a.Operation != Delete {
		return nil
	}
	return p.check(ctx, a)
}

func (p *NamespaceLifecycle) check(ctx context.Context, a *Attributes) error {
	if a.Resource.Group == "" && a.Resource.Resource == "namespaces" {
		if a.Operation == Delete {
			if p.Immortal[a.Name] {
				return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, fmt.Errorf("this namespace may not be deleted"))
			}
			p.markDeleted(a.Name)
		}
		return nil
	}
	if a.Namespace == "" || a.Operation != Create {
		return nil
	}
	ns, err := p.lookup(ctx, a.Namespace)
	if err != nil {
		return err
	}
	if ns.Status.Phase == corev1.NamespaceTerminating || ns.DeletionTimestamp != nil {
		// Events may still be written into a terminating namespace.
		if a.Resource.Resource == "events" {
			return nil
		}
		err := NewForbidden(a, fmt.Errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
		if se, ok := err.(*apierrors.StatusError); ok && se.ErrStatus.Details != nil {
			se.ErrStatus.Details.Causes = append(se.ErrStatus.Details.Causes, metav1.StatusCause{
				Type:    corev1.NamespaceTerminatingCause,
				Message: fmt.Sprintf("namespace %s is being terminated", a.Namespace),
				Field:   "metadata.namespace",
			})
		}
		return err
	}
	return nil
}

// lookup reads a namespace from the cache when there is one and it can be
// trusted, else from the API.
func (p *NamespaceLifecycle) lookup(ctx context.Context, name string) (*corev1.Namespace, error) {
	if p.Cached == nil {
		return p.Get(ctx, name)
	}
	ns, err := p.Cached(ctx, name)
	if apierrors.IsNotFound(err) {
		// Give the cache a moment to see a namespace created just now.
		p.sleep(missingNamespaceWait)
		ns, err = p.Cached(ctx, name)
	}
	switch {
	case apierrors.IsNotFound(err):
		return p.Get(ctx, name)
	case err != nil:
		return nil, apierrors.NewInternalError(err)
	}
	if ns.Status.Phase == corev1.NamespaceActive && p.recentlyDeleted(name) {
		return p.Get(ctx, name)
	}
	return ns, nil
}

func (p *NamespaceLifecycle) sleep(d time.Duration) {
	if p.waitForNew != nil {
		p.waitForNew(d)
		return
	}
	time.Sleep(d)
}

func (p *NamespaceLifecycle) now() time.Time {
	if p.Clock == nil {
		return time.Now()
	}
	return p.Clock.Now()
}

func (p *NamespaceLifecycle) markDeleted(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.forceLive == nil {
		p.forceLive = map[string]time.Time{}
	}
	now := p.now()
	for n, until := range p.forceLive {
		if now.After(until) {
			delete(p.forceLive, n)
		}
	}
	p.forceLive[name] = now.Add(forceLiveLookupTTL)
}

func (p *NamespaceLifecycle) recentlyDeleted(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	until, ok := p.forceLive[name]
	return ok && !p.now().After(until)
}
