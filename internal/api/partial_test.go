package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"

	"minik/internal/testserver"
)

// TestMetadataOnly serves the objects' metadata to client-go's metadata
// client (what controller-runtime's OnlyMetadata watches and the garbage
// collectors of kube use), as PartialObjectMetadata over protobuf or JSON.
func TestMetadataOnly(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	cs := srv.Client(t)
	namespace(t, cs, "meta")
	for _, name := range []string{"a", "b"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "x"}}, Data: map[string]string{"big": "data"}}
		if _, err := cs.CoreV1().ConfigMaps("meta").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mc, err := metadata.NewForConfig(srv.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	cms := mc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("meta")

	got, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.Name != "a" || got.Labels["app"] != "x" || got.UID == "" {
		t.Fatalf("get = %+v", got)
	}
	list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "app=x"})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(list.Items) != 2 || list.Items[1].Name != "b" || list.ResourceVersion == "" {
		t.Fatalf("list = %+v", list)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	if _, err := cs.CoreV1().ConfigMaps("meta").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		p, ok := ev.Object.(*metav1.PartialObjectMetadata)
		if ev.Type != watch.Added || !ok || p.Name != "c" {
			t.Fatalf("watch event %s %#v", ev.Type, ev.Object)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no watch event in 30s")
	}
	// Raw: a JSON request for the metadata only gets no data (the metadata
	// client would take a whole object too, so look at the bytes).
	body, err := cs.CoreV1().RESTClient().Get().Namespace("meta").Resource("configmaps").Name("a").
		SetHeader("Accept", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1").DoRaw(ctx)
	if err != nil || string(body) == "" || strings.Contains(string(body), `"data"`) || !strings.Contains(string(body), `"kind":"PartialObjectMetadata"`) {
		t.Fatalf("raw metadata-only get = %s (err %v)", body, err)
	}
	// A list's kind on a get is not what the endpoint gives: the next
	// clause (the object) answers.
	body, err = cs.CoreV1().RESTClient().Get().Namespace("meta").Resource("configmaps").Name("a").
		SetHeader("Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json").DoRaw(ctx)
	if err != nil || !strings.Contains(string(body), `"kind":"ConfigMap"`) {
		t.Fatalf("get asking for a list's metadata first = %s (err %v)", body, err)
	}
}
