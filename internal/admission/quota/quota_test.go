package quota

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
)

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func container(name string, requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Image: "nginx", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

func TestPodUsage(t *testing.T) {
	now := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(now)
	always := corev1.ContainerRestartPolicyAlways
	grace := int64(30)
	past := metav1.NewTime(now.Add(-time.Minute))
	tests := []struct {
		name string
		pod  corev1.Pod
		want corev1.ResourceList
	}{
		{
			name: "a pod without resources counts as one pod",
			pod:  corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{container("web", nil, nil)}}},
			want: list("pods", "1", "count/pods", "1"),
		},
		{
			name: "containers' requests and limits add up",
			pod: corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
				container("a", list("cpu", "100m", "memory", "64Mi"), list("cpu", "200m", "memory", "128Mi")),
				container("b", list("cpu", "150m"), list("cpu", "300m")),
			}}},
			want: list("pods", "1", "count/pods", "1", "cpu", "250m", "requests.cpu", "250m", "limits.cpu", "500m",
				"memory", "64Mi", "requests.memory", "64Mi", "limits.memory", "128Mi"),
		},
		{
			name: "an init container's larger need wins over the containers' sum",
			pod: corev1.Pod{Spec: corev1.PodSpec{
				InitContainers: []corev1.Container{container("init", list("cpu", "1"), nil)},
				Containers:     []corev1.Container{container("a", list("cpu", "100m"), nil)},
			}},
			want: list("pods", "1", "count/pods", "1", "cpu", "1", "requests.cpu", "1"),
		},
		{
			name: "a sidecar adds to the containers and to later init containers",
			pod: corev1.Pod{Spec: corev1.PodSpec{
				InitContainers: []corev1.Container{
					{Name: "proxy", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: list("cpu", "100m")}},
					container("migrate", list("cpu", "500m"), nil),
				},
				Containers: []corev1.Container{container("a", list("cpu", "200m"), nil)},
			}},
			want: list("pods", "1", "count/pods", "1", "cpu", "600m", "requests.cpu", "600m"),
		},
		{
			name: "a finished pod counts only toward count/pods",
			pod: corev1.Pod{
				Spec:   corev1.PodSpec{Containers: []corev1.Container{container("a", list("cpu", "1"), nil)}},
				Status: corev1.PodStatus{Phase: corev1.PodSucceeded},
			},
			want: list("count/pods", "1"),
		},
		{
			name: "a pod stuck terminating past its grace period stops counting",
			pod: corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &past, DeletionGracePeriodSeconds: &grace},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{container("a", nil, nil)}},
			},
			want: list("count/pods", "1"),
		},
		{
			name: "extended resources and hugepages are charged as requests",
			pod: corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
				container("a", list("example.com/gpu", "2", "hugepages-2Mi", "4Mi"), list("example.com/gpu", "2", "hugepages-2Mi", "4Mi")),
			}}},
			want: list("pods", "1", "count/pods", "1", "requests.example.com/gpu", "2", "hugepages-2Mi", "4Mi", "requests.hugepages-2Mi", "4Mi"),
		},
		{
			name: "pod-level cpu and hugepages replace the containers' sum, and the overhead adds to requests",
			pod: corev1.Pod{Spec: corev1.PodSpec{
				Resources: &corev1.ResourceRequirements{Requests: list("cpu", "1", "hugepages-2Mi", "8Mi")},
				Overhead:  list("cpu", "50m"),
				Containers: []corev1.Container{
					container("a", list("cpu", "100m", "hugepages-2Mi", "2Mi"), nil),
				},
			}},
			want: list("pods", "1", "count/pods", "1", "cpu", "1050m", "requests.cpu", "1050m", "hugepages-2Mi", "8Mi", "requests.hugepages-2Mi", "8Mi"),
		},
	}
	e := NewRegistry(clk).Get(schema.GroupResource{Resource: "pods"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Usage(&tt.pod)
			if err != nil {
				t.Fatal(err)
			}
			if !Equals(got, tt.want) {
				t.Errorf("usage = %s\nwant    %s", PrettyPrint(got), PrettyPrint(tt.want))
			}
		})
	}
}

func TestServiceUsage(t *testing.T) {
	e := NewRegistry(nil).Get(schema.GroupResource{Resource: "services"})
	ports := []corev1.ServicePort{{Port: 80}, {Port: 443}}
	tests := []struct {
		name string
		typ  corev1.ServiceType
		want string
	}{
		{"a ClusterIP service uses no node port", corev1.ServiceTypeClusterIP, "count/services=1,services=1,services.loadbalancers=0,services.nodeports=0"},
		{"a NodePort service uses one node port per port", corev1.ServiceTypeNodePort, "count/services=1,services=1,services.loadbalancers=0,services.nodeports=2"},
		{"a LoadBalancer uses a balancer and node ports", corev1.ServiceTypeLoadBalancer, "count/services=1,services=1,services.loadbalancers=1,services.nodeports=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Usage(&corev1.Service{Spec: corev1.ServiceSpec{Type: tt.typ, Ports: ports}})
			if err != nil {
				t.Fatal(err)
			}
			if PrettyPrint(got) != tt.want {
				t.Errorf("usage = %s, want %s", PrettyPrint(got), tt.want)
			}
		})
	}
}

func TestObjectCountEvaluators(t *testing.T) {
	reg := NewRegistry(nil)
	t.Run("configmaps count under their legacy name too", func(t *testing.T) {
		got, _ := reg.Get(schema.GroupResource{Resource: "configmaps"}).Usage(&corev1.ConfigMap{})
		if PrettyPrint(got) != "configmaps=1,count/configmaps=1" {
			t.Errorf("usage = %s", PrettyPrint(got))
		}
	})
	t.Run("any resource counts as count/<resource>.<group> on create only", func(t *testing.T) {
		e := reg.Get(schema.GroupResource{Group: "apps", Resource: "deployments"})
		got, _ := e.Usage(&corev1.ConfigMap{})
		if PrettyPrint(got) != "count/deployments.apps=1" || !e.Handles(OpCreate) || e.Handles(OpUpdate) {
			t.Errorf("usage = %s, create %v update %v", PrettyPrint(got), e.Handles(OpCreate), e.Handles(OpUpdate))
		}
	})
	t.Run("a quota's count names bring their evaluators", func(t *testing.T) {
		es := reg.ForQuota([]corev1.ResourceName{"count/replicasets.apps", "pods"})
		var got []string
		for _, e := range es {
			got = append(got, e.GroupResource().String())
		}
		if len(got) != 2 || got[0] != "pods" || got[1] != "replicasets.apps" {
			t.Errorf("evaluators = %v", got)
		}
	})
}

func TestScopes(t *testing.T) {
	e := NewRegistry(nil).Get(schema.GroupResource{Resource: "pods"})
	deadline := int64(60)
	bestEffort := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{container("a", nil, nil)}}}
	burstable := &corev1.Pod{Spec: corev1.PodSpec{ActiveDeadlineSeconds: &deadline, PriorityClassName: "high",
		Containers: []corev1.Container{container("a", list("cpu", "100m"), nil)}}}
	quotaWith := func(scopes []corev1.ResourceQuotaScope, sel ...corev1.ScopedResourceSelectorRequirement) *corev1.ResourceQuota {
		q := &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Scopes: scopes}, Status: corev1.ResourceQuotaStatus{Hard: list("pods", "5")}}
		if len(sel) > 0 {
			q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: sel}
		}
		return q
	}
	tests := []struct {
		name string
		q    *corev1.ResourceQuota
		pod  *corev1.Pod
		want bool
	}{
		{"an unscoped quota matches every pod", quotaWith(nil), bestEffort, true},
		{"BestEffort matches a pod without requests", quotaWith([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}), bestEffort, true},
		{"BestEffort does not match a pod with requests", quotaWith([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}), burstable, false},
		{"NotBestEffort matches a pod with requests", quotaWith([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotBestEffort}), burstable, true},
		{"Terminating matches a pod with a deadline", quotaWith([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}), burstable, true},
		{"NotTerminating does not", quotaWith([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}), burstable, false},
		{"a PriorityClass In selector matches the pod's class", quotaWith(nil, corev1.ScopedResourceSelectorRequirement{
			ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}}), burstable, true},
		{"and not another class", quotaWith(nil, corev1.ScopedResourceSelectorRequirement{
			ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"low"}}), burstable, false},
		{"a PriorityClass Exists selector needs a class", quotaWith(nil, corev1.ScopedResourceSelectorRequirement{
			ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpExists}), bestEffort, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Matches(tt.q, tt.pod, e)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("a scoped quota never matches object counts", func(t *testing.T) {
		cm := NewRegistry(nil).Get(schema.GroupResource{Resource: "configmaps"})
		q := quotaWith([]corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort})
		q.Status.Hard = list("configmaps", "1")
		if ok, _ := Matches(q, &corev1.ConfigMap{}, cm); ok {
			t.Error("matched")
		}
	})
}

func TestPodConstraints(t *testing.T) {
	e := NewRegistry(nil).Get(schema.GroupResource{Resource: "pods"})
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		container("web", list("cpu", "100m"), nil),
		container("side", nil, nil),
	}}}
	err := e.Constraints([]corev1.ResourceName{"requests.cpu", "limits.memory", "pods"}, pod)
	want := "must specify limits.memory for: side,web; requests.cpu for: side"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if err := e.Constraints([]corev1.ResourceName{"pods", "count/pods"}, pod); err != nil {
		t.Errorf("pods only: %v", err)
	}
}

func TestListHelpers(t *testing.T) {
	a, b := list("pods", "2", "cpu", "500m"), list("pods", "1", "memory", "1Gi")
	if got := PrettyPrint(Add(a, b)); got != "cpu=500m,memory=1Gi,pods=3" {
		t.Errorf("Add = %s", got)
	}
	if got := PrettyPrint(SubtractWithNonNegativeResult(b, a)); got != "cpu=0,memory=1Gi,pods=0" {
		t.Errorf("Subtract = %s", got)
	}
	ok, exceeded := LessThanOrEqual(list("pods", "3", "cpu", "1"), list("pods", "2", "cpu", "2"))
	if ok || len(exceeded) != 1 || exceeded[0] != "pods" {
		t.Errorf("LessThanOrEqual = %v %v", ok, exceeded)
	}
	if got := PrettyPrint(Mask(a, []corev1.ResourceName{"pods"})); got != "pods=2" {
		t.Errorf("Mask = %s", got)
	}
}

func TestCalculateUsage(t *testing.T) {
	pods := []runtime.Object{
		&corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{container("a", list("cpu", "100m"), nil)}}},
		&corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{container("a", list("cpu", "200m"), nil)}}},
		&corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed}},
	}
	lister := func(gr schema.GroupResource, ns string) ([]runtime.Object, error) {
		if gr.Resource == "pods" && ns == "demo" {
			return pods, nil
		}
		return nil, nil
	}
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "demo"},
		Spec: corev1.ResourceQuotaSpec{Hard: list("pods", "10", "requests.cpu", "1", "count/pods", "10", "configmaps", "5", "count/deployments.apps", "2")}}
	got, err := CalculateUsage(q, NewRegistry(nil), lister)
	if err != nil {
		t.Fatal(err)
	}
	if s := PrettyPrint(got); s != "configmaps=0,count/deployments.apps=0,count/pods=3,pods=2,requests.cpu=300m" {
		t.Errorf("used = %s", s)
	}
}
