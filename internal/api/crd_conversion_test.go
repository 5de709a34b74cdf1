package api_test

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

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"minik/internal/pki"
	"minik/internal/testserver"
)

// conversionWebhook converts sprockets between v1 (spec.size) and v2
// (spec.replicas), as a conversion webhook of an operator would; it fails
// every request while broken is set.
func conversionWebhook(t *testing.T, broken *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review apiextensionsv1.ConversionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		if broken.Load() {
			http.Error(w, "converter down", http.StatusInternalServerError)
			return
		}
		resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
		for _, raw := range review.Request.Objects {
			var u unstructured.Unstructured
			if err := json.Unmarshal(raw.Raw, &u.Object); err != nil {
				t.Errorf("webhook got %s: %v", raw.Raw, err)
				return
			}
			from, to := "size", "replicas"
			if review.Request.DesiredAPIVersion == "example.com/v1" {
				from, to = "replicas", "size"
			}
			if v, ok, _ := unstructured.NestedFieldCopy(u.Object, "spec", from); ok {
				unstructured.RemoveNestedField(u.Object, "spec", from)
				_ = unstructured.SetNestedField(u.Object, v, "spec", to)
			}
			u.SetAPIVersion(review.Request.DesiredAPIVersion)
			b, _ := json.Marshal(u.Object)
			resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: b})
		}
		review.Response, review.Request = resp, nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	})
}

func TestCustomResourceConversionWebhook(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"crd"}})
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(srv.RESTConfig)

	// The webhook: HTTPS on loopback with its own CA, behind a Service
	// without a selector whose EndpointSlice names it, as an operator's
	// webhook Service in front of its pod.
	ca, err := pki.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ca.LoadOrCreateServing(t.TempDir(), "webhook", []string{"converter.default.svc"})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := serving.TLS()
	if err != nil {
		t.Fatal(err)
	}
	var broken atomic.Bool
	hook := httptest.NewUnstartedServer(conversionWebhook(t, &broken))
	hook.TLS = tlsConfigFor(cert)
	hook.StartTLS()
	defer hook.Close()
	_, portStr, _ := net.SplitHostPort(hook.Listener.Addr().String())
	port := mustAtoi(t, portStr)
	if _, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "converter"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intOrString(port)}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.DiscoveryV1().EndpointSlices("default").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "converter-1", Labels: map[string]string{discoveryv1.LabelServiceName: "converter"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(port))}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	preserve := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", XPreserveUnknownFields: ptr.To(true)}},
	}}
	establish(t, srv.RESTConfig, &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "sprockets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "sprockets", Singular: "sprocket", Kind: "Sprocket"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: preserve},
				{Name: "v2", Served: true, Schema: preserve},
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ConversionReviewVersions: []string{"v1"},
					ClientConfig: &apiextensionsv1.WebhookClientConfig{
						Service:  &apiextensionsv1.ServiceReference{Namespace: "default", Name: "converter", Path: ptr.To("/convert"), Port: ptr.To(int32(443))},
						CABundle: ca.CertPEM,
					},
				},
			},
		},
	})
	dyn := dynamic.NewForConfigOrDie(srv.RESTConfig)
	v1 := dyn.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "sprockets"}).Namespace("default")
	v2 := dyn.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "sprockets"}).Namespace("default")
	sprocket := func(version, name, field string, n int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "example.com/" + version, "kind": "Sprocket",
			"metadata": map[string]interface{}{"name": name, "labels": map[string]interface{}{"made": version}},
			"spec":     map[string]interface{}{field: n},
		}}
	}
	spec := func(u *unstructured.Unstructured) string {
		b, _ := json.Marshal(u.Object["spec"])
		return string(b)
	}

	if _, err := v1.Create(ctx, sprocket("v1", "a", "size", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := v2.Get(ctx, "a", metav1.GetOptions{}); err != nil || spec(got) != `{"replicas":3}` || got.GetAPIVersion() != "example.com/v2" || got.GetLabels()["made"] != "v1" {
		t.Fatalf("v1 object read as v2 = %v (err %v), want spec {\"replicas\":3}", got, err)
	}
	created, err := v2.Create(ctx, sprocket("v2", "b", "replicas", 5), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if spec(created) != `{"replicas":5}` {
		t.Errorf("create at v2 answered spec %s", spec(created))
	}
	if got, err := v1.Get(ctx, "b", metav1.GetOptions{}); err != nil || spec(got) != `{"size":5}` {
		t.Fatalf("v2 object read as v1 = %v (err %v), want spec {\"size\":5}", got, err)
	}
	// Stored at the storage version, v1.
	kv, err := srv.Etcd.Get(ctx, "/registry/example.com/sprockets/default/b", clientv3.WithPrefix())
	if err != nil || len(kv.Kvs) != 1 || !strings.Contains(string(kv.Kvs[0].Value), `"apiVersion":"example.com/v1"`) || !strings.Contains(string(kv.Kvs[0].Value), `"size":5`) {
		t.Fatalf("stored %v (err %v), want it at v1 with size 5", kv, err)
	}
	list, err := v2.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 || spec(&list.Items[0]) != `{"replicas":3}` || spec(&list.Items[1]) != `{"replicas":5}` {
		t.Fatalf("list at v2 = %v (err %v)", list, err)
	}

	broken.Store(true)
	_, err = v2.Get(ctx, "a", metav1.GetOptions{})
	if err == nil || !strings.Contains(err.Error(), "conversion webhook for example.com/v1, Kind=Sprocket failed:") {
		t.Fatalf("read through a failing webhook: %v", err)
	}
	if got, err := v1.Get(ctx, "a", metav1.GetOptions{}); err != nil || spec(got) != `{"size":3}` {
		t.Errorf("the storage version needs no webhook: %v, %v", got, err)
	}
}

func tlsConfigFor(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func intOrString(n int) intstr.IntOrString { return intstr.FromInt32(int32(n)) }
