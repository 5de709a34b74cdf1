package runtime

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"
)

// startWebhook starts an agnhost webhook subcommand with a certificate
// from a mounted Secret, and returns a client of its port.
func startWebhook(t *testing.T, sub string) (base string, post func(path, ctype, body string) (int, string)) {
	t.Helper()
	cert, key := testCert(t, "e2e-test-webhook.ns.svc")
	certs := NewVolume(map[string][]byte{"tls.crt": cert, "tls.key": key}, true)
	port := freePort(t)
	startOn(t, New(Config{Speed: 1000}), ContainerSpec{Image: agnhostImage,
		Args:   []string{sub, "--tls-cert-file=/webhook.local.config/certificates/tls.crt", "--tls-private-key-file=/webhook.local.config/certificates/tls.key", "--port=" + port},
		Mounts: []Mount{{Path: "/webhook.local.config/certificates", Volume: certs, ReadOnly: true}}})
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test checks the server's answers, not its name
	base = "https://127.0.0.1:" + port
	return base, func(path, ctype, body string) (int, string) {
		t.Helper()
		resp, err := client.Post(base+path, ctype, bytes.NewBufferString(body))
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
}

func TestAgnhostWebhookAnswersAdmissionReviews(t *testing.T) {
	_, post := startWebhook(t, "webhook")
	review := func(version, resource, operation, object string) string {
		return `{"apiVersion":"admission.k8s.io/` + version + `","kind":"AdmissionReview","request":{"uid":"u-1","kind":{"group":"","version":"v1","kind":"X"},` +
			`"resource":` + resource + `,"operation":"` + operation + `","object":` + object + `}}`
	}
	pods := `{"group":"","version":"v1","resource":"pods"}`
	configmaps := `{"group":"","version":"v1","resource":"configmaps"}`
	cases := []struct {
		name, path, body, want string
	}{
		{"always-deny denies", "/always-deny", review("v1", pods, "CREATE", `{}`),
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u-1","allowed":false,"status":{"metadata":{},"message":"this webhook denies all requests"}}}`},
		{"a v1beta1 review is answered in v1beta1", "/always-deny", review("v1beta1", pods, "CREATE", `{}`),
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1beta1","response":{"uid":"u-1","allowed":false,"status":{"metadata":{},"message":"this webhook denies all requests"}}}`},
		{"pods denies an unwanted label", "/pods", review("v1", pods, "CREATE", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"webhook-e2e-test":"webhook-disallow"}},"spec":{"containers":[{"name":"c","image":"i"}]}}`),
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u-1","allowed":false,"status":{"metadata":{},"message":"the pod contains unwanted label;"}}}`},
		{"configmaps denies unwanted data with a reason", "/configmaps", review("v1", configmaps, "CREATE", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"webhook-e2e-test":"webhook-disallow"}}`),
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u-1","allowed":false,"status":{"metadata":{},"reason":"the configmap contains unwanted key and value"}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(tc.path, "application/json", tc.body)
			if status != 200 || body != tc.want {
				t.Fatalf("got %d %s\nwant %s", status, body, tc.want)
			}
		})
	}
	t.Run("add-label patches the labels in", func(t *testing.T) {
		for object, want := range map[string]string{
			`{"metadata":{"name":"c"}}`:                                `[{"op":"add","path":"/metadata/labels","value":{"added-label":"yes"}}]`,
			`{"metadata":{"name":"c","labels":{"a":"b"}}}`:             `[{"op":"add","path":"/metadata/labels/added-label","value":"yes"}]`,
			`{"metadata":{"name":"c","labels":{"added-label":"no"}}}`:  `[{"op":"replace","path":"/metadata/labels/added-label","value":"yes"}]`,
			`{"metadata":{"name":"c","labels":{"added-label":"yes"}}}`: ``,
		} {
			_, body := post("/add-label", "application/json", review("v1", configmaps, "CREATE", object))
			var out struct {
				Response struct {
					Allowed   bool
					Patch     []byte
					PatchType *string
				}
			}
			if err := json.Unmarshal([]byte(body), &out); err != nil {
				t.Fatal(err)
			}
			got := ""
			if len(out.Response.Patch) > 0 {
				var ops any
				if err := json.Unmarshal(out.Response.Patch, &ops); err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(ops)
				got = string(b)
			}
			if !out.Response.Allowed || got != want {
				t.Fatalf("%s: got %s, want %s", object, got, want)
			}
		}
	})
	t.Run("a body that is not JSON is refused", func(t *testing.T) {
		if status, _ := post("/always-deny", "application/json", "{"); status != 400 {
			t.Fatalf("status %d", status)
		}
	})
}

func TestAgnhostConversionWebhookConverts(t *testing.T) {
	_, post := startWebhook(t, "crd-conversion-webhook")
	status, body := post("/crdconvert", "application/json", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u-2","desiredAPIVersion":"stable.example.com/v2",`+
		`"objects":[{"apiVersion":"stable.example.com/v1","kind":"E2e-test-crd-webhook-1234-crd","metadata":{"name":"cr1"},"hostPort":"localhost:8080"}]}}`)
	want := `{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1","request":{"uid":"","desiredAPIVersion":"","objects":null},"response":{"uid":"u-2","convertedObjects":[{"apiVersion":"stable.example.com/v2","host":"localhost","kind":"E2e-test-crd-webhook-1234-crd","metadata":{"name":"cr1"},"port":"8080"}],"result":{"metadata":{},"status":"Success"}}}` + "\n"
	if status != 200 || body != want {
		t.Fatalf("got %d %s\nwant %s", status, body, want)
	}
	_, body = post("/crdconvert", "application/json", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u-3","desiredAPIVersion":"stable.example.com/v1",`+
		`"objects":[{"apiVersion":"stable.example.com/v1","kind":"X","metadata":{"name":"cr1"}}]}}`)
	if want := `"result":{"metadata":{},"status":"Failure","message":"conversion from a version to itself should not call the webhook: stable.example.com/v1"}`; !bytes.Contains([]byte(body), []byte(want)) {
		t.Fatalf("got %s", body)
	}
}
