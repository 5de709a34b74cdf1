package aggregator

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"minik/internal/registry"
)

// ensureLocalAvailable is kube's local availability controller: a local
// APIService is Available, reason Local.
func (a *Aggregator) ensureLocalAvailable(ctx context.Context, as *apiregistrationv1.APIService) error {
	return a.setAvailable(ctx, as, registry.LocalAPIServiceAvailable(metav1.Now()))
}

// check is kube's remote availability controller's check of an APIService
// with a Service: the Service exists; a ClusterIP Service has the
// APIService's port and, in its EndpointSlices, a ready endpoint with
// that port's name; and the extension answers its discovery
// (/apis/<group>/<version>) with a 2xx within the discovery timeout, to
// one of five attempts made at once. The error is the failed discovery's.
func (a *Aggregator) check(ctx context.Context, as *apiregistrationv1.APIService, r *remote) (apiregistrationv1.APIServiceCondition, error) {
	ref := as.Spec.Service
	cond := apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue, LastTransitionTime: metav1.Now()}
	fail := func(status apiregistrationv1.ConditionStatus, reason, msg string) (apiregistrationv1.APIServiceCondition, error) {
		cond.Status, cond.Reason, cond.Message = status, reason, msg
		return cond, nil
	}
	svc, err := a.services.Services(ref.Namespace).Get(ref.Name)
	if apierrors.IsNotFound(err) {
		return fail(apiregistrationv1.ConditionFalse, "ServiceNotFound", fmt.Sprintf("service/%s in %q is not present", ref.Name, ref.Namespace))
	} else if err != nil {
		return fail(apiregistrationv1.ConditionUnknown, "ServiceAccessError", fmt.Sprintf("service/%s in %q cannot be checked due to: %v", ref.Name, ref.Namespace, err))
	}
	if svc.Spec.Type == corev1.ServiceTypeClusterIP {
		portName, found := "", false
		for _, p := range svc.Spec.Ports {
			if p.Port == port(ref) {
				portName, found = p.Name, true
				break
			}
		}
		if !found {
			return fail(apiregistrationv1.ConditionFalse, "ServicePortError", fmt.Sprintf("service/%s in %q is not listening on port %d", ref.Name, ref.Namespace, port(ref)))
		}
		slices, err := a.slicesOf(ref.Namespace, ref.Name)
		if err != nil {
			return fail(apiregistrationv1.ConditionUnknown, "EndpointsAccessError", fmt.Sprintf("service/%s in %q cannot be checked due to: %v", ref.Name, ref.Namespace, err))
		}
		if len(slices) == 0 {
			return fail(apiregistrationv1.ConditionFalse, "EndpointsNotFound", fmt.Sprintf("cannot find endpointslices for service/%s in %q", ref.Name, ref.Namespace))
		}
		if !hasAvailableEndpoint(portName, slices) {
			return fail(apiregistrationv1.ConditionFalse, "MissingEndpoints", fmt.Sprintf("endpointslices for service/%s in %q have no addresses with port name %q", ref.Name, ref.Namespace, portName))
		}
	}
	if err := a.discoveryCheck(ctx, as, r); err != nil {
		cond.Status, cond.Reason, cond.Message = apiregistrationv1.ConditionFalse, "FailedDiscoveryCheck", err.Error()
		return cond, err
	}
	cond.Reason, cond.Message = "Passed", "all checks passed"
	return cond, nil
}

// discoveryCheck asks the extension for its discovery document as
// kube's controller does: five attempts at once, each to an endpoint of
// its own, as system:kube-aggregator of system:masters; the first success
// wins, else the last failure is the error.
func (a *Aggregator) discoveryCheck(ctx context.Context, as *apiregistrationv1.APIService, r *remote) error {
	const attempts = 5
	client := &http.Client{
		Transport: r.transport, Timeout: a.cfg.DiscoveryTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	results := make(chan error, attempts)
	for range attempts {
		go func() {
			host, err := a.resolve(as.Spec.Service)
			if err != nil {
				results <- err
				return
			}
			url := "https://" + host + "/apis/" + as.Spec.Group + "/" + as.Spec.Version
			if as.Name == "v1." {
				url = "https://" + host + "/api/" + as.Spec.Version
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				results <- err
				return
			}
			setIdentity(req.Header, "system:kube-aggregator", "", []string{"system:masters"}, nil)
			resp, err := client.Do(req)
			if resp != nil {
				resp.Body.Close()
				if resp.StatusCode < http.StatusOK || resp.StatusCode >= http.StatusMultipleChoices {
					err = fmt.Errorf("bad status from %v: %d", url, resp.StatusCode)
				}
			}
			if err != nil {
				r.transport.CloseIdleConnections()
				results <- fmt.Errorf("failing or missing response from %v: %w", url, err)
				return
			}
			results <- nil
		}()
	}
	var last error
	for range attempts {
		if last = <-results; last == nil {
			return nil
		}
	}
	return last
}

// slicesOf returns the EndpointSlices of Service namespace/name.
func (a *Aggregator) slicesOf(namespace, name string) ([]*discoveryv1.EndpointSlice, error) {
	return a.slices.EndpointSlices(namespace).List(labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name}))
}

// hasAvailableEndpoint tells whether a slice has a ready (or unknown)
// endpoint and the port of that name, as kube's controller checks.
func hasAvailableEndpoint(portName string, es []*discoveryv1.EndpointSlice) bool {
	return slices.ContainsFunc(es, func(s *discoveryv1.EndpointSlice) bool {
		return slices.ContainsFunc(s.Endpoints, func(e discoveryv1.Endpoint) bool { return e.Conditions.Ready == nil || *e.Conditions.Ready }) &&
			slices.ContainsFunc(s.Ports, func(p discoveryv1.EndpointPort) bool { return p.Name != nil && *p.Name == portName && p.Port != nil })
	})
}

// resolve picks the endpoint (host:port) a request to the Service goes
// to, as kube's ResolveEndpoint does with --enable-aggregator-routing:
// the Service's port of the APIService's number, then a random ready
// endpoint of a slice with that port's name, the Service's IP family's
// slices first.
func (a *Aggregator) resolve(ref *apiregistrationv1.ServiceReference) (string, error) {
	svc, err := a.services.Services(ref.Namespace).Get(ref.Name)
	if err != nil {
		return "", err
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
	default:
		return "", fmt.Errorf("unsupported service type %q", svc.Spec.Type)
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port(ref) {
			sp = &svc.Spec.Ports[i]
			break
		}
	}
	if sp == nil {
		return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", port(ref), svc.Name))
	}
	list, err := a.slicesOf(ref.Namespace, ref.Name)
	if err != nil {
		return "", err
	}
	preferred := discoveryv1.AddressType("")
	if len(svc.Spec.IPFamilies) > 0 {
		preferred = discoveryv1.AddressType(svc.Spec.IPFamilies[0])
	}
	list = slices.Clone(list)
	order := rand.Perm(len(list))
	rank := map[*discoveryv1.EndpointSlice]int{}
	for i, s := range list {
		rank[s] = order[i]
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].AddressType != list[j].AddressType {
			return list[i].AddressType == preferred
		}
		return rank[list[i]] < rank[list[j]]
	})
	for _, s := range list {
		for _, p := range s.Ports {
			if p.Name == nil || *p.Name != sp.Name || p.Port == nil || len(s.Endpoints) == 0 {
				continue
			}
			offset := rand.IntN(len(s.Endpoints))
			for i := range s.Endpoints {
				ep := &s.Endpoints[(i+offset)%len(s.Endpoints)]
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready || len(ep.Addresses) == 0 {
					continue
				}
				return net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(*p.Port))), nil
			}
		}
	}
	return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", svc.Name))
}

// errUnavailable is a discovery fetch of an unavailable APIService.
var errUnavailable = errors.New("service unavailable")

// discoveryTimeout returns ctx bounded by the discovery timeout.
func (a *Aggregator) discoveryTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, a.cfg.DiscoveryTimeout+time.Second)
}
