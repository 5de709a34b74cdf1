package nodeagent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNodesReadOnlyWhatTheirPodsReference: under the node authorizer a
// node may get only the Secrets and ConfigMaps its pods reference; pods
// bound an instant before their node reads them still start at once, with
// no denied read in their events (the node retries while the authorizer's
// graph catches up).
func TestNodesReadOnlyWhatTheirPodsReference(t *testing.T) {
	_, cs := cluster(t, 2)
	ctx := context.Background()
	for i := range 6 {
		name := fmt.Sprintf("app-%d", i)
		meta := metav1.ObjectMeta{Namespace: "default", Name: name}
		if _, err := cs.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: meta, StringData: map[string]string{"password": "s3cret"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"mode": "debug"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var pods []*corev1.Pod
	for i := range 6 {
		name := fmt.Sprintf("app-%d", i)
		ref := corev1.LocalObjectReference{Name: name}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}}},
			Containers: []corev1.Container{{
				Name: "app", Image: "nginx:1.27",
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: ref}}},
				Env: []corev1.EnvVar{{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{
					SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: ref, Key: "password"},
				}}},
			}},
		}}
		pods = append(pods, runPod(t, cs, pod, fmt.Sprintf("minik-node-%d", 1+i%2)))
	}
	for _, pod := range pods {
		waitPod(t, cs, "default", pod.Name, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		for _, e := range podEvents(t, cs, pod) {
			if e.Type == corev1.EventTypeWarning || strings.Contains(e.Message, "forbidden") {
				t.Errorf("pod %s: event %s %s %q", pod.Name, e.Type, e.Reason, e.Message)
			}
		}
	}
}
