package registry

import (
	"fmt"
	"net"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// ingresses: Ingresses keep metadata.generation, bumped on spec
// changes; their status (load-balancer addresses) is written by the
// ingress controller.
var ingresses = &Resource{
	GroupVersion: networkingV1, Name: "ingresses", SingularName: "ingress", Kind: "Ingress",
	Namespaced: true, ShortNames: []string{"ing"}, HasStatus: true,
	Strategy: Strategy{
		Validate: validator(func(ing *networkingv1.Ingress) field.ErrorList {
			errs := validateIngress(ing)
			if v, ok := ing.Annotations[ingressClassAnnotation]; ok && ing.Spec.IngressClassName != nil {
				errs = append(errs, field.Invalid(field.NewPath("annotations").Child(ingressClassAnnotation), v, "can not be set when the class field is also set"))
			}
			return errs
		}),
		ValidateUpdate: updateValidator(func(ing, old *networkingv1.Ingress) field.ErrorList {
			errs := validateObjectMetaUpdate(&ing.ObjectMeta, &old.ObjectMeta)
			return append(errs, validateIngress(ing)...)
		}),
		Table: tables.Ingress.Convertor(nil),
	},
}

const ingressClassAnnotation = "kubernetes.io/ingress.class"

var (
	supportedPathTypes   = sets.New(string(networkingv1.PathTypeExact), string(networkingv1.PathTypePrefix), string(networkingv1.PathTypeImplementationSpecific))
	invalidPathSequences = []string{"//", "/./", "/../", "%2f", "%2F"}
	invalidPathSuffixes  = []string{"/..", "/."}
)

func validateIngress(ing *networkingv1.Ingress) field.ErrorList {
	errs := validateObjectMeta(&ing.ObjectMeta, true, nameIsDNSSubdomain)
	spec := &ing.Spec
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		errs = append(errs, field.Invalid(specPath, spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		errs = append(errs, validateIngressBackend(spec.DefaultBackend, specPath.Child("defaultBackend"))...)
	}
	if len(spec.Rules) > 0 {
		errs = append(errs, validateIngressRules(spec.Rules, specPath.Child("rules"))...)
	}
	for ti, tls := range spec.TLS {
		tp := specPath.Child("tls").Index(ti)
		for i, host := range tls.Hosts {
			errs = append(errs, validateIngressHost(host, tp.Child("hosts").Index(i))...)
		}
		if tls.SecretName != "" {
			errs = append(errs, validateName(tls.SecretName, nameIsDNSSubdomain, false, tp.Child("secretName"))...)
		}
	}
	if spec.IngressClassName != nil {
		errs = append(errs, validateName(*spec.IngressClassName, nameIsDNSSubdomain, false, specPath.Child("ingressClassName"))...)
	}
	return errs
}

// validateIngressHost checks a host name, which may be a wildcard.
func validateIngressHost(host string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	msgs := validation.IsDNS1123Subdomain(host)
	if strings.Contains(host, "*") {
		msgs = validation.IsWildcardDNS1123Subdomain(host)
	}
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(p, host, msg))
	}
	return errs
}

func validateIngressRules(rules []networkingv1.IngressRule, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range rules {
		rp := p.Index(i)
		if r.Host != "" {
			if net.ParseIP(r.Host) != nil {
				errs = append(errs, field.Invalid(rp.Child("host"), r.Host, "must be a DNS name, not an IP address"))
			}
			errs = append(errs, validateIngressHost(r.Host, rp.Child("host"))...)
		}
		if r.HTTP == nil {
			continue
		}
		hp := rp.Child("http")
		if len(r.HTTP.Paths) == 0 {
			errs = append(errs, field.Required(hp.Child("paths"), ""))
		}
		for j := range r.HTTP.Paths {
			errs = append(errs, validateHTTPIngressPath(&r.HTTP.Paths[j], hp.Child("paths").Index(j))...)
		}
	}
	return errs
}

func validateHTTPIngressPath(hp *networkingv1.HTTPIngressPath, p *field.Path) field.ErrorList {
	if hp.PathType == nil {
		return field.ErrorList{field.Required(p.Child("pathType"), "pathType must be specified")}
	}
	var errs field.ErrorList
	switch *hp.PathType {
	case networkingv1.PathTypeExact, networkingv1.PathTypePrefix:
		if !strings.HasPrefix(hp.Path, "/") {
			errs = append(errs, field.Invalid(p.Child("path"), hp.Path, "must be an absolute path"))
		}
		if hp.Path != "" {
			for _, seq := range invalidPathSequences {
				if strings.Contains(hp.Path, seq) {
					errs = append(errs, field.Invalid(p.Child("path"), hp.Path, fmt.Sprintf("must not contain '%s'", seq)))
				}
			}
			for _, suffix := range invalidPathSuffixes {
				if strings.HasSuffix(hp.Path, suffix) {
					errs = append(errs, field.Invalid(p.Child("path"), hp.Path, fmt.Sprintf("cannot end with '%s'", suffix)))
				}
			}
		}
	case networkingv1.PathTypeImplementationSpecific:
		if hp.Path != "" && !strings.HasPrefix(hp.Path, "/") {
			errs = append(errs, field.Invalid(p.Child("path"), hp.Path, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("pathType"), *hp.PathType, sets.List(supportedPathTypes)))
	}
	return append(errs, validateIngressBackend(&hp.Backend, p.Child("backend"))...)
}

func validateIngressBackend(b *networkingv1.IngressBackend, p *field.Path) field.ErrorList {
	switch {
	case b.Resource != nil && b.Service != nil:
		return field.ErrorList{field.Invalid(p, "", "cannot set both resource and service backends")}
	case b.Resource != nil:
		return validateTypedLocalObjectReference(b.Resource.APIGroup, b.Resource.Kind, b.Resource.Name, p.Child("resource"))
	case b.Service == nil:
		return field.ErrorList{field.Invalid(p, "", "resource or service backend is required")}
	}
	var errs field.ErrorList
	svc := b.Service
	if svc.Name == "" {
		errs = append(errs, field.Required(p.Child("service", "name"), ""))
	} else {
		errs = append(errs, validateName(svc.Name, nameIsDNS1035Label, false, p.Child("service", "name"))...)
	}
	hasName, hasNumber := svc.Port.Name != "", svc.Port.Number != 0
	switch {
	case hasName && hasNumber:
		errs = append(errs, field.Invalid(p, "", "cannot set both port name & port number"))
	case hasName:
		for _, msg := range validation.IsValidPortName(svc.Port.Name) {
			errs = append(errs, field.Invalid(p.Child("service", "port", "name"), svc.Port.Name, msg))
		}
	case hasNumber:
		for _, msg := range validation.IsValidPortNum(int(svc.Port.Number)) {
			errs = append(errs, field.Invalid(p.Child("service", "port", "number"), svc.Port.Number, msg))
		}
	default:
		errs = append(errs, field.Required(p, "port name or number is required"))
	}
	return errs
}

func validateTypedLocalObjectReference(apiGroup *string, kind, name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if apiGroup != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*apiGroup) {
			errs = append(errs, field.Invalid(p.Child("apiGroup"), *apiGroup, msg))
		}
	}
	if kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), "kind is required"))
	} else {
		for _, msg := range content.IsPathSegmentName(kind) {
			errs = append(errs, field.Invalid(p.Child("kind"), kind, msg))
		}
	}
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), "name is required"))
	} else {
		for _, msg := range content.IsPathSegmentName(name) {
			errs = append(errs, field.Invalid(p.Child("name"), name, msg))
		}
	}
	return errs
}

// ingressClasses: IngressClasses keep metadata.generation; their
// controller is fixed at creation.
var ingressClasses = &Resource{
	GroupVersion: networkingV1, Name: "ingressclasses", SingularName: "ingressclass", Kind: "IngressClass",
	Strategy: Strategy{
		Default:  defaulter(defaultIngressClass),
		Validate: validator(validateIngressClass),
		ValidateUpdate: updateValidator(func(ic, old *networkingv1.IngressClass) field.ErrorList {
			errs := validateObjectMetaUpdate(&ic.ObjectMeta, &old.ObjectMeta)
			errs = append(errs, validateImmutable(ic.Spec.Controller, old.Spec.Controller, specPath.Child("controller"))...)
			return append(errs, validateIngressClass(ic)...)
		}),
		Table: tables.IngressClass.Convertor(nil),
	},
}

func defaultIngressClass(ic *networkingv1.IngressClass) {
	if p := ic.Spec.Parameters; p != nil && p.Scope == nil {
		p.Scope = new(networkingv1.IngressClassParametersReferenceScopeCluster)
	}
}

const maxIngressClassControllerLen = 250

func validateIngressClass(ic *networkingv1.IngressClass) field.ErrorList {
	errs := validateObjectMeta(&ic.ObjectMeta, false, nameIsDNSSubdomain)
	cp := specPath.Child("controller")
	if len(ic.Spec.Controller) > maxIngressClassControllerLen {
		errs = append(errs, field.TooLong(cp, ic.Spec.Controller, maxIngressClassControllerLen))
	}
	errs = append(errs, validation.IsDomainPrefixedPath(cp, ic.Spec.Controller)...)
	if params := ic.Spec.Parameters; params != nil {
		pp := specPath.Child("parameters")
		errs = append(errs, validateTypedLocalObjectReference(params.APIGroup, params.Kind, params.Name, pp)...)
		scopes := sets.New(networkingv1.IngressClassParametersReferenceScopeCluster, networkingv1.IngressClassParametersReferenceScopeNamespace)
		switch {
		case params.Scope == nil:
			errs = append(errs, field.Required(pp.Child("scope"), ""))
		case !scopes.Has(*params.Scope):
			errs = append(errs, field.NotSupported(pp.Child("scope"), *params.Scope, sets.List(scopes)))
		case *params.Scope == networkingv1.IngressClassParametersReferenceScopeNamespace:
			if params.Namespace == nil {
				errs = append(errs, field.Required(pp.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
			} else {
				errs = append(errs, validateName(*params.Namespace, nameIsDNSLabel, false, pp.Child("namespace"))...)
			}
		case params.Namespace != nil:
			errs = append(errs, field.Forbidden(pp.Child("namespace"), "`parameters.scope` is set to 'Cluster'"))
		}
	}
	return errs
}
