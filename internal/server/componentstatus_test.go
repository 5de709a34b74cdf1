package server_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"minik/internal/testserver"
)

// TestComponentStatuses reads core/v1 ComponentStatuses as `kubectl get
// cs` does: etcd-0 is healthy through the store, the controller manager
// once it runs, and the scheduler this minikd does not run is unhealthy
// and says why; the resource is read-only.
func TestComponentStatuses(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"namespace"}})
	cs, err := kubernetes.NewForConfig(srv.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	healthy := func(c corev1.ComponentStatus) bool {
		return len(c.Conditions) == 1 && c.Conditions[0].Type == corev1.ComponentHealthy && c.Conditions[0].Status == corev1.ConditionTrue
	}
	var list *corev1.ComponentStatusList
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err = cs.CoreV1().ComponentStatuses().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range list.Items {
			if c.Name == "controller-manager" {
				return healthy(c), nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("waiting for a healthy controller-manager: %v (last list %+v)", err, list)
	}
	var names []string
	for _, c := range list.Items {
		names = append(names, c.Name)
		switch c.Name {
		case "etcd-0", "controller-manager":
			if !healthy(c) || c.Conditions[0].Message != "ok" || c.Conditions[0].Error != "" {
				t.Errorf("%s: conditions %+v; want Healthy True with message ok", c.Name, c.Conditions)
			}
		case "scheduler":
			if healthy(c) || c.Conditions[0].Status != corev1.ConditionFalse || c.Conditions[0].Error != "not run by this minikd" {
				t.Errorf("scheduler: conditions %+v; want Healthy False, not run by this minikd", c.Conditions)
			}
		}
	}
	if want := []string{"controller-manager", "etcd-0", "scheduler"}; !slices.Equal(names, want) {
		t.Errorf("componentstatuses %v; want %v", names, want)
	}

	got, err := cs.CoreV1().ComponentStatuses().Get(ctx, "etcd-0", metav1.GetOptions{})
	if err != nil || got.Name != "etcd-0" || !healthy(*got) {
		t.Errorf("get etcd-0: %+v, %v", got, err)
	}
	if _, err := cs.CoreV1().ComponentStatuses().Get(ctx, "kubelet", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get kubelet: %v; want NotFound", err)
	}
	_, err = cs.CoreV1().ComponentStatuses().Create(ctx, &corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: "mine"}}, metav1.CreateOptions{})
	if !apierrors.IsMethodNotSupported(err) {
		t.Errorf("create: %v; want 405 MethodNotSupported", err)
	}

	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/componentstatuses").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	if err != nil {
		t.Fatalf("table: %v %s", err, raw)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if want := []string{"Name", "Status", "Message", "Error"}; !slices.Equal(cols, want) {
		t.Errorf("table columns %v; want kube's %v", cols, want)
	}
	rows := map[string][]any{}
	for _, r := range table.Rows {
		rows[r.Cells[0].(string)] = r.Cells
	}
	if want := []any{"etcd-0", "Healthy", "ok", ""}; !slices.Equal(rows["etcd-0"], want) {
		t.Errorf("etcd-0 row %v; want %v", rows["etcd-0"], want)
	}
	if want := []any{"scheduler", "Unhealthy", "", "not run by this minikd"}; !slices.Equal(rows["scheduler"], want) {
		t.Errorf("scheduler row %v; want %v", rows["scheduler"], want)
	}

	res := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/componentstatuses/etcd-0").Do(ctx)
	if res.Error() != nil || len(res.Warnings()) != 1 || res.Warnings()[0].Text != "v1 ComponentStatus is deprecated in v1.19+" {
		t.Errorf("get etcd-0: %v, warnings %+v; want kube's deprecation warning", res.Error(), res.Warnings())
	}

	resources, err := cs.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == "componentstatuses" })
	if i < 0 {
		t.Fatal("discovery of v1 lists no componentstatuses")
	}
	r := resources.APIResources[i]
	if r.Namespaced || r.Kind != "ComponentStatus" || r.SingularName != "componentstatus" ||
		!slices.Equal(r.ShortNames, []string{"cs"}) || !slices.Equal([]string(r.Verbs), []string{"get", "list"}) {
		t.Errorf("discovery: %+v; want cluster-scoped ComponentStatus, short name cs, verbs get and list", r)
	}
}
