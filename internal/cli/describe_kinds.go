package cli

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/reference"
	resourcehelper "k8s.io/component-helpers/resource"
)

// kindDescriber describes one typed object.
type kindDescriber func(ctx context.Context, d *describer, obj runtime.Object) (string, error)

// kindDescribers are the kinds with a layout of their own; others are
// described generically.
var kindDescribers = map[schema.GroupKind]kindDescriber{
	{Group: "apps", Kind: "Deployment"}:                              describeDeployment,
	{Group: "apps", Kind: "ReplicaSet"}:                              describeReplicaSet,
	{Group: "apps", Kind: "StatefulSet"}:                             describeStatefulSet,
	{Group: "apps", Kind: "DaemonSet"}:                               describeDaemonSet,
	{Kind: "Pod"}:                                                    describePod,
	{Kind: "Service"}:                                                describeService,
	{Kind: "Node"}:                                                   describeNode,
	{Kind: "Namespace"}:                                              describeNamespace,
	{Kind: "ConfigMap"}:                                              describeConfigMap,
	{Kind: "Secret"}:                                                 describeSecret,
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}:               describeEndpointSlice,
	{Group: "networking.k8s.io", Kind: "Ingress"}:                    describeIngress,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:               describeIngressClass,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        describeRoleBinding,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: describeRoleBinding,

	{Group: "batch", Kind: "Job"}:     describeJob,
	{Group: "batch", Kind: "CronJob"}: describeCronJob,
}

func describeDeployment(ctx context.Context, d *describer, obj runtime.Object) (string, error) {
	dep := obj.(*appsv1.Deployment)
	selector, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil {
		return "", err
	}
	events := d.events(ctx, dep)
	oldRSs, newRS, rsErr := d.replicaSetsOf(ctx, dep)
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "Name:\t%s\n", dep.Name)
		w.Write(level0, "Namespace:\t%s\n", dep.Namespace)
		w.Write(level0, "CreationTimestamp:\t%s\n", rfc1123z(dep.CreationTimestamp))
		printLabelsMultiline(w, "Labels", dep.Labels)
		printAnnotationsMultiline(w, "Annotations", dep.Annotations)
		w.Write(level0, "Selector:\t%s\n", selector)
		replicas := int32(1)
		if dep.Spec.Replicas != nil {
			replicas = *dep.Spec.Replicas
		}
		w.Write(level0, "Replicas:\t%d desired | %d updated | %d total | %d available | %d unavailable\n", replicas, dep.Status.UpdatedReplicas, dep.Status.Replicas, dep.Status.AvailableReplicas, dep.Status.UnavailableReplicas)
		w.Write(level0, "StrategyType:\t%s\n", dep.Spec.Strategy.Type)
		w.Write(level0, "MinReadySeconds:\t%d\n", dep.Spec.MinReadySeconds)
		if ru := dep.Spec.Strategy.RollingUpdate; ru != nil {
			w.Write(level0, "RollingUpdateStrategy:\t%s max unavailable, %s max surge\n", ru.MaxUnavailable.String(), ru.MaxSurge.String())
		}
		describePodTemplate(&dep.Spec.Template, w)
		if len(dep.Status.Conditions) > 0 {
			w.Write(level0, "Conditions:\n  Type\tStatus\tReason\n")
			w.Write(level1, "----\t------\t------\n")
			for _, c := range dep.Status.Conditions {
				w.Write(level1, "%v \t%v\t%v\n", c.Type, c.Status, c.Reason)
			}
		}
		if rsErr == nil && (len(oldRSs) > 0 || newRS != nil) {
			var newRSs []*appsv1.ReplicaSet
			if newRS != nil {
				newRSs = append(newRSs, newRS)
			}
			w.Write(level0, "OldReplicaSets:\t%s\n", replicaSetsSummary(oldRSs))
			w.Write(level0, "NewReplicaSet:\t%s\n", replicaSetsSummary(newRSs))
		}
		d.printEvents(ctx, w, events)
		return nil
	})
}

func replicaSetsSummary(rss []*appsv1.ReplicaSet) string {
	var parts []string
	for _, rs := range rss {
		parts = append(parts, fmt.Sprintf("%s (%d/%d replicas created)", rs.Name, rs.Status.Replicas, replicasOf(rs.Spec.Replicas)))
	}
	if len(parts) == 0 {
		return "<none>"
	}
	return strings.Join(parts, ", ")
}

func replicasOf(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// replicaSetsOf returns the replica sets a deployment controls: the old
// ones and the new one (the oldest whose template matches the
// deployment's, ignoring the pod-template-hash label).
func (d *describer) replicaSetsOf(ctx context.Context, dep *appsv1.Deployment) ([]*appsv1.ReplicaSet, *appsv1.ReplicaSet, error) {
	owned, err := listOwnedReplicaSets(ctx, d.client.AppsV1().ReplicaSets(dep.Namespace), dep, d.chunkSize)
	if err != nil {
		return nil, nil, err
	}
	newRS := findNewReplicaSet(dep, owned)
	var old []*appsv1.ReplicaSet
	for _, rs := range owned {
		if newRS != nil && rs.UID == newRS.UID {
			continue
		}
		old = append(old, rs)
	}
	return old, newRS, nil
}

// replicaSetLister lists replica sets of one namespace.
type replicaSetLister interface {
	List(ctx context.Context, opts metav1.ListOptions) (*appsv1.ReplicaSetList, error)
}

// listOwnedReplicaSets lists the replica sets matching the deployment's
// selector that it controls.
func listOwnedReplicaSets(ctx context.Context, c replicaSetLister, dep *appsv1.Deployment, chunk int64) ([]*appsv1.ReplicaSet, error) {
	selector, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil {
		return nil, err
	}
	opts := metav1.ListOptions{LabelSelector: selector.String(), Limit: chunk}
	var out []*appsv1.ReplicaSet
	for {
		list, err := c.List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			rs := &list.Items[i]
			if metav1.IsControlledBy(rs, dep) {
				out = append(out, rs)
			}
		}
		if list.Continue == "" {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}

// findNewReplicaSet returns the oldest replica set whose pod template is
// the deployment's.
func findNewReplicaSet(dep *appsv1.Deployment, rss []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	sorted := append([]*appsv1.ReplicaSet(nil), rss...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].CreationTimestamp.Equal(&sorted[j].CreationTimestamp) {
			return sorted[i].Name < sorted[j].Name
		}
		return sorted[i].CreationTimestamp.Before(&sorted[j].CreationTimestamp)
	})
	for _, rs := range sorted {
		if equalIgnoreHash(&rs.Spec.Template, &dep.Spec.Template) {
			return rs
		}
	}
	return nil
}

// equalIgnoreHash compares pod templates without the pod-template-hash
// label the deployment controller adds.
func equalIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	delete(b.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	if len(a.Labels) == 0 {
		a.Labels = nil
	}
	if len(b.Labels) == 0 {
		b.Labels = nil
	}
	return equality.Semantic.DeepEqual(a, b)
}

func describeReplicaSet(ctx context.Context, d *describer, obj runtime.Object) (string, error) {
	rs := obj.(*appsv1.ReplicaSet)
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return "", err
	}
	running, waiting, succeeded, failed, podErr := d.podStatusForController(ctx, rs.Namespace, selector, rs.UID)
	events := d.events(ctx, rs)
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "Name:\t%s\n", rs.Name)
		w.Write(level0, "Namespace:\t%s\n", rs.Namespace)
		w.Write(level0, "Selector:\t%s\n", metav1.FormatLabelSelector(rs.Spec.Selector))
		printLabelsMultiline(w, "Labels", rs.Labels)
		printAnnotationsMultiline(w, "Annotations", rs.Annotations)
		if ref := metav1.GetControllerOf(rs); ref != nil {
			w.Write(level0, "Controlled By:\t%s/%s\n", ref.Kind, ref.Name)
		}
		w.Write(level0, "Replicas:\t%d current / %d desired\n", rs.Status.Replicas, replicasOf(rs.Spec.Replicas))
		w.Write(level0, "Pods Status:\t")
		if podErr != nil {
			w.Write(level0, "error in fetching pods: %s\n", podErr)
		} else {
			w.Write(level0, "%d Running / %d Waiting / %d Succeeded / %d Failed\n", running, waiting, succeeded, failed)
		}
		describePodTemplate(&rs.Spec.Template, w)
		if len(rs.Status.Conditions) > 0 {
			w.Write(level0, "Conditions:\n  Type\tStatus\tReason\n")
			w.Write(level1, "----\t------\t------\n")
			for _, c := range rs.Status.Conditions {
				w.Write(level1, "%v \t%v\t%v\n", c.Type, c.Status, c.Reason)
			}
		}
		d.printEvents(ctx, w, events)
		return nil
	})
}

// podStatusForController counts the phases of the pods a controller owns.
func (d *describer) podStatusForController(ctx context.Context, namespace string, selector labels.Selector, uid types.UID) (running, waiting, succeeded, failed int, err error) {
	pods, err := d.listPods(ctx, namespace, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return
	}
	for i := range pods {
		ref := metav1.GetControllerOf(&pods[i])
		if ref == nil || ref.UID != uid {
			continue
		}
		switch pods[i].Status.Phase {
		case corev1.PodRunning:
			running++
		case corev1.PodPending:
			waiting++
		case corev1.PodSucceeded:
			succeeded++
		case corev1.PodFailed:
			failed++
		}
	}
	return
}

func (d *describer) listPods(ctx context.Context, namespace string, opts metav1.ListOptions) ([]corev1.Pod, error) {
	opts.Limit = d.chunkSize
	var out []corev1.Pod
	for {
		list, err := d.client.CoreV1().Pods(namespace).List(ctx, opts)
		if err != nil {
			return nil, enhanceListError(err, opts, "pods")
		}
		out = append(out, list.Items...)
		if list.Continue == "" {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}

func describePod(ctx context.Context, d *describer, obj runtime.Object) (string, error) {
	pod := obj.(*corev1.Pod)
	var events *corev1.EventList
	if d.showEvents {
		if ref, err := reference.GetReference(scheme.Scheme, pod); err == nil {
			ref.Kind = ""
			if mirror, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]; ok {
				ref.UID = types.UID(mirror)
			}
			events, _ = d.searchEventsRef(ctx, ref)
		}
	}
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "Name:\t%s\n", pod.Name)
		w.Write(level0, "Namespace:\t%s\n", pod.Namespace)
		if pod.Spec.Priority != nil {
			w.Write(level0, "Priority:\t%d\n", *pod.Spec.Priority)
		}
		if pod.Spec.PriorityClassName != "" {
			w.Write(level0, "Priority Class Name:\t%s\n", pod.Spec.PriorityClassName)
		}
		if pod.Spec.RuntimeClassName != nil && *pod.Spec.RuntimeClassName != "" {
			w.Write(level0, "Runtime Class Name:\t%s\n", *pod.Spec.RuntimeClassName)
		}
		if pod.Spec.ServiceAccountName != "" {
			w.Write(level0, "Service Account:\t%s\n", pod.Spec.ServiceAccountName)
		}
		if pod.Spec.NodeName == "" {
			w.Write(level0, "Node:\t<none>\n")
		} else {
			w.Write(level0, "Node:\t%s\n", pod.Spec.NodeName+"/"+pod.Status.HostIP)
		}
		if pod.Status.StartTime != nil {
			w.Write(level0, "Start Time:\t%s\n", rfc1123z(*pod.Status.StartTime))
		}
		printLabelsMultiline(w, "Labels", pod.Labels)
		printAnnotationsMultiline(w, "Annotations", pod.Annotations)
		if pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodFailed && pod.Status.Phase != corev1.PodSucceeded {
			w.Write(level0, "Status:\tTerminating (lasts %s)\n", translateTimestampSince(*pod.DeletionTimestamp))
			var grace int64
			if pod.DeletionGracePeriodSeconds != nil {
				grace = *pod.DeletionGracePeriodSeconds
			}
			w.Write(level0, "Termination Grace Period:\t%ds\n", grace)
		} else {
			w.Write(level0, "Status:\t%s\n", string(pod.Status.Phase))
		}
		if pod.Status.Reason != "" {
			w.Write(level0, "Reason:\t%s\n", pod.Status.Reason)
		}
		if pod.Status.Message != "" {
			w.Write(level0, "Message:\t%s\n", pod.Status.Message)
		}
		if sc := pod.Spec.SecurityContext; sc != nil && sc.SeccompProfile != nil {
			w.Write(level0, "SeccompProfile:\t%s\n", sc.SeccompProfile.Type)
			if sc.SeccompProfile.Type == corev1.SeccompProfileTypeLocalhost && sc.SeccompProfile.LocalhostProfile != nil {
				w.Write(level0, "LocalhostProfile:\t%s\n", *sc.SeccompProfile.LocalhostProfile)
			}
		}
		w.Write(level0, "IP:\t%s\n", pod.Status.PodIP)
		if len(pod.Status.PodIPs) == 0 {
			w.Write(level0, "IPs:\t<none>\n")
		} else {
			w.Write(level0, "IPs:\n")
			for _, ip := range pod.Status.PodIPs {
				w.Write(level1, "IP:\t%s\n", ip.IP)
			}
		}
		if ref := metav1.GetControllerOf(pod); ref != nil {
			w.Write(level0, "Controlled By:\t%s/%s\n", ref.Kind, ref.Name)
		}
		if pod.Status.NominatedNodeName != "" {
			w.Write(level0, "NominatedNodeName:\t%s\n", pod.Status.NominatedNodeName)
		}
		if pod.Spec.Resources != nil {
			w.Write(level0, "Resources:\n")
			describeResources(pod.Spec.Resources, w, level1)
		}
		if len(pod.Spec.InitContainers) > 0 {
			describeContainers("Init Containers", pod.Spec.InitContainers, pod.Status.InitContainerStatuses, pod, w, "")
		}
		describeContainers("Containers", pod.Spec.Containers, pod.Status.ContainerStatuses, pod, w, "")
		if len(pod.Spec.EphemeralContainers) > 0 {
			var ec []corev1.Container
			for i := range pod.Spec.EphemeralContainers {
				ec = append(ec, corev1.Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon))
			}
			describeContainers("Ephemeral Containers", ec, pod.Status.EphemeralContainerStatuses, pod, w, "")
		}
		if len(pod.Spec.ReadinessGates) > 0 {
			w.Write(level0, "Readiness Gates:\n  Type\tStatus\n")
			for _, g := range pod.Spec.ReadinessGates {
				status := "<none>"
				for _, c := range pod.Status.Conditions {
					if c.Type == g.ConditionType {
						status = string(c.Status)
						break
					}
				}
				w.Write(level1, "%v \t%v \n", g.ConditionType, status)
			}
		}
		if len(pod.Status.Conditions) > 0 {
			w.Write(level0, "Conditions:\n  Type\tStatus\n")
			for _, c := range pod.Status.Conditions {
				w.Write(level1, "%v \t%v \n", c.Type, c.Status)
			}
		}
		describeVolumes(pod.Spec.Volumes, w, "")
		w.Write(level0, "QoS Class:\t%s\n", podQOS(pod))
		printLabelsMultiline(w, "Node-Selectors", pod.Spec.NodeSelector)
		printTolerationsMultiline(w, "Tolerations", pod.Spec.Tolerations)
		describeTopologySpreadConstraints(pod.Spec.TopologySpreadConstraints, w, "")
		d.printEvents(ctx, w, events)
		return nil
	})
}

// podQOS is the pod's QoS class: the status's, else computed from the
// containers' cpu and memory requests and limits.
func podQOS(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	if pod.Spec.Resources != nil && (len(pod.Spec.Resources.Requests) > 0 || len(pod.Spec.Resources.Limits) > 0) {
		return requirementsQOS(pod.Spec.Resources)
	}
	var qos corev1.PodQOSClass
	containers := append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...)
	for i := range containers {
		c := requirementsQOS(&containers[i].Resources)
		switch {
		case c == corev1.PodQOSBurstable:
			return c
		case qos == "":
			qos = c
		case qos != c:
			return corev1.PodQOSBurstable
		}
	}
	if qos == "" {
		qos = corev1.PodQOSBestEffort
	}
	return qos
}

func requirementsQOS(r *corev1.ResourceRequirements) corev1.PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	var qos corev1.PodQOSClass
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := r.Requests[name], r.Limits[name]
		var c corev1.PodQOSClass
		switch {
		case !req.Equal(lim):
			c = corev1.PodQOSBurstable
		case req.IsZero():
			c = corev1.PodQOSBestEffort
		default:
			c = corev1.PodQOSGuaranteed
		}
		switch {
		case c == corev1.PodQOSBurstable:
			return c
		case qos == "":
			qos = c
		case qos != c:
			return corev1.PodQOSBurstable
		}
	}
	return qos
}

func describeService(ctx context.Context, d *describer, obj runtime.Object) (string, error) {
	svc := obj.(*corev1.Service)
	var slices []discoveryv1.EndpointSlice
	if list, err := d.client.DiscoveryV1().EndpointSlices(svc.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + svc.Name,
	}); err == nil {
		slices = list.Items
	}
	events := d.events(ctx, svc)
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "Name:\t%s\n", svc.Name)
		w.Write(level0, "Namespace:\t%s\n", svc.Namespace)
		printLabelsMultiline(w, "Labels", svc.Labels)
		printAnnotationsMultiline(w, "Annotations", svc.Annotations)
		w.Write(level0, "Selector:\t%s\n", labels.FormatLabels(svc.Spec.Selector))
		w.Write(level0, "Type:\t%s\n", svc.Spec.Type)
		if svc.Spec.IPFamilyPolicy != nil {
			w.Write(level0, "IP Family Policy:\t%s\n", *svc.Spec.IPFamilyPolicy)
		}
		if len(svc.Spec.IPFamilies) > 0 {
			var fams []string
			for _, f := range svc.Spec.IPFamilies {
				fams = append(fams, string(f))
			}
			w.Write(level0, "IP Families:\t%s\n", strings.Join(fams, ","))
		} else {
			w.Write(level0, "IP Families:\t%s\n", "<none>")
		}
		w.Write(level0, "IP:\t%s\n", svc.Spec.ClusterIP)
		if len(svc.Spec.ClusterIPs) > 0 {
			w.Write(level0, "IPs:\t%s\n", strings.Join(svc.Spec.ClusterIPs, ","))
		} else {
			w.Write(level0, "IPs:\t%s\n", "<none>")
		}
		if len(svc.Spec.ExternalIPs) > 0 {
			w.Write(level0, "External IPs:\t%v\n", strings.Join(svc.Spec.ExternalIPs, ","))
		}
		if svc.Spec.LoadBalancerIP != "" {
			w.Write(level0, "Desired LoadBalancer IP:\t%s\n", svc.Spec.LoadBalancerIP)
		}
		if svc.Spec.ExternalName != "" {
			w.Write(level0, "External Name:\t%s\n", svc.Spec.ExternalName)
		}
		if ing := svc.Status.LoadBalancer.Ingress; len(ing) > 0 {
			var parts []string
			for _, i := range ing {
				switch {
				case i.IP != "" && i.IPMode != nil:
					parts = append(parts, fmt.Sprintf("%s (%s)", i.IP, *i.IPMode))
				case i.IP != "":
					parts = append(parts, i.IP)
				default:
					parts = append(parts, i.Hostname)
				}
			}
			w.Write(level0, "LoadBalancer Ingress:\t%s\n", strings.Join(parts, ", "))
		}
		for _, sp := range svc.Spec.Ports {
			name := sp.Name
			if name == "" {
				name = "<unset>"
			}
			w.Write(level0, "Port:\t%s\t%d/%s\n", name, sp.Port, sp.Protocol)
			if sp.TargetPort.Type == 0 {
				w.Write(level0, "TargetPort:\t%d/%s\n", sp.TargetPort.IntVal, sp.Protocol)
			} else {
				w.Write(level0, "TargetPort:\t%s/%s\n", sp.TargetPort.StrVal, sp.Protocol)
			}
			if sp.NodePort != 0 {
				w.Write(level0, "NodePort:\t%s\t%d/%s\n", name, sp.NodePort, sp.Protocol)
			}
			w.Write(level0, "Endpoints:\t%s\n", formatEndpointSlices(slices, sets.New(sp.Name)))
		}
		w.Write(level0, "Session Affinity:\t%s\n", svc.Spec.SessionAffinity)
		if svc.Spec.ExternalTrafficPolicy != "" {
			w.Write(level0, "External Traffic Policy:\t%s\n", svc.Spec.ExternalTrafficPolicy)
		}
		if svc.Spec.InternalTrafficPolicy != nil {
			w.Write(level0, "Internal Traffic Policy:\t%s\n", *svc.Spec.InternalTrafficPolicy)
		}
		if svc.Spec.HealthCheckNodePort != 0 {
			w.Write(level0, "HealthCheck NodePort:\t%d\n", svc.Spec.HealthCheckNodePort)
		}
		if len(svc.Spec.LoadBalancerSourceRanges) > 0 {
			w.Write(level0, "LoadBalancer Source Ranges:\t%v\n", strings.Join(svc.Spec.LoadBalancerSourceRanges, ","))
		}
		if svc.Spec.TrafficDistribution != nil && *svc.Spec.TrafficDistribution != "" {
			w.Write(level0, "Traffic Distribution:\t%s\n", *svc.Spec.TrafficDistribution)
		}
		d.printEvents(ctx, w, events)
		return nil
	})
}

func describeEndpointSlice(ctx context.Context, d *describer, obj runtime.Object) (string, error) {
	eps := obj.(*discoveryv1.EndpointSlice)
	events := d.events(ctx, eps)
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "Name:\t%s\n", eps.Name)
		w.Write(level0, "Namespace:\t%s\n", eps.Namespace)
		printLabelsMultiline(w, "Labels", eps.Labels)
		printAnnotationsMultiline(w, "Annotations", eps.Annotations)
		w.Write(level0, "AddressType:\t%s\n", string(eps.AddressType))
		if len(eps.Ports) == 0 {
			w.Write(level0, "Ports: <unset>\n")
		} else {
			w.Write(level0, "Ports:\n")
			w.Write(level1, "Name\tPort\tProtocol\n")
			w.Write(level1, "----\t----\t--------\n")
			for _, p := range eps.Ports {
				name := "<unset>"
				if p.Name != nil && *p.Name != "" {
					name = *p.Name
				}
				num := "<unset>"
				if p.Port != nil {
					num = strconv.Itoa(int(*p.Port))
				}
				proto := ""
				if p.Protocol != nil {
					proto = string(*p.Protocol)
				}
				w.Write(level1, "%s\t%s\t%s\n", name, num, proto)
			}
		}
		if len(eps.Endpoints) == 0 {
			w.Write(level0, "Endpoints: <none>\n")
		} else {
			w.Write(level0, "Endpoints:\n")
			for _, ep := range eps.Endpoints {
				addrs := strings.Join(ep.Addresses, ", ")
				if addrs == "" {
					addrs = "<none>"
				}
				w.Write(level1, "- Addresses:\t%s\n", addrs)
				w.Write(level2, "Conditions:\n")
				ready := "<unset>"
				if ep.Conditions.Ready != nil {
					ready = strconv.FormatBool(*ep.Conditions.Ready)
				}
				w.Write(level3, "Ready:\t%s\n", ready)
				hostname := "<unset>"
				if ep.Hostname != nil {
					hostname = *ep.Hostname
				}
				w.Write(level2, "Hostname:\t%s\n", hostname)
				if ep.TargetRef != nil {
					w.Write(level2, "TargetRef:\t%s/%s\n", ep.TargetRef.Kind, ep.TargetRef.Name)
				}
				node := "<unset>"
				if ep.NodeName != nil {
					node = *ep.NodeName
				}
				w.Write(level2, "NodeName:\t%s\n", node)
				zone := "<unset>"
				if ep.Zone != nil {
					zone = *ep.Zone
				}
				w.Write(level2, "Zone:\t%s\n", zone)
			}
		}
		d.printEvents(ctx, w, events)
		return nil
	})
}

func describeIngress(ctx context.Context, d *describer, obj runtime.Object) (string, error) {
	ing := obj.(*networkingv1.Ingress)
	events := d.events(ctx, ing)
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "Name:\t%v\n", ing.Name)
		printLabelsMultiline(w, "Labels", ing.Labels)
		w.Write(level0, "Namespace:\t%v\n", ing.Namespace)
		addrs := sets.New[string]()
		for _, i := range ing.Status.LoadBalancer.Ingress {
			if i.IP != "" {
				addrs.Insert(i.IP)
			} else if i.Hostname != "" {
				addrs.Insert(i.Hostname)
			}
		}
		w.Write(level0, "Address:\t%v\n", strings.Join(sets.List(addrs), ","))
		class := "<none>"
		if ing.Spec.IngressClassName != nil {
			class = *ing.Spec.IngressClassName
		}
		w.Write(level0, "Ingress Class:\t%v\n", class)
		def := "<default>"
		if ing.Spec.DefaultBackend != nil {
			def = d.describeBackend(ctx, ing.Namespace, ing.Spec.DefaultBackend)
		}
		w.Write(level0, "Default backend:\t%s\n", def)
		if len(ing.Spec.TLS) != 0 {
			w.Write(level0, "TLS:\n")
			for _, t := range ing.Spec.TLS {
				if t.SecretName == "" {
					w.Write(level1, "SNI routes %v\n", strings.Join(t.Hosts, ","))
				} else {
					w.Write(level1, "%v terminates %v\n", t.SecretName, strings.Join(t.Hosts, ","))
				}
			}
		}
		w.Write(level0, "Rules:\n  Host\tPath\tBackends\n")
		w.Write(level1, "----\t----\t--------\n")
		count := 0
		for _, rule := range ing.Spec.Rules {
			if rule.HTTP == nil {
				continue
			}
			count++
			host := rule.Host
			if host == "" {
				host = "*"
			}
			w.Write(level1, "%s\t\n", host)
			for _, path := range rule.HTTP.Paths {
				w.Write(level2, "\t%s \t%s\n", path.Path, d.describeBackend(ctx, ing.Namespace, &path.Backend))
			}
		}
		if count == 0 {
			w.Write(level1, "%s\t%s\t%s\n", "*", "*", def)
		}
		printAnnotationsMultiline(w, "Annotations", ing.Annotations)
		d.printEvents(ctx, w, events)
		return nil
	})
}

// describeBackend renders an ingress backend with its ready endpoints
// ("web:80 (10.0.0.1:80,10.0.0.2:80)").
func (d *describer) describeBackend(ctx context.Context, ns string, b *networkingv1.IngressBackend) string {
	if b.Service != nil {
		port := b.Service.Port.Name
		if b.Service.Port.Number != 0 {
			port = strconv.FormatInt(int64(b.Service.Port.Number), 10)
		}
		sb := fmt.Sprintf("%v:%v", b.Service.Name, port)
		slices, err := d.client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + b.Service.Name})
		if err != nil {
			return fmt.Sprintf("%v (<error: %v>)", sb, err)
		}
		svc, err := d.client.CoreV1().Services(ns).Get(ctx, b.Service.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Sprintf("%v (<error: %v>)", sb, err)
		}
		spName := ""
		for _, sp := range svc.Spec.Ports {
			if b.Service.Port.Number != 0 && b.Service.Port.Number == sp.Port {
				spName = sp.Name
			} else if b.Service.Port.Name != "" && b.Service.Port.Name == sp.Name {
				spName = sp.Name
			}
		}
		return fmt.Sprintf("%s (%s)", sb, formatEndpointSlices(slices.Items, sets.New(spName)))
	}
	if b.Resource != nil {
		group := "<none>"
		if b.Resource.APIGroup != nil {
			group = *b.Resource.APIGroup
		}
		return fmt.Sprintf("APIGroup: %v, Kind: %v, Name: %v", group, b.Resource.Kind, b.Resource.Name)
	}
	return ""
}

func describeIngressClass(ctx context.Context, d *describer, obj runtime.Object) (string, error) {
	ic := obj.(*networkingv1.IngressClass)
	events := d.events(ctx, ic)
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "Name:\t%s\n", ic.Name)
		printLabelsMultiline(w, "Labels", ic.Labels)
		printAnnotationsMultiline(w, "Annotations", ic.Annotations)
		w.Write(level0, "Controller:\t%v\n", ic.Spec.Controller)
		if p := ic.Spec.Parameters; p != nil {
			w.Write(level0, "Parameters:\n")
			if p.APIGroup != nil {
				w.Write(level1, "APIGroup:\t%v\n", *p.APIGroup)
			}
			w.Write(level1, "Kind:\t%v\n", p.Kind)
			w.Write(level1, "Name:\t%v\n", p.Name)
		}
		d.printEvents(ctx, w, events)
		return nil
	})
}

func describeNamespace(ctx context.Context, d *describer, obj runtime.Object) (string, error) {
	ns := obj.(*corev1.Namespace)
	quotas, err := d.client.CoreV1().ResourceQuotas(ns.Name).List(ctx, metav1.ListOptions{Limit: d.chunkSize})
	if err != nil {
		if !apierrors.IsNotFound(err) {
			return "", err
		}
		quotas = nil
	}
	limits, err := d.client.CoreV1().LimitRanges(ns.Name).List(ctx, metav1.ListOptions{Limit: d.chunkSize})
	if err != nil {
		if !apierrors.IsNotFound(err) {
			return "", err
		}
		limits = nil
	}
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "Name:\t%s\n", ns.Name)
		printLabelsMultiline(w, "Labels", ns.Labels)
		printAnnotationsMultiline(w, "Annotations", ns.Annotations)
		w.Write(level0, "Status:\t%s\n", string(ns.Status.Phase))
		if len(ns.Status.Conditions) > 0 {
			w.Write(level0, "Conditions:\n")
			w.Write(level1, "Type\tStatus\tLastTransitionTime\tReason\tMessage\n")
			w.Write(level1, "----\t------\t------------------\t------\t-------\n")
			for _, c := range ns.Status.Conditions {
				w.Write(level1, "%v\t%v\t%s\t%v\t%v\n", c.Type, c.Status, rfc1123z(c.LastTransitionTime), c.Reason, c.Message)
			}
		}
		if quotas != nil {
			w.Write(level0, "\n")
			describeResourceQuotas(quotas, w)
		}
		if limits != nil {
			w.Write(level0, "\n")
			if len(limits.Items) == 0 {
				w.Write(level0, "No LimitRange resource.\n")
			} else {
				w.Write(level0, "Resource Limits\n Type\tResource\tMin\tMax\tDefault Request\tDefault Limit\tMax Limit/Request Ratio\n")
				w.Write(level0, " ----\t--------\t---\t---\t---------------\t-------------\t-----------------------\n")
				for _, lr := range limits.Items {
					for _, item := range lr.Spec.Limits {
						names := sets.New[corev1.ResourceName]()
						for _, l := range []corev1.ResourceList{item.Max, item.Min, item.Default, item.DefaultRequest, item.MaxLimitRequestRatio} {
							for k := range l {
								names.Insert(k)
							}
						}
						for _, k := range sets.List(names) {
							v := func(l corev1.ResourceList) string {
								if q, ok := l[k]; ok {
									return q.String()
								}
								return "-"
							}
							w.Write(level0, " %s\t%v\t%v\t%v\t%v\t%v\t%v\n", item.Type, k, v(item.Min), v(item.Max), v(item.DefaultRequest), v(item.Default), v(item.MaxLimitRequestRatio))
						}
					}
				}
			}
		}
		return nil
	})
}

// describeResourceQuotas prints the quotas of a namespace.
func describeResourceQuotas(quotas *corev1.ResourceQuotaList, w *prefixWriter) {
	if len(quotas.Items) == 0 {
		w.Write(level0, "No resource quota.\n")
		return
	}
	items := append([]corev1.ResourceQuota(nil), quotas.Items...)
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	w.Write(level0, "Resource Quotas\n")
	for _, q := range items {
		w.Write(level1, "Name:\t%s\n", q.Name)
		if len(q.Spec.Scopes) > 0 {
			var scopes []string
			for _, s := range q.Spec.Scopes {
				scopes = append(scopes, string(s))
			}
			sort.Strings(scopes)
			w.Write(level1, "Scopes:\t%s\n", strings.Join(scopes, ", "))
		}
		w.Write(level1, "Resource\tUsed\tHard\n")
		w.Write(level1, "--------\t---\t---\n")
		for _, name := range sortedResourceNames(q.Status.Hard) {
			hard, used := q.Status.Hard[name], q.Status.Used[name]
			w.Write(level1, "%s\t%s\t%s\n", string(name), used.String(), hard.String())
		}
	}
}

func describeConfigMap(ctx context.Context, d *describer, obj runtime.Object) (string, error) {
	cm := obj.(*corev1.ConfigMap)
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "Name:\t%s\n", cm.Name)
		w.Write(level0, "Namespace:\t%s\n", cm.Namespace)
		printLabelsMultiline(w, "Labels", cm.Labels)
		printAnnotationsMultiline(w, "Annotations", cm.Annotations)
		w.Write(level0, "\nData\n====\n")
		for _, k := range sets.List(sets.KeySet(cm.Data)) {
			w.Write(level0, "%s:\n----\n", k)
			w.Write(level0, "%s\n", cm.Data[k])
			w.Write(level0, "\n")
		}
		w.Write(level0, "\nBinaryData\n====\n")
		for _, k := range sets.List(sets.KeySet(cm.BinaryData)) {
			w.Write(level0, "%s: %s bytes\n", k, strconv.Itoa(len(cm.BinaryData[k])))
		}
		w.Write(level0, "\n")
		if d.showEvents {
			events, err := d.searchEvents(ctx, cm)
			if err != nil {
				return err
			}
			describeEvents(events, w)
		}
		return nil
	})
}

func describeSecret(ctx context.Context, d *describer, obj runtime.Object) (string, error) {
	s := obj.(*corev1.Secret)
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "Name:\t%s\n", s.Name)
		w.Write(level0, "Namespace:\t%s\n", s.Namespace)
		printLabelsMultiline(w, "Labels", s.Labels)
		printAnnotationsMultiline(w, "Annotations", s.Annotations)
		w.Write(level0, "\nType:\t%s\n", s.Type)
		w.Write(level0, "\nData\n====\n")
		for _, k := range sets.List(sets.KeySet(s.Data)) {
			if k == corev1.ServiceAccountTokenKey && s.Type == corev1.SecretTypeServiceAccountToken {
				w.Write(level0, "%s:\t%s\n", k, string(s.Data[k]))
				continue
			}
			w.Write(level0, "%s:\t%d bytes\n", k, len(s.Data[k]))
		}
		return nil
	})
}

func describeRoleBinding(ctx context.Context, d *describer, obj runtime.Object) (string, error) {
	acc, _ := obj.(metav1.Object)
	var roleRef struct{ Kind, Name string }
	var subjects [][3]string
	switch b := obj.(type) {
	case interface{ GetObjectKind() schema.ObjectKind }:
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
		if err != nil {
			return "", err
		}
		roleRef.Kind, _, _ = unstructured.NestedString(u, "roleRef", "kind")
		roleRef.Name, _, _ = unstructured.NestedString(u, "roleRef", "name")
		list, _, _ := unstructured.NestedSlice(u, "subjects")
		for _, s := range list {
			m, _ := s.(map[string]any)
			kind, _ := m["kind"].(string)
			name, _ := m["name"].(string)
			ns, _ := m["namespace"].(string)
			subjects = append(subjects, [3]string{kind, name, ns})
		}
	}
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "Name:\t%s\n", acc.GetName())
		printLabelsMultiline(w, "Labels", acc.GetLabels())
		printAnnotationsMultiline(w, "Annotations", acc.GetAnnotations())
		w.Write(level0, "Role:\n")
		w.Write(level1, "Kind:\t%s\n", roleRef.Kind)
		w.Write(level1, "Name:\t%s\n", roleRef.Name)
		w.Write(level0, "Subjects:\n")
		w.Write(level1, "Kind\tName\tNamespace\n")
		w.Write(level1, "----\t----\t---------\n")
		for _, s := range subjects {
			w.Write(level1, "%s\t%s\t%s\n", s[0], s[1], s[2])
		}
		return nil
	})
}

func describeNode(ctx context.Context, d *describer, obj runtime.Object) (string, error) {
	node := obj.(*corev1.Node)
	selector := fields.AndSelectors(
		fields.OneTermEqualSelector("spec.nodeName", node.Name),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
	)
	canViewPods := true
	pods, err := d.listPods(ctx, "", metav1.ListOptions{FieldSelector: selector.String()})
	if err != nil {
		if !apierrors.IsForbidden(err) {
			return "", err
		}
		canViewPods = false
	}
	var events *corev1.EventList
	if d.showEvents {
		if ref, err := reference.GetReference(scheme.Scheme, node); err == nil {
			events, _ = d.searchEventsRef(ctx, ref)
			ref.UID = types.UID(ref.Name)
			byName, _ := d.searchEventsRef(ctx, ref)
			if events != nil && byName != nil {
				events.Items = append(events.Items, byName.Items...)
			}
		}
	}
	lease, leaseErr := d.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node.Name, metav1.GetOptions{})
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "Name:\t%s\n", node.Name)
		roles := sets.New[string]()
		for k, v := range node.Labels {
			switch {
			case strings.HasPrefix(k, "node-role.kubernetes.io/"):
				if r := strings.TrimPrefix(k, "node-role.kubernetes.io/"); r != "" {
					roles.Insert(r)
				}
			case k == "kubernetes.io/role" && v != "":
				roles.Insert(v)
			}
		}
		if roles.Len() > 0 {
			w.Write(level0, "Roles:\t%s\n", strings.Join(sets.List(roles), ","))
		} else {
			w.Write(level0, "Roles:\t%s\n", "<none>")
		}
		printLabelsMultiline(w, "Labels", node.Labels)
		printAnnotationsMultiline(w, "Annotations", node.Annotations)
		w.Write(level0, "CreationTimestamp:\t%s\n", rfc1123z(node.CreationTimestamp))
		printTaintsMultiline(w, "Taints", node.Spec.Taints)
		w.Write(level0, "Unschedulable:\t%v\n", node.Spec.Unschedulable)
		if leaseErr == nil {
			w.Write(level0, "Lease:\n")
			holder, acquire, renew := "<unset>", "<unset>", "<unset>"
			if lease.Spec.HolderIdentity != nil {
				holder = *lease.Spec.HolderIdentity
			}
			if lease.Spec.AcquireTime != nil {
				acquire = lease.Spec.AcquireTime.Time.Format("Mon, 02 Jan 2006 15:04:05 -0700")
			}
			if lease.Spec.RenewTime != nil {
				renew = lease.Spec.RenewTime.Time.Format("Mon, 02 Jan 2006 15:04:05 -0700")
			}
			w.Write(level1, "HolderIdentity:\t%s\n", holder)
			w.Write(level1, "AcquireTime:\t%s\n", acquire)
			w.Write(level1, "RenewTime:\t%s\n", renew)
		} else {
			w.Write(level0, "Lease:\tFailed to get lease: %s\n", leaseErr)
		}
		if len(node.Status.Conditions) > 0 {
			w.Write(level0, "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n")
			w.Write(level1, "----\t------\t-----------------\t------------------\t------\t-------\n")
			for _, c := range node.Status.Conditions {
				w.Write(level1, "%v \t%v \t%s \t%s \t%v \t%v\n", c.Type, c.Status, rfc1123z(c.LastHeartbeatTime), rfc1123z(c.LastTransitionTime), c.Reason, c.Message)
			}
		}
		w.Write(level0, "Addresses:\n")
		for _, a := range node.Status.Addresses {
			w.Write(level1, "%s:\t%s\n", a.Type, a.Address)
		}
		printList := func(l corev1.ResourceList) {
			for _, name := range sortedResourceNames(l) {
				q := l[name]
				w.Write(level0, "  %s:\t%s\n", name, q.String())
			}
		}
		if len(node.Status.Capacity) > 0 {
			w.Write(level0, "Capacity:\n")
			printList(node.Status.Capacity)
		}
		if len(node.Status.Allocatable) > 0 {
			w.Write(level0, "Allocatable:\n")
			printList(node.Status.Allocatable)
		}
		info := node.Status.NodeInfo
		w.Write(level0, "System Info:\n")
		w.Write(level0, "  Machine ID:\t%s\n", info.MachineID)
		w.Write(level0, "  System UUID:\t%s\n", info.SystemUUID)
		w.Write(level0, "  Boot ID:\t%s\n", info.BootID)
		w.Write(level0, "  Kernel Version:\t%s\n", info.KernelVersion)
		w.Write(level0, "  OS Image:\t%s\n", info.OSImage)
		w.Write(level0, "  Operating System:\t%s\n", info.OperatingSystem)
		w.Write(level0, "  Architecture:\t%s\n", info.Architecture)
		w.Write(level0, "  Container Runtime Version:\t%s\n", info.ContainerRuntimeVersion)
		w.Write(level0, "  Kubelet Version:\t%s\n", info.KubeletVersion)
		if node.Spec.PodCIDR != "" {
			w.Write(level0, "PodCIDR:\t%s\n", node.Spec.PodCIDR)
		}
		if len(node.Spec.PodCIDRs) > 0 {
			w.Write(level0, "PodCIDRs:\t%s\n", strings.Join(node.Spec.PodCIDRs, ","))
		}
		if node.Spec.ProviderID != "" {
			w.Write(level0, "ProviderID:\t%s\n", node.Spec.ProviderID)
		}
		if canViewPods {
			describeNodeResource(pods, node, w)
		} else {
			w.Write(level0, "Pods:\tnot authorized\n")
		}
		d.printEvents(ctx, w, events)
		return nil
	})
}

// describeNodeResource prints the node's pods and allocated resources.
func describeNodeResource(pods []corev1.Pod, node *corev1.Node, w *prefixWriter) {
	w.Write(level0, "Non-terminated Pods:\t(%d in total)\n", len(pods))
	w.Write(level1, "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n")
	w.Write(level1, "---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n")
	alloc := node.Status.Capacity
	if len(node.Status.Allocatable) > 0 {
		alloc = node.Status.Allocatable
	}
	frac := func(q resource.Quantity, total *resource.Quantity, milli bool) int64 {
		if milli {
			if total.MilliValue() == 0 {
				return 0
			}
			return int64(float64(q.MilliValue()) / float64(total.MilliValue()) * 100)
		}
		if total.Value() == 0 {
			return 0
		}
		return int64(float64(q.Value()) / float64(total.Value()) * 100)
	}
	totalReqs, totalLimits := corev1.ResourceList{}, corev1.ResourceList{}
	for i := range pods {
		pod := &pods[i]
		// As kubectl: a pod's row counts what its containers run with
		// (status resources), the totals what the specs ask for.
		req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{UseStatusResources: true})
		lim := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{UseStatusResources: true})
		for n, q := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
			v := totalReqs[n]
			v.Add(q)
			totalReqs[n] = v
		}
		for n, q := range resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{}) {
			v := totalLimits[n]
			v.Add(q)
			totalLimits[n] = v
		}
		cpuReq, cpuLim, memReq, memLim := req[corev1.ResourceCPU], lim[corev1.ResourceCPU], req[corev1.ResourceMemory], lim[corev1.ResourceMemory]
		w.Write(level1, "%s\t%s\t\t%s (%d%%)\t%s (%d%%)\t%s (%d%%)\t%s (%d%%)\t%s\n", pod.Namespace, pod.Name,
			cpuReq.String(), frac(cpuReq, alloc.Cpu(), true), cpuLim.String(), frac(cpuLim, alloc.Cpu(), true),
			memReq.String(), frac(memReq, alloc.Memory(), false), memLim.String(), frac(memLim, alloc.Memory(), false),
			translateTimestampSince(pod.CreationTimestamp))
	}
	w.Write(level0, "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n")
	w.Write(level1, "Resource\tRequests\tLimits\n")
	w.Write(level1, "--------\t--------\t------\n")
	for _, r := range []struct {
		name  corev1.ResourceName
		total *resource.Quantity
		milli bool
	}{
		{corev1.ResourceCPU, alloc.Cpu(), true},
		{corev1.ResourceMemory, alloc.Memory(), false},
		{corev1.ResourceEphemeralStorage, alloc.StorageEphemeral(), false},
	} {
		req, lim := totalReqs[r.name], totalLimits[r.name]
		w.Write(level1, "%s\t%s (%d%%)\t%s (%d%%)\n", r.name, req.String(), frac(req, r.total, r.milli), lim.String(), frac(lim, r.total, r.milli))
	}
	var hugePages, ext []string
	for name := range alloc {
		n := string(name)
		switch {
		case strings.HasPrefix(n, corev1.ResourceHugePagesPrefix):
			hugePages = append(hugePages, n)
		case strings.Contains(n, "/") && !strings.HasPrefix(n, "kubernetes.io/") && !strings.Contains(n, "requests."):
			ext = append(ext, n)
		}
	}
	sort.Strings(hugePages)
	sort.Strings(ext)
	for _, n := range hugePages {
		total := alloc[corev1.ResourceName(n)]
		req, lim := totalReqs[corev1.ResourceName(n)], totalLimits[corev1.ResourceName(n)]
		w.Write(level1, "%s\t%s (%d%%)\t%s (%d%%)\n", n, req.String(), frac(req, &total, false), lim.String(), frac(lim, &total, false))
	}
	for _, n := range ext {
		req, lim := totalReqs[corev1.ResourceName(n)], totalLimits[corev1.ResourceName(n)]
		w.Write(level1, "%s\t%s\t%s\n", n, req.String(), lim.String())
	}
}

// describeGeneric describes any object from its fields: name, namespace,
// labels and annotations, then every other field as a titled tree.
func (d *describer) describeGeneric(ctx context.Context, obj runtime.Object) (string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return "", err
		}
		u = &unstructured.Unstructured{Object: content}
	}
	events := d.events(ctx, u)
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "Name:\t%s\n", u.GetName())
		w.Write(level0, "Namespace:\t%s\n", u.GetNamespace())
		printLabelsMultiline(w, "Labels", u.GetLabels())
		printAnnotationsMultiline(w, "Annotations", u.GetAnnotations())
		printUnstructuredContent(w, level0, u.Object, "", ".metadata.managedFields", ".metadata.name",
			".metadata.namespace", ".metadata.labels", ".metadata.annotations")
		d.printEvents(ctx, w, events)
		return nil
	})
}

func printUnstructuredContent(w *prefixWriter, level int, content map[string]any, skipPrefix string, skip ...string) {
	keys := make([]string, 0, len(content))
	for k := range content {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	skipped := sets.New(skip...)
	for _, field := range keys {
		expr := skipPrefix + "." + field
		if skipped.Has(expr) {
			continue
		}
		switch v := content[field].(type) {
		case map[string]any:
			w.Write(level, "%s:\n", smartLabelFor(field))
			printUnstructuredContent(w, level+1, v, expr, skip...)
		case []any:
			w.Write(level, "%s:\n", smartLabelFor(field))
			for _, child := range v {
				if m, ok := child.(map[string]any); ok {
					printUnstructuredContent(w, level+1, m, expr, skip...)
				} else {
					w.Write(level+1, "%v\n", child)
				}
			}
		default:
			w.Write(level, "%s:\t%v\n", smartLabelFor(field), v)
		}
	}
}
