package aggregator_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/cert"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"minik/internal/aggregator"
	"minik/internal/auth"
	"minik/internal/pki"
	"minik/internal/testserver"
)

// waitFor polls cond until it holds or a minute passes.
func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	var last error
	for {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after a minute (last error: %v)", what, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLocalAPIServices checks that every group version the server serves
// has its local APIService with kube's priorities and labels, Available,
// and that a CustomResourceDefinition's versions get theirs while it
// exists.
func TestLocalAPIServices(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	ac := aggregatorclient.NewForConfigOrDie(srv.RESTConfig).ApiregistrationV1().APIServices()
	dc := discovery.NewDiscoveryClientForConfigOrDie(srv.RESTConfig)

	groups, err := dc.ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	list, err := ac.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]apiregistrationv1.APIService{}
	for _, as := range list.Items {
		byName[as.Name] = as
	}
	want := []string{"v1."}
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			if g.Name != "apiregistration.k8s.io" {
				want = append(want, v.Version+"."+g.Name)
			}
		}
	}
	for _, name := range want {
		as, ok := byName[name]
		if !ok {
			t.Errorf("no APIService %s", name)
			continue
		}
		if as.Spec.Service != nil {
			t.Errorf("%s names a service", name)
		}
		if c := as.Status.Conditions; len(c) != 1 || c[0].Status != apiregistrationv1.ConditionTrue || c[0].Reason != "Local" || c[0].Message != "Local APIServices are always available" {
			t.Errorf("%s conditions = %+v, want Available True (Local)", name, c)
		}
	}
	body, err := srv.Client(t).Discovery().RESTClient().Get().AbsPath("/readyz/autoregister-completion").DoRaw(ctx)
	if err != nil || string(body) != "ok" {
		t.Errorf("/readyz/autoregister-completion = %q, %v; want ok", body, err)
	}
	if _, ok := byName["v1.apiregistration.k8s.io"]; ok {
		t.Error("v1.apiregistration.k8s.io exists; kube's aggregator serves its group without one")
	}
	for name, w := range map[string]struct {
		group, version int32
		label          string
	}{
		"v1.":                          {18000, 1, "onstart"},
		"v1.apps":                      {17800, 15, "onstart"},
		"v1.authentication.k8s.io":     {17700, 15, "onstart"},
		"v1.authorization.k8s.io":      {17600, 15, "onstart"},
		"v1.events.k8s.io":             {17750, 15, "onstart"},
		"v1.rbac.authorization.k8s.io": {17000, 15, "onstart"},
		"v1.apiextensions.k8s.io":      {16700, 15, "onstart"},
		"v1.storage.k8s.io":            {16800, 15, "onstart"},
		"v1beta1.metrics.k8s.io":       {100, 100, "true"},
	} {
		as := byName[name]
		if as.Spec.GroupPriorityMinimum != w.group || as.Spec.VersionPriority != w.version || as.Labels[aggregator.AutoManagedLabel] != w.label {
			t.Errorf("%s: priorities %d/%d label %q, want %d/%d %q", name, as.Spec.GroupPriorityMinimum, as.Spec.VersionPriority, as.Labels[aggregator.AutoManagedLabel], w.group, w.version, w.label)
		}
	}

	t.Run("a CustomResourceDefinition's served versions have APIServices while it exists", func(t *testing.T) {
		xc := apiextensionsclient.NewForConfigOrDie(srv.RESTConfig).ApiextensionsV1().CustomResourceDefinitions()
		schemaObj := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "gizmos.stuff.example.com"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "stuff.example.com", Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Singular: "gizmo", Kind: "Gizmo", ListKind: "GizmoList"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
					{Name: "v1", Served: true, Storage: true, Schema: schemaObj},
					{Name: "v1beta1", Served: false, Schema: schemaObj},
				},
			},
		}
		if _, err := xc.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "APIService v1.stuff.example.com", func() (bool, error) {
			as, err := ac.Get(ctx, "v1.stuff.example.com", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return as.Spec.GroupPriorityMinimum == 1000 && as.Spec.VersionPriority == 100 && as.Labels[aggregator.AutoManagedLabel] == "true" && as.Spec.Service == nil, nil
		})
		if _, err := ac.Get(ctx, "v1beta1.stuff.example.com", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("APIService of the unserved v1beta1: %v, want NotFound", err)
		}
		if err := xc.Delete(ctx, crd.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// Without the crd controller the definition stays, terminating,
		// under its cleanup finalizer: remove it as the controller would.
		waitFor(t, "the definition's removal", func() (bool, error) {
			cur, err := xc.Get(ctx, crd.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			} else if err != nil {
				return false, err
			}
			cur.Finalizers = nil
			_, err = xc.Update(ctx, cur, metav1.UpdateOptions{})
			return false, err
		})
		waitFor(t, "APIService v1.stuff.example.com deleted", func() (bool, error) {
			_, err := ac.Get(ctx, "v1.stuff.example.com", metav1.GetOptions{})
			return apierrors.IsNotFound(err), err
		})
	})
}

// extension is a small extension API server: it serves the discovery of
// wardle.example.com/v1alpha1 and a flunders list (and watch) that echoes
// who the front proxy said the user is, to clients presenting a
// certificate of the front-proxy CA with an allowed name, as k8s.io/
// apiserver's request-header authenticator requires.
type extension struct {
	addr   string
	caPEM  []byte
	seenCh chan http.Header
}

func startExtension(t *testing.T, cs kubernetes.Interface, gv schema.GroupVersion, serverName string) *extension {
	t.Helper()
	ctx := context.Background()
	cm, err := cs.CoreV1().ConfigMaps(auth.AuthenticationConfigMapNamespace).Get(ctx, auth.AuthenticationConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	frontProxyCAs, err := cert.ParseCertsPEM([]byte(cm.Data[auth.RequestHeaderClientCAKey]))
	if err != nil {
		t.Fatalf("%s: %v", auth.RequestHeaderClientCAKey, err)
	}
	var allowed []string
	if err := json.Unmarshal([]byte(cm.Data[auth.RequestHeaderAllowedNamesKey]), &allowed); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	for _, c := range frontProxyCAs {
		pool.AddCert(c)
	}
	dir := t.TempDir()
	ca, err := pki.LoadOrCreateNamedCA(dir, "wardle-ca", "wardle-ca")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.LoadOrCreateServing(dir, "wardle", []string{serverName})
	if err != nil {
		t.Fatal(err)
	}
	serving, err := kp.TLS()
	if err != nil {
		t.Fatal(err)
	}
	ext := &extension{caPEM: ca.CertPEM, seenCh: make(chan http.Header, 100)}
	mux := http.NewServeMux()
	mux.HandleFunc("/openapi/v3/apis/"+gv.String(), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"openapi":"3.0.0","info":{"title":"%s","version":"v0"},"paths":{}}`, gv)
	})
	mux.HandleFunc("/apis/"+gv.String(), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: gv.String(),
			APIResources: []metav1.APIResource{
				{Name: "flunders", SingularName: "flunder", Namespaced: true, Kind: "Flunder", Verbs: metav1.Verbs{"get", "list", "watch"}},
				{Name: "flunders/status", Namespaced: true, Kind: "Flunder", Verbs: metav1.Verbs{"get"}},
			},
		})
	})
	echo := func(r *http.Request) map[string]any {
		return map[string]any{
			"apiVersion": gv.String(), "kind": "Flunder",
			"metadata": map[string]any{"name": "echo", "namespace": "wardle", "annotations": map[string]any{
				"user": r.Header.Get("X-Remote-User"), "groups": strings.Join(r.Header.Values("X-Remote-Group"), ","),
				"authorization": r.Header.Get("Authorization"), "extra": r.Header.Get("X-Remote-Extra-Scopes"),
			}},
		}
	}
	mux.HandleFunc("/apis/"+gv.String()+"/namespaces/wardle/flunders/echo/exec", func(w http.ResponseWriter, r *http.Request) {
		// An upgrade: the connection echoes what it reads.
		if r.Header.Get("Upgrade") != "minik-echo" {
			http.Error(w, "upgrade required", http.StatusBadRequest)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: minik-echo\r\n\r\n")
		_ = rw.Flush()
		line, err := rw.ReadString('\n')
		if err == nil {
			_, _ = rw.WriteString(line)
			_ = rw.Flush()
		}
	})
	mux.HandleFunc("/apis/"+gv.String()+"/namespaces/wardle/flunders", func(w http.ResponseWriter, r *http.Request) {
		ext.seenCh <- r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			enc := json.NewEncoder(w)
			_ = enc.Encode(map[string]any{"type": "ADDED", "object": echo(r)})
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"apiVersion": gv.String(), "kind": "FlunderList", "metadata": map[string]any{"resourceVersion": "1"},
			"items": []any{echo(r)},
		})
	})
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The request-header authenticator: a verified client
			// certificate with an allowed common name, or no identity.
			if len(r.TLS.VerifiedChains) == 0 || !slices.Contains(allowed, r.TLS.PeerCertificates[0].Subject.CommonName) {
				http.Error(w, "front proxy certificate required", http.StatusUnauthorized)
				return
			}
			mux.ServeHTTP(w, r)
		}),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{serving}, ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pool, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ext.addr = ln.Addr().String()
	go func() { _ = hs.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = hs.Close() })
	return ext
}

// endpointSlice is Service wardle/api's slice pointing at addr.
func endpointSlice(t *testing.T, addr string) *discoveryv1.EndpointSlice {
	t.Helper()
	return endpointSliceOf(t, "wardle", "api", addr)
}

// endpointSliceOf is Service namespace/name's slice pointing at addr.
func endpointSliceOf(t *testing.T, namespace, name, addr string) *discoveryv1.EndpointSlice {
	t.Helper()
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(portStr)
	ready := true
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name + "-1", Namespace: namespace, Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{host}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptrTo("https"), Port: ptrTo(int32(p))}},
	}
}

func ptrTo[T any](v T) *T { return &v }

// available waits until the APIService's Available condition has status
// and reason, and returns it.
func available(t *testing.T, ac interface {
	Get(context.Context, string, metav1.GetOptions) (*apiregistrationv1.APIService, error)
}, name string, status apiregistrationv1.ConditionStatus, reason string) apiregistrationv1.APIServiceCondition {
	t.Helper()
	var got apiregistrationv1.APIServiceCondition
	waitFor(t, fmt.Sprintf("APIService %s Available %s (%s)", name, status, reason), func() (bool, error) {
		as, err := ac.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range as.Status.Conditions {
			if c.Type == apiregistrationv1.Available {
				got = c
				return c.Status == status && c.Reason == reason, fmt.Errorf("condition %+v", c)
			}
		}
		return false, errors.New("no Available condition")
	})
	return got
}

// TestAggregation proxies a group version to an in-test extension API
// server through a Service and its EndpointSlice.
func TestAggregation(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	cs := srv.Client(t)
	ac := aggregatorclient.NewForConfigOrDie(srv.RESTConfig).ApiregistrationV1().APIServices()
	ext := startExtension(t, cs, schema.GroupVersion{Group: "wardle.example.com", Version: "v1alpha1"}, "api.wardle.svc")

	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "wardle"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "wardle"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}},
	}
	if _, err := cs.CoreV1().Services("wardle").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.DiscoveryV1().EndpointSlices("wardle").Create(ctx, endpointSlice(t, ext.addr), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	as := &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1alpha1.wardle.example.com"},
		Spec: apiregistrationv1.APIServiceSpec{
			Group: "wardle.example.com", Version: "v1alpha1", GroupPriorityMinimum: 2000, VersionPriority: 100,
			Service: &apiregistrationv1.ServiceReference{Namespace: "wardle", Name: "api"}, CABundle: ext.caPEM,
		},
	}
	if _, err := ac.Create(ctx, as, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if c := available(t, ac, as.Name, apiregistrationv1.ConditionTrue, "Passed"); c.Message != "all checks passed" {
		t.Errorf("message = %q, want kube's %q", c.Message, "all checks passed")
	}
	gvr := schema.GroupVersionResource{Group: "wardle.example.com", Version: "v1alpha1", Resource: "flunders"}

	t.Run("the group is discovered, legacy and aggregated", func(t *testing.T) {
		dc := discovery.NewDiscoveryClientForConfigOrDie(srv.RESTConfig)
		waitFor(t, "flunders in discovery", func() (bool, error) {
			_, lists, err := dc.ServerGroupsAndResources()
			if err != nil {
				return false, err
			}
			for _, l := range lists {
				if l.GroupVersion == "wardle.example.com/v1alpha1" {
					for _, r := range l.APIResources {
						if r.Name == "flunders" && r.Namespaced {
							return true, nil
						}
					}
				}
			}
			return false, nil
		})
		groups, err := dc.ServerGroups()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, g := range groups.Groups {
			found = found || g.Name == "wardle.example.com" && g.PreferredVersion.Version == "v1alpha1"
		}
		if !found {
			t.Error("/apis does not list wardle.example.com")
		}
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/apis/wardle.example.com/v1alpha1").DoRaw(ctx)
		if err != nil || !strings.Contains(string(body), `"flunders"`) {
			t.Errorf("/apis/wardle.example.com/v1alpha1 was not proxied: %v %s", err, body)
		}
	})

	t.Run("OpenAPI v3 lists the group version and serves the extension's document", func(t *testing.T) {
		rc := cs.Discovery().RESTClient()
		body, err := rc.Get().AbsPath("/openapi/v3").DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var idx struct {
			Paths map[string]struct {
				ServerRelativeURL string `json:"serverRelativeURL"`
			} `json:"paths"`
		}
		if err := json.Unmarshal(body, &idx); err != nil {
			t.Fatal(err)
		}
		entry, ok := idx.Paths["apis/wardle.example.com/v1alpha1"]
		if !ok || idx.Paths["apis/apps/v1"].ServerRelativeURL == "" {
			t.Fatalf("the v3 index lacks the delegated or a built-in version: %s", body)
		}
		doc, err := rc.Get().AbsPath(strings.Split(entry.ServerRelativeURL, "?")[0]).DoRaw(ctx)
		if err != nil || !strings.Contains(string(doc), `"title":"wardle.example.com/v1alpha1"`) {
			t.Errorf("the extension's document was not served: %v %s", err, doc)
		}
	})

	t.Run("a request is proxied with the caller's identity and nothing else", func(t *testing.T) {
		// minikd authorizes the request before proxying it.
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "flunder-reader", Namespace: "wardle"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"wardle.example.com"}, Resources: []string{"flunders"}, Verbs: []string{"list"}}}}
		if _, err := cs.RbacV1().Roles("wardle").Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "devs-read-flunders", Namespace: "wardle"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "devs"}}}
		if _, err := cs.RbacV1().RoleBindings("wardle").Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		cfg := rest.CopyConfig(srv.RESTConfig)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice", Groups: []string{"devs"}, Extra: map[string][]string{"scopes": {"read"}}}
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripper(func(r *http.Request) (*http.Response, error) {
				r = r.Clone(r.Context())
				r.Header.Set("X-Remote-User", "mallory")
				r.Header.Add("X-Remote-Group", "system:masters")
				r.Header.Set("Authorization", "Bearer not-for-the-extension")
				return rt.RoundTrip(r)
			})
		})
		var list *unstructured.UnstructuredList
		waitFor(t, "alice's list (once RBAC holds the binding)", func() (bool, error) {
			var err error
			list, err = dynamic.NewForConfigOrDie(cfg).Resource(gvr).Namespace("wardle").List(ctx, metav1.ListOptions{})
			return err == nil, err
		})
		if len(list.Items) != 1 {
			t.Fatalf("items = %d", len(list.Items))
		}
		a := list.Items[0].GetAnnotations()
		if a["user"] != "alice" || a["groups"] != "devs,system:authenticated" || a["authorization"] != "" || a["extra"] != "read" {
			t.Errorf("the extension saw user %q groups %q extra %q authorization %q; want alice, devs,system:authenticated, read and none",
				a["user"], a["groups"], a["extra"], a["authorization"])
		}
	})

	t.Run("a watch streams through", func(t *testing.T) {
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		w, err := dynamic.NewForConfigOrDie(srv.RESTConfig).Resource(gvr).Namespace("wardle").Watch(wctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		ev, ok := <-w.ResultChan()
		if !ok {
			t.Fatal("the watch ended without an event")
		}
		if obj, ok := ev.Object.(interface{ GetName() string }); !ok || obj.GetName() != "echo" {
			t.Errorf("event %v %#v", ev.Type, ev.Object)
		}
	})

	t.Run("an upgrade request passes through", func(t *testing.T) {
		tc, err := rest.TLSConfigFor(srv.RESTConfig)
		if err != nil {
			t.Fatal(err)
		}
		tc = tc.Clone()
		tc.NextProtos = []string{"http/1.1"}
		conn, err := tls.Dial("tcp", srv.Addr, tc)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.SetDeadline(time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET /apis/wardle.example.com/v1alpha1/namespaces/wardle/flunders/echo/exec HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: minik-echo\r\n\r\n", srv.Addr)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("status %d, want 101", resp.StatusCode)
		}
		fmt.Fprint(conn, "ping\n")
		if line, err := br.ReadString('\n'); err != nil || line != "ping\n" {
			t.Errorf("echo = %q, %v", line, err)
		}
	})

	t.Run("without endpoints the APIService is unavailable and its discovery stale", func(t *testing.T) {
		if err := cs.DiscoveryV1().EndpointSlices("wardle").Delete(ctx, "api-1", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		c := available(t, ac, as.Name, apiregistrationv1.ConditionFalse, "EndpointsNotFound")
		if want := `cannot find endpointslices for service/api in "wardle"`; c.Message != want {
			t.Errorf("message = %q, want %q", c.Message, want)
		}
		_, err := dynamic.NewForConfigOrDie(srv.RESTConfig).Resource(gvr).Namespace("wardle").List(ctx, metav1.ListOptions{})
		if !apierrors.IsServiceUnavailable(err) {
			t.Errorf("list through an unavailable APIService: %v, want 503", err)
		}
		dc := discovery.NewDiscoveryClientForConfigOrDie(srv.RESTConfig)
		waitFor(t, "discovery reporting the stale group version", func() (bool, error) {
			_, _, err := dc.ServerGroupsAndResources()
			var failed *discovery.ErrGroupDiscoveryFailed
			if errors.As(err, &failed) {
				_, stale := failed.Groups[schema.GroupVersion{Group: "wardle.example.com", Version: "v1alpha1"}]
				return stale && strings.HasPrefix(err.Error(), "unable to retrieve the complete list of server APIs: wardle.example.com/v1alpha1"), err
			}
			return false, err
		})
	})

	t.Run("a missing Service is ServiceNotFound", func(t *testing.T) {
		if err := cs.CoreV1().Services("wardle").Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		c := available(t, ac, as.Name, apiregistrationv1.ConditionFalse, "ServiceNotFound")
		if want := `service/api in "wardle" is not present`; c.Message != want {
			t.Errorf("message = %q, want %q", c.Message, want)
		}
	})

	t.Run("a black-hole endpoint fails the discovery check and answers 503", func(t *testing.T) {
		hole, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer hole.Close()
		go func() {
			// Accept and never answer: the TLS handshake cannot finish.
			var held []net.Conn
			defer func() {
				for _, c := range held {
					c.Close()
				}
			}()
			for {
				c, err := hole.Accept()
				if err != nil {
					return
				}
				held = append(held, c)
			}
		}()
		if _, err := cs.CoreV1().Services("wardle").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.DiscoveryV1().EndpointSlices("wardle").Create(ctx, endpointSlice(t, hole.Addr().String()), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		c := available(t, ac, as.Name, apiregistrationv1.ConditionFalse, "FailedDiscoveryCheck")
		if !strings.HasPrefix(c.Message, "failing or missing response from https://"+hole.Addr().String()+"/apis/wardle.example.com/v1alpha1") {
			t.Errorf("message = %q", c.Message)
		}
		_, err = dynamic.NewForConfigOrDie(srv.RESTConfig).Resource(gvr).Namespace("wardle").List(ctx, metav1.ListOptions{})
		if !apierrors.IsServiceUnavailable(err) {
			t.Errorf("list through a black hole: %v, want 503", err)
		}
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestMetricsServerTakesOver checks what a user's metrics-server does to
// minik's own metrics.k8s.io: its APIService routes the group to its
// Service while it names one, and minik's local serving comes back when
// it is deleted.
func TestMetricsServerTakesOver(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	cs := srv.Client(t)
	ac := aggregatorclient.NewForConfigOrDie(srv.RESTConfig).ApiregistrationV1().APIServices()
	metrics := schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}
	ext := startExtension(t, cs, metrics, "metrics-server.kube-system.svc")
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-server", Namespace: "kube-system"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}},
	}
	if _, err := cs.CoreV1().Services("kube-system").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.DiscoveryV1().EndpointSlices("kube-system").Create(ctx, endpointSliceOf(t, "kube-system", "metrics-server", ext.addr), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	resources := func() []string {
		l, err := cs.Discovery().ServerResourcesForGroupVersion(metrics.String())
		if err != nil {
			return []string{err.Error()}
		}
		var names []string
		for _, r := range l.APIResources {
			names = append(names, r.Name)
		}
		slices.Sort(names)
		return names
	}
	if got := resources(); !slices.Equal(got, []string{"nodes", "pods"}) {
		t.Fatalf("minik's metrics.k8s.io serves %v", got)
	}
	// The chart's APIService, applied over minik's local one.
	waitFor(t, "the chart's APIService applied", func() (bool, error) {
		as, err := ac.Get(ctx, "v1beta1.metrics.k8s.io", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		as.Spec.Service = &apiregistrationv1.ServiceReference{Namespace: "kube-system", Name: "metrics-server"}
		as.Spec.CABundle = ext.caPEM
		_, err = ac.Update(ctx, as, metav1.UpdateOptions{})
		return err == nil, err
	})
	available(t, ac, "v1beta1.metrics.k8s.io", apiregistrationv1.ConditionTrue, "Passed")
	waitFor(t, "metrics.k8s.io proxied to the user's metrics-server", func() (bool, error) {
		return slices.Equal(resources(), []string{"flunders", "flunders/status"}), fmt.Errorf("resources %v", resources())
	})
	if err := ac.Delete(ctx, "v1beta1.metrics.k8s.io", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	available(t, ac, "v1beta1.metrics.k8s.io", apiregistrationv1.ConditionTrue, "Local")
	waitFor(t, "minik's metrics.k8s.io back", func() (bool, error) {
		return slices.Equal(resources(), []string{"nodes", "pods"}), fmt.Errorf("resources %v", resources())
	})
}
