package dra_test

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"minik/internal/nodeagent/dra"
)

func allocated(uid string, results ...resourcev1.DeviceRequestAllocationResult) *resourcev1.ResourceClaim {
	c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c-" + uid, Namespace: "ns", UID: types.UID("uid-" + uid)}}
	c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: results}}
	return c
}

func result(request, pool, device string) resourcev1.DeviceRequestAllocationResult {
	return resourcev1.DeviceRequestAllocationResult{Request: request, Driver: dra.DriverName, Pool: pool, Device: device}
}

func memoryIs(d resourcev1.Device, want string) bool {
	q := d.Capacity[dra.CapacityMemory].Value
	return q.String() == want
}

func TestDevicesLookLikeTheExampleDriver(t *testing.T) {
	devs := dra.Devices("n1", 3)
	if len(devs) != 3 || devs[2].Name != "gpu-2" || *devs[2].Attributes[dra.AttrIndex].IntValue != 2 ||
		*devs[0].Attributes[dra.AttrModel].StringValue != dra.Model || !memoryIs(devs[0], dra.Memory) {
		t.Fatalf("devices: %+v", devs)
	}
	if *devs[0].Attributes[dra.AttrUUID].StringValue == *dra.Devices("n2", 1)[0].Attributes[dra.AttrUUID].StringValue {
		t.Error("two nodes' gpu-0 share a uuid")
	}
	if got := dra.DeviceClass().Spec.Selectors[0].CEL.Expression; got != `device.driver == "gpu.minik.io"` {
		t.Errorf("class selector %q", got)
	}
}

func TestPrepareRecordsTheNodesDevicesUntilTheLastPodGoes(t *testing.T) {
	d, err := dra.New(dra.Config{NodeName: "n1", Devices: 2})
	if err != nil {
		t.Fatal(err)
	}
	claim := allocated("a", result("gpu", "n1", "gpu-1"), result("gpu", "n2", "gpu-0"))
	pc, err := d.Prepare(claim, "pod-1")
	if err != nil {
		t.Fatal(err)
	}
	want := []dra.PreparedDevice{{Request: "gpu", Pool: "n1", Device: "gpu-1", Env: []string{"GPU_DEVICE_1=gpu-1"}}}
	if !reflect.DeepEqual(pc.Devices, want) {
		t.Fatalf("prepared %+v, want %+v", pc.Devices, want)
	}
	if _, err := d.Prepare(claim, "pod-2"); err != nil {
		t.Fatal(err)
	}
	d.Unprepare(claim.UID, "pod-1")
	if got := d.Prepared(); len(got) != 1 || got[0].Name != "c-a" {
		t.Fatalf("after one of two pods: %+v", got)
	}
	d.Unprepare(claim.UID, "pod-2")
	if got := d.Prepared(); len(got) != 0 {
		t.Fatalf("after both pods: %+v", got)
	}

	for name, c := range map[string]*resourcev1.ResourceClaim{
		"a device the node does not have": allocated("b", result("gpu", "n1", "gpu-2")),
		"a malformed device name":         allocated("c", result("gpu", "n1", "gpu-01")),
		"no allocation":                   {ObjectMeta: metav1.ObjectMeta{Name: "d"}},
	} {
		if _, err := d.Prepare(c, "pod-1"); err == nil {
			t.Errorf("%s: prepared", name)
		}
	}
}

func TestContainerEnvFollowsTheContainersClaimsAndRequests(t *testing.T) {
	claims := map[string]dra.PreparedClaim{
		"gpus": {Devices: []dra.PreparedDevice{
			{Request: "a", Env: []string{"GPU_DEVICE_0=gpu-0"}},
			{Request: "b/small", Env: []string{"GPU_DEVICE_1=gpu-1"}},
		}},
	}
	for _, tc := range []struct {
		name string
		refs []corev1.ResourceClaim
		want []string
	}{
		{"a whole claim brings every device", []corev1.ResourceClaim{{Name: "gpus"}}, []string{"GPU_DEVICE_0=gpu-0", "GPU_DEVICE_1=gpu-1"}},
		{"one request brings its devices", []corev1.ResourceClaim{{Name: "gpus", Request: "a"}}, []string{"GPU_DEVICE_0=gpu-0"}},
		{"a request covers its subrequests", []corev1.ResourceClaim{{Name: "gpus", Request: "b"}}, []string{"GPU_DEVICE_1=gpu-1"}},
		{"a claim not prepared brings nothing", []corev1.ResourceClaim{{Name: "other"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := dra.ContainerEnv(tc.refs, claims); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
