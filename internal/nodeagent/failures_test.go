package nodeagent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The failure checkpoints of the seed, one manifest each in
// testdata/failures: each must read as on a real cluster.
func TestFailures(t *testing.T) {
	_, cs := cluster(t, 2)
	ctx := context.Background()

	t.Run("a bad image tag fails to pull, then backs off", func(t *testing.T) {
		pod := runPod(t, cs, loadPod(t, "bad-image-tag.yaml"), "minik-node-1")
		p := waitPod(t, cs, "default", pod.Name, "ErrImagePull", func(p *corev1.Pod) bool { return waitingReason(p, "nginx") == "ErrImagePull" })
		if msg := containerStatus(p, "nginx").State.Waiting.Message; !strings.Contains(msg, `rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:1.277"`) {
			t.Errorf("ErrImagePull message %q", msg)
		}
		p = waitPod(t, cs, "default", pod.Name, "ImagePullBackOff", func(p *corev1.Pod) bool { return waitingReason(p, "nginx") == "ImagePullBackOff" })
		if msg := containerStatus(p, "nginx").State.Waiting.Message; !strings.HasPrefix(msg, `Back-off pulling image "nginx:1.277": ErrImagePull: rpc error: code = NotFound`) {
			t.Errorf("ImagePullBackOff message %q", msg)
		}
		if p.Status.Phase != corev1.PodPending || isReady(p) {
			t.Errorf("phase %s, ready %v", p.Status.Phase, isReady(p))
		}
		if c := condition(p, corev1.ContainersReady); c == nil || c.Reason != "ContainersNotReady" || c.Message != "containers with unready status: [nginx]" {
			t.Errorf("ContainersReady %+v", c)
		}
		waitEvent(t, cs, pod, corev1.EventTypeNormal, "Pulling", `Pulling image "nginx:1.277"`)
		waitEvent(t, cs, pod, corev1.EventTypeWarning, "Failed", `Failed to pull image "nginx:1.277": rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:1.277": failed to resolve reference "docker.io/library/nginx:1.277": docker.io/library/nginx:1.277: not found`)
		waitEvent(t, cs, pod, corev1.EventTypeWarning, "Failed", "Error: ErrImagePull")
		waitEvent(t, cs, pod, corev1.EventTypeNormal, "BackOff", `Back-off pulling image "nginx:1.277"`)
		waitEvent(t, cs, pod, corev1.EventTypeWarning, "Failed", "Error: ImagePullBackOff")
		_, err := cs.CoreV1().Pods("default").GetLogs(pod.Name, &corev1.PodLogOptions{}).Stream(ctx)
		if !apierrors.IsBadRequest(err) || !strings.HasPrefix(err.Error(), `container "nginx" in pod "bad-image-tag" is waiting to start: `) {
			t.Errorf("logs of a pod that cannot pull: %v", err)
		}
	})

	t.Run("a crashing command crash-loops and its previous log stays readable", func(t *testing.T) {
		pod := runPod(t, cs, loadPod(t, "crash-loop.yaml"), "minik-node-2")
		p := waitPod(t, cs, "default", pod.Name, "CrashLoopBackOff after 2 restarts", func(p *corev1.Pod) bool {
			c := containerStatus(p, "app")
			return c != nil && c.RestartCount >= 2 && waitingReason(p, "app") == "CrashLoopBackOff"
		})
		c := containerStatus(p, "app")
		if !strings.HasPrefix(c.State.Waiting.Message, "back-off ") || !strings.Contains(c.State.Waiting.Message, "restarting failed container=app pod=crash-loop_default(") {
			t.Errorf("waiting message %q", c.State.Waiting.Message)
		}
		if l := c.LastTerminationState.Terminated; l == nil || l.ExitCode != 1 || l.Reason != "Error" {
			t.Errorf("last state %+v", c.LastTerminationState)
		}
		if p.Status.Phase != corev1.PodRunning || isReady(p) {
			t.Errorf("phase %s ready %v", p.Status.Phase, isReady(p))
		}
		waitEvent(t, cs, pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container app in pod crash-loop_default(")
		prev, err := cs.CoreV1().Pods("default").GetLogs(pod.Name, &corev1.PodLogOptions{Previous: true}).DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := "starting app version 1.4.2\nfatal: cannot connect to database at db.demo.svc:5432\n"; string(prev) != want {
			t.Errorf("previous log %q, want %q", prev, want)
		}
		waitPod(t, cs, "default", pod.Name, "restartCount growing", func(p *corev1.Pod) bool {
			return containerStatus(p, "app").RestartCount >= 3
		})
	})

	t.Run("a missing ConfigMap in env is a CreateContainerConfigError until it exists", func(t *testing.T) {
		pod := runPod(t, cs, loadPod(t, "missing-configmap-env.yaml"), "minik-node-1")
		p := waitPod(t, cs, "default", pod.Name, "CreateContainerConfigError", func(p *corev1.Pod) bool {
			return waitingReason(p, "app") == "CreateContainerConfigError"
		})
		if msg := containerStatus(p, "app").State.Waiting.Message; msg != `configmap "app-config" not found` {
			t.Errorf("message %q", msg)
		}
		if p.Status.Phase != corev1.PodPending {
			t.Errorf("phase %s", p.Status.Phase)
		}
		waitEvent(t, cs, pod, corev1.EventTypeWarning, "Failed", `Error: configmap "app-config" not found`)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-config"}, Data: map[string]string{"other": "x"}}
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitEvent(t, cs, pod, corev1.EventTypeWarning, "Failed", "Error: couldn't find key log-level in ConfigMap default/app-config")
		cm.Data["log-level"] = "debug"
		if _, err := cs.CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		p = waitPod(t, cs, "default", pod.Name, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning && isReady(p) })
		for _, typ := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
			if c := condition(p, typ); c.Reason != "" || c.Message != "" {
				t.Errorf("%s, now True, kept %q %q", typ, c.Reason, c.Message)
			}
		}
		waitFor(t, 10e9, "the log line", func(ctx context.Context) (bool, error) {
			out, err := cs.CoreV1().Pods("default").GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
			return err == nil && string(out) == "log level is debug\n", nil
		})
	})

	t.Run("a subPathExpr that is absolute, climbs or lacks a value is a CreateContainerConfigError until the pod changes", func(t *testing.T) {
		pod := func(name, value, expr string) *corev1.Pod {
			return &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"other": "x"}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "app", Image: "busybox:1.36", Command: []string{"sh", "-c", "tail -f /dev/null"},
						Env: []corev1.EnvVar{{Name: "POD_NAME", Value: value}, {Name: "ANNOTATION", ValueFrom: &corev1.EnvVarSource{
							FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.annotations['mysubpath']"}}}},
						VolumeMounts: []corev1.VolumeMount{{Name: "work", MountPath: "/logs", SubPathExpr: expr}},
					}},
					Volumes: []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				},
			}
		}
		for _, c := range []struct{ name, value, expr, msg string }{
			{"subpath-climbs", "..", "$(POD_NAME)", "unable to provision SubPath `..`: must not contain '..'"},
			{"subpath-absolute", "/tmp", "$(POD_NAME)", "error SubPath `/tmp` must not be an absolute path"},
			{"subpath-missing", "foo", "$(ANNOTATION)/$(POD_NAME)", "missing value for ANNOTATION"},
		} {
			runPod(t, cs, pod(c.name, c.value, c.expr), "minik-node-2")
			p := waitPod(t, cs, "default", c.name, "CreateContainerConfigError", func(p *corev1.Pod) bool {
				return waitingReason(p, "app") == "CreateContainerConfigError"
			})
			if msg := containerStatus(p, "app").State.Waiting.Message; msg != c.msg || p.Status.Phase != corev1.PodPending {
				t.Errorf("%s: phase %s, message %q, want %q", c.name, p.Status.Phase, msg, c.msg)
			}
		}
		p, err := cs.CoreV1().Pods("default").Get(ctx, "subpath-missing", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Annotations["mysubpath"] = "mypath"
		if _, err := cs.CoreV1().Pods("default").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitPod(t, cs, "default", "subpath-missing", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		// tail -f /dev/null keeps running (the conformance spec deletes
		// the pod while it runs).
		waitFor(t, 10*time.Second, "the container to have run a while", func(ctx context.Context) (bool, error) {
			p, err := cs.CoreV1().Pods("default").Get(ctx, "subpath-missing", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			st := containerStatus(p, "app")
			if st.State.Running == nil {
				return false, fmt.Errorf("container not running: %+v", st.State)
			}
			return time.Since(st.State.Running.StartedAt.Time) > 2*time.Second, nil
		})
	})

	t.Run("a missing ConfigMap volume fails the mount until it exists", func(t *testing.T) {
		pod := runPod(t, cs, loadPod(t, "missing-configmap-volume.yaml"), "minik-node-2")
		waitEvent(t, cs, pod, corev1.EventTypeWarning, "FailedMount", `MountVolume.SetUp failed for volume "config" : configmap "web-config" not found`)
		p := waitPod(t, cs, "default", pod.Name, "ContainerCreating", func(p *corev1.Pod) bool { return waitingReason(p, "nginx") == "ContainerCreating" })
		if p.Status.Phase != corev1.PodPending || p.Status.PodIP != "" {
			t.Errorf("phase %s, pod IP %q", p.Status.Phase, p.Status.PodIP)
		}
		if c := condition(p, corev1.PodReadyToStartContainers); c == nil || c.Status != corev1.ConditionFalse {
			t.Errorf("PodReadyToStartContainers %+v", c)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config"}, Data: map[string]string{"index.html": "<h1>hello from a ConfigMap</h1>\n"}}
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		p = waitPod(t, cs, "default", pod.Name, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning && isReady(p) })
		body := httpGet(t, "http://"+p.Status.PodIP+"/")
		if body != "<h1>hello from a ConfigMap</h1>\n" {
			t.Errorf("nginx serves %q", body)
		}
	})

	t.Run("a readiness probe on a wrong path keeps the pod unready", func(t *testing.T) {
		pod := runPod(t, cs, loadPod(t, "readiness-wrong-path.yaml"), "minik-node-1")
		waitEvent(t, cs, pod, corev1.EventTypeWarning, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 404")
		p := waitPod(t, cs, "default", pod.Name, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		if isReady(p) || containerStatus(p, "nginx").Ready || containerStatus(p, "nginx").State.Running == nil {
			t.Errorf("status %s", statusSummary(p))
		}
		if c := condition(p, corev1.PodReady); c.Reason != "ContainersNotReady" || c.Message != "containers with unready status: [nginx]" {
			t.Errorf("Ready %+v", c)
		}
	})

	t.Run("a readiness probe on a wrong port keeps the pod unready", func(t *testing.T) {
		pod := runPod(t, cs, loadPod(t, "readiness-wrong-port.yaml"), "minik-node-2")
		p := waitPod(t, cs, "default", pod.Name, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		ip := p.Status.PodIP
		waitEvent(t, cs, pod, corev1.EventTypeWarning, "Unhealthy", `Readiness probe failed: Get "http://`+ip+`:8080/": dial tcp `+ip+`:8080: connect: connection refused`)
		p = waitPod(t, cs, "default", pod.Name, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		if isReady(p) {
			t.Errorf("ready: %s", statusSummary(p))
		}
	})

	t.Run("a failing liveness probe restarts the container", func(t *testing.T) {
		pod := runPod(t, cs, loadPod(t, "liveness-failing.yaml"), "minik-node-1")
		waitEvent(t, cs, pod, corev1.EventTypeWarning, "Unhealthy", "Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory")
		waitEvent(t, cs, pod, corev1.EventTypeNormal, "Killing", "Container app failed liveness probe, will be restarted")
		p := waitPod(t, cs, "default", pod.Name, "restarted", func(p *corev1.Pod) bool {
			c := containerStatus(p, "app")
			return c.RestartCount >= 1 && c.State.Running != nil
		})
		if l := containerStatus(p, "app").LastTerminationState.Terminated; l == nil || l.ExitCode != 137 {
			t.Errorf("last state %+v", containerStatus(p, "app").LastTerminationState)
		}
	})
}
