package nodeagent_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/remotecommand"

	"minik/internal/controllers/garbagecollector"
	"minik/internal/controllers/resourceclaim"
	"minik/internal/nodeagent/dra"
	"minik/internal/testserver"
)

// gpuPod asks for one device of class through a claim made from the
// template; its container references the claim.
func gpuPod(name, template string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &template}},
			Containers: []corev1.Container{{
				Name: "app", Image: "busybox:1.36", Command: []string{"sh", "-c", "sleep 3600"},
				Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}},
			}},
		},
	}
}

func claimTemplate(name, class string) *resourcev1.ResourceClaimTemplate {
	return &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class}}},
		}}},
	}
}

// execOut runs cmd in the pod's container app and returns its stdout.
func execOut(t *testing.T, srv *testserver.Server, cs kubernetes.Interface, pod string, cmd ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	err := executor(t, srv.RESTConfig, viaWebSocket, execURL(cs, pod, "app", cmd, false, false)).
		StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut})
	if err != nil {
		t.Fatalf("exec %v in %s: %v (stderr %q)", cmd, pod, err, errOut.String())
	}
	return out.String()
}

// pendingMessage waits until the pod is Unschedulable with a message
// starting with want.
func pendingMessage(t *testing.T, cs kubernetes.Interface, name, want string) {
	t.Helper()
	waitPod(t, cs, "default", name, "unschedulable: "+want, func(p *corev1.Pod) bool {
		c := condition(p, corev1.PodScheduled)
		return p.Spec.NodeName == "" && c != nil && c.Status == corev1.ConditionFalse &&
			c.Reason == corev1.PodReasonUnschedulable && strings.HasPrefix(c.Message, want)
	})
}

// TestDynamicResourceAllocation runs the scheduler, the resourceclaim
// controller and two nodes with one simulated GPU each: pods whose claims
// come from a template get a device each and see it in their environment;
// a third waits with kube's message until a device is freed; a class that
// selects no device keeps its pod pending.
func TestDynamicResourceAllocation(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{
		Scheduler: true, Nodes: 2, DRADevices: 1,
		Controllers: []string{resourceclaim.Name, garbagecollector.Name},
	})
	cs := srv.Client(t)
	ctx := context.Background()

	// Each node publishes its slice, owned by its Node; the class is
	// installed.
	waitFor(t, 30*time.Second, "a ResourceSlice per node", func(ctx context.Context) (bool, error) {
		list, err := cs.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{FieldSelector: "spec.driver=" + dra.DriverName})
		if err != nil || len(list.Items) != 2 {
			return false, err
		}
		for _, s := range list.Items {
			node, err := cs.CoreV1().Nodes().Get(ctx, *s.Spec.NodeName, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Kind != "Node" || s.OwnerReferences[0].UID != node.UID {
				t.Fatalf("slice %s owners %+v, want the Node %s", s.Name, s.OwnerReferences, node.Name)
			}
			if len(s.Spec.Devices) != 1 || s.Spec.Devices[0].Name != "gpu-0" || s.Spec.Pool.Name != node.Name {
				t.Fatalf("slice %s: pool %q devices %+v", s.Name, s.Spec.Pool.Name, s.Spec.Devices)
			}
		}
		return true, nil
	})
	if _, err := cs.ResourceV1().DeviceClasses().Get(ctx, dra.ClassName, metav1.GetOptions{}); err != nil {
		t.Fatalf("device class: %v", err)
	}
	if _, err := cs.ResourceV1().ResourceClaimTemplates("default").Create(ctx, claimTemplate("gpu", dra.ClassName), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Two pods, a device each: they run on different nodes.
	nodeOf := map[string]string{}
	for _, name := range []string{"train-1", "train-2"} {
		if _, err := cs.CoreV1().Pods("default").Create(ctx, gpuPod(name, "gpu"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"train-1", "train-2"} {
		p := waitPod(t, cs, "default", name, "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		nodeOf[name] = p.Spec.NodeName
		if len(p.Status.ResourceClaimStatuses) != 1 || p.Status.ResourceClaimStatuses[0].ResourceClaimName == nil {
			t.Fatalf("pod %s claim statuses %+v", name, p.Status.ResourceClaimStatuses)
		}
		claim, err := cs.ResourceV1().ResourceClaims("default").Get(ctx, *p.Status.ResourceClaimStatuses[0].ResourceClaimName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		alloc := claim.Status.Allocation
		if alloc == nil || len(alloc.Devices.Results) != 1 || alloc.Devices.Results[0].Pool != p.Spec.NodeName ||
			alloc.Devices.Results[0].Driver != dra.DriverName || alloc.Devices.Results[0].Device != "gpu-0" {
			t.Fatalf("claim %s of pod %s on %s: allocation %+v", claim.Name, name, p.Spec.NodeName, alloc)
		}
		if len(claim.Status.ReservedFor) != 1 || claim.Status.ReservedFor[0].UID != p.UID {
			t.Fatalf("claim %s reserved for %+v, want pod %s", claim.Name, claim.Status.ReservedFor, name)
		}
		if !strings.Contains(execOut(t, srv, cs, name, "env"), "GPU_DEVICE_0=gpu-0\n") {
			t.Fatalf("pod %s does not see its device: %q", name, execOut(t, srv, cs, name, "env"))
		}
	}
	if nodeOf["train-1"] == nodeOf["train-2"] {
		t.Fatalf("both pods on %s, which has one device", nodeOf["train-1"])
	}

	// No device left: the third waits with kube's message.
	if _, err := cs.CoreV1().Pods("default").Create(ctx, gpuPod("train-3", "gpu"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pendingMessage(t, cs, "train-3", "0/2 nodes are available: 2 cannot allocate all claims.")

	// The first pod goes: its claim is released, and the third runs where
	// it ran.
	if err := cs.CoreV1().Pods("default").Delete(ctx, "train-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, cs, "default", "train-3", "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	if p.Spec.NodeName != nodeOf["train-1"] {
		t.Errorf("train-3 runs on %s, want %s (the freed device)", p.Spec.NodeName, nodeOf["train-1"])
	}
	if !strings.Contains(execOut(t, srv, cs, "train-3", "printenv", "GPU_DEVICE_0"), "gpu-0") {
		t.Error("train-3 does not see its device")
	}

	// A class whose selector matches no device keeps its pod pending.
	none := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-none"},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: `device.driver == "` + dra.DriverName + `" && device.attributes["` + dra.DriverName + `"].model == "NO-SUCH-MODEL"`,
		}}}},
	}
	if _, err := cs.ResourceV1().DeviceClasses().Create(ctx, none, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ResourceV1().ResourceClaimTemplates("default").Create(ctx, claimTemplate("gpu-none", "gpu-none"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, gpuPod("train-none", "gpu-none"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pendingMessage(t, cs, "train-none", "0/2 nodes are available: 2 cannot allocate all claims.")

	// The deleted pod's claim is gone too (its owner is).
	waitFor(t, 30*time.Second, "train-1's claim deleted", func(ctx context.Context) (bool, error) {
		list, err := cs.ResourceV1().ResourceClaims("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range list.Items {
			if strings.HasPrefix(c.Name, "train-1-") {
				return false, nil
			}
		}
		return true, nil
	})
}

// TestSharedResourceClaim: pods sharing one claim go where its device
// was allocated and see the same device; once both are gone, the claim
// is deallocated and the scheduler's finalizer lifted.
func TestSharedResourceClaim(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{
		Scheduler: true, Nodes: 2, DRADevices: 1, Controllers: []string{resourceclaim.Name},
	})
	cs := srv.Client(t)
	ctx := context.Background()
	shared := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: "default"},
		Spec:       claimTemplate("", dra.ClassName).Spec.Spec,
	}
	if _, err := cs.ResourceV1().ResourceClaims("default").Create(ctx, shared, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, name := range []string{"share-1", "share-2"} {
		pod := gpuPod(name, "")
		pod.Spec.ResourceClaims[0] = corev1.PodResourceClaim{Name: "gpu", ResourceClaimName: &shared.Name}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		p := waitPod(t, cs, "default", name, "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		nodes = append(nodes, p.Spec.NodeName)
		if !strings.Contains(execOut(t, srv, cs, name, "env"), "GPU_DEVICE_0=gpu-0\n") {
			t.Errorf("pod %s does not see the shared device", name)
		}
	}
	if nodes[0] != nodes[1] {
		t.Fatalf("pods sharing a claim run on %v", nodes)
	}
	claim, err := cs.ResourceV1().ResourceClaims("default").Get(ctx, "shared", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(claim.Status.ReservedFor) != 2 || !slices.Contains(claim.Finalizers, resourcev1.Finalizer) {
		t.Fatalf("claim reserved for %+v, finalizers %v", claim.Status.ReservedFor, claim.Finalizers)
	}
	for _, name := range []string{"share-1", "share-2"} {
		if err := cs.CoreV1().Pods("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 30*time.Second, "the shared claim deallocated", func(ctx context.Context) (bool, error) {
		c, err := cs.ResourceV1().ResourceClaims("default").Get(ctx, "shared", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return c.Status.Allocation == nil && len(c.Status.ReservedFor) == 0 && !slices.Contains(c.Finalizers, resourcev1.Finalizer), nil
	})
}
