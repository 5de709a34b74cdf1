package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/auth"
	"minik/internal/etcd"
	"minik/internal/storage"
)

// headerAuth authenticates every request as the user named in X-Test-User,
// in the groups of X-Test-Group.
type headerAuth struct{}

func (headerAuth) Authenticate(r *http.Request) (*auth.User, bool, error) {
	name := r.Header.Get("X-Test-User")
	if name == "" {
		return nil, false, nil
	}
	return &auth.User{Name: name, Groups: append(r.Header.Values("X-Test-Group"), "system:authenticated")}, true, nil
}

// syncBuffer is a buffer written by the server and read by the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// filterServer is an API server on a real etcd, served over plain HTTP,
// with test handlers among its Extra paths.
type filterServer struct {
	*httptest.Server
	api   *Server
	log   *syncBuffer
	audit *syncBuffer
	// hold's handlers signal entered, wait for their gate (?gate=) to
	// close (or for their context), then record their context's error in
	// ended.
	entered chan string
	ended   chan error
	mu      sync.Mutex
	gates   map[string]chan struct{}
}

// gate returns the channel the hold requests of a gate wait on.
func (fs *filterServer) gate(name string) chan struct{} {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.gates[name] == nil {
		fs.gates[name] = make(chan struct{})
	}
	return fs.gates[name]
}

// recv receives from c, failing the test after a minute.
func recv[T any](t *testing.T, what string, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("no %s after a minute", what)
	}
	panic("unreachable")
}

func startFilterServer(t *testing.T, cfg Config) *filterServer {
	t.Helper()
	db, err := etcd.Start(context.Background(), etcd.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	fs := &filterServer{log: &syncBuffer{}, audit: &syncBuffer{}, entered: make(chan string, 16), ended: make(chan error, 16), gates: map[string]chan struct{}{}}
	cfg.Store = storage.New(db.Client)
	cfg.Authenticators = []auth.Authenticator{headerAuth{}}
	cfg.Authorizers = []auth.Authorizer{auth.AlwaysAllow{}}
	cfg.AnonymousPaths = []string{"/healthz", "/livez", "/readyz"}
	cfg.Logger = slog.New(slog.NewTextHandler(fs.log, nil))
	auditor := NewAuditor(fs.audit, nil, cfg.Logger)
	cfg.Audit = auditor
	cfg.Extra = map[string]http.Handler{
		"/test/panic": http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }),
		"/test/panic-midway": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, `{"items":[`)
			w.(http.Flusher).Flush()
			panic("boom midway")
		}),
		"/test/hold": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			gate := fs.gate(r.URL.Query().Get("gate"))
			fs.entered <- r.Method
			select {
			case <-gate:
			case <-r.Context().Done():
			}
			fs.ended <- r.Context().Err()
			if r.Context().Err() == nil {
				_, _ = io.WriteString(w, "released")
			}
		}),
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.SetReady(true)
	fs.api = s
	fs.Server = httptest.NewServer(s)
	t.Cleanup(func() {
		fs.Close()
		s.Stop()
		auditor.Close()
	})
	return fs
}

// do sends a request as user (in groups) and returns the response with its
// body read.
func (fs *filterServer) do(t *testing.T, method, path, user string, groups ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, fs.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.Header.Set("X-Test-User", user)
	}
	for _, g := range groups {
		req.Header.Add("X-Test-Group", g)
	}
	resp, err := fs.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp, string(body)
}

// create POSTs a JSON object to path and fails unless it is created.
func (fs *filterServer) create(t *testing.T, path, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, fs.URL+path, strings.NewReader(body))
	req.Header.Set("X-Test-User", "alice")
	req.Header.Set("Content-Type", "application/json")
	resp, err := fs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		out, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, out)
	}
}

// hold starts n requests to /test/hold?gate=gate and returns once all are
// inside the handler; their responses arrive on the returned channel.
func (fs *filterServer) hold(t *testing.T, method, gate string, n int) <-chan int {
	t.Helper()
	codes := make(chan int, n)
	for range n {
		go func() {
			req, _ := http.NewRequest(method, fs.URL+"/test/hold?gate="+gate, nil)
			req.Header.Set("X-Test-User", "alice")
			resp, err := fs.Client().Do(req)
			if err != nil {
				codes <- 0
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	for range n {
		recv(t, "held request in its handler", fs.entered)
	}
	return codes
}

// auditEvents returns the events written so far (the auditor flushes
// within 50 ms; the caller waits for the one it wants).
func (fs *filterServer) waitAudit(t *testing.T, match func(*AuditEvent) bool) *AuditEvent {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, line := range strings.Split(fs.audit.String(), "\n") {
			var ev AuditEvent
			if json.Unmarshal([]byte(line), &ev) == nil && match(&ev) {
				return &ev
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no such audit event in:\n%s", fs.audit.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPanicRecovery(t *testing.T) {
	fs := startFilterServer(t, Config{})

	t.Run("a handler that panics answers kube's 500, is logged with its stack and audited as a Panic", func(t *testing.T) {
		resp, body := fs.do(t, http.MethodGet, "/test/panic", "alice")
		var st metav1.Status
		if err := json.Unmarshal([]byte(body), &st); err != nil || resp.StatusCode != http.StatusInternalServerError ||
			st.Reason != metav1.StatusReasonInternalError || st.Message != "Internal error occurred: "+panicMessage {
			t.Fatalf("got %d %q, want a 500 Status InternalError %q", resp.StatusCode, body, panicMessage)
		}
		log := fs.log.String()
		if !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "apiserver panic'd") || !strings.Contains(log, "panic=boom") || !strings.Contains(log, "filters_test.go") {
			t.Fatalf("log lacks the panic at error with its stack:\n%s", log)
		}
		ev := fs.waitAudit(t, func(ev *AuditEvent) bool { return ev.RequestURI == "/test/panic" })
		if ev.Stage != StagePanic || ev.ResponseStatus == nil || ev.ResponseStatus.Code != 500 || ev.ResponseStatus.Message != "APIServer panic'd: boom" {
			t.Fatalf("audit event stage %s status %+v", ev.Stage, ev.ResponseStatus)
		}
	})
	t.Run("a handler that panics once its response started has its stream aborted, and is logged", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, fs.URL+"/test/panic-midway", nil)
		req.Header.Set("X-Test-User", "alice")
		resp, err := fs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil {
			t.Fatalf("the stream ended cleanly with %q; want it cut", body)
		}
		if resp.StatusCode != http.StatusOK || string(body) != `{"items":[` {
			t.Fatalf("got %d %q before the cut", resp.StatusCode, body)
		}
		if log := fs.log.String(); !strings.Contains(log, "panic=\"boom midway\"") {
			t.Fatalf("log lacks the panic:\n%s", log)
		}
		ev := fs.waitAudit(t, func(ev *AuditEvent) bool { return ev.RequestURI == "/test/panic-midway" })
		if ev.Stage != StagePanic || ev.ResponseStatus.Code != 500 {
			t.Fatalf("audit event stage %s status %+v", ev.Stage, ev.ResponseStatus)
		}
	})
	t.Run("the server serves on after a panic", func(t *testing.T) {
		if resp, _ := fs.do(t, http.MethodGet, "/version", "alice"); resp.StatusCode != http.StatusOK {
			t.Fatalf("/version = %d", resp.StatusCode)
		}
	})
}

func TestInflightLimit(t *testing.T) {
	fs := startFilterServer(t, Config{MaxRequestsInFlight: 2, MaxMutatingRequestsInFlight: 1})

	t.Run("with the read-only slots full a read gets 429 with Retry-After: 1", func(t *testing.T) {
		held := fs.hold(t, http.MethodGet, "reads", 2)
		resp, body := fs.do(t, http.MethodGet, "/version", "alice")
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" || body != tooManyMessage+"\n" {
			t.Fatalf("got %d Retry-After %q %q", resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
		t.Run("while /readyz, /livez and /healthz answer at once", func(t *testing.T) {
			for _, p := range []string{"/readyz", "/livez", "/healthz"} {
				if resp, body := fs.do(t, http.MethodGet, p, ""); resp.StatusCode != http.StatusOK {
					t.Fatalf("%s = %d %s", p, resp.StatusCode, body)
				}
			}
		})
		t.Run("and system:masters are served", func(t *testing.T) {
			if resp, body := fs.do(t, http.MethodGet, "/version", "admin", auth.GroupMasters); resp.StatusCode != http.StatusOK {
				t.Fatalf("/version as system:masters = %d %s", resp.StatusCode, body)
			}
		})
		t.Run("and a watch, long-running, takes no slot", func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, fs.URL+"/api/v1/namespaces/default/configmaps?watch=true", nil)
			req.Header.Set("X-Test-User", "alice")
			resp, err := fs.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("watch = %d", resp.StatusCode)
			}
		})
		t.Run("and a write still has its own slot", func(t *testing.T) {
			held := fs.hold(t, http.MethodPost, "write", 1)
			resp, _ := fs.do(t, http.MethodPost, "/test/hold?gate=never", "alice")
			if resp.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("second write = %d, want 429", resp.StatusCode)
			}
			close(fs.gate("write"))
			if code := recv(t, "held write's answer", held); code != http.StatusOK {
				t.Fatalf("held write = %d", code)
			}
		})
		close(fs.gate("reads"))
		for range 2 {
			if code := recv(t, "held read's answer", held); code != http.StatusOK {
				t.Fatalf("held read = %d", code)
			}
		}
		if resp, body := fs.do(t, http.MethodGet, "/version", "alice"); resp.StatusCode != http.StatusOK {
			t.Fatalf("after the release /version = %d %s", resp.StatusCode, body)
		}
	})
	t.Run("a 429 is audited", func(t *testing.T) {
		fs.waitAudit(t, func(ev *AuditEvent) bool {
			return ev.RequestURI == "/version" && ev.ResponseStatus != nil && ev.ResponseStatus.Code == http.StatusTooManyRequests
		})
	})
}

func TestRequestTimeout(t *testing.T) {
	fs := startFilterServer(t, Config{RequestTimeout: time.Hour})

	t.Run("a request past its timeout gets kube's 504, and its handler sees its context end", func(t *testing.T) {
		resp, body := fs.do(t, http.MethodGet, "/test/hold?gate=never&timeout=50ms", "alice")
		var st metav1.Status
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatalf("body %q: %v", body, err)
		}
		if resp.StatusCode != http.StatusGatewayTimeout || st.Reason != metav1.StatusReasonTimeout || st.Message != "Timeout: request did not complete within the allotted timeout" {
			t.Fatalf("got %d %s", resp.StatusCode, body)
		}
		recv(t, "held request in its handler", fs.entered)
		if err := recv(t, "end of the handler", fs.ended); err == nil {
			t.Fatal("the handler's context did not end")
		}
		fs.waitAudit(t, func(ev *AuditEvent) bool {
			return strings.HasPrefix(ev.RequestURI, "/test/hold") && ev.ResponseStatus.Code == http.StatusGatewayTimeout
		})
	})
	t.Run("a body that trickles in is cut off at the timeout", func(t *testing.T) {
		pr, pw := io.Pipe()
		defer pw.Close()
		req, _ := http.NewRequest(http.MethodPost, fs.URL+"/api/v1/namespaces/default/configmaps?timeout=100ms", pr)
		req.Header.Set("X-Test-User", "alice")
		req.Header.Set("Content-Type", "application/json")
		go func() { _, _ = io.WriteString(pw, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"slow"`) }()
		resp, err := fs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusGatewayTimeout {
			t.Fatalf("got %d %s, want 504", resp.StatusCode, body)
		}
	})
	t.Run("an invalid timeout is kube's 400", func(t *testing.T) {
		resp, body := fs.do(t, http.MethodGet, "/version?timeout=soon", "alice")
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `invalid timeout specified in the request URL - time: invalid duration \"soon\"`) {
			t.Fatalf("got %d %s", resp.StatusCode, body)
		}
	})
}
