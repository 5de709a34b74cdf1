package webhook

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
)

// clients holds one HTTP client per CA bundle, so that connections to a
// webhook are reused from one request to the next.
type clients struct {
	services  corelisters.ServiceLister
	endpoints discoverylisters.EndpointSliceLister

	mu sync.Mutex
	by map[[32]byte]*http.Client
}

// hookURL is the address a hook is called at: its url, or for a service
// reference https://<name>.<namespace>.svc:<port><path>, the host being
// resolved to one of the service's ready endpoints when dialed.
func hookURL(cc admissionregistrationv1.WebhookClientConfig, timeout time.Duration) (string, error) {
	var u *url.URL
	switch {
	case cc.URL != nil:
		parsed, err := url.Parse(*cc.URL)
		if err != nil {
			return "", fmt.Errorf("invalid webhook url %q: %w", *cc.URL, err)
		}
		u = parsed
	case cc.Service != nil:
		port := int32(443)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		path := ""
		if cc.Service.Path != nil {
			path = *cc.Service.Path
		}
		u = &url.URL{Scheme: "https", Host: net.JoinHostPort(cc.Service.Name+"."+cc.Service.Namespace+".svc", strconv.Itoa(int(port))), Path: path}
	default:
		return "", errors.New("webhook has neither url nor service")
	}
	q := u.Query()
	q.Set("timeout", timeout.String())
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// client returns the HTTP client trusting a CA bundle (the system roots
// when it is empty).
func (c *clients) client(caBundle []byte) (*http.Client, error) {
	key := sha256.Sum256(caBundle)
	c.mu.Lock()
	defer c.mu.Unlock()
	if hc, ok := c.by[key]; ok {
		return hc, nil
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, errors.New("caBundle holds no PEM certificate")
		}
		tlsCfg.RootCAs = pool
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		TLSClientConfig:     tlsCfg,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 100,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			target, err := c.resolve(addr)
			if err != nil {
				return nil, err
			}
			return dialer.DialContext(ctx, network, target)
		},
	}
	hc := &http.Client{Transport: tr}
	if c.by == nil {
		c.by = map[[32]byte]*http.Client{}
	}
	c.by[key] = hc
	return hc, nil
}

// resolve maps "<name>.<namespace>.svc:<port>" to a ready endpoint of the
// Service (or its externalName), as kube-apiserver does with
// --enable-aggregator-routing; any other address is dialed as it is.
func (c *clients) resolve(addr string) (string, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, nil
	}
	parts := strings.Split(host, ".")
	if len(parts) != 3 || parts[2] != "svc" || c.services == nil {
		return addr, nil
	}
	name, ns := parts[0], parts[1]
	port, _ := strconv.Atoi(portStr)
	svc, err := c.services.Services(ns).Get(name)
	if err != nil {
		return "", err
	}
	var slices []*discoveryv1.EndpointSlice
	if c.endpoints != nil {
		if slices, err = c.endpoints.EndpointSlices(ns).List(labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name})); err != nil {
			return "", err
		}
	}
	return ServiceAddress(svc, int32(port), slices)
}

// ServiceAddress is where a webhook of Service svc on port is dialed: its
// externalName, else one of the ready endpoints of that port in the
// Service's EndpointSlices, with kube-apiserver's errors when there is
// none. The API server's conversion webhooks use it too.
func ServiceAddress(svc *corev1.Service, port int32, slices []*discoveryv1.EndpointSlice) (string, error) {
	portStr := strconv.Itoa(int(port))
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return net.JoinHostPort(svc.Spec.ExternalName, portStr), nil
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			sp = &svc.Spec.Ports[i]
			break
		}
	}
	if sp == nil {
		return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", port, svc.Name))
	}
	var addrs []string
	for _, s := range slices {
		for _, p := range s.Ports {
			if p.Port == nil || (p.Name != nil && *p.Name != sp.Name) || (p.Name == nil && sp.Name != "") {
				continue
			}
			for _, e := range s.Endpoints {
				if e.Conditions.Ready != nil && !*e.Conditions.Ready {
					continue
				}
				for _, a := range e.Addresses {
					addrs = append(addrs, net.JoinHostPort(a, strconv.Itoa(int(*p.Port))))
				}
			}
		}
	}
	if len(addrs) == 0 {
		return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", svc.Name))
	}
	return addrs[rand.IntN(len(addrs))], nil
}
