package nodeagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// agnhost is the image the conformance suite pins.
const agnhost = "registry.k8s.io/e2e-test-images/agnhost:2.66.1"

// netexecPod is the conformance suite's netexec pod: HTTP on 8083, UDP on
// 8081, ready when /healthz answers.
func netexecPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "netexec"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "webserver", Image: agnhost,
			Args: []string{"netexec", "--http-port=8083", "--udp-port=8081"},
			Ports: []corev1.ContainerPort{
				{Name: "http", ContainerPort: 8083},
				{Name: "udp", ContainerPort: 8081, Protocol: corev1.ProtocolUDP},
			},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8083)}}},
		}}},
	}
}

// runningReady waits for a pod to be Running and Ready.
func runningReady(t *testing.T, cs kubernetes.Interface, name string) *corev1.Pod {
	t.Helper()
	return waitPod(t, cs, "default", name, "Running and Ready", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && isReady(p)
	})
}

// TestNetexecPodsTalkOverThePodNetwork is the conformance suite's
// "Granular Checks: Pods should function for intra-pod communication"
// (http and udp): a netexec pod on one node dials another on a second
// node through its /dial endpoint, and gets that pod's host name back.
func TestNetexecPodsTalkOverThePodNetwork(t *testing.T) {
	_, cs := cluster(t, 2)
	runPod(t, cs, netexecPod("netserver-0"), "minik-node-1")
	runPod(t, cs, netexecPod("test-container-pod"), "minik-node-2")
	server := runningReady(t, cs, "netserver-0")
	client := runningReady(t, cs, "test-container-pod")

	for _, tc := range []struct{ protocol, port string }{{"http", "8083"}, {"udp", "8081"}} {
		t.Run("over "+tc.protocol, func(t *testing.T) {
			q := url.Values{"request": {"hostname"}, "protocol": {tc.protocol}, "host": {server.Status.PodIP}, "port": {tc.port}, "tries": {"1"}}
			body := httpGet(t, fmt.Sprintf("http://%s/dial?%s", netJoin(client.Status.PodIP, "8083"), q.Encode()))
			var out map[string][]string
			if err := json.Unmarshal([]byte(body), &out); err != nil {
				t.Fatalf("dial answered %q: %v", body, err)
			}
			if got := out["responses"]; len(got) != 1 || got[0] != "netserver-0" || len(out["errors"]) != 0 {
				t.Fatalf("dial answered %q", body)
			}
		})
	}

	t.Run("the request is in the pod's log, as lifecycle hook specs read it", func(t *testing.T) {
		_ = httpGet(t, "http://"+netJoin(server.Status.PodIP, "8083")+"/echo?msg=poststart")
		var logs []byte
		waitFor(t, 10*time.Second, "the request in netserver-0's log", func(ctx context.Context) (bool, error) {
			var err error
			logs, err = cs.CoreV1().Pods("default").GetLogs("netserver-0", &corev1.PodLogOptions{}).DoRaw(ctx)
			return err == nil && strings.Contains(string(logs), "GET /echo?msg=poststart"), nil
		})
		if !strings.Contains(string(logs), "Started HTTP server on port 8083") {
			t.Fatalf("logs:\n%s", logs)
		}
	})
}

func netJoin(ip, port string) string { return ip + ":" + port }

// TestOneShotAgnhostContainersComplete: mounttest and a shell command in
// the suite's images exit, and their pods succeed, printing what the
// suite's specs expect: the modes of a Secret volume under fsGroup, and
// the identity of a container with runAsUser and runAsGroup.
func TestOneShotAgnhostContainersComplete(t *testing.T) {
	_, cs := cluster(t, 1)
	ctx := context.Background()
	if _, err := cs.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "secret-test"},
		Data:       map[string][]byte{"data-1": []byte("value-1\n")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mode, fsGroup, uid, gid := int32(0o400), int64(1001), int64(1000), int64(3000)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-secrets"},
		Spec: corev1.PodSpec{
			RestartPolicy:   corev1.RestartPolicyNever,
			SecurityContext: &corev1.PodSecurityContext{FSGroup: &fsGroup, RunAsUser: &uid},
			Volumes: []corev1.Volume{
				{Name: "secret-volume", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "secret-test", DefaultMode: &mode}}},
				{Name: "test-volume", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
			},
			Containers: []corev1.Container{
				{
					Name: "secret-volume-test", Image: agnhost,
					Args:         []string{"mounttest", "--file_content=/etc/secret-volume/data-1", "--file_mode=/etc/secret-volume/data-1", "--fs_type=/test-volume"},
					VolumeMounts: []corev1.VolumeMount{{Name: "secret-volume", MountPath: "/etc/secret-volume"}, {Name: "test-volume", MountPath: "/test-volume"}},
				},
				{
					Name: "id", Image: "registry.k8s.io/e2e-test-images/busybox:1.37.0-2",
					Command:         []string{"sh", "-c", "id"},
					SecurityContext: &corev1.SecurityContext{RunAsGroup: &gid},
				},
			},
		},
	}
	runPod(t, cs, pod, "minik-node-1")
	done := waitPod(t, cs, "default", "pod-secrets", "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	for _, st := range done.Status.ContainerStatuses {
		if st.State.Terminated == nil || st.State.Terminated.ExitCode != 0 || st.State.Terminated.Reason != "Completed" {
			t.Errorf("container %s: %+v", st.Name, st.State)
		}
	}
	for container, want := range map[string][]string{
		"secret-volume-test": {
			`mount type of "/test-volume": tmpfs`,
			`mode of file "/etc/secret-volume/data-1": -r--r-----`,
			`content of file "/etc/secret-volume/data-1": value-1`,
		},
		"id": {"uid=1000 gid=3000 groups=1001,3000"},
	} {
		logs, err := cs.CoreV1().Pods("default").GetLogs("pod-secrets", &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(logs), w) {
				t.Errorf("%s's log lacks %q:\n%s", container, w, logs)
			}
		}
	}
}

// TestLifecycleHooksReachANetexecHandler is the conformance suite's
// "Container Lifecycle Hook" specs: a pod's postStart and preStop hooks
// (httpGet, and exec with curl) call a netexec pod on another node,
// whose log shows the requests; a failing postStart hook kills its
// container with a FailedPostStartHook event.
func TestLifecycleHooksReachANetexecHandler(t *testing.T) {
	_, cs := cluster(t, 2)
	ctx := context.Background()
	handler := netexecPod("pod-handle-http-request")
	handler.Spec.Containers[0].Args = []string{"netexec", "--http-port=8080", "--udp-port=8081"}
	handler.Spec.Containers[0].ReadinessProbe.HTTPGet.Port = intstr.FromInt32(8080)
	runPod(t, cs, handler, "minik-node-1")
	ip := runningReady(t, cs, "pod-handle-http-request").Status.PodIP
	handlerLog := func(want string) {
		t.Helper()
		waitFor(t, 10*time.Second, "handler log with "+want, func(ctx context.Context) (bool, error) {
			logs, err := cs.CoreV1().Pods("default").GetLogs("pod-handle-http-request", &corev1.PodLogOptions{}).DoRaw(ctx)
			return err == nil && strings.Contains(string(logs), want), nil
		})
	}
	grace := int64(30)
	hooked := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-with-hooks"},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []corev1.Container{{
			Name: "pod-with-hooks", Image: agnhost, Args: []string{"pause"},
			Lifecycle: &corev1.Lifecycle{
				PostStart: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Host: ip, Path: "/echo?msg=poststart", Port: intstr.FromInt32(8080)}},
				PreStop:   &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "curl http://" + ip + ":8080/echo?msg=prestop"}}},
			},
		}}},
	}
	runPod(t, cs, hooked, "minik-node-2")
	runningReady(t, cs, "pod-with-hooks")
	handlerLog("GET /echo?msg=poststart")
	if err := cs.CoreV1().Pods("default").Delete(ctx, "pod-with-hooks", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	handlerLog("GET /echo?msg=prestop")

	failing := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-with-failing-hook"},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
			Name: "c", Image: agnhost, Args: []string{"pause"},
			Lifecycle: &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "exit 1"}}}},
		}}},
	}
	failing = runPod(t, cs, failing, "minik-node-2")
	waitEvent(t, cs, failing, corev1.EventTypeWarning, "FailedPostStartHook", "PostStartHook failed")
	waitPod(t, cs, "default", "pod-with-failing-hook", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
}

// TestVolumesFollowTheirSources is the suite's "updates should be
// reflected in volume" specs: a ConfigMap's new data and the pod's new
// labels reach the files a running container reads in a loop.
func TestVolumesFollowTheirSources(t *testing.T) {
	_, cs := cluster(t, 1)
	ctx := context.Background()
	cm, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "configmap-test-upd"}, Data: map[string]string{"data-1": "value-1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-configmaps", Labels: map[string]string{"key1": "value1"}},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{
				{Name: "configmap-volume", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}},
				{Name: "podinfo", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}},
			},
			Containers: []corev1.Container{
				{
					Name: "configmap-volume-test", Image: agnhost,
					Args:         []string{"mounttest", "--break_on_expected_content=false", "--retry_time=120", "--file_content_in_loop=/etc/configmap-volume/data-1"},
					VolumeMounts: []corev1.VolumeMount{{Name: "configmap-volume", MountPath: "/etc/configmap-volume"}},
				},
				{
					Name: "client-container", Image: agnhost,
					Args:         []string{"mounttest", "--break_on_expected_content=false", "--retry_time=120", "--file_content_in_loop=/etc/podinfo/labels"},
					VolumeMounts: []corev1.VolumeMount{{Name: "podinfo", MountPath: "/etc/podinfo"}},
				},
			},
		},
	}
	runPod(t, cs, pod, "minik-node-1")
	waitPod(t, cs, "default", pod.Name, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	logHas := func(container, want string) {
		t.Helper()
		waitFor(t, 20*time.Second, container+" log with "+want, func(ctx context.Context) (bool, error) {
			logs, err := cs.CoreV1().Pods("default").GetLogs(pod.Name, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
			return err == nil && strings.Contains(string(logs), want), nil
		})
	}
	logHas("configmap-volume-test", `content of file "/etc/configmap-volume/data-1": value-1`)
	logHas("client-container", `key1="value1"`)

	cm.Data["data-1"] = "value-2"
	if _, err := cs.CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := cs.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Labels["key3"] = "value3"
	if _, err := cs.CoreV1().Pods("default").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	logHas("configmap-volume-test", `content of file "/etc/configmap-volume/data-1": value-2`)
	logHas("client-container", `key3="value3"`)
}

// TestSysctls is the suite's Sysctls specs: a safe sysctl is set (read by
// /bin/sysctl, with dots or slashes), an unsafe one gets the pod rejected
// with SysctlForbidden.
func TestSysctls(t *testing.T) {
	_, cs := cluster(t, 1)
	ctx := context.Background()
	sysctlPod := func(name string, sysctl string, cmd ...string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{
				RestartPolicy:   corev1.RestartPolicyNever,
				SecurityContext: &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: sysctl, Value: "1"}}},
				Containers:      []corev1.Container{{Name: "test-container", Image: "registry.k8s.io/e2e-test-images/busybox:1.37.0-2", Command: cmd}},
			},
		}
	}
	for name, sysctl := range map[string]string{"sysctl-dots": "kernel.shm_rmid_forced", "sysctl-slashes": "kernel/shm_rmid_forced"} {
		runPod(t, cs, sysctlPod(name, sysctl, "/bin/sysctl", sysctl), "minik-node-1")
		waitPod(t, cs, "default", name, "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
		logs, err := cs.CoreV1().Pods("default").GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil || string(logs) != "kernel.shm_rmid_forced = 1\n" {
			t.Fatalf("%s: logs %q (%v)", name, logs, err)
		}
	}
	rejected := runPod(t, cs, sysctlPod("sysctl-unsafe", "kernel.msgmax", "sh", "-c", "true"), "minik-node-1")
	p := waitPod(t, cs, "default", "sysctl-unsafe", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if p.Status.Reason != "SysctlForbidden" || p.Status.Message != `Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted` {
		t.Fatalf("status %+v", p.Status)
	}
	waitEvent(t, cs, rejected, corev1.EventTypeWarning, "SysctlForbidden", `forbidden sysctl: "kernel.msgmax" not allowlisted`)
}
