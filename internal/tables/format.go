package tables

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Shared column definitions and cell formatting. Descriptions come from the
// API types' generated Swagger docs, exactly where kube-apiserver takes them
// from, so that "kubectl explain"-style tooling reading the Table sees the
// same text.

var objectMetaDoc = metav1.ObjectMeta{}.SwaggerDoc()

// nameColumn is the first column of almost every table.
func nameColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]}
}

// ageColumn is the AGE column: the object's creationTimestamp as a short
// human duration.
func ageColumn() metav1.TableColumnDefinition {
	return col("Age", "string", objectMetaDoc["creationTimestamp"])
}

// col is a column shown by default.
func col(name, typ, description string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Description: description}
}

// wide is a column shown only with "-o wide" (priority 1).
func wide(name, typ, description string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Description: description, Priority: 1}
}

// withPriority returns c with another priority; kube's core Event table
// shows NAME only when wide, as its last column.
func withPriority(c metav1.TableColumnDefinition, priority int32) metav1.TableColumnDefinition {
	c.Priority = priority
	return c
}

// Descriptions of the template columns of workload controllers.
const (
	containersDescription = "Names of each container in the template."
	imagesDescription     = "Images referenced by each container in the template."
)

// age formats how long ago t was, as kubectl does: "<unknown>" for a zero
// time, else duration.HumanDuration (e.g. "45s", "5m3s", "3h", "12d").
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// microAge is age for a MicroTime.
func microAge(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// containerCells returns the CONTAINERS and IMAGES cells of a pod template:
// the containers' names and images, comma-separated, in spec order.
func containerCells(containers []corev1.Container) (names, images string) {
	n := make([]string, len(containers))
	im := make([]string, len(containers))
	for i, c := range containers {
		n[i] = c.Name
		im[i] = c.Image
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}

// selectorString renders a label selector as kubectl's Deployment table
// does: "" for a nil or empty selector, "<invalid>" for one that does not
// parse.
func selectorString(s *metav1.LabelSelector) string {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return "<invalid>"
	}
	return sel.String()
}

// listWithMore joins the first max items with commas and, when there are
// more, appends " + N more..."; an empty list is "<unset>".
func listWithMore(items []string, max int) string {
	if len(items) > max {
		return fmt.Sprintf("%s + %d more...", strings.Join(items[:max], ","), len(items)-max)
	}
	if len(items) == 0 {
		return "<unset>"
	}
	return strings.Join(items, ",")
}

// loadBalancerAddresses renders the ingress points of a load balancer (a
// Service's or an Ingress's status): for each, its IP, else its hostname;
// sorted, de-duplicated and comma-joined. Server-side tables are always
// generated wide, so the list is never clipped to 16 characters as
// kubectl's client-side narrow output once was.
func loadBalancerAddresses(points []lbPoint) string {
	result := sets.New[string]()
	for _, p := range points {
		switch {
		case p.ip != "":
			result.Insert(p.ip)
		case p.hostname != "":
			result.Insert(p.hostname)
		}
	}
	return strings.Join(sets.List(result), ",")
}

// lbPoint is one load-balancer ingress point, whichever API it comes from.
type lbPoint struct{ ip, hostname string }

// orNone returns s, or "<none>" when s is empty.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// orUnknown returns s, or "<unknown>" when s is empty.
func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}
