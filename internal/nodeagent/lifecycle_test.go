package nodeagent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestPodLifecycle covers init containers, restart policies and deletion.
func TestPodLifecycle(t *testing.T) {
	_, cs := cluster(t, 1)
	ctx := context.Background()
	const node = "minik-node-1"

	t.Run("init containers run in order before the containers", func(t *testing.T) {
		pod := shellPod("with-init", "cat /work/order; sleep 3600")
		pod.Spec.Volumes = []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		mount := []corev1.VolumeMount{{Name: "work", MountPath: "/work"}}
		pod.Spec.Containers[0].VolumeMounts = mount
		pod.Spec.InitContainers = []corev1.Container{
			{Name: "first", Image: "busybox:1.36", Command: []string{"sh", "-c", "sleep 2; echo first >> /work/order"}, VolumeMounts: mount},
			{Name: "second", Image: "busybox:1.36", Command: []string{"sh", "-c", "echo second >> /work/order"}, VolumeMounts: mount},
		}
		pod = runPod(t, cs, pod, node)
		p := waitPod(t, cs, "default", pod.Name, "initializing", func(p *corev1.Pod) bool {
			return containerStatus(p, "first") != nil && containerStatus(p, "first").State.Running != nil
		})
		if c := condition(p, corev1.PodInitialized); c == nil || c.Status != corev1.ConditionFalse || c.Message != "containers with incomplete status: [first second]" {
			t.Errorf("Initialized %+v", c)
		}
		if r := waitingReason(p, "second"); r != "PodInitializing" {
			t.Errorf("second waits for %q", r)
		}
		if r := waitingReason(p, "app"); r != "PodInitializing" {
			t.Errorf("app waits for %q", r)
		}
		if p.Status.Phase != corev1.PodPending {
			t.Errorf("phase %s", p.Status.Phase)
		}
		p = waitPod(t, cs, "default", pod.Name, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning && isReady(p) })
		for _, name := range []string{"first", "second"} {
			st := containerStatus(p, name)
			if term := st.State.Terminated; term == nil || term.ExitCode != 0 || term.Reason != "Completed" {
				t.Errorf("%s: %+v", name, st.State)
			}
			// As the kubelet reports a completed init container.
			if !st.Ready || st.Started == nil || *st.Started {
				t.Errorf("%s: ready %v started %v, want ready and not started", name, st.Ready, st.Started)
			}
		}
		waitFor(t, 10*time.Second, "the log", func(ctx context.Context) (bool, error) {
			return readLogs(t, cs, pod.Name, &corev1.PodLogOptions{}) == "first\nsecond\n", nil
		})
	})

	t.Run("restartPolicy Never: a command that succeeds makes the pod Succeeded", func(t *testing.T) {
		pod := shellPod("job-ok", "echo done")
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		runPod(t, cs, pod, node)
		p := waitPod(t, cs, "default", "job-ok", "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
		if c := condition(p, corev1.PodReady); c.Status != corev1.ConditionFalse || c.Reason != "PodCompleted" {
			t.Errorf("Ready %+v", c)
		}
		if term := containerStatus(p, "app").State.Terminated; term == nil || term.Reason != "Completed" || containerStatus(p, "app").RestartCount != 0 {
			t.Errorf("status %+v", containerStatus(p, "app"))
		}
		if got := readLogs(t, cs, "job-ok", &corev1.PodLogOptions{}); got != "done\n" {
			t.Errorf("log %q", got)
		}
	})

	t.Run("restartPolicy Never: a command that fails makes the pod Failed", func(t *testing.T) {
		pod := shellPod("job-fail", "echo boom >&2; exit 3")
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		runPod(t, cs, pod, node)
		p := waitPod(t, cs, "default", "job-fail", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
		if term := containerStatus(p, "app").State.Terminated; term == nil || term.ExitCode != 3 || term.Reason != "Error" {
			t.Errorf("status %+v", containerStatus(p, "app").State)
		}
	})

	t.Run("restartPolicy OnFailure restarts until the command succeeds", func(t *testing.T) {
		pod := shellPod("retry", "if [ -f /data/ok ]; then echo ok; exit 0; fi; touch /data/ok; exit 1")
		pod.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		runPod(t, cs, pod, node)
		p := waitPod(t, cs, "default", "retry", "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
		if c := containerStatus(p, "app"); c.RestartCount != 1 || c.LastTerminationState.Terminated == nil || c.LastTerminationState.Terminated.ExitCode != 1 {
			t.Errorf("status %+v", c)
		}
	})

	t.Run("a deleted pod is stopped, then removed by its node", func(t *testing.T) {
		pod := runPod(t, cs, nginxPod("to-delete"), node)
		waitPod(t, cs, "default", pod.Name, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning && isReady(p) })
		if err := cs.CoreV1().Pods("default").Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "the pod to go", func(ctx context.Context) (bool, error) {
			_, err := cs.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		waitEvent(t, cs, pod, corev1.EventTypeNormal, "Killing", "Stopping container nginx")
	})

	t.Run("a container that ignores SIGTERM is killed when the grace period ends", func(t *testing.T) {
		pod := shellPod("stubborn", "while true; do sleep 1; done")
		grace := int64(60)
		pod.Spec.TerminationGracePeriodSeconds = &grace
		pod = runPod(t, cs, pod, node)
		waitPod(t, cs, "default", pod.Name, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		start := time.Now()
		if err := cs.CoreV1().Pods("default").Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "the pod to go", func(ctx context.Context) (bool, error) {
			_, err := cs.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		// 60s of simulated time at 50x is 1.2s.
		if d := time.Since(start); d < time.Second {
			t.Errorf("the pod went after %v, before its grace period", d)
		}
	})

	t.Run("an unknown executable is a StartError, then CrashLoopBackOff", func(t *testing.T) {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "no-such-binary"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "busybox:1.36", Command: []string{"/app/server"},
		}}}}
		pod = runPod(t, cs, pod, node)
		p := waitPod(t, cs, "default", pod.Name, "CrashLoopBackOff", func(p *corev1.Pod) bool { return waitingReason(p, "app") == "CrashLoopBackOff" })
		last := containerStatus(p, "app").LastTerminationState.Terminated
		if last == nil || last.Reason != "StartError" || last.ExitCode != 128 || !strings.Contains(last.Message, `exec: "/app/server": executable file not found in $PATH`) {
			t.Errorf("last state %+v", last)
		}
		waitEvent(t, cs, pod, corev1.EventTypeWarning, "Failed", `Error: failed to create containerd task: failed to create shim task: OCI runtime create failed`)
	})
}

// TestProbes: a startup probe holds the other probes back until it
// succeeds; a tcpSocket probe dials the pod for real.
func TestProbes(t *testing.T) {
	_, cs := cluster(t, 1)
	const node = "minik-node-1"
	t.Run("a container is not started until its startup probe succeeds", func(t *testing.T) {
		pod := shellPod("slow-start", "sleep 5; touch /tmp/started; sleep 3600")
		pod.Spec.Containers[0].StartupProbe = &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/started"}}},
			PeriodSeconds: 1, FailureThreshold: 30,
		}
		pod = runPod(t, cs, pod, node)
		p := waitPod(t, cs, "default", pod.Name, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		if c := containerStatus(p, "app"); c.Started == nil || *c.Started || c.Ready {
			t.Errorf("before its startup probe: started %v ready %v", c.Started, c.Ready)
		}
		waitEvent(t, cs, pod, corev1.EventTypeWarning, "Unhealthy", "Startup probe failed: cat: can't open '/tmp/started': No such file or directory")
		p = waitPod(t, cs, "default", pod.Name, "Ready", isReady)
		if c := containerStatus(p, "app"); c.Started == nil || !*c.Started || c.RestartCount != 0 {
			t.Errorf("after: %+v", c)
		}
	})
	t.Run("a tcpSocket probe dials the server", func(t *testing.T) {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "redis"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "redis", Image: "redis:7.2", Ports: []corev1.ContainerPort{{Name: "redis", ContainerPort: 6379}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("redis")}}},
			LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(6380)}}, PeriodSeconds: 1},
		}}}}
		pod = runPod(t, cs, pod, node)
		waitPod(t, cs, "default", pod.Name, "Ready", isReady)
		ip := waitPod(t, cs, "default", pod.Name, "an IP", func(p *corev1.Pod) bool { return p.Status.PodIP != "" }).Status.PodIP
		waitEvent(t, cs, pod, corev1.EventTypeWarning, "Unhealthy", "Liveness probe failed: dial tcp "+ip+":6380: connect: connection refused")
		waitEvent(t, cs, pod, corev1.EventTypeNormal, "Killing", "Container redis failed liveness probe, will be restarted")
	})
}
