package deployment_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/deployment"
	"minik/internal/testserver"
)

// env is a real minikd (etcd, API server, the chosen controllers) seen
// through the test's own informers on one namespace, with a stand-in
// kubelet that marks pods ready.
type env struct {
	t      testing.TB
	ctx    context.Context
	srv    *testserver.Server
	client kubernetes.Interface
	ns     string

	dLister   appslisters.DeploymentLister
	rsLister  appslisters.ReplicaSetLister
	podLister corelisters.PodLister
	rsInf     cache.SharedIndexInformer
	podInf    cache.SharedIndexInformer
}

// fastClient is an admin client without client-go's 5 requests/s limit.
func fastClient(t testing.TB, srv *testserver.Server) kubernetes.Interface {
	t.Helper()
	rc := rest.CopyConfig(srv.RESTConfig)
	rc.QPS, rc.Burst = 2000, 4000
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// newEnv starts minikd with the given controllers and watches namespace
// "default".
func newEnv(t testing.TB, controllers ...string) *env {
	t.Helper()
	srv := testserver.StartWith(t, testserver.Options{Controllers: controllers})
	e := &env{t: t, srv: srv, client: fastClient(t, srv), ns: "default"}
	e.watch(e.ns)
	e.serviceAccount(e.ns)
	return e
}

// serviceAccount makes sure ns has its "default" ServiceAccount, which
// admission requires of pods; kube's serviceaccount controller creates it.
func (e *env) serviceAccount(ns string) {
	e.t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := e.client.CoreV1().ServiceAccounts(ns).Create(e.ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		e.t.Fatalf("create service account %s/default: %v", ns, err)
	}
}

// watch starts the test's informers on ns; they stop when the test ends.
func (e *env) watch(ns string) {
	ctx, cancel := context.WithCancel(context.Background())
	e.ctx = ctx
	f := informers.NewSharedInformerFactoryWithOptions(e.client, 0, informers.WithNamespace(ns))
	e.dLister = f.Apps().V1().Deployments().Lister()
	e.rsLister = f.Apps().V1().ReplicaSets().Lister()
	e.podLister = f.Core().V1().Pods().Lister()
	e.rsInf = f.Apps().V1().ReplicaSets().Informer()
	e.podInf = f.Core().V1().Pods().Informer()
	f.Start(ctx.Done())
	e.t.Cleanup(func() {
		cancel()
		f.Shutdown()
	})
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			e.t.Fatalf("informer for %v did not sync", typ)
		}
	}
}

// kubelet marks the namespace's pods Running and Ready as they appear,
// unless ready says otherwise for a pod (a "broken" image, say), as a
// kubelet would report them. It stops when the test ends.
func (e *env) kubelet(ready func(*corev1.Pod) bool) {
	q := workqueue.NewTyped[string]()
	e.t.Cleanup(q.ShutDown)
	enqueue := func(obj interface{}) {
		if pod, ok := obj.(*corev1.Pod); ok && pod.DeletionTimestamp == nil && !podReady(pod) && ready(pod) {
			q.Add(pod.Name)
		}
	}
	if _, err := e.podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, cur interface{}) { enqueue(cur) },
	}); err != nil {
		e.t.Fatal(err)
	}
	for range 4 {
		go func() {
			for {
				name, quit := q.Get()
				if quit {
					return
				}
				e.markReady(name)
				q.Done(name)
			}
		}()
	}
}

func (e *env) markReady(name string) {
	pod, err := e.podLister.Pods(e.ns).Get(name)
	if err != nil || podReady(pod) {
		return
	}
	err = ctrltest.MarkPodReady(e.ctx, e.client, pod, time.Now())
	if err != nil && !apierrors.IsNotFound(err) && e.ctx.Err() == nil {
		e.t.Errorf("kubelet: %v", err)
	}
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// notBroken is the kubelet's default: pods whose image says "broken" never
// become ready.
func notBroken(pod *corev1.Pod) bool {
	for _, c := range pod.Spec.Containers {
		if strings.Contains(c.Image, "broken") {
			return false
		}
	}
	return true
}

func newDeployment(name string, replicas int32, image string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
			},
		},
	}
}

func (e *env) create(d *appsv1.Deployment) *appsv1.Deployment {
	e.t.Helper()
	out, err := e.client.AppsV1().Deployments(e.ns).Create(e.ctx, d, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create deployment %s: %v", d.Name, err)
	}
	return out
}

// update changes a Deployment with retries on conflict.
func (e *env) update(name string, change func(*appsv1.Deployment)) *appsv1.Deployment {
	e.t.Helper()
	var out *appsv1.Deployment
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := e.client.AppsV1().Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(d)
		out, err = e.client.AppsV1().Deployments(e.ns).Update(e.ctx, d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("update deployment %s: %v", name, err)
	}
	return out
}

func (e *env) get(name string) *appsv1.Deployment {
	e.t.Helper()
	d, err := e.client.AppsV1().Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("get deployment %s: %v", name, err)
	}
	return d
}

// replicaSets returns, from the test's cache, the ReplicaSets d controls.
func (e *env) replicaSets(d *appsv1.Deployment) []*appsv1.ReplicaSet {
	all, _ := e.rsLister.ReplicaSets(e.ns).List(labels.Everything())
	var out []*appsv1.ReplicaSet
	for _, rs := range all {
		if metav1.IsControlledBy(rs, d) {
			out = append(out, rs)
		}
	}
	return out
}

// newRS waits for the ReplicaSet of d's current template, named as kube
// names it, and returns it.
func (e *env) newRS(d *appsv1.Deployment) *appsv1.ReplicaSet {
	e.t.Helper()
	name := d.Name + "-" + deployment.PodTemplateHash(&d.Spec.Template, d.Status.CollisionCount)
	var rs *appsv1.ReplicaSet
	ctrltest.Wait(e.t, "replica set "+name, func() bool {
		var err error
		rs, err = e.rsLister.ReplicaSets(e.ns).Get(name)
		return err == nil
	})
	return rs
}

// waitComplete waits until the rollout of d's current generation is over:
// the status says every replica is updated and available, Progressing
// says NewReplicaSetAvailable, and old ReplicaSets have no replicas.
func (e *env) waitComplete(name string) *appsv1.Deployment {
	e.t.Helper()
	// The generation as of now, read from the server: the cache may still
	// hold an older generation whose rollout is over.
	generation := e.get(name).Generation
	var d *appsv1.Deployment
	ctrltest.Wait(e.t, "deployment "+name+" complete", func() bool {
		var err error
		if d, err = e.dLister.Deployments(e.ns).Get(name); err != nil || d.Generation < generation {
			return false
		}
		want := *d.Spec.Replicas
		s := d.Status
		if s.ObservedGeneration < d.Generation || s.Replicas != want || s.UpdatedReplicas != want ||
			s.ReadyReplicas != want || s.AvailableReplicas != want || s.UnavailableReplicas != 0 {
			return false
		}
		if c := condition(d, appsv1.DeploymentProgressing); c == nil || c.Reason != deployment.ReasonNewReplicaSetAvailable {
			return false
		}
		for _, rs := range e.replicaSets(d) {
			if !sameTemplate(&rs.Spec.Template, &d.Spec.Template) && (*rs.Spec.Replicas != 0 || rs.Status.Replicas != 0) {
				return false
			}
		}
		return true
	})
	return d
}

// events returns the messages of the events of the given reason on the
// named object, from component.
func (e *env) events(object, reason, component string) []string {
	e.t.Helper()
	list, err := e.client.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatalf("list events: %v", err)
	}
	var out []string
	for _, ev := range list.Items {
		if ev.InvolvedObject.Name == object && ev.Reason == reason && ev.Source.Component == component {
			out = append(out, ev.Message)
		}
	}
	return out
}

// waitEvent waits for an event with the given message.
func (e *env) waitEvent(object, reason, message string) {
	e.t.Helper()
	ctrltest.Wait(e.t, fmt.Sprintf("event %s %q", reason, message), func() bool {
		for _, m := range e.events(object, reason, deployment.Component) {
			if m == message {
				return true
			}
		}
		return false
	})
}

// recorder checks an invariant on every state of the namespace's
// ReplicaSets and Pods the watch shows, in order: each event is applied
// to the recorder's own copy, then the invariant runs on it.
type recorder struct {
	mu         sync.Mutex
	armed      bool
	check      func(rss map[string]*appsv1.ReplicaSet, pods map[string]*corev1.Pod) string
	rss        map[string]*appsv1.ReplicaSet
	pods       map[string]*corev1.Pod
	states     int
	violations []string
}

// record starts checking: the current objects are replayed first, then
// every change is checked as it comes.
func (e *env) record(check func(rss map[string]*appsv1.ReplicaSet, pods map[string]*corev1.Pod) string) *recorder {
	e.t.Helper()
	r := &recorder{check: check, rss: map[string]*appsv1.ReplicaSet{}, pods: map[string]*corev1.Pod{}}
	rsReg, err := e.rsInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { r.setRS(obj) },
		UpdateFunc: func(_, obj interface{}) { r.setRS(obj) },
		DeleteFunc: func(obj interface{}) {
			if rs, ok := obj.(*appsv1.ReplicaSet); ok {
				r.apply(func() { delete(r.rss, rs.Name) })
			}
		},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	podReg, err := e.podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { r.setPod(obj) },
		UpdateFunc: func(_, obj interface{}) { r.setPod(obj) },
		DeleteFunc: func(obj interface{}) {
			if p, ok := obj.(*corev1.Pod); ok {
				r.apply(func() { delete(r.pods, p.Name) })
			}
		},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	ctrltest.Wait(e.t, "recorder synced", func() bool { return rsReg.HasSynced() && podReg.HasSynced() })
	r.apply(func() { r.armed = true })
	return r
}

func (r *recorder) setRS(obj interface{}) {
	if rs, ok := obj.(*appsv1.ReplicaSet); ok {
		r.apply(func() { r.rss[rs.Name] = rs })
	}
}

func (r *recorder) setPod(obj interface{}) {
	if p, ok := obj.(*corev1.Pod); ok {
		r.apply(func() { r.pods[p.Name] = p })
	}
}

func (r *recorder) apply(change func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	change()
	if !r.armed {
		return
	}
	r.states++
	if v := r.check(r.rss, r.pods); v != "" {
		r.violations = append(r.violations, v)
	}
}

// result returns how many states were checked and the violations.
func (r *recorder) result() (int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.states, append([]string(nil), r.violations...)
}

// condition returns d's condition of type t, or nil.
func condition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// sameTemplate compares pod templates but for the pod-template-hash label.
func sameTemplate(a, b *corev1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	delete(b.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	return apiequality.Semantic.DeepEqual(a, b)
}

func labelsOf(selector string) labels.Selector {
	sel, err := labels.Parse(selector)
	if err != nil {
		panic(err)
	}
	return sel
}

// waitScaledDownToZero waits for the event of rs's last scale-down.
func (e *env) waitScaledDownToZero(object, rs string) {
	e.t.Helper()
	prefix := "Scaled down replica set " + rs + " from "
	ctrltest.Wait(e.t, "event "+prefix+"N to 0", func() bool {
		for _, m := range e.events(object, deployment.EventScalingReplicaSet, deployment.Component) {
			if strings.HasPrefix(m, prefix) && strings.HasSuffix(m, " to 0") {
				return true
			}
		}
		return false
	})
}

// runControllers runs controllers in the test process, as the controller
// manager would but on the given clock and with a client limited to qps
// requests a second, until the test ends. The server should run none of
// them itself.
func (e *env) runControllers(clk clock.WithTicker, qps float32, ctors ...controllers.Constructor) {
	e.t.Helper()
	rc := rest.CopyConfig(e.srv.RESTConfig)
	rc.QPS, rc.Burst = qps, int(2*qps)
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	factory := informers.NewSharedInformerFactory(cs, 0)
	cc := &controllers.Context{
		Client:    cs,
		Informers: factory,
		Recorder: func(component string) record.EventRecorder {
			return broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component})
		},
		Clock:   clk,
		Workers: 5,
		Logger:  slog.Default(),
	}
	var running []controllers.Controller
	for _, ctor := range ctors {
		c, err := ctor(cc)
		if err != nil {
			cancel()
			e.t.Fatal(err)
		}
		running = append(running, c)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	var wg sync.WaitGroup
	for _, c := range running {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Run(ctx, cc.Workers)
		}()
	}
	e.t.Cleanup(func() {
		cancel()
		wg.Wait()
		factory.Shutdown()
		broadcaster.Shutdown()
	})
}
