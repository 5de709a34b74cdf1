package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/munnerz/goautoneg"
	"github.com/spf13/pflag"
	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// agnhost's webhook and crd-conversion-webhook: HTTPS servers (the
// certificate and key of --tls-cert-file and --tls-private-key-file, a
// mounted Secret's) answering the API server's AdmissionReview and
// ConversionReview requests with the e2e suite's rules: the paths, the
// labels and data keys that deny, the JSON patches, the CRD conversion
// between stable.example.com/v1 (hostPort) and v2 (host, port).

// reviewScheme knows the review kinds, both versions each.
var reviewScheme = func() *kruntime.Scheme {
	s := kruntime.NewScheme()
	utilruntime.Must(admissionv1.AddToScheme(s))
	utilruntime.Must(admissionv1beta1.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(apiextensionsv1beta1.AddToScheme(s))
	utilruntime.Must(corev1.AddToScheme(s))
	return s
}()

var (
	reviewJSON = kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, reviewScheme, reviewScheme, kjson.SerializerOptions{})
	reviewYAML = kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, reviewScheme, reviewScheme, kjson.SerializerOptions{Yaml: true})
)

// serveTLS serves h over HTTPS with the certificate of the flags, and
// waits; a missing certificate ends the process as klog.Fatal does.
func (a *agnhostRun) serveTLS(port int, certFile, keyFile string, h http.Handler) (int, error) {
	cfg, err := a.p.loadCert(certFile, keyFile)
	if err != nil {
		fmt.Fprintf(a.c.stderr, "F%s       1 config.go:33] %v\n", a.p.clock.Now().UTC().Format("0102 15:04:05.000000"), err)
		return 255, nil
	}
	closeHTTP, err := a.listenHTTP(port, cfg, h)
	if err != nil {
		return a.fatal(err)
	}
	defer closeHTTP()
	return a.wait(func() (int, bool, error) { return 0, false, nil })
}

// ---- webhook

// admitFunc decides on one admission request.
type admitFunc func(a *agnhostRun, r *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse

func defineWebhook(fl *pflag.FlagSet) func(a *agnhostRun) (int, error) {
	certFile := fl.String("tls-cert-file", "", "File containing the default x509 Certificate for HTTPS.")
	keyFile := fl.String("tls-private-key-file", "", "File containing the default x509 private key matching --tls-cert-file.")
	port := fl.Int("port", 443, "Secure port that the webhook listens on")
	sidecarImage := fl.String("sidecar-image", "", "Image to be used as the injected sidecar")
	return func(a *agnhostRun) (int, error) {
		mux := http.NewServeMux()
		for path, f := range map[string]admitFunc{
			"/always-allow-delay-5s":    admitAlwaysAllowDelay,
			"/always-deny":              admitAlwaysDeny,
			"/add-label":                admitAddLabel,
			"/pods":                     admitPods,
			"/pods/attach":              admitAttach,
			"/mutating-pods":            mutatePods,
			"/mutating-pods-sidecar":    mutatePodsSidecar(*sidecarImage),
			"/configmaps":               admitConfigMaps,
			"/mutating-configmaps":      mutateConfigMaps,
			"/custom-resource":          admitCustomResource,
			"/mutating-custom-resource": mutateData,
			"/crd":                      admitCRD,
		} {
			mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { a.serveAdmission(w, r, f) })
		}
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
		return a.serveTLS(*port, *certFile, *keyFile, mux)
	}
}

// serveAdmission decodes an AdmissionReview (v1 or v1beta1, whose
// request and response are the same on the wire), decides, and answers
// in the review's version.
func (a *agnhostRun) serveAdmission(w http.ResponseWriter, r *http.Request, admit admitFunc) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxInput))
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		a.klogf('E', "main.go:106", "contentType=%s, expect application/json", ct)
		return
	}
	obj, gvk, err := reviewJSON.Decode(body, nil, nil)
	if err != nil {
		msg := fmt.Sprintf("Request could not be decoded: %v", err)
		a.klogf('E', "main.go:115", "%s", msg)
		http.Error(w, msg, http.StatusBadRequest)
		return
	}
	var req *admissionv1.AdmissionRequest
	switch review := obj.(type) {
	case *admissionv1.AdmissionReview:
		req = review.Request
	case *admissionv1beta1.AdmissionReview:
		if review.Request != nil {
			req = &admissionv1.AdmissionRequest{}
			if err := recode(review.Request, req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
	default:
		msg := fmt.Sprintf("Unsupported group version kind: %v", gvk)
		a.klogf('E', "main.go:147", "%s", msg)
		http.Error(w, msg, http.StatusBadRequest)
		return
	}
	if req == nil {
		// The real server dereferences the missing request and panics.
		panic(http.ErrAbortHandler)
	}
	resp := admit(a, r, req)
	if resp == nil {
		panic(http.ErrAbortHandler)
	}
	resp.UID = req.UID
	var out any
	if gvk.Version == "v1beta1" {
		r1 := &admissionv1beta1.AdmissionResponse{}
		if err := recode(resp, r1); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		out = &admissionv1beta1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}, Response: r1}
	} else {
		out = &admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}, Response: resp}
	}
	data, err := json.Marshal(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

// recode converts between the versions of a review's request or
// response, which have the same fields.
func recode(from, to any) error {
	data, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, to)
}

// klogf logs as klog does.
func (a *agnhostRun) klogf(sev byte, where, format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fmt.Fprintf(a.c.stderr, "%c%s       1 %s] %s\n", sev, a.p.clock.Now().UTC().Format("0102 15:04:05.000000"), where, fmt.Sprintf(format, args...))
}

// deny is a response that refuses with an error's message.
func deny(err error) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: err.Error()}}
}

// jsonPatch is a response that allows and patches.
func jsonPatch(patch string) *admissionv1.AdmissionResponse {
	pt := admissionv1.PatchTypeJSONPatch
	return &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: &pt}
}

var podsGVR = metav1.GroupVersionResource{Version: "v1", Resource: "pods"}

// decodeInto decodes an object of a request.
func decodeInto(raw []byte, into kruntime.Object) error {
	_, _, err := reviewJSON.Decode(raw, nil, into)
	return err
}

func admitAlwaysAllowDelay(a *agnhostRun, r *http.Request, _ *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t := a.p.clock.NewTimer(a.p.scale(5 * time.Second))
	defer t.Stop()
	select {
	case <-t.C():
	case <-r.Context().Done():
	case <-a.c.ctx.Done():
	}
	return &admissionv1.AdmissionResponse{Allowed: true, Result: &metav1.Status{Message: "this webhook allows all requests"}}
}

func admitAlwaysDeny(*agnhostRun, *http.Request, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "this webhook denies all requests"}}
}

func admitAddLabel(_ *agnhostRun, _ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	var obj struct {
		metav1.ObjectMeta `json:"metadata,omitempty"`
	}
	if err := json.Unmarshal(req.Object.Raw, &obj); err != nil {
		return deny(err)
	}
	value, has := obj.Labels["added-label"]
	switch {
	case len(obj.Labels) == 0:
		return jsonPatch(`[{ "op": "add", "path": "/metadata/labels", "value": {"added-label": "yes"}}]`)
	case !has:
		return jsonPatch(`[{ "op": "add", "path": "/metadata/labels/added-label", "value": "yes" }]`)
	case value != "yes":
		return jsonPatch(`[{ "op": "replace", "path": "/metadata/labels/added-label", "value": "yes" }]`)
	}
	return &admissionv1.AdmissionResponse{Allowed: true}
}

func admitPods(a *agnhostRun, r *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req.Resource != podsGVR {
		return deny(fmt.Errorf("expect resource to be %s", podsGVR))
	}
	pod := &corev1.Pod{}
	if err := decodeInto(req.Object.Raw, pod); err != nil {
		return deny(err)
	}
	resp := &admissionv1.AdmissionResponse{Allowed: true}
	var msg string
	switch pod.Labels["webhook-e2e-test"] {
	case "webhook-disallow":
		resp.Allowed = false
		msg += "the pod contains unwanted label; "
	case "wait-forever":
		// The response is never sent.
		select {
		case <-r.Context().Done():
		case <-a.c.ctx.Done():
		}
		panic(http.ErrAbortHandler)
	}
	for _, c := range pod.Spec.Containers {
		if strings.Contains(c.Name, "webhook-disallow") {
			resp.Allowed = false
			msg += "the pod contains unwanted container name; "
		}
	}
	if !resp.Allowed {
		resp.Result = &metav1.Status{Message: strings.TrimSpace(msg)}
	}
	return resp
}

// podPatch patches a pod when should says so.
func podPatch(req *admissionv1.AdmissionRequest, should func(*corev1.Pod) bool, patch string) *admissionv1.AdmissionResponse {
	if req.Resource != podsGVR {
		return nil
	}
	pod := &corev1.Pod{}
	if err := decodeInto(req.Object.Raw, pod); err != nil {
		return deny(err)
	}
	if should(pod) {
		return jsonPatch(patch)
	}
	return &admissionv1.AdmissionResponse{Allowed: true}
}

func hasContainerNamed(cs []corev1.Container, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}

func mutatePods(_ *agnhostRun, _ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return podPatch(req, func(p *corev1.Pod) bool {
		return p.Name == "webhook-to-be-mutated" && !hasContainerNamed(p.Spec.InitContainers, "webhook-added-init-container")
	}, `[{"op":"add","path":"/spec/initContainers","value":[{"image":"webhook-added-image","name":"webhook-added-init-container","resources":{}}]}]`)
}

func mutatePodsSidecar(image string) admitFunc {
	return func(_ *agnhostRun, _ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		if image == "" {
			return &admissionv1.AdmissionResponse{Result: &metav1.Status{Status: "Failure", Message: "No image specified by the sidecar-image parameter", Code: 500}}
		}
		return podPatch(req, func(p *corev1.Pod) bool { return !hasContainerNamed(p.Spec.Containers, "webhook-added-sidecar") },
			fmt.Sprintf(`[{"op":"add", "path":"/spec/containers/-","value":{"image":"%v","name":"webhook-added-sidecar","resources":{}}}]`, image))
	}
}

func admitAttach(_ *agnhostRun, _ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req.Name != "to-be-attached-pod" {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	if req.Resource != podsGVR {
		return deny(fmt.Errorf("expect resource to be %s, got %s", podsGVR, req.Resource))
	}
	if req.SubResource != "attach" {
		return deny(fmt.Errorf("expect subresource to be %s, got %s", "attach", req.SubResource))
	}
	opts := &corev1.PodAttachOptions{}
	if err := decodeInto(req.Object.Raw, opts); err != nil {
		return deny(err)
	}
	if !opts.Stdin || opts.Container != "container1" {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	return &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "attaching to pod 'to-be-attached-pod' is not allowed"}}
}

// dataObject is what the data rules read of a ConfigMap or a custom
// resource: its top-level data.
type dataObject struct {
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Data              map[string]string `json:"data,omitempty"`
}

// admitData refuses objects whose data has webhook-e2e-test:
// webhook-disallow (on create and update) or webhook-nondeletable (on
// delete), with the reasons of what.
func admitData(req *admissionv1.AdmissionRequest, disallowed, nondeletable string) *admissionv1.AdmissionResponse {
	raw := req.Object.Raw
	if req.Operation == admissionv1.Delete {
		raw = req.OldObject.Raw
	}
	var obj dataObject
	if err := json.Unmarshal(raw, &obj); err != nil {
		return deny(err)
	}
	resp := &admissionv1.AdmissionResponse{Allowed: true}
	switch v := obj.Data["webhook-e2e-test"]; {
	case v == "webhook-disallow" && (req.Operation == admissionv1.Create || req.Operation == admissionv1.Update):
		resp.Allowed, resp.Result = false, &metav1.Status{Reason: metav1.StatusReason(disallowed)}
	case v == "webhook-nondeletable" && req.Operation == admissionv1.Delete:
		resp.Allowed, resp.Result = false, &metav1.Status{Reason: metav1.StatusReason(nondeletable)}
	}
	return resp
}

var configMapsGVR = metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func admitConfigMaps(_ *agnhostRun, _ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req.Resource != configMapsGVR {
		return nil
	}
	return admitData(req, "the configmap contains unwanted key and value", "the configmap cannot be deleted because it contains unwanted key and value")
}

func admitCustomResource(_ *agnhostRun, _ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return admitData(req, "the custom resource contains unwanted data", "the custom resource cannot be deleted because it contains unwanted key and value")
}

func mutateConfigMaps(a *agnhostRun, r *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req.Resource != configMapsGVR {
		return nil
	}
	return mutateData(a, r, req)
}

// mutateData adds data mutation-stage-1 to an object with mutation-start,
// and mutation-stage-2 to one with mutation-stage-1 (a ConfigMap, or a
// custom resource with top-level data).
func mutateData(_ *agnhostRun, _ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	var obj dataObject
	if err := json.Unmarshal(req.Object.Raw, &obj); err != nil {
		return deny(err)
	}
	patch := ""
	if obj.Data["mutation-start"] == "yes" {
		patch = `[{ "op": "add", "path": "/data/mutation-stage-1", "value": "yes" }]`
	}
	if obj.Data["mutation-stage-1"] == "yes" {
		patch = `[{ "op": "add", "path": "/data/mutation-stage-2", "value": "yes" }]`
	}
	if patch == "" {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	return jsonPatch(patch)
}

func admitCRD(_ *agnhostRun, _ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	v1GVR := metav1.GroupVersionResource{Group: apiextensionsv1.GroupName, Version: "v1", Resource: "customresourcedefinitions"}
	v1beta1GVR := metav1.GroupVersionResource{Group: apiextensionsv1beta1.GroupName, Version: "v1beta1", Resource: "customresourcedefinitions"}
	var labels map[string]string
	switch req.Resource {
	case v1GVR:
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := decodeInto(req.Object.Raw, crd); err != nil {
			return deny(err)
		}
		labels = crd.Labels
	case v1beta1GVR:
		crd := &apiextensionsv1beta1.CustomResourceDefinition{}
		if err := decodeInto(req.Object.Raw, crd); err != nil {
			return deny(err)
		}
		labels = crd.Labels
	default:
		return deny(fmt.Errorf("expect resource to be one of [%v, %v] but got %v", v1beta1GVR, v1GVR, req.Resource))
	}
	if labels["webhook-e2e-test"] == "webhook-disallow" {
		return &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "the crd contains unwanted label"}}
	}
	return &admissionv1.AdmissionResponse{Allowed: true}
}

// ---- crd-conversion-webhook

func defineConversionWebhook(fl *pflag.FlagSet) func(a *agnhostRun) (int, error) {
	certFile := fl.String("tls-cert-file", "", "File containing the default x509 Certificate for HTTPS.")
	keyFile := fl.String("tls-private-key-file", "", "File containing the default x509 private key matching --tls-cert-file.")
	port := fl.Int("port", 443, "Secure port that the webhook listens on")
	return func(a *agnhostRun) (int, error) {
		mux := http.NewServeMux()
		mux.HandleFunc("/crdconvert", a.serveConversion)
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
		return a.serveTLS(*port, *certFile, *keyFile, mux)
	}
}

// serveConversion answers a ConversionReview (v1 or v1beta1, JSON or
// YAML) with the example CRD's conversion.
func (a *agnhostRun) serveConversion(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxInput))
	ct := r.Header.Get("Content-Type")
	in := map[string]kruntime.Serializer{"application/json": reviewJSON, "application/yaml": reviewYAML}[ct]
	if in == nil {
		http.Error(w, fmt.Sprintf("invalid Content-Type header `%s`", ct), http.StatusBadRequest)
		return
	}
	obj, gvk, err := in.Decode(body, nil, nil)
	if err != nil {
		http.Error(w, fmt.Sprintf("failed to deserialize body (%v) with error %v", string(body), err), http.StatusBadRequest)
		return
	}
	var out kruntime.Object
	switch review := obj.(type) {
	case *apiextensionsv1.ConversionReview:
		if review.Request == nil {
			panic(http.ErrAbortHandler)
		}
		objs, status := convertObjects(review.Request.Objects, review.Request.DesiredAPIVersion)
		review.Response = &apiextensionsv1.ConversionResponse{UID: review.Request.UID, ConvertedObjects: objs, Result: status}
		review.Request = &apiextensionsv1.ConversionRequest{}
		out = review
	case *apiextensionsv1beta1.ConversionReview:
		if review.Request == nil {
			panic(http.ErrAbortHandler)
		}
		objs, status := convertObjects(review.Request.Objects, review.Request.DesiredAPIVersion)
		review.Response = &apiextensionsv1beta1.ConversionResponse{UID: review.Request.UID, ConvertedObjects: objs, Result: status}
		review.Request = &apiextensionsv1beta1.ConversionRequest{}
		out = review
	default:
		http.Error(w, fmt.Sprintf("Unsupported group version kind: %v", gvk), http.StatusBadRequest)
		return
	}
	enc := outputSerializer(r.Header.Get("Accept"))
	if enc == nil {
		http.Error(w, fmt.Sprintf("invalid accept header `%s`", r.Header.Get("Accept")), http.StatusBadRequest)
		return
	}
	var buf bytes.Buffer
	if err := enc.Encode(out, &buf); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = w.Write(buf.Bytes())
}

// outputSerializer picks the answer's encoding from Accept: JSON unless
// YAML is asked for first; nil when neither is acceptable.
func outputSerializer(accept string) kruntime.Serializer {
	if accept == "" {
		return reviewJSON
	}
	for _, c := range goautoneg.ParseAccept(accept) {
		switch {
		case c.Type == "*" && c.SubType == "*", c.Type == "application" && (c.SubType == "*" || c.SubType == "json"):
			return reviewJSON
		case c.Type == "application" && c.SubType == "yaml":
			return reviewYAML
		}
	}
	return nil
}

// convertObjects converts the example CRD's objects to a version; the
// first failure is the result.
func convertObjects(objs []kruntime.RawExtension, to string) ([]kruntime.RawExtension, metav1.Status) {
	var out []kruntime.RawExtension
	for _, raw := range objs {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw.Raw); err != nil {
			return nil, metav1.Status{Status: metav1.StatusFailure, Message: fmt.Sprintf("failed to unmarshall object (%v) with error: %v", string(raw.Raw), err)}
		}
		converted, status := convertExample(u, to)
		if status.Status != metav1.StatusSuccess {
			return nil, status
		}
		converted.SetAPIVersion(to)
		out = append(out, kruntime.RawExtension{Object: converted})
	}
	return out, metav1.Status{Status: metav1.StatusSuccess}
}

// convertExample is the e2e suite's example conversion: v1's hostPort
// "h:p" is v2's host and port.
func convertExample(obj *unstructured.Unstructured, to string) (*unstructured.Unstructured, metav1.Status) {
	fail := func(format string, args ...any) (*unstructured.Unstructured, metav1.Status) {
		return nil, metav1.Status{Status: metav1.StatusFailure, Message: fmt.Sprintf(format, args...)}
	}
	from := obj.GetAPIVersion()
	if to == from {
		return fail("conversion from a version to itself should not call the webhook: %s", to)
	}
	c := obj.DeepCopy()
	switch from {
	case "stable.example.com/v1":
		if to != "stable.example.com/v2" {
			return fail("unexpected conversion version %q", to)
		}
		if hp, ok := c.Object["hostPort"]; ok {
			delete(c.Object, "hostPort")
			s, _ := hp.(string)
			parts := strings.Split(s, ":")
			if len(parts) != 2 {
				return fail("invalid hostPort value `%v`", hp)
			}
			c.Object["host"], c.Object["port"] = parts[0], parts[1]
		}
	case "stable.example.com/v2":
		if to != "stable.example.com/v1" {
			return fail("unexpected conversion version %q", to)
		}
		host, hasHost := c.Object["host"]
		port, hasPort := c.Object["port"]
		if hasHost || hasPort {
			if !hasHost {
				host = ""
			}
			if !hasPort {
				port = ""
			}
			c.Object["hostPort"] = fmt.Sprintf("%s:%s", host, port)
			delete(c.Object, "host")
			delete(c.Object, "port")
		}
	default:
		return fail("unexpected conversion version %q", from)
	}
	return c, metav1.Status{Status: metav1.StatusSuccess}
}
