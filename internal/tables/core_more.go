package tables

//lint:file-ignore SA1019 core/v1 Endpoints and ComponentStatus are deprecated, and kube-apiserver still serves them: so does minik.

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Endpoints is kubectl's table of core Endpoints.
var Endpoints = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Endpoints", "string", corev1.Endpoints{}.SwaggerDoc()["subsets"]),
		ageColumn(),
	},
	func(ep *corev1.Endpoints, now time.Time) []interface{} {
		return []interface{}{ep.Name, endpointsCell(ep), age(ep.CreationTimestamp, now)}
	},
)

// endpointsCell is the ENDPOINTS cell as kube's printer formats it: the
// ready addresses, each with every port of its subset (host:port), the
// first maxListed of them, then " + N more..."; the bare addresses of a
// subset without ports; "<none>" without subsets. Not-ready addresses
// are not shown.
func endpointsCell(ep *corev1.Endpoints) string {
	if len(ep.Subsets) == 0 {
		return "<none>"
	}
	var list []string
	count := 0
	for _, ss := range ep.Subsets {
		if len(ss.Ports) == 0 {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) < maxListed {
					list = append(list, a.IP)
				}
			}
			continue
		}
		for _, port := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) < maxListed {
					list = append(list, net.JoinHostPort(a.IP, strconv.Itoa(int(port.Port))))
				}
			}
		}
	}
	ret := strings.Join(list, ",")
	if count > maxListed {
		return fmt.Sprintf("%s + %d more...", ret, count-maxListed)
	}
	return ret
}

// PodTemplate is kubectl's table of PodTemplates: no AGE column.
var PodTemplate = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Containers", "string", containersDescription),
		col("Images", "string", imagesDescription),
		col("Pod Labels", "string", "The labels for the pod template."),
	},
	func(pt *corev1.PodTemplate, _ time.Time) []interface{} {
		names, images := containerCells(pt.Template.Spec.Containers)
		return []interface{}{pt.Name, names, images, labels.FormatLabels(pt.Template.Labels)}
	},
)

// ComponentStatus is kubectl's table of ComponentStatuses: the Healthy
// condition's status ("Healthy", "Unhealthy", or "Unknown" without the
// condition), message and error.
var ComponentStatus = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Status", "string", "Status of the component conditions"),
		col("Message", "string", "Message of the component conditions"),
		col("Error", "string", "Error of the component conditions"),
	},
	func(cs *corev1.ComponentStatus, _ time.Time) []interface{} {
		status, message, errText := "Unknown", "", ""
		for _, c := range cs.Conditions {
			if c.Type != corev1.ComponentHealthy {
				continue
			}
			status = "Unhealthy"
			if c.Status == corev1.ConditionTrue {
				status = "Healthy"
			}
			message, errText = c.Message, c.Error
			break
		}
		return []interface{}{cs.Name, status, message, errText}
	},
)
