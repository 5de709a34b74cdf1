package registry_test

import (
	"context"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"minik/internal/testserver"
)

// TestServiceIPsAreIPAddresses checks that the IPAddress resource serves
// the objects the Service IP allocator writes: a Service's cluster IP is
// listed as an IPAddress whose parent is the Service, a user cannot hand
// it to another parent, an IPAddress a user creates reserves its address
// against Services, and the Service's IPAddress goes with the Service.
func TestServiceIPsAreIPAddresses(t *testing.T) {
	srv := testserver.Start(t)
	cs, err := kubernetes.NewForConfig(srv.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ips := cs.NetworkingV1().IPAddresses()

	svc, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ip, err := ips.Get(ctx, svc.Spec.ClusterIP, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get ipaddress %s of service default/web: %v", svc.Spec.ClusterIP, err)
	}
	want := networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "web"}
	if ip.Spec.ParentRef == nil || *ip.Spec.ParentRef != want || ip.Labels[networkingv1.LabelManagedBy] != "ipallocator.k8s.io" {
		t.Errorf("ipaddress %s: parentRef %+v, labels %v; want %+v managed by ipallocator.k8s.io", ip.Name, ip.Spec.ParentRef, ip.Labels, want)
	}
	list, err := ips.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	parents := map[string]string{}
	for _, it := range list.Items {
		parents[it.Name] = it.Spec.ParentRef.Namespace + "/" + it.Spec.ParentRef.Name
	}
	if parents[svc.Spec.ClusterIP] != "default/web" || !slices.Contains(slices.Collect(maps.Values(parents)), "default/kubernetes") {
		t.Errorf("ipaddresses list %v; want default/web's %s and default/kubernetes's", parents, svc.Spec.ClusterIP)
	}

	t.Run("a Service's IPAddress cannot change parent", func(t *testing.T) {
		stolen := ip.DeepCopy()
		stolen.Spec.ParentRef.Name = "thief"
		_, err := ips.Update(ctx, stolen, metav1.UpdateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.parentRef: Invalid value: null: field is immutable") {
			t.Errorf("update of the parent: %v; want kube's immutable error", err)
		}
	})

	t.Run("an IPAddress a user creates reserves its address", func(t *testing.T) {
		first, _ := netip.ParseAddr(svc.Spec.ClusterIP)
		reserved := first.Next().Next().Next().String()
		if reserved == svc.Spec.ClusterIP {
			t.Fatal("no spare address")
		}
		_, err := ips.Create(ctx, &networkingv1.IPAddress{
			ObjectMeta: metav1.ObjectMeta{Name: reserved},
			Spec:       networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Group: "gateway.networking.k8s.io", Resource: "gateways", Namespace: "default", Name: "edge"}},
		}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			t.Skipf("%s is a Service's already", reserved)
		}
		if err != nil {
			t.Fatal(err)
		}
		_, err = cs.CoreV1().Services("default").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "wants-reserved"},
			Spec:       corev1.ServiceSpec{ClusterIP: reserved, Ports: []corev1.ServicePort{{Port: 80}}},
		}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "provided IP is already allocated") {
			t.Errorf("service asking for the reserved %s: %v; want provided IP is already allocated", reserved, err)
		}
	})

	t.Run("the IPAddress goes with its Service", func(t *testing.T) {
		if err := cs.CoreV1().Services("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := ips.Get(ctx, svc.Spec.ClusterIP, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
		if err != nil {
			t.Errorf("ipaddress %s of the deleted service: %v", svc.Spec.ClusterIP, err)
		}
	})
}
