package api

import (
	"encoding/json"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTokenRequestWithoutIssuer checks that a server with no token issuer
// answers serviceaccounts/token as it answers a path it does not serve.
func TestTokenRequestWithoutIssuer(t *testing.T) {
	a := newTestAPI(t)
	body := []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}`)
	rec := a.do(http.MethodPost, "/api/v1/namespaces/"+fuzzNamespace+"/serviceaccounts/default/token", mediaJSON, body)
	var st metav1.Status
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatalf("answered %d with %q: %v", rec.Code, rec.Body, err)
	}
	if rec.Code != http.StatusNotFound || st.Reason != metav1.StatusReasonNotFound || st.Message != "the server could not find the requested resource" {
		t.Fatalf("answered %d %s %q, want 404 NotFound %q", rec.Code, st.Reason, st.Message, "the server could not find the requested resource")
	}
	unknown := a.do(http.MethodPost, "/api/v1/namespaces/"+fuzzNamespace+"/serviceaccounts/default/nosuch", mediaJSON, body)
	if unknown.Body.String() != rec.Body.String() {
		t.Fatalf("answered %s, want what an unknown subresource gets: %s", rec.Body, unknown.Body)
	}
}
