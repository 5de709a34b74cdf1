package endpoints

//lint:file-ignore SA1019 core/v1 Endpoints and ComponentStatus are deprecated, and kube-apiserver still serves them: so does minik.

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubectl/pkg/util/podutils"

	"minik/internal/controllers/endpointslice"
)

// truncated is the value of the over-capacity annotation.
const truncated = "truncated"

// sync brings the Endpoints of one Service in line with its pods.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	svc, err := c.serviceLister.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		err := c.client.CoreV1().Endpoints(ns).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete endpoints %s: %w", key, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Selector == nil {
		// An ExternalName Service has no endpoints; one without a
		// selector has those its owner writes.
		return nil
	}
	pods, err := c.podLister.Pods(ns).List(labels.SelectorFromValidatedSet(svc.Spec.Selector))
	if err != nil {
		return err
	}
	subsets, trigger := Subsets(svc, pods)

	current, err := c.endpointsLister.Endpoints(ns).Get(name)
	create := apierrors.IsNotFound(err)
	if err != nil && !create {
		return err
	}
	if create {
		current = &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	}
	want := current.DeepCopy()
	want.Subsets = subsets
	want.Labels = endpointsLabels(svc)
	if want.Annotations == nil {
		want.Annotations = map[string]string{}
	}
	if Truncate(want) {
		want.Annotations[corev1.EndpointsOverCapacity] = truncated
	} else {
		delete(want.Annotations, corev1.EndpointsOverCapacity)
	}
	if !create && apiequality.Semantic.DeepEqual(current.Subsets, want.Subsets) &&
		apiequality.Semantic.DeepEqual(current.Labels, want.Labels) &&
		current.Annotations[corev1.EndpointsOverCapacity] == want.Annotations[corev1.EndpointsOverCapacity] {
		return nil
	}
	if trigger.IsZero() {
		delete(want.Annotations, corev1.EndpointsLastChangeTriggerTime)
	} else {
		want.Annotations[corev1.EndpointsLastChangeTriggerTime] = trigger.UTC().Format(time.RFC3339Nano)
	}
	if create {
		_, err = c.client.CoreV1().Endpoints(ns).Create(ctx, want, metav1.CreateOptions{})
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
	} else {
		_, err = c.client.CoreV1().Endpoints(ns).Update(ctx, want, metav1.UpdateOptions{})
	}
	if err != nil {
		if create {
			c.recorder.Eventf(want, corev1.EventTypeWarning, ReasonFailedToCreateEndpoint, "Failed to create endpoint for service %v/%v: %v", ns, name, err)
		} else {
			c.recorder.Eventf(want, corev1.EventTypeWarning, ReasonFailedToUpdateEndpoint, "Failed to update endpoint %v/%v: %v", ns, name, err)
		}
		return fmt.Errorf("write endpoints %s: %w", key, err)
	}
	return nil
}

// endpointsLabels are the Service's labels, the managed-by label and,
// for a headless Service, the headless label.
func endpointsLabels(svc *corev1.Service) map[string]string {
	out := map[string]string{}
	for k, v := range svc.Labels {
		out[k] = v
	}
	delete(out, corev1.IsHeadlessService)
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		out[corev1.IsHeadlessService] = ""
	}
	out[LabelManagedBy] = Component
	return out
}

// inEndpoints tells whether a pod is listed: it has an IP, has not
// ended, and is not being deleted (unless the Service publishes
// not-ready addresses), as kube's ShouldPodBeInEndpoints.
func inEndpoints(pod *corev1.Pod, publishNotReady bool) bool {
	if pod.Status.PodIP == "" && len(pod.Status.PodIPs) == 0 {
		return false
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	return publishNotReady || pod.DeletionTimestamp == nil
}

// podIP is the pod's address of the Service's IP family.
func podIP(svc *corev1.Service, pod *corev1.Pod) string {
	wantV6 := false
	if len(svc.Spec.IPFamilies) > 0 {
		wantV6 = svc.Spec.IPFamilies[0] == corev1.IPv6Protocol
	}
	ips := []string{pod.Status.PodIP}
	for _, ip := range pod.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	for _, ip := range ips {
		if ip != "" && strings.Contains(ip, ":") == wantV6 {
			return ip
		}
	}
	return ""
}

// Subsets are the Service's endpoint subsets from its pods, packed as
// kube's RepackSubsets packs them (one subset per set of ports, addresses
// sorted by IP), and the trigger time of the change: the latest of the
// Service's creation and its pods' readiness transitions.
func Subsets(svc *corev1.Service, pods []*corev1.Pod) ([]corev1.EndpointSubset, time.Time) {
	trigger := svc.CreationTimestamp.Time
	type group struct {
		ports           []corev1.EndpointPort
		ready, notReady []corev1.EndpointAddress
	}
	groups := map[string]*group{}
	for _, pod := range pods {
		if !inEndpoints(pod, svc.Spec.PublishNotReadyAddresses) {
			continue
		}
		ip := podIP(svc, pod)
		if ip == "" {
			continue
		}
		if cond := readyCondition(pod); cond != nil && cond.LastTransitionTime.After(trigger) {
			trigger = cond.LastTransitionTime.Time
		}
		addr := corev1.EndpointAddress{IP: ip, TargetRef: &corev1.ObjectReference{
			Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
		}}
		if pod.Spec.NodeName != "" {
			node := pod.Spec.NodeName
			addr.NodeName = &node
		}
		if pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name && svc.Namespace == pod.Namespace {
			addr.Hostname = pod.Spec.Hostname
		}
		var ports []corev1.EndpointPort
		if len(svc.Spec.Ports) == 0 {
			if svc.Spec.ClusterIP != corev1.ClusterIPNone {
				continue
			}
		}
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			num, ok := endpointslice.FindPort(pod, sp)
			if !ok {
				continue
			}
			ports = append(ports, corev1.EndpointPort{Name: sp.Name, Port: num, Protocol: sp.Protocol, AppProtocol: sp.AppProtocol})
		}
		if len(svc.Spec.Ports) > 0 && len(ports) == 0 {
			continue
		}
		sort.Slice(ports, func(i, j int) bool { return ports[i].Name < ports[j].Name })
		k := portsKey(ports)
		g := groups[k]
		if g == nil {
			g = &group{ports: ports}
			groups[k] = g
		}
		if svc.Spec.PublishNotReadyAddresses || podutils.IsPodReady(pod) {
			g.ready = append(g.ready, addr)
		} else {
			g.notReady = append(g.notReady, addr)
		}
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	subsets := []corev1.EndpointSubset{}
	for _, k := range keys {
		g := groups[k]
		sortAddresses(g.ready)
		sortAddresses(g.notReady)
		subsets = append(subsets, corev1.EndpointSubset{Addresses: g.ready, NotReadyAddresses: g.notReady, Ports: g.ports})
	}
	return subsets, trigger
}

func readyCondition(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodReady {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func portsKey(ports []corev1.EndpointPort) string {
	parts := make([]string, len(ports))
	for i, p := range ports {
		app := ""
		if p.AppProtocol != nil {
			app = *p.AppProtocol
		}
		parts[i] = p.Name + "/" + strconv.Itoa(int(p.Port)) + "/" + string(p.Protocol) + "/" + app
	}
	return strings.Join(parts, ",")
}

// sortAddresses orders addresses by IP, then by pod UID, as kube does.
func sortAddresses(a []corev1.EndpointAddress) {
	sort.Slice(a, func(i, j int) bool {
		if a[i].IP != a[j].IP {
			return a[i].IP < a[j].IP
		}
		return a[i].TargetRef.UID < a[j].TargetRef.UID
	})
}

// Truncate keeps at most MaxCapacity addresses in ep, as kube's
// controller does: not-ready addresses go first; when the ready ones
// alone are too many, every not-ready one goes and each subset keeps a
// share of ready ones in proportion to its size (rounded up, the last
// subsets taking what is left). It tells whether anything went.
func Truncate(ep *corev1.Endpoints) bool {
	ready, notReady := 0, 0
	for _, ss := range ep.Subsets {
		ready += len(ss.Addresses)
		notReady += len(ss.NotReadyAddresses)
	}
	if ready+notReady <= MaxCapacity {
		return false
	}
	truncateReady := ready > MaxCapacity
	room, total := MaxCapacity-ready, notReady
	if truncateReady {
		room, total = MaxCapacity, ready
	}
	left := room
	for i := range ep.Subsets {
		ss := &ep.Subsets[i]
		n := len(ss.NotReadyAddresses)
		if truncateReady {
			n = len(ss.Addresses)
		}
		keep := min(int(math.Ceil(float64(n)/float64(total)*float64(room))), left)
		if truncateReady {
			ss.Addresses = ss.Addresses[:min(keep, len(ss.Addresses))]
			ss.NotReadyAddresses = nil
			left -= len(ss.Addresses)
		} else {
			ss.NotReadyAddresses = ss.NotReadyAddresses[:min(keep, len(ss.NotReadyAddresses))]
			left -= len(ss.NotReadyAddresses)
		}
	}
	return true
}
