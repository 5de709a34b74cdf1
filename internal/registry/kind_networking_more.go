package registry

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"minik/internal/tables"
)

// This file holds networking.k8s.io/v1 beyond Ingresses: NetworkPolicies
// (served and validated; nothing enforces them yet), and the IPAddresses
// and ServiceCIDRs of Service IP allocation. internal/serviceips writes
// the IPAddress of every Service cluster IP at /registry/ipaddresses/<ip>,
// the key the ipAddresses literal serves, so the API lists the Services'
// addresses; it marks them managed by ipallocator.k8s.io and releases
// only those, so an address a user creates reserves it, as in kube.

// ---- NetworkPolicy ----

// networkPolicies: generation starts at 1 and is bumped on any spec
// change, as kube's strategy does.
var networkPolicies = &Resource{
	GroupVersion: networkingV1, Name: "networkpolicies", SingularName: "networkpolicy", Kind: "NetworkPolicy",
	Namespaced: true, ShortNames: []string{"netpol"},
	Strategy: Strategy{
		Default: defaulter(defaultNetworkPolicy),
		Validate: validator(func(np *networkingv1.NetworkPolicy) field.ErrorList {
			errs := validateObjectMeta(&np.ObjectMeta, true, nameIsDNSSubdomain)
			return append(errs, validateNetworkPolicySpec(&np.Spec, netpolOptions{}, specPath)...)
		}),
		ValidateUpdate: updateValidator(validateNetworkPolicyUpdate),
		Table:          tables.NetworkPolicy.Convertor(nil),
	},
}

// defaultNetworkPolicy is kube's v1 defaulting: policyTypes Ingress
// (and Egress when there are egress rules), port protocol TCP.
func defaultNetworkPolicy(np *networkingv1.NetworkPolicy) {
	spec := &np.Spec
	if len(spec.PolicyTypes) == 0 {
		spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(spec.Egress) != 0 {
			spec.PolicyTypes = append(spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
	defaultPorts := func(ports []networkingv1.NetworkPolicyPort) {
		for i := range ports {
			if ports[i].Protocol == nil {
				ports[i].Protocol = new(corev1.ProtocolTCP)
			}
		}
	}
	for i := range spec.Ingress {
		defaultPorts(spec.Ingress[i].Ports)
	}
	for i := range spec.Egress {
		defaultPorts(spec.Egress[i].Ports)
	}
}

// netpolOptions are kube's NetworkPolicyValidationOptions: what an update
// may keep that a create may not.
type netpolOptions struct {
	allowInvalidLabelValue bool
	oldCIDRs               []string
}

// validateNetworkPolicyUpdate is kube's: a pod selector that was invalid
// may keep invalid label values, and any CIDR of the old policy is
// accepted unrevalidated.
func validateNetworkPolicyUpdate(np, old *networkingv1.NetworkPolicy) field.ErrorList {
	opts := netpolOptions{
		allowInvalidLabelValue: len(validateLabelSelector(&old.Spec.PodSelector, nil)) > 0,
	}
	peers := func(ps []networkingv1.NetworkPolicyPeer) {
		for _, p := range ps {
			if p.IPBlock != nil {
				opts.oldCIDRs = append(opts.oldCIDRs, p.IPBlock.CIDR)
				opts.oldCIDRs = append(opts.oldCIDRs, p.IPBlock.Except...)
			}
		}
	}
	for _, r := range old.Spec.Ingress {
		peers(r.From)
	}
	for _, r := range old.Spec.Egress {
		peers(r.To)
	}
	errs := validateObjectMetaUpdate(&np.ObjectMeta, &old.ObjectMeta)
	return append(errs, validateNetworkPolicySpec(&np.Spec, opts, specPath)...)
}

var policyTypes = []string{string(networkingv1.PolicyTypeIngress), string(networkingv1.PolicyTypeEgress)}

func validateNetworkPolicySpec(spec *networkingv1.NetworkPolicySpec, opts netpolOptions, p *field.Path) field.ErrorList {
	selOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.allowInvalidLabelValue}
	errs := metav1validation.ValidateLabelSelector(&spec.PodSelector, selOpts, p.Child("podSelector"))
	for i, rule := range spec.Ingress {
		rp := p.Child("ingress").Index(i)
		for j := range rule.Ports {
			errs = append(errs, validateNetworkPolicyPort(&rule.Ports[j], rp.Child("ports").Index(j))...)
		}
		for j := range rule.From {
			errs = append(errs, validateNetworkPolicyPeer(&rule.From[j], opts, rp.Child("from").Index(j))...)
		}
	}
	for i, rule := range spec.Egress {
		rp := p.Child("egress").Index(i)
		for j := range rule.Ports {
			errs = append(errs, validateNetworkPolicyPort(&rule.Ports[j], rp.Child("ports").Index(j))...)
		}
		for j := range rule.To {
			errs = append(errs, validateNetworkPolicyPeer(&rule.To[j], opts, rp.Child("to").Index(j))...)
		}
	}
	tp := p.Child("policyTypes")
	if len(spec.PolicyTypes) > len(policyTypes) {
		return append(errs, field.Invalid(tp, &spec.PolicyTypes, "may not specify more than two policyTypes"))
	}
	for i, t := range spec.PolicyTypes {
		if !slices.Contains(policyTypes, string(t)) {
			errs = append(errs, field.NotSupported(tp.Index(i), t, policyTypes))
		}
	}
	return errs
}

func validateNetworkPolicyPort(port *networkingv1.NetworkPolicyPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pr := port.Protocol; pr != nil && *pr != corev1.ProtocolTCP && *pr != corev1.ProtocolUDP && *pr != corev1.ProtocolSCTP {
		errs = append(errs, field.NotSupported(p.Child("protocol"), *pr, []string{string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP)}))
	}
	switch {
	case port.Port == nil:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is not specified"))
		}
	case port.Port.Type == intstr.Int:
		for _, msg := range validation.IsValidPortNum(int(port.Port.IntVal)) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.IntVal, msg))
		}
		if end := port.EndPort; end != nil {
			if *end < port.Port.IntVal {
				errs = append(errs, field.Invalid(p.Child("endPort"), *end, "must be greater than or equal to `port`"))
			}
			for _, msg := range validation.IsValidPortNum(int(*end)) {
				errs = append(errs, field.Invalid(p.Child("endPort"), *end, msg))
			}
		}
	default:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is non-numeric"))
		}
		for _, msg := range validation.IsValidPortName(port.Port.StrVal) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.StrVal, msg))
		}
	}
	return errs
}

func validateNetworkPolicyPeer(peer *networkingv1.NetworkPolicyPeer, opts netpolOptions, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	selOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.allowInvalidLabelValue}
	n := 0
	if peer.PodSelector != nil {
		n++
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.PodSelector, selOpts, p.Child("podSelector"))...)
	}
	if peer.NamespaceSelector != nil {
		n++
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, selOpts, p.Child("namespaceSelector"))...)
	}
	if peer.IPBlock != nil {
		n++
		errs = append(errs, validateIPBlock(peer.IPBlock, opts, p.Child("ipBlock"))...)
	}
	switch {
	case n == 0:
		errs = append(errs, field.Required(p, "must specify a peer"))
	case n > 1 && peer.IPBlock != nil:
		errs = append(errs, field.Forbidden(p, "may not specify both ipBlock and another peer"))
	}
	return errs
}

// validateIPBlock is kube's ValidateIPBlock with StrictIPCIDRValidation
// on (kube 1.36's default): a CIDR and its exceptions, each a strict
// subset of it.
func validateIPBlock(b *networkingv1.IPBlock, opts netpolOptions, p *field.Path) field.ErrorList {
	if b.CIDR == "" {
		return field.ErrorList{field.Required(p.Child("cidr"), "")}
	}
	errs := validation.IsValidCIDRForLegacyField(p.Child("cidr"), b.CIDR, true, opts.oldCIDRs)
	_, cidr, err := netutils.ParseCIDRSloppy(b.CIDR)
	if err != nil {
		return errs
	}
	for i, except := range b.Except {
		ep := p.Child("except").Index(i)
		errs = append(errs, validation.IsValidCIDRForLegacyField(ep, except, true, opts.oldCIDRs)...)
		_, ex, err := netutils.ParseCIDRSloppy(except)
		if err != nil {
			continue
		}
		cidrLen, _ := cidr.Mask.Size()
		exLen, _ := ex.Mask.Size()
		if !cidr.Contains(ex.IP) || cidrLen >= exLen {
			errs = append(errs, field.Invalid(ep, except, "must be a strict subset of `cidr`"))
		}
	}
	return errs
}

// ---- IPAddress ----

// ipAddresses: the name is the address in canonical form; the parent
// reference is required and fixed. No generation is kept.
var ipAddresses = &Resource{
	GroupVersion: networkingV1, Name: "ipaddresses", SingularName: "ipaddress", Kind: "IPAddress",
	ShortNames: []string{"ip"},
	Strategy: Strategy{
		Validate: validator(validateIPAddress),
		ValidateUpdate: updateValidator(func(ip, old *networkingv1.IPAddress) field.ErrorList {
			errs := validateIPAddress(ip)
			errs = append(errs, validateObjectMetaUpdate(&ip.ObjectMeta, &old.ObjectMeta)...)
			return append(errs, validateImmutableDeclared(ip.Spec.ParentRef, old.Spec.ParentRef, specPath.Child("parentRef"))...)
		}),
		NoGeneration: true,
		Table:        tables.IPAddress.Convertor(nil),
	},
}

// ipAddressName is kube's ValidateIPAddressName: the name is an IP
// address in canonical form.
func ipAddressName(name string, _ bool) []string {
	var msgs []string
	for _, err := range validation.IsValidIP(&field.Path{}, name) {
		msgs = append(msgs, err.Detail)
	}
	return msgs
}

func validateIPAddress(ip *networkingv1.IPAddress) field.ErrorList {
	errs := validateObjectMeta(&ip.ObjectMeta, false, ipAddressName)
	p := specPath.Child("parentRef")
	ref := ip.Spec.ParentRef
	if ref == nil {
		return append(errs, field.Required(p, ""))
	}
	if ref.Group != "" {
		errs = append(errs, validateDNS1123Subdomain(ref.Group, p.Child("group"))...)
	}
	pathSegment := func(value, name string, required bool) {
		switch {
		case value == "" && required:
			errs = append(errs, field.Required(p.Child(name), ""))
		case value != "":
			for _, msg := range content.IsPathSegmentName(value) {
				errs = append(errs, field.Invalid(p.Child(name), value, msg))
			}
		}
	}
	pathSegment(ref.Resource, "resource", true)
	pathSegment(ref.Name, "name", true)
	pathSegment(ref.Namespace, "namespace", false)
	return errs
}

// validateImmutableDeclared is the immutability check of kube's
// declarative validation, which v1.37 enforces in place of the
// handwritten one for the fields its API types mark +k8s:immutable at
// beta: the error carries no value ("Invalid value: null").
func validateImmutableDeclared(value, old any, p *field.Path) field.ErrorList {
	if apiequality.Semantic.DeepEqual(value, old) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, nil, immutableMsg)}
}

// ---- ServiceCIDR ----

// serviceCIDRs: one CIDR, or one of each family; the CIDRs are fixed but
// for a second family added to one. The status is written through
// /status only. No generation is kept.
var serviceCIDRs = &Resource{
	GroupVersion: networkingV1, Name: "servicecidrs", SingularName: "servicecidr", Kind: "ServiceCIDR",
	HasStatus: true,
	Strategy: Strategy{
		Validate: validator(func(sc *networkingv1.ServiceCIDR) field.ErrorList {
			errs := validateObjectMeta(&sc.ObjectMeta, false, nameIsDNSSubdomain)
			return append(errs, validateServiceCIDRSpec(&sc.Spec, specPath.Child("cidrs"))...)
		}),
		ValidateUpdate: updateValidator(validateServiceCIDRUpdate),
		NoGeneration:   true,
		Table:          tables.ServiceCIDR.Convertor(nil),
	},
}

func validateServiceCIDRSpec(spec *networkingv1.ServiceCIDRSpec, p *field.Path) field.ErrorList {
	switch {
	case len(spec.CIDRs) == 0:
		return field.ErrorList{field.Required(p, "at least one CIDR required")}
	case len(spec.CIDRs) > 2:
		return field.ErrorList{field.Invalid(p, spec, "may only hold up to 2 values")}
	}
	var errs field.ErrorList
	for i, cidr := range spec.CIDRs {
		errs = append(errs, validation.IsValidCIDR(p.Index(i), cidr)...)
	}
	if len(spec.CIDRs) == 2 {
		f0, f1 := netutils.IPFamilyOfCIDRString(spec.CIDRs[0]), netutils.IPFamilyOfCIDRString(spec.CIDRs[1])
		if f0 == f1 && f0 != netutils.IPFamilyUnknown {
			errs = append(errs, field.Invalid(p, spec.CIDRs, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
		}
	}
	return errs
}

// validateServiceCIDRUpdate is kube's: the CIDRs are fixed, but a
// single-family ServiceCIDR may gain the other family.
func validateServiceCIDRUpdate(sc, old *networkingv1.ServiceCIDR) field.ErrorList {
	errs := validateObjectMetaUpdate(&sc.ObjectMeta, &old.ObjectMeta)
	p := specPath.Child("cidrs")
	switch {
	case len(old.Spec.CIDRs) == len(sc.Spec.CIDRs):
		for i, cidr := range old.Spec.CIDRs {
			if cidr != sc.Spec.CIDRs[i] {
				errs = append(errs, field.Invalid(p.Index(i), sc.Spec.CIDRs[i], immutableMsg))
			}
		}
	case len(old.Spec.CIDRs) == 1 && len(sc.Spec.CIDRs) == 2:
		if sc.Spec.CIDRs[0] != old.Spec.CIDRs[0] {
			errs = append(errs, field.Invalid(p.Index(0), sc.Spec.CIDRs[0], immutableMsg))
		}
		errs = append(errs, validateServiceCIDRSpec(&sc.Spec, p)...)
	default:
		errs = append(errs, field.Invalid(p, sc.Spec.CIDRs, immutableMsg))
	}
	return errs
}
