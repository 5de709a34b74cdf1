package nodeagent

import (
	"encoding/json"
	"net/http"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"minik/internal/nodeagent/runtime"
)

// The node's /stats/summary is the kubelet's Summary API
// (stats/v1alpha1): the node's CPU and memory, and each pod's and each
// running container's, from the runtime's deterministic usage (see
// runtime/usage.go). A container's demand is the rules' figure for its
// program, replaced by the pod's metrics.minik.dev/usage annotation for
// that container, then capped by its limits and by the node's capacity.
// The node's figures are its pods' plus the node's own processes
// (systemOverhead: the kubelet, the runtime, the system). metrics.k8s.io
// reads these summaries, so kubectl top shows the same numbers.

// systemOverhead is what the simulated machine uses outside its pods, as
// a small real node's kubelet, container runtime and system daemons do.
var systemOverhead = []struct {
	name   string
	demand runtime.Demand
}{
	{statsv1alpha1.SystemContainerKubelet, runtime.Demand{NanoCores: 20_000_000, WorkingSetBytes: 48 << 20, RSSBytes: 40 << 20}},
	{statsv1alpha1.SystemContainerRuntime, runtime.Demand{NanoCores: 10_000_000, WorkingSetBytes: 32 << 20, RSSBytes: 28 << 20}},
	{statsv1alpha1.SystemContainerMisc, runtime.Demand{NanoCores: 15_000_000, WorkingSetBytes: 160 << 20, RSSBytes: 120 << 20}},
}

// serveStatsSummary answers GET /stats/summary; started is when the node
// (its endpoint) started.
func (n *node) serveStatsSummary(started time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s := n.summary(started, n.cfg.Clock.Now())
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s)
	}
}

// capacity is the node's capacity of a resource (its template's, else
// the default shape).
func (n *node) capacity(rn corev1.ResourceName) resource.Quantity {
	if n.template != nil {
		if q, ok := n.template.Status.Capacity[rn]; ok {
			return q
		}
	}
	return defaultCapacity[rn]
}

// summary is the node's Summary at now.
func (n *node) summary(started, now time.Time) *statsv1alpha1.Summary {
	cpuCap, memCap := n.capacity(corev1.ResourceCPU), n.capacity(corev1.ResourceMemory)
	nodeCores := uint64(cpuCap.MilliValue()) * 1_000_000
	nodeMem := uint64(memCap.Value())
	n.mu.Lock()
	workers := make([]*podWorker, 0, len(n.workers))
	for _, pw := range n.workers {
		workers = append(workers, pw)
	}
	n.mu.Unlock()
	mt := metav1.NewTime(now)
	out := &statsv1alpha1.Summary{Pods: []statsv1alpha1.PodStats{}}
	var total runtime.Usage
	for _, pw := range workers {
		if ps, ok := pw.stats(now, nodeCores); ok {
			total.NanoCores += *ps.CPU.UsageNanoCores
			total.CoreNanoSeconds += *ps.CPU.UsageCoreNanoSeconds
			total.WorkingSetBytes += *ps.Memory.WorkingSetBytes
			total.RSSBytes += *ps.Memory.RSSBytes
			out.Pods = append(out.Pods, ps)
		}
	}
	sort.Slice(out.Pods, func(i, j int) bool {
		a, b := out.Pods[i].PodRef, out.Pods[j].PodRef
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
	})
	up := now.Sub(started)
	if up < 0 {
		up = 0
	}
	st := metav1.NewTime(started)
	for _, sys := range systemOverhead {
		u := runtime.Usage{
			NanoCores: sys.demand.NanoCores, CoreNanoSeconds: uint64(float64(sys.demand.NanoCores) * up.Seconds()),
			WorkingSetBytes: sys.demand.WorkingSetBytes, RSSBytes: sys.demand.RSSBytes,
		}
		out.Node.SystemContainers = append(out.Node.SystemContainers, statsv1alpha1.ContainerStats{
			Name: sys.name, StartTime: st, CPU: cpuStats(mt, u), Memory: memoryStats(mt, u, 0),
		})
		total.NanoCores += u.NanoCores
		total.CoreNanoSeconds += u.CoreNanoSeconds
		total.WorkingSetBytes += u.WorkingSetBytes
		total.RSSBytes += u.RSSBytes
	}
	// A machine runs at most its cores and holds at most its memory.
	total.NanoCores = min(total.NanoCores, nodeCores)
	total.WorkingSetBytes = min(total.WorkingSetBytes, nodeMem)
	total.RSSBytes = min(total.RSSBytes, total.WorkingSetBytes)
	out.Node.NodeName = n.name
	out.Node.StartTime = st
	out.Node.CPU = cpuStats(mt, total)
	out.Node.Memory = memoryStats(mt, total, nodeMem)
	return out
}

// stats are the pod's figures at now: its running containers; ok is
// false when none runs (kube's summary leaves such pods out of metrics).
func (pw *podWorker) stats(now time.Time, nodeCores uint64) (statsv1alpha1.PodStats, bool) {
	pod := pw.latest()
	if pod == nil {
		return statsv1alpha1.PodStats{}, false
	}
	overrides, err := runtime.ParseUsageOverrides(pod.Annotations[runtime.UsageAnnotation])
	if err != nil {
		pw.n.log.Debug("ignoring bad usage annotation", "pod", pw.key, "annotation", runtime.UsageAnnotation, "err", err)
		overrides = nil
	}
	mt := metav1.NewTime(now)
	pw.mu.Lock()
	defer pw.mu.Unlock()
	ps := statsv1alpha1.PodStats{
		PodRef:    statsv1alpha1.PodReference{Name: pod.Name, Namespace: pod.Namespace, UID: string(pod.UID)},
		StartTime: pw.startTime,
	}
	var total runtime.Usage
	for _, name := range containerNames(pod) {
		c := pw.ctrs[name]
		if c == nil {
			continue
		}
		inst := c.current()
		if inst == nil || inst.c == nil || inst.exit != nil || inst.c.Exit() != nil {
			continue
		}
		spec := pw.specOf(pod, name)
		d := inst.c.Demand()
		if o, ok := overrides[name]; ok {
			d = o.Apply(d)
		} else if o, ok := overrides["*"]; ok {
			d = o.Apply(d)
		}
		var cpuLimit, memLimit uint64
		if spec != nil {
			if q, ok := spec.Resources.Limits[corev1.ResourceCPU]; ok {
				cpuLimit = uint64(q.MilliValue()) * 1_000_000
			}
			if q, ok := spec.Resources.Limits[corev1.ResourceMemory]; ok {
				memLimit = uint64(q.Value())
			}
		}
		d = d.Capped(cpuLimit, memLimit).Capped(nodeCores, 0)
		u := inst.c.Usage(d, now)
		ps.Containers = append(ps.Containers, statsv1alpha1.ContainerStats{
			Name: name, StartTime: metav1.NewTime(inst.startedAt),
			CPU: cpuStats(mt, u), Memory: memoryStats(mt, u, memLimit),
		})
		total.NanoCores += u.NanoCores
		total.CoreNanoSeconds += u.CoreNanoSeconds
		total.WorkingSetBytes += u.WorkingSetBytes
		total.RSSBytes += u.RSSBytes
	}
	if len(ps.Containers) == 0 {
		return ps, false
	}
	ps.CPU = cpuStats(mt, total)
	ps.Memory = memoryStats(mt, total, 0)
	return ps, true
}

// containerNames are the pod's init containers (a running sidecar) and
// containers, in spec order.
func containerNames(pod *corev1.Pod) []string {
	names := make([]string, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	return names
}

func cpuStats(t metav1.Time, u runtime.Usage) *statsv1alpha1.CPUStats {
	nano, cum := u.NanoCores, u.CoreNanoSeconds
	return &statsv1alpha1.CPUStats{Time: t, UsageNanoCores: &nano, UsageCoreNanoSeconds: &cum}
}

// memoryStats are u's memory figures; limit, when set, gives
// availableBytes (what is left of it), as cAdvisor reports.
func memoryStats(t metav1.Time, u runtime.Usage, limit uint64) *statsv1alpha1.MemoryStats {
	ws, rss, usage := u.WorkingSetBytes, u.RSSBytes, u.WorkingSetBytes
	var zero uint64
	m := &statsv1alpha1.MemoryStats{Time: t, UsageBytes: &usage, WorkingSetBytes: &ws, RSSBytes: &rss, PageFaults: &zero, MajorPageFaults: &zero}
	if limit > 0 {
		avail := uint64(0)
		if limit > ws {
			avail = limit - ws
		}
		m.AvailableBytes = &avail
	}
	return m
}
