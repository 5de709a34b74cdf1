package registry_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/controllers/ctrltest"
	"minik/internal/testserver"
)

// TestResourceClaimAuthorization: kube's checks of who may write what of
// a ResourceClaim, against a real API server: admin access needs the
// namespace's label; changing the allocation or reservations needs
// resourceclaims/binding; changing a driver's device status needs
// resourceclaims/driver named after it.
func TestResourceClaimAuthorization(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{})
	cs := srv.Client(t)
	ctx := context.Background()
	const ns = "dra-auth"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	yes := true
	claim := func(name string, admin bool) *resourcev1.ResourceClaim {
		c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
			{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.example.com"}},
		}}}}
		if admin {
			c.Spec.Devices.Requests[0].Exactly.AdminAccess = &yes
		}
		return c
	}

	t.Run("admin access needs the namespace's label", func(t *testing.T) {
		_, err := cs.ResourceV1().ResourceClaims(ns).Create(ctx, claim("admin", true), metav1.CreateOptions{})
		want := `ResourceClaim.resource.k8s.io "admin" is invalid: spec.devices.requests[0].adminAccess: Forbidden: admin access to devices requires the ` + "`resource.kubernetes.io/admin-access: true`" + ` label on the containing namespace`
		if !apierrors.IsInvalid(err) || err.Error() != want {
			t.Fatalf("create: %v\nwant %s", err, want)
		}
		n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Labels[resourcev1.DRAAdminNamespaceLabelKey] = "true"
		if _, err := cs.CoreV1().Namespaces().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ResourceV1().ResourceClaims(ns).Create(ctx, claim("admin", true), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create in a labelled namespace: %v", err)
		}
	})

	t.Run("status writes need binding and driver permissions", func(t *testing.T) {
		if _, err := cs.ResourceV1().ResourceClaims(ns).Create(ctx, claim("gpu", false), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// alice may read and write claims and their status in the
		// namespace, nothing more.
		if _, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "claims"},
			Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get", "update"}, APIGroups: []string{"resource.k8s.io"}, Resources: []string{"resourceclaims", "resourceclaims/status"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		bind(t, cs, ns, "alice", "Role", "claims")
		cfg := rest.CopyConfig(srv.RESTConfig)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice"}
		alice, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var c *resourcev1.ResourceClaim
		ctrltest.Wait(t, "alice's role to take effect", func() bool {
			c, err = alice.ResourceV1().ResourceClaims(ns).Get(ctx, "gpu", metav1.GetOptions{})
			return err == nil
		})
		c.Status.Allocation = &resourcev1.AllocationResult{
			Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
				{Request: "gpu", Driver: "gpu.example.com", Pool: "node-1", Device: "gpu-0"},
			}},
			NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
				{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-1"}},
			}}}},
		}
		_, err = alice.ResourceV1().ResourceClaims(ns).UpdateStatus(ctx, c, metav1.UpdateOptions{})
		want := `ResourceClaim.resource.k8s.io "gpu" is invalid: status.allocation: Forbidden: changing status.allocation or status.reservedFor requires resource="resourceclaims/binding", verb="update" permission: ` +
			`resourceclaims.resource.k8s.io is forbidden: User "alice" cannot update resource "resourceclaims/binding" in API group "resource.k8s.io" at the cluster scope`
		if !apierrors.IsInvalid(err) || err.Error() != want {
			t.Fatalf("allocate: %v\nwant %s", err, want)
		}

		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "claim-binder"},
			Rules:      []rbacv1.PolicyRule{{Verbs: []string{"update"}, APIGroups: []string{"resource.k8s.io"}, Resources: []string{"resourceclaims/binding"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		bind(t, cs, "", "alice", "ClusterRole", "claim-binder")
		ctrltest.Wait(t, "alice to allocate the claim", func() bool {
			_, err := alice.ResourceV1().ResourceClaims(ns).UpdateStatus(ctx, c, metav1.UpdateOptions{})
			return err == nil
		})

		c, err = alice.ResourceV1().ResourceClaims(ns).Get(ctx, "gpu", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c.Status.Devices = []resourcev1.AllocatedDeviceStatus{{Driver: "gpu.example.com", Pool: "node-1", Device: "gpu-0"}}
		_, err = alice.ResourceV1().ResourceClaims(ns).UpdateStatus(ctx, c, metav1.UpdateOptions{})
		want = `ResourceClaim.resource.k8s.io "gpu" is invalid: status.devices: Forbidden: changing status.devices requires resource="resourceclaims/driver", verb="[arbitrary-node:update]" permission: ` +
			`resourceclaims.resource.k8s.io "gpu.example.com" is forbidden: User "alice" cannot arbitrary-node:update resource "resourceclaims/driver" in API group "resource.k8s.io" in the namespace "dra-auth"`
		if !apierrors.IsInvalid(err) || err.Error() != want {
			t.Fatalf("device status: %v\nwant %s", err, want)
		}
	})
}

// bind binds user to a role of kind (Role in ns, or ClusterRole
// cluster-wide when ns is empty).
func bind(t *testing.T, cs kubernetes.Interface, ns, user, kind, role string) {
	t.Helper()
	ctx := context.Background()
	subjects := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role}
	var err error
	if ns == "" {
		_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user + "-" + role}, RoleRef: ref, Subjects: subjects}, metav1.CreateOptions{})
	} else {
		_, err = cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user + "-" + role}, RoleRef: ref, Subjects: subjects}, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestDeviceTaintRuleUpdatesNameTheirVersion: as kube's v1 registry, a
// DeviceTaintRule update must name the resourceVersion it replaces; a
// patch need not.
func TestDeviceTaintRuleUpdatesNameTheirVersion(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{})
	cs := srv.Client(t)
	ctx := context.Background()
	rule := &resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "maintenance"}, Spec: resourcev1.DeviceTaintRuleSpec{
		Taint: resourcev1.DeviceTaint{Key: "example.com/maintenance", Effect: resourcev1.DeviceTaintEffectNoSchedule},
	}}
	created, err := cs.ResourceV1().DeviceTaintRules().Create(ctx, rule, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.Taint.TimeAdded == nil || created.Generation != 1 {
		t.Errorf("created with timeAdded %v, generation %d; want a time and 1", created.Spec.Taint.TimeAdded, created.Generation)
	}
	upd := created.DeepCopy()
	upd.ResourceVersion = ""
	upd.Spec.Taint.Value = "planned"
	_, err = cs.ResourceV1().DeviceTaintRules().Update(ctx, upd, metav1.UpdateOptions{})
	want := `DeviceTaintRule.resource.k8s.io "maintenance" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Fatalf("update without a resourceVersion: %v\nwant %s", err, want)
	}
	upd.ResourceVersion = created.ResourceVersion
	got, err := cs.ResourceV1().DeviceTaintRules().Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil || got.Generation != 2 {
		t.Fatalf("update: %v (generation %d; want 2)", err, got.Generation)
	}
	if _, err := cs.ResourceV1().DeviceTaintRules().Patch(ctx, "maintenance", types.MergePatchType, []byte(`{"spec":{"taint":{"value":"unplanned"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch: %v", err)
	}
}

// warnings collects the warnings an API server sends.
type warnings struct{ texts []string }

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) { w.texts = append(w.texts, text) }

// TestResourceSliceDriverWarning: a slice whose driver name is not lower
// case is stored, with kube's warning.
func TestResourceSliceDriverWarning(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{})
	w := &warnings{}
	cfg := rest.CopyConfig(srv.RESTConfig)
	cfg.WarningHandler = w
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	node := "node-1"
	s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "gpus"}, Spec: resourcev1.ResourceSliceSpec{
		Driver: "GPU.example.com", NodeName: &node, Pool: resourcev1.ResourcePool{Name: "node-1", ResourceSliceCount: 1},
	}}
	if _, err := cs.ResourceV1().ResourceSlices().Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `spec.driver: driver names should be lowercase; "GPU.example.com" contains uppercase characters`
	if len(w.texts) != 1 || w.texts[0] != want {
		t.Errorf("warnings %q; want %q", w.texts, want)
	}
}
