package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"minik/internal/registry"
	"minik/internal/testserver"
)

// TestDescriptors runs every served resource descriptor through the same
// checks against a real minikd: create, get, list (label selectors,
// paging), watch, update, the four patch types, delete, deletecollection,
// the status and scale subresources where the descriptor has them, the
// server-side table, discovery (legacy and aggregated) and OpenAPI (v2 and
// v3). A new kind is covered by adding its descriptor and one sample file,
// testdata/objects/<resource>[.<group>].yaml (see loadSample).
func TestDescriptors(t *testing.T) {
	resources := registry.All()
	t.Run("every sample file names a served resource", func(t *testing.T) {
		served := map[string]bool{}
		for _, r := range resources {
			served[sampleKey(r)+".yaml"] = true
		}
		files, err := os.ReadDir(samplesDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if !served[f.Name()] {
				t.Errorf("%s/%s is the sample of no served resource", samplesDir, f.Name())
			}
		}
	})

	// The namespace controller empties and finalizes deleted Namespaces,
	// the crd controller lifts a deleted definition's cleanup finalizer
	// and the garbage collector the orphan finalizer a deleted
	// ReplicationController gets by default, so deletions complete as on a
	// cluster; no other controller runs (the samples own nothing and no
	// sample is owned), so the samples stay as the test writes them.
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"namespace", "crd", "garbagecollector"}})
	env := newDescriptorEnv(t, srv.RESTConfig)
	for _, r := range resources {
		t.Run(sampleKey(r), func(t *testing.T) {
			t.Parallel()
			s := loadSample(t, r)
			env.run(t, r, s)
		})
	}
}

const (
	// samplesDir holds one sample object per served resource.
	samplesDir = "testdata/objects"
	// resourceLabel marks every object the test creates with its resource,
	// so that lists, watches and deletecollection see only the test's own
	// objects of that resource (core and events.k8s.io Events share one
	// store; cluster-scoped kinds have bootstrap objects).
	resourceLabel = "descriptors.minik.dev/resource"
	// fieldManager is the manager of the test's server-side apply.
	fieldManager = "descriptors-test"
	// eventTimeout bounds each wait for a watch event or a condition; it is
	// a bound for a loaded machine, not an expected duration.
	eventTimeout = 60 * time.Second
	// tableAccept asks for a server-side table.
	tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"
	// aggregatedAccept asks for aggregated discovery.
	aggregatedAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
)

// kubeVerbs are the verbs kube-apiserver v1.37 serves for a stored
// resource; noDeleteCollection names the resources (group resource) it
// serves without deletecollection (its api/discovery documents).
var (
	kubeVerbs          = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	noDeleteCollection = map[string]bool{"namespaces": true}
)

// knownBugs are the checks, "<group resource> <check>", in which minik
// differs today from kube-apiserver v1.37: such a check is
// skipped with the bug's description. A listed check that passes fails,
// so that an entry goes when its bug is fixed.
var knownBugs = map[string]string{}

// deviation reports the outcome of a check that may be a known bug: a
// difference fails the test unless knownBugs lists the check, a listed
// check without a difference fails. It returns the bug of a listed
// difference (logged), for skipKnown once the step's other checks ran.
func deviation(t *testing.T, r *registry.Resource, check string, differs bool, format string, args ...any) string {
	t.Helper()
	bug, known := knownBugs[r.GroupResource().String()+" "+check]
	switch {
	case differs && known:
		t.Logf("known minik bug: %s (%s)", bug, fmt.Sprintf(format, args...))
		return bug
	case differs:
		t.Errorf(format, args...)
	case known:
		t.Errorf("%s %s is listed in knownBugs (%s) but passes: remove the entry", r.GroupResource(), check, bug)
	}
	return ""
}

// skipKnown skips the step, naming the known bugs it met, if any.
func skipKnown(t *testing.T, bugs ...string) {
	t.Helper()
	if bugs = slices.DeleteFunc(bugs, func(b string) bool { return b == "" }); len(bugs) > 0 {
		t.Skipf("known minik bugs: %s", strings.Join(bugs, "; "))
	}
}

// sampleKey names a resource's sample file, subtest and label: its group
// resource, and the version too for a further version of one served at
// several (horizontalpodautoscalers.autoscaling.v1).
func sampleKey(r *registry.Resource) string {
	key := r.GroupResource().String()
	for _, o := range registry.All() {
		if o.GroupResource() == r.GroupResource() {
			if o.GroupVersion != r.GroupVersion {
				key += "." + r.GroupVersion.Version
			}
			break
		}
	}
	return key
}

// sample is a resource's two test objects, with the status each is given
// through the status subresource and the table columns the kind defines.
type sample struct {
	a, b             *unstructured.Unstructured
	statusA, statusB map[string]any
	columns          []string
	subresources     []string
	deleteAnswer     string
	gvr              string
}

// sampleHeaders reads the "# key: value" lines that open a sample file.
func sampleHeaders(data []byte) map[string]string {
	headers := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		comment, ok := strings.CutPrefix(line, "# ")
		if !ok {
			break
		}
		if k, v, ok := strings.Cut(comment, ":"); ok && !strings.Contains(k, " ") {
			headers[k] = strings.TrimSpace(v)
		}
	}
	return headers
}

// loadSample reads testdata/objects/<group resource>.yaml. The file holds
// one object of the descriptor's kind (namespaced kinds name their
// namespace, which the test creates); a second YAML document, when there
// is one, is the second object, otherwise the second object is the first
// one with "-b" appended to its name. The file opens with kube-apiserver
// v1.37's facts about the kind, which the checks compare with what minikd
// serves: "# table: Name | Age", the server-side table's columns, and
// "# subresources: scale, status", the subresources its discovery lists,
// and "# delete: object" or "# delete: status", what a DELETE of the
// sample answers: the object (kube's registries that return the deleted
// object, and any object that a finalizer keeps) or a Success Status.
// A status in the sample is not sent on create: it is what the status
// subresource writes, and every kind with a status subresource needs one.
func loadSample(t *testing.T, r *registry.Resource) *sample {
	t.Helper()
	file := filepath.Join(samplesDir, sampleKey(r)+".yaml")
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no sample object for the served resource %s: add %s with one valid %s %s", r.GroupResource(), file, r.GroupVersion, r.Kind)
	}
	if err != nil {
		t.Fatal(err)
	}
	s := &sample{gvr: r.GroupVersionResource().String()}
	headers := sampleHeaders(data)
	cols, ok := headers["table"]
	if !ok {
		t.Fatalf("%s: the file must start with the kind's table columns, \"# table: Name | Age\"", file)
	}
	for _, c := range strings.Split(cols, "|") {
		s.columns = append(s.columns, strings.TrimSpace(c))
	}
	subs, ok := headers["subresources"]
	if !ok {
		t.Fatalf("%s: the file must state kube's subresources of %s, \"# subresources: scale, status\" (or none)", file, r.GroupResource())
	}
	for _, sub := range strings.Split(subs, ",") {
		if sub = strings.TrimSpace(sub); sub != "" {
			s.subresources = append(s.subresources, sub)
		}
	}
	slices.Sort(s.subresources)
	switch s.deleteAnswer = headers["delete"]; s.deleteAnswer {
	case "object", "status":
	default:
		t.Fatalf("%s: the file must state what kube-apiserver's DELETE of %s answers, \"# delete: object\" or \"# delete: status\"", file, r.GroupResource())
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if m != nil {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	if len(objs) == 0 || len(objs) > 2 {
		t.Fatalf("%s holds %d objects; want one (or two when the second cannot be derived)", file, len(objs))
	}
	for _, o := range objs {
		if gvk := o.GroupVersionKind(); gvk != r.GroupVersionKind() {
			t.Fatalf("%s holds a %s; want a %s", file, gvk, r.GroupVersionKind())
		}
		if (o.GetNamespace() != "") != r.Namespaced {
			t.Fatalf("%s: metadata.namespace %q for a resource with namespaced=%v", file, o.GetNamespace(), r.Namespaced)
		}
	}
	s.a = objs[0]
	if len(objs) == 2 {
		s.b = objs[1]
	} else {
		s.b = s.a.DeepCopy()
		s.b.SetName(s.a.GetName() + "-b")
	}
	s.statusA, _, _ = unstructured.NestedMap(s.a.Object, "status")
	s.statusB, _, _ = unstructured.NestedMap(s.b.Object, "status")
	if r.HasStatus && (len(s.statusA) == 0 || len(s.statusB) == 0) {
		t.Fatalf("%s: %s has a status subresource; give the sample a valid status to write through it", file, r.GroupResource())
	}
	for _, o := range []*unstructured.Unstructured{s.a, s.b} {
		unstructured.RemoveNestedField(o.Object, "status")
		labels := o.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[resourceLabel] = sampleKey(r)
		o.SetLabels(labels)
	}
	return s
}

// descriptorEnv is what every resource's checks share: the clients and
// the discovery and OpenAPI documents, each fetched once.
type descriptorEnv struct {
	cs  kubernetes.Interface
	dc  dynamic.Interface
	rc  rest.Interface
	ctx context.Context

	namespaces sync.Map // name → *sync.Once

	aggregatedOnce sync.Once
	aggregated     map[string]apidiscoveryv2.APIResourceDiscovery // group/version/resource →
	aggregatedErr  error

	v2Once sync.Once
	v2     *openAPIDoc
	v2Err  error

	v3Mu   sync.Mutex
	v3Docs map[string]*openAPIDoc
}

func newDescriptorEnv(t *testing.T, cfg *rest.Config) *descriptorEnv {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = -1 // no client-side throttling: the checks run in parallel
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &descriptorEnv{cs: cs, dc: dc, rc: cs.Discovery().RESTClient(), ctx: context.Background(), v3Docs: map[string]*openAPIDoc{}}
}

// ensureNamespace creates a sample's namespace once.
func (e *descriptorEnv) ensureNamespace(t *testing.T, name string) {
	t.Helper()
	once, _ := e.namespaces.LoadOrStore(name, &sync.Once{})
	var err error
	once.(*sync.Once).Do(func() {
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
		_, err = e.dc.Resource(namespacesGVR).Create(e.ctx, ns, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	})
	if err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// step is one check of a resource. Steps on the objects build on the
// earlier ones and do not run after one fails; independent steps (the
// discovery and OpenAPI documents) always run.
type step struct {
	name        string
	run         func(t *testing.T)
	independent bool
}

// run checks one resource.
func (e *descriptorEnv) run(t *testing.T, r *registry.Resource, s *sample) {
	ns := s.a.GetNamespace()
	if r.Namespaced {
		e.ensureNamespace(t, ns)
	}
	client := e.dc.Resource(r.GroupVersionResource()).Namespace(ns)
	ctx := e.ctx
	selector := resourceLabel + "=" + sampleKey(r)
	nameA, nameB := s.a.GetName(), s.b.GetName()

	var w *eventWatcher
	t.Cleanup(func() {
		if w != nil {
			w.w.Stop()
		}
	})
	var created *unstructured.Unstructured
	steps := []step{
		{name: "watch starts from an empty list", run: func(t *testing.T) {
			list, err := client.List(ctx, metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				t.Fatalf("list %s: %v", s.gvr, err)
			}
			if len(list.Items) != 0 {
				t.Fatalf("list %s before create: %d objects", s.gvr, len(list.Items))
			}
			wi, err := client.Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: list.GetResourceVersion()})
			if err != nil {
				t.Fatalf("watch %s: %v", s.gvr, err)
			}
			w = &eventWatcher{w: wi}
		}},
		{name: "create", run: func(t *testing.T) {
			var err error
			created, err = client.Create(ctx, s.a.DeepCopy(), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create %s %s: %v", s.gvr, nameA, err)
			}
			if created.GetUID() == "" || created.GetResourceVersion() == "" || created.GetCreationTimestamp().Time.IsZero() {
				t.Errorf("created %s has no uid, resourceVersion or creationTimestamp: %v", nameA, created.Object["metadata"])
			}
			if created.GetName() != nameA || created.GetNamespace() != ns || created.GroupVersionKind() != r.GroupVersionKind() {
				t.Errorf("created %s %s/%s; want %s %s/%s", created.GroupVersionKind(), created.GetNamespace(), created.GetName(), r.GroupVersionKind(), ns, nameA)
			}
			if _, err := client.Create(ctx, s.b.DeepCopy(), metav1.CreateOptions{}); err != nil {
				t.Fatalf("create %s %s: %v", s.gvr, nameB, err)
			}
			w.await(t, watch.Added, nameA, nil, "the first object's creation")
			w.await(t, watch.Added, nameB, nil, "the second object's creation")
		}},
		{name: "get", run: func(t *testing.T) {
			got, err := client.Get(ctx, nameA, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get %s %s: %v", s.gvr, nameA, err)
			}
			if got.GetUID() != created.GetUID() || got.GroupVersionKind() != r.GroupVersionKind() {
				t.Errorf("get %s: uid %s kind %s; want %s %s", nameA, got.GetUID(), got.GroupVersionKind(), created.GetUID(), r.GroupVersionKind())
			}
			_, err = client.Get(ctx, nameA+"-absent", metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("get of an absent %s: %v; want NotFound", s.gvr, err)
			}
		}},
		{name: "list with a label selector", run: func(t *testing.T) {
			list, err := client.List(ctx, metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				t.Fatalf("list %s -l %s: %v", s.gvr, selector, err)
			}
			if got := itemNames(list.Items); !slices.Equal(got, sorted(nameA, nameB)) {
				t.Errorf("list -l %s = %v; want %v", selector, got, sorted(nameA, nameB))
			}
			if list.GetKind() != r.Kind+"List" {
				t.Errorf("list kind %q; want %q", list.GetKind(), r.Kind+"List")
			}
			none := selector + ",descriptors.minik.dev/absent=yes"
			list, err = client.List(ctx, metav1.ListOptions{LabelSelector: none})
			if err != nil {
				t.Fatalf("list %s -l %s: %v", s.gvr, none, err)
			}
			if len(list.Items) != 0 {
				t.Errorf("list -l %s = %v; want none", none, itemNames(list.Items))
			}
		}},
		{name: "list in pages of one", run: func(t *testing.T) {
			first, err := client.List(ctx, metav1.ListOptions{LabelSelector: selector, Limit: 1})
			if err != nil {
				t.Fatalf("list %s limit=1: %v", s.gvr, err)
			}
			if len(first.Items) != 1 || first.GetContinue() == "" {
				t.Fatalf("first page: %d objects, continue %q; want one and a token", len(first.Items), first.GetContinue())
			}
			names := itemNames(first.Items)
			token := first.GetContinue()
			for pages := 1; token != ""; pages++ {
				if pages > 3 {
					t.Fatalf("still a continue token after %d pages of two objects", pages)
				}
				next, err := client.List(ctx, metav1.ListOptions{LabelSelector: selector, Limit: 1, Continue: token})
				if err != nil {
					t.Fatalf("list %s continue: %v", s.gvr, err)
				}
				names = append(names, itemNames(next.Items)...)
				token = next.GetContinue()
			}
			if slices.Sort(names); !slices.Equal(names, sorted(nameA, nameB)) {
				t.Errorf("pages hold %v; want %v", names, sorted(nameA, nameB))
			}
		}},
		{name: "server-side table", run: func(t *testing.T) {
			e.checkTable(t, r, s, ns, selector)
		}},
		{name: "update", run: func(t *testing.T) {
			var before, got *unstructured.Unstructured
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur, err := client.Get(ctx, nameA, metav1.GetOptions{})
				if err != nil {
					return err
				}
				before = cur.DeepCopy()
				setLabel(cur, "descriptors.minik.dev/updated", "yes")
				if r.HasStatus {
					// The main resource keeps the stored status.
					_ = unstructured.SetNestedMap(cur.Object, runtime.DeepCopyJSON(s.statusA), "status")
				}
				got, err = client.Update(ctx, cur, metav1.UpdateOptions{})
				return err
			})
			if err != nil {
				t.Fatalf("update %s %s: %v", s.gvr, nameA, err)
			}
			if got.GetLabels()["descriptors.minik.dev/updated"] != "yes" || got.GetResourceVersion() == before.GetResourceVersion() {
				t.Errorf("update: labels %v, resourceVersion %s (was %s)", got.GetLabels(), got.GetResourceVersion(), before.GetResourceVersion())
			}
			if r.HasStatus && !reflect.DeepEqual(got.Object["status"], before.Object["status"]) {
				t.Errorf("an update of the main resource changed the status:\nbefore %v\nafter  %v", before.Object["status"], got.Object["status"])
			}
			w.awaitWrite(t, got, before.GetResourceVersion(), "the update")
		}},
		{name: "merge patch", run: func(t *testing.T) {
			e.checkPatch(t, client, w, s, nameA, types.MergePatchType, `{"metadata":{"labels":{"descriptors.minik.dev/merge-patch":"yes"}}}`, "descriptors.minik.dev/merge-patch")
		}},
		{name: "JSON patch", run: func(t *testing.T) {
			e.checkPatch(t, client, w, s, nameA, types.JSONPatchType, `[{"op":"add","path":"/metadata/labels/descriptors.minik.dev~1json-patch","value":"yes"}]`, "descriptors.minik.dev/json-patch")
		}},
		{name: "strategic merge patch", run: func(t *testing.T) {
			e.checkPatch(t, client, w, s, nameA, types.StrategicMergePatchType, `{"metadata":{"labels":{"descriptors.minik.dev/strategic-merge-patch":"yes"}}}`, "descriptors.minik.dev/strategic-merge-patch")
		}},
		{name: "server-side apply", run: func(t *testing.T) {
			meta := map[string]any{"name": nameA, "labels": map[string]any{"descriptors.minik.dev/applied": "yes"}}
			if ns != "" {
				meta["namespace"] = ns
			}
			body, err := yaml.Marshal(map[string]any{"apiVersion": r.GroupVersion.String(), "kind": r.Kind, "metadata": meta})
			if err != nil {
				t.Fatal(err)
			}
			got := e.checkPatch(t, client, w, s, nameA, types.ApplyYAMLPatchType, string(body), "descriptors.minik.dev/applied")
			if got != nil && !slices.ContainsFunc(got.GetManagedFields(), func(m metav1.ManagedFieldsEntry) bool {
				return m.Manager == fieldManager && m.Operation == metav1.ManagedFieldsOperationApply
			}) {
				t.Errorf("apply left no managedFields entry of %s (Apply): %v", fieldManager, got.GetManagedFields())
			}
		}},
	}
	if r.HasStatus {
		steps = append(steps, step{name: "status subresource", run: func(t *testing.T) {
			e.checkStatus(t, client, w, s)
		}})
	}
	if r.HasScale {
		steps = append(steps, step{name: "scale subresource", run: func(t *testing.T) {
			e.checkScale(t, client, w, s)
		}})
	}
	steps = append(steps,
		step{name: "discovery", run: func(t *testing.T) {
			e.checkDiscovery(t, r, s)
		}, independent: true},
		step{name: "aggregated discovery", run: func(t *testing.T) {
			e.checkAggregatedDiscovery(t, r, s)
		}, independent: true},
		step{name: "OpenAPI v3", run: func(t *testing.T) {
			e.checkOpenAPIV3(t, r)
		}, independent: true},
		step{name: "OpenAPI v2", run: func(t *testing.T) {
			e.checkOpenAPIV2(t, r)
		}, independent: true},
		step{name: "delete", run: func(t *testing.T) {
			bug := e.checkDeleteAnswer(t, r, s, ns, created)
			// Gone at once, or marked for deletion (graceful deletion,
			// finalizers: Namespaces go Terminating first) until it goes.
			got, err := client.Get(ctx, nameA, metav1.GetOptions{})
			if err == nil && got.GetDeletionTimestamp() == nil {
				t.Fatalf("after delete, %s %s is neither gone nor marked for deletion", s.gvr, nameA)
			} else if err != nil && !apierrors.IsNotFound(err) {
				t.Fatalf("get %s %s after delete: %v", s.gvr, nameA, err)
			}
			w.await(t, watch.Deleted, nameA, nil, "the deletion")
			if _, err := client.Get(ctx, nameA, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("get %s %s after its DELETED event: %v; want NotFound", s.gvr, nameA, err)
			}
			skipKnown(t, bug)
		}},
		step{name: "deletecollection with a label selector", run: func(t *testing.T) {
			e.checkDeleteCollection(t, r, client, w, s, selector)
		}},
	)
	failed := false
	for _, st := range steps {
		if failed && !st.independent {
			continue
		}
		if !t.Run(st.name, st.run) && !st.independent {
			failed = true
		}
	}
}

// checkPatch sends a patch of type pt to obj and checks that the label it
// adds is in the answer and arrives as a MODIFIED event.
func (e *descriptorEnv) checkPatch(t *testing.T, client dynamic.ResourceInterface, w *eventWatcher, s *sample, name string, pt types.PatchType, patch, label string) *unstructured.Unstructured {
	t.Helper()
	opts := metav1.PatchOptions{}
	if pt == types.ApplyYAMLPatchType {
		opts.FieldManager = fieldManager
	}
	got, err := client.Patch(e.ctx, name, pt, []byte(patch), opts)
	if err != nil {
		t.Fatalf("patch %s %s (%s) %s: %v", s.gvr, name, pt, patch, err)
	}
	if got.GetLabels()[label] != "yes" {
		t.Errorf("%s patch answered labels %v; want %s=yes", pt, got.GetLabels(), label)
	}
	w.awaitWrite(t, got, "", string(pt))
	return got
}

// checkStatus writes the sample's status through the status subresource:
// an update to the first object, a merge patch to the second.
func (e *descriptorEnv) checkStatus(t *testing.T, client dynamic.ResourceInterface, w *eventWatcher, s *sample) {
	t.Helper()
	nameA, nameB := s.a.GetName(), s.b.GetName()
	var generation int64
	var got *unstructured.Unstructured
	var rv string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.Get(e.ctx, nameA, metav1.GetOptions{}, "status")
		if err != nil {
			return err
		}
		generation, rv = cur.GetGeneration(), cur.GetResourceVersion()
		if err := unstructured.SetNestedMap(cur.Object, runtime.DeepCopyJSON(s.statusA), "status"); err != nil {
			return err
		}
		got, err = client.UpdateStatus(e.ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("update %s/status %s: %v", s.gvr, nameA, err)
	}
	if !contains(got.Object["status"], s.statusA) {
		t.Errorf("update of %s/status answered status\n%v\nwant it to hold\n%v", nameA, got.Object["status"], s.statusA)
	}
	if got.GetGeneration() != generation {
		t.Errorf("a status update moved metadata.generation from %d to %d", generation, got.GetGeneration())
	}
	w.awaitWrite(t, got, rv, "the status update")
	back, err := client.Get(e.ctx, nameA, metav1.GetOptions{}, "status")
	if err != nil {
		t.Fatalf("get %s/status %s: %v", s.gvr, nameA, err)
	}
	if !contains(back.Object["status"], s.statusA) || back.GetName() != nameA {
		t.Errorf("get %s/status answered %s with status\n%v\nwant it to hold\n%v", nameA, back.GetName(), back.Object["status"], s.statusA)
	}

	patch, err := json.Marshal(map[string]any{"status": s.statusB})
	if err != nil {
		t.Fatal(err)
	}
	before, err := client.Get(e.ctx, nameB, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s %s: %v", s.gvr, nameB, err)
	}
	got, err = client.Patch(e.ctx, nameB, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatalf("merge patch %s/status %s %s: %v", s.gvr, nameB, patch, err)
	}
	if !contains(got.Object["status"], s.statusB) {
		t.Errorf("merge patch of %s/status answered status\n%v\nwant it to hold\n%v", nameB, got.Object["status"], s.statusB)
	}
	// A controller may have written the same status first (CRDs): then
	// the patch changes nothing and no event follows, as in kube.
	w.awaitWrite(t, got, before.GetResourceVersion(), "the status patch")
}

// checkScale reads the scale subresource, doubles the replicas plus one
// through it, and reads them back from the object.
func (e *descriptorEnv) checkScale(t *testing.T, client dynamic.ResourceInterface, w *eventWatcher, s *sample) {
	t.Helper()
	name := s.a.GetName()
	obj, err := client.Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s %s: %v", s.gvr, name, err)
	}
	replicas, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	sc, err := client.Get(e.ctx, name, metav1.GetOptions{}, "scale")
	if err != nil {
		t.Fatalf("get %s/scale %s: %v", s.gvr, name, err)
	}
	if sc.GetAPIVersion() != "autoscaling/v1" || sc.GetKind() != "Scale" || sc.GetName() != name {
		t.Errorf("scale is a %s %s named %s; want an autoscaling/v1 Scale named %s", sc.GetAPIVersion(), sc.GetKind(), sc.GetName(), name)
	}
	if got, _, _ := unstructured.NestedInt64(sc.Object, "spec", "replicas"); got != replicas {
		t.Errorf("scale spec.replicas %d; the object's %d", got, replicas)
	}
	if sel, _, _ := unstructured.NestedString(sc.Object, "status", "selector"); sel == "" {
		t.Errorf("scale has no status.selector: %v", sc.Object["status"])
	}
	want := replicas*2 + 1
	var got *unstructured.Unstructured
	var rv string
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.Get(e.ctx, name, metav1.GetOptions{}, "scale")
		if err != nil {
			return err
		}
		rv = cur.GetResourceVersion()
		if err := unstructured.SetNestedField(cur.Object, want, "spec", "replicas"); err != nil {
			return err
		}
		got, err = client.Update(e.ctx, cur, metav1.UpdateOptions{}, "scale")
		return err
	})
	if err != nil {
		t.Fatalf("update %s/scale %s to %d replicas: %v", s.gvr, name, want, err)
	}
	if n, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); n != want {
		t.Errorf("scale update answered %d replicas; want %d", n, want)
	}
	w.awaitWrite(t, got, rv, "the scale update")
	obj, err = client.Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s %s: %v", s.gvr, name, err)
	}
	if n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); n != want {
		t.Errorf("after scaling to %d, the object has spec.replicas %d", want, n)
	}
}

// checkDeleteAnswer deletes the first object and checks what the DELETE
// answers: the object, or kube's Success Status naming it. It returns the
// known bug the answer shows, if any.
func (e *descriptorEnv) checkDeleteAnswer(t *testing.T, r *registry.Resource, s *sample, ns string, created *unstructured.Unstructured) string {
	t.Helper()
	path := collectionPath(r, ns) + "/" + created.GetName()
	raw, err := e.rc.Delete().AbsPath(path).DoRaw(e.ctx)
	if err != nil {
		t.Fatalf("DELETE %s: %v %s", path, err, raw)
	}
	var answer unstructured.Unstructured
	if err := answer.UnmarshalJSON(raw); err != nil {
		t.Fatalf("DELETE %s answered %s: %v", path, raw, err)
	}
	got := "status"
	if answer.GetKind() == r.Kind {
		got = "object"
		if answer.GetUID() != created.GetUID() {
			t.Errorf("DELETE %s answered a %s of uid %s; want %s", path, r.Kind, answer.GetUID(), created.GetUID())
		}
	} else {
		status, _, _ := unstructured.NestedString(answer.Object, "status")
		details, _, _ := unstructured.NestedStringMap(answer.Object, "details")
		want := map[string]string{"name": created.GetName(), "kind": r.Name, "uid": string(created.GetUID())}
		if r.GroupVersion.Group != "" {
			want["group"] = r.GroupVersion.Group
		}
		if answer.GetKind() != "Status" || status != metav1.StatusSuccess || !maps.Equal(details, want) {
			t.Errorf("DELETE %s answered %s; want the %s or a Success Status with details %v", path, raw, r.Kind, want)
		}
	}
	return deviation(t, r, "delete answer", got != s.deleteAnswer, "DELETE %s answered the %s; kube-apiserver answers the %s (the sample's delete line)", path, got, s.deleteAnswer)
}

// checkDeleteCollection deletes the remaining object by label selector,
// after checking that a selector matching nothing deletes nothing.
func (e *descriptorEnv) checkDeleteCollection(t *testing.T, r *registry.Resource, client dynamic.ResourceInterface, w *eventWatcher, s *sample, selector string) {
	t.Helper()
	name := s.b.GetName()
	none := selector + ",descriptors.minik.dev/absent=yes"
	err := client.DeleteCollection(e.ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: none})
	if !slices.Contains(wantVerbs(r), "deletecollection") {
		// kube-apiserver serves no deletecollection here: 405.
		if err := client.Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete %s %s: %v", s.gvr, name, err)
		}
		w.await(t, watch.Deleted, name, nil, "the deletion")
		skipKnown(t, deviation(t, r, "deletecollection", !apierrors.IsMethodNotSupported(err),
			"DELETE %s?labelSelector=%s: %v; want kube's 405 MethodNotAllowed", collectionPath(r, s.b.GetNamespace()), none, err))
		return
	}
	if err != nil {
		t.Fatalf("deletecollection %s -l %s: %v", s.gvr, none, err)
	}
	if _, err := client.Get(e.ctx, name, metav1.GetOptions{}); err != nil {
		t.Fatalf("deletecollection -l %s touched %s: %v", none, name, err)
	}
	if err := client.DeleteCollection(e.ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: selector}); err != nil {
		t.Fatalf("deletecollection %s -l %s: %v", s.gvr, selector, err)
	}
	w.await(t, watch.Deleted, name, nil, "the deletecollection")
	list, err := client.List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatalf("list %s: %v", s.gvr, err)
	}
	if len(list.Items) != 0 {
		t.Errorf("after deletecollection, list -l %s = %v", selector, itemNames(list.Items))
	}
}

// checkTable asks for the server-side table of the two objects.
func (e *descriptorEnv) checkTable(t *testing.T, r *registry.Resource, s *sample, ns, selector string) {
	t.Helper()
	raw, err := e.rc.Get().AbsPath(collectionPath(r, ns)).Param("labelSelector", selector).
		SetHeader("Accept", tableAccept).DoRaw(e.ctx)
	if err != nil {
		t.Fatalf("GET %s as a Table: %v %s", collectionPath(r, ns), err, raw)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatalf("decode table: %v", err)
	}
	if table.Kind != "Table" || table.APIVersion != "meta.k8s.io/v1" {
		t.Errorf("table is a %s %s", table.APIVersion, table.Kind)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	var names []string
	for _, row := range table.Rows {
		if len(row.Cells) != len(table.ColumnDefinitions) {
			t.Errorf("row of %d cells for %d columns: %v", len(row.Cells), len(table.ColumnDefinitions), row.Cells)
		}
		var meta metav1.PartialObjectMetadata
		if err := json.Unmarshal(row.Object.Raw, &meta); err != nil {
			t.Errorf("row object: %v %s", err, row.Object.Raw)
		}
		names = append(names, meta.Name)
	}
	if slices.Sort(names); !slices.Equal(names, sorted(s.a.GetName(), s.b.GetName())) {
		t.Errorf("table rows are of %v; want %v", names, sorted(s.a.GetName(), s.b.GetName()))
	}
	skipKnown(t, deviation(t, r, "table", !slices.Equal(cols, s.columns),
		"table columns\n%s\nwant (the sample's table line)\n%s", strings.Join(cols, " | "), strings.Join(s.columns, " | ")))
}

// wantSubresources are the subresources the descriptor declares, with
// their verbs as discovery lists them ("get,patch,update").
func wantSubresources(r *registry.Resource) map[string]string {
	subs := map[string]string{}
	if r.HasStatus {
		subs["status"] = "get,patch,update"
	}
	if r.HasScale {
		subs["scale"] = "get,patch,update"
	}
	for _, sub := range r.Subresources {
		subs[sub.Name] = verbList(sub.Verbs)
	}
	return subs
}

// verbList is verbs sorted and joined with commas.
func verbList(verbs []string) string { return strings.Join(sortedCopy(verbs), ",") }

// wantVerbs are kube-apiserver's verbs for the resource.
func wantVerbs(r *registry.Resource) []string {
	if noDeleteCollection[r.GroupResource().String()] {
		return slices.DeleteFunc(slices.Clone(kubeVerbs), func(v string) bool { return v == "deletecollection" })
	}
	return kubeVerbs
}

// checkDiscovery reads the legacy APIResourceList of the group version.
func (e *descriptorEnv) checkDiscovery(t *testing.T, r *registry.Resource, s *sample) {
	t.Helper()
	list, err := e.cs.Discovery().ServerResourcesForGroupVersion(r.GroupVersion.String())
	if err != nil {
		t.Fatalf("discovery of %s: %v", r.GroupVersion, err)
	}
	var main *metav1.APIResource
	subs := map[string]string{}
	for i, res := range list.APIResources {
		if res.Name == r.Name {
			main = &list.APIResources[i]
		} else if sub, ok := strings.CutPrefix(res.Name, r.Name+"/"); ok {
			subs[sub] = verbList(res.Verbs)
			if res.Namespaced != r.Namespaced {
				t.Errorf("%s namespaced=%v", res.Name, res.Namespaced)
			}
		}
	}
	if main == nil {
		t.Fatalf("discovery of %s lists no %s", r.GroupVersion, r.Name)
	}
	got := discovered{main.Kind, main.Namespaced, sortedCopy(main.Verbs), main.ShortNames, main.Categories, subs}
	e.compareDiscovered(t, r, "discovery", got, s.subresources)
}

// discovered is what discovery says of a resource.
type discovered struct {
	kind         string
	namespaced   bool
	verbs        []string
	shortNames   []string
	categories   []string
	subresources map[string]string // name → verbs
}

// compareDiscovered compares what a discovery document says of r with the
// descriptor and kube's verbs.
func (e *descriptorEnv) compareDiscovered(t *testing.T, r *registry.Resource, doc string, got discovered, kubeSubresources []string) {
	t.Helper()
	if got.kind != r.Kind || got.namespaced != r.Namespaced {
		t.Errorf("%s: kind %s namespaced=%v; want %s namespaced=%v", doc, got.kind, got.namespaced, r.Kind, r.Namespaced)
	}
	if !slices.Equal(got.shortNames, r.ShortNames) || !slices.Equal(got.categories, r.Categories) {
		t.Errorf("%s: shortNames %v categories %v; want %v %v", doc, got.shortNames, got.categories, r.ShortNames, r.Categories)
	}
	if want := wantSubresources(r); !maps.Equal(got.subresources, want) {
		t.Errorf("%s: subresources (with their verbs) %v; the descriptor declares %v", doc, got.subresources, want)
	}
	names := slices.Sorted(maps.Keys(got.subresources))
	subsBug := deviation(t, r, doc+" subresources", !slices.Equal(names, kubeSubresources),
		"%s: subresources %v; kube-apiserver lists %v (the sample's subresources line)", doc, names, kubeSubresources)
	want := wantVerbs(r)
	verbsBug := deviation(t, r, doc+" verbs", !slices.Equal(got.verbs, want), "%s: verbs %v; want %v", doc, got.verbs, want)
	skipKnown(t, subsBug, verbsBug)
}

// checkAggregatedDiscovery reads /api and /apis as APIGroupDiscoveryLists.
func (e *descriptorEnv) checkAggregatedDiscovery(t *testing.T, r *registry.Resource, s *sample) {
	t.Helper()
	e.aggregatedOnce.Do(func() {
		e.aggregated = map[string]apidiscoveryv2.APIResourceDiscovery{}
		for _, path := range []string{"/api", "/apis"} {
			raw, err := e.rc.Get().AbsPath(path).SetHeader("Accept", aggregatedAccept).DoRaw(e.ctx)
			if err != nil {
				e.aggregatedErr = fmt.Errorf("GET %s (aggregated): %w %s", path, err, raw)
				return
			}
			var list apidiscoveryv2.APIGroupDiscoveryList
			if err := json.Unmarshal(raw, &list); err != nil {
				e.aggregatedErr = fmt.Errorf("decode %s (aggregated): %w", path, err)
				return
			}
			for _, g := range list.Items {
				for _, v := range g.Versions {
					for _, res := range v.Resources {
						e.aggregated[g.Name+"/"+v.Version+"/"+res.Resource] = res
					}
				}
			}
		}
	})
	if e.aggregatedErr != nil {
		t.Fatal(e.aggregatedErr)
	}
	res, ok := e.aggregated[r.GroupVersion.Group+"/"+r.GroupVersion.Version+"/"+r.Name]
	if !ok {
		t.Fatalf("aggregated discovery lists no %s", r.GroupVersionResource())
	}
	subs := map[string]string{}
	for _, sub := range res.Subresources {
		subs[sub.Subresource] = verbList(sub.Verbs)
	}
	kind := ""
	if res.ResponseKind != nil {
		kind = res.ResponseKind.Kind
		if res.ResponseKind.Group != r.GroupVersion.Group || res.ResponseKind.Version != r.GroupVersion.Version {
			t.Errorf("aggregated discovery: responseKind %+v", *res.ResponseKind)
		}
	}
	got := discovered{kind, res.Scope == apidiscoveryv2.ScopeNamespace, sortedCopy(res.Verbs), res.ShortNames, res.Categories, subs}
	e.compareDiscovered(t, r, "aggregated discovery", got, s.subresources)
}

// openAPIDoc is the part of an OpenAPI v2 or v3 document the checks read.
type openAPIDoc struct {
	Paths       map[string]json.RawMessage `json:"paths"`
	Definitions map[string]openAPISchema   `json:"definitions"`
	Components  struct {
		Schemas map[string]openAPISchema `json:"schemas"`
	} `json:"components"`
}

// openAPISchema is a model's group-version-kinds.
type openAPISchema struct {
	GVKs []metav1.GroupVersionKind `json:"x-kubernetes-group-version-kind"`
}

// hasKindAndPaths checks that a document defines the resource's kind and
// its collection and item paths.
func hasKindAndPaths(t *testing.T, doc string, schemas map[string]openAPISchema, paths map[string]json.RawMessage, r *registry.Resource) {
	t.Helper()
	want := metav1.GroupVersionKind{Group: r.GroupVersion.Group, Version: r.GroupVersion.Version, Kind: r.Kind}
	found := false
	for _, s := range schemas {
		found = found || slices.Contains(s.GVKs, want)
	}
	if !found {
		t.Errorf("%s has no schema of %s", doc, r.GroupVersionKind())
	}
	collection := collectionPath(r, "{namespace}")
	for _, p := range []string{collection, collection + "/{name}"} {
		if _, ok := paths[p]; !ok {
			t.Errorf("%s has no path %s", doc, p)
		}
	}
}

// checkOpenAPIV3 reads /openapi/v3/<group path> for the resource's group version.
func (e *descriptorEnv) checkOpenAPIV3(t *testing.T, r *registry.Resource) {
	t.Helper()
	key := "apis/" + r.GroupVersion.String()
	if r.GroupVersion.Group == "" {
		key = "api/" + r.GroupVersion.Version
	}
	e.v3Mu.Lock()
	doc, ok := e.v3Docs[key]
	e.v3Mu.Unlock()
	if !ok {
		paths, err := e.cs.Discovery().OpenAPIV3().Paths()
		if err != nil {
			t.Fatalf("GET /openapi/v3: %v", err)
		}
		gv, ok := paths[key]
		if !ok {
			t.Fatalf("/openapi/v3 lists no %s", key)
		}
		raw, err := gv.Schema("application/json")
		if err != nil {
			t.Fatalf("GET /openapi/v3/%s: %v", key, err)
		}
		doc = &openAPIDoc{}
		if err := json.Unmarshal(raw, doc); err != nil {
			t.Fatalf("decode /openapi/v3/%s: %v", key, err)
		}
		e.v3Mu.Lock()
		e.v3Docs[key] = doc
		e.v3Mu.Unlock()
	}
	hasKindAndPaths(t, "/openapi/v3/"+key, doc.Components.Schemas, doc.Paths, r)
}

// checkOpenAPIV2 reads /openapi/v2 once.
func (e *descriptorEnv) checkOpenAPIV2(t *testing.T, r *registry.Resource) {
	t.Helper()
	e.v2Once.Do(func() {
		raw, err := e.rc.Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/json").DoRaw(e.ctx)
		if err != nil {
			e.v2Err = fmt.Errorf("GET /openapi/v2: %w", err)
			return
		}
		e.v2 = &openAPIDoc{}
		if err := json.Unmarshal(raw, e.v2); err != nil {
			e.v2Err = fmt.Errorf("decode /openapi/v2: %w", err)
		}
	})
	if e.v2Err != nil {
		t.Fatal(e.v2Err)
	}
	hasKindAndPaths(t, "/openapi/v2", e.v2.Definitions, e.v2.Paths, r)
}

// collectionPath is the REST path of the resource's objects in ns (all of
// them for a cluster-scoped resource).
func collectionPath(r *registry.Resource, ns string) string {
	p := "/apis/" + r.GroupVersion.String()
	if r.GroupVersion.Group == "" {
		p = "/api/" + r.GroupVersion.Version
	}
	if r.Namespaced {
		p += "/namespaces/" + ns
	}
	return p + "/" + r.Name
}

// eventWatcher reads one watch in order, so that each expected event is
// looked for after the previous one.
type eventWatcher struct {
	w    watch.Interface
	seen []string
}

// await reads events until one of type typ for the object name satisfies
// cond (nil: any), failing after eventTimeout.
func (w *eventWatcher) await(t *testing.T, typ watch.EventType, name string, cond func(*unstructured.Unstructured) bool, what string) {
	t.Helper()
	timeout := time.NewTimer(eventTimeout)
	defer timeout.Stop()
	for {
		select {
		case ev, ok := <-w.w.ResultChan():
			if !ok {
				t.Fatalf("the watch closed before the %s event of %s (%s); saw %v", typ, name, what, w.seen)
			}
			obj, isObj := ev.Object.(*unstructured.Unstructured)
			if ev.Type == watch.Error || !isObj {
				t.Fatalf("watch error while waiting for the %s event of %s (%s): %v", typ, name, what, ev.Object)
			}
			w.seen = append(w.seen, string(ev.Type)+" "+obj.GetName())
			if ev.Type == typ && obj.GetName() == name && (cond == nil || cond(obj)) {
				return
			}
		case <-timeout.C:
			t.Fatalf("no %s event of %s (%s) within %s; saw %v", typ, name, what, eventTimeout, w.seen)
		}
	}
}

// awaitWrite waits for the MODIFIED event of a write that answered got,
// the event of got's resourceVersion. A write that left the
// resourceVersion at previous (a no-op) has no event.
func (w *eventWatcher) awaitWrite(t *testing.T, got *unstructured.Unstructured, previous, what string) {
	t.Helper()
	rv := got.GetResourceVersion()
	if rv == previous {
		return
	}
	w.await(t, watch.Modified, got.GetName(), func(o *unstructured.Unstructured) bool { return o.GetResourceVersion() == rv }, what+" (resourceVersion "+rv+")")
}

// setLabel sets one label of an object.
func setLabel(o *unstructured.Unstructured, key, value string) {
	labels := o.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[key] = value
	o.SetLabels(labels)
}

// contains tells whether got holds want: every key of a map (recursively),
// every element of a list of the same length, equal scalars. The server
// may add fields (defaults, computed values) beside those the test wrote.
func contains(got, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			if gv, ok := g[k]; !ok || !contains(gv, wv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !contains(g[i], w[i]) {
				return false
			}
		}
		return true
	default:
		return fmt.Sprint(got) == fmt.Sprint(want)
	}
}

func itemNames(items []unstructured.Unstructured) []string {
	names := make([]string, 0, len(items))
	for _, o := range items {
		names = append(names, o.GetName())
	}
	slices.Sort(names)
	return names
}

func sorted(s ...string) []string { slices.Sort(s); return s }

func sortedCopy(s []string) []string { c := slices.Clone(s); slices.Sort(c); return c }
