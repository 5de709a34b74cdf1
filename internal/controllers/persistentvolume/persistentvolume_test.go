package persistentvolume_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"minik/internal/controllers/ctrltest"
	pvctrl "minik/internal/controllers/persistentvolume"
	"minik/internal/testserver"
)

const ns = "default"

func claim(name string, size string, class *string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
			StorageClassName: class,
		},
	}
}

func waitClaim(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string, phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
	t.Helper()
	var pvc *corev1.PersistentVolumeClaim
	ctrltest.Wait(t, "claim "+name+" "+string(phase), func() bool {
		var err error
		pvc, err = cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && pvc.Status.Phase == phase
	})
	return pvc
}

// events returns "Type Reason Message" lines of the events about an object.
func events(ctx context.Context, t *testing.T, cs kubernetes.Interface, namespace, name string) string {
	t.Helper()
	list, err := cs.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String()})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range list.Items {
		lines = append(lines, e.Type+" "+e.Reason+" "+e.Message)
	}
	return strings.Join(lines, "\n")
}

func TestBinderAndProvisioner(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{pvctrl.Name}})
	cs := srv.Client(t)
	ctx := t.Context()

	t.Run("the default class is standard, waiting for the first consumer", func(t *testing.T) {
		sc, err := cs.StorageV1().StorageClasses().Get(ctx, "standard", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sc.Provisioner != pvctrl.HostPathProvisioner || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer ||
			*sc.ReclaimPolicy != corev1.PersistentVolumeReclaimDelete || sc.Annotations[pvctrl.AnnIsDefaultClass] != "true" {
			t.Errorf("standard = %+v", sc)
		}
	})

	t.Run("a static volume and a claim bind with kube's annotations", func(t *testing.T) {
		manual := "manual"
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "static-1", Labels: map[string]string{"tier": "gold"}},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")},
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany},
				StorageClassName:       manual,
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv/static-1"}},
			},
		}
		if _, err := cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		c := claim("static-claim", "1Gi", &manual)
		c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}
		if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got := waitClaim(ctx, t, cs, "static-claim", corev1.ClaimBound)
		if got.Spec.VolumeName != "static-1" || got.Annotations[pvctrl.AnnBindCompleted] != "yes" || got.Annotations[pvctrl.AnnBoundByController] != "yes" {
			t.Errorf("claim = volume %q, annotations %v", got.Spec.VolumeName, got.Annotations)
		}
		if q := got.Status.Capacity[corev1.ResourceStorage]; q.String() != "2Gi" || len(got.Status.AccessModes) != 2 {
			t.Errorf("claim status = %+v", got.Status)
		}
		var vol *corev1.PersistentVolume
		ctrltest.Wait(t, "static-1 Bound", func() bool {
			var err error
			vol, err = cs.CoreV1().PersistentVolumes().Get(ctx, "static-1", metav1.GetOptions{})
			return err == nil && vol.Status.Phase == corev1.VolumeBound
		})
		if ref := vol.Spec.ClaimRef; ref == nil || ref.Namespace != ns || ref.Name != "static-claim" || ref.UID != got.UID ||
			vol.Annotations[pvctrl.AnnBoundByController] != "yes" {
			t.Errorf("volume = claimRef %+v, annotations %v", vol.Spec.ClaimRef, vol.Annotations)
		}

		t.Run("deleting a Retain volume's claim leaves it Released", func(t *testing.T) {
			if err := cs.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "static-claim", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			ctrltest.Wait(t, "static-1 Released", func() bool {
				v, err := cs.CoreV1().PersistentVolumes().Get(ctx, "static-1", metav1.GetOptions{})
				return err == nil && v.Status.Phase == corev1.VolumeReleased
			})
		})
	})

	t.Run("a claim with no class and no volume fails to bind", func(t *testing.T) {
		if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim("no-class", "1Gi", new("")), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "FailedBinding on no-class", func() bool {
			return strings.Contains(events(ctx, t, cs, ns, "no-class"),
				"Normal FailedBinding no persistent volumes available for this claim and no storage class is set")
		})
	})

	t.Run("a claim of the default class waits for its first consumer", func(t *testing.T) {
		created, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim("wait", "1Gi", nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if created.Spec.StorageClassName == nil || *created.Spec.StorageClassName != "standard" {
			t.Errorf("DefaultStorageClass gave class %v", created.Spec.StorageClassName)
		}
		ctrltest.Wait(t, "WaitForFirstConsumer on wait", func() bool {
			return strings.Contains(events(ctx, t, cs, ns, "wait"),
				"Normal WaitForFirstConsumer waiting for first consumer to be created before binding")
		})
	})

	t.Run("an Immediate claim is provisioned, bound, and its volume deleted with it", func(t *testing.T) {
		immediate := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "instant"}, Provisioner: pvctrl.HostPathProvisioner}
		if _, err := cs.StorageV1().StorageClasses().Create(ctx, immediate, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim("now", "3Gi", new("instant")), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got := waitClaim(ctx, t, cs, "now", corev1.ClaimBound)
		if got.Spec.VolumeName != "pvc-"+string(got.UID) || got.Annotations[pvctrl.AnnStorageProvisioner] != pvctrl.HostPathProvisioner {
			t.Errorf("claim = volume %q, annotations %v", got.Spec.VolumeName, got.Annotations)
		}
		pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, got.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pv.Annotations[pvctrl.AnnProvisionedBy] != pvctrl.HostPathProvisioner || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete ||
			pv.Spec.StorageClassName != "instant" || pv.Spec.HostPath == nil || pv.Spec.NodeAffinity != nil {
			t.Errorf("provisioned volume = %+v", pv)
		}
		// The events are written asynchronously, after the claim is bound.
		for _, want := range []string{
			"Normal ExternalProvisioning Waiting for a volume to be created either by the external provisioner 'minik.dev/hostpath' or manually by the system administrator.",
			`Normal Provisioning External provisioner is provisioning volume for claim "default/now"`,
			"Normal ProvisioningSucceeded Successfully provisioned volume " + pv.Name,
		} {
			ctrltest.Wait(t, "the claim's event "+want, func() bool { return strings.Contains(events(ctx, t, cs, ns, "now"), want) })
		}
		if err := cs.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "now", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "the provisioned volume deleted", func() bool {
			_, err := cs.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
	})
}
