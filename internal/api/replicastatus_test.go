package api_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/testserver"
)

// TestStatusWritesAreValidated: a ReplicationController's status written
// through /status must count consistently, as kube's status strategy
// checks; the spec's validation still applies.
func TestStatusWritesAreValidated(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	cs := srv.Client(t)
	namespace(t, cs, "demo")
	rc, err := cs.CoreV1().ReplicationControllers("demo").Create(ctx, &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ReplicationControllerSpec{Template: &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rc.Status = corev1.ReplicationControllerStatus{Replicas: 1, ReadyReplicas: 2}
	_, err = cs.CoreV1().ReplicationControllers("demo").UpdateStatus(ctx, rc, metav1.UpdateOptions{})
	want := `ReplicationController "web" is invalid: status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("err = %v; want %s", err, want)
	}
	rc.Status = corev1.ReplicationControllerStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, ObservedGeneration: 1}
	if _, err := cs.CoreV1().ReplicationControllers("demo").UpdateStatus(ctx, rc, metav1.UpdateOptions{}); err != nil {
		t.Errorf("a consistent status: %v", err)
	}
}
