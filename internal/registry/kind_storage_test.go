package registry

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	pvGR  = schema.GroupResource{Resource: "persistentvolumes"}
	pvcGR = schema.GroupResource{Resource: "persistentvolumeclaims"}
	scGR  = schema.GroupResource{Group: "storage.k8s.io", Resource: "storageclasses"}
)

func testPV(mod ...func(*corev1.PersistentVolume)) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
		ObjectMeta: metav1.ObjectMeta{Name: "pv-1"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data/pv-1"}},
		},
	}
	for _, m := range mod {
		m(pv)
	}
	return pv
}

func testPVC(mod ...func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "demo"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	for _, m := range mod {
		m(pvc)
	}
	return pvc
}

func TestPersistentVolumeValidation(t *testing.T) {
	tests := []struct {
		name string
		obj  *corev1.PersistentVolume
		want string
	}{
		{"a hostPath volume with a size and a mode is valid", testPV(), ""},
		{"access modes are required", testPV(func(pv *corev1.PersistentVolume) { pv.Spec.AccessModes = nil }),
			"spec.accessModes: Required value"},
		{"an unknown access mode is refused", testPV(func(pv *corev1.PersistentVolume) {
			pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{"ReadSometimes"}
		}),
			`spec.accessModes: Unsupported value: "ReadSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`},
		{"ReadWriteOncePod goes alone", testPV(func(pv *corev1.PersistentVolume) {
			pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadWriteOnce}
		}), "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"},
		{"a zero capacity is refused", testPV(func(pv *corev1.PersistentVolume) { pv.Spec.Capacity[corev1.ResourceStorage] = resource.MustParse("0") }),
			`spec.capacity[storage]: Invalid value: "0": must be greater than zero`},
		{"a volume type is required", testPV(func(pv *corev1.PersistentVolume) { pv.Spec.HostPath = nil }),
			"spec: Required value: must specify a volume type"},
		{"only one volume type is allowed", testPV(func(pv *corev1.PersistentVolume) {
			pv.Spec.NFS = &corev1.NFSVolumeSource{Server: "nfs", Path: "/x"}
		}), "spec.nfs: Forbidden: may not specify more than 1 volume type"},
		{"a local volume needs node affinity", testPV(func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath, pv.Spec.Local = nil, &corev1.LocalVolumeSource{Path: "/mnt/disk"}
		}), "spec.nodeAffinity: Required value: Local volume requires node affinity"},
		{"an unknown reclaim policy is refused", testPV(func(pv *corev1.PersistentVolume) { pv.Spec.PersistentVolumeReclaimPolicy = "Keep" }),
			`spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorsOf(t, pvGR, tc.obj); got != tc.want {
				t.Errorf("errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	t.Run("defaults are Retain, Filesystem and Pending", func(t *testing.T) {
		pv := testPV()
		errorsOf(t, pvGR, pv)
		if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || *pv.Spec.VolumeMode != corev1.PersistentVolumeFilesystem ||
			pv.Status.Phase != corev1.VolumePending || pv.Spec.HostPath.Type == nil {
			t.Errorf("defaults: %+v %+v", pv.Spec, pv.Status)
		}
	})
	t.Run("the source is immutable", func(t *testing.T) {
		old := testPV(func(pv *corev1.PersistentVolume) { pv.ResourceVersion = "1" })
		create(old)
		upd := old.DeepCopy()
		upd.Spec.HostPath.Path = "/elsewhere"
		if got := messages(update(upd, old)); got != "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation" {
			t.Errorf("errors: %s", got)
		}
	})
}

func TestPersistentVolumeClaimValidation(t *testing.T) {
	tests := []struct {
		name string
		obj  *corev1.PersistentVolumeClaim
		want string
	}{
		{"a claim with a mode and a size is valid", testPVC(), ""},
		{"access modes are required", testPVC(func(c *corev1.PersistentVolumeClaim) { c.Spec.AccessModes = nil }),
			"spec.accessModes: Required value: at least 1 access mode is required"},
		{"a storage request is required", testPVC(func(c *corev1.PersistentVolumeClaim) { c.Spec.Resources.Requests = nil }),
			"spec.resources[storage]: Required value"},
		{"a zero request is refused", testPVC(func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("0")
		}), `spec.resources[storage]: Invalid value: "0": must be greater than zero`},
		{"a class name is a DNS subdomain", testPVC(func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = new("Fast_SSD") }),
			`spec.storageClassName: Invalid value: "Fast_SSD": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorsOf(t, pvcGR, tc.obj); got != tc.want {
				t.Errorf("errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	t.Run("a new claim is Pending with a Filesystem volume mode", func(t *testing.T) {
		pvc := testPVC()
		create(pvc)
		if pvc.Status.Phase != corev1.ClaimPending || *pvc.Spec.VolumeMode != corev1.PersistentVolumeFilesystem {
			t.Errorf("phase %q, mode %v", pvc.Status.Phase, pvc.Spec.VolumeMode)
		}
	})

	bound := func() *corev1.PersistentVolumeClaim {
		old := testPVC(func(c *corev1.PersistentVolumeClaim) {
			c.ResourceVersion = "1"
			c.Spec.StorageClassName = new("standard")
		})
		create(old)
		return old
	}
	updates := []struct {
		name  string
		phase corev1.PersistentVolumeClaimPhase
		mod   func(*corev1.PersistentVolumeClaim)
		want  string
	}{
		{"the binder may set volumeName once", corev1.ClaimPending, func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv-1" }, ""},
		{"a bound claim may grow", corev1.ClaimBound, func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
		}, ""},
		{"a pending claim may not grow", corev1.ClaimPending, func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
		}, "spec: Forbidden: " + immutableClaimSpecMessage},
		{"a bound claim may not shrink", corev1.ClaimBound, func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("512Mi")
		}, "spec.resources.requests.storage: Forbidden: field can not be less than previous value"},
		{"the access modes are fixed", corev1.ClaimBound, func(c *corev1.PersistentVolumeClaim) {
			c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		}, "spec: Forbidden: " + immutableClaimSpecMessage},
		{"the class is fixed once set", corev1.ClaimPending, func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = new("fast") },
			"spec: Forbidden: " + immutableClaimSpecMessage},
	}
	for _, tc := range updates {
		t.Run(tc.name, func(t *testing.T) {
			old := bound()
			old.Status.Phase = tc.phase
			upd := old.DeepCopy()
			tc.mod(upd)
			if got := messages(update(upd, old)); got != tc.want {
				t.Errorf("errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	t.Run("a claim without a class may get one", func(t *testing.T) {
		old := testPVC(func(c *corev1.PersistentVolumeClaim) { c.ResourceVersion = "1" })
		create(old)
		upd := old.DeepCopy()
		upd.Spec.StorageClassName = new("standard")
		if got := messages(update(upd, old)); got != "" {
			t.Errorf("errors: %s", got)
		}
	})
}

func TestStorageClassValidation(t *testing.T) {
	sc := func(mod ...func(*storagev1.StorageClass)) *storagev1.StorageClass {
		c := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: "minik.dev/hostpath"}
		for _, m := range mod {
			m(c)
		}
		return c
	}
	tests := []struct {
		name string
		obj  *storagev1.StorageClass
		want string
	}{
		{"a class with a provisioner is valid", sc(), ""},
		{"a provisioner is required", sc(func(c *storagev1.StorageClass) { c.Provisioner = "" }), "provisioner: Required value"},
		{"Recycle is no class reclaim policy", sc(func(c *storagev1.StorageClass) { c.ReclaimPolicy = new(corev1.PersistentVolumeReclaimRecycle) }),
			`reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"`},
		{"an unknown binding mode is refused", sc(func(c *storagev1.StorageClass) { c.VolumeBindingMode = new(storagev1.VolumeBindingMode("Later")) }),
			`volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorsOf(t, scGR, tc.obj); got != tc.want {
				t.Errorf("errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	t.Run("defaults are Delete and Immediate", func(t *testing.T) {
		c := sc()
		errorsOf(t, scGR, c)
		if *c.ReclaimPolicy != corev1.PersistentVolumeReclaimDelete || *c.VolumeBindingMode != storagev1.VolumeBindingImmediate {
			t.Errorf("reclaim %v, binding %v", *c.ReclaimPolicy, *c.VolumeBindingMode)
		}
	})
	t.Run("provisioner, parameters, reclaim policy and binding mode are fixed", func(t *testing.T) {
		s := admissionStrategy(t, scGR)
		old := sc(func(c *storagev1.StorageClass) { c.ResourceVersion = "1" })
		s.Default(old)
		upd := old.DeepCopy()
		upd.Provisioner, upd.Parameters = "example.com/other", map[string]string{"type": "ssd"}
		upd.ReclaimPolicy, upd.VolumeBindingMode = new(corev1.PersistentVolumeReclaimRetain), new(storagev1.VolumeBindingWaitForFirstConsumer)
		upd.AllowVolumeExpansion = new(true)
		want := "parameters: Forbidden: updates to parameters are forbidden.\n" +
			"provisioner: Forbidden: updates to provisioner are forbidden.\n" +
			"reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.\n" +
			`volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable`
		if got := messages(s.ValidateUpdate(context.Background(), upd, old)); got != want {
			t.Errorf("errors:\n got %s\nwant %s", got, want)
		}
	})
}

// messages joins field errors, one a line.
func messages[E interface{ Error() string }](errs []E) string {
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	return strings.Join(msgs, "\n")
}
