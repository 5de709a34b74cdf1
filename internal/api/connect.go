package api

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/proxy"
	translator "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/streaming/pkg/httpstream/wsstream"

	"minik/internal/auth"
	"minik/internal/registry"
)

// The connect subresources (exec, attach, portforward, log and the
// proxies) are carried to where their descriptor's Connect says, as
// kube-apiserver carries them to the kubelet or the backend:
//   - ProxyStream and ProxyTunnel upgrade the request through
//     apimachinery's UpgradeAwareHandler; kubectl's WebSocket protocols
//     are translated as kube-apiserver translates them for a kubelet that
//     speaks SPDY only: remote command v5.channel.k8s.io by
//     k8s.io/apiserver's StreamTranslatorHandler, port-forward
//     v2.portforward.k8s.io by its TunnelingHandler;
//   - ProxyPath proxies the path below .../proxy, query and all, links in
//     HTML answers rewritten to stay behind the proxy;
//   - ProxyGet reads the target once and copies the answer as it comes.

// serveSubresourceConnect serves a connect subresource.
func (h *resourceHandler) serveSubresourceConnect(w http.ResponseWriter, r *http.Request, info *RequestInfo, sr *registry.Subresource) {
	ctx := r.Context()
	if sr.UpgradeNeedsCreate && info.Verb != "create" {
		// kube 1.37 (AuthorizePodWebsocketUpgradeCreatePermission): a GET,
		// as WebSocket clients send, must also be allowed to create.
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
	loc, err := sr.Connect(ctx, serverEnv{h.s}, registry.ConnectRequest{Namespace: info.Namespace, Name: info.Name, Query: r.URL.Query()})
	if err != nil {
		writeError(w, r, err)
		return
	}
	var handler http.Handler
	switch loc.Mode {
	case registry.ProxyStream:
		up := proxy.NewUpgradeAwareHandler(loc.URL, nodeTransport, false, true, errorResponder{})
		opts := translator.Options{Stdin: loc.Stdin, Stdout: loc.Stdout, Stderr: loc.Stderr, Tty: loc.TTY}
		handler = translator.NewTranslatingHandler(up, translator.NewStreamTranslatorHandler(loc.URL, nodeTransport, 0, opts), wsstream.IsWebSocketRequestWithStreamCloseProtocol)
	case registry.ProxyTunnel:
		up := proxy.NewUpgradeAwareHandler(loc.URL, nodeTransport, false, true, errorResponder{})
		handler = translator.NewTranslatingHandler(up, translator.NewTunnelingHandler(up), wsstream.IsWebSocketRequestWithTunnelingProtocol)
	case registry.ProxyPath:
		// The path after .../proxy, trailing slash and all.
		marker := "/" + info.Resource + "/" + info.Name + "/" + info.Subresource
		if i := strings.Index(r.URL.Path, marker); i >= 0 {
			loc.URL.Path = r.URL.Path[i+len(marker):]
		}
		handler = proxy.NewUpgradeAwareHandler(loc.URL, proxyTransport, true, false, errorResponder{})
	case registry.ProxyGet:
		h.serveRemoteGet(w, r, loc)
		return
	default:
		writeError(w, r, apierrors.NewInternalError(fmt.Errorf("%s/%s: unknown proxy mode %d", info.Resource, info.Subresource, loc.Mode)))
		return
	}
	handler.ServeHTTP(hijackable{w}, r)
}

// serveRemoteGet reads a location once and copies its answer, flushing as
// it comes (a followed log may not end). Errors of the node agent, Status
// objects, are passed on.
func (h *resourceHandler) serveRemoteGet(w http.ResponseWriter, r *http.Request, loc *registry.Location) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, loc.URL.String(), nil)
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	resp, err := logClient.Do(req)
	if err != nil {
		writeError(w, r, apierrors.NewServiceUnavailable(fmt.Sprintf("Get %q: %v", loc.URL.String(), err)))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		return
	}
	w.Header().Set("Content-Type", loc.ContentType)
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
