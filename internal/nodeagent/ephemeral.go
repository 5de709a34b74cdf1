package nodeagent

import (
	corev1 "k8s.io/api/core/v1"
)

// Ephemeral containers (pods/ephemeralcontainers, `kubectl debug`) start
// in the running pod as the kubelet starts them: once each, after the
// pod's containers, never restarted; their status is in
// status.ephemeralContainerStatuses, and exec, attach and logs reach them
// by name. Sharing the target's process namespace (--target) is not
// simulated: the container sees its own processes.

// ephemeralSpec is an ephemeral container as the container it runs.
func ephemeralSpec(ec *corev1.EphemeralContainer) *corev1.Container {
	c := corev1.Container(ec.EphemeralContainerCommon)
	return &c
}

// syncEphemeral starts the pod's ephemeral containers that never ran.
func (w *podWorker) syncEphemeral(pod *corev1.Pod) {
	for i := range pod.Spec.EphemeralContainers {
		spec := ephemeralSpec(&pod.Spec.EphemeralContainers[i])
		w.mu.Lock()
		c := w.ctrLocked(spec.Name, false)
		start := c.current() == nil
		w.mu.Unlock()
		if start {
			w.startContainer(pod, spec, c)
			if w.ctx.Err() != nil {
				return
			}
		}
	}
}

// ephemeralStatusesLocked reports the pod's ephemeral containers.
func (w *podWorker) ephemeralStatusesLocked(pod *corev1.Pod, terminal bool) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for i := range pod.Spec.EphemeralContainers {
		cs := w.containerStatusLocked(ephemeralSpec(&pod.Spec.EphemeralContainers[i]), false, ReasonContainerCreating, terminal)
		cs.Ready = false
		out = append(out, cs)
	}
	return out
}
