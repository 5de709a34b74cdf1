package aggregator

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// AutoManagedLabel marks the APIServices the API server keeps itself, as
// kube's autoregister controller labels them: "onstart" for its own group
// versions (made or brought back to what the server serves when it
// starts, then left to the user), "true" for custom resources' (kept in
// step with the CustomResourceDefinitions, deleted with them).
const AutoManagedLabel = "kube-aggregator.kubernetes.io/automanaged"

const (
	manageOnStart      = "onstart"
	manageContinuously = "true"
)

// aggregatorGroup is served by the aggregator itself, with no APIService,
// as kube's aggregator serves it.
const aggregatorGroup = "apiregistration.k8s.io"

// metricsGV is metrics.k8s.io/v1beta1, which minik serves locally while
// no APIService with a Service claims it.
var metricsGV = schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}

// autoRegister is kube's autoregister controller fed as kube-apiserver
// feeds it: the server's own group versions on start, each custom
// resource's served versions (crdregistration) continuously.
type autoRegister struct {
	a      *Aggregator
	static map[string]*apiregistrationv1.APIService

	mu sync.Mutex
	// existedAtStart are the APIServices there when the pass began;
	// synced are those handled successfully once.
	existedAtStart, synced map[string]bool
}

func newAutoRegister(a *Aggregator, served []schema.GroupVersion) *autoRegister {
	ar := &autoRegister{a: a, static: map[string]*apiregistrationv1.APIService{}, synced: map[string]bool{}}
	for _, gv := range served {
		if gv.Group == aggregatorGroup {
			continue
		}
		p, ok := kubePriorities[gv]
		mode := manageOnStart
		switch {
		case gv == metricsGV:
			// metrics-server's priorities; kept (brought back when
			// deleted) unless an APIService with a Service claims it.
			p, mode = metricsPriority, manageContinuously
		case !ok:
			// A group of minik's own.
			p = crdPriority
		}
		as := desiredAPIService(gv, p, mode)
		ar.static[as.Name] = as
	}
	return ar
}

func desiredAPIService(gv schema.GroupVersion, p priority, mode string) *apiregistrationv1.APIService {
	return &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: gv.Version + "." + gv.Group, Labels: map[string]string{AutoManagedLabel: mode}},
		Spec:       apiregistrationv1.APIServiceSpec{Group: gv.Group, Version: gv.Version, GroupPriorityMinimum: p.group, VersionPriority: p.version},
	}
}

// atStart records the APIServices that exist as the controller starts.
func (ar *autoRegister) atStart() {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	ar.existedAtStart = map[string]bool{}
	list, _ := ar.a.apiServices.List(labels.Everything())
	for _, as := range list {
		ar.existedAtStart[as.Name] = true
	}
}

// desired returns the APIServices to keep, by name: the static ones and
// one per served version of each CustomResourceDefinition.
func (ar *autoRegister) desired() map[string]*apiregistrationv1.APIService {
	out := make(map[string]*apiregistrationv1.APIService, len(ar.static))
	for k, v := range ar.static {
		out[k] = v
	}
	crds, _ := ar.a.crds.List(labels.Everything())
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			as := desiredAPIService(schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}, crdPriority, manageContinuously)
			if _, builtin := out[as.Name]; !builtin {
				out[as.Name] = as
			}
		}
	}
	return out
}

// sync checks every desired or automanaged APIService.
func (ar *autoRegister) sync(ctx context.Context) error {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	desired := ar.desired()
	names := map[string]bool{}
	for n := range desired {
		names[n] = true
	}
	list, err := ar.a.apiServices.List(labels.Everything())
	if err != nil {
		return err
	}
	for _, as := range list {
		if as.Labels[AutoManagedLabel] != "" {
			names[as.Name] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var firstErr error
	for _, n := range sorted {
		if err := ar.check(ctx, n, desired[n]); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("apiservice %s: %w", n, err)
		}
	}
	return firstErr
}

// check is kube's checkAPIService for one name.
func (ar *autoRegister) check(ctx context.Context, name string, desired *apiregistrationv1.APIService) error {
	curr, err := ar.a.apiServices.Get(name)
	missing := apierrors.IsNotFound(err)
	if err != nil && !missing {
		return err
	}
	if name == metricsGV.Version+"."+metricsGV.Group && !missing && curr.Spec.Service != nil {
		// A user's metrics-server claims the group: left alone, and
		// minik's own serving comes back when it is deleted.
		return nil
	}
	hasSynced := ar.synced[name]
	onStart := func(as *apiregistrationv1.APIService) bool {
		return as != nil && as.Labels[AutoManagedLabel] == manageOnStart
	}
	switch {
	case missing && desired == nil:
	case onStart(desired) && hasSynced:
	case missing:
		_, err := ar.a.client.APIServices().Create(ctx, desired.DeepCopy(), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	case curr.Labels[AutoManagedLabel] == "":
	case onStart(curr) && !ar.existedAtStart[name]:
	case onStart(curr) && hasSynced:
	case desired == nil:
		err := ar.a.client.APIServices().Delete(ctx, name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(curr.UID))})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	case reflect.DeepEqual(curr.Spec, desired.Spec):
	default:
		next := curr.DeepCopy()
		next.Spec = desired.Spec
		_, err := ar.a.client.APIServices().Update(ctx, next, metav1.UpdateOptions{})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	ar.synced[name] = true
	return nil
}
