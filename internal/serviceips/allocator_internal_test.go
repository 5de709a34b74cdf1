package serviceips

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"

	"minik/internal/etcd"
	"minik/internal/storage"
)

func TestRepairReleasesLeaksAndRestoresMissingClaims(t *testing.T) {
	ctx := context.Background()
	db, err := etcd.Start(ctx, etcd.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	store := storage.New(db.Client)
	ports := utilnet.PortRange{Base: 30000, Size: 2768}
	a, err := New(store, netip.MustParsePrefix("127.96.0.0/12"), ports, clock.RealClock{}, slog.Default())
	if err != nil {
		t.Fatal(err)
	}

	// A claim no Service holds: a crash between claiming and storing.
	leak, _ := a.ipClaim(netip.MustParseAddr("127.96.0.50"), "default", "never-stored")
	if _, err := store.Create(ctx, ipKey(netip.MustParseAddr("127.96.0.50")), leak); err != nil {
		t.Fatal(err)
	}
	// An IPAddress a user created through the API: it reserves its
	// address and is not the allocator's to release.
	user := networkingv1.IPAddress{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "IPAddress"},
		ObjectMeta: metav1.ObjectMeta{Name: "127.96.0.70"},
		Spec:       networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Group: "gateway.networking.k8s.io", Resource: "gateways", Namespace: "default", Name: "edge"}},
	}
	userData, _ := json.Marshal(&user)
	if _, err := store.Create(ctx, ipKey(netip.MustParseAddr("127.96.0.70")), userData); err != nil {
		t.Fatal(err)
	}
	// A Service that holds an IP and a node port without claims.
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: "default"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "127.96.0.60", ClusterIPs: []string{"127.96.0.60"},
			Ports: []corev1.ServicePort{{Port: 80, NodePort: 30123}}},
	}
	data, _ := json.Marshal(svc)
	if _, err := store.Create(ctx, storage.Key("services", "default", "orphan"), data); err != nil {
		t.Fatal(err)
	}

	exists := func(key string) bool {
		_, err := store.Get(ctx, key)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	if err := a.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	if !exists(ipKey(netip.MustParseAddr("127.96.0.60"))) || !exists(portKey(30123)) {
		t.Fatal("the first repair did not restore the claims of a Service that lacked them")
	}
	if !exists(ipKey(netip.MustParseAddr("127.96.0.50"))) {
		t.Fatal("the first repair released a claim that may belong to a Service being created")
	}
	if err := a.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	if exists(ipKey(netip.MustParseAddr("127.96.0.50"))) {
		t.Fatal("the second repair kept a claim no Service holds")
	}
	if !exists(ipKey(netip.MustParseAddr("127.96.0.60"))) || !exists(portKey(30123)) {
		t.Fatal("the second repair released held claims")
	}
	if !exists(ipKey(netip.MustParseAddr("127.96.0.70"))) {
		t.Fatal("the second repair released an IPAddress a user created")
	}
}

func TestDynamicAllocationPrefersTheUpperBand(t *testing.T) {
	r, err := newIPRange(netip.MustParsePrefix("127.96.0.0/24"))
	if err != nil {
		t.Fatal(err)
	}
	if r.static != 16 || r.at(1).String() != "127.96.0.1" {
		t.Fatalf("static band %d, first address %s", r.static, r.at(1))
	}
	for range 100 {
		off, err := r.next(sets.New[uint64](), func(uint64) error { return nil })
		if err != nil || off < 16 || off > 254 {
			t.Fatalf("offset %d (%v) outside the upper band 16..254", off, err)
		}
	}
}
