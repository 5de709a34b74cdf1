package cli

import (
	"bytes"
	"strings"
	"testing"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDescribeNodeResourceCountsSidecarsAndPodLevelResources checks describe
// node's pod rows and totals against kubectl's (component-helpers'
// PodRequests and PodLimits): a sidecar runs beside the containers, so it
// adds to their sum; pod-level resources replace the containers' sum.
func TestDescribeNodeResourceCountsSidecarsAndPodLevelResources(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	res := func(cpu, mem string) corev1.ResourceRequirements {
		l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
		return corev1.ResourceRequirements{Requests: l, Limits: l}
	}
	pods := []corev1.Pod{
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "with-sidecar"},
			Spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "proxy", RestartPolicy: &always, Resources: res("200m", "64Mi")}},
				Containers:     []corev1.Container{{Name: "web", Resources: res("300m", "128Mi")}},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "pod-level"},
			Spec: corev1.PodSpec{
				Resources:  &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}, Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
				Containers: []corev1.Container{{Name: "web", Resources: res("100m", "32Mi")}},
			},
		},
	}
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	node := &corev1.Node{Status: corev1.NodeStatus{Allocatable: alloc, Capacity: alloc}}
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 8, 2, ' ', 0)
	describeNodeResource(pods, node, &prefixWriter{out: tw})
	tw.Flush()
	got := buf.String()
	for _, want := range []string{
		"demo  with-sidecar  500m (12%)  500m (12%)  192Mi (18%)  192Mi (18%)",
		"demo  pod-level     1 (25%)     1 (25%)     32Mi (3%)    32Mi (3%)",
		"cpu  1500m (37%)  1500m (37%)",
		"memory  224Mi (21%)  224Mi (21%)",
	} {
		if !strings.Contains(strings.Join(strings.Fields(got), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("describe node lacks %q:\n%s", want, got)
		}
	}
}
