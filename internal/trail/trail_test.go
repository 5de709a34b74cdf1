package trail_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/api"
	"minik/internal/auth"
	"minik/internal/testserver"
	"minik/internal/trail"
)

var recordsGVR = trail.GroupVersion.WithResource(trail.Resource)

// waitRecords lists the namespace's records until want of them are there
// (a write is recorded just after its response is written).
func waitRecords(t *testing.T, dyn dynamic.Interface, ns string, opts metav1.ListOptions, want int) []unstructured.Unstructured {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		list, err := dyn.Resource(recordsGVR).Namespace(ns).List(context.Background(), opts)
		if err != nil {
			t.Fatalf("list records: %v", err)
		}
		if len(list.Items) >= want || time.Now().After(deadline) {
			if len(list.Items) != want {
				t.Fatalf("records in %s (%+v): got %d, want %d", ns, opts, len(list.Items), want)
			}
			return list.Items
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTrailRecordsWritesAndServesThemReadOnly writes through the API and
// reads the trail back: one record per write (failures with their
// Status), selectors, pages, RBAC, and the same records after a restart.
func TestTrailRecordsWritesAndServesThemReadOnly(t *testing.T) {
	srv := testserver.Start(t)
	cs := srv.Client(t)
	dyn := dynamic.NewForConfigOrDie(srv.RESTConfig)
	ctx := context.Background()
	for _, ns := range []string{"t", "other"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := cs.CoreV1().ConfigMaps("t").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	cm, err := cs.CoreV1().ConfigMaps("t").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{FieldManager: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("t").Patch(ctx, "web", types.MergePatchType, []byte(`{"data":{"b":"2"}}`), metav1.PatchOptions{FieldManager: "patcher"}); err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().ConfigMaps("t").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("create Bad_Name: %v, want Invalid", err)
	}
	if _, err := cs.CoreV1().ConfigMaps("t").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}}, metav1.CreateOptions{DryRun: []string{"All"}}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ConfigMaps("t").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	items := waitRecords(t, dyn, "t", metav1.ListOptions{}, 4)
	type row struct {
		verb, name, manager, reason string
		code                        int64
		uid                         bool
	}
	var got []row
	for _, it := range items {
		code, _, _ := unstructured.NestedInt64(it.Object, "code")
		name, _, _ := unstructured.NestedString(it.Object, "objectRef", "name")
		uid, _, _ := unstructured.NestedString(it.Object, "objectRef", "uid")
		manager, _, _ := unstructured.NestedString(it.Object, "manager")
		reason, _, _ := unstructured.NestedString(it.Object, "reason")
		verb, _, _ := unstructured.NestedString(it.Object, "verb")
		got = append(got, row{verb, name, manager, reason, code, uid != ""})
		if user, _, _ := unstructured.NestedString(it.Object, "user"); user != "minik-admin" {
			t.Errorf("record %s: user %q, want %q", it.GetName(), user, "minik-admin")
		}
	}
	want := []row{
		{"create", "web", "tester", "", 201, true},
		{"patch", "web", "patcher", "", 200, true},
		{"create", "Bad_Name", "", "Invalid", 422, false},
		{"delete", "web", "", "", 200, true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("records:\n got %v\nwant %v", got, want)
	}
	if uid, _, _ := unstructured.NestedString(items[0].Object, "objectRef", "uid"); uid != string(cm.UID) {
		t.Errorf("create's uid %s, want %s", uid, cm.UID)
	}
	if f, ok, _ := unstructured.NestedMap(items[1].Object, "fields"); !ok || f["f:data"] == nil {
		t.Errorf("patch's fields: %v, want the patcher's f:data", f)
	}

	t.Run("a watch delivery is recorded with the write", func(t *testing.T) {
		<-w.ResultChan()
		deadline := time.Now().Add(20 * time.Second)
		for {
			one, err := dyn.Resource(recordsGVR).Namespace("t").Get(ctx, items[0].GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ds, _, _ := unstructured.NestedSlice(one.Object, "deliveries")
			if len(ds) > 0 {
				if d := ds[0].(map[string]any); d["user"] != "minik-admin" || d["time"] == "" {
					t.Errorf("delivery %v, want minik-admin's watch", d)
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no delivery on %v", one.Object)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	t.Run("a field selector picks the patch, a label selector the configmaps", func(t *testing.T) {
		waitRecords(t, dyn, "t", metav1.ListOptions{FieldSelector: "verb=patch"}, 1)
		waitRecords(t, dyn, "t", metav1.ListOptions{FieldSelector: "objectRef.name=web,code=200"}, 2)
		waitRecords(t, dyn, "t", metav1.ListOptions{LabelSelector: trail.LabelResource + "=configmaps"}, 4)
		_, err := dyn.Resource(recordsGVR).Namespace("t").List(ctx, metav1.ListOptions{FieldSelector: "spec.nope=1"})
		if !apierrors.IsBadRequest(err) {
			t.Errorf("unknown field: %v, want BadRequest", err)
		}
	})

	t.Run("limit and continue page through the records in order", func(t *testing.T) {
		var names []string
		opts := metav1.ListOptions{Limit: 3}
		for pages := 0; ; pages++ {
			list, err := dyn.Resource(recordsGVR).Namespace("t").List(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range list.Items {
				names = append(names, it.GetName())
			}
			if list.GetContinue() == "" {
				if pages != 1 {
					t.Errorf("pages: %d, want 2", pages+1)
				}
				break
			}
			opts.Continue = list.GetContinue()
		}
		var all []string
		for _, it := range items {
			all = append(all, it.GetName())
		}
		if fmt.Sprint(names) != fmt.Sprint(all) {
			t.Errorf("paged names %v, want %v", names, all)
		}
	})

	t.Run("get reads one record; a write is refused", func(t *testing.T) {
		one, err := dyn.Resource(recordsGVR).Namespace("t").Get(ctx, items[0].GetName(), metav1.GetOptions{})
		if err != nil || one.GetName() != items[0].GetName() {
			t.Fatalf("get %s: %v", items[0].GetName(), err)
		}
		if _, err := dyn.Resource(recordsGVR).Namespace("other").Get(ctx, items[0].GetName(), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get from another namespace: %v, want NotFound", err)
		}
		_, err = dyn.Resource(recordsGVR).Namespace("t").Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": trail.GroupVersion.String(), "kind": "Record", "metadata": map[string]any{"name": "x"}, "verb": "create",
		}}, metav1.CreateOptions{})
		if !apierrors.IsMethodNotSupported(err) {
			t.Errorf("create a record: %v, want MethodNotSupported", err)
		}
	})

	t.Run("a reader bound in one namespace lists its trail only", func(t *testing.T) {
		if _, err := cs.RbacV1().RoleBindings("t").Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "alice-trail"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: trail.ReaderRole},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "alice"}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		cfg := rest.CopyConfig(srv.RESTConfig)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice"}
		alice := dynamic.NewForConfigOrDie(cfg)
		deadline := time.Now().Add(20 * time.Second)
		for {
			_, err := alice.Resource(recordsGVR).Namespace("t").List(ctx, metav1.ListOptions{})
			if err == nil {
				break
			}
			if !apierrors.IsForbidden(err) || time.Now().After(deadline) {
				t.Fatalf("alice lists t: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if _, err := alice.Resource(recordsGVR).Namespace("other").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("alice lists other: %v, want Forbidden", err)
		}
	})

	t.Run("the reader role is aggregated into view, edit and admin", func(t *testing.T) {
		role := waitClusterRole(t, cs, trail.ReaderRole)
		for _, agg := range []string{"view", "edit", "admin"} {
			if role.Labels["rbac.authorization.k8s.io/aggregate-to-"+agg] != "true" {
				t.Errorf("%s is not aggregated to %s", role.Name, agg)
			}
		}
	})

	t.Run("the trail survives a restart", func(t *testing.T) {
		before := waitRecords(t, dyn, "t", metav1.ListOptions{LabelSelector: trail.LabelResource + "=configmaps"}, 4)
		srv.Stop()
		again := testserver.StartIn(t, srv.DataDir)
		dyn := dynamic.NewForConfigOrDie(again.RESTConfig)
		after := waitRecords(t, dyn, "t", metav1.ListOptions{LabelSelector: trail.LabelResource + "=configmaps"}, 4)
		for i := range before {
			if before[i].GetName() != after[i].GetName() {
				t.Errorf("record %d: %s after the restart, %s before", i, after[i].GetName(), before[i].GetName())
			}
		}
		// New writes continue the sequence.
		if _, err := again.Client(t).CoreV1().ConfigMaps("t").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "later"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		last := waitRecords(t, dyn, "t", metav1.ListOptions{LabelSelector: trail.LabelResource + "=configmaps"}, 5)
		if last[4].GetName() <= last[3].GetName() {
			t.Errorf("record after restart %s does not follow %s", last[4].GetName(), last[3].GetName())
		}
	})
}

func waitClusterRole(t *testing.T, cs kubernetes.Interface, name string) *rbacv1.ClusterRole {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		role, err := cs.RbacV1().ClusterRoles().Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			return role
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster role %s: %v", name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTrailRingAndFilesAreBounded observes more writes than the ring and
// the files hold: memory keeps the newest, the disk at most two files,
// and a new trail on the same directory continues the sequence.
func TestTrailRingAndFilesAreBounded(t *testing.T) {
	dir := t.TempDir()
	tr, err := trail.New(trail.Config{Dir: dir, Capacity: 10, MaxFileBytes: 2000})
	if err != nil {
		t.Fatal(err)
	}
	write := func(tr *trail.Trail, i int) {
		tr.Observe(&api.WriteRecord{
			User: &auth.User{Name: "u"}, Verb: "create", Resource: "configmaps", Namespace: "n",
			Name: fmt.Sprintf("cm-%d", i), Code: http.StatusCreated, Received: time.Unix(int64(i), 0),
			Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "n", UID: types.UID(fmt.Sprint(i))}},
		})
	}
	for i := range 25 {
		write(tr, i)
		if err := tr.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	// Leases are heartbeats, not recorded.
	tr.Observe(&api.WriteRecord{Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "n", Name: "l", Code: 200})
	list, _ := tr.List(context.Background(), "n")
	if len(list) != 10 {
		t.Fatalf("ring holds %d, want 10", len(list))
	}
	if first := list[0].(*trail.Record); first.ObjectRef.Name != "cm-15" || first.Name != "000000000016" {
		t.Errorf("oldest kept: %s (%s), want cm-15 (000000000016)", first.ObjectRef.Name, first.Name)
	}
	reloaded, err := trail.New(trail.Config{Dir: dir, Capacity: 100, MaxFileBytes: 2000})
	if err != nil {
		t.Fatal(err)
	}
	kept := reloaded.Len()
	if kept == 0 || kept >= 25 {
		t.Errorf("the files kept %d records, want some but not all 25 (rotated at 2000 bytes)", kept)
	}
	write(reloaded, 99)
	list, _ = reloaded.List(context.Background(), "")
	if last := list[len(list)-1].(*trail.Record); last.Name != "000000000026" {
		t.Errorf("next record after reload: %s, want 000000000026", last.Name)
	}
}
