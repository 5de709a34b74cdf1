package api

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/proxy"
	translator "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/streaming/pkg/httpstream/wsstream"

	"minik/internal/auth"
)

// The connect subresources of pods — exec, attach and portforward — are
// proxied to the node agent's endpoint as kube-apiserver proxies them to
// the kubelet (pkg/registry/core/pod/rest/subresources.go): the pod is
// read, the container checked, and the request upgraded through
// apimachinery's UpgradeAwareHandler to
// http://<node>/{exec,attach}/<ns>/<pod>/<container> or /portForward/
// <ns>/<pod>. kubectl's WebSocket protocols are translated as
// kube-apiserver translates them for a kubelet that speaks SPDY only:
// remote command v5.channel.k8s.io by k8s.io/apiserver's
// StreamTranslatorHandler, port-forward v2.portforward.k8s.io by its
// TunnelingHandler.

// connectSubresources are the pod subresources served by serveConnect.
var connectSubresources = map[string]bool{"exec": true, "attach": true, "portforward": true}

// nodeTransport reaches node agents for streams and proxies.
var nodeTransport = logClient.Transport

// serveConnect serves pods/exec, pods/attach and pods/portforward.
func (h *resourceHandler) serveConnect(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	gr := schema.GroupResource{Resource: "pods/" + info.Subresource}
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		writeError(w, r, apierrors.NewMethodNotSupported(gr, r.Method))
		return
	}
	ctx := r.Context()
	// kube 1.37 (AuthorizePodWebsocketUpgradeCreatePermission): a GET,
	// as WebSocket clients send, must also be allowed to create.
	if info.Verb != "create" {
		a := auth.Attributes{
			User: auth.UserFrom(ctx), Verb: "create", IsResource: true,
			APIGroup: info.APIGroup, APIVersion: info.APIVersion, Namespace: info.Namespace,
			Resource: info.Resource, Subresource: info.Subresource, Name: info.Name, Path: info.Path,
		}
		d, reason, err := h.s.authorizer().Authorize(ctx, a)
		if d != auth.Allow {
			if err != nil {
				writeError(w, r, apierrors.NewInternalError(fmt.Errorf("authorize create %s: %w", info.Path, err)))
				return
			}
			// kube answers NewForbidden(pods, name, reason), and RBAC's
			// reason is empty: the authorization filter's wording says
			// what is missing.
			writeError(w, r, forbidden(a, reason))
			return
		}
	}
	obj, err := h.get(ctx, info.Namespace, info.Name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	pod := obj.(*corev1.Pod)
	q := r.URL.Query()
	params := url.Values{}
	var path string
	switch info.Subresource {
	case "exec", "attach":
		container, err := podContainer(pod, q.Get("container"))
		if err != nil {
			writeError(w, r, err)
			return
		}
		// The kubelet's names of the stream parameters (api.ExecStdinParam…).
		for _, p := range [][2]string{{"stdin", "input"}, {"stdout", "output"}, {"stderr", "error"}, {"tty", "tty"}} {
			if v := q.Get(p[0]); v != "" {
				b, err := strconv.ParseBool(v)
				if err != nil {
					writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("%s: invalid value %q: %v", p[0], v, err)))
					return
				}
				if b {
					params.Set(p[1], "1")
				}
			}
		}
		if info.Subresource == "exec" {
			params["command"] = q["command"]
		}
		path = fmt.Sprintf("/%s/%s/%s/%s", info.Subresource, pod.Namespace, pod.Name, container)
	case "portforward":
		var ports []string
		for _, v := range q["ports"] {
			for _, p := range strings.Split(v, ",") {
				n, err := strconv.ParseUint(p, 10, 16)
				if err != nil || n == 0 {
					writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("ports: invalid port %q", p)))
					return
				}
				ports = append(ports, p)
			}
		}
		if len(ports) > 0 {
			params.Set("port", strings.Join(ports, ","))
		}
		path = fmt.Sprintf("/portForward/%s/%s", pod.Namespace, pod.Name)
	}
	loc, err := h.s.podNodeURL(ctx, pod)
	if err != nil {
		writeError(w, r, err)
		return
	}
	loc.Path, loc.RawQuery = path, params.Encode()
	var handler http.Handler = proxy.NewUpgradeAwareHandler(loc, nodeTransport, false, true, errorResponder{})
	if info.Subresource == "portforward" {
		handler = translator.NewTranslatingHandler(handler, translator.NewTunnelingHandler(handler), wsstream.IsWebSocketRequestWithTunnelingProtocol)
	} else {
		opts := translator.Options{
			Stdin: params.Get("input") == "1", Stdout: params.Get("output") == "1",
			Stderr: params.Get("error") == "1", Tty: params.Get("tty") == "1",
		}
		handler = translator.NewTranslatingHandler(handler, translator.NewStreamTranslatorHandler(loc, nodeTransport, 0, opts), wsstream.IsWebSocketRequestWithStreamCloseProtocol)
	}
	handler.ServeHTTP(hijackable{w}, r)
}

// podContainer is the container a stream is for: the one named, or the
// pod's only container, with kube-apiserver's errors (validateContainer).
func podContainer(pod *corev1.Pod, name string) (string, error) {
	if name == "" {
		switch len(pod.Spec.Containers) {
		case 1:
			return pod.Spec.Containers[0].Name, nil
		case 0:
			return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s", pod.Name))
		}
		return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %s", pod.Name, podContainerNames(pod)))
	}
	// The same membership test as pods/log: init, regular and ephemeral
	// containers.
	return logContainer(pod, name)
}

// errorResponder answers a proxy's errors as Status objects.
type errorResponder struct{}

func (errorResponder) Error(w http.ResponseWriter, r *http.Request, err error) {
	if _, ok := err.(apierrors.APIStatus); !ok {
		err = apierrors.NewServiceUnavailable(err.Error())
	}
	writeError(w, r, err)
}

// hijackable lets the upgrade handlers take the connection through the
// chain's response writers (audit, panic recovery), which unwrap to it.
type hijackable struct{ http.ResponseWriter }

func (h hijackable) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(h.ResponseWriter).Hijack()
}

func (h hijackable) Flush() { _ = http.NewResponseController(h.ResponseWriter).Flush() }

// Unwrap gives http.ResponseController the writer beneath.
func (h hijackable) Unwrap() http.ResponseWriter { return h.ResponseWriter }
