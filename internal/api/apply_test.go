package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"minik/internal/testserver"
)

// clientAs returns a clientset whose requests carry userAgent.
func clientAs(t *testing.T, cfg *rest.Config, userAgent string) kubernetes.Interface {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.UserAgent = userAgent
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// entry returns the managedFields entry of manager (and operation), or nil.
func entry(m metav1.Object, manager string, op metav1.ManagedFieldsOperationType) *metav1.ManagedFieldsEntry {
	for _, e := range m.GetManagedFields() {
		if e.Manager == manager && e.Operation == op {
			return &e
		}
	}
	return nil
}

// owns tells whether an entry's fieldsV1 holds the field path (in
// fieldsV1 notation, e.g. "f:spec", "f:replicas").
func owns(e *metav1.ManagedFieldsEntry, path ...string) bool {
	if e == nil || e.FieldsV1 == nil {
		return false
	}
	var node map[string]any
	if err := json.Unmarshal(e.FieldsV1.GetRawBytes(), &node); err != nil {
		return false
	}
	for _, p := range path {
		next, ok := node[p].(map[string]any)
		if !ok {
			return false
		}
		node = next
	}
	return true
}

// applyRaw sends an apply patch and returns the status code and body.
func applyRaw(t *testing.T, cs kubernetes.Interface, path, body string, params map[string]string) (int, []byte) {
	t.Helper()
	req := cs.AppsV1().RESTClient().Patch(types.ApplyPatchType).AbsPath(path).Body([]byte(body))
	for k, v := range params {
		req = req.Param(k, v)
	}
	res := req.Do(context.Background())
	var code int
	res.StatusCode(&code)
	raw, _ := res.Raw()
	return code, raw
}

const webApply = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    tier: front
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
`

func TestServerSideApply(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	cs := srv.Client(t)
	namespace(t, cs, "ssa")
	d := cs.AppsV1().Deployments("ssa")
	path := "/apis/apps/v1/namespaces/ssa/deployments/web"

	t.Run("apply without a fieldManager is refused as kube does", func(t *testing.T) {
		_, err := d.Patch(ctx, "web", types.ApplyPatchType, []byte(webApply), metav1.PatchOptions{})
		if !apierrors.IsInvalid(err) {
			t.Fatalf("want 422 Invalid, got %v", err)
		}
		want := `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`
		if err.Error() != want {
			t.Fatalf("message:\n got %s\nwant %s", err, want)
		}
	})
	t.Run("force on a non-apply patch is refused", func(t *testing.T) {
		_, err := d.Patch(ctx, "web", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{Force: ptr.To(true)})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "force: Forbidden: may not be specified for non-apply patch") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a dry-run apply of a missing object creates nothing", func(t *testing.T) {
		code, body := applyRaw(t, cs, path, webApply, map[string]string{"fieldManager": "tester", "dryRun": "All"})
		if code != http.StatusCreated {
			t.Fatalf("code %d: %s", code, body)
		}
		if _, err := d.Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("dry run stored the object: %v", err)
		}
	})
	t.Run("apply creates a missing object with 201 and an Apply entry", func(t *testing.T) {
		code, body := applyRaw(t, cs, path, webApply, map[string]string{"fieldManager": "tester"})
		if code != http.StatusCreated {
			t.Fatalf("code %d: %s", code, body)
		}
		got, err := d.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e := entry(got, "tester", metav1.ManagedFieldsOperationApply)
		if e == nil || e.APIVersion != "apps/v1" || !owns(e, "f:spec", "f:replicas") || !owns(e, "f:metadata", "f:labels", "f:tier") {
			t.Fatalf("managedFields: %+v", got.ManagedFields)
		}
		if got.Generation != 1 || *got.Spec.Replicas != 2 || got.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
			t.Fatalf("object not created and defaulted: %+v", got)
		}
	})
	t.Run("re-applying changes fields and prunes what the manager dropped", func(t *testing.T) {
		next := strings.Replace(strings.Replace(webApply, "replicas: 2", "replicas: 3", 1), "  labels:\n    tier: front\n", "", 1)
		code, body := applyRaw(t, cs, path, next, map[string]string{"fieldManager": "tester"})
		if code != http.StatusOK {
			t.Fatalf("code %d: %s", code, body)
		}
		got, _ := d.Get(ctx, "web", metav1.GetOptions{})
		if *got.Spec.Replicas != 3 || got.Labels["tier"] != "" || got.Generation != 2 {
			t.Fatalf("apply did not update: replicas %d labels %v generation %d", *got.Spec.Replicas, got.Labels, got.Generation)
		}
	})
	t.Run("an unchanged apply writes nothing", func(t *testing.T) {
		before, _ := d.Get(ctx, "web", metav1.GetOptions{})
		next := strings.Replace(strings.Replace(webApply, "replicas: 2", "replicas: 3", 1), "  labels:\n    tier: front\n", "", 1)
		after, err := d.Patch(ctx, "web", types.ApplyPatchType, []byte(next), metav1.PatchOptions{FieldManager: "tester"})
		if err != nil {
			t.Fatal(err)
		}
		if after.ResourceVersion != before.ResourceVersion {
			t.Fatalf("resourceVersion moved from %s to %s", before.ResourceVersion, after.ResourceVersion)
		}
	})
	t.Run("an update by another manager is recorded as an Update entry", func(t *testing.T) {
		cur, _ := d.Get(ctx, "web", metav1.GetOptions{})
		cur.Spec.Replicas = ptr.To[int32](4)
		got, err := d.Update(ctx, cur, metav1.UpdateOptions{FieldManager: "kubectl-client-side-apply"})
		if err != nil {
			t.Fatal(err)
		}
		e := entry(got, "kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate)
		if e == nil || !owns(e, "f:spec", "f:replicas") || e.Time == nil {
			t.Fatalf("managedFields: %+v", got.ManagedFields)
		}
		if owns(entry(got, "tester", metav1.ManagedFieldsOperationApply), "f:spec", "f:replicas") {
			t.Fatalf("the applier still owns spec.replicas: %+v", got.ManagedFields)
		}
	})
	t.Run("applying a field another manager owns is a 409 naming it", func(t *testing.T) {
		code, body := applyRaw(t, cs, path, strings.Replace(webApply, "replicas: 2", "replicas: 5", 1), map[string]string{"fieldManager": "tester"})
		if code != http.StatusConflict {
			t.Fatalf("code %d: %s", code, body)
		}
		var st metav1.Status
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatal(err)
		}
		want := `Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas`
		if st.Reason != metav1.StatusReasonConflict || st.Message != want {
			t.Fatalf("status: %+v\nwant message %s", st, want)
		}
		if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != metav1.CauseTypeFieldManagerConflict ||
			st.Details.Causes[0].Field != ".spec.replicas" || st.Details.Causes[0].Message != `conflict with "kubectl-client-side-apply" using apps/v1` {
			t.Fatalf("causes: %+v", st.Details)
		}
		got, _ := d.Get(ctx, "web", metav1.GetOptions{})
		if *got.Spec.Replicas != 4 {
			t.Fatalf("a conflicting apply changed replicas to %d", *got.Spec.Replicas)
		}
	})
	t.Run("a forced apply takes the field over", func(t *testing.T) {
		code, body := applyRaw(t, cs, path, strings.Replace(webApply, "replicas: 2", "replicas: 5", 1), map[string]string{"fieldManager": "tester", "force": "true"})
		if code != http.StatusOK {
			t.Fatalf("code %d: %s", code, body)
		}
		got, _ := d.Get(ctx, "web", metav1.GetOptions{})
		if *got.Spec.Replicas != 5 || !owns(entry(got, "tester", metav1.ManagedFieldsOperationApply), "f:spec", "f:replicas") ||
			owns(entry(got, "kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate), "f:spec", "f:replicas") {
			t.Fatalf("force did not transfer ownership: replicas %d %+v", *got.Spec.Replicas, got.ManagedFields)
		}
	})
	t.Run("an apply naming another name than the URL is a 400", func(t *testing.T) {
		code, body := applyRaw(t, cs, "/apis/apps/v1/namespaces/ssa/deployments/other", webApply, map[string]string{"fieldManager": "tester"})
		if code != http.StatusBadRequest || !strings.Contains(string(body), "the name of the object (web) does not match the name on the URL (other)") {
			t.Fatalf("code %d: %s", code, body)
		}
	})
	t.Run("an apply of another kind is a 400", func(t *testing.T) {
		code, body := applyRaw(t, cs, path, strings.Replace(webApply, "kind: Deployment", "kind: StatefulSet", 1), map[string]string{"fieldManager": "tester"})
		if code != http.StatusBadRequest {
			t.Fatalf("code %d: %s", code, body)
		}
	})
	t.Run("a field the schema does not know fails the apply with a 400 carrying the field manager's message", func(t *testing.T) {
		// kube v1.37 answers a 500 here (kubernetes#139253; its pending
		// fix answers this 400).
		code, body := applyRaw(t, cs, path, strings.Replace(webApply, "  replicas: 2\n", "  replicas: 2\n  bogus: 1\n", 1), map[string]string{"fieldManager": "tester"})
		if code != http.StatusBadRequest || !strings.Contains(string(body), "failed to create typed patch object (/web; apps/v1, Kind=Deployment): .spec.bogus: field not declared in schema") {
			t.Fatalf("code %d: %s", code, body)
		}
	})
	t.Run("managedFields may not be applied", func(t *testing.T) {
		code, body := applyRaw(t, cs, path, strings.Replace(webApply, "  labels:\n", "  managedFields: []\n  labels:\n", 1), map[string]string{"fieldManager": "tester"})
		if code != http.StatusBadRequest || !strings.Contains(string(body), "metadata.managedFields must be nil") {
			t.Fatalf("code %d: %s", code, body)
		}
	})
	t.Run("status applies through /status own only status", func(t *testing.T) {
		status := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nstatus:\n  observedGeneration: 3\n  replicas: 5\n"
		code, body := applyRaw(t, cs, path+"/status", status, map[string]string{"fieldManager": "status-writer"})
		if code != http.StatusOK {
			t.Fatalf("code %d: %s", code, body)
		}
		got, _ := d.Get(ctx, "web", metav1.GetOptions{})
		e := entry(got, "status-writer", metav1.ManagedFieldsOperationApply)
		if got.Status.Replicas != 5 || e == nil || e.Subresource != "status" || !owns(e, "f:status", "f:replicas") || owns(e, "f:spec") {
			t.Fatalf("status %+v managedFields %+v", got.Status, got.ManagedFields)
		}
	})
}

func TestManagedFieldsOnWrites(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	cs := clientAs(t, srv.RESTConfig, "deployer/v1.2.3 (linux/amd64) kubernetes/abcdef")
	namespace(t, cs, "mf")

	t.Run("a create records the fieldManager parameter", func(t *testing.T) {
		got, err := cs.AppsV1().Deployments("mf").Create(ctx, deployment("named", 1), metav1.CreateOptions{FieldManager: "my-manager"})
		if err != nil {
			t.Fatal(err)
		}
		e := entry(got, "my-manager", metav1.ManagedFieldsOperationUpdate)
		if len(got.ManagedFields) != 1 || e == nil || e.APIVersion != "apps/v1" || e.FieldsType != "FieldsV1" ||
			!owns(e, "f:spec", "f:replicas") || !owns(e, "f:spec", "f:template", "f:spec", "f:containers", `k:{"name":"nginx"}`, "f:image") {
			t.Fatalf("managedFields: %+v", got.ManagedFields)
		}
		if owns(e, "f:status") {
			t.Fatalf("a create owns status: %s", e.FieldsV1.GetRawBytes())
		}
		stored, _ := cs.AppsV1().Deployments("mf").Get(ctx, "named", metav1.GetOptions{})
		if len(stored.ManagedFields) != 1 {
			t.Fatalf("managedFields not stored: %+v", stored.ManagedFields)
		}
	})
	t.Run("a create without one records the user agent's program", func(t *testing.T) {
		got, err := cs.CoreV1().ConfigMaps("mf").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ua"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if e := entry(got, "deployer", metav1.ManagedFieldsOperationUpdate); e == nil || !owns(e, "f:data", "f:k") {
			t.Fatalf("managedFields: %+v", got.ManagedFields)
		}
	})
	t.Run("an update records its manager beside the creator's", func(t *testing.T) {
		cm, _ := cs.CoreV1().ConfigMaps("mf").Get(ctx, "ua", metav1.GetOptions{})
		cm.Data["other"] = "x"
		got, err := cs.CoreV1().ConfigMaps("mf").Update(ctx, cm, metav1.UpdateOptions{FieldManager: "editor"})
		if err != nil {
			t.Fatal(err)
		}
		if e := entry(got, "editor", metav1.ManagedFieldsOperationUpdate); e == nil || !owns(e, "f:data", "f:other") || owns(e, "f:data", "f:k") {
			t.Fatalf("managedFields: %+v", got.ManagedFields)
		}
		if entry(got, "deployer", metav1.ManagedFieldsOperationUpdate) == nil {
			t.Fatalf("the creator's entry is gone: %+v", got.ManagedFields)
		}
	})
	t.Run("a status update records a status entry", func(t *testing.T) {
		dep, _ := cs.AppsV1().Deployments("mf").Get(ctx, "named", metav1.GetOptions{})
		dep.Status.Replicas = 1
		got, err := cs.AppsV1().Deployments("mf").UpdateStatus(ctx, dep, metav1.UpdateOptions{FieldManager: "ctrl"})
		if err != nil {
			t.Fatal(err)
		}
		e := entry(got, "ctrl", metav1.ManagedFieldsOperationUpdate)
		if e == nil || e.Subresource != "status" || !owns(e, "f:status", "f:replicas") {
			t.Fatalf("managedFields: %+v", got.ManagedFields)
		}
	})
	t.Run("a patch records its manager", func(t *testing.T) {
		got, err := cs.AppsV1().Deployments("mf").Patch(ctx, "named", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{FieldManager: "patcher"})
		if err != nil {
			t.Fatal(err)
		}
		e := entry(got, "patcher", metav1.ManagedFieldsOperationUpdate)
		if e == nil || !owns(e, "f:spec", "f:replicas") || owns(entry(got, "my-manager", metav1.ManagedFieldsOperationUpdate), "f:spec", "f:replicas") {
			t.Fatalf("managedFields: %+v", got.ManagedFields)
		}
	})
	t.Run("a too long fieldManager is refused", func(t *testing.T) {
		_, err := cs.CoreV1().ConfigMaps("mf").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "long"}}, metav1.CreateOptions{FieldManager: strings.Repeat("m", 129)})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long`) {
			t.Fatalf("got %v", err)
		}
	})
}

func TestClientGoApply(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	cs := srv.Client(t)
	namespace(t, cs, "cg")
	labels := map[string]string{"app": "api"}
	ac := appsv1ac.Deployment("api", "cg").
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(1).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(labels).
				WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("api").WithImage("api:1")))))
	got, err := cs.AppsV1().Deployments("cg").Apply(ctx, ac, metav1.ApplyOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if got.UID == "" || *got.Spec.Replicas != 1 || entry(got, "x", metav1.ManagedFieldsOperationApply) == nil {
		t.Fatalf("apply did not create: %+v", got)
	}
	// Another manager co-owning nothing sets the image; the first
	// manager's next apply of replicas alone leaves it.
	img := appsv1ac.Deployment("api", "cg").WithSpec(appsv1ac.DeploymentSpec().
		WithTemplate(corev1ac.PodTemplateSpec().WithSpec(corev1ac.PodSpec().
			WithContainers(corev1ac.Container().WithName("api").WithImage("api:2")))))
	if _, err := cs.AppsV1().Deployments("cg").Apply(ctx, img, metav1.ApplyOptions{FieldManager: "y"}); !apierrors.IsConflict(err) {
		t.Fatalf("want a conflict over the image, got %v", err)
	}
	got, err = cs.AppsV1().Deployments("cg").Apply(ctx, img, metav1.ApplyOptions{FieldManager: "y", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Template.Spec.Containers[0].Image != "api:2" || *got.Spec.Replicas != 1 {
		t.Fatalf("forced apply: %+v", got.Spec)
	}
	extracted, err := appsv1ac.ExtractDeployment(got, "y")
	if err != nil {
		t.Fatal(err)
	}
	if c := extracted.Spec.Template.Spec.Containers; len(c) != 1 || *c[0].Image != "api:2" || extracted.Spec.Replicas != nil {
		t.Fatalf("manager y's extracted configuration: %+v", extracted.Spec)
	}
}

// TestApplyGatewayKind applies a custom resource with a schema, the
// Gateway API's (served from the CRDs minikd installs).
func TestApplyGatewayKind(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"crd"}})
	srv.WaitForGatewayAPI(t)
	cs := srv.Client(t)
	body := "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata:\n  name: gc\nspec:\n  controllerName: example.com/gateway\n"
	path := "/apis/gateway.networking.k8s.io/v1/gatewayclasses/gc"
	code, raw := applyRaw(t, cs, path, body, map[string]string{"fieldManager": "a"})
	if code != http.StatusCreated {
		t.Fatalf("code %d: %s", code, raw)
	}
	var gc gatewayv1.GatewayClass
	if err := json.Unmarshal(raw, &gc); err != nil {
		t.Fatal(err)
	}
	if gc.Spec.ControllerName != "example.com/gateway" || entry(&gc, "a", metav1.ManagedFieldsOperationApply) == nil {
		t.Fatalf("gatewayclass: %+v", gc)
	}
	// A custom resource's fields are merged as deduced, and still owned.
	other := strings.Replace(body, "example.com/gateway", "example.com/other", 1)
	if code, raw := applyRaw(t, cs, path, other, map[string]string{"fieldManager": "b"}); code != http.StatusConflict {
		t.Fatalf("code %d: %s", code, raw)
	}
}

// TestKubectlServerSideApply runs the real kubectl against the server when
// it is installed.
func TestKubectlServerSideApply(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not installed")
	}
	srv := testserver.Start(t)
	manifest := filepath.Join(t.TempDir(), "web.yaml")
	if err := os.WriteFile(manifest, []byte(strings.Replace(webApply, "name: web\n", "name: web\n  namespace: default\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	run := func(args ...string) (string, error) {
		cmd := exec.Command(kubectl, append([]string{"--kubeconfig", srv.KubeconfigPath, "--cache-dir", cache}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("apply", "--server-side", "-f", manifest)
	if err != nil || strings.TrimSpace(out) != "deployment.apps/web serverside-applied" {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	if out, err := run("scale", "deployment/web", "--replicas=4"); err != nil {
		t.Fatalf("scale: %v\n%s", err, out)
	}
	out, err = run("apply", "--server-side", "-f", manifest)
	if err == nil || !strings.Contains(out, `Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas`) {
		t.Fatalf("want a conflict with kubectl scale: %v\n%s", err, out)
	}
	if out, err := run("apply", "--server-side", "--force-conflicts", "-f", manifest); err != nil {
		t.Fatalf("forced apply: %v\n%s", err, out)
	}
}
