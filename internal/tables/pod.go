package tables

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pod is kubectl's table of Pods (with the Completed row condition of a finished Pod).
var Pod = withConditions(kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
		col("Status", "string", "The aggregate status of the containers in this pod."),
		col("Restarts", "string", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
		ageColumn(),
		wide("IP", "string", corev1.PodStatus{}.SwaggerDoc()["podIP"]),
		wide("Node", "string", corev1.PodSpec{}.SwaggerDoc()["nodeName"]),
		wide("Nominated Node", "string", corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]),
		wide("Readiness Gates", "string", corev1.PodSpec{}.SwaggerDoc()["readinessGates"]),
	},
	func(pod *corev1.Pod, now time.Time) []interface{} {
		s := summarizePod(pod)
		restarts := strconv.Itoa(s.restarts)
		if s.restarts != 0 && !s.lastRestart.IsZero() {
			restarts = fmt.Sprintf("%d (%s ago)", s.restarts, age(s.lastRestart, now))
		}
		podIP := pod.Status.PodIP
		if len(pod.Status.PodIPs) > 0 {
			podIP = pod.Status.PodIPs[0].IP
		}
		return []interface{}{
			pod.Name,
			fmt.Sprintf("%d/%d", s.ready, s.total),
			s.status,
			restarts,
			age(pod.CreationTimestamp, now),
			orNone(podIP),
			orNone(pod.Spec.NodeName),
			orNone(pod.Status.NominatedNodeName),
			readinessGates(pod),
		}
	},
), podConditions)

// podConditions marks the rows of completed pods, as kube-apiserver does.
func podConditions(pod *corev1.Pod) []metav1.TableRowCondition {
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
	case corev1.PodFailed:
		return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodFailed), Message: "The pod failed."}}
	}
	return nil
}

// podSummary is what the READY, STATUS and RESTARTS columns show.
type podSummary struct {
	ready, total int
	// status is the STATUS cell: the phase, or the most telling reason.
	status string
	// restarts counts container restarts; lastRestart is when the most
	// recent of them ended (zero if unknown).
	restarts    int
	lastRestart metav1.Time
}

// summarizePod computes a pod's READY, STATUS and RESTARTS exactly as
// kubectl shows them. In order of precedence:
//
//   - the pod's phase, or status.reason when set (Evicted, NodeLost, ...),
//     or SchedulingGated when the PodScheduled condition says so;
//   - while init containers run: "Init:<reason>" for a failed or waiting
//     init container, else "Init:<done>/<total>"; sidecars (restartable init
//     containers) that have started do not hold initialization;
//   - once initialized: the reason of the first app container that is
//     waiting (ContainerCreating, CrashLoopBackOff, ErrImagePull, ...) or
//     terminated (Completed, Error, "Signal:N", "ExitCode:N"); "Completed"
//     becomes Running when a container still runs and the pod is Ready, the
//     failed container's reason when one failed, else NotReady when one runs;
//   - Terminating for a pod being deleted that has not finished (Unknown if
//     its node was lost).
//
// Before initialization completes, RESTARTS counts init containers; after,
// app containers plus sidecars.
func summarizePod(pod *corev1.Pod) podSummary {
	s := podSummary{total: len(pod.Spec.Containers)}
	s.status = string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		s.status = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			s.status = corev1.PodReasonSchedulingGated
		}
	}

	sidecars := map[string]bool{}
	for i := range pod.Spec.InitContainers {
		if isSidecar(&pod.Spec.InitContainers[i]) {
			sidecars[pod.Spec.InitContainers[i].Name] = true
			s.total++
		}
	}

	// Init containers run in order; the first one that has not succeeded
	// (and is not a started sidecar) names the status.
	var sidecarRestarts int
	var lastSidecarRestart metav1.Time
	initializing := false
	for i, c := range pod.Status.InitContainerStatuses {
		s.restarts += int(c.RestartCount)
		s.lastRestart = later(s.lastRestart, c.LastTerminationState)
		if sidecars[c.Name] {
			sidecarRestarts += int(c.RestartCount)
			lastSidecarRestart = later(lastSidecarRestart, c.LastTerminationState)
		}
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case sidecars[c.Name] && c.Started != nil && *c.Started:
			if c.Ready {
				s.ready++
			}
			continue
		case c.State.Terminated != nil:
			t := c.State.Terminated
			switch {
			case t.Reason != "":
				s.status = "Init:" + t.Reason
			case t.Signal != 0:
				s.status = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				s.status = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			s.status = "Init:" + c.State.Waiting.Reason
		default:
			s.status = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}

	if !initializing || podConditionTrue(pod, corev1.PodInitialized) {
		s.restarts = sidecarRestarts
		s.lastRestart = lastSidecarRestart
		hasRunning := false
		errorReason := ""
		// Backwards, so that the first container's state wins.
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			c := pod.Status.ContainerStatuses[i]
			s.restarts += int(c.RestartCount)
			s.lastRestart = later(s.lastRestart, c.LastTerminationState)
			switch {
			case c.State.Waiting != nil && c.State.Waiting.Reason != "":
				s.status = c.State.Waiting.Reason
			case c.State.Terminated != nil:
				t := c.State.Terminated
				switch {
				case t.Reason != "":
					s.status = t.Reason
				case t.Signal != 0:
					s.status = fmt.Sprintf("Signal:%d", t.Signal)
				default:
					s.status = fmt.Sprintf("ExitCode:%d", t.ExitCode)
				}
				if t.ExitCode != 0 {
					errorReason = s.status
				}
			case c.Ready && c.State.Running != nil:
				hasRunning = true
				s.ready++
			}
		}
		if s.status == "Completed" {
			switch {
			case hasRunning && podConditionTrue(pod, corev1.PodReady):
				s.status = "Running"
			case errorReason != "":
				s.status = errorReason
			case hasRunning:
				s.status = "NotReady"
			}
		}
	}

	if pod.DeletionTimestamp != nil {
		switch {
		case pod.Status.Reason == nodeLostReason:
			s.status = "Unknown"
		case pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed:
			s.status = "Terminating"
		}
	}
	return s
}

// nodeLostReason is the pod status reason the node lifecycle controller sets
// on pods of an unreachable node.
const nodeLostReason = "NodeLost"

// isSidecar reports whether an init container is a restartable ("sidecar")
// one, which keeps running alongside the app containers.
func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// later returns the later of t and the end of a container's last
// termination, if it has one.
func later(t metav1.Time, last corev1.ContainerState) metav1.Time {
	if last.Terminated != nil && t.Before(&last.Terminated.FinishedAt) {
		return last.Terminated.FinishedAt
	}
	return t
}

// podConditionTrue reports whether the pod's first condition of type ct
// is True.
func podConditionTrue(pod *corev1.Pod, ct corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == ct {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// readinessGates renders "<true>/<total>" for a pod's readiness gates, or
// "<none>" when it has none.
func readinessGates(pod *corev1.Pod) string {
	if len(pod.Spec.ReadinessGates) == 0 {
		return "<none>"
	}
	n := 0
	for _, g := range pod.Spec.ReadinessGates {
		for _, c := range pod.Status.Conditions {
			if c.Type == g.ConditionType {
				if c.Status == corev1.ConditionTrue {
					n++
				}
				break
			}
		}
	}
	return fmt.Sprintf("%d/%d", n, len(pod.Spec.ReadinessGates))
}
