package plugins_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/testserver"
)

// TestRuntimeClassPlugin runs pods through the RuntimeClass plugin on a
// real server: the class's overhead and scheduling are applied, and
// kube's refusals read as kube's.
func TestRuntimeClassPlugin(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	cs := srv.Client(t)
	createNamespace(ctx, t, cs, "demo")
	overhead := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	rc := &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc",
		Overhead: &nodev1.Overhead{PodFixed: overhead},
		Scheduling: &nodev1.Scheduling{
			NodeSelector: map[string]string{"runtime": "gvisor"},
			Tolerations:  []corev1.Toleration{{Key: "runtime", Operator: corev1.TolerationOpEqual, Value: "gvisor", Effect: corev1.TaintEffectNoSchedule}},
		},
	}
	if _, err := cs.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name, class string, mutate func(*corev1.Pod)) (*corev1.Pod, error) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
			RuntimeClassName: &class, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
		}}
		if mutate != nil {
			mutate(p)
		}
		return cs.CoreV1().Pods("demo").Create(ctx, p, metav1.CreateOptions{})
	}

	got, err := pod("sandboxed", "gvisor", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "ssd"} })
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Overhead.Cpu().String() != "250m" || got.Spec.Overhead.Memory().String() != "64Mi" {
		t.Errorf("overhead %v", got.Spec.Overhead)
	}
	if got.Spec.NodeSelector["runtime"] != "gvisor" || got.Spec.NodeSelector["disk"] != "ssd" {
		t.Errorf("node selector %v", got.Spec.NodeSelector)
	}
	found := false
	for _, tol := range got.Spec.Tolerations {
		found = found || tol.Key == "runtime" && tol.Value == "gvisor"
	}
	if !found {
		t.Errorf("tolerations %v lack the class's", got.Spec.Tolerations)
	}

	for _, c := range []struct {
		name, class string
		mutate      func(*corev1.Pod)
		want        string
	}{
		{"unknown", "kata", nil, `pods "unknown" is forbidden: pod rejected: RuntimeClass "kata" not found`},
		{"conflict", "gvisor", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"runtime": "runc"} },
			`pods "conflict" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[runtime] = gvisor; pod.spec.nodeSelector[runtime] = runc`},
		{"other-overhead", "gvisor", func(p *corev1.Pod) {
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		},
			`pods "other-overhead" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`},
	} {
		_, err := pod(c.name, c.class, c.mutate)
		if !apierrors.IsForbidden(err) || err.Error() != c.want {
			t.Errorf("%s: err = %v\nwant %s", c.name, err, c.want)
		}
	}
}
