package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWatchFromAFutureResourceVersion(t *testing.T) {
	fs := startFilterServer(t, Config{})
	ctx := context.Background()
	watch := func(rv int64) (*http.Response, error) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=%d", fs.URL, rv), nil)
		req.Header.Set("X-Test-User", "alice")
		return fs.Client().Do(req)
	}

	t.Run("is answered kube's 504 Too large resource version once the wait is over", func(t *testing.T) {
		defer func(d time.Duration) { tooLargeWait = d }(tooLargeWait)
		tooLargeWait = 0
		cur, err := fs.api.store.CurrentRevision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := watch(cur + 100)
		if err != nil {
			t.Fatalf("the watch did not answer: %v", err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var st metav1.Status
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatalf("body %s: %v", body, err)
		}
		want := fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", cur+100, cur)
		if resp.StatusCode != http.StatusGatewayTimeout || st.Reason != metav1.StatusReasonTimeout || st.Message != want || st.Details == nil ||
			st.Details.RetryAfterSeconds != 1 || len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != metav1.CauseTypeResourceVersionTooLarge ||
			st.Details.Causes[0].Message != "Too large resource version" {
			t.Fatalf("got %d %s\nwant 504 %q with retryAfterSeconds 1 and a ResourceVersionTooLarge cause", resp.StatusCode, body, want)
		}
	})
	t.Run("starts once etcd reaches it during the wait", func(t *testing.T) {
		defer func(d time.Duration) { tooLargeWait = d }(tooLargeWait)
		tooLargeWait = time.Hour
		cur, err := fs.api.store.CurrentRevision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		answered := make(chan int, 1)
		go func() {
			resp, err := watch(cur + 1)
			if err != nil {
				answered <- 0
				return
			}
			resp.Body.Close()
			answered <- resp.StatusCode
		}()
		fs.create(t, "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"next"}}`)
		if code := <-answered; code != http.StatusOK {
			t.Fatalf("watch = %d, want 200", code)
		}
	})
}
