package tables

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Tables of core/v1 kinds other than Pod and Event.

// Namespace is kubectl's table of Namespaces.
var Namespace = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Status", "string", "The status of the namespace"),
		ageColumn(),
	},
	func(ns *corev1.Namespace, now time.Time) []interface{} {
		return []interface{}{ns.Name, string(ns.Status.Phase), age(ns.CreationTimestamp, now)}
	},
)

// Service is kubectl's table of Services.
var Service = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Type", "string", corev1.ServiceSpec{}.SwaggerDoc()["type"]),
		col("Cluster-IP", "string", corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"]),
		col("External-IP", "string", corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"]),
		col("Port(s)", "string", corev1.ServiceSpec{}.SwaggerDoc()["ports"]),
		ageColumn(),
		wide("Selector", "string", corev1.ServiceSpec{}.SwaggerDoc()["selector"]),
	},
	func(svc *corev1.Service, now time.Time) []interface{} {
		clusterIP := svc.Spec.ClusterIP
		if len(svc.Spec.ClusterIPs) > 0 {
			clusterIP = svc.Spec.ClusterIPs[0]
		}
		return []interface{}{
			svc.Name,
			string(svc.Spec.Type),
			orNone(clusterIP),
			serviceExternalIP(svc),
			orNone(servicePorts(svc.Spec.Ports)),
			age(svc.CreationTimestamp, now),
			labels.FormatLabels(svc.Spec.Selector),
		}
	},
)

// serviceExternalIP is the EXTERNAL-IP cell: the external IPs, plus for a
// LoadBalancer its ingress points ("<pending>" until it has some), or an
// ExternalName service's name.
func serviceExternalIP(svc *corev1.Service) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		return orNone(strings.Join(svc.Spec.ExternalIPs, ","))
	case corev1.ServiceTypeLoadBalancer:
		points := make([]lbPoint, len(svc.Status.LoadBalancer.Ingress))
		for i, in := range svc.Status.LoadBalancer.Ingress {
			points[i] = lbPoint{ip: in.IP, hostname: in.Hostname}
		}
		lb := loadBalancerAddresses(points)
		if len(svc.Spec.ExternalIPs) > 0 {
			var all []string
			if lb != "" {
				all = strings.Split(lb, ",")
			}
			return strings.Join(append(all, svc.Spec.ExternalIPs...), ",")
		}
		if lb != "" {
			return lb
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

// servicePorts is the PORT(S) cell: "80/TCP,443:30443/TCP".
func servicePorts(ports []corev1.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, p := range ports {
		if p.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		} else {
			pieces[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		}
	}
	return strings.Join(pieces, ",")
}

// ConfigMap is kubectl's table of ConfigMaps.
var ConfigMap = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Data", "string", corev1.ConfigMap{}.SwaggerDoc()["data"]),
		ageColumn(),
	},
	func(cm *corev1.ConfigMap, now time.Time) []interface{} {
		return []interface{}{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), age(cm.CreationTimestamp, now)}
	},
)

// Secret is kubectl's table of Secrets.
var Secret = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Type", "string", corev1.Secret{}.SwaggerDoc()["type"]),
		col("Data", "string", corev1.Secret{}.SwaggerDoc()["data"]),
		ageColumn(),
	},
	func(s *corev1.Secret, now time.Time) []interface{} {
		// kube counts the keys of data after merging stringData into it,
		// which its v1 conversion does.
		keys := len(s.Data)
		for k := range s.StringData {
			if _, ok := s.Data[k]; !ok {
				keys++
			}
		}
		return []interface{}{s.Name, string(s.Type), int64(keys), age(s.CreationTimestamp, now)}
	},
)

// ServiceAccount has no SECRETS column: kubectl dropped it when
// service accounts stopped getting token secrets.
var ServiceAccount = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		ageColumn(),
	},
	func(sa *corev1.ServiceAccount, now time.Time) []interface{} {
		return []interface{}{sa.Name, age(sa.CreationTimestamp, now)}
	},
)

// Node is kubectl's table of Nodes.
var Node = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Status", "string", "The status of the node"),
		col("Roles", "string", "The roles of the node"),
		ageColumn(),
		col("Version", "string", corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"]),
		wide("Internal-IP", "string", corev1.NodeStatus{}.SwaggerDoc()["addresses"]),
		wide("External-IP", "string", corev1.NodeStatus{}.SwaggerDoc()["addresses"]),
		wide("OS-Image", "string", corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"]),
		wide("Kernel-Version", "string", corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"]),
		wide("Container-Runtime", "string", corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"]),
	},
	func(n *corev1.Node, now time.Time) []interface{} {
		info := n.Status.NodeInfo
		return []interface{}{
			n.Name,
			nodeStatus(n),
			orNone(strings.Join(nodeRoles(n), ",")),
			age(n.CreationTimestamp, now),
			info.KubeletVersion,
			nodeAddress(n, corev1.NodeInternalIP),
			nodeAddress(n, corev1.NodeExternalIP),
			orUnknown(info.OSImage),
			orUnknown(info.KernelVersion),
			orUnknown(info.ContainerRuntimeVersion),
		}
	},
)

// nodeStatus is the STATUS cell: Ready, NotReady or Unknown (no Ready
// condition), then ",SchedulingDisabled" for a cordoned node.
func nodeStatus(n *corev1.Node) string {
	status := "Unknown"
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			status = "NotReady"
			if c.Status == corev1.ConditionTrue {
				status = "Ready"
			}
		}
	}
	if n.Spec.Unschedulable {
		status += ",SchedulingDisabled"
	}
	return status
}

// Node role labels: node-role.kubernetes.io/<role>="" or
// kubernetes.io/role=<role>.
const (
	nodeRoleLabelPrefix = "node-role.kubernetes.io/"
	nodeRoleLabel       = "kubernetes.io/role"
)

// nodeRoles returns the sorted roles named by a node's labels.
func nodeRoles(n *corev1.Node) []string {
	roles := sets.New[string]()
	for k, v := range n.Labels {
		switch {
		case strings.HasPrefix(k, nodeRoleLabelPrefix):
			if role := strings.TrimPrefix(k, nodeRoleLabelPrefix); role != "" {
				roles.Insert(role)
			}
		case k == nodeRoleLabel && v != "":
			roles.Insert(v)
		}
	}
	return sets.List(roles)
}

// nodeAddress returns a node's first address of a type, or "<none>".
func nodeAddress(n *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

// ResourceQuota is kubectl's table of ResourceQuotas.
var ResourceQuota = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Request", "string", "Request represents a minimum amount of cpu/memory that a container may consume."),
		col("Limit", "string", "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
		ageColumn(),
	},
	func(q *corev1.ResourceQuota, now time.Time) []interface{} {
		names := make([]string, 0, len(q.Status.Hard))
		for name := range q.Status.Hard {
			names = append(names, string(name))
		}
		sort.Strings(names)
		var requests, limits []string
		for _, name := range names {
			used := q.Status.Used[corev1.ResourceName(name)]
			hard := q.Status.Hard[corev1.ResourceName(name)]
			entry := fmt.Sprintf("%s: %s/%s", name, used.String(), hard.String())
			if strings.HasPrefix(name, "limits.") {
				limits = append(limits, entry)
			} else {
				requests = append(requests, entry)
			}
		}
		return []interface{}{q.Name, strings.Join(requests, ", "), strings.Join(limits, ", "), age(q.CreationTimestamp, now)}
	},
)
