package resourceclaim_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/garbagecollector"
	"minik/internal/controllers/resourceclaim"
	"minik/internal/testserver"
)

const ns = "dra"

func gpuSpec() resourcev1.ResourceClaimSpec {
	return resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
		{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.example.com"}},
	}}}
}

func podUsing(name, node string, claims ...corev1.PodResourceClaim) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{NodeName: node, ResourceClaims: claims, Containers: []corev1.Container{{
			Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: claims[0].Name}}},
		}}},
	}
}

// TestClaimsFromTemplates runs the controller against a real API server:
// a pod's claim from a template is made, owned by the pod and recorded in
// its status; an allocated claim is reserved for the scheduled pod that
// uses it, and released, with the pod's own claim deleted, once the pod
// is done.
func TestClaimsFromTemplates(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{resourceclaim.Name}})
	cs := srv.Client(t)
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	template := &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-template"},
		Spec: resourcev1.ResourceClaimTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "ml"}, Annotations: map[string]string{"note": "from template"}},
			Spec:       gpuSpec(),
		},
	}
	if _, err := cs.ResourceV1().ResourceClaimTemplates(ns).Create(ctx, template, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	shared := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Spec: gpuSpec()}
	if _, err := cs.ResourceV1().ResourceClaims(ns).Create(ctx, shared, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	allocate(t, cs, "shared")

	templateName, sharedName := "gpu-template", "shared"
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, podUsing("train", "node-1",
		corev1.PodResourceClaim{Name: "gpu", ResourceClaimTemplateName: &templateName},
		corev1.PodResourceClaim{Name: "more", ResourceClaimName: &sharedName},
	), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// The claim of the template, recorded in the pod's status.
	var claimName string
	ctrltest.Wait(t, "the pod's status names its generated claim", func() bool {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "train", metav1.GetOptions{})
		if err != nil || len(p.Status.ResourceClaimStatuses) != 1 {
			return false
		}
		s := p.Status.ResourceClaimStatuses[0]
		if s.Name != "gpu" || s.ResourceClaimName == nil {
			t.Fatalf("resourceClaimStatuses %+v; want the claim of gpu", p.Status.ResourceClaimStatuses)
		}
		claimName = *s.ResourceClaimName
		return true
	})
	claim, err := cs.ResourceV1().ResourceClaims(ns).Get(ctx, claimName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owner := metav1.GetControllerOf(claim)
	switch {
	case !strings.HasPrefix(claim.Name, "train-gpu-") || len(claim.Name) != len("train-gpu-")+5:
		t.Errorf("claim name %q; want train-gpu- and 5 random characters", claim.Name)
	case owner == nil || owner.Kind != "Pod" || owner.UID != pod.UID:
		t.Errorf("controller %+v; want the pod", owner)
	case claim.Annotations[resourcev1.PodResourceClaimAnnotation] != "gpu" || claim.Annotations["note"] != "from template" || claim.Labels["team"] != "ml":
		t.Errorf("annotations %v labels %v; want the template's and %s=gpu", claim.Annotations, claim.Labels, resourcev1.PodResourceClaimAnnotation)
	case claim.Spec.Devices.Requests[0].Exactly.DeviceClassName != "gpu.example.com":
		t.Errorf("spec %+v; want the template's", claim.Spec)
	}

	// The allocated claim the scheduled pod uses is reserved for it.
	ctrltest.Wait(t, "the shared claim reserved for the pod", func() bool {
		c, err := cs.ResourceV1().ResourceClaims(ns).Get(ctx, "shared", metav1.GetOptions{})
		return err == nil && slices.ContainsFunc(c.Status.ReservedFor, func(r resourcev1.ResourceClaimConsumerReference) bool {
			return r.Resource == "pods" && r.Name == "train" && r.UID == pod.UID
		})
	})

	// Once the pod is done, the reservation goes and so does its own claim.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "train", metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Status.Phase = corev1.PodSucceeded
		_, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "the shared claim released", func() bool {
		c, err := cs.ResourceV1().ResourceClaims(ns).Get(ctx, "shared", metav1.GetOptions{})
		return err == nil && len(c.Status.ReservedFor) == 0
	})
	ctrltest.Wait(t, "the generated claim deleted", func() bool {
		_, err := cs.ResourceV1().ResourceClaims(ns).Get(ctx, claimName, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

// TestDeletedClaimIsMadeAgain: a pod's generated claim deleted while the
// pod may still run is made again and the pod's status follows.
func TestDeletedClaimIsMadeAgain(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{resourceclaim.Name}})
	cs := srv.Client(t)
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	templateName := "tmpl"
	// The pod comes first: its claim is made once the template exists.
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, podUsing("p", "", corev1.PodResourceClaim{Name: "gpu", ResourceClaimTemplateName: &templateName}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	template := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: templateName}, Spec: resourcev1.ResourceClaimTemplateSpec{Spec: gpuSpec()}}
	if _, err := cs.ResourceV1().ResourceClaimTemplates(ns).Create(ctx, template, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := claimOf(t, cs, "p", "")
	if err := cs.ResourceV1().ResourceClaims(ns).Delete(ctx, first, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A change of the pod brings it back to the controller.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Labels = map[string]string{"touched": "yes"}
		_, err = cs.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	second := claimOf(t, cs, "p", first)
	if _, err := cs.ResourceV1().ResourceClaims(ns).Get(ctx, second, metav1.GetOptions{}); err != nil {
		t.Errorf("the new claim %s: %v", second, err)
	}
}

// claimOf waits for the pod's status to name a claim other than not and
// returns it.
func claimOf(t *testing.T, cs kubernetes.Interface, pod, not string) string {
	t.Helper()
	var name string
	ctrltest.Wait(t, "the pod's claim", func() bool {
		p, err := cs.CoreV1().Pods(ns).Get(context.Background(), pod, metav1.GetOptions{})
		if err != nil || len(p.Status.ResourceClaimStatuses) == 0 || p.Status.ResourceClaimStatuses[0].ResourceClaimName == nil {
			return false
		}
		name = *p.Status.ResourceClaimStatuses[0].ResourceClaimName
		return name != not
	})
	return name
}

// allocate writes an allocation of one device to the claim, as a
// scheduler would.
func allocate(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	ctx := context.Background()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := cs.ResourceV1().ResourceClaims(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
			{Request: "gpu", Driver: "gpu.example.com", Pool: "node-1", Device: "gpu-0"},
		}}}
		_, err = cs.ResourceV1().ResourceClaims(ns).UpdateStatus(ctx, c, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestGeneratedClaimGoesWithItsPod: the garbage collector deletes the
// claim made for a pod once the pod is gone, as in kube.
func TestGeneratedClaimGoesWithItsPod(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{resourceclaim.Name, garbagecollector.Name}})
	cs := srv.Client(t)
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	templateName := "tmpl"
	template := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: templateName}, Spec: resourcev1.ResourceClaimTemplateSpec{Spec: gpuSpec()}}
	if _, err := cs.ResourceV1().ResourceClaimTemplates(ns).Create(ctx, template, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, podUsing("p", "", corev1.PodResourceClaim{Name: "gpu", ResourceClaimTemplateName: &templateName}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	claim := claimOf(t, cs, "p", "")
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "the claim deleted with its pod", func() bool {
		_, err := cs.ResourceV1().ResourceClaims(ns).Get(ctx, claim, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}
