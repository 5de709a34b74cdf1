package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/reference"
)

// Indentation levels of descriptions: two spaces each.
const (
	level0 = iota
	level1
	level2
	level3
	level4
)

// maxAnnotationLen is where descriptions cut long annotation values.
const maxAnnotationLen = 140

// prefixWriter writes the lines of a description at indentation levels,
// escaping terminal control characters.
type prefixWriter struct {
	out io.Writer
}

// Write writes format at level (two spaces a level).
func (w *prefixWriter) Write(level int, format string, a ...any) {
	fmt.Fprint(w.out, escapeTerminal(strings.Repeat("  ", level)+fmt.Sprintf(format, a...)))
}

// WriteLine writes its arguments and a line break.
func (w *prefixWriter) WriteLine(a ...any) {
	fmt.Fprint(w.out, escapeTerminal(fmt.Sprintln(a...)))
}

// Flush ends the current block of aligned columns.
func (w *prefixWriter) Flush() {
	if f, ok := w.out.(*tabwriter.Writer); ok {
		f.Flush()
	}
}

// tabbedString renders a description through kubectl's description
// tabwriter: columns padded by two spaces, tab stops every eight.
func tabbedString(f func(w *prefixWriter) error) (string, error) {
	buf := &bytes.Buffer{}
	out := tabwriter.NewWriter(buf, 0, 8, 2, ' ', 0)
	if err := f(&prefixWriter{out: out}); err != nil {
		return "", err
	}
	out.Flush()
	return buf.String(), nil
}

// rfc1123z formats a time as descriptions do.
func rfc1123z(t metav1.Time) string { return t.Time.Format(time.RFC1123Z) }

// printLabelsMultiline prints "Title:  k=v" with one pair a line, sorted.
func printLabelsMultiline(w *prefixWriter, title string, m map[string]string) {
	printLabelsMultilineWithIndent(w, "", title, "\t", m, nil)
}

func printLabelsMultilineWithIndent(w *prefixWriter, initialIndent, title, innerIndent string, m map[string]string, skip sets.Set[string]) {
	w.Write(level0, "%s%s:%s", initialIndent, title, innerIndent)
	keys := make([]string, 0, len(m))
	for k := range m {
		if skip.Has(k) {
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		w.WriteLine("<none>")
		return
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i != 0 {
			w.Write(level0, "%s", initialIndent)
			w.Write(level0, "%s", innerIndent)
		}
		w.Write(level0, "%s=%s\n", k, m[k])
	}
}

// printAnnotationsMultiline prints annotations (without the last-applied
// configuration), long or multi-line values on lines of their own.
func printAnnotationsMultiline(w *prefixWriter, title string, annotations map[string]string) {
	w.Write(level0, "%s:\t", title)
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		if k == corev1.LastAppliedConfigAnnotation {
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		w.WriteLine("<none>")
		return
	}
	sort.Strings(keys)
	indent := "\t"
	for i, k := range keys {
		if i != 0 {
			w.Write(level0, "%s", indent)
		}
		value := strings.TrimSuffix(annotations[k], "\n")
		if len(value)+len(k)+2 > maxAnnotationLen || strings.Contains(value, "\n") {
			w.Write(level0, "%s:\n", k)
			for _, s := range strings.Split(value, "\n") {
				if len(s) > maxAnnotationLen-2 {
					s = s[:maxAnnotationLen-2] + "..."
				}
				w.Write(level0, "%s  %s\n", indent, s)
			}
			continue
		}
		w.Write(level0, "%s: %s\n", k, value)
	}
}

// printTolerationsMultiline prints tolerations as kubectl does
// ("key=value:Effect op=Exists for 300s").
func printTolerationsMultiline(w *prefixWriter, title string, tolerations []corev1.Toleration) {
	w.Write(level0, "%s:\t", title)
	if len(tolerations) == 0 {
		w.WriteLine("<none>")
		return
	}
	sorted := append([]corev1.Toleration(nil), tolerations...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Key < sorted[j].Key })
	for i, t := range sorted {
		if i != 0 {
			w.Write(level0, "%s", "")
			w.Write(level0, "%s", "\t")
		}
		w.Write(level0, "%s", t.Key)
		if t.Value != "" {
			w.Write(level0, "=%s", t.Value)
		}
		if t.Effect != "" {
			w.Write(level0, ":%s", t.Effect)
		}
		if t.Operator == corev1.TolerationOpExists && t.Value == "" {
			if t.Key != "" || t.Effect != "" {
				w.Write(level0, " op=Exists")
			} else {
				w.Write(level0, "op=Exists")
			}
		}
		if t.TolerationSeconds != nil {
			w.Write(level0, " for %ds", *t.TolerationSeconds)
		}
		w.Write(level0, "\n")
	}
}

// printTaintsMultiline prints node taints sorted by effect and key.
func printTaintsMultiline(w *prefixWriter, title string, taints []corev1.Taint) {
	w.Write(level0, "%s:\t", title)
	if len(taints) == 0 {
		w.WriteLine("<none>")
		return
	}
	sorted := append([]corev1.Taint(nil), taints...)
	sort.Slice(sorted, func(i, j int) bool {
		return string(sorted[i].Effect)+","+sorted[i].Key < string(sorted[j].Effect)+","+sorted[j].Key
	})
	for i, t := range sorted {
		if i != 0 {
			w.Write(level0, "\t")
		}
		w.Write(level0, "%s\n", t.ToString())
	}
}

// translateMicroTimestampSince is the age of a micro timestamp.
func translateMicroTimestampSince(ts metav1.MicroTime) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(ts.Time))
}

// searchEvents lists the events about obj (by involved object name,
// namespace, kind and uid, as kubectl's field selector does), page by page.
func (d *describer) searchEvents(ctx context.Context, obj runtime.Object) (*corev1.EventList, error) {
	ref, err := reference.GetReference(scheme.Scheme, obj)
	if err != nil {
		return nil, err
	}
	return d.searchEventsRef(ctx, ref)
}

func (d *describer) searchEventsRef(ctx context.Context, ref *corev1.ObjectReference) (*corev1.EventList, error) {
	set := fields.Set{"involvedObject.name": ref.Name, "involvedObject.namespace": ref.Namespace}
	if ref.Kind != "" {
		set["involvedObject.kind"] = ref.Kind
	}
	if ref.UID != "" {
		set["involvedObject.uid"] = string(ref.UID)
	}
	opts := metav1.ListOptions{FieldSelector: fields.SelectorFromSet(set).String(), Limit: d.chunkSize}
	events := &corev1.EventList{}
	for {
		page, err := d.client.CoreV1().Events(ref.Namespace).List(ctx, opts)
		if err != nil {
			return events, enhanceListError(err, opts, "events")
		}
		events.Items = append(events.Items, page.Items...)
		if page.Continue == "" {
			return events, nil
		}
		opts.Continue = page.Continue
	}
}

// describeEvents prints the Events table (or "Events: <none>"), oldest
// last seen first.
func describeEvents(el *corev1.EventList, w *prefixWriter) {
	if len(el.Items) == 0 {
		w.Write(level0, "Events:\t<none>\n")
		return
	}
	w.Flush()
	sort.Sort(sortableEvents(el.Items))
	w.Write(level0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n")
	w.Write(level1, "----\t------\t----\t----\t-------\n")
	for _, e := range el.Items {
		first := translateMicroTimestampSince(e.EventTime)
		if e.EventTime.IsZero() {
			first = translateTimestampSince(e.FirstTimestamp)
		}
		interval := first
		switch {
		case e.Series != nil:
			interval = fmt.Sprintf("%s (x%d over %s)", translateMicroTimestampSince(e.Series.LastObservedTime), e.Series.Count, first)
		case e.Count > 1:
			interval = fmt.Sprintf("%s (x%d over %s)", translateTimestampSince(e.LastTimestamp), e.Count, first)
		}
		source := e.Source.Component
		if source == "" {
			source = e.ReportingController
		}
		w.Write(level1, "%v\t%v\t%s\t%v\t%v\n", e.Type, e.Reason, interval, source, strings.TrimSpace(e.Message))
	}
}

// sortableEvents orders events by last timestamp, as kubectl does.
type sortableEvents []corev1.Event

func (l sortableEvents) Len() int      { return len(l) }
func (l sortableEvents) Swap(i, j int) { l[i], l[j] = l[j], l[i] }
func (l sortableEvents) Less(i, j int) bool {
	return l[i].LastTimestamp.Time.Before(l[j].LastTimestamp.Time)
}

// printEvents searches and prints the events of obj when they are shown.
func (d *describer) printEvents(ctx context.Context, w *prefixWriter, events *corev1.EventList) {
	if events != nil {
		describeEvents(events, w)
	}
}

// events returns the events of obj, or nil when events are not shown.
func (d *describer) events(ctx context.Context, obj runtime.Object) *corev1.EventList {
	if !d.showEvents {
		return nil
	}
	events, _ := d.searchEvents(ctx, obj)
	return events
}

// describePodTemplate prints the "Pod Template:" section of workloads.
func describePodTemplate(template *corev1.PodTemplateSpec, w *prefixWriter) {
	w.Write(level0, "Pod Template:\n")
	if template == nil {
		w.Write(level1, "<unset>")
		return
	}
	printLabelsMultiline(w, "  Labels", template.Labels)
	if len(template.Annotations) > 0 {
		printAnnotationsMultiline(w, "  Annotations", template.Annotations)
	}
	if template.Spec.ServiceAccountName != "" {
		w.Write(level1, "Service Account:\t%s\n", template.Spec.ServiceAccountName)
	}
	if len(template.Spec.InitContainers) > 0 {
		describeContainers("Init Containers", template.Spec.InitContainers, nil, nil, w, "  ")
	}
	describeContainers("Containers", template.Spec.Containers, nil, nil, w, "  ")
	describeVolumes(template.Spec.Volumes, w, "  ")
	describeTopologySpreadConstraints(template.Spec.TopologySpreadConstraints, w, "  ")
	if template.Spec.PriorityClassName != "" {
		w.Write(level1, "Priority Class Name:\t%s\n", template.Spec.PriorityClassName)
	}
	printLabelsMultiline(w, "  Node-Selectors", template.Spec.NodeSelector)
	printTolerationsMultiline(w, "  Tolerations", template.Spec.Tolerations)
}

// describeContainers prints containers with their state (for pods) or
// as templates.
func describeContainers(label string, containers []corev1.Container, statuses []corev1.ContainerStatus, pod *corev1.Pod, w *prefixWriter, space string) {
	byName := map[string]corev1.ContainerStatus{}
	for _, s := range statuses {
		byName[s.Name] = s
	}
	none := ""
	if len(containers) == 0 {
		none = " <none>"
	}
	w.Write(level0, "%s%s:%s\n", space, label, none)
	for i := range containers {
		c := &containers[i]
		status, ok := byName[c.Name]
		nameIndent := ""
		if space != "" {
			nameIndent = " "
		}
		w.Write(level1, "%s%v:\n", nameIndent, c.Name)
		if ok {
			w.Write(level2, "Container ID:\t%s\n", status.ContainerID)
		}
		w.Write(level2, "Image:\t%s\n", c.Image)
		if ok {
			w.Write(level2, "Image ID:\t%s\n", status.ImageID)
		}
		var ports, hostPorts []string
		for _, p := range c.Ports {
			ports = append(ports, fmt.Sprintf("%d/%s", p.ContainerPort, p.Protocol))
			hostPorts = append(hostPorts, fmt.Sprintf("%d/%s", p.HostPort, p.Protocol))
		}
		if portString := strings.Join(ports, ", "); strings.Contains(portString, ",") {
			w.Write(level2, "Ports:\t%s\n", portString)
		} else {
			w.Write(level2, "Port:\t%s\n", stringOrNone(portString))
		}
		if hostPortString := strings.Join(hostPorts, ", "); strings.Contains(hostPortString, ",") {
			w.Write(level2, "Host Ports:\t%s\n", hostPortString)
		} else {
			w.Write(level2, "Host Port:\t%s\n", stringOrNone(hostPortString))
		}
		if c.SecurityContext != nil && c.SecurityContext.SeccompProfile != nil {
			w.Write(level2, "SeccompProfile:\t%s\n", c.SecurityContext.SeccompProfile.Type)
		}
		if len(c.Command) > 0 {
			w.Write(level2, "Command:\n")
			for _, cmd := range c.Command {
				for _, s := range strings.Split(cmd, "\n") {
					w.Write(level3, "%s\n", s)
				}
			}
		}
		if len(c.Args) > 0 {
			w.Write(level2, "Args:\n")
			for _, arg := range c.Args {
				for _, s := range strings.Split(arg, "\n") {
					w.Write(level3, "%s\n", s)
				}
			}
		}
		if ok {
			describeContainerState("State", status.State, w)
			if status.LastTerminationState.Terminated != nil {
				describeContainerState("Last State", status.LastTerminationState, w)
			}
			w.Write(level2, "Ready:\t%v\n", printBool(status.Ready))
			w.Write(level2, "Restart Count:\t%d\n", status.RestartCount)
		}
		describeResources(&c.Resources, w, level2)
		if c.LivenessProbe != nil {
			w.Write(level2, "Liveness:\t%s\n", describeProbe(c.LivenessProbe))
		}
		if c.ReadinessProbe != nil {
			w.Write(level2, "Readiness:\t%s\n", describeProbe(c.ReadinessProbe))
		}
		if c.StartupProbe != nil {
			w.Write(level2, "Startup:\t%s\n", describeProbe(c.StartupProbe))
		}
		if len(c.EnvFrom) > 0 {
			w.Write(level2, "Environment Variables from:\n")
			for _, e := range c.EnvFrom {
				from, name, optional := "", "", false
				if e.ConfigMapRef != nil {
					from, name = "ConfigMap", e.ConfigMapRef.Name
					optional = e.ConfigMapRef.Optional != nil && *e.ConfigMapRef.Optional
				} else if e.SecretRef != nil {
					from, name = "Secret", e.SecretRef.Name
					optional = e.SecretRef.Optional != nil && *e.SecretRef.Optional
				}
				if e.Prefix == "" {
					w.Write(level3, "%s\t%s\tOptional: %t\n", name, from, optional)
				} else {
					w.Write(level3, "%s\t%s with prefix '%s'\tOptional: %t\n", name, from, e.Prefix, optional)
				}
			}
		}
		describeEnv(c, pod, w)
		describeMounts(c, w)
	}
}

// describeContainerState prints a State or Last State.
func describeContainerState(name string, state corev1.ContainerState, w *prefixWriter) {
	switch {
	case state.Running != nil:
		w.Write(level2, "%s:\tRunning\n", name)
		w.Write(level3, "Started:\t%v\n", rfc1123z(state.Running.StartedAt))
	case state.Waiting != nil:
		w.Write(level2, "%s:\tWaiting\n", name)
		if state.Waiting.Reason != "" {
			w.Write(level3, "Reason:\t%s\n", state.Waiting.Reason)
		}
	case state.Terminated != nil:
		w.Write(level2, "%s:\tTerminated\n", name)
		if state.Terminated.Reason != "" {
			w.Write(level3, "Reason:\t%s\n", state.Terminated.Reason)
		}
		if state.Terminated.Message != "" {
			w.Write(level3, "Message:\t%s\n", state.Terminated.Message)
		}
		w.Write(level3, "Exit Code:\t%d\n", state.Terminated.ExitCode)
		if state.Terminated.Signal > 0 {
			w.Write(level3, "Signal:\t%d\n", state.Terminated.Signal)
		}
		w.Write(level3, "Started:\t%s\n", rfc1123z(state.Terminated.StartedAt))
		w.Write(level3, "Finished:\t%s\n", rfc1123z(state.Terminated.FinishedAt))
	default:
		w.Write(level2, "%s:\tWaiting\n", name)
	}
}

// describeResources prints Limits and Requests, sorted by resource name.
func describeResources(r *corev1.ResourceRequirements, w *prefixWriter, level int) {
	if r == nil {
		return
	}
	if len(r.Limits) > 0 {
		w.Write(level, "Limits:\n")
	}
	for _, name := range sortedResourceNames(r.Limits) {
		q := r.Limits[name]
		w.Write(level+1, "%s:\t%s\n", name, q.String())
	}
	if len(r.Requests) > 0 {
		w.Write(level, "Requests:\n")
	}
	for _, name := range sortedResourceNames(r.Requests) {
		q := r.Requests[name]
		w.Write(level+1, "%s:\t%s\n", name, q.String())
	}
}

func sortedResourceNames(list corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(list))
	for n := range list {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

// describeProbe renders a probe as "http-get http://:80/ delay=0s ...".
func describeProbe(p *corev1.Probe) string {
	attrs := fmt.Sprintf("delay=%ds timeout=%ds period=%ds #success=%d #failure=%d", p.InitialDelaySeconds, p.TimeoutSeconds, p.PeriodSeconds, p.SuccessThreshold, p.FailureThreshold)
	switch {
	case p.Exec != nil:
		return fmt.Sprintf("exec %v %s", p.Exec.Command, attrs)
	case p.HTTPGet != nil:
		u := &url.URL{Scheme: strings.ToLower(string(p.HTTPGet.Scheme)), Path: p.HTTPGet.Path}
		if port := p.HTTPGet.Port.String(); port != "" {
			u.Host = net.JoinHostPort(p.HTTPGet.Host, port)
		} else {
			u.Host = p.HTTPGet.Host
		}
		return fmt.Sprintf("http-get %s %s", u.String(), attrs)
	case p.TCPSocket != nil:
		return fmt.Sprintf("tcp-socket %s:%s %s", p.TCPSocket.Host, p.TCPSocket.Port.String(), attrs)
	case p.GRPC != nil:
		service := ""
		if p.GRPC.Service != nil {
			service = *p.GRPC.Service
		}
		return fmt.Sprintf("grpc <pod>:%d %s %s", p.GRPC.Port, service, attrs)
	}
	return fmt.Sprintf("unknown %s", attrs)
}

// describeEnv prints the Environment of a container.
func describeEnv(c *corev1.Container, pod *corev1.Pod, w *prefixWriter) {
	if len(c.Env) == 0 {
		w.Write(level2, "Environment:\t<none>\n")
	} else {
		w.Write(level2, "Environment:\n")
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			for i, s := range strings.Split(e.Value, "\n") {
				if i == 0 {
					w.Write(level3, "%s:\t%s\n", e.Name, s)
				} else {
					w.Write(level3, "\t%s\n", s)
				}
			}
			continue
		}
		switch {
		case e.ValueFrom.FieldRef != nil:
			value := ""
			if pod != nil {
				value = podFieldValue(pod, e.ValueFrom.FieldRef.FieldPath)
			}
			w.Write(level3, "%s:\t%s (%s:%s)\n", e.Name, value, e.ValueFrom.FieldRef.APIVersion, e.ValueFrom.FieldRef.FieldPath)
		case e.ValueFrom.ResourceFieldRef != nil:
			w.Write(level3, "%s:\t%s (%s)\n", e.Name, containerResourceValue(c, e.ValueFrom.ResourceFieldRef), e.ValueFrom.ResourceFieldRef.Resource)
		case e.ValueFrom.SecretKeyRef != nil:
			optional := e.ValueFrom.SecretKeyRef.Optional != nil && *e.ValueFrom.SecretKeyRef.Optional
			w.Write(level3, "%s:\t<set to the key '%s' in secret '%s'>\tOptional: %t\n", e.Name, e.ValueFrom.SecretKeyRef.Key, e.ValueFrom.SecretKeyRef.Name, optional)
		case e.ValueFrom.ConfigMapKeyRef != nil:
			optional := e.ValueFrom.ConfigMapKeyRef.Optional != nil && *e.ValueFrom.ConfigMapKeyRef.Optional
			w.Write(level3, "%s:\t<set to the key '%s' of config map '%s'>\tOptional: %t\n", e.Name, e.ValueFrom.ConfigMapKeyRef.Key, e.ValueFrom.ConfigMapKeyRef.Name, optional)
		}
	}
}

// podFieldValue resolves the downward-API fields describe shows.
func podFieldValue(pod *corev1.Pod, path string) string {
	switch path {
	case "metadata.name":
		return pod.Name
	case "metadata.namespace":
		return pod.Namespace
	case "metadata.uid":
		return string(pod.UID)
	case "spec.nodeName":
		return pod.Spec.NodeName
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName
	case "status.hostIP":
		return pod.Status.HostIP
	case "status.podIP":
		return pod.Status.PodIP
	}
	if strings.HasPrefix(path, "metadata.labels['") && strings.HasSuffix(path, "']") {
		return pod.Labels[path[len("metadata.labels['"):len(path)-2]]
	}
	if strings.HasPrefix(path, "metadata.annotations['") && strings.HasSuffix(path, "']") {
		return pod.Annotations[path[len("metadata.annotations['"):len(path)-2]]
	}
	return ""
}

// containerResourceValue is the value of a resourceFieldRef, "node
// allocatable" for unset limits.
func containerResourceValue(c *corev1.Container, ref *corev1.ResourceFieldSelector) string {
	var q *corev1.ResourceList
	name := ref.Resource
	switch {
	case strings.HasPrefix(name, "limits."):
		q = &c.Resources.Limits
		name = strings.TrimPrefix(name, "limits.")
	case strings.HasPrefix(name, "requests."):
		q = &c.Resources.Requests
		name = strings.TrimPrefix(name, "requests.")
	default:
		return ""
	}
	v, ok := (*q)[corev1.ResourceName(name)]
	if !ok || v.IsZero() {
		if ref.Resource == "limits.cpu" || ref.Resource == "limits.memory" {
			return "node allocatable"
		}
		return "0"
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		if name == "cpu" {
			return strconv.FormatInt(v.MilliValue()/1000+boolInt(v.MilliValue()%1000 != 0), 10)
		}
		return strconv.FormatInt(v.Value(), 10)
	}
	return strconv.FormatInt(int64(float64(v.MilliValue())/float64(divisor.MilliValue())+0.999999), 10)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// describeMounts prints a container's volume mounts, sorted by path.
func describeMounts(c *corev1.Container, w *prefixWriter) {
	if len(c.VolumeMounts) == 0 {
		w.Write(level2, "Mounts:\t<none>\n")
	} else {
		w.Write(level2, "Mounts:\n")
	}
	mounts := append([]corev1.VolumeMount(nil), c.VolumeMounts...)
	sort.Slice(mounts, func(i, j int) bool { return mounts[i].MountPath < mounts[j].MountPath })
	for _, m := range mounts {
		flags := []string{"rw"}
		if m.ReadOnly {
			flags = []string{"ro"}
		}
		if m.SubPath != "" {
			flags = append(flags, fmt.Sprintf("path=%q", m.SubPath))
		}
		w.Write(level3, "%s from %s (%s)\n", m.MountPath, m.Name, strings.Join(flags, ","))
	}
	if len(c.VolumeDevices) > 0 {
		w.Write(level2, "Devices:\n")
		devices := append([]corev1.VolumeDevice(nil), c.VolumeDevices...)
		sort.Slice(devices, func(i, j int) bool { return devices[i].DevicePath < devices[j].DevicePath })
		for _, d := range devices {
			w.Write(level3, "%s from %s\n", d.DevicePath, d.Name)
		}
	}
}

// describeVolumes prints the Volumes section for the common volume types.
func describeVolumes(volumes []corev1.Volume, w *prefixWriter, space string) {
	if len(volumes) == 0 {
		w.Write(level0, "%sVolumes:\t<none>\n", space)
		return
	}
	w.Write(level0, "%sVolumes:\n", space)
	for _, v := range volumes {
		nameIndent := ""
		if space != "" {
			nameIndent = " "
		}
		w.Write(level1, "%s%v:\n", nameIndent, v.Name)
		src := v.VolumeSource
		switch {
		case src.HostPath != nil:
			t := "<none>"
			if src.HostPath.Type != nil {
				t = string(*src.HostPath.Type)
			}
			w.Write(level2, "Type:\tHostPath (bare host directory volume)\n    Path:\t%v\n    HostPathType:\t%v\n", src.HostPath.Path, t)
		case src.EmptyDir != nil:
			limit := "<unset>"
			if src.EmptyDir.SizeLimit != nil && src.EmptyDir.SizeLimit.Sign() > 0 {
				limit = src.EmptyDir.SizeLimit.String()
			}
			w.Write(level2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t%v\n    SizeLimit:\t%v\n", src.EmptyDir.Medium, limit)
		case src.Secret != nil:
			optional := src.Secret.Optional != nil && *src.Secret.Optional
			w.Write(level2, "Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t%v\n    Optional:\t%v\n", src.Secret.SecretName, optional)
		case src.ConfigMap != nil:
			optional := src.ConfigMap.Optional != nil && *src.ConfigMap.Optional
			w.Write(level2, "Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t%v\n    Optional:\t%v\n", src.ConfigMap.Name, optional)
		case src.PersistentVolumeClaim != nil:
			w.Write(level2, "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:\t%v\n    ReadOnly:\t%v\n", src.PersistentVolumeClaim.ClaimName, src.PersistentVolumeClaim.ReadOnly)
		case src.DownwardAPI != nil:
			w.Write(level2, "Type:\tDownwardAPI (a volume populated by information about the pod)\n    Items:\n")
			for _, item := range src.DownwardAPI.Items {
				if item.FieldRef != nil {
					w.Write(level3, "%v -> %v\n", item.FieldRef.FieldPath, item.Path)
				}
				if item.ResourceFieldRef != nil {
					w.Write(level3, "%v -> %v\n", item.ResourceFieldRef.Resource, item.Path)
				}
			}
		case src.Projected != nil:
			w.Write(level2, "Type:\tProjected (a volume that contains injected data from multiple sources)\n")
			for _, s := range src.Projected.Sources {
				switch {
				case s.Secret != nil:
					optional := s.Secret.Optional != nil && *s.Secret.Optional
					w.Write(level2, "SecretName:\t%v\n    Optional:\t%v\n", s.Secret.Name, optional)
				case s.DownwardAPI != nil:
					w.Write(level2, "DownwardAPI:\ttrue\n")
				case s.ConfigMap != nil:
					optional := s.ConfigMap.Optional != nil && *s.ConfigMap.Optional
					w.Write(level2, "ConfigMapName:\t%v\n    Optional:\t%v\n", s.ConfigMap.Name, optional)
				case s.ServiceAccountToken != nil:
					var exp int64
					if s.ServiceAccountToken.ExpirationSeconds != nil {
						exp = *s.ServiceAccountToken.ExpirationSeconds
					}
					w.Write(level2, "TokenExpirationSeconds:\t%d\n", exp)
				}
			}
		case src.Image != nil:
			w.Write(level2, "Type:\tImage (a container image or OCI artifact)\n    Reference:\t%v\n    PullPolicy:\t%v\n", src.Image.Reference, src.Image.PullPolicy)
		default:
			w.Write(level1, "<unknown>\n")
		}
	}
}

// describeTopologySpreadConstraints prints spread constraints by key.
func describeTopologySpreadConstraints(tscs []corev1.TopologySpreadConstraint, w *prefixWriter, space string) {
	if len(tscs) == 0 {
		return
	}
	sorted := append([]corev1.TopologySpreadConstraint(nil), tscs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].TopologyKey < sorted[j].TopologyKey })
	w.Write(level0, "%sTopology Spread Constraints:\t", space)
	for i, t := range sorted {
		if i != 0 {
			w.Write(level0, "%s", space)
			w.Write(level0, "%s", "\t")
		}
		w.Write(level0, "%s:", t.TopologyKey)
		w.Write(level0, "%v", t.WhenUnsatisfiable)
		w.Write(level0, " when max skew %d is exceeded", t.MaxSkew)
		if t.LabelSelector != nil {
			w.Write(level0, " for selector %s", metav1.FormatLabelSelector(t.LabelSelector))
		}
		w.Write(level0, "\n")
	}
}

func printBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func stringOrNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// formatEndpointSlices lists up to three ready endpoints of the named
// ports ("10.0.0.1:80,10.0.0.2:80 + 2 more...").
func formatEndpointSlices(slices []discoveryv1.EndpointSlice, ports sets.Set[string]) string {
	if len(slices) == 0 {
		return "<none>"
	}
	var list []string
	const maxShown = 3
	more := false
	count := 0
	for i := range slices {
		s := &slices[i]
		if len(s.Ports) == 0 {
			for j := range s.Endpoints {
				if len(list) == maxShown {
					more = true
				}
				ep := &s.Endpoints[j]
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
					continue
				}
				if !more {
					list = append(list, ep.Addresses[0])
				}
				count++
			}
			continue
		}
		for _, port := range s.Ports {
			name := ""
			if port.Name != nil {
				name = *port.Name
			}
			if ports != nil && !ports.Has(name) {
				continue
			}
			for k := range s.Endpoints {
				if len(list) == maxShown {
					more = true
				}
				ep := &s.Endpoints[k]
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
					continue
				}
				if !more {
					p := 0
					if port.Port != nil {
						p = int(*port.Port)
					}
					list = append(list, net.JoinHostPort(ep.Addresses[0], strconv.Itoa(p)))
				}
				count++
			}
		}
	}
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-maxShown)
	}
	return ret
}

// smartLabelFor turns a field name into a title ("podIP" → "Pod IP"), as
// the generic describer does.
func smartLabelFor(field string) string {
	if strings.IndexFunc(field, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' }) != -1 {
		return field
	}
	acronyms := map[string]bool{"API": true, "URL": true, "UID": true, "OSB": true, "GUID": true}
	var parts []string
	for _, p := range camelSplit(field) {
		if p == "_" {
			continue
		}
		if acronyms[strings.ToUpper(p)] {
			p = strings.ToUpper(p)
		} else if p != "" {
			p = strings.ToUpper(p[:1]) + p[1:]
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

// camelSplit splits a camel-case word into its parts ("podIPs" → "pod",
// "I", "Ps"), as fatih/camelcase does: runs of upper case, lower case,
// digits and other characters, with an upper-case letter followed by lower
// case starting a new part.
func camelSplit(src string) []string {
	var runs [][]rune
	lastClass := 0
	for _, r := range src {
		class := 4
		switch {
		case unicode.IsLower(r):
			class = 1
		case unicode.IsUpper(r):
			class = 2
		case unicode.IsDigit(r):
			class = 3
		}
		if class == lastClass {
			runs[len(runs)-1] = append(runs[len(runs)-1], r)
		} else {
			runs = append(runs, []rune{r})
		}
		lastClass = class
	}
	for i := 0; i < len(runs)-1; i++ {
		if unicode.IsUpper(runs[i][0]) && unicode.IsLower(runs[i+1][0]) {
			runs[i+1] = append([]rune{runs[i][len(runs[i])-1]}, runs[i+1]...)
			runs[i] = runs[i][:len(runs[i])-1]
		}
	}
	var out []string
	for _, r := range runs {
		if len(r) > 0 {
			out = append(out, string(r))
		}
	}
	return out
}
