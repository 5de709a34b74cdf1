package tables

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Fixtures of the NetworkPolicy, IPAddress, ServiceCIDR, RuntimeClass
// and CSI tables.

func networkPolicyFixtures() []runtime.Object {
	return []runtime.Object{
		&networkingv1.NetworkPolicy{ObjectMeta: objMeta("default-deny", 3*time.Hour)},
		&networkingv1.NetworkPolicy{
			ObjectMeta: objMeta("web-from-frontend", 90*time.Second),
			Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{
				MatchLabels:      map[string]string{"app": "web"},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}},
			}},
		},
	}
}

func ipAddressFixtures() []runtime.Object {
	return []runtime.Object{
		&networkingv1.IPAddress{ObjectMeta: clusterMeta("127.96.0.1", time.Hour),
			Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "kubernetes"}}},
		&networkingv1.IPAddress{ObjectMeta: clusterMeta("192.168.7.7", time.Minute),
			Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Group: "Gateway.Networking.k8s.io", Resource: "Gateways", Name: "edge"}}},
		&networkingv1.IPAddress{ObjectMeta: clusterMeta("2001:db8::1", time.Minute)},
	}
}

func serviceCIDRFixtures() []runtime.Object {
	return []runtime.Object{
		&networkingv1.ServiceCIDR{ObjectMeta: clusterMeta("kubernetes", 2*24*time.Hour), Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"127.96.0.0/12"}}},
		&networkingv1.ServiceCIDR{ObjectMeta: clusterMeta("dual", 5*time.Minute), Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.0.0.0/24", "fd00::/108"}}},
	}
}

func runtimeClassFixtures() []runtime.Object {
	return []runtime.Object{
		&nodev1.RuntimeClass{ObjectMeta: clusterMeta("gvisor", 4*time.Hour), Handler: "runsc"},
		&nodev1.RuntimeClass{ObjectMeta: clusterMeta("kata", 30*time.Second), Handler: "kata"},
	}
}

func csiDriverFixtures() []runtime.Object {
	yes, no := true, false
	return []runtime.Object{
		&storagev1.CSIDriver{
			ObjectMeta: clusterMeta("hostpath.csi.k8s.io", 3*time.Hour),
			Spec: storagev1.CSIDriverSpec{
				AttachRequired: &no, PodInfoOnMount: &yes, StorageCapacity: &yes, RequiresRepublish: &no,
				TokenRequests:        []storagev1.TokenRequest{{Audience: "vault"}, {Audience: ""}},
				VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral},
			},
		},
		&storagev1.CSIDriver{ObjectMeta: clusterMeta("undefaulted.example.com", 10*time.Second)},
	}
}

func csiNodeFixtures() []runtime.Object {
	return []runtime.Object{
		&storagev1.CSINode{ObjectMeta: clusterMeta("node-1", 2*time.Hour), Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
			{Name: "hostpath.csi.k8s.io", NodeID: "node-1"}, {Name: "ebs.csi.aws.com", NodeID: "i-0abc"},
		}}},
		&storagev1.CSINode{ObjectMeta: clusterMeta("node-2", time.Minute)},
	}
}

func volumeAttachmentFixtures() []runtime.Object {
	fs := corev1.PersistentVolumeFilesystem
	return []runtime.Object{
		&storagev1.VolumeAttachment{
			ObjectMeta: clusterMeta("csi-0123abcd", time.Hour),
			Spec:       storagev1.VolumeAttachmentSpec{Attacher: "hostpath.csi.k8s.io", NodeName: "node-1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptrTo("pvc-1")}},
			Status:     storagev1.VolumeAttachmentStatus{Attached: true},
		},
		&storagev1.VolumeAttachment{
			ObjectMeta: clusterMeta("csi-inline", 5*time.Second),
			Spec: storagev1.VolumeAttachmentSpec{Attacher: "hostpath.csi.k8s.io", NodeName: "node-2", Source: storagev1.VolumeAttachmentSource{
				InlineVolumeSpec: &corev1.PersistentVolumeSpec{VolumeMode: &fs},
			}},
		},
	}
}

func csiStorageCapacityFixtures() []runtime.Object {
	q := resource.MustParse("100Gi")
	return []runtime.Object{
		&storagev1.CSIStorageCapacity{ObjectMeta: objMeta("csisc-abcde", time.Hour), StorageClassName: "fast", Capacity: &q},
		&storagev1.CSIStorageCapacity{ObjectMeta: objMeta("csisc-unknown", time.Hour), StorageClassName: "slow"},
	}
}

func volumeAttributesClassFixtures() []runtime.Object {
	return []runtime.Object{
		&storagev1.VolumeAttributesClass{ObjectMeta: clusterMeta("gold", 6*24*time.Hour), DriverName: "pd.csi.storage.gke.io", Parameters: map[string]string{"iops": "3000"}},
	}
}
