package webhook

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	admissionlisters "k8s.io/client-go/listers/admissionregistration/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"

	"minik/internal/admission"
	"minik/internal/auth"
	"minik/internal/auth/rbac"
	"minik/internal/pki"
)

// hookServer serves an admission webhook over HTTPS on loopback with a
// certificate for hosts, signed by a fresh CA whose PEM it returns.
func hookServer(t *testing.T, hosts []string, review func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) (*httptest.Server, []byte) {
	t.Helper()
	dir := t.TempDir()
	ca, err := pki.LoadOrCreateCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.LoadOrCreateServing(dir, "hook", hosts)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := kp.TLS()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		resp := review(in.Request)
		if resp == nil {
			return
		}
		if resp.UID == "" {
			resp.UID = in.Request.UID
		}
		_ = json.NewEncoder(w).Encode(admissionv1.AdmissionReview{TypeMeta: in.TypeMeta, Response: resp})
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, ca.CertPEM
}

func indexer(objs ...runtime.Object) cache.Indexer {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		if err := idx.Add(o); err != nil {
			panic(err)
		}
	}
	return idx
}

var (
	fail   = admissionregistrationv1.Fail
	ignore = admissionregistrationv1.Ignore
	none   = admissionregistrationv1.SideEffectClassNone
	podsRW = []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
	}}
)

func validatingHook(name, url string, ca []byte, fp *admissionregistrationv1.FailurePolicyType, timeout int32) admissionregistrationv1.ValidatingWebhook {
	return admissionregistrationv1.ValidatingWebhook{
		Name: name, ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca},
		Rules: podsRW, FailurePolicy: fp, SideEffects: &none, TimeoutSeconds: &timeout,
		AdmissionReviewVersions: []string{"v1"},
	}
}

type fixture struct {
	mutating   []*admissionregistrationv1.MutatingWebhookConfiguration
	validating []*admissionregistrationv1.ValidatingWebhookConfiguration
	services   []runtime.Object
	defaults   func(runtime.Object)
	authz      auth.Authorizer
}

func (f fixture) plugins(t *testing.T) *Plugins {
	t.Helper()
	var m, v []runtime.Object
	for _, c := range f.mutating {
		m = append(m, c)
	}
	for _, c := range f.validating {
		v = append(v, c)
	}
	var svcs, slices []runtime.Object
	for _, o := range f.services {
		if _, ok := o.(*corev1.Service); ok {
			svcs = append(svcs, o)
		} else {
			slices = append(slices, o)
		}
	}
	p, err := New(Config{
		Mutating:   admissionlisters.NewMutatingWebhookConfigurationLister(indexer(m...)),
		Validating: admissionlisters.NewValidatingWebhookConfigurationLister(indexer(v...)),
		Namespaces: func(_ context.Context, name string) (*corev1.Namespace, error) {
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": "dev"}}}, nil
		},
		Services:       corelisters.NewServiceLister(indexer(svcs...)),
		EndpointSlices: discoverylisters.NewEndpointSliceLister(indexer(slices...)),
		Default:        f.defaults,
		Authorizer:     f.authz,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func podAttrs() *admission.Attributes {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}}}
	return &admission.Attributes{
		Operation: admission.Create, Kind: corev1.SchemeGroupVersion.WithKind("Pod"), Resource: corev1.SchemeGroupVersion.WithResource("pods"),
		Namespace: "demo", Name: "web", Object: pod, User: &auth.User{Name: "alice", Groups: []string{"dev"}},
	}
}

// withWarnings returns a context collecting warnings into the returned
// header, as the API's handler chain does.
func withWarnings() (context.Context, http.Header) {
	var ctx context.Context
	rec := httptest.NewRecorder()
	admission.WithWarnings(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { ctx = r.Context() })).
		ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	return ctx, rec.Header()
}

func TestValidatingWebhooks(t *testing.T) {
	var seen atomic.Pointer[admissionv1.AdmissionRequest]
	allow, caA := hookServer(t, []string{"127.0.0.1"}, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		seen.Store(req)
		return &admissionv1.AdmissionResponse{Allowed: true, Warnings: []string{"pods should set resources"}}
	})
	deny, caD := hookServer(t, []string{"127.0.0.1"}, func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "images must come from registry.example.com", Code: 403, Reason: metav1.StatusReasonForbidden}}
	})
	slow, caS := hookServer(t, []string{"127.0.0.1"}, func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		time.Sleep(2 * time.Second)
		return &admissionv1.AdmissionResponse{Allowed: true}
	})
	cfg := func(name string, hooks ...admissionregistrationv1.ValidatingWebhook) *admissionregistrationv1.ValidatingWebhookConfiguration {
		return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, Webhooks: hooks}
	}

	t.Run("an allowing hook admits, sees the request and its warnings reach the client", func(t *testing.T) {
		p := fixture{validating: []*admissionregistrationv1.ValidatingWebhookConfiguration{cfg("allow", validatingHook("allow.example.com", allow.URL+"/validate", caA, &fail, 5))}}.plugins(t)
		ctx, header := withWarnings()
		a := podAttrs()
		if err := p.Validating().Validate(ctx, a); err != nil {
			t.Fatal(err)
		}
		req := seen.Load()
		if req == nil || req.Operation != admissionv1.Create || req.Name != "web" || req.Namespace != "demo" || req.UserInfo.Username != "alice" ||
			req.Kind.Kind != "Pod" || req.Resource.Resource != "pods" || req.UID != a.UID || !strings.Contains(string(req.Object.Raw), `"kind":"Pod"`) {
			t.Fatalf("request = %+v", req)
		}
		if got := header.Values("Warning"); len(got) != 1 || got[0] != `299 - "pods should set resources"` {
			t.Errorf("warnings = %q", got)
		}
	})
	t.Run("a denial is surfaced with kube's message and the hook's code", func(t *testing.T) {
		p := fixture{validating: []*admissionregistrationv1.ValidatingWebhookConfiguration{cfg("deny", validatingHook("deny.example.com", deny.URL, caD, &fail, 5))}}.plugins(t)
		err := p.Validating().Validate(context.Background(), podAttrs())
		want := `admission webhook "deny.example.com" denied the request: images must come from registry.example.com`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("a timeout fails the request under failurePolicy Fail", func(t *testing.T) {
		p := fixture{validating: []*admissionregistrationv1.ValidatingWebhookConfiguration{cfg("slow", validatingHook("slow.example.com", slow.URL+"/v", caS, &fail, 1))}}.plugins(t)
		start := time.Now()
		err := p.Validating().Validate(context.Background(), podAttrs())
		want := `Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: Post "` + slow.URL + `/v?timeout=1s": context deadline exceeded`
		if !apierrors.IsInternalError(err) || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
		if d := time.Since(start); d > 1900*time.Millisecond {
			t.Errorf("took %v, the timeout is 1s", d)
		}
	})
	t.Run("a timeout is ignored under failurePolicy Ignore", func(t *testing.T) {
		p := fixture{validating: []*admissionregistrationv1.ValidatingWebhookConfiguration{cfg("slow", validatingHook("slow.example.com", slow.URL, caS, &ignore, 1))}}.plugins(t)
		if err := p.Validating().Validate(context.Background(), podAttrs()); err != nil {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a certificate the caBundle does not vouch for is a call failure", func(t *testing.T) {
		p := fixture{validating: []*admissionregistrationv1.ValidatingWebhookConfiguration{cfg("allow", validatingHook("allow.example.com", allow.URL, caD, &fail, 5))}}.plugins(t)
		err := p.Validating().Validate(context.Background(), podAttrs())
		if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("selectors and rules that do not match skip the hook", func(t *testing.T) {
		h := validatingHook("deny.example.com", deny.URL, caD, &fail, 5)
		h.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
		h2 := validatingHook("deny2.example.com", deny.URL, caD, &fail, 5)
		h2.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
		h3 := validatingHook("deny3.example.com", deny.URL, caD, &fail, 5)
		h3.Rules = []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
		}}
		h4 := validatingHook("deny4.example.com", deny.URL, caD, &fail, 5)
		h4.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "not-alice", Expression: "request.userInfo.username != 'alice'"}}
		p := fixture{validating: []*admissionregistrationv1.ValidatingWebhookConfiguration{cfg("deny", h, h2, h3, h4)}}.plugins(t)
		if err := p.Validating().Validate(context.Background(), podAttrs()); err != nil {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a match condition's authorizer check asks RBAC about the requester", func(t *testing.T) {
		// Users who may delete pods skip the hook: alice's group may.
		authz := rbac.NewFromListers(rbaclisters.NewRoleLister(indexer()), rbaclisters.NewRoleBindingLister(indexer()),
			rbaclisters.NewClusterRoleLister(indexer(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "pod-deleter"},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"delete"}}}})),
			rbaclisters.NewClusterRoleBindingLister(indexer(&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dev-deletes"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "pod-deleter"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "dev"}}})))
		h := validatingHook("deny.example.com", deny.URL, caD, &fail, 5)
		h.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "not-admins", Expression: "!authorizer.group('').resource('pods').namespace(request.namespace).check('delete').allowed()"}}
		p := fixture{validating: []*admissionregistrationv1.ValidatingWebhookConfiguration{cfg("deny", h)}, authz: authz}.plugins(t)
		if err := p.Validating().Validate(context.Background(), podAttrs()); err != nil {
			t.Fatalf("alice, who may delete pods, was sent to the hook: %v", err)
		}
		bob := podAttrs()
		bob.User = &auth.User{Name: "bob"}
		if err := p.Validating().Validate(context.Background(), bob); err == nil || err.Error() != `admission webhook "deny.example.com" denied the request: images must come from registry.example.com` {
			t.Fatalf("bob: err = %v", err)
		}
	})
	t.Run("a dry run is refused by a hook with side effects", func(t *testing.T) {
		h := validatingHook("allow.example.com", allow.URL, caA, &fail, 5)
		some := admissionregistrationv1.SideEffectClassSome
		h.SideEffects = &some
		p := fixture{validating: []*admissionregistrationv1.ValidatingWebhookConfiguration{cfg("allow", h)}}.plugins(t)
		a := podAttrs()
		a.DryRun = true
		err := p.Validating().Validate(context.Background(), a)
		if !apierrors.IsBadRequest(err) || err.Error() != `admission webhook "allow.example.com" does not support dry run` {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a hook answering for another request is a call failure", func(t *testing.T) {
		liar, ca := hookServer(t, []string{"127.0.0.1"}, func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{UID: "other", Allowed: true}
		})
		p := fixture{validating: []*admissionregistrationv1.ValidatingWebhookConfiguration{cfg("liar", validatingHook("liar.example.com", liar.URL, ca, &fail, 5))}}.plugins(t)
		a := podAttrs()
		err := p.Validating().Validate(context.Background(), a)
		want := `Internal error occurred: failed calling webhook "liar.example.com": received invalid webhook response: expected response.uid="` + string(a.UID) + `", got "other"`
		if err == nil || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("admission configuration objects never go through hooks", func(t *testing.T) {
		p := fixture{validating: []*admissionregistrationv1.ValidatingWebhookConfiguration{cfg("deny", validatingHook("deny.example.com", deny.URL, caD, &fail, 5))}}.plugins(t)
		a := &admission.Attributes{Operation: admission.Create, Resource: admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"), Name: "x",
			Object: &admissionregistrationv1.ValidatingWebhookConfiguration{}}
		if err := p.Validating().Validate(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	})
}

func mutatingHook(name, url string, ca []byte, reinvoke admissionregistrationv1.ReinvocationPolicyType) admissionregistrationv1.MutatingWebhook {
	timeout := int32(5)
	return admissionregistrationv1.MutatingWebhook{
		Name: name, ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca},
		Rules: podsRW, FailurePolicy: &fail, SideEffects: &none, TimeoutSeconds: &timeout,
		AdmissionReviewVersions: []string{"v1"}, ReinvocationPolicy: &reinvoke,
	}
}

// labelPatcher answers with a JSON patch setting a label unless the object
// has it already, counting its calls.
func labelPatcher(key, value string, calls *atomic.Int32) func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		calls.Add(1)
		var pod corev1.Pod
		_ = json.Unmarshal(req.Object.Raw, &pod)
		if pod.Labels[key] == value {
			return &admissionv1.AdmissionResponse{Allowed: true}
		}
		pt := admissionv1.PatchTypeJSONPatch
		patch := `[{"op":"add","path":"/metadata/labels/` + key + `","value":"` + value + `"}]`
		return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &pt, Patch: []byte(patch)}
	}
}

func TestMutatingWebhooks(t *testing.T) {
	cfg := func(name string, hooks ...admissionregistrationv1.MutatingWebhook) *admissionregistrationv1.MutatingWebhookConfiguration {
		return &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, Webhooks: hooks}
	}
	t.Run("a JSON patch is applied to the object, then its defaults", func(t *testing.T) {
		var calls atomic.Int32
		srv, ca := hookServer(t, []string{"127.0.0.1"}, labelPatcher("team", "blue", &calls))
		defaulted := 0
		p := fixture{
			mutating: []*admissionregistrationv1.MutatingWebhookConfiguration{cfg("team", mutatingHook("team.example.com", srv.URL, ca, admissionregistrationv1.NeverReinvocationPolicy))},
			defaults: func(runtime.Object) { defaulted++ },
		}.plugins(t)
		a := podAttrs()
		pod := a.Object.(*corev1.Pod)
		if err := p.Mutating().Admit(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		if pod.Labels["team"] != "blue" || pod.Labels["app"] != "web" || pod.Spec.Containers[0].Image != "nginx" {
			t.Errorf("object after the patch: %+v", pod.ObjectMeta)
		}
		if defaulted != 1 {
			t.Errorf("defaults applied %d times", defaulted)
		}
	})
	t.Run("an IfNeeded hook is called again when a later hook changed the object", func(t *testing.T) {
		var first, second atomic.Int32
		a1, ca1 := hookServer(t, []string{"127.0.0.1"}, labelPatcher("a", "1", &first))
		a2, ca2 := hookServer(t, []string{"127.0.0.1"}, labelPatcher("b", "2", &second))
		p := fixture{mutating: []*admissionregistrationv1.MutatingWebhookConfiguration{
			cfg("1-first", mutatingHook("first.example.com", a1.URL, ca1, admissionregistrationv1.IfNeededReinvocationPolicy)),
			cfg("2-second", mutatingHook("second.example.com", a2.URL, ca2, admissionregistrationv1.IfNeededReinvocationPolicy)),
		}}.plugins(t)
		a := podAttrs()
		if err := p.Mutating().Admit(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		pod := a.Object.(*corev1.Pod)
		if pod.Labels["a"] != "1" || pod.Labels["b"] != "2" {
			t.Errorf("labels = %v", pod.Labels)
		}
		if first.Load() != 2 || second.Load() != 1 {
			t.Errorf("calls: first %d (want 2), second %d (want 1)", first.Load(), second.Load())
		}
	})
	t.Run("a Never hook is called once", func(t *testing.T) {
		var first, second atomic.Int32
		a1, ca1 := hookServer(t, []string{"127.0.0.1"}, labelPatcher("a", "1", &first))
		a2, ca2 := hookServer(t, []string{"127.0.0.1"}, labelPatcher("b", "2", &second))
		p := fixture{mutating: []*admissionregistrationv1.MutatingWebhookConfiguration{
			cfg("1-first", mutatingHook("first.example.com", a1.URL, ca1, admissionregistrationv1.NeverReinvocationPolicy)),
			cfg("2-second", mutatingHook("second.example.com", a2.URL, ca2, admissionregistrationv1.NeverReinvocationPolicy)),
		}}.plugins(t)
		if err := p.Mutating().Admit(context.Background(), podAttrs()); err != nil {
			t.Fatal(err)
		}
		if first.Load() != 1 || second.Load() != 1 {
			t.Errorf("calls: %d %d", first.Load(), second.Load())
		}
	})
	t.Run("a hook given by service reference is called at a ready endpoint, verified as <svc>.<ns>.svc", func(t *testing.T) {
		var calls atomic.Int32
		srv, ca := hookServer(t, []string{"hook.demo.svc"}, labelPatcher("via", "service", &calls))
		host, portStr, _ := net.SplitHostPort(srv.Listener.Addr().String())
		port, _ := strconv.Atoi(portStr)
		p32, name, ready := int32(port), "https", true
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hook", Namespace: "demo"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}
		slice := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: "hook-x", Namespace: "demo", Labels: map[string]string{discoveryv1.LabelServiceName: "hook"}},
			Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{host}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
			Ports:      []discoveryv1.EndpointPort{{Name: &name, Port: &p32}},
		}
		h := mutatingHook("svc.example.com", "", ca, admissionregistrationv1.NeverReinvocationPolicy)
		path := "/mutate"
		h.ClientConfig = admissionregistrationv1.WebhookClientConfig{CABundle: ca, Service: &admissionregistrationv1.ServiceReference{Namespace: "demo", Name: "hook", Path: &path}}
		p := fixture{mutating: []*admissionregistrationv1.MutatingWebhookConfiguration{cfg("svc", h)}, services: []runtime.Object{svc, slice}}.plugins(t)
		a := podAttrs()
		if err := p.Mutating().Admit(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		if a.Object.(*corev1.Pod).Labels["via"] != "service" {
			t.Errorf("labels = %v", a.Object.(*corev1.Pod).Labels)
		}
	})
	t.Run("a service without endpoints fails the call", func(t *testing.T) {
		h := mutatingHook("svc.example.com", "", nil, admissionregistrationv1.NeverReinvocationPolicy)
		h.ClientConfig = admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "demo", Name: "hook"}}
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hook", Namespace: "demo"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443}}}}
		p := fixture{mutating: []*admissionregistrationv1.MutatingWebhookConfiguration{cfg("svc", h)}, services: []runtime.Object{svc}}.plugins(t)
		err := p.Mutating().Admit(context.Background(), podAttrs())
		want := `Internal error occurred: failed calling webhook "svc.example.com": failed to call webhook: Post "https://hook.demo.svc:443?timeout=5s": no endpoints available for service "hook"`
		if err == nil || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("a validating-style denial from a mutating hook stops the request", func(t *testing.T) {
		srv, ca := hookServer(t, []string{"127.0.0.1"}, func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{Allowed: false}
		})
		p := fixture{mutating: []*admissionregistrationv1.MutatingWebhookConfiguration{cfg("no", mutatingHook("no.example.com", srv.URL, ca, admissionregistrationv1.NeverReinvocationPolicy))}}.plugins(t)
		err := p.Mutating().Admit(context.Background(), podAttrs())
		if err == nil || err.Error() != `admission webhook "no.example.com" denied the request without explanation` || !apierrors.IsBadRequest(err) {
			t.Fatalf("err = %v", err)
		}
	})
}
