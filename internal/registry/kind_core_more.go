package registry

//lint:file-ignore SA1019 core/v1 Endpoints and ComponentStatus are deprecated, and kube-apiserver still serves them: so does minik.

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// This file holds the core/v1 kinds that only store what clients write:
// Endpoints, PodTemplates, and the ComponentStatus descriptor (answered
// by the API server, not stored).

// endpoints: Endpoints have no generation; ports default to TCP. kube's
// strategy allows create on update; minik's generic update path does
// not (an update of an absent Endpoints is NotFound).
var endpoints = &Resource{
	GroupVersion: coreV1, Name: "endpoints", SingularName: "endpoints", Kind: "Endpoints",
	Namespaced: true, ShortNames: []string{"ep"},
	Strategy: Strategy{
		Default:        defaulter(defaultEndpoints),
		Validate:       validator(func(ep *corev1.Endpoints) field.ErrorList { return validateEndpoints(ep, nil) }),
		ValidateUpdate: updateValidator(validateEndpointsUpdate),
		NoGeneration:   true,
		Table:          tables.Endpoints.Convertor(nil),
	},
}

func defaultEndpoints(ep *corev1.Endpoints) {
	for i := range ep.Subsets {
		for j := range ep.Subsets[i].Ports {
			if p := &ep.Subsets[i].Ports[j]; p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
		}
	}
}

// validateEndpoints is kube's ValidateEndpoints: on an update that leaves
// the subsets as they were, their errors are ignored, since older
// versions accepted them.
func validateEndpoints(ep, old *corev1.Endpoints) field.ErrorList {
	errs := validateObjectMeta(&ep.ObjectMeta, true, nameIsDNSSubdomain)
	subsetErrs := validateEndpointSubsets(ep.Subsets, field.NewPath("subsets"))
	if len(subsetErrs) > 0 && old != nil && apiequality.Semantic.DeepEqual(old.Subsets, ep.Subsets) {
		subsetErrs = nil
	}
	return append(errs, subsetErrs...)
}

func validateEndpointsUpdate(ep, old *corev1.Endpoints) field.ErrorList {
	errs := validateObjectMetaUpdate(&ep.ObjectMeta, &old.ObjectMeta)
	return append(errs, validateEndpoints(ep, old)...)
}

func validateEndpointSubsets(subsets []corev1.EndpointSubset, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range subsets {
		ss := &subsets[i]
		ip := p.Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			errs = append(errs, field.Required(ip, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			errs = append(errs, validateEndpointAddress(&ss.Addresses[j], ip.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			errs = append(errs, validateEndpointAddress(&ss.NotReadyAddresses[j], ip.Child("notReadyAddresses").Index(j))...)
		}
		for j := range ss.Ports {
			errs = append(errs, validateEndpointPort(&ss.Ports[j], len(ss.Ports) > 1, ip.Child("ports").Index(j))...)
		}
	}
	return errs
}

func validateEndpointAddress(a *corev1.EndpointAddress, p *field.Path) field.ErrorList {
	errs := validateIP(a.IP, p.Child("ip"))
	if a.Hostname != "" {
		errs = append(errs, validateDNS1123Label(a.Hostname, p.Child("hostname"))...)
	}
	if a.NodeName != nil {
		for _, msg := range nameIsDNSSubdomain(*a.NodeName, false) {
			errs = append(errs, field.Invalid(p.Child("nodeName"), *a.NodeName, msg))
		}
	}
	return append(errs, validateEndpointIP(a.IP, p.Child("ip"))...)
}

// validateEndpointIP is kube's ValidateEndpointIP, except that loopback
// addresses are accepted: minik's pods, and the API server behind the
// kubernetes Service, live on loopback addresses (as for EndpointSlices).
func validateEndpointIP(ip string, p *field.Path) field.ErrorList {
	if a, err := netip.ParseAddr(ip); err == nil && a.Unmap().IsLoopback() {
		return nil
	}
	return validateNonSpecialIP(ip, p)
}

func validateEndpointPort(port *corev1.EndpointPort, requireName bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && port.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else if port.Name != "" {
		errs = append(errs, validateDNS1123Label(port.Name, p.Child("name"))...)
	}
	for _, msg := range validation.IsValidPortNum(int(port.Port)) {
		errs = append(errs, field.Invalid(p.Child("port"), port.Port, msg))
	}
	if port.Protocol == "" {
		errs = append(errs, field.Required(p.Child("protocol"), ""))
	} else if !supportedPortProtocols.Has(port.Protocol) {
		errs = append(errs, field.NotSupported(p.Child("protocol"), port.Protocol, sets.List(supportedPortProtocols)))
	}
	if port.AppProtocol != nil {
		errs = append(errs, validateQualifiedName(*port.AppProtocol, p.Child("appProtocol"))...)
	}
	return errs
}

// podTemplates: PodTemplates keep metadata.generation, bumped when the
// template changes; the template is defaulted and validated as a
// workload's.
var podTemplates = &Resource{
	GroupVersion: coreV1, Name: "podtemplates", SingularName: "podtemplate", Kind: "PodTemplate",
	Namespaced: true, DeleteReturnsObject: true,
	Strategy: Strategy{
		Default:        defaulter(func(pt *corev1.PodTemplate) { defaultPodTemplateSpec(&pt.Template) }),
		Validate:       validator(validatePodTemplate),
		ValidateUpdate: updateValidator(validatePodTemplateUpdate),
		Table:          tables.PodTemplate.Convertor(nil),
	},
}

func validatePodTemplate(pt *corev1.PodTemplate) field.ErrorList {
	errs := validateObjectMeta(&pt.ObjectMeta, true, nameIsDNSSubdomain)
	return append(errs, validatePodTemplateSpec(&pt.Template, field.NewPath("template"))...)
}

func validatePodTemplateUpdate(pt, old *corev1.PodTemplate) field.ErrorList {
	errs := validateObjectMetaUpdate(&pt.ObjectMeta, &old.ObjectMeta)
	return append(errs, validatePodTemplateSpec(&pt.Template, field.NewPath("template"))...)
}

// componentStatuses describes ComponentStatus: cluster-scoped, get and
// list only, never stored. The API server answers it from the health of
// the parts it runs (see ComponentStatuses).
var componentStatuses = &Resource{
	GroupVersion: coreV1, Name: "componentstatuses", SingularName: "componentstatus", Kind: "ComponentStatus",
	ShortNames: []string{"cs"},
	Strategy:   Strategy{NoGeneration: true, Table: tables.ComponentStatus.Convertor(nil)},
}

// ComponentStatuses returns the descriptor of core/v1 componentstatuses,
// a read-only resource the API server answers from its components'
// health rather than from storage. The returned descriptor is a fresh copy.
func ComponentStatuses() *Resource { return componentStatuses.clone() }
