package resourcequota_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"minik/internal/admission/quota"
	"minik/internal/controllers"
	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/resourcequota"
	"minik/internal/testserver"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func pod(name, cpu string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "nginx", Image: "nginx", Resources: corev1.ResourceRequirements{Requests: rl("cpu", cpu), Limits: rl("cpu", cpu)},
	}}}}
}

// status returns a quota's status as "hard | used".
func status(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	q, err := cs.CoreV1().ResourceQuotas(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return quota.PrettyPrint(q.Status.Hard) + " | " + quota.PrettyPrint(q.Status.Used)
}

func waitStatus(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name, want string) {
	t.Helper()
	var got string
	ctrltest.Wait(t, "quota status "+want, func() bool {
		got = status(ctx, t, cs, ns, name)
		return got == want
	})
}

func TestControllerKeepsUsageRight(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{resourcequota.Name}})
	ctx := context.Background()
	cs := srv.Client(t)
	const ns = "demo"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Objects that exist before the quota are counted when it appears.
	for _, name := range []string{"a", "b"} {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod(name, "100m"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	replicas := int32(1)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}}},
	}}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "compute"}, Spec: corev1.ResourceQuotaSpec{
		Hard: rl("pods", "10", "requests.cpu", "2", "configmaps", "5", "count/deployments.apps", "3"),
	}}
	if _, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Run("a new quota gets its hard limits and usage", func(t *testing.T) {
		waitStatus(ctx, t, cs, ns, "compute",
			"configmaps=5,count/deployments.apps=3,pods=10,requests.cpu=2 | configmaps=0,count/deployments.apps=1,pods=2,requests.cpu=200m")
		// The API server's quota admission reads its own informer, which
		// may trail the controller's: a pod too big for the quota shows
		// when it sees the quota.
		ctrltest.Wait(t, "quota admission to see the quota", func() bool {
			_, err := cs.CoreV1().Pods(ns).Create(ctx, pod("probe", "3"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return apierrors.IsForbidden(err)
		})
	})
	t.Run("admission charges a created pod", func(t *testing.T) {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod("c", "300m"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitStatus(ctx, t, cs, ns, "compute",
			"configmaps=5,count/deployments.apps=3,pods=10,requests.cpu=2 | configmaps=0,count/deployments.apps=1,pods=3,requests.cpu=500m")
	})
	t.Run("a deleted pod is given back", func(t *testing.T) {
		if err := cs.CoreV1().Pods(ns).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitStatus(ctx, t, cs, ns, "compute",
			"configmaps=5,count/deployments.apps=3,pods=10,requests.cpu=2 | configmaps=0,count/deployments.apps=1,pods=2,requests.cpu=400m")
	})
	t.Run("a pod that finished stops counting", func(t *testing.T) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "b", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Phase = corev1.PodSucceeded
		if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitStatus(ctx, t, cs, ns, "compute",
			"configmaps=5,count/deployments.apps=3,pods=10,requests.cpu=2 | configmaps=0,count/deployments.apps=1,pods=1,requests.cpu=300m")
	})
	t.Run("a changed spec is published and counted", func(t *testing.T) {
		cur, err := cs.CoreV1().ResourceQuotas(ns).Get(ctx, "compute", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur.Spec.Hard = rl("pods", "4", "count/pods", "10")
		if _, err := cs.CoreV1().ResourceQuotas(ns).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitStatus(ctx, t, cs, ns, "compute", "count/pods=10,pods=4 | count/pods=2,pods=1")
	})
}

func TestConstructorValidates(t *testing.T) {
	if _, err := resourcequota.New(&controllers.Context{}); err == nil {
		t.Error("a context without a client was accepted")
	}
}
