package server

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"minik/internal/api"
	"minik/internal/registry"
)

// componentHealth answers core/v1 ComponentStatuses, as kube-apiserver
// answers them by probing etcd, kube-scheduler and
// kube-controller-manager: here etcd is read through the store and its
// write monitor, and the scheduler and the controller manager, which run
// in this process, are healthy while they run. Names are kube's:
// "etcd-0", "scheduler", "controller-manager".
type componentHealth struct {
	// etcd probes etcd; nil until the store exists.
	etcd func(ctx context.Context) error

	mu sync.Mutex
	// running is, per in-process component, nil while it runs, else why
	// it does not.
	running map[string]error
}

// etcdProbeTimeout bounds the etcd probe, as kube's prober is bounded.
const etcdProbeTimeout = 20 * time.Second

var (
	// errNotStarted is the error of a component not running yet, or
	// stopped without an error.
	errNotStarted = errors.New("not running")
	// errNotRun is the error of a component this minikd does not run.
	errNotRun = errors.New("not run by this minikd")
)

// expect records the component name, which runs (once started) or not.
func (h *componentHealth) expect(name string, runs bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.running == nil {
		h.running = map[string]error{}
	}
	h.running[name] = errNotRun
	if runs {
		h.running[name] = errNotStarted
	}
}

// track wraps the build of a client expected to run (see expect) so that
// the component is healthy while it runs and reports why it stopped
// afterwards.
func (h *componentHealth) track(name string, build func() (func(context.Context) error, error)) func() (func(context.Context) error, error) {
	return func() (func(context.Context) error, error) {
		run, err := build()
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) error {
			h.set(name, nil)
			err := run(ctx)
			stopped := err
			if stopped == nil {
				stopped = errNotStarted
			}
			h.set(name, stopped)
			return err
		}, nil
	}
}

func (h *componentHealth) set(name string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.running[name] = err
}

// Resources is the local resource for api.Config.Local.
func (h *componentHealth) Resources() []api.LocalResource {
	return []api.LocalResource{{Resource: registry.ComponentStatuses(), Get: h.Get, List: h.List}}
}

// names are the components answered, sorted.
func (h *componentHealth) names() []string {
	h.mu.Lock()
	names := []string{"etcd-0"}
	for n := range h.running {
		names = append(names, n)
	}
	h.mu.Unlock()
	sort.Strings(names)
	return names
}

// Get answers one ComponentStatus.
func (h *componentHealth) Get(ctx context.Context, _, name string) (runtime.Object, error) {
	for _, n := range h.names() {
		if n == name {
			return h.status(ctx, name), nil
		}
	}
	return nil, apierrors.NewNotFound(corev1.Resource("componentstatus"), name)
}

// List answers every ComponentStatus.
func (h *componentHealth) List(ctx context.Context, _ string) ([]runtime.Object, error) {
	names := h.names()
	out := make([]runtime.Object, len(names))
	for i, n := range names {
		out[i] = h.status(ctx, n)
	}
	return out, nil
}

// status probes one component.
func (h *componentHealth) status(ctx context.Context, name string) *corev1.ComponentStatus {
	var err error
	if name == "etcd-0" {
		if h.etcd == nil {
			err = errNotStarted
		} else {
			pctx, cancel := context.WithTimeout(ctx, etcdProbeTimeout)
			err = h.etcd(pctx)
			cancel()
		}
	} else {
		h.mu.Lock()
		err = h.running[name]
		h.mu.Unlock()
	}
	cond := corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"}
	if err != nil {
		cond = corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionFalse, Error: err.Error()}
	}
	cs := &corev1.ComponentStatus{Conditions: []corev1.ComponentCondition{cond}}
	cs.APIVersion, cs.Kind = "v1", "ComponentStatus"
	cs.Name = name
	return cs
}
