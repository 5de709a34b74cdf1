package admission

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

func podAttrs(op Operation, pod *corev1.Pod) *Attributes {
	return &Attributes{
		Operation: op, Kind: corev1.SchemeGroupVersion.WithKind("Pod"), Resource: podsGVR,
		Namespace: pod.Namespace, Name: pod.Name, Object: pod,
	}
}

func indexer(objs ...runtime.Object) cache.Indexer {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		if err := idx.Add(o); err != nil {
			panic(err)
		}
	}
	return idx
}

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func webPod(containers ...corev1.Container) *corev1.Pod {
	if len(containers) == 0 {
		containers = []corev1.Container{{Name: "nginx", Image: "nginx"}}
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo"}, Spec: corev1.PodSpec{Containers: containers}}
}

func TestNamespaceLifecycle(t *testing.T) {
	active := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	terminating := active.DeepCopy()
	terminating.Status.Phase = corev1.NamespaceTerminating
	getter := func(ns *corev1.Namespace, calls *int) NamespaceGetter {
		return func(_ context.Context, name string) (*corev1.Namespace, error) {
			if calls != nil {
				*calls++
			}
			if ns == nil || ns.Name != name {
				return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
			}
			return ns, nil
		}
	}
	cm := func(op Operation) *Attributes {
		return &Attributes{Operation: op, Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "demo", Name: "x", Object: &corev1.ConfigMap{}}
	}
	t.Run("a create into a missing namespace is refused with the NotFound", func(t *testing.T) {
		p := &NamespaceLifecycle{Get: getter(nil, nil)}
		err := p.Admit(context.Background(), cm(Create))
		if !apierrors.IsNotFound(err) || err.Error() != `namespaces "demo" not found` {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a create into a terminating namespace is forbidden with kube's message and cause", func(t *testing.T) {
		p := &NamespaceLifecycle{Get: getter(terminating, nil)}
		err := p.Admit(context.Background(), cm(Create))
		want := `configmaps "x" is forbidden: unable to create new content in namespace demo because it is being terminated`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Fatalf("err = %v", err)
		}
		if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			t.Error("no NamespaceTerminating cause")
		}
	})
	t.Run("the cache is trusted, the API asked only for what it lacks", func(t *testing.T) {
		live := 0
		p := &NamespaceLifecycle{Get: getter(active, &live), Cached: getter(nil, nil), waitForNew: func(time.Duration) {}}
		if err := p.Admit(context.Background(), cm(Create)); err != nil || live != 1 {
			t.Fatalf("err = %v, live lookups %d", err, live)
		}
		live = 0
		p = &NamespaceLifecycle{Get: getter(active, &live), Cached: getter(active, nil)}
		if err := p.Admit(context.Background(), cm(Create)); err != nil || live != 0 {
			t.Fatalf("err = %v, live lookups %d", err, live)
		}
	})
	t.Run("after a namespace's deletion its state is read live, not from a stale cache", func(t *testing.T) {
		p := &NamespaceLifecycle{Get: getter(terminating, nil), Cached: getter(active, nil), Mutating: true}
		del := &Attributes{Operation: Delete, Resource: corev1.SchemeGroupVersion.WithResource("namespaces"), Name: "demo", OldObject: active}
		if err := p.Validate(context.Background(), del); err != nil {
			t.Fatal(err)
		}
		if err := p.Admit(context.Background(), cm(Create)); !apierrors.IsForbidden(err) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("in the mutating phase, Validate checks deletions only", func(t *testing.T) {
		p := &NamespaceLifecycle{Get: getter(nil, nil), Mutating: true, Immortal: map[string]bool{"kube-system": true}}
		if err := p.Validate(context.Background(), cm(Create)); err != nil {
			t.Fatalf("create: %v", err)
		}
		del := &Attributes{Operation: Delete, Resource: corev1.SchemeGroupVersion.WithResource("namespaces"), Name: "kube-system"}
		if err := p.Validate(context.Background(), del); err == nil || err.Error() != `namespaces "kube-system" is forbidden: this namespace may not be deleted` {
			t.Fatalf("delete: %v", err)
		}
	})
}

func TestLimitRanger(t *testing.T) {
	lr := &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "demo"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypeContainer,
				Default:              rl("cpu", "500m", "memory", "256Mi"),
				DefaultRequest:       rl("cpu", "100m", "memory", "128Mi"),
				Min:                  rl("cpu", "50m"),
				Max:                  rl("cpu", "1", "memory", "512Mi"),
				MaxLimitRequestRatio: rl("cpu", "4")},
			{Type: corev1.LimitTypePod, Max: rl("cpu", "1500m")},
		}},
	}
	plugin := &LimitRanger{Lister: corelisters.NewLimitRangeLister(indexer(lr))}
	ctx := context.Background()

	t.Run("missing requests and limits get the Container defaults, noted in an annotation", func(t *testing.T) {
		pod := webPod(corev1.Container{Name: "nginx", Image: "nginx", Resources: corev1.ResourceRequirements{Limits: rl("cpu", "300m")}})
		if err := plugin.Admit(ctx, podAttrs(Create, pod)); err != nil {
			t.Fatal(err)
		}
		r := pod.Spec.Containers[0].Resources
		if r.Limits.Cpu().String() != "300m" || r.Limits.Memory().String() != "256Mi" || r.Requests.Cpu().String() != "100m" || r.Requests.Memory().String() != "128Mi" {
			t.Errorf("resources = %+v", r)
		}
		want := "LimitRanger plugin set: cpu, memory request for container nginx; memory limit for container nginx"
		if got := pod.Annotations["kubernetes.io/limit-ranger"]; got != want {
			t.Errorf("annotation = %q\nwant %q", got, want)
		}
		if err := plugin.Validate(ctx, podAttrs(Create, pod)); err != nil {
			t.Errorf("a defaulted pod is refused: %v", err)
		}
	})
	tests := []struct {
		name      string
		requests  corev1.ResourceList
		limits    corev1.ResourceList
		wantError string
	}{
		{"a limit above the maximum is refused", rl("cpu", "100m", "memory", "128Mi"), rl("cpu", "2", "memory", "256Mi"),
			`pods "web" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, cpu max limit to request ratio per Container is 4, but provided ratio is 20.000000, maximum cpu usage per Pod is 1500m, but limit is 2]`},
		{"a request below the minimum is refused", rl("cpu", "10m", "memory", "128Mi"), rl("cpu", "40m", "memory", "256Mi"),
			`pods "web" is forbidden: minimum cpu usage per Container is 50m, but request is 10m`},
		{"a limit-to-request ratio above the maximum is refused", rl("cpu", "100m", "memory", "128Mi"), rl("cpu", "500m", "memory", "256Mi"),
			`pods "web" is forbidden: cpu max limit to request ratio per Container is 4, but provided ratio is 5.000000`},
		{"a missing limit is refused when a maximum is set", rl("cpu", "100m"), rl("cpu", "200m"),
			`pods "web" is forbidden: maximum memory usage per Container is 512Mi.  No limit is specified`},
		{"a pod within every limit is admitted", rl("cpu", "100m", "memory", "128Mi"), rl("cpu", "400m", "memory", "256Mi"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := webPod(corev1.Container{Name: "nginx", Image: "nginx", Resources: corev1.ResourceRequirements{Requests: tt.requests, Limits: tt.limits}})
			err := plugin.Validate(ctx, podAttrs(Create, pod))
			if tt.wantError == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || err.Error() != tt.wantError {
				t.Fatalf("err = %v\nwant %s", err, tt.wantError)
			}
		})
	}
	t.Run("pod updates and other resources are left alone", func(t *testing.T) {
		pod := webPod(corev1.Container{Name: "nginx", Image: "nginx", Resources: corev1.ResourceRequirements{Limits: rl("cpu", "5")}})
		if err := plugin.Validate(ctx, podAttrs(Update, pod)); err != nil {
			t.Error(err)
		}
	})
	t.Run("a namespace the cache knows no limits of is listed live", func(t *testing.T) {
		cs := fake.NewClientset(lr)
		p := &LimitRanger{Lister: corelisters.NewLimitRangeLister(indexer()), Client: cs}
		pod := webPod()
		if err := p.Admit(ctx, podAttrs(Create, pod)); err != nil {
			t.Fatal(err)
		}
		if pod.Spec.Containers[0].Resources.Limits.Cpu().String() != "500m" {
			t.Errorf("resources = %+v", pod.Spec.Containers[0].Resources)
		}
	})
}

func TestServiceAccount(t *testing.T) {
	ctx := context.Background()
	no := false
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "demo"},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}}}
	robot := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "demo"}, AutomountServiceAccountToken: &no}
	plugin := &ServiceAccount{Lister: corelisters.NewServiceAccountLister(indexer(sa, robot)), MountToken: true}

	t.Run("a pod runs as default, with the projected token mounted in every container", func(t *testing.T) {
		pod := webPod(corev1.Container{Name: "a"}, corev1.Container{Name: "b"})
		pod.Spec.InitContainers = []corev1.Container{{Name: "init"}}
		if err := plugin.Admit(ctx, podAttrs(Create, pod)); err != nil {
			t.Fatal(err)
		}
		if pod.Spec.ServiceAccountName != "default" || pod.Spec.DeprecatedServiceAccount != "default" {
			t.Errorf("service account = %q/%q", pod.Spec.ServiceAccountName, pod.Spec.DeprecatedServiceAccount)
		}
		if len(pod.Spec.Volumes) != 1 {
			t.Fatalf("volumes = %+v", pod.Spec.Volumes)
		}
		v := pod.Spec.Volumes[0]
		if !strings.HasPrefix(v.Name, "kube-api-access-") || len(v.Name) != len("kube-api-access-")+5 || v.Projected == nil {
			t.Fatalf("volume = %+v", v)
		}
		src := v.Projected.Sources
		if *v.Projected.DefaultMode != 420 || len(src) != 3 || src[0].ServiceAccountToken.Path != "token" || *src[0].ServiceAccountToken.ExpirationSeconds != 3607 ||
			src[1].ConfigMap.Name != "kube-root-ca.crt" || src[1].ConfigMap.Items[0].Key != "ca.crt" ||
			src[2].DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.namespace" {
			t.Errorf("projection = %+v", v.Projected)
		}
		for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
			if len(c.VolumeMounts) != 1 || !reflect.DeepEqual(c.VolumeMounts[0], corev1.VolumeMount{Name: v.Name, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}) {
				t.Errorf("%s mounts %+v", c.Name, c.VolumeMounts)
			}
		}
		if len(pod.Spec.ImagePullSecrets) != 1 || pod.Spec.ImagePullSecrets[0].Name != "registry" {
			t.Errorf("imagePullSecrets = %+v", pod.Spec.ImagePullSecrets)
		}
		if err := plugin.Validate(ctx, podAttrs(Create, pod)); err != nil {
			t.Error(err)
		}
	})
	t.Run("automountServiceAccountToken false on the account mounts nothing", func(t *testing.T) {
		pod := webPod()
		pod.Spec.ServiceAccountName = "robot"
		if err := plugin.Admit(ctx, podAttrs(Create, pod)); err != nil {
			t.Fatal(err)
		}
		if len(pod.Spec.Volumes) != 0 || len(pod.Spec.Containers[0].VolumeMounts) != 0 {
			t.Errorf("volumes %+v mounts %+v", pod.Spec.Volumes, pod.Spec.Containers[0].VolumeMounts)
		}
	})
	t.Run("the pod's own choice wins over the account's", func(t *testing.T) {
		yes := true
		pod := webPod()
		pod.Spec.ServiceAccountName, pod.Spec.AutomountServiceAccountToken = "robot", &yes
		if err := plugin.Admit(ctx, podAttrs(Create, pod)); err != nil {
			t.Fatal(err)
		}
		if len(pod.Spec.Volumes) != 1 {
			t.Errorf("volumes %+v", pod.Spec.Volumes)
		}
	})
	t.Run("a container mounting something at the token path keeps it", func(t *testing.T) {
		pod := webPod(corev1.Container{Name: "a", VolumeMounts: []corev1.VolumeMount{{Name: "mine", MountPath: DefaultAPITokenMountPath}}})
		if err := plugin.Admit(ctx, podAttrs(Create, pod)); err != nil {
			t.Fatal(err)
		}
		if len(pod.Spec.Volumes) != 0 || len(pod.Spec.Containers[0].VolumeMounts) != 1 {
			t.Errorf("volumes %+v mounts %+v", pod.Spec.Volumes, pod.Spec.Containers[0].VolumeMounts)
		}
	})
	t.Run("a missing default account is looked up live ten times before the pod is refused", func(t *testing.T) {
		cs := fake.NewClientset()
		var gets atomic.Int32
		cs.PrependReactor("get", "serviceaccounts", func(k8stesting.Action) (bool, runtime.Object, error) {
			gets.Add(1)
			return false, nil, nil
		})
		p := &ServiceAccount{Lister: corelisters.NewServiceAccountLister(indexer()), Client: cs, MountToken: true, sleep: func(time.Duration) {}}
		err := p.Admit(ctx, podAttrs(Create, webPod()))
		want := `pods "web" is forbidden: error looking up service account demo/default: serviceaccount "default" not found`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
		if gets.Load() != 10 {
			t.Errorf("%d live lookups, want 10", gets.Load())
		}
	})
	t.Run("a default account created in the meantime is found", func(t *testing.T) {
		cs := fake.NewClientset()
		var gets atomic.Int32
		p := &ServiceAccount{Lister: corelisters.NewServiceAccountLister(indexer()), Client: cs, MountToken: true, sleep: func(time.Duration) {
			if gets.Add(1) == 3 {
				_, _ = cs.CoreV1().ServiceAccounts("demo").Create(ctx, sa.DeepCopy(), metav1.CreateOptions{})
			}
		}}
		if err := p.Admit(ctx, podAttrs(Create, webPod())); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("another missing account is refused after one lookup", func(t *testing.T) {
		cs := fake.NewClientset()
		p := &ServiceAccount{Lister: corelisters.NewServiceAccountLister(indexer()), Client: cs, sleep: func(time.Duration) { t.Error("retried") }}
		pod := webPod()
		pod.Spec.ServiceAccountName = "builder"
		err := p.Admit(ctx, podAttrs(Create, pod))
		if err == nil || err.Error() != `pods "web" is forbidden: error looking up service account demo/builder: serviceaccount "builder" not found` {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a mirror pod is not changed and may not use a service account", func(t *testing.T) {
		pod := webPod()
		pod.Annotations = map[string]string{mirrorPodAnnotation: "x"}
		if err := plugin.Admit(ctx, podAttrs(Create, pod)); err != nil || pod.Spec.ServiceAccountName != "" {
			t.Fatalf("err = %v, sa %q", err, pod.Spec.ServiceAccountName)
		}
		pod.Spec.ServiceAccountName = "default"
		if err := plugin.Admit(ctx, podAttrs(Create, pod)); err == nil || !strings.HasSuffix(err.Error(), "a mirror pod may not reference service accounts") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestDefaultTolerationSeconds(t *testing.T) {
	p := &DefaultTolerationSeconds{}
	tests := []struct {
		name  string
		given []corev1.Toleration
		want  []string
	}{
		{"a pod gets both tolerations for 300 seconds", nil,
			[]string{"node.kubernetes.io/not-ready:Exists:NoExecute:300", "node.kubernetes.io/unreachable:Exists:NoExecute:300"}},
		{"a pod's own not-ready toleration is kept", []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
			[]string{"node.kubernetes.io/not-ready:Exists:NoExecute:-", "node.kubernetes.io/unreachable:Exists:NoExecute:300"}},
		{"a toleration of every taint needs nothing more", []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			[]string{":Exists::-"}},
		{"a NoSchedule toleration of not-ready does not count", []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			[]string{"node.kubernetes.io/not-ready:Exists:NoSchedule:-", "node.kubernetes.io/not-ready:Exists:NoExecute:300", "node.kubernetes.io/unreachable:Exists:NoExecute:300"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := webPod()
			pod.Spec.Tolerations = tt.given
			if err := p.Admit(context.Background(), podAttrs(Create, pod)); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tol := range pod.Spec.Tolerations {
				secs := "-"
				if tol.TolerationSeconds != nil {
					secs = resource.NewQuantity(*tol.TolerationSeconds, resource.DecimalSI).String()
				}
				got = append(got, tol.Key+":"+string(tol.Operator)+":"+string(tol.Effect)+":"+secs)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("tolerations = %v\nwant %v", got, tt.want)
			}
		})
	}
}

func quotaObj(name string, hard, used corev1.ResourceList) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "demo", ResourceVersion: "7"},
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
		Status:     corev1.ResourceQuotaStatus{Hard: hard, Used: used},
	}
}

func TestResourceQuota(t *testing.T) {
	ctx := context.Background()
	newPlugin := func(quotas ...*corev1.ResourceQuota) (*ResourceQuota, *fake.Clientset) {
		var objs []runtime.Object
		for _, q := range quotas {
			objs = append(objs, q)
		}
		cs := fake.NewClientset(objs...)
		return &ResourceQuota{Lister: corelisters.NewResourceQuotaLister(indexer(objs...)), Client: cs}, cs
	}
	cpuPod := func(cpu string) *corev1.Pod {
		return webPod(corev1.Container{Name: "nginx", Image: "nginx", Resources: corev1.ResourceRequirements{Requests: rl("cpu", cpu), Limits: rl("cpu", cpu)}})
	}
	t.Run("a pod over the pod count is refused with kube's message", func(t *testing.T) {
		p, _ := newPlugin(quotaObj("q", rl("pods", "2"), rl("pods", "2")))
		err := p.Validate(ctx, podAttrs(Create, webPod()))
		want := `pods "web" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("only the exceeded resources are reported", func(t *testing.T) {
		p, _ := newPlugin(quotaObj("compute", rl("pods", "10", "requests.cpu", "1", "limits.cpu", "2"), rl("pods", "1", "requests.cpu", "800m", "limits.cpu", "800m")))
		err := p.Validate(ctx, podAttrs(Create, cpuPod("500m")))
		want := `pods "web" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=800m, limited: requests.cpu=1`
		if err == nil || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("a pod that fits is charged on the quota's status, compare-and-swap", func(t *testing.T) {
		p, cs := newPlugin(quotaObj("q", rl("pods", "3", "requests.cpu", "2"), rl("pods", "1", "requests.cpu", "1")))
		var sentRV string
		cs.PrependReactor("update", "resourcequotas", func(a k8stesting.Action) (bool, runtime.Object, error) {
			sentRV = a.(k8stesting.UpdateAction).GetObject().(*corev1.ResourceQuota).ResourceVersion
			return false, nil, nil
		})
		if err := p.Validate(ctx, podAttrs(Create, cpuPod("500m"))); err != nil {
			t.Fatal(err)
		}
		got, _ := cs.CoreV1().ResourceQuotas("demo").Get(ctx, "q", metav1.GetOptions{})
		if got.Status.Used.Pods().String() != "2" || got.Status.Used.Name(corev1.ResourceRequestsCPU, resource.DecimalSI).String() != "1500m" {
			t.Errorf("used = %v", got.Status.Used)
		}
		if sentRV != "7" {
			t.Errorf("status written with resourceVersion %q, want the one it was computed from", sentRV)
		}
	})
	t.Run("a lost race re-reads the quota and checks again", func(t *testing.T) {
		p, cs := newPlugin(quotaObj("q", rl("pods", "2"), rl("pods", "0")))
		// Someone else took the last pod meanwhile: the cached status is stale.
		fresh := quotaObj("q", rl("pods", "2"), rl("pods", "2"))
		fresh.ResourceVersion = "9"
		_ = cs.Tracker().Update(corev1.SchemeGroupVersion.WithResource("resourcequotas"), fresh, "demo")
		cs.PrependReactor("update", "resourcequotas", func(a k8stesting.Action) (bool, runtime.Object, error) {
			q := a.(k8stesting.UpdateAction).GetObject().(*corev1.ResourceQuota)
			if q.ResourceVersion != "9" {
				return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "resourcequotas"}, "q", errors.New("the object has been modified"))
			}
			return false, nil, nil
		})
		err := p.Validate(ctx, podAttrs(Create, webPod()))
		if err == nil || !strings.Contains(err.Error(), "exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a dry run is checked but not charged", func(t *testing.T) {
		p, cs := newPlugin(quotaObj("q", rl("pods", "3"), rl("pods", "1")))
		a := podAttrs(Create, webPod())
		a.DryRun = true
		if err := p.Validate(ctx, a); err != nil {
			t.Fatal(err)
		}
		for _, act := range cs.Actions() {
			if act.GetVerb() == "update" {
				t.Errorf("dry run wrote %v", act)
			}
		}
	})
	t.Run("a quota on cpu requires every container to request cpu", func(t *testing.T) {
		p, _ := newPlugin(quotaObj("compute", rl("requests.cpu", "2"), rl("requests.cpu", "0")))
		err := p.Validate(ctx, podAttrs(Create, webPod()))
		want := `pods "web" is forbidden: failed quota: compute: must specify requests.cpu for: nginx`
		if err == nil || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("a quota the controller has not computed yet refuses", func(t *testing.T) {
		q := quotaObj("q", rl("pods", "3"), nil)
		p, _ := newPlugin(q)
		err := p.Validate(ctx, podAttrs(Create, webPod()))
		if err == nil || err.Error() != `pods "web" is forbidden: status unknown for quota: q, resources: pods` {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("object counts use count/<resource>", func(t *testing.T) {
		p, _ := newPlugin(quotaObj("q", rl("count/configmaps", "1"), rl("count/configmaps", "1")))
		a := &Attributes{Operation: Create, Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "demo", Name: "cm", Object: &corev1.ConfigMap{}}
		err := p.Validate(ctx, a)
		if err == nil || err.Error() != `configmaps "cm" is forbidden: exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1` {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestWarnings(t *testing.T) {
	h := WithWarnings(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		AddWarning(r.Context(), `use "apps/v1" instead`)
		AddWarning(r.Context(), `use "apps/v1" instead`)
		AddWarning(r.Context(), "a\\b")
		w.WriteHeader(http.StatusOK)
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	got := rec.Header().Values("Warning")
	if len(got) != 2 || got[0] != `299 - "use \"apps/v1\" instead"` || got[1] != `299 - "a\\b"` {
		t.Errorf("Warning headers = %q", got)
	}
	// Without the wrapper, a warning goes nowhere.
	AddWarning(context.Background(), "ignored")
}
