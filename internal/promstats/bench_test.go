package promstats_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"minik/internal/promstats"
)

// BenchmarkObserveRequest is what the request metrics add to each request.
func BenchmarkObserveRequest(b *testing.B) {
	u, _ := url.Parse("/api/v1/namespaces/default/pods/web")
	r := promstats.Request{Method: http.MethodGet, Verb: "get", IsResource: true, Version: "v1", Resource: "pods", Namespace: "default", Name: "web", URL: u}
	b.ReportAllocs()
	for b.Loop() {
		promstats.ObserveRequest(r, http.StatusOK, time.Millisecond)
	}
}

// BenchmarkScrape is one scrape of /metrics (the process's registry as it
// stands: the benchmark's own series plus the Go and process collectors).
func BenchmarkScrape(b *testing.B) {
	h := promstats.Handler()
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}
