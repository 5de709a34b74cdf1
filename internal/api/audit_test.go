package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/api"
	"minik/internal/testserver"
)

const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*"]
- level: None
  users: ["system:apiserver"]
- level: RequestResponse
  resources:
  - group: ""
    resources: [configmaps, secrets]
- level: Metadata
`

// auditEvents reads the audit log's events.
func auditEvents(t *testing.T, dataDir string) []api.AuditEvent {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dataDir, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	var evs []api.AuditEvent
	// Only whole lines: the last one may still be being written.
	data = data[:bytes.LastIndexByte(data, '\n')+1]
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev api.AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// findAudit waits for an event matching match.
func findAudit(t *testing.T, dataDir, what string, match func(*api.AuditEvent) bool) *api.AuditEvent {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, ev := range auditEvents(t, dataDir) {
			if match(&ev) {
				return &ev
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no audit event for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAudit(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testserver.StartWith(t, testserver.Options{AuditPolicyFile: policy})
	ctx := context.Background()
	admin := srv.Client(t)
	namespace(t, admin, "demo")
	if _, err := admin.CoreV1().ConfigMaps("demo").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Secrets("demo").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db"}, StringData: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	viewer := userClient(t, srv, "viewer", "viewers")
	_, _ = viewer.CoreV1().Pods("demo").List(ctx, metav1.ListOptions{})

	t.Run("a forbidden request is recorded with who, what and why", func(t *testing.T) {
		ev := findAudit(t, srv.DataDir, "the viewer's list", func(ev *api.AuditEvent) bool { return ev.User.Username == "viewer" })
		if ev.Kind != "Event" || ev.APIVersion != "audit.k8s.io/v1" || ev.Stage != api.StageResponseComplete || ev.Level != api.AuditMetadata {
			t.Fatalf("event %+v", ev)
		}
		if ev.Verb != "list" || ev.ObjectRef == nil || ev.ObjectRef.Resource != "pods" || ev.ObjectRef.Namespace != "demo" || ev.ResponseStatus.Code != 403 {
			t.Fatalf("event %+v %+v %+v", ev, ev.ObjectRef, ev.ResponseStatus)
		}
		if !strings.Contains(ev.ResponseStatus.Message, `User "viewer" cannot list resource "pods"`) || ev.Annotations[api.AuditDecisionAnnotation] != "forbid" {
			t.Fatalf("status %+v annotations %v", ev.ResponseStatus, ev.Annotations)
		}
		if ev.Annotations[api.AuditLatencyAnnotation] == "" || ev.StageTimestamp.Before(&ev.RequestReceivedTimestamp) {
			t.Fatalf("timing %v %v %v", ev.Annotations, ev.RequestReceivedTimestamp, ev.StageTimestamp)
		}
		if len(ev.User.Groups) != 2 || ev.User.Groups[0] != "viewers" || len(ev.SourceIPs) == 0 || ev.AuditID == "" {
			t.Fatalf("event %+v", ev)
		}
	})
	t.Run("a config map's create is recorded with both bodies", func(t *testing.T) {
		ev := findAudit(t, srv.DataDir, "the config map's create", func(ev *api.AuditEvent) bool {
			return ev.Verb == "create" && ev.ObjectRef != nil && ev.ObjectRef.Resource == "configmaps" && ev.ObjectRef.Namespace == "demo"
		})
		if ev.Level != api.AuditRequestResponse || ev.ObjectRef.Name != "app" || ev.ResponseStatus.Code != 201 || ev.Annotations[api.AuditDecisionAnnotation] != "allow" {
			t.Fatalf("event %+v %+v", ev, ev.ObjectRef)
		}
		if ev.RequestObject == nil || ev.ResponseObject == nil || !strings.Contains(string(ev.RequestObject.Raw), `"k":"v"`) || !strings.Contains(string(ev.ResponseObject.Raw), `"uid"`) {
			t.Fatalf("bodies %v / %v", ev.RequestObject, ev.ResponseObject)
		}
	})
	t.Run("a secret's body is never recorded", func(t *testing.T) {
		ev := findAudit(t, srv.DataDir, "the secret's create", func(ev *api.AuditEvent) bool {
			return ev.Verb == "create" && ev.ObjectRef != nil && ev.ObjectRef.Resource == "secrets"
		})
		if ev.Level != api.AuditMetadata || ev.RequestObject != nil || ev.ResponseObject != nil || ev.ObjectRef.Name != "db" {
			t.Fatalf("event %+v", ev)
		}
		data, _ := os.ReadFile(filepath.Join(srv.DataDir, "audit.log"))
		if bytes.Contains(data, []byte("hunter2")) || bytes.Contains(data, []byte("aHVudGVyMg")) {
			t.Fatal("the secret's value is in the audit log")
		}
	})
	t.Run("the policy's None rules leave requests out", func(t *testing.T) {
		for _, ev := range auditEvents(t, srv.DataDir) {
			if ev.User.Username == "system:apiserver" || strings.HasPrefix(ev.RequestURI, "/readyz") {
				t.Fatalf("recorded %+v", ev)
			}
		}
	})
}

func TestParseAuditPolicy(t *testing.T) {
	if _, err := api.ParseAuditPolicy([]byte(auditPolicy)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n",
		"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: [/x]\n  namespaces: [a]\n",
		"apiVersion: v1\nkind: ConfigMap\n",
		"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  colour: blue\n",
	} {
		if _, err := api.ParseAuditPolicy([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}
