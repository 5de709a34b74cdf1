package api_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"minik/internal/api"
	"minik/internal/auth"
	"minik/internal/etcd"
	"minik/internal/storage"
	"minik/internal/version"
)

func TestReadyzListsItsChecksAsKubeApiserverDoes(t *testing.T) {
	db, err := etcd.Start(context.Background(), etcd.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var stalled atomic.Bool
	a, err := api.New(api.Config{
		Store:          storage.New(db.Client),
		Authenticators: []auth.Authenticator{mastersAuthenticator{}},
		Authorizers:    []auth.Authorizer{auth.MastersAuthorizer{}},
		AnonymousPaths: []string{"/readyz"},
		Version:        api.VersionInfo{GitVersion: version.Kubernetes},
		ReadyChecks: []api.ReadyCheck{{Name: "etcd-watch", Check: func(context.Context) error {
			if stalled.Load() {
				return errors.New("the watch stream stalled")
			}
			return nil
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	for _, step := range []struct {
		name     string
		ready    bool
		stalled  bool
		path     string
		wantCode int
		wantBody string
	}{
		{"before start-up finishes, the post-start hook fails", false, false, "/readyz", 500,
			"[+]ping ok\n[+]etcd-watch ok\n[-]poststarthook/minik-ready failed: reason withheld\nreadyz check failed\n"},
		{"once started, all checks pass: ok", true, false, "/readyz", 200, "ok"},
		{"verbose lists every check", true, false, "/readyz?verbose", 200,
			"[+]ping ok\n[+]etcd-watch ok\n[+]poststarthook/minik-ready ok\nreadyz check passed\n"},
		{"a failing check turns readyz red, its reason withheld", true, true, "/readyz", 500,
			"[+]ping ok\n[-]etcd-watch failed: reason withheld\n[+]poststarthook/minik-ready ok\nreadyz check failed\n"},
		{"an excluded check does not count", true, true, "/readyz?exclude=etcd-watch&verbose", 200,
			"[+]ping ok\n[+]etcd-watch excluded: ok\n[+]poststarthook/minik-ready ok\nreadyz check passed\n"},
		{"the check alone tells its reason", true, true, "/readyz/etcd-watch", 500,
			"internal server error: the watch stream stalled\n"},
		{"the check alone passes", true, false, "/readyz/etcd-watch", 200, "ok"},
	} {
		t.Run(step.name, func(t *testing.T) {
			a.SetReady(step.ready)
			stalled.Store(step.stalled)
			code, body := get(step.path)
			if code != step.wantCode || body != step.wantBody {
				t.Fatalf("GET %s = %d %q, want %d %q", step.path, code, body, step.wantCode, step.wantBody)
			}
		})
	}
}
