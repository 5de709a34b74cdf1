package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/server"
)

// TestMutatingInflightLimit fills minikd's one mutating slot with a create
// whose body is not finished, then sees the next write answered 429 with
// Retry-After: 1, /readyz still 200, and an admin (system:masters) still
// served.
func TestMutatingInflightLimit(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("writer-token,writer,writer-uid,\"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := server.New(server.Config{
		DataDir: filepath.Join(dir, "data"), Listen: "127.0.0.1:0", NoControllers: true, NoScheduler: true,
		TokenAuthFile: tokens, MaxMutatingRequestsInFlight: 1, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-s.Ready():
	case err := <-done:
		t.Fatalf("minikd did not start: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("minikd not ready after 60s")
	}
	admin, err := kubernetes.NewForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "writer-edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "writer"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	writerCfg := rest.AnonymousClientConfig(s.RESTConfig())
	writerCfg.BearerToken = "writer-token"
	writer, err := rest.HTTPClientFor(writerCfg)
	if err != nil {
		t.Fatal(err)
	}
	url := "https://" + s.Addr() + "/api/v1/namespaces/default/configmaps"
	post := func(query string, body io.Reader) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, url+query, body)
		req.Header.Set("Content-Type", "application/json")
		return writer.Do(req)
	}

	// The authorizer's cache holds the new binding a moment later: wait
	// until a dry run of the writer is allowed before holding the slot.
	waitUntil(t, "the writer to be authorized", 30*time.Second, func() bool {
		resp, err := post("?dryRun=All", strings.NewReader(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"authorized"}}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusCreated
	})

	// The held create: its body stops half way. minikd's own components
	// (nodes, DNS, metrics) write too, and one of them may hold the slot
	// when it arrives: then it is answered 429 at once and sent again.
	var pw *io.PipeWriter
	var held chan int
	hold := func() {
		var pr *io.PipeReader
		pr, pw = io.Pipe()
		held = make(chan int, 1)
		go func(held chan int) {
			resp, err := post("", pr)
			if err != nil {
				held <- 0
				return
			}
			resp.Body.Close()
			held <- resp.StatusCode
		}(held)
		if _, err := io.WriteString(pw, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held"`); err != nil {
			t.Fatal(err)
		}
	}
	hold()

	t.Run("a write while the mutating slot is taken gets 429 with Retry-After: 1", func(t *testing.T) {
		deadline := time.Now().Add(30 * time.Second)
		rejected := 0
		for i := 0; ; i++ {
			// Until the held create holds the slot, the probe (a dry run)
			// goes through.
			resp, err := post("?dryRun=All", strings.NewReader(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"probe-%d"}}`, i)))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			select {
			case code := <-held:
				if code != http.StatusTooManyRequests {
					t.Fatalf("held create answered %d before its body ended", code)
				}
				hold()
				rejected = 0
				continue
			default:
			}
			if resp.StatusCode == http.StatusTooManyRequests {
				if resp.Header.Get("Retry-After") != "1" || string(body) != "Too many requests, please try again later.\n" {
					t.Fatalf("429 with Retry-After %q and body %q", resp.Header.Get("Retry-After"), body)
				}
				// A component's write holds the slot for a moment; the
				// held create holds it for good: three 429s in a row,
				// with the held create still unanswered, tell them apart.
				if rejected++; rejected == 3 {
					break
				}
				continue
			}
			rejected = 0
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("probe = %d %s", resp.StatusCode, body)
			}
			if time.Now().After(deadline) {
				t.Fatal("no 429 after 30s: the held create never took the slot")
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	t.Run("while /readyz answers 200", func(t *testing.T) {
		resp, err := insecure.Get("https://" + s.Addr() + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/readyz = %d", resp.StatusCode)
		}
	})
	t.Run("and system:masters are served", func(t *testing.T) {
		if _, err := admin.CoreV1().ConfigMaps("default").Create(ctx, cmNamed("by-admin"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the held create finishes once its body does", func(t *testing.T) {
		if _, err := io.WriteString(pw, `}}`); err != nil {
			t.Fatalf("the held create's body: %v (the create was answered %d)", err, <-held)
		}
		pw.Close()
		if code := <-held; code != http.StatusCreated {
			t.Fatalf("held create = %d", code)
		}
	})
}

func cmNamed(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
