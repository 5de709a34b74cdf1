package api

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Pod logs live on the node that runs the pod. As kube-apiserver proxies
// pods/log to the kubelet, minik's API server proxies it to the node
// agent's endpoint: http://<node InternalIP>:<status.daemonEndpoints.
// kubeletEndpoint.Port>/containerLogs/<namespace>/<pod>/<container>, with
// the log options as query parameters (follow, tailLines, sinceSeconds,
// sinceTime, timestamps, previous, limitBytes).

// logParams are the pods/log query parameters passed on to the node.
var logParams = []string{"follow", "tailLines", "sinceSeconds", "sinceTime", "timestamps", "previous", "limitBytes"}

// logClient reaches node agents; logs may be followed for as long as the
// client reads.
var logClient = &http.Client{Transport: &http.Transport{
	DialContext:     (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	IdleConnTimeout: 90 * time.Second,
}}

func (h *resourceHandler) serveLog(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	ctx := r.Context()
	obj, err := h.get(ctx, info.Namespace, info.Name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	pod := obj.(*corev1.Pod)
	q := r.URL.Query()
	container, err := logContainer(pod, q.Get("container"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	for _, p := range []string{"tailLines", "sinceSeconds", "limitBytes"} {
		if v := q.Get(p); v != "" {
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
				writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("%s: Invalid value: %q: must be greater than or equal to 0", p, v)))
				return
			}
		}
	}
	if q.Get("sinceSeconds") != "" && q.Get("sinceTime") != "" {
		writeError(w, r, apierrors.NewBadRequest("at most one of `sinceTime` or `sinceSeconds` may be specified"))
		return
	}
	target, err := h.s.podNodeURL(ctx, pod)
	if err != nil {
		writeError(w, r, err)
		return
	}
	target.Path = fmt.Sprintf("/containerLogs/%s/%s/%s", pod.Namespace, pod.Name, container)
	fwd := url.Values{}
	for _, p := range logParams {
		if v := q.Get(p); v != "" {
			fwd.Set(p, v)
		}
	}
	target.RawQuery = fwd.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	resp, err := logClient.Do(req)
	if err != nil {
		writeError(w, r, apierrors.NewServiceUnavailable(fmt.Sprintf("Get %q: %v", target.String(), err)))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// The node agent answers errors as Status objects; pass them on.
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	flushCopy(w, resp.Body)
}

// flushCopy copies a (possibly endless) stream, flushing as it goes.
func flushCopy(w http.ResponseWriter, r io.Reader) {
	f, _ := w.(http.Flusher)
	buf := make([]byte, 32*1024)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if f != nil {
				f.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// podContainerNames lists every container of a pod, as kube's
// VisitContainers does: init, regular, then ephemeral containers.
func podContainerNames(pod *corev1.Pod) []string {
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	return names
}

// logContainer picks the container whose log is asked for, with kube's
// errors when it cannot.
func logContainer(pod *corev1.Pod, name string) (string, error) {
	names := podContainerNames(pod)
	if name == "" {
		if len(pod.Spec.Containers) == 1 {
			return pod.Spec.Containers[0].Name, nil
		}
		var regular []string
		for _, c := range pod.Spec.Containers {
			regular = append(regular, c.Name)
		}
		msg := fmt.Sprintf("a container name must be specified for pod %s, choose one of: %v", pod.Name, regular)
		if len(pod.Spec.InitContainers) > 0 {
			var inits []string
			for _, c := range pod.Spec.InitContainers {
				inits = append(inits, c.Name)
			}
			msg += fmt.Sprintf(" or one of the init containers: %v", inits)
		}
		return "", apierrors.NewBadRequest(msg)
	}
	for _, n := range names {
		if n == name {
			return name, nil
		}
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, pod.Name))
}

// podNodeURL is the base URL of the agent of the node a pod is bound to,
// with kube's error for a pod that is not.
func (s *Server) podNodeURL(ctx context.Context, pod *corev1.Pod) (*url.URL, error) {
	if pod.Spec.NodeName == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
	}
	return s.kubeletURL(ctx, pod.Spec.NodeName)
}

// kubeletURL is the base URL of a node's agent.
func (s *Server) kubeletURL(ctx context.Context, nodeName string) (*url.URL, error) {
	h := s.handler(corev1.SchemeGroupVersion.WithResource("nodes"))
	obj, err := h.get(ctx, "", nodeName)
	if err != nil {
		return nil, err
	}
	node := obj.(*corev1.Node)
	port := node.Status.DaemonEndpoints.KubeletEndpoint.Port
	var host string
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			host = a.Address
			break
		}
	}
	if host == "" || port == 0 {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("node %q has no kubelet endpoint", nodeName))
	}
	return &url.URL{Scheme: "http", Host: net.JoinHostPort(host, strconv.Itoa(int(port)))}, nil
}
