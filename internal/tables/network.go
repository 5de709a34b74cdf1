package tables

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	discoveryv1beta1 "k8s.io/api/discovery/v1beta1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Tables of discovery.k8s.io and networking.k8s.io kinds.

// maxListed is how many ports, endpoints or hosts a cell lists before
// "+ N more...".
const maxListed = 3

// EndpointSlice is kubectl's table of discovery.k8s.io EndpointSlices.
var EndpointSlice = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("AddressType", "string", discoveryv1beta1.EndpointSlice{}.SwaggerDoc()["addressType"]),
		col("Ports", "string", discoveryv1beta1.EndpointSlice{}.SwaggerDoc()["ports"]),
		col("Endpoints", "string", discoveryv1beta1.EndpointSlice{}.SwaggerDoc()["endpoints"]),
		ageColumn(),
	},
	func(es *discoveryv1.EndpointSlice, now time.Time) []interface{} {
		// A port with no number is listed by name, or as "*" (all ports).
		ports := make([]string, len(es.Ports))
		for i, p := range es.Ports {
			switch {
			case p.Port != nil:
				ports[i] = strconv.Itoa(int(*p.Port))
			case p.Name != nil:
				ports[i] = *p.Name
			default:
				ports[i] = "*"
			}
		}
		var addresses []string
		for _, e := range es.Endpoints {
			addresses = append(addresses, e.Addresses...)
		}
		return []interface{}{
			es.Name,
			string(es.AddressType),
			listWithMore(ports, maxListed),
			listWithMore(addresses, maxListed),
			age(es.CreationTimestamp, now),
		}
	},
)

// Ingress is kubectl's table of networking.k8s.io Ingresses.
var Ingress = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Class", "string", "The name of the IngressClass resource that should be used for additional configuration"),
		col("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule"),
		col("Address", "string", "Address is a list containing ingress points for the load-balancer"),
		col("Ports", "string", "Ports of TLS configurations that open"),
		ageColumn(),
	},
	func(ing *networkingv1.Ingress, now time.Time) []interface{} {
		class := "<none>"
		if ing.Spec.IngressClassName != nil {
			class = *ing.Spec.IngressClassName
		}
		points := make([]lbPoint, len(ing.Status.LoadBalancer.Ingress))
		for i, in := range ing.Status.LoadBalancer.Ingress {
			points[i] = lbPoint{ip: in.IP, hostname: in.Hostname}
		}
		ports := "80"
		if len(ing.Spec.TLS) > 0 {
			ports = "80, 443"
		}
		return []interface{}{
			ing.Name,
			class,
			ingressHosts(ing.Spec.Rules),
			loadBalancerAddresses(points),
			ports,
			age(ing.CreationTimestamp, now),
		}
	},
)

// ingressHosts is the HOSTS cell: the first three hosts named by the rules
// ("*" when none names one) and, when any rule follows the third host,
// "+ N more..." where N counts all rules beyond three, host or not, as
// kubectl does.
func ingressHosts(rules []networkingv1.IngressRule) string {
	var hosts []string
	more := false
	for _, r := range rules {
		if len(hosts) == maxListed {
			more = true
			break
		}
		if r.Host != "" {
			hosts = append(hosts, r.Host)
		}
	}
	if len(hosts) == 0 {
		return "*"
	}
	s := strings.Join(hosts, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", s, len(rules)-maxListed)
	}
	return s
}

// IngressClass is kubectl's table of networking.k8s.io IngressClasses.
var IngressClass = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Controller", "string", "Controller that is responsible for handling this class"),
		col("Parameters", "string", "A reference to a resource with additional parameters"),
		ageColumn(),
	},
	func(ic *networkingv1.IngressClass, now time.Time) []interface{} {
		params := "<none>"
		if p := ic.Spec.Parameters; p != nil {
			params = p.Kind
			if p.APIGroup != nil {
				params += "." + *p.APIGroup
			}
			params += "/" + p.Name
		}
		return []interface{}{ic.Name, ic.Spec.Controller, params, age(ic.CreationTimestamp, now)}
	},
)
