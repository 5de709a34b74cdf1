package nodeagent

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Waiting reasons the kubelet reports.
const (
	ReasonContainerCreating          = "ContainerCreating"
	ReasonPodInitializing            = "PodInitializing"
	ReasonCrashLoopBackOff           = "CrashLoopBackOff"
	ReasonErrImagePull               = "ErrImagePull"
	ReasonImagePullBackOff           = "ImagePullBackOff"
	ReasonInvalidImageName           = "InvalidImageName"
	ReasonErrImageNeverPull          = "ErrImageNeverPull"
	ReasonCreateContainerConfigError = "CreateContainerConfigError"
	ReasonCreateContainerError       = "CreateContainerError"
)

// statusLocked is the pod's status as the kubelet computes it from what
// runs. terminal is true once the pod's containers were stopped for good
// (its deletion): its phase is then Succeeded or Failed.
func (w *podWorker) statusLocked(pod *corev1.Pod, terminal bool) corev1.PodStatus {
	n := w.n
	if w.rejectReason != "" {
		return corev1.PodStatus{Phase: corev1.PodFailed, Reason: w.rejectReason, Message: "Pod was rejected: " + w.rejectMessage, QOSClass: pod.Status.QOSClass}
	}
	now := metav1.NewTime(n.cfg.Clock.Now().Truncate(time.Second))
	s := corev1.PodStatus{
		QOSClass: pod.Status.QOSClass,
		HostIP:   n.ip.String(),
		HostIPs:  []corev1.HostIP{{IP: n.ip.String()}},
	}
	if !w.startTime.IsZero() {
		st := w.startTime
		s.StartTime = &st
	}
	ip := w.ip
	if ip == "" && w.lastStatus != nil {
		ip = w.lastStatus.PodIP
	}
	if ip != "" {
		s.PodIP, s.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	}
	hasInit := len(pod.Spec.InitContainers) > 0
	defaultWaiting := ReasonContainerCreating
	if hasInit {
		defaultWaiting = ReasonPodInitializing
	}
	for i := range pod.Spec.InitContainers {
		s.InitContainerStatuses = append(s.InitContainerStatuses, w.containerStatusLocked(&pod.Spec.InitContainers[i], true, defaultWaiting, terminal))
	}
	for i := range pod.Spec.Containers {
		s.ContainerStatuses = append(s.ContainerStatuses, w.containerStatusLocked(&pod.Spec.Containers[i], false, defaultWaiting, terminal))
	}
	s.EphemeralContainerStatuses = w.ephemeralStatusesLocked(pod, terminal)
	s.Phase = podPhase(pod, s.InitContainerStatuses, s.ContainerStatuses, terminal || w.terminal)
	if terminal && s.Phase != corev1.PodSucceeded && s.Phase != corev1.PodFailed {
		s.Phase = corev1.PodFailed
	}
	s.Conditions = w.conditionsLocked(pod, &s, now)
	return s
}

// terminatedOf is the Terminated state of an instance that ended.
func terminatedOf(inst *instance) *corev1.ContainerStateTerminated {
	e := inst.exit
	return &corev1.ContainerStateTerminated{
		ExitCode: e.Code, Reason: e.Reason, Message: inst.msg,
		StartedAt:   metav1.NewTime(e.Started.Truncate(time.Second)),
		FinishedAt:  metav1.NewTime(e.Finished.Truncate(time.Second)),
		ContainerID: inst.id,
	}
}

// containerStatusLocked reports one container: its current instance
// (running or terminated), or why none runs (waiting), and the last
// termination.
func (w *podWorker) containerStatusLocked(spec *corev1.Container, init bool, defaultWaiting string, terminal bool) corev1.ContainerStatus {
	c := w.ctrs[spec.Name]
	if c == nil {
		c = &ctr{name: spec.Name, init: init}
	}
	f := false
	cs := corev1.ContainerStatus{Name: spec.Name, Image: spec.Image, RestartCount: c.restartCount(), Started: &f}
	cur := c.current()
	prev := c.prevTerm
	if n := len(c.instances); n >= 2 {
		prev = terminatedOf(c.instances[n-2])
	}
	if cur != nil {
		cs.Image, cs.ImageID, cs.ContainerID = cur.image, cur.imageID, cur.id
	}
	switch {
	case cur != nil && cur.exit == nil:
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(cur.startedAt.Truncate(time.Second))}
		started := c.started
		cs.Started = &started
		cs.Ready = c.ready && started
	case cur != nil && c.waiting != nil && !terminal:
		cs.State.Waiting = c.waiting.DeepCopy()
		prev = terminatedOf(cur)
	case cur != nil:
		cs.State.Terminated = terminatedOf(cur)
		// The kubelet's prober reports an init container that completed
		// ready (and not started: it no longer runs).
		cs.Ready = init && cur.exit.Code == 0
	case c.waiting != nil && !terminal:
		cs.State.Waiting = c.waiting.DeepCopy()
	case terminal:
		cs.State.Terminated = &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "ContainerStatusUnknown",
			Message: "The container could not be located when the pod was terminated",
		}
	default:
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: defaultWaiting}
	}
	if prev != nil {
		cs.LastTerminationState.Terminated = prev
	}
	return cs
}

// podPhase is kube's getPhase: Pending until every container has started
// once, Running while any runs (or restarts), Succeeded or Failed when
// all have ended for good.
func podPhase(pod *corev1.Pod, inits, ctrs []corev1.ContainerStatus, terminal bool) corev1.PodPhase {
	pendingInit, failedInit := 0, 0
	for i, cs := range inits {
		if isSidecar(&pod.Spec.InitContainers[i]) {
			if cs.State.Running == nil || cs.Started == nil || !*cs.Started {
				pendingInit++
			}
			continue
		}
		switch {
		case cs.State.Running != nil:
			pendingInit++
		case cs.State.Terminated != nil:
			if cs.State.Terminated.ExitCode != 0 {
				failedInit++
			}
		case cs.State.Waiting != nil:
			if t := cs.LastTerminationState.Terminated; t != nil {
				if t.ExitCode != 0 {
					failedInit++
				}
			} else {
				pendingInit++
			}
		default:
			pendingInit++
		}
	}
	unknown, running, waiting, stopped, succeeded := 0, 0, 0, 0, 0
	anyStarted := false
	for _, cs := range ctrs {
		switch {
		case cs.State.Running != nil:
			running++
			anyStarted = true
		case cs.State.Terminated != nil:
			stopped++
			anyStarted = true
			if cs.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case cs.State.Waiting != nil:
			if cs.LastTerminationState.Terminated != nil {
				stopped++
				anyStarted = true
			} else {
				waiting++
			}
		default:
			unknown++
		}
	}
	if failedInit > 0 && pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
		return corev1.PodFailed
	}
	switch {
	case pendingInit > 0 && !anyStarted, waiting > 0:
		return corev1.PodPending
	case running > 0 && unknown == 0:
		return corev1.PodRunning
	case running == 0 && stopped > 0 && unknown == 0:
		if terminal {
			if stopped == succeeded {
				return corev1.PodSucceeded
			}
			return corev1.PodFailed
		}
		switch {
		case pod.Spec.RestartPolicy == corev1.RestartPolicyAlways || pod.Spec.RestartPolicy == "":
			return corev1.PodRunning
		case stopped == succeeded:
			return corev1.PodSucceeded
		case pod.Spec.RestartPolicy == corev1.RestartPolicyNever:
			return corev1.PodFailed
		}
		return corev1.PodRunning
	}
	return corev1.PodPending
}

// conditionsLocked are the pod's conditions in the kubelet's order,
// keeping the transition times of those that did not change.
func (w *podWorker) conditionsLocked(pod *corev1.Pod, s *corev1.PodStatus, now metav1.Time) []corev1.PodCondition {
	var conds []corev1.PodCondition
	add := func(t corev1.PodConditionType, ok bool, reason, msg string) {
		c := corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: reason, Message: msg, LastTransitionTime: now}
		if ok {
			c.Status, c.Reason, c.Message = corev1.ConditionTrue, "", ""
		}
		conds = append(conds, c)
	}
	terminalPhase := s.Phase == corev1.PodSucceeded || s.Phase == corev1.PodFailed
	add(corev1.PodReadyToStartContainers, w.sandboxReady, "", "")

	var incomplete []string
	for i, cs := range s.InitContainerStatuses {
		spec := &pod.Spec.InitContainers[i]
		done := cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
		if isSidecar(spec) {
			done = cs.State.Running != nil && cs.Started != nil && *cs.Started
		}
		if !done {
			incomplete = append(incomplete, cs.Name)
		}
	}
	initialized := len(incomplete) == 0
	if !initialized {
		// Once the containers have started, the pod stays initialized.
		for _, cs := range s.ContainerStatuses {
			if cs.State.Running != nil || cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil {
				initialized = true
			}
		}
	}
	add(corev1.PodInitialized, initialized, "ContainersNotInitialized", fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(incomplete, " ")))

	var unready []string
	for _, cs := range s.ContainerStatuses {
		if !cs.Ready {
			unready = append(unready, cs.Name)
		}
	}
	for i, cs := range s.InitContainerStatuses {
		if isSidecar(&pod.Spec.InitContainers[i]) && !cs.Ready {
			unready = append(unready, cs.Name)
		}
	}
	readyReason, readyMsg := "ContainersNotReady", fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
	if terminalPhase {
		readyReason, readyMsg = "PodCompleted", ""
	}
	ready := len(unready) == 0 && !terminalPhase
	add(corev1.PodReady, ready, readyReason, readyMsg)
	add(corev1.ContainersReady, ready, readyReason, readyMsg)
	add(corev1.PodScheduled, true, "", "")

	prev := pod.Status.Conditions
	if w.lastStatus != nil && len(w.lastStatus.Conditions) > 0 {
		prev = w.lastStatus.Conditions
	}
	for i := range conds {
		for _, p := range prev {
			if p.Type == conds[i].Type && p.Status == conds[i].Status {
				conds[i].LastTransitionTime = p.LastTransitionTime
			}
		}
	}
	return conds
}
