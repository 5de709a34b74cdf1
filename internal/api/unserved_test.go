package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/testserver"
)

// TestUnservedVerb: a verb a resource's descriptor does not serve
// (deletecollection of Namespaces) is answered as kube-apiserver's router
// answers a method it has no route for: 405 with its generic Status, and
// nothing is deleted.
func TestUnservedVerb(t *testing.T) {
	srv := testserver.Start(t)
	cs := srv.Client(t)
	ctx := context.Background()
	namespace(t, cs, "kept")
	var code int
	raw, err := cs.CoreV1().RESTClient().Delete().AbsPath("/api/v1/namespaces").Do(ctx).StatusCode(&code).Raw()
	if err == nil || code != http.StatusMethodNotAllowed {
		t.Fatalf("DELETE /api/v1/namespaces: %d %v; want 405", code, err)
	}
	var status metav1.Status
	if err := json.Unmarshal(raw, &status); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	want := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: "the server does not allow this method on the requested resource",
		Reason: metav1.StatusReasonMethodNotAllowed, Details: &metav1.StatusDetails{}, Code: http.StatusMethodNotAllowed,
	}
	if got, _ := json.Marshal(status); string(got) != string(mustJSON(t, want)) {
		t.Errorf("DELETE /api/v1/namespaces answered\n%s\nwant kube's\n%s", got, mustJSON(t, want))
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "kept", metav1.GetOptions{}); err != nil {
		t.Errorf("namespace kept after the refused deletecollection: %v", err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
