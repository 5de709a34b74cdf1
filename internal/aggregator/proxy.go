package aggregator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"minik/internal/auth"
)

// newTransport builds the transport to an APIService's extension API
// server, as kube's BuildTransportConfig: TLS verified with the
// APIService's caBundle (the system roots without one) for the name
// <service>.<namespace>.svc, unless insecureSkipTLSVerify; minikd's
// front-proxy client certificate; kube's dial and handshake timeouts.
// h2 offers HTTP/2; upgrade requests need HTTP/1.1.
func (a *Aggregator) newTransport(as *apiregistrationv1.APIService, h2 bool) (*http.Transport, error) {
	ref := as.Spec.Service
	tc := &tls.Config{
		ServerName:         ref.Name + "." + ref.Namespace + ".svc",
		InsecureSkipVerify: as.Spec.InsecureSkipTLSVerify, //nolint:gosec // the APIService's own choice, as kube's
		Certificates:       []tls.Certificate{a.cfg.FrontProxy},
		MinVersion:         tls.VersionTLS12,
	}
	if len(as.Spec.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(as.Spec.CABundle) {
			return nil, errors.New("unable to load root certificates: unable to parse bytes as PEM block")
		}
		tc.RootCAs = pool
	}
	if !h2 {
		tc.NextProtos = []string{"http/1.1"}
	}
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: a.cfg.DialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     tc,
		TLSHandshakeTimeout: a.cfg.TLSHandshakeTimeout,
		// Beyond kube: an extension that takes a connection and never
		// answers does not hold a watch (which the request timeout does
		// not bound) for ever.
		ResponseHeaderTimeout: a.cfg.ResponseHeaderTimeout,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   25,
		ForceAttemptHTTP2:     h2,
	}, nil
}

// proxyHandler serves an APIService's group version by proxying to its
// extension API server, as kube-aggregator's proxyHandler: an unavailable
// APIService, or a Service with no endpoint to reach, is a 503 "service
// unavailable"; a request that cannot be proxied is a 503 with its error;
// both are plain text, as kube answers them.
type proxyHandler struct {
	a *Aggregator
	r *remote
}

func (h *proxyHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r := h.r
	if !r.available.Load() {
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	if r.buildErr != nil {
		http.Error(w, r.buildErr.Error(), http.StatusInternalServerError)
		return
	}
	user := auth.UserFrom(req.Context())
	if user == nil {
		http.Error(w, "missing user", http.StatusInternalServerError)
		return
	}
	host, err := h.a.resolve(r.spec.Service)
	if err != nil {
		h.a.log.Debug("cannot resolve an extension API server", "apiservice", r.name, "err", err)
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	target := &url.URL{Scheme: "https", Host: host, Path: req.URL.Path, RawQuery: req.URL.Query().Encode()}
	ctx := req.Context()
	if parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/"); len(parts) == 3 {
		// A discovery request: kept short, as kube does.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.a.cfg.DiscoveryTimeout)
		defer cancel()
	}
	transport := r.transport
	if isUpgrade(req) {
		transport = r.upgrade
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = target
			pr.Out.Host = host
			setIdentity(pr.Out.Header, user.Name, user.UID, user.Groups, user.Extra)
		},
		Transport:     transport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		},
	}
	proxy.ServeHTTP(w, req.WithContext(ctx))
}

// isUpgrade tells whether a request asks to switch protocols.
func isUpgrade(req *http.Request) bool {
	for _, v := range req.Header.Values("Connection") {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), "upgrade") {
				return true
			}
		}
	}
	return false
}

// setIdentity names the user to the extension API server in the
// front-proxy headers, as client-go's SetAuthProxyHeaders, after removing
// the caller's credentials and any such headers the caller sent.
func setIdentity(h http.Header, name, uid string, groups []string, extra map[string][]string) {
	for k := range h {
		ck := http.CanonicalHeaderKey(k)
		if ck == "Authorization" || strings.HasPrefix(ck, "Impersonate-") || strings.HasPrefix(ck, "X-Remote-") {
			delete(h, k)
		}
	}
	h.Set("X-Remote-User", name)
	if uid != "" {
		h.Set("X-Remote-Uid", uid)
	}
	for _, g := range groups {
		h.Add("X-Remote-Group", g)
	}
	for k, vs := range extra {
		for _, v := range vs {
			h.Add("X-Remote-Extra-"+headerKeyEscape(k), v)
		}
	}
}

// headerKeyEscape percent-encodes what may not appear in a header name,
// as client-go's headerKeyEscape does for extra keys.
func headerKeyEscape(key string) string {
	const legal = "!#$&'*+-.^_`|~"
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(legal, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// fetchDiscovery reads an available extension's /apis/<group>/<version>
// as system:kube-aggregator, within the discovery timeout.
func (a *Aggregator) fetchDiscovery(ctx context.Context, r *remote) ([]metav1.APIResource, error) {
	if !r.available.Load() || r.buildErr != nil {
		return nil, errUnavailable
	}
	host, err := a.resolve(r.spec.Service)
	if err != nil {
		return nil, err
	}
	ctx, cancel := a.discoveryTimeout(ctx)
	defer cancel()
	u := "https://" + host + "/apis/" + r.gv.Group + "/" + r.gv.Version
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	setIdentity(req.Header, "system:kube-aggregator", "", []string{"system:masters"}, nil)
	client := &http.Client{Transport: r.transport, Timeout: a.cfg.DiscoveryTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("discovery of %s: %w", r.gv, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDiscoveryBody))
	if err != nil {
		return nil, fmt.Errorf("discovery of %s: %w", r.gv, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("failed to download legacy discovery for %s: %s", req.URL.Path, strings.TrimSpace(string(body)))
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("discovery of %s: %w", r.gv, err)
	}
	return list.APIResources, nil
}
