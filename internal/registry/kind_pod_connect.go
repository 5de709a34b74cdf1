package registry

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// The connect subresources of pods, services and nodes, as
// kube-apiserver's (pkg/registry/core/pod/rest/subresources.go, log.go,
// and the ProxyREST of pods, services and nodes): each reads its object
// and tells the API layer where the request goes —
//   - exec and attach: http://<node agent>/{exec,attach}/<ns>/<pod>/<container>,
//     with the kubelet's names of the stream parameters;
//   - portforward: http://<node agent>/portForward/<ns>/<pod>;
//   - log: http://<node agent>/containerLogs/<ns>/<pod>/<container>;
//   - pods/proxy: the pod's IP, on the port named or else the first declared;
//   - services/proxy: a ready endpoint of the Service's port (by name or
//     number), kube's 503 without;
//   - nodes/proxy: the node agent's endpoint, or another port of the node.

var (
	podsResource     = schema.GroupResource{Resource: "pods"}
	servicesResource = schema.GroupResource{Resource: "services"}
	nodesResource    = schema.GroupResource{Resource: "nodes"}

	endpointSlicesResource = schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}
)

// logParams are the pods/log parameters the node agent reads.
var logParams = []string{"follow", "tailLines", "sinceSeconds", "sinceTime", "timestamps", "previous", "limitBytes"}

// getPod reads a pod through the server's store.
func getPod(ctx context.Context, env Env, ns, name string) (*corev1.Pod, error) {
	obj, err := env.Store(podsResource).Get(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("pod %s/%s is stored as a %T", ns, name, obj))
	}
	return pod, nil
}

// connectRemoteCommand serves pods/exec or pods/attach (sub).
func connectRemoteCommand(sub string) ConnectFunc {
	return func(ctx context.Context, env Env, req ConnectRequest) (*Location, error) {
		pod, err := getPod(ctx, env, req.Namespace, req.Name)
		if err != nil {
			return nil, err
		}
		container, err := podContainer(pod, req.Query.Get("container"))
		if err != nil {
			return nil, err
		}
		loc := &Location{Mode: ProxyStream}
		params := url.Values{}
		// The kubelet's names of the stream parameters (api.ExecStdinParam…).
		for _, p := range []struct {
			name, param string
			set         *bool
		}{{"stdin", "input", &loc.Stdin}, {"stdout", "output", &loc.Stdout}, {"stderr", "error", &loc.Stderr}, {"tty", "tty", &loc.TTY}} {
			v := req.Query.Get(p.name)
			if v == "" {
				continue
			}
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("%s: invalid value %q: %v", p.name, v, err))
			}
			if b {
				params.Set(p.param, "1")
				*p.set = true
			}
		}
		if sub == "exec" {
			params["command"] = req.Query["command"]
		}
		if loc.URL, err = podNodeURL(ctx, env, pod); err != nil {
			return nil, err
		}
		loc.URL.Path = fmt.Sprintf("/%s/%s/%s/%s", sub, pod.Namespace, pod.Name, container)
		loc.URL.RawQuery = params.Encode()
		return loc, nil
	}
}

// connectPortForward serves pods/portforward.
func connectPortForward(ctx context.Context, env Env, req ConnectRequest) (*Location, error) {
	pod, err := getPod(ctx, env, req.Namespace, req.Name)
	if err != nil {
		return nil, err
	}
	var ports []string
	for _, v := range req.Query["ports"] {
		for _, p := range strings.Split(v, ",") {
			n, err := strconv.ParseUint(p, 10, 16)
			if err != nil || n == 0 {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("ports: invalid port %q", p))
			}
			ports = append(ports, p)
		}
	}
	params := url.Values{}
	if len(ports) > 0 {
		params.Set("port", strings.Join(ports, ","))
	}
	u, err := podNodeURL(ctx, env, pod)
	if err != nil {
		return nil, err
	}
	u.Path, u.RawQuery = fmt.Sprintf("/portForward/%s/%s", pod.Namespace, pod.Name), params.Encode()
	return &Location{URL: u, Mode: ProxyTunnel}, nil
}

// connectLog serves pods/log.
func connectLog(ctx context.Context, env Env, req ConnectRequest) (*Location, error) {
	pod, err := getPod(ctx, env, req.Namespace, req.Name)
	if err != nil {
		return nil, err
	}
	q := req.Query
	container, err := logContainer(pod, q.Get("container"))
	if err != nil {
		return nil, err
	}
	for _, p := range []string{"tailLines", "sinceSeconds", "limitBytes"} {
		if v := q.Get(p); v != "" {
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("%s: Invalid value: %q: must be greater than or equal to 0", p, v))
			}
		}
	}
	if q.Get("sinceSeconds") != "" && q.Get("sinceTime") != "" {
		return nil, apierrors.NewBadRequest("at most one of `sinceTime` or `sinceSeconds` may be specified")
	}
	u, err := podNodeURL(ctx, env, pod)
	if err != nil {
		return nil, err
	}
	u.Path = fmt.Sprintf("/containerLogs/%s/%s/%s", pod.Namespace, pod.Name, container)
	fwd := url.Values{}
	for _, p := range logParams {
		if v := q.Get(p); v != "" {
			fwd.Set(p, v)
		}
	}
	u.RawQuery = fwd.Encode()
	return &Location{URL: u, Mode: ProxyGet, ContentType: "text/plain"}, nil
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
	for _, n := range podContainerNames(pod) {
		if n == name {
			return name, nil
		}
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, pod.Name))
}

// podNodeURL is the base URL of the agent of the node a pod is bound to,
// with kube's error for a pod that is not.
func podNodeURL(ctx context.Context, env Env, pod *corev1.Pod) (*url.URL, error) {
	if pod.Spec.NodeName == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
	}
	return kubeletURL(ctx, env, pod.Spec.NodeName)
}

// kubeletURL is the base URL of a node's agent.
func kubeletURL(ctx context.Context, env Env, nodeName string) (*url.URL, error) {
	obj, err := env.Store(nodesResource).Get(ctx, "", nodeName)
	if err != nil {
		return nil, err
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("node %s is stored as a %T", nodeName, obj))
	}
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

// proxyTarget splits a proxy request's name ("https:web:8443") with
// kube's error for one that does not split.
func proxyTarget(kind, name string) (scheme, host, port string, err error) {
	scheme, host, port, ok := utilnet.SplitSchemeNamePort(name)
	if !ok {
		return "", "", "", apierrors.NewBadRequest(fmt.Sprintf("invalid %s request %q", kind, name))
	}
	return scheme, host, port, nil
}

// connectPodProxy serves pods/proxy: the pod's IP (a global unicast
// address, as kube requires) and port.
func connectPodProxy(ctx context.Context, env Env, req ConnectRequest) (*Location, error) {
	scheme, name, port, err := proxyTarget("pod", req.Name)
	if err != nil {
		return nil, err
	}
	pod, err := getPod(ctx, env, req.Namespace, name)
	if err != nil {
		return nil, err
	}
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
	return &Location{URL: loc, Mode: ProxyPath}, nil
}

// connectServiceProxy serves services/proxy: a ready endpoint of the
// port, as the API server's webhooks reach a Service.
func connectServiceProxy(ctx context.Context, env Env, req ConnectRequest) (*Location, error) {
	scheme, name, port, err := proxyTarget("service", req.Name)
	if err != nil {
		return nil, err
	}
	obj, err := env.Store(servicesResource).Get(ctx, req.Namespace, name)
	if err != nil {
		return nil, err
	}
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("service %s/%s is stored as a %T", req.Namespace, name, obj))
	}
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
	u, err := ServiceEndpoint(ctx, env, req.Namespace, name, sp.Port)
	if err != nil {
		return nil, err
	}
	if scheme == "" {
		scheme = "http"
	}
	u.Scheme = scheme
	return &Location{URL: u, Mode: ProxyPath}, nil
}

// connectNodeProxy serves nodes/proxy: the node agent's endpoint, or the
// port named on the node's address.
func connectNodeProxy(ctx context.Context, env Env, req ConnectRequest) (*Location, error) {
	scheme, name, port, err := proxyTarget("node", req.Name)
	if err != nil {
		return nil, err
	}
	loc, err := kubeletURL(ctx, env, name)
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
	return &Location{URL: loc, Mode: ProxyPath}, nil
}
