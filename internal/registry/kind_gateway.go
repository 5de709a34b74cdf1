package registry

import (
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"minik/internal/tables"
)

// This file holds the Gateway API kinds (gateway.networking.k8s.io/v1):
// GatewayClass, Gateway, HTTPRoute and ReferenceGrant. A cluster serves
// them from the project's CRDs; minik serves them as built-in kinds with
// the CRDs' behaviour: metadata.generation kept, status reset on create
// (then the CRDs' default status: a controller has not answered yet), the
// CRDs' OpenAPI defaults, and the part of their schema and CEL validation
// that a user meets first.

// pendingConditions is the CRDs' default status: each condition Unknown,
// reason Pending, "Waiting for controller", at the epoch.
func pendingConditions(types ...string) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(types))
	for _, t := range types {
		out = append(out, metav1.Condition{
			Type: t, Status: metav1.ConditionUnknown, Reason: "Pending", Message: "Waiting for controller",
			LastTransitionTime: metav1.Unix(0, 0).Rfc3339Copy(),
		})
	}
	return out
}

var controllerNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$`)

var gatewayClasses = &Resource{
	GroupVersion: gatewayV1, Name: "gatewayclasses", SingularName: "gatewayclass", Kind: "GatewayClass",
	ShortNames: []string{"gc"}, Categories: []string{"gateway-api"}, HasStatus: true,
	Strategy: Strategy{
		PrepareForCreate: creator(func(gc *gatewayv1.GatewayClass) {
			gc.Status = gatewayv1.GatewayClassStatus{Conditions: pendingConditions(string(gatewayv1.GatewayClassConditionStatusAccepted))}
		}),
		Validate: validator(validateGatewayClass),
		ValidateUpdate: updateValidator(func(gc, old *gatewayv1.GatewayClass) field.ErrorList {
			errs := validateObjectMetaUpdate(&gc.ObjectMeta, &old.ObjectMeta)
			if gc.Spec.ControllerName != old.Spec.ControllerName {
				errs = append(errs, field.Invalid(specPath.Child("controllerName"), gc.Spec.ControllerName, "Value is immutable"))
			}
			return append(errs, validateGatewayClass(gc)...)
		}),
		Table: tables.GatewayClass.Convertor(nil),
	},
}

func validateGatewayClass(gc *gatewayv1.GatewayClass) field.ErrorList {
	errs := validateObjectMeta(&gc.ObjectMeta, false, nameIsDNSSubdomain)
	p := specPath.Child("controllerName")
	switch c := string(gc.Spec.ControllerName); {
	case c == "":
		errs = append(errs, field.Required(p, ""))
	case len(c) > 253:
		errs = append(errs, field.TooLong(p, c, 253))
	case !controllerNameRE.MatchString(c):
		errs = append(errs, field.Invalid(p, c, "should match '"+controllerNameRE.String()+"'"))
	}
	return errs
}

var gateways = &Resource{
	GroupVersion: gatewayV1, Name: "gateways", SingularName: "gateway", Kind: "Gateway",
	Namespaced: true, ShortNames: []string{"gtw"}, Categories: []string{"gateway-api"}, HasStatus: true,
	Strategy: Strategy{
		Default: defaulter(defaultGateway),
		PrepareForCreate: creator(func(g *gatewayv1.Gateway) {
			g.Status = gatewayv1.GatewayStatus{Conditions: pendingConditions(string(gatewayv1.GatewayConditionAccepted), string(gatewayv1.GatewayConditionProgrammed))}
		}),
		Validate: validator(validateGateway),
		ValidateUpdate: updateValidator(func(g, old *gatewayv1.Gateway) field.ErrorList {
			return append(validateObjectMetaUpdate(&g.ObjectMeta, &old.ObjectMeta), validateGateway(g)...)
		}),
		Table: tables.Gateway.Convertor(nil),
	},
}

func defaultGateway(g *gatewayv1.Gateway) {
	for i := range g.Spec.Listeners {
		l := &g.Spec.Listeners[i]
		if l.AllowedRoutes == nil {
			l.AllowedRoutes = &gatewayv1.AllowedRoutes{}
		}
		if l.AllowedRoutes.Namespaces == nil {
			l.AllowedRoutes.Namespaces = &gatewayv1.RouteNamespaces{}
		}
		if l.AllowedRoutes.Namespaces.From == nil {
			l.AllowedRoutes.Namespaces.From = new(gatewayv1.NamespacesFromSame)
		}
		if l.TLS != nil && l.TLS.Mode == nil {
			l.TLS.Mode = new(gatewayv1.TLSModeTerminate)
		}
	}
}

var supportedProtocolRE = regexp.MustCompile(`^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9]+$`)

func validateGateway(g *gatewayv1.Gateway) field.ErrorList {
	errs := validateObjectMeta(&g.ObjectMeta, true, nameIsDNSSubdomain)
	if g.Spec.GatewayClassName == "" {
		errs = append(errs, field.Required(specPath.Child("gatewayClassName"), ""))
	}
	lp := specPath.Child("listeners")
	switch n := len(g.Spec.Listeners); {
	case n == 0:
		errs = append(errs, field.Required(lp, ""))
	case n > 64:
		errs = append(errs, field.TooMany(lp, n, 64))
	}
	names := sets.New[gatewayv1.SectionName]()
	for i, l := range g.Spec.Listeners {
		p := lp.Index(i)
		errs = append(errs, validateDNS1123Subdomain(string(l.Name), p.Child("name"))...)
		if names.Has(l.Name) {
			errs = append(errs, field.Invalid(lp, "array", "Listener name must be unique within the Gateway"))
		}
		names.Insert(l.Name)
		for _, msg := range validation.IsValidPortNum(int(l.Port)) {
			errs = append(errs, field.Invalid(p.Child("port"), l.Port, msg))
		}
		if !supportedProtocolRE.MatchString(string(l.Protocol)) {
			errs = append(errs, field.Invalid(p.Child("protocol"), l.Protocol, "should match '"+supportedProtocolRE.String()+"'"))
		}
		if l.Hostname != nil {
			errs = append(errs, validateGatewayHostname(string(*l.Hostname), p.Child("hostname"))...)
		}
		switch l.Protocol {
		case gatewayv1.HTTPProtocolType, gatewayv1.TCPProtocolType, gatewayv1.UDPProtocolType:
			if l.TLS != nil {
				errs = append(errs, field.Invalid(lp, "array", "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']"))
			}
		case gatewayv1.HTTPSProtocolType, gatewayv1.TLSProtocolType:
			if l.TLS == nil {
				errs = append(errs, field.Invalid(lp, "array", "tls mode must be set for protocol HTTPS"))
			}
		}
		if l.TLS != nil && l.TLS.Mode != nil && *l.TLS.Mode == gatewayv1.TLSModeTerminate && len(l.TLS.CertificateRefs) == 0 && len(l.TLS.Options) == 0 {
			errs = append(errs, field.Invalid(p.Child("tls"), "object", "certificateRefs or options must be specified when mode is Terminate"))
		}
	}
	return errs
}

// validateGatewayHostname checks a Gateway API hostname: a DNS subdomain,
// possibly with a leading "*." wildcard label, never an IP.
func validateGatewayHostname(h string, p *field.Path) field.ErrorList {
	msgs := validation.IsDNS1123Subdomain(h)
	if strings.HasPrefix(h, "*.") {
		msgs = validation.IsWildcardDNS1123Subdomain(h)
	}
	var errs field.ErrorList
	for _, m := range msgs {
		errs = append(errs, field.Invalid(p, h, m))
	}
	return errs
}

var httpRoutes = &Resource{
	GroupVersion: gatewayV1, Name: "httproutes", SingularName: "httproute", Kind: "HTTPRoute",
	Namespaced: true, Categories: []string{"gateway-api"}, HasStatus: true,
	Strategy: Strategy{
		Default:  defaulter(defaultHTTPRoute),
		Validate: validator(validateHTTPRoute),
		ValidateUpdate: updateValidator(func(r, old *gatewayv1.HTTPRoute) field.ErrorList {
			return append(validateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta), validateHTTPRoute(r)...)
		}),
		Table: tables.HTTPRoute.Convertor(nil),
	},
}

// defaultHTTPRoute applies the CRD's defaults: parent refs are Gateways,
// a rule without matches matches every path, a path match without type is
// a PathPrefix on "/", header and query matches are Exact, and a backend
// is a Service of weight 1.
func defaultHTTPRoute(r *gatewayv1.HTTPRoute) {
	for i := range r.Spec.ParentRefs {
		ref := &r.Spec.ParentRefs[i]
		if ref.Group == nil {
			ref.Group = new(gatewayv1.Group(gatewayv1.GroupName))
		}
		if ref.Kind == nil {
			ref.Kind = new(gatewayv1.Kind("Gateway"))
		}
	}
	if len(r.Spec.Rules) == 0 {
		r.Spec.Rules = []gatewayv1.HTTPRouteRule{{}}
	}
	for i := range r.Spec.Rules {
		rule := &r.Spec.Rules[i]
		if len(rule.Matches) == 0 {
			rule.Matches = []gatewayv1.HTTPRouteMatch{{}}
		}
		for j := range rule.Matches {
			m := &rule.Matches[j]
			if m.Path == nil {
				m.Path = &gatewayv1.HTTPPathMatch{}
			}
			if m.Path.Type == nil {
				m.Path.Type = new(gatewayv1.PathMatchPathPrefix)
			}
			if m.Path.Value == nil {
				m.Path.Value = new("/")
			}
			for k := range m.Headers {
				if m.Headers[k].Type == nil {
					m.Headers[k].Type = new(gatewayv1.HeaderMatchExact)
				}
			}
			for k := range m.QueryParams {
				if m.QueryParams[k].Type == nil {
					m.QueryParams[k].Type = new(gatewayv1.QueryParamMatchExact)
				}
			}
		}
		for j := range rule.BackendRefs {
			b := &rule.BackendRefs[j]
			if b.Group == nil {
				b.Group = new(gatewayv1.Group(""))
			}
			if b.Kind == nil {
				b.Kind = new(gatewayv1.Kind("Service"))
			}
			if b.Weight == nil {
				b.Weight = new(int32(1))
			}
		}
	}
}

func validateHTTPRoute(r *gatewayv1.HTTPRoute) field.ErrorList {
	errs := validateObjectMeta(&r.ObjectMeta, true, nameIsDNSSubdomain)
	if n := len(r.Spec.ParentRefs); n > 32 {
		errs = append(errs, field.TooMany(specPath.Child("parentRefs"), n, 32))
	}
	for i, ref := range r.Spec.ParentRefs {
		if ref.Name == "" {
			errs = append(errs, field.Required(specPath.Child("parentRefs").Index(i).Child("name"), ""))
		}
	}
	if n := len(r.Spec.Hostnames); n > 16 {
		errs = append(errs, field.TooMany(specPath.Child("hostnames"), n, 16))
	}
	for i, h := range r.Spec.Hostnames {
		errs = append(errs, validateGatewayHostname(string(h), specPath.Child("hostnames").Index(i))...)
	}
	rp := specPath.Child("rules")
	if n := len(r.Spec.Rules); n > 16 {
		errs = append(errs, field.TooMany(rp, n, 16))
	}
	for i, rule := range r.Spec.Rules {
		for j, m := range rule.Matches {
			mp := rp.Index(i).Child("matches").Index(j)
			if m.Path != nil && m.Path.Type != nil && m.Path.Value != nil {
				errs = append(errs, validateHTTPPathMatch(*m.Path.Type, *m.Path.Value, mp.Child("path"))...)
			}
			for k, h := range m.Headers {
				if h.Type != nil && *h.Type == gatewayv1.HeaderMatchRegularExpression {
					if _, err := regexp.Compile(h.Value); err != nil {
						errs = append(errs, field.Invalid(mp.Child("headers").Index(k).Child("value"), h.Value, err.Error()))
					}
				}
			}
		}
		for j, b := range rule.BackendRefs {
			bp := rp.Index(i).Child("backendRefs").Index(j)
			if b.Weight != nil && (*b.Weight < 0 || *b.Weight > 1000000) {
				errs = append(errs, field.Invalid(bp.Child("weight"), *b.Weight, "should be between 0 and 1000000"))
			}
			if (b.Group == nil || *b.Group == "") && (b.Kind == nil || *b.Kind == "Service") && b.Port == nil {
				errs = append(errs, field.Invalid(bp, "object", "Must have port for Service reference"))
			}
		}
	}
	return errs
}

// validateHTTPPathMatch is the HTTPPathMatch CEL rules.
func validateHTTPPathMatch(t gatewayv1.PathMatchType, v string, p *field.Path) field.ErrorList {
	const forTypes = " when type one of ['Exact', 'PathPrefix']"
	switch t {
	case gatewayv1.PathMatchExact, gatewayv1.PathMatchPathPrefix:
	case gatewayv1.PathMatchRegularExpression:
		if _, err := regexp.Compile(v); err != nil {
			return field.ErrorList{field.Invalid(p.Child("value"), v, err.Error())}
		}
		return nil
	default:
		return field.ErrorList{field.Invalid(p, "object", "type must be one of ['Exact', 'PathPrefix', 'RegularExpression']")}
	}
	var errs field.ErrorList
	if !strings.HasPrefix(v, "/") {
		errs = append(errs, field.Invalid(p, "object", "value must be an absolute path and start with '/'"+forTypes))
	}
	for _, bad := range []string{"//", "/./", "/../", "%2f", "%2F", "#"} {
		if strings.Contains(v, bad) {
			errs = append(errs, field.Invalid(p, "object", "must not contain '"+bad+"'"+forTypes))
		}
	}
	for _, bad := range []string{"/..", "/."} {
		if strings.HasSuffix(v, bad) {
			errs = append(errs, field.Invalid(p, "object", "must not end with '"+bad+"'"+forTypes))
		}
	}
	return errs
}

var referenceGrants = &Resource{
	GroupVersion: gatewayV1, Name: "referencegrants", SingularName: "referencegrant", Kind: "ReferenceGrant",
	Namespaced: true, ShortNames: []string{"refgrant"}, Categories: []string{"gateway-api"},
	Strategy: Strategy{
		Validate: validator(validateReferenceGrant),
		ValidateUpdate: updateValidator(func(g, old *gatewayv1.ReferenceGrant) field.ErrorList {
			return append(validateObjectMetaUpdate(&g.ObjectMeta, &old.ObjectMeta), validateReferenceGrant(g)...)
		}),
		Table: tables.ReferenceGrant.Convertor(nil),
	},
}

func validateReferenceGrant(g *gatewayv1.ReferenceGrant) field.ErrorList {
	errs := validateObjectMeta(&g.ObjectMeta, true, nameIsDNSSubdomain)
	if len(g.Spec.From) == 0 {
		errs = append(errs, field.Required(specPath.Child("from"), ""))
	}
	if len(g.Spec.To) == 0 {
		errs = append(errs, field.Required(specPath.Child("to"), ""))
	}
	return errs
}
