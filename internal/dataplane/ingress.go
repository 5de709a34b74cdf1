package dataplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/retry"
)

// IngressClassName is the IngressClass minik creates at start, marked as
// the cluster's default.
const IngressClassName = "minik"

// IngressController is the spec.controller of the IngressClasses this
// proxy implements.
const IngressController = "minik.io/ingress-controller"

// annotationDefaultClass marks the default IngressClass.
const annotationDefaultClass = networkingv1.AnnotationIsDefaultIngressClass

// legacyClassAnnotation is the pre-IngressClass way to pick a class.
const legacyClassAnnotation = "kubernetes.io/ingress.class"

// ensureIngressClass creates the minik IngressClass, default, unless it
// exists (a user's edits are kept).
func (d *DataPlane) ensureIngressClass(ctx context.Context) error {
	ic := &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: IngressClassName, Annotations: map[string]string{annotationDefaultClass: "true"}},
		Spec:       networkingv1.IngressClassSpec{Controller: IngressController},
	}
	_, err := d.client.NetworkingV1().IngressClasses().Create(ctx, ic, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create ingressclass %s: %w", IngressClassName, err)
	}
	return nil
}

// ours tells whether this proxy serves an Ingress: its class is one whose
// controller is minik's, or it names none and a minik class is the default.
func (d *DataPlane) ours(ing *networkingv1.Ingress) bool {
	classes, _ := d.ingressClasses.List(labels.Everything())
	name := ""
	if ing.Spec.IngressClassName != nil {
		name = *ing.Spec.IngressClassName
	} else if v, ok := ing.Annotations[legacyClassAnnotation]; ok {
		name = v
	}
	for _, ic := range classes {
		if ic.Spec.Controller != IngressController {
			continue
		}
		if name == ic.Name || name == "" && ic.Annotations[annotationDefaultClass] == "true" {
			return true
		}
	}
	return false
}

// ingressBackend converts an Ingress backend.
func ingressBackend(ns string, b *networkingv1.IngressBackend) backendRef {
	if b.Service == nil {
		kind := "resource"
		if b.Resource != nil {
			kind = b.Resource.Kind + " " + b.Resource.Name
		}
		return backendRef{namespace: ns, unsupported: fmt.Sprintf("backend %s is not supported by minik's ingress proxy", kind)}
	}
	return backendRef{namespace: ns, service: b.Service.Name, port: b.Service.Port.Number, portName: b.Service.Port.Name}
}

// buildIngressTable builds the routes of every Ingress this proxy serves,
// and their TLS certificates.
func (d *DataPlane) buildIngressTable() (*routeTable, *certStore) {
	t := newRouteTable(false)
	certs := newCertStore(d.defaultCert)
	all, _ := d.ingresses.List(labels.Everything())
	var ings []*networkingv1.Ingress
	for _, ing := range all {
		if d.ours(ing) {
			ings = append(ings, ing)
		}
	}
	// The oldest Ingress wins conflicts, as in ingress-nginx.
	slices.SortFunc(ings, func(a, b *networkingv1.Ingress) int {
		if c := a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	for _, ing := range ings {
		source := "ingress " + ing.Namespace + "/" + ing.Name
		var def *backendRef
		if ing.Spec.DefaultBackend != nil {
			b := ingressBackend(ing.Namespace, ing.Spec.DefaultBackend)
			def = &b
			if t.defaultBackend == nil {
				t.defaultBackend = def
			}
		}
		for _, rule := range ing.Spec.Rules {
			g := t.hostGroup(rule.Host)
			if def != nil && g.defaultBackend == nil {
				g.defaultBackend = def
			}
			if rule.HTTP == nil {
				continue
			}
			for _, p := range rule.HTTP.Paths {
				pt := networkingv1.PathTypeImplementationSpecific
				if p.PathType != nil {
					pt = *p.PathType
				}
				path := p.Path
				if path == "" {
					path = "/"
				}
				g.routes = append(g.routes, &route{
					pathType: pt, path: path,
					backends: []weightedBackend{{ref: ingressBackend(ing.Namespace, &p.Backend), weight: 1}},
					source:   source, created: ing.CreationTimestamp.Time, ns: ing.Namespace, name: ing.Name,
				})
			}
		}
		for _, tl := range ing.Spec.TLS {
			if tl.SecretName == "" {
				continue
			}
			cert, err := d.secretCert(ing.Namespace, tl.SecretName)
			if err != nil {
				d.log.Warn("ingress TLS secret unusable", "ingress", ing.Namespace+"/"+ing.Name, "secret", tl.SecretName, "err", err)
				continue
			}
			certs.add(tl.Hosts, cert)
		}
	}
	t.sort(ingressOrder)
	return t, certs
}

// secretCert loads a kubernetes.io/tls Secret's certificate.
func (d *DataPlane) secretCert(ns, name string) (*tls.Certificate, error) {
	s, err := d.secrets.Secrets(ns).Get(name)
	if err != nil {
		return nil, fmt.Errorf("get secret %s/%s: %w", ns, name, err)
	}
	cert, err := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", ns, name, err)
	}
	return &cert, nil
}

// loadBalancerStatus is what this proxy reports on its Ingresses.
func (d *DataPlane) loadBalancerStatus() networkingv1.IngressLoadBalancerStatus {
	return networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: d.advertiseIP}}}
}

// syncIngressStatus sets status.loadBalancer of an Ingress this proxy
// serves.
func (d *DataPlane) syncIngressStatus(ctx context.Context, ns, name string) error {
	ing, err := d.ingresses.Ingresses(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !d.ours(ing) {
		return nil
	}
	want := d.loadBalancerStatus()
	if equality.Semantic.DeepEqual(ing.Status.LoadBalancer, want) {
		return nil
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := d.client.NetworkingV1().Ingresses(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		cur.Status.LoadBalancer = want
		_, err = d.client.NetworkingV1().Ingresses(ns).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("update ingress %s/%s status: %w", ns, name, err)
		}
		return nil
	})
}
