package registry_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"minik/internal/testserver"
)

// TestPodResize resizes a pod in place through pods/resize against a real
// minikd, as kube v1.37 serves it: only the containers' cpu and memory
// change, the rest of what is sent is ignored, and kube's
// ValidatePodResize refuses the rest.
func TestPodResize(t *testing.T) {
	srv := testserver.Start(t)
	cs := srv.Client(t)
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "resize"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := cs.CoreV1().Pods("resize")
	res := func(cpu, mem string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	}
	created, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "nginx:1.27",
			Resources: corev1.ResourceRequirements{Requests: res("100m", "64Mi"), Limits: res("200m", "128Mi")},
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("a resize changes the containers' resources and nothing else it sends", func(t *testing.T) {
		pod := created.DeepCopy()
		pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: res("150m", "64Mi"), Limits: res("300m", "128Mi")}
		pod.Spec.Containers[0].Image = "nginx:1.28"
		pod.Labels["app"] = "changed"
		pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](30)
		got, err := pods.UpdateResize(ctx, "web", pod, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("resize: %v", err)
		}
		c := got.Spec.Containers[0]
		if cpu := c.Resources.Limits[corev1.ResourceCPU]; cpu.String() != "300m" {
			t.Errorf("cpu limit after resize %s; want 300m", cpu.String())
		}
		if cpu := c.Resources.Requests[corev1.ResourceCPU]; cpu.String() != "150m" {
			t.Errorf("cpu request after resize %s; want 150m", cpu.String())
		}
		if c.Image != "nginx:1.27" || got.Labels["app"] != "web" || got.Spec.ActiveDeadlineSeconds != nil {
			t.Errorf("resize changed more than resources: image %s, labels %v, activeDeadlineSeconds %v", c.Image, got.Labels, got.Spec.ActiveDeadlineSeconds)
		}
		if got.Generation != created.Generation+1 {
			t.Errorf("generation %d after a resize; want %d", got.Generation, created.Generation+1)
		}
		back, err := pods.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cpu := back.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU]; cpu.String() != "300m" {
			t.Errorf("stored cpu limit %s; want 300m", cpu.String())
		}
	})

	t.Run("a strategic merge patch of pods/resize changes memory", func(t *testing.T) {
		patch := `{"spec":{"containers":[{"name":"app","resources":{"requests":{"memory":"96Mi"},"limits":{"memory":"256Mi"}}}]}}`
		got, err := pods.Patch(ctx, "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "resize")
		if err != nil {
			t.Fatalf("patch resize: %v", err)
		}
		if mem := got.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]; mem.String() != "256Mi" {
			t.Errorf("memory limit after patch %s; want 256Mi", mem.String())
		}
	})

	for _, tc := range []struct {
		name  string
		patch string
		want  []string
	}{
		{"removing a limit is refused",
			`[{"op":"remove","path":"/spec/containers/0/resources/limits/cpu"}]`,
			[]string{"spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed"}},
		{"changing the QoS class is refused",
			`[{"op":"replace","path":"/spec/containers/0/resources/limits/cpu","value":"150m"},{"op":"replace","path":"/spec/containers/0/resources/requests/memory","value":"256Mi"}]`,
			[]string{`spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing`}},
		{"another resource than cpu and memory is refused",
			`[{"op":"add","path":"/spec/containers/0/resources/limits/ephemeral-storage","value":"1Gi"}]`,
			[]string{"spec: Forbidden: only cpu and memory resources are mutable"}},
		{"renaming a container is refused",
			`[{"op":"replace","path":"/spec/containers/0/name","value":"other"}]`,
			[]string{"spec.containers[0].name: Forbidden: containers may not be renamed or reordered on resize"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pods.Patch(ctx, "web", types.JSONPatchType, []byte(tc.patch), metav1.PatchOptions{}, "resize")
			if !apierrors.IsInvalid(err) {
				t.Fatalf("patch %s: %v; want Invalid", tc.patch, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}

	t.Run("the pod itself still refuses a change of resources", func(t *testing.T) {
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "resources": map[string]any{"limits": map[string]any{"cpu": "1"}}}}}})
		_, err := pods.Patch(ctx, "web", types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "pod updates may not change fields other than") {
			t.Errorf("patch of the pod's resources: %v; want kube's Forbidden", err)
		}
	})
}
