package tables

import (
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// networking.k8s.io tables beyond Ingresses: NetworkPolicies, IPAddresses
// and ServiceCIDRs, with kube's columns.

// NetworkPolicy is kube's NetworkPolicy printer: the pod selector as
// metav1.FormatLabelSelector renders it ("<none>" when it selects every
// pod of the namespace).
var NetworkPolicy = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Pod-Selector", "string", networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]),
		ageColumn(),
	},
	func(np *networkingv1.NetworkPolicy, now time.Time) []interface{} {
		return []interface{}{np.Name, metav1.FormatLabelSelector(&np.Spec.PodSelector), age(np.CreationTimestamp, now)}
	},
)

// IPAddress is kube's IPAddress printer: the parent as
// <resource>[.<group>]/[<namespace>/]<name>, "<none>" without one.
// kube's printer also appends an age cell for which it declares no
// column (kubectl prints it under no header); minik gives the two
// declared columns only.
var IPAddress = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("ParentRef", "string", networkingv1.IPAddressSpec{}.SwaggerDoc()["parentRef"]),
	},
	func(ip *networkingv1.IPAddress, _ time.Time) []interface{} {
		parent := "<none>"
		if ref := ip.Spec.ParentRef; ref != nil {
			parent = strings.ToLower(schema.GroupResource{Group: ref.Group, Resource: ref.Resource}.String())
			if ref.Namespace != "" {
				parent += "/" + ref.Namespace
			}
			parent += "/" + ref.Name
		}
		return []interface{}{ip.Name, parent}
	},
)

// ServiceCIDR is kube's ServiceCIDR printer: the CIDRs joined by commas.
var ServiceCIDR = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("CIDRs", "string", networkingv1.ServiceCIDRSpec{}.SwaggerDoc()["cidrs"]),
		ageColumn(),
	},
	func(sc *networkingv1.ServiceCIDR, now time.Time) []interface{} {
		return []interface{}{sc.Name, strings.Join(sc.Spec.CIDRs, ","), age(sc.CreationTimestamp, now)}
	},
)
