package scheduler

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// Defaults kube-scheduler assumes, for scoring only, for a container that
// requests no cpu or memory (schedutil.DefaultMilliCPURequest and
// DefaultMemoryRequest): a pod without requests still counts as using
// something when nodes are compared.
const (
	defaultMilliCPURequest int64 = 100
	defaultMemoryRequest   int64 = 200 * 1024 * 1024
)

// nonZeroRequests are those defaults as kube's resource helper takes them.
var nonZeroRequests = corev1.ResourceList{
	corev1.ResourceCPU:    *resource.NewMilliQuantity(defaultMilliCPURequest, resource.DecimalSI),
	corev1.ResourceMemory: *resource.NewQuantity(defaultMemoryRequest, resource.BinarySI),
}

// resources is a vector of the resources NodeResourcesFit compares.
type resources struct {
	milliCPU  int64
	memory    int64
	ephemeral int64
	// scalar are extended resources (example.com/gpu) and huge pages.
	scalar map[corev1.ResourceName]int64
}

func (r *resources) add(o *resources) {
	r.milliCPU += o.milliCPU
	r.memory += o.memory
	r.ephemeral += o.ephemeral
	for k, v := range o.scalar {
		if r.scalar == nil {
			r.scalar = map[corev1.ResourceName]int64{}
		}
		r.scalar[k] += v
	}
}

func (r *resources) sub(o *resources) {
	r.milliCPU -= o.milliCPU
	r.memory -= o.memory
	r.ephemeral -= o.ephemeral
	for k, v := range o.scalar {
		if r.scalar != nil {
			r.scalar[k] -= v
		}
	}
}

func (r *resources) clone() resources {
	c := *r
	if r.scalar != nil {
		c.scalar = make(map[corev1.ResourceName]int64, len(r.scalar))
		for k, v := range r.scalar {
			c.scalar[k] = v
		}
	}
	return c
}

// isScalarResource tells whether NodeResourcesFit checks name as a scalar:
// extended resources (a domain-prefixed name outside kubernetes.io) and
// huge pages.
func isScalarResource(name corev1.ResourceName) bool {
	s := string(name)
	if strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) {
		return true
	}
	if !strings.Contains(s, "/") || strings.HasPrefix(s, corev1.ResourceDefaultNamespacePrefix) {
		return false
	}
	return !strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix)
}

// fromList converts a ResourceList; pods (the count) is returned apart.
func fromList(rl corev1.ResourceList) (r resources, pods int64) {
	for name, q := range rl {
		switch name {
		case corev1.ResourceCPU:
			r.milliCPU += q.MilliValue()
		case corev1.ResourceMemory:
			r.memory += q.Value()
		case corev1.ResourceEphemeralStorage:
			r.ephemeral += q.Value()
		case corev1.ResourcePods:
			pods += q.Value()
		default:
			if isScalarResource(name) {
				if r.scalar == nil {
					r.scalar = map[corev1.ResourceName]int64{}
				}
				r.scalar[name] += q.Value()
			}
		}
	}
	return r, pods
}

// podRequests computes what a pod asks of a node with kube's
// resource.PodRequests (containers and sidecars, the largest init
// container, pod-level requests, the RuntimeClass overhead). With nonZero,
// a container missing a cpu or memory request counts the scheduler's
// scoring defaults instead, as kube-scheduler's NodeInfo counts it.
func podRequests(pod *corev1.Pod, nonZero bool) resources {
	var opts resourcehelper.PodResourcesOptions
	if nonZero {
		opts.NonMissingContainerRequests = nonZeroRequests
	}
	r, _ := fromList(resourcehelper.PodRequests(pod, opts))
	return r
}

// affinityTerm is a compiled PodAffinityTerm.
type affinityTerm struct {
	namespaces  sets.Set[string]
	nsSelector  labels.Selector // nil: namespaces alone decide
	selector    labels.Selector
	topologyKey string
	// key identifies the term: pods whose terms are equal share a key.
	key string
}

func compileAffinityTerms(pod *corev1.Pod, terms []corev1.PodAffinityTerm) ([]affinityTerm, bool) {
	out := make([]affinityTerm, 0, len(terms))
	for i := range terms {
		t := &terms[i]
		sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
		if err != nil {
			return nil, false
		}
		at := affinityTerm{selector: sel, topologyKey: t.TopologyKey, namespaces: sets.New(t.Namespaces...)}
		if len(t.Namespaces) == 0 && t.NamespaceSelector == nil {
			at.namespaces.Insert(pod.Namespace)
		}
		if t.NamespaceSelector != nil {
			nsSel, err := metav1.LabelSelectorAsSelector(t.NamespaceSelector)
			if err != nil {
				return nil, false
			}
			at.nsSelector = nsSel
		}
		at.key = termKey(&at)
		out = append(out, at)
	}
	return out, true
}

func termKey(t *affinityTerm) string {
	var b strings.Builder
	b.WriteString(strings.Join(sets.List(t.namespaces), ","))
	b.WriteString("|")
	if t.nsSelector != nil {
		b.WriteString("ns:")
		b.WriteString(t.nsSelector.String())
	}
	b.WriteString("|")
	b.WriteString(t.selector.String())
	b.WriteString("|")
	b.WriteString(t.topologyKey)
	return b.String()
}

// hostPort is a host port a pod claims.
type hostPort struct {
	ip       string
	protocol corev1.Protocol
	port     int32
}

func (a hostPort) conflicts(b hostPort) bool {
	if a.port != b.port || a.protocol != b.protocol {
		return false
	}
	return a.ip == b.ip || a.ip == "0.0.0.0" || b.ip == "0.0.0.0"
}

// podInfo is what the scheduler precomputes once per pod version: its
// requests, its compiled selectors and terms, and its spreading key.
type podInfo struct {
	pod *corev1.Pod
	// req is the pod's request; nonZero the one scoring uses.
	req     resources
	nonZero resources
	// required is the pod's nodeSelector and required node affinity;
	// preferred (nil: none) scores nodes.
	required  nodeaffinity.RequiredNodeAffinity
	preferred *nodeaffinity.PreferredSchedulingTerms
	// namesFromAffinity are the node names a required node affinity pins
	// the pod to (matchFields metadata.name In); nil means no such pin.
	namesFromAffinity sets.Set[string]
	affinityConflict  bool
	// affinity and antiAffinity are required pod (anti-)affinity terms.
	affinity     []affinityTerm
	antiAffinity []affinityTerm
	// invalidAffinity is set when a term could not be compiled.
	invalidAffinity bool
	ports           []hostPort
	priority        int32
	// spreadKey groups pods that spreading keeps apart: the controller
	// owner, else the namespace and labels; empty means none.
	spreadKey string
	// labelsKey groups pods by namespace and labels: pod (anti-)affinity
	// terms select them alike.
	labelsKey string
}

func newPodInfo(pod *corev1.Pod) *podInfo {
	pi := &podInfo{
		pod:       pod,
		req:       podRequests(pod, false),
		nonZero:   podRequests(pod, true),
		required:  nodeaffinity.GetRequiredNodeAffinity(pod),
		labelsKey: labelsKey(pod),
	}
	pi.spreadKey = pi.labelsKey
	if ref := metav1.GetControllerOf(pod); ref != nil {
		pi.spreadKey = "uid:" + string(ref.UID)
	} else if len(pod.Labels) == 0 {
		pi.spreadKey = ""
	}
	if pod.Spec.Priority != nil {
		pi.priority = *pod.Spec.Priority
	}
	if a := pod.Spec.Affinity; a != nil {
		if na := a.NodeAffinity; na != nil {
			if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
				pi.namesFromAffinity, pi.affinityConflict = pinnedNodeNames(req.NodeSelectorTerms)
			}
			// Terms with a zero weight or no requirement are skipped; an
			// invalid term (validation refuses them) drops the preferences.
			if p, err := nodeaffinity.NewPreferredSchedulingTerms(na.PreferredDuringSchedulingIgnoredDuringExecution); err == nil && len(na.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
				pi.preferred = p
			}
		}
		if pa := a.PodAffinity; pa != nil && len(pa.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
			terms, ok := compileAffinityTerms(pod, pa.RequiredDuringSchedulingIgnoredDuringExecution)
			pi.affinity, pi.invalidAffinity = terms, !ok
		}
		if pa := a.PodAntiAffinity; pa != nil && len(pa.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
			terms, ok := compileAffinityTerms(pod, pa.RequiredDuringSchedulingIgnoredDuringExecution)
			pi.antiAffinity = terms
			pi.invalidAffinity = pi.invalidAffinity || !ok
		}
	}
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			ip := p.HostIP
			if ip == "" {
				ip = "0.0.0.0"
			}
			proto := p.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			pi.ports = append(pi.ports, hostPort{ip: ip, protocol: proto, port: p.HostPort})
		}
	}
	return pi
}

// pinnedNodeNames returns the node names that required node affinity's
// matchFields (metadata.name In) allow, as NodeAffinity's PreFilter does:
// nil when some term does not pin names, and conflict when the terms pin
// no name at all.
func pinnedNodeNames(terms []corev1.NodeSelectorTerm) (names sets.Set[string], conflict bool) {
	if len(terms) == 0 {
		return nil, false
	}
	for _, t := range terms {
		var termNames sets.Set[string]
		for _, r := range t.MatchFields {
			if r.Key == metav1.ObjectNameField && r.Operator == corev1.NodeSelectorOpIn {
				s := sets.New(r.Values...)
				if termNames == nil {
					termNames = s
				} else {
					termNames = termNames.Intersection(s)
				}
			}
		}
		if termNames == nil {
			return nil, false
		}
		names = names.Union(termNames)
	}
	if len(names) == 0 {
		return nil, true
	}
	return names, false
}

// labelsKey names a pod's namespace and labels.
func labelsKey(pod *corev1.Pod) string {
	keys := make([]string, 0, len(pod.Labels))
	for k := range pod.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(pod.Namespace)
	for _, k := range keys {
		b.WriteByte(',')
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(pod.Labels[k])
	}
	return b.String()
}
