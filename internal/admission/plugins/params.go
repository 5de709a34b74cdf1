package plugins

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"minik/internal/registry"
)

// paramSyncWait bounds how long a request waits for a parameter kind's
// cache, started on first use.
const paramSyncWait = time.Second

// paramSource serves ValidatingAdmissionPolicy parameter objects from
// dynamic informers, one per parameter kind, started the first time a
// binding needs the kind.
type paramSource struct {
	resources []*registry.Resource
	factory   dynamicinformer.DynamicSharedInformerFactory

	mu      sync.Mutex
	ctx     context.Context
	started map[schema.GroupVersionResource]informers.GenericInformer
}

func newParamSource(dyn dynamic.Interface, resources []*registry.Resource) *paramSource {
	return &paramSource{
		resources: resources,
		factory:   dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0),
		started:   map[schema.GroupVersionResource]informers.GenericInformer{},
	}
}

func (p *paramSource) start(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ctx = ctx
}

func (p *paramSource) shutdown() { p.factory.Shutdown() }

// resource resolves a parameter kind to the served resource.
func (p *paramSource) resource(kind admissionregistrationv1.ParamKind) (*registry.Resource, error) {
	gv, err := schema.ParseGroupVersion(kind.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("paramKind apiVersion %q: %w", kind.APIVersion, err)
	}
	for _, r := range p.resources {
		if r.GroupVersion == gv && r.Kind == kind.Kind {
			return r, nil
		}
	}
	return nil, fmt.Errorf("paramKind kind `%s, Kind=%s` not known", kind.APIVersion, kind.Kind)
}

// informer returns the synced informer of a parameter kind, starting it
// on first use.
func (p *paramSource) informer(ctx context.Context, kind admissionregistrationv1.ParamKind) (informers.GenericInformer, *registry.Resource, error) {
	r, err := p.resource(kind)
	if err != nil {
		return nil, nil, err
	}
	gvr := r.GroupVersionResource()
	p.mu.Lock()
	inf, ok := p.started[gvr]
	if !ok {
		if p.ctx == nil {
			p.mu.Unlock()
			return nil, nil, errors.New("admission informers not started")
		}
		inf = p.factory.ForResource(gvr)
		p.started[gvr] = inf
		p.factory.Start(p.ctx.Done())
	}
	p.mu.Unlock()
	wait, cancel := context.WithTimeout(ctx, paramSyncWait)
	defer cancel()
	if !cache.WaitForCacheSync(wait.Done(), inf.Informer().HasSynced) {
		return nil, nil, fmt.Errorf("paramKind kind `%s, Kind=%s` not yet synced to use for admission", kind.APIVersion, kind.Kind)
	}
	return inf, r, nil
}

// Namespaced implements policy.ParamSource.
func (p *paramSource) Namespaced(ctx context.Context, kind admissionregistrationv1.ParamKind) (bool, error) {
	_, r, err := p.informer(ctx, kind)
	if err != nil {
		return false, err
	}
	return r.Namespaced, nil
}

// Get implements policy.ParamSource.
func (p *paramSource) Get(ctx context.Context, kind admissionregistrationv1.ParamKind, ns, name string) (map[string]any, error) {
	inf, _, err := p.informer(ctx, kind)
	if err != nil {
		return nil, err
	}
	var obj runtime.Object
	if ns != "" {
		obj, err = inf.Lister().ByNamespace(ns).Get(name)
	} else {
		obj, err = inf.Lister().Get(name)
	}
	if err != nil {
		return nil, err
	}
	return content(obj)
}

// List implements policy.ParamSource.
func (p *paramSource) List(ctx context.Context, kind admissionregistrationv1.ParamKind, ns string, sel labels.Selector) ([]map[string]any, error) {
	inf, _, err := p.informer(ctx, kind)
	if err != nil {
		return nil, err
	}
	var objs []runtime.Object
	if ns != "" {
		objs, err = inf.Lister().ByNamespace(ns).List(sel)
	} else {
		objs, err = inf.Lister().List(sel)
	}
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, len(objs))
	for _, o := range objs {
		c, err := content(o)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		return (&unstructured.Unstructured{Object: out[i]}).GetName() < (&unstructured.Unstructured{Object: out[j]}).GetName()
	})
	return out, nil
}

func content(obj runtime.Object) (map[string]any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("unexpected parameter object %T", obj)
	}
	return u.DeepCopy().Object, nil
}
