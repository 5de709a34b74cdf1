package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"minik/internal/testserver"
)

func deployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}
}

func namespace(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// protobufClient returns a clientset that speaks protobuf, as typed
// clients of controllers do.
func protobufClient(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.ContentType = "application/vnd.kubernetes.protobuf"
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestObjectSemantics(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	for _, enc := range []string{"json", "protobuf"} {
		t.Run("over "+enc, func(t *testing.T) {
			cs := srv.Client(t)
			if enc == "protobuf" {
				cs = protobufClient(t, srv.RESTConfig)
			}
			ns := "sem-" + enc
			namespace(t, cs, ns)
			d := cs.AppsV1().Deployments(ns)

			created, err := d.Create(ctx, deployment("web", 3), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Run("create sets uid, creationTimestamp, resourceVersion and generation 1", func(t *testing.T) {
				if created.UID == "" || created.CreationTimestamp.IsZero() || created.ResourceVersion == "" || created.Generation != 1 {
					t.Fatalf("metadata not filled: %+v", created.ObjectMeta)
				}
			})
			t.Run("get returns what create stored", func(t *testing.T) {
				got, err := d.Get(ctx, "web", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got.UID != created.UID || got.ResourceVersion != created.ResourceVersion {
					t.Fatalf("get = %s/%s, want %s/%s", got.UID, got.ResourceVersion, created.UID, created.ResourceVersion)
				}
			})
			t.Run("a second create is AlreadyExists", func(t *testing.T) {
				_, err := d.Create(ctx, deployment("web", 3), metav1.CreateOptions{})
				if !apierrors.IsAlreadyExists(err) || err.Error() != `deployments.apps "web" already exists` {
					t.Fatalf("err = %v", err)
				}
			})
			t.Run("get of a missing object is NotFound with kube's message", func(t *testing.T) {
				_, err := d.Get(ctx, "nope", metav1.GetOptions{})
				if !apierrors.IsNotFound(err) || err.Error() != `deployments.apps "nope" not found` {
					t.Fatalf("err = %v", err)
				}
			})
			t.Run("a spec change bumps generation, a status write does not", func(t *testing.T) {
				cur, _ := d.Get(ctx, "web", metav1.GetOptions{})
				cur.Spec.Replicas = ptr.To[int32](5)
				cur.Status.Replicas = 42 // ignored: writes to the main resource keep status
				upd, err := d.Update(ctx, cur, metav1.UpdateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if upd.Generation != 2 || upd.Status.Replicas != 0 {
					t.Fatalf("generation %d status.replicas %d, want 2 and 0", upd.Generation, upd.Status.Replicas)
				}
				upd.Status.Replicas = 5
				upd.Spec.Replicas = ptr.To[int32](9) // ignored: /status keeps spec
				st, err := d.UpdateStatus(ctx, upd, metav1.UpdateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if st.Generation != 2 || st.Status.Replicas != 5 || *st.Spec.Replicas != 5 {
					t.Fatalf("after status write: generation %d status %d spec %d", st.Generation, st.Status.Replicas, *st.Spec.Replicas)
				}
			})
			t.Run("a stale resourceVersion is a Conflict", func(t *testing.T) {
				stale := created.DeepCopy()
				_, err := d.Update(ctx, stale, metav1.UpdateOptions{})
				if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "the object has been modified") {
					t.Fatalf("err = %v", err)
				}
			})
			t.Run("dry run stores nothing", func(t *testing.T) {
				_, err := d.Create(ctx, deployment("dry", 1), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := d.Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Fatalf("dry-run object stored: %v", err)
				}
			})
			t.Run("strategic merge patch changes the spec", func(t *testing.T) {
				p, err := d.Patch(ctx, "web", types.StrategicMergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if *p.Spec.Replicas != 2 || p.Generation != 3 {
					t.Fatalf("replicas %d generation %d", *p.Spec.Replicas, p.Generation)
				}
			})
			t.Run("scale reads and writes replicas", func(t *testing.T) {
				sc, err := d.GetScale(ctx, "web", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if sc.Spec.Replicas != 2 || sc.Status.Selector != "app=web" {
					t.Fatalf("scale = %+v", sc)
				}
				sc.Spec.Replicas = 4
				if _, err := d.UpdateScale(ctx, "web", sc, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				got, _ := d.Get(ctx, "web", metav1.GetOptions{})
				if *got.Spec.Replicas != 4 {
					t.Fatalf("replicas = %d after scale", *got.Spec.Replicas)
				}
			})
			t.Run("a namespace that does not exist refuses objects", func(t *testing.T) {
				_, err := cs.AppsV1().Deployments("missing").Create(ctx, deployment("web", 1), metav1.CreateOptions{})
				if !apierrors.IsNotFound(err) || err.Error() != `namespaces "missing" not found` {
					t.Fatalf("err = %v", err)
				}
			})
			t.Run("list pages with limit and continue", func(t *testing.T) {
				for _, n := range []string{"a", "b", "c"} {
					if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"k": n}}}, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				var names []string
				opts := metav1.ListOptions{Limit: 2}
				for {
					l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, opts)
					if err != nil {
						t.Fatal(err)
					}
					for _, i := range l.Items {
						names = append(names, i.Name)
					}
					if l.Continue == "" {
						break
					}
					opts.Continue = l.Continue
				}
				if strings.Join(names, ",") != "a,b,c" {
					t.Fatalf("paged names = %v", names)
				}
				l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: "k in (a,c)", FieldSelector: "metadata.name!=a"})
				if err != nil {
					t.Fatal(err)
				}
				if len(l.Items) != 1 || l.Items[0].Name != "c" {
					t.Fatalf("selected %v", l.Items)
				}
			})
			t.Run("delete removes the object", func(t *testing.T) {
				if err := d.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				if _, err := d.Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Fatalf("after delete: %v", err)
				}
			})
		})
	}
}

func TestUnknownFieldsAreWarnedOrRejected(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	cs := srv.Client(t)
	namespace(t, cs, "demo")
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"b"},"bogus":1}`
	rc := cs.CoreV1().RESTClient()

	res := rc.Post().Namespace("demo").Resource("configmaps").Param("fieldValidation", "Strict").Body([]byte(body)).Do(ctx)
	if err := res.Error(); !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `unknown field "bogus"`) {
		t.Fatalf("strict: err = %v", err)
	}
	res = rc.Post().Namespace("demo").Resource("configmaps").Body([]byte(body)).Do(ctx)
	if err := res.Error(); err != nil {
		t.Fatal(err)
	}
	raw, _ := res.Raw()
	var stored map[string]interface{}
	_ = json.Unmarshal(raw, &stored)
	if _, ok := stored["bogus"]; ok {
		t.Fatalf("unknown field stored: %s", raw)
	}
	if w := res.Warnings(); len(w) != 1 || w[0].Text != `unknown field "bogus"` {
		t.Fatalf("warnings = %v", w)
	}
}

func TestEventsOfBothGroupsAreOneStore(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	cs := srv.Client(t)
	namespace(t, cs, "demo")
	_, err := cs.CoreV1().Events("demo").Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web.1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Deployment", Name: "web", Namespace: "demo"},
		Reason:         "ScalingReplicaSet", Message: "Scaled up replica set web-1 from 0 to 3", Type: "Normal",
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := cs.EventsV1().Events("demo").Get(ctx, "web.1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Note != "Scaled up replica set web-1 from 0 to 3" || ev.Regarding.Name != "web" {
		t.Fatalf("events.k8s.io view = %+v", ev)
	}
}

func TestDeleteOptionsInTheBody(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	cs := srv.Client(t)
	namespace(t, cs, "demo")
	if _, err := cs.CoreV1().ConfigMaps("demo").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		`{"kind":"DeleteOptions","apiVersion":"meta.k8s.io/v1","propagationPolicy":"Background","dryRun":["All"]}`,
		`{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background","dryRun":["All"]}`,
		// controller-runtime labels them with the object's own group
		// version, a custom resource's included; kube decodes them in any.
		`{"kind":"DeleteOptions","apiVersion":"apps/v1","propagationPolicy":"Background","dryRun":["All"]}`,
		`{"kind":"DeleteOptions","apiVersion":"example.com/v1","propagationPolicy":"Foreground","dryRun":["All"]}`,
		`{"kind":"DeleteOptions","apiVersion":"example.com/v1alpha1","propagationPolicy":"Background"}`,
	} {
		if err := cs.CoreV1().RESTClient().Delete().Namespace("demo").Resource("configmaps").Name("x").Body([]byte(body)).Do(ctx).Error(); err != nil {
			t.Fatalf("delete with %s: %v", body, err)
		}
	}
	if _, err := cs.CoreV1().ConfigMaps("demo").Get(ctx, "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after delete: %v", err)
	}
	for body, want := range map[string]string{
		`{"kind":"Pod","apiVersion":"v1"}`:          `no kind "Pod" is registered for version "v1"`,
		`{"kind":"DeleteOptions","apiVersion":"v1"`: "unexpected end of JSON input",
	} {
		err := cs.CoreV1().RESTClient().Delete().Namespace("demo").Resource("configmaps").Name("y").Body([]byte(body)).Do(ctx).Error()
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("delete with %s: %v, want 400 with %q", body, err, want)
		}
	}
}
