package api

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/proxy"
)

// The proxy subresources, as kube-apiserver's ProxyREST for pods,
// services and nodes: {pods,services,nodes}/[scheme:]name[:port]/proxy/
// <path> is proxied, query and all, through apimachinery's
// UpgradeAwareHandler (links in HTML answers rewritten to stay behind the
// proxy) to
//   - pods: the pod's IP, on the port named or else the first declared;
//   - services: a ready endpoint of the Service's port (by name or
//     number), kube's 503 "no endpoints available for service" without;
//   - nodes: the node agent's endpoint, or another port of the node.

// proxyTransport carries the proxy subresources. As kube-apiserver's
// proxy transport, it does not verify the certificates of https:
// backends (pods serve self-signed ones).
var proxyTransport = &http.Transport{
	DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // kube-apiserver's proxy transport does the same
	TLSHandshakeTimeout: 10 * time.Second,
	IdleConnTimeout:     90 * time.Second,
	MaxIdleConnsPerHost: 25,
}

// serveProxy serves pods/proxy, services/proxy and nodes/proxy.
func (h *resourceHandler) serveProxy(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	scheme, name, port, ok := utilnet.SplitSchemeNamePort(info.Name)
	if !ok {
		writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("invalid %s request %q", strings.TrimSuffix(info.Resource, "s"), info.Name)))
		return
	}
	var loc *url.URL
	var err error
	switch info.Resource {
	case "pods":
		loc, err = h.podLocation(r, info.Namespace, name, scheme, port)
	case "services":
		loc, err = h.serviceLocation(r, info.Namespace, name, scheme, port)
	case "nodes":
		loc, err = h.nodeLocation(r, name, scheme, port)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	// The path after .../proxy, trailing slash and all.
	marker := "/" + info.Resource + "/" + info.Name + "/proxy"
	if i := strings.Index(r.URL.Path, marker); i >= 0 {
		loc.Path = r.URL.Path[i+len(marker):]
	}
	handler := proxy.NewUpgradeAwareHandler(loc, proxyTransport, true, false, errorResponder{})
	handler.ServeHTTP(hijackable{w}, r)
}

// podLocation is where pods/proxy goes: the pod's IP (a global unicast
// address, as kube requires) and port.
func (h *resourceHandler) podLocation(r *http.Request, ns, name, scheme, port string) (*url.URL, error) {
	obj, err := h.get(r.Context(), ns, name)
	if err != nil {
		return nil, err
	}
	pod := obj.(*corev1.Pod)
	if port == "" {
		for _, c := range pod.Spec.Containers {
			if len(c.Ports) > 0 {
				port = strconv.Itoa(int(c.Ports[0].ContainerPort))
				break
			}
		}
	}
	ip := net.ParseIP(pod.Status.PodIP)
	if ip == nil || !(ip.IsGlobalUnicast() || ip.IsLoopback()) {
		// kube allows global unicast only; minik's pods live on loopback.
		return nil, apierrors.NewBadRequest("address not allowed")
	}
	loc := &url.URL{Scheme: scheme, Host: pod.Status.PodIP}
	if port != "" {
		loc.Host = net.JoinHostPort(pod.Status.PodIP, port)
	}
	return loc, nil
}

// serviceLocation is where services/proxy goes: a ready endpoint of the
// port, as the API server's webhooks reach a Service (serviceResolver).
func (h *resourceHandler) serviceLocation(r *http.Request, ns, name, scheme, port string) (*url.URL, error) {
	obj, err := h.get(r.Context(), ns, name)
	if err != nil {
		return nil, err
	}
	svc := obj.(*corev1.Service)
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if port == "" || port == p.Name || port == strconv.Itoa(int(p.Port)) {
			sp = p
			break
		}
	}
	if sp == nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %q found for service %q", port, svc.Name))
	}
	u, err := serviceResolver{h.s}.ResolveEndpoint(ns, name, sp.Port)
	if err != nil {
		return nil, err
	}
	if scheme == "" {
		scheme = "http"
	}
	u.Scheme = scheme
	return u, nil
}

// nodeLocation is where nodes/proxy goes: the node agent's endpoint, or
// the port named on the node's address.
func (h *resourceHandler) nodeLocation(r *http.Request, name, scheme, port string) (*url.URL, error) {
	loc, err := h.s.kubeletURL(r.Context(), name)
	if err != nil {
		return nil, err
	}
	if port != "" {
		host, _, _ := net.SplitHostPort(loc.Host)
		loc.Host = net.JoinHostPort(host, port)
	}
	if scheme != "" {
		loc.Scheme = scheme
	}
	return loc, nil
}
