package registry

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// services: Services have no generation. Cluster IPs and node ports
// are allocated elsewhere; this strategy keeps the linked fields
// (clusterIP/clusterIPs, ipFamilies, ipFamilyPolicy) consistent and carries
// allocated values over updates that omit them.
var services = &Resource{
	GroupVersion: coreV1, Name: "services", SingularName: "service", Kind: "Service",
	Namespaced: true, ShortNames: []string{"svc"}, Categories: []string{"all"}, HasStatus: true, NewAllocator: newServiceAllocator, Maintain: serviceMaintenance, DeleteReturnsObject: true,
	Subresources: []Subresource{
		{Name: "proxy", Kind: "ServiceProxyOptions", Verbs: proxyVerbs, Connect: connectServiceProxy},
	},
	Strategy: Strategy{
		Default:          defaulter(defaultService),
		PrepareForCreate: creator(prepareServiceForCreate),
		PrepareForUpdate: updater(prepareServiceForUpdate),
		Validate:         validator(validateService),
		ValidateUpdate:   updateValidator(validateServiceUpdate),
		NoGeneration:     true,
		Fields:           selectable(serviceFields),
		Table:            tables.Service.Convertor(nil),
	},
}

func defaultService(s *corev1.Service) {
	spec := &s.Spec
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	if spec.SessionAffinity == corev1.ServiceAffinityNone {
		spec.SessionAffinityConfig = nil
	}
	if spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		if c := spec.SessionAffinityConfig; c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{
				ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: new(corev1.DefaultClientIPServiceAffinitySeconds)},
			}
		}
	}
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range spec.Ports {
		sp := &spec.Ports[i]
		if sp.Protocol == "" {
			sp.Protocol = corev1.ProtocolTCP
		}
		if sp.TargetPort == intstr.FromInt32(0) || sp.TargetPort == intstr.FromString("") {
			sp.TargetPort = intstr.FromInt32(sp.Port)
		}
	}
	if externallyAccessible(s) && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if spec.InternalTrafficPolicy == nil && (spec.Type == corev1.ServiceTypeNodePort ||
		spec.Type == corev1.ServiceTypeLoadBalancer || spec.Type == corev1.ServiceTypeClusterIP) {
		spec.InternalTrafficPolicy = new(corev1.ServiceInternalTrafficPolicyCluster)
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer {
		if spec.AllocateLoadBalancerNodePorts == nil {
			spec.AllocateLoadBalancerNodePorts = new(true)
		}
		for i, ing := range s.Status.LoadBalancer.Ingress {
			if ing.IP != "" && ing.IPMode == nil {
				s.Status.LoadBalancer.Ingress[i].IPMode = new(corev1.LoadBalancerIPModeVIP)
			}
		}
	}
}

// externallyAccessible reports whether a Service is reachable from outside
// the cluster: LoadBalancer, NodePort, or ClusterIP with external IPs.
func externallyAccessible(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer || s.Spec.Type == corev1.ServiceTypeNodePort ||
		s.Spec.Type == corev1.ServiceTypeClusterIP && len(s.Spec.ExternalIPs) > 0
}

func needsClusterIP(s *corev1.Service) bool {
	return s.Spec.Type != corev1.ServiceTypeExternalName
}

func needsNodePort(s *corev1.Service) bool {
	switch s.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return s.Spec.AllocateLoadBalancerNodePorts == nil || *s.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

func needsHealthCheckNodePort(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

func isHeadless(s *corev1.Service) bool {
	return len(s.Spec.ClusterIPs) == 1 && s.Spec.ClusterIPs[0] == corev1.ClusterIPNone ||
		len(s.Spec.ClusterIPs) == 0 && s.Spec.ClusterIP == corev1.ClusterIPNone
}

func prepareServiceForCreate(s *corev1.Service) {
	s.Status = corev1.ServiceStatus{}
	if s.Spec.ClusterIP != "" && len(s.Spec.ClusterIPs) == 0 {
		s.Spec.ClusterIPs = []string{s.Spec.ClusterIP}
	}
	defaultIPFamilies(s)
}

// defaultIPFamilies fills ipFamilyPolicy and ipFamilies as a single-stack
// IPv4 cluster's allocator does: SingleStack, except for headless Services
// without a selector, which get RequireDualStack; the family follows the
// first cluster IP when one is given.
func defaultIPFamilies(s *corev1.Service) {
	if !needsClusterIP(s) {
		return
	}
	if s.Spec.IPFamilyPolicy == nil {
		policy := corev1.IPFamilyPolicySingleStack
		if isHeadless(s) && len(s.Spec.Selector) == 0 {
			policy = corev1.IPFamilyPolicyRequireDualStack
		}
		s.Spec.IPFamilyPolicy = &policy
	}
	if len(s.Spec.IPFamilies) == 0 {
		family := corev1.IPv4Protocol
		if len(s.Spec.ClusterIPs) > 0 {
			if a, err := netip.ParseAddr(s.Spec.ClusterIPs[0]); err == nil && a.Is6() && !a.Is4In6() {
				family = corev1.IPv6Protocol
			}
		}
		s.Spec.IPFamilies = []corev1.IPFamily{family}
	}
}

// prepareServiceForUpdate keeps what was allocated when the update omits it
// (so that "kubectl replace" of the original manifest works), and drops the
// allocated fields a new type no longer uses.
func prepareServiceForUpdate(s, old *corev1.Service) {
	if s.Spec.ClusterIP != "" && (len(s.Spec.ClusterIPs) == 0 ||
		s.Spec.ClusterIP != old.Spec.ClusterIP && slices.Equal(s.Spec.ClusterIPs, old.Spec.ClusterIPs)) {
		s.Spec.ClusterIPs = []string{s.Spec.ClusterIP}
	}
	patchAllocatedValues(s, old)
	dropTypeDependentFields(s, old)
	if needsClusterIP(s) && needsClusterIP(old) {
		if s.Spec.IPFamilyPolicy == nil {
			s.Spec.IPFamilyPolicy = old.Spec.IPFamilyPolicy
		}
		if len(s.Spec.IPFamilies) == 0 {
			s.Spec.IPFamilies = old.Spec.IPFamilies
		}
	}
	defaultIPFamilies(s)
}

func patchAllocatedValues(s, old *corev1.Service) {
	if needsClusterIP(old) && needsClusterIP(s) {
		if s.Spec.ClusterIP == "" {
			s.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(s.Spec.ClusterIPs) == 0 && len(old.Spec.ClusterIPs) > 0 {
			s.Spec.ClusterIPs = old.Spec.ClusterIPs
		}
	}
	if needsNodePort(old) && needsNodePort(s) {
		used := nodePortsOf(old).Intersection(nodePortsOf(s))
		byName := map[string]int32{}
		for _, p := range old.Spec.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range s.Spec.Ports {
			p := &s.Spec.Ports[i]
			if p.NodePort == 0 {
				if v := byName[p.Name]; !used.Has(v) {
					p.NodePort = v
				}
			}
		}
	}
	if needsHealthCheckNodePort(old) && needsHealthCheckNodePort(s) && s.Spec.HealthCheckNodePort == 0 {
		s.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}
}

func nodePortsOf(s *corev1.Service) sets.Set[int32] {
	out := sets.New[int32]()
	for _, p := range s.Spec.Ports {
		if p.NodePort != 0 {
			out.Insert(p.NodePort)
		}
	}
	return out
}

func dropTypeDependentFields(s, old *corev1.Service) {
	if needsClusterIP(old) && !needsClusterIP(s) {
		if s.Spec.ClusterIP == old.Spec.ClusterIP && slices.Equal(s.Spec.ClusterIPs, old.Spec.ClusterIPs) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
		}
		if slices.Equal(s.Spec.IPFamilies, old.Spec.IPFamilies) {
			s.Spec.IPFamilies = nil
		}
		if ptrEqual(s.Spec.IPFamilyPolicy, old.Spec.IPFamilyPolicy) {
			s.Spec.IPFamilyPolicy = nil
		}
	}
	if needsNodePort(old) && !needsNodePort(s) && nodePortsOf(s).Equal(nodePortsOf(old)) {
		for i := range s.Spec.Ports {
			s.Spec.Ports[i].NodePort = 0
		}
	}
	if needsHealthCheckNodePort(old) && !needsHealthCheckNodePort(s) && s.Spec.HealthCheckNodePort == old.Spec.HealthCheckNodePort {
		s.Spec.HealthCheckNodePort = 0
	}
	if old.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.Type != corev1.ServiceTypeLoadBalancer {
		if ptrEqual(s.Spec.AllocateLoadBalancerNodePorts, old.Spec.AllocateLoadBalancerNodePorts) {
			s.Spec.AllocateLoadBalancerNodePorts = nil
		}
		if ptrEqual(s.Spec.LoadBalancerClass, old.Spec.LoadBalancerClass) {
			s.Spec.LoadBalancerClass = nil
		}
	}
	if externallyAccessible(old) && !externallyAccessible(s) && s.Spec.ExternalTrafficPolicy == old.Spec.ExternalTrafficPolicy {
		s.Spec.ExternalTrafficPolicy = ""
	}
}

func ptrEqual[T comparable](a, b *T) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// servicePortValue renders a ServicePort in the duplicate-port message as
// kube-apiserver does, from its internal type.
type servicePortValue struct {
	Name        string
	Protocol    corev1.Protocol
	AppProtocol *string
	Port        int32
	TargetPort  intstr.IntOrString
	NodePort    int32
}

var (
	supportedSessionAffinity = sets.New(corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone)
	supportedServiceTypes    = sets.New(corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort,
		corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName)
	supportedInternalTrafficPolicies = sets.New(corev1.ServiceInternalTrafficPolicyCluster, corev1.ServiceInternalTrafficPolicyLocal)
	supportedExternalTrafficPolicies = sets.New(corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal)
	supportedIPFamilies              = sets.New(corev1.IPv4Protocol, corev1.IPv6Protocol)
	supportedIPFamilyPolicies        = sets.New(corev1.IPFamilyPolicySingleStack,
		corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack)
)

const (
	// kubeletPort may not be exposed by LoadBalancer Services.
	kubeletPort = 10250
	// maxClientIPAffinitySeconds bounds sessionAffinityConfig's timeout (one day).
	maxClientIPAffinitySeconds = 86400
)

// withClusterIPs returns the Service with clusterIPs filled from clusterIP
// when only the latter is set, so that a clusterIP set after preparation (by
// the allocator) is not reported as inconsistent.
func withClusterIPs(s *corev1.Service) *corev1.Service {
	if s.Spec.ClusterIP == "" || len(s.Spec.ClusterIPs) > 0 {
		return s
	}
	c := s.DeepCopy()
	c.Spec.ClusterIPs = []string{c.Spec.ClusterIP}
	return c
}

func validateService(svc *corev1.Service) field.ErrorList {
	s := withClusterIPs(svc)
	spec := &s.Spec
	errs := validateObjectMeta(&s.ObjectMeta, true, nameIsDNS1035Label)

	const hintsKey, modeKey = corev1.DeprecatedAnnotationTopologyAwareHints, corev1.AnnotationTopologyMode
	if mode, ok := s.Annotations[modeKey]; ok {
		if hints, ok := s.Annotations[hintsKey]; ok && mode != hints {
			errs = append(errs, field.Invalid(metadataPath.Child("annotations").Key(modeKey), mode,
				fmt.Sprintf("must match annotations[%s] when both are specified", hintsKey)))
		}
	}

	headless := isHeadless(s)
	portsPath := specPath.Child("ports")
	if len(spec.Ports) == 0 && !headless && spec.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(portsPath, ""))
	}
	switch spec.Type {
	case corev1.ServiceTypeLoadBalancer:
		for i, p := range spec.Ports {
			if p.Port == kubeletPort {
				errs = append(errs, field.Invalid(portsPath.Index(i), p.Port, fmt.Sprintf("may not expose port %v externally since it is used by kubelet", kubeletPort)))
			}
		}
		if headless {
			errs = append(errs, field.Invalid(specPath.Child("clusterIPs").Index(0), spec.ClusterIPs[0], "may not be set to 'None' for LoadBalancer services"))
		}
	case corev1.ServiceTypeNodePort:
		if headless {
			errs = append(errs, field.Invalid(specPath.Child("clusterIPs").Index(0), spec.ClusterIPs[0], "may not be set to 'None' for NodePort services"))
		}
	case corev1.ServiceTypeExternalName:
		if len(spec.ClusterIPs) > 0 {
			errs = append(errs, field.Forbidden(specPath.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(spec.IPFamilies) > 0 {
			errs = append(errs, field.Forbidden(specPath.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if spec.IPFamilyPolicy != nil {
			errs = append(errs, field.Forbidden(specPath.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		if cname := strings.TrimSuffix(spec.ExternalName, "."); cname != "" {
			errs = append(errs, validateDNS1123Subdomain(cname, specPath.Child("externalName"))...)
		} else {
			errs = append(errs, field.Required(specPath.Child("externalName"), ""))
		}
	}

	names := sets.New[string]()
	for i := range spec.Ports {
		errs = append(errs, validateServicePort(&spec.Ports[i], len(spec.Ports) > 1, names, portsPath.Index(i))...)
	}
	if spec.Selector != nil {
		errs = append(errs, validateLabels(spec.Selector, specPath.Child("selector"))...)
	}
	switch {
	case spec.SessionAffinity == "":
		errs = append(errs, field.Required(specPath.Child("sessionAffinity"), ""))
	case !supportedSessionAffinity.Has(spec.SessionAffinity):
		errs = append(errs, field.NotSupported(specPath.Child("sessionAffinity"), spec.SessionAffinity, sets.List(supportedSessionAffinity)))
	}
	if spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		errs = append(errs, validateClientIPAffinityConfig(spec.SessionAffinityConfig, specPath.Child("sessionAffinityConfig"))...)
	} else if spec.SessionAffinity == corev1.ServiceAffinityNone && spec.SessionAffinityConfig != nil {
		errs = append(errs, field.Forbidden(specPath.Child("sessionAffinityConfig"), "must not be set when session affinity is None"))
	}
	errs = append(errs, validateClusterIPsRelatedFields(s)...)
	for i, ip := range spec.ExternalIPs {
		ipPath := specPath.Child("externalIPs").Index(i)
		if ipErrs := validateIP(ip, ipPath); len(ipErrs) > 0 {
			errs = append(errs, ipErrs...)
		} else {
			errs = append(errs, validateNonSpecialIP(ip, ipPath)...)
		}
	}
	switch {
	case spec.Type == "":
		errs = append(errs, field.Required(specPath.Child("type"), ""))
	case !supportedServiceTypes.Has(spec.Type):
		errs = append(errs, field.NotSupported(specPath.Child("type"), spec.Type, sets.List(supportedServiceTypes)))
	}
	if spec.Type == corev1.ServiceTypeClusterIP {
		for i, p := range spec.Ports {
			if p.NodePort != 0 {
				errs = append(errs, field.Forbidden(portsPath.Index(i).Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
		}
	}
	type protoPort struct {
		proto corev1.Protocol
		port  int32
	}
	nodePorts := map[protoPort]bool{}
	for i, p := range spec.Ports {
		if p.NodePort == 0 {
			continue
		}
		key := protoPort{p.Protocol, p.NodePort}
		if nodePorts[key] {
			errs = append(errs, field.Duplicate(portsPath.Index(i).Child("nodePort"), p.NodePort))
		}
		nodePorts[key] = true
	}
	ports := map[protoPort]bool{}
	for i, p := range spec.Ports {
		key := protoPort{p.Protocol, p.Port}
		if ports[key] {
			errs = append(errs, field.Duplicate(portsPath.Index(i), servicePortValue{Protocol: p.Protocol, Port: p.Port}))
		}
		ports[key] = true
	}
	if len(spec.LoadBalancerSourceRanges) > 0 {
		p := specPath.Child("LoadBalancerSourceRanges")
		if spec.Type != corev1.ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
		}
		for i, v := range spec.LoadBalancerSourceRanges {
			errs = append(errs, validateCIDR(strings.TrimSpace(v), p.Index(i))...)
		}
	} else if v, ok := s.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey]; ok {
		p := metadataPath.Child("annotations").Key(corev1.AnnotationLoadBalancerSourceRangesKey)
		if spec.Type != corev1.ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
		}
		if v = strings.TrimSpace(v); v != "" {
			for _, c := range strings.Split(v, ",") {
				errs = append(errs, validateCIDR(strings.TrimSpace(c), p)...)
			}
		}
	}
	if spec.AllocateLoadBalancerNodePorts != nil && spec.Type != corev1.ServiceTypeLoadBalancer {
		errs = append(errs, field.Forbidden(specPath.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer && spec.AllocateLoadBalancerNodePorts == nil {
		errs = append(errs, field.Required(field.NewPath("allocateLoadBalancerNodePorts"), ""))
	}
	errs = append(errs, validateLoadBalancerClass(nil, s)...)
	errs = append(errs, validateExternalTrafficPolicy(s)...)
	if spec.InternalTrafficPolicy == nil {
		if spec.Type == corev1.ServiceTypeNodePort || spec.Type == corev1.ServiceTypeLoadBalancer || spec.Type == corev1.ServiceTypeClusterIP {
			errs = append(errs, field.Required(specPath.Child("internalTrafficPolicy"), ""))
		}
	} else if !supportedInternalTrafficPolicies.Has(*spec.InternalTrafficPolicy) {
		errs = append(errs, field.NotSupported(specPath.Child("internalTrafficPolicy"), *spec.InternalTrafficPolicy, sets.List(supportedInternalTrafficPolicies)))
	}
	if td := spec.TrafficDistribution; td != nil {
		valid := []string{corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferSameNode}
		if !sets.New(valid...).Has(*td) {
			errs = append(errs, field.NotSupported(specPath.Child("trafficDistribution"), *td, valid))
		}
	}
	return errs
}

func validateServicePort(sp *corev1.ServicePort, requireName bool, names sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && sp.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else if sp.Name != "" {
		errs = append(errs, validateDNS1123Label(sp.Name, p.Child("name"))...)
		if names.Has(sp.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), sp.Name))
		} else {
			names.Insert(sp.Name)
		}
	}
	for _, msg := range validation.IsValidPortNum(int(sp.Port)) {
		errs = append(errs, field.Invalid(p.Child("port"), sp.Port, msg))
	}
	errs = append(errs, validateProtocol(sp.Protocol, p.Child("protocol"))...)
	errs = append(errs, validatePortNumOrName(sp.TargetPort, p.Child("targetPort"))...)
	if sp.AppProtocol != nil {
		errs = append(errs, validateQualifiedName(*sp.AppProtocol, p.Child("appProtocol"))...)
	}
	return errs
}

func validateClientIPAffinityConfig(c *corev1.SessionAffinityConfig, p *field.Path) field.ErrorList {
	const when = "when session affinity type is ClientIP"
	switch {
	case c == nil:
		return field.ErrorList{field.Required(p, when)}
	case c.ClientIP == nil:
		return field.ErrorList{field.Required(p.Child("clientIP"), when)}
	case c.ClientIP.TimeoutSeconds == nil:
		return field.ErrorList{field.Required(p.Child("clientIP", "timeoutSeconds"), when)}
	}
	if t := c.ClientIP.TimeoutSeconds; *t <= 0 || *t > maxClientIPAffinitySeconds {
		return field.ErrorList{field.Invalid(p.Child("clientIP", "timeoutSeconds"), t,
			fmt.Sprintf("must be greater than 0 and less than %d", maxClientIPAffinitySeconds))}
	}
	return nil
}

func validateClusterIPsRelatedFields(s *corev1.Service) field.ErrorList {
	if s.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	var errs field.ErrorList
	spec := &s.Spec
	ipsPath := specPath.Child("clusterIPs")
	if spec.ClusterIP != "" {
		if len(spec.ClusterIPs) == 0 {
			errs = append(errs, field.Required(ipsPath, ""))
		} else if spec.ClusterIPs[0] != spec.ClusterIP {
			errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "first value must match `clusterIP`"))
		}
	} else if len(spec.ClusterIPs) != 0 {
		errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	}
	seen := sets.New[corev1.IPFamily]()
	for i, f := range spec.IPFamilies {
		if !supportedIPFamilies.Has(f) {
			errs = append(errs, field.NotSupported(specPath.Child("ipFamilies").Index(i), f, sets.List(supportedIPFamilies)))
		}
		if seen.Has(f) {
			errs = append(errs, field.Duplicate(specPath.Child("ipFamilies").Index(i), f))
		}
		seen.Insert(f)
	}
	if spec.IPFamilyPolicy != nil && !supportedIPFamilyPolicies.Has(*spec.IPFamilyPolicy) {
		errs = append(errs, field.NotSupported(specPath.Child("ipFamilyPolicy"), spec.IPFamilyPolicy, sets.List(supportedIPFamilyPolicies)))
	}
	invalid := false
	for i, ip := range spec.ClusterIPs {
		if i == 0 && ip == corev1.ClusterIPNone {
			if len(spec.ClusterIPs) > 1 {
				invalid = true
				errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		ipErrs := validateIP(ip, ipsPath.Index(i))
		invalid = invalid || len(ipErrs) > 0
		errs = append(errs, ipErrs...)
	}
	if len(spec.ClusterIPs) > 2 {
		errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "may only hold up to 2 values"))
	}
	if invalid {
		return errs
	}
	if len(spec.ClusterIPs) > 1 && (len(spec.ClusterIPs) > 2 || isIPv6(spec.ClusterIPs[0]) == isIPv6(spec.ClusterIPs[1])) {
		errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "may specify no more than one IP for each IP family"))
	}
	if !isHeadless(s) {
		for i, ip := range spec.ClusterIPs {
			if i >= len(spec.IPFamilies) {
				break
			}
			if spec.IPFamilies[i] == corev1.IPv4Protocol && isIPv6(ip) {
				errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
			}
			if spec.IPFamilies[i] == corev1.IPv6Protocol && !isIPv6(ip) {
				errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
			}
		}
	}
	return errs
}

func isIPv6(ip string) bool {
	a, err := netip.ParseAddr(ip)
	return err == nil && a.Is6() && !a.Is4In6()
}

// validateNonSpecialIP rejects addresses that cannot be a destination:
// unspecified, loopback and link-local.
func validateNonSpecialIP(ip string, p *field.Path) field.ErrorList {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return field.ErrorList{field.Invalid(p, ip, "must be a valid IP address")}
	}
	a = a.Unmap()
	var errs field.ErrorList
	if a.IsUnspecified() {
		errs = append(errs, field.Invalid(p, ip, fmt.Sprintf("may not be unspecified (%v)", ip)))
	}
	if a.IsLoopback() {
		errs = append(errs, field.Invalid(p, ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if a.IsLinkLocalUnicast() {
		errs = append(errs, field.Invalid(p, ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if a.IsLinkLocalMulticast() {
		errs = append(errs, field.Invalid(p, ip, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}

func validateLoadBalancerClass(old, s *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	lb := s.Spec.Type == corev1.ServiceTypeLoadBalancer
	if old != nil && old.Spec.Type == corev1.ServiceTypeLoadBalancer && lb && !ptrEqual(old.Spec.LoadBalancerClass, s.Spec.LoadBalancerClass) {
		errs = append(errs, field.Invalid(specPath.Child("loadBalancerClass"), s.Spec.LoadBalancerClass, "may not change once set"))
	}
	if c := s.Spec.LoadBalancerClass; c != nil {
		if lb {
			errs = append(errs, validateQualifiedName(*c, specPath.Child("loadBalancerClass"))...)
		} else {
			errs = append(errs, field.Forbidden(specPath.Child("loadBalancerClass"), "may only be used when `type` is 'LoadBalancer'"))
		}
	}
	return errs
}

// validateExternalTrafficPolicy checks the external traffic policy and the
// health-check node port. A missing health-check node port is not reported:
// allocating it is the job of the node-port allocator, not of validation.
func validateExternalTrafficPolicy(s *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	if !externallyAccessible(s) {
		if s.Spec.ExternalTrafficPolicy != "" {
			errs = append(errs, field.Invalid(specPath.Child("externalTrafficPolicy"), s.Spec.ExternalTrafficPolicy, "may only be set for externally-accessible services"))
		}
	} else if s.Spec.ExternalTrafficPolicy == "" {
		errs = append(errs, field.Required(specPath.Child("externalTrafficPolicy"), ""))
	} else if !supportedExternalTrafficPolicies.Has(s.Spec.ExternalTrafficPolicy) {
		errs = append(errs, field.NotSupported(specPath.Child("externalTrafficPolicy"), s.Spec.ExternalTrafficPolicy, sets.List(supportedExternalTrafficPolicies)))
	}
	hc := s.Spec.HealthCheckNodePort
	if !needsHealthCheckNodePort(s) {
		if hc != 0 {
			errs = append(errs, field.Invalid(specPath.Child("healthCheckNodePort"), hc, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
		}
	} else if hc != 0 {
		for _, msg := range validation.IsValidPortNum(int(hc)) {
			errs = append(errs, field.Invalid(specPath.Child("healthCheckNodePort"), hc, msg))
		}
	}
	return errs
}

func validateServiceUpdate(svc, oldSvc *corev1.Service) field.ErrorList {
	s, old := withClusterIPs(svc), withClusterIPs(oldSvc)
	errs := validateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateClusterIPsUpdate(old, s)...)
	errs = append(errs, validateIPFamiliesUpdate(old, s)...)
	errs = append(errs, validateLoadBalancerClass(old, s)...)
	if needsHealthCheckNodePort(old) && needsHealthCheckNodePort(s) && s.Spec.HealthCheckNodePort != old.Spec.HealthCheckNodePort {
		errs = append(errs, field.Forbidden(specPath.Child("healthCheckNodePort"), "field is immutable"))
	}
	return append(errs, validateService(s)...)
}

func validateClusterIPsUpdate(old, s *corev1.Service) field.ErrorList {
	if s.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if isHeadless(old) && isHeadless(s) {
		return nil
	}
	var errs field.ErrorList
	ipsPath := specPath.Child("clusterIPs")
	oldIPs, ips := old.Spec.ClusterIPs, s.Spec.ClusterIPs
	switch {
	case len(oldIPs) == len(ips):
		for i, ip := range oldIPs {
			if ip != ips[i] {
				errs = append(errs, field.Invalid(ipsPath.Index(i), ips, "may not change once set"))
			}
		}
	case len(oldIPs) > len(ips):
		if len(ips) == 0 {
			errs = append(errs, field.Invalid(ipsPath.Index(0), ips, "primary clusterIP can not be unset"))
		}
		if len(oldIPs) > 0 && len(ips) > 0 && ips[0] != oldIPs[0] {
			errs = append(errs, field.Invalid(ipsPath.Index(0), ips, "may not change once set"))
		}
		if len(ips) == 1 && (s.Spec.IPFamilyPolicy == nil || *s.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			errs = append(errs, field.Invalid(specPath.Child("ipFamilyPolicy"), s.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary clusterIP"))
		}
	default:
		if len(oldIPs) > 0 && ips[0] != oldIPs[0] {
			errs = append(errs, field.Invalid(ipsPath.Index(0), ips, "may not change once set"))
		}
	}
	return errs
}

func validateIPFamiliesUpdate(old, s *corev1.Service) field.ErrorList {
	if s.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if isHeadless(old) || isHeadless(s) {
		return nil
	}
	var errs field.ErrorList
	famPath := specPath.Child("ipFamilies")
	oldF, f := old.Spec.IPFamilies, s.Spec.IPFamilies
	switch {
	case len(oldF) == len(f):
		for i := range oldF {
			if oldF[i] != f[i] {
				errs = append(errs, field.Invalid(famPath.Index(0), f, "may not change once set"))
			}
		}
	case len(oldF) > len(f):
		if len(s.Spec.ClusterIPs) == 0 {
			errs = append(errs, field.Invalid(famPath.Index(0), f, "primary ipFamily can not be unset"))
		}
		if len(f) > 0 && f[0] != oldF[0] {
			errs = append(errs, field.Invalid(famPath.Index(0), s.Spec.ClusterIPs, "may not change once set"))
		}
		if len(f) == 1 && (s.Spec.IPFamilyPolicy == nil || *s.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			errs = append(errs, field.Invalid(specPath.Child("ipFamilyPolicy"), s.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary ipFamily"))
		}
	default:
		if len(oldF) > 0 && len(f) > 0 && f[0] != oldF[0] {
			errs = append(errs, field.Invalid(famPath.Index(0), s.Spec.ClusterIPs, "may not change once set"))
		}
	}
	return errs
}

// serviceFields are the field-selector fields of a Service.
func serviceFields(s *corev1.Service) fields.Set {
	return fields.Set{
		"spec.clusterIP": s.Spec.ClusterIP,
		"spec.type":      string(s.Spec.Type),
	}
}
