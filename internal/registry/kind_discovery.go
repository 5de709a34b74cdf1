package registry

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// endpointSlices: EndpointSlices keep metadata.generation, bumped on
// any change of endpoints, ports or address type.
var endpointSlices = &Resource{
	GroupVersion: discoveryV1, Name: "endpointslices", SingularName: "endpointslice", Kind: "EndpointSlice",
	Namespaced: true,
	Strategy: Strategy{
		Default: defaulter(defaultEndpointSlice),
		Validate: validator(func(s *discoveryv1.EndpointSlice) field.ErrorList {
			return validateEndpointSlice(s, supportedAddressTypes)
		}),
		ValidateUpdate: updateValidator(func(s, old *discoveryv1.EndpointSlice) field.ErrorList {
			errs := validateEndpointSlice(s, supportedAddressTypes.Union(deprecatedAddressTypes))
			return append(errs, validateImmutable(s.AddressType, old.AddressType, field.NewPath("addressType"))...)
		}),
		Table: tables.EndpointSlice.Convertor(nil),
	},
}

func defaultEndpointSlice(s *discoveryv1.EndpointSlice) {
	for i := range s.Ports {
		p := &s.Ports[i]
		if p.Name == nil {
			p.Name = new("")
		}
		if p.Protocol == nil {
			p.Protocol = new(corev1.ProtocolTCP)
		}
	}
}

var (
	supportedAddressTypes  = sets.New(string(discoveryv1.AddressTypeIPv4), string(discoveryv1.AddressTypeIPv6), string(discoveryv1.AddressTypeFQDN))
	deprecatedAddressTypes = sets.New("IP")
)

const (
	maxSliceEndpoints    = 1000
	maxEndpointAddresses = 100
	maxSlicePorts        = 100
)

func validateEndpointSlice(s *discoveryv1.EndpointSlice, addressTypes sets.Set[string]) field.ErrorList {
	errs := validateObjectMeta(&s.ObjectMeta, true, nameIsDNSSubdomain)
	atPath := field.NewPath("addressType")
	switch {
	case s.AddressType == "":
		errs = append(errs, field.Required(atPath, ""))
	case !addressTypes.Has(string(s.AddressType)):
		errs = append(errs, field.NotSupported(atPath, s.AddressType, sets.List(addressTypes)))
	}
	errs = append(errs, validateSliceEndpoints(s.Endpoints, s.AddressType, field.NewPath("endpoints"))...)
	return append(errs, validateSlicePorts(s.Ports, field.NewPath("ports"))...)
}

func validateSliceEndpoints(endpoints []discoveryv1.Endpoint, addressType discoveryv1.AddressType, p *field.Path) field.ErrorList {
	if len(endpoints) > maxSliceEndpoints {
		return field.ErrorList{field.TooMany(p, len(endpoints), maxSliceEndpoints)}
	}
	var errs field.ErrorList
	for i, ep := range endpoints {
		ip := p.Index(i)
		ap := ip.Child("addresses")
		if len(ep.Addresses) == 0 {
			errs = append(errs, field.Required(ap, "must contain at least 1 address"))
		} else if len(ep.Addresses) > maxEndpointAddresses {
			errs = append(errs, field.TooMany(ap, len(ep.Addresses), maxEndpointAddresses))
		}
		for j, addr := range ep.Addresses {
			errs = append(errs, validateSliceAddress(addr, addressType, ap.Index(j))...)
		}
		if ep.Hostname != nil {
			errs = append(errs, validateDNS1123Label(*ep.Hostname, ip.Child("hostname"))...)
		}
		if ep.NodeName != nil {
			errs = append(errs, validateName(*ep.NodeName, nameIsDNSSubdomain, false, ip.Child("nodeName"))...)
		}
	}
	return errs
}

func validateSliceAddress(addr string, addressType discoveryv1.AddressType, p *field.Path) field.ErrorList {
	switch addressType {
	case "IP":
		return validateIP(addr, p)
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
		a, err := netip.ParseAddr(addr)
		want := "IPv4"
		if addressType == discoveryv1.AddressTypeIPv6 {
			want = "IPv6"
		}
		if err != nil || (addressType == discoveryv1.AddressTypeIPv4) != a.Unmap().Is4() {
			return field.ErrorList{field.Invalid(p, addr, "must be a valid "+want+" address")}
		}
		if a.Unmap().IsLoopback() {
			// minik departs from kube here: its pods, and the API server
			// behind the kubernetes Service, live on loopback addresses.
			return nil
		}
		return validateNonSpecialIP(addr, p)
	case discoveryv1.AddressTypeFQDN:
		return validation.IsFullyQualifiedDomainName(p, addr)
	}
	return nil
}

func validateSlicePorts(ports []discoveryv1.EndpointPort, p *field.Path) field.ErrorList {
	if len(ports) > maxSlicePorts {
		return field.ErrorList{field.TooMany(p, len(ports), maxSlicePorts)}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		ip := p.Index(i)
		name := ""
		if port.Name != nil {
			name = *port.Name
		}
		if name != "" {
			errs = append(errs, validateDNS1123Label(name, ip.Child("name"))...)
		}
		if names.Has(name) {
			errs = append(errs, field.Duplicate(ip.Child("name"), name))
		} else {
			names.Insert(name)
		}
		if port.Protocol == nil {
			errs = append(errs, field.Required(ip.Child("protocol"), ""))
		} else if !supportedPortProtocols.Has(*port.Protocol) {
			errs = append(errs, field.NotSupported(ip.Child("protocol"), *port.Protocol, sets.List(supportedPortProtocols)))
		}
		if port.AppProtocol != nil {
			for _, msg := range validation.IsQualifiedName(*port.AppProtocol) {
				errs = append(errs, field.Invalid(ip.Child("appProtocol"), port.AppProtocol, msg))
			}
		}
	}
	return errs
}
