package registry

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// podQOS computes a Pod's QoS class as kube-apiserver does on create:
//
//   - BestEffort when no container (regular or init) requests or limits any
//     CPU or memory;
//   - Guaranteed when every container has CPU and memory limits and, summed
//     over containers, requests equal limits for both;
//   - Burstable otherwise.
//
// When the Pod sets pod-level resources for CPU or memory, those decide
// instead of the containers'.
func podQOS(pod *corev1.Pod) corev1.PodQOSClass {
	if r := pod.Spec.Resources; r != nil && (hasCPUOrMemory(r.Requests) || hasCPUOrMemory(r.Limits)) {
		return qosOf(positiveCPUMemory(r.Requests), positiveCPUMemory(r.Limits), len(positiveCPUMemory(r.Limits)) == 2)
	}
	requests := corev1.ResourceList{}
	limits := corev1.ResourceList{}
	guaranteed := true
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range cs {
			addTo(requests, positiveCPUMemory(c.Resources.Requests))
			cl := positiveCPUMemory(c.Resources.Limits)
			addTo(limits, cl)
			if len(cl) != 2 {
				guaranteed = false
			}
		}
	}
	return qosOf(requests, limits, guaranteed)
}

func qosOf(requests, limits corev1.ResourceList, allLimited bool) corev1.PodQOSClass {
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if !allLimited || len(requests) != len(limits) {
		return corev1.PodQOSBurstable
	}
	for name, req := range requests {
		if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
			return corev1.PodQOSBurstable
		}
	}
	return corev1.PodQOSGuaranteed
}

func hasCPUOrMemory(l corev1.ResourceList) bool {
	_, cpu := l[corev1.ResourceCPU]
	_, mem := l[corev1.ResourceMemory]
	return cpu || mem
}

// positiveCPUMemory returns the CPU and memory entries of l that are above
// zero; QoS ignores other resources and zero quantities.
func positiveCPUMemory(l corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := l[name]; ok && q.Cmp(resource.Quantity{}) > 0 {
			out[name] = q.DeepCopy()
		}
	}
	return out
}

func addTo(sum, l corev1.ResourceList) {
	for name, q := range l {
		if cur, ok := sum[name]; ok {
			q.Add(cur)
		}
		sum[name] = q
	}
}
