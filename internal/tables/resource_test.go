package tables

import (
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Fixtures of the resource.k8s.io tables.

func deviceClassFixtures() []runtime.Object {
	return []runtime.Object{
		&resourcev1.DeviceClass{ObjectMeta: clusterMeta("gpu.example.com", 2*time.Hour)},
		&resourcev1.DeviceClass{ObjectMeta: clusterMeta("just-created", 0)},
	}
}

func deviceTaintRuleFixtures() []runtime.Object {
	added := ago(10 * time.Minute)
	return []runtime.Object{
		&resourcev1.DeviceTaintRule{ObjectMeta: clusterMeta("maintenance", time.Hour), Spec: resourcev1.DeviceTaintRuleSpec{
			Taint: resourcev1.DeviceTaint{Key: "example.com/maintenance", Value: "planned", Effect: resourcev1.DeviceTaintEffectNoExecute, TimeAdded: &added},
		}},
		&resourcev1.DeviceTaintRule{ObjectMeta: clusterMeta("unset-time", 3*time.Minute), Spec: resourcev1.DeviceTaintRuleSpec{
			Taint: resourcev1.DeviceTaint{Key: "example.com/unhealthy", Effect: resourcev1.DeviceTaintEffectNoSchedule},
		}},
	}
}

func resourceClaimFixtures() []runtime.Object {
	deleted := ago(time.Second)
	allocation := &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "gpu", Driver: "gpu.example.com", Pool: "node-1", Device: "gpu-0"},
	}}}
	reserved := []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "web", UID: "uid-1"}}
	deletedMeta := objMeta("deleted-pending", 2*time.Minute)
	deletedMeta.DeletionTimestamp = &deleted
	deletedAllocated := objMeta("deleted-allocated", 2*time.Minute)
	deletedAllocated.DeletionTimestamp = &deleted
	return []runtime.Object{
		&resourcev1.ResourceClaim{ObjectMeta: objMeta("pending", 5*time.Minute)},
		&resourcev1.ResourceClaim{ObjectMeta: objMeta("allocated", 4*time.Minute), Status: resourcev1.ResourceClaimStatus{Allocation: allocation}},
		&resourcev1.ResourceClaim{ObjectMeta: objMeta("web-gpu-x7k2p", 3*time.Minute), Status: resourcev1.ResourceClaimStatus{Allocation: allocation, ReservedFor: reserved}},
		&resourcev1.ResourceClaim{ObjectMeta: deletedMeta},
		&resourcev1.ResourceClaim{ObjectMeta: deletedAllocated, Status: resourcev1.ResourceClaimStatus{Allocation: allocation, ReservedFor: reserved}},
	}
}

func resourceClaimTemplateFixtures() []runtime.Object {
	return []runtime.Object{&resourcev1.ResourceClaimTemplate{ObjectMeta: objMeta("gpu-template", 26*time.Hour)}}
}

func resourceSliceFixtures() []runtime.Object {
	node := "node-1"
	all := true
	return []runtime.Object{
		&resourcev1.ResourceSlice{ObjectMeta: clusterMeta("node-1-gpu.example.com-x2n4q", 30*time.Minute), Spec: resourcev1.ResourceSliceSpec{
			Driver: "gpu.example.com", NodeName: &node, Pool: resourcev1.ResourcePool{Name: "node-1", ResourceSliceCount: 1},
		}},
		&resourcev1.ResourceSlice{ObjectMeta: clusterMeta("network-attached", 90*time.Second), Spec: resourcev1.ResourceSliceSpec{
			Driver: "nic.example.com", AllNodes: &all, Pool: resourcev1.ResourcePool{Name: "fabric/rack-a", ResourceSliceCount: 2},
		}},
		&resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "no-timestamp"}},
	}
}
