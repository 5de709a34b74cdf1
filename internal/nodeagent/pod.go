package nodeagent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"minik/internal/nodeagent/dra"
	"minik/internal/nodeagent/runtime"
)

// podWorker is the kubelet's worker of one pod: a goroutine that syncs
// the pod whenever something changes (a new version from the API, a
// container exit, a probe result, a back-off ending), level-based: each
// sync looks at the whole pod and does the next thing it needs.
//
// Its state is guarded by mu; the sync goroutine releases mu while it
// waits (pulls, sandbox, container creation, stops), so that the log
// endpoint and the probes can read it.
type podWorker struct {
	n      *node
	uid    types.UID
	key    string
	ctx    context.Context
	cancel context.CancelFunc
	kick   chan struct{}

	// podMu guards pod alone, so that the informer handing a new version
	// never waits for the worker.
	podMu sync.Mutex
	pod   *corev1.Pod // the latest version from the API
	gone  atomic.Bool // deleted from the API

	mu sync.Mutex

	synced       bool
	startTime    metav1.Time
	ip           string
	sandboxReady bool
	volumes      map[string]*runtime.Volume
	volumesReady bool
	// rejectReason and rejectMessage say why the node's admission
	// refused the pod (it never runs).
	rejectReason, rejectMessage string
	// nextRefresh is when the configMap, secret and projected volumes are
	// next rewritten from their sources (refreshVolumes).
	nextRefresh  time.Time
	mountBackoff time.Duration
	ctrs         map[string]*ctr
	terminal     bool // the pod reached Succeeded or Failed
	terminating  bool // containers stopped for the pod's deletion
	deleted      bool // the agent deleted the pod from the API
	lastStatus   *corev1.PodStatus

	// tokens are the pod's service account tokens (projected volumes).
	tokens podTokens
	// claims are the pod's prepared resource claims by pod claim name;
	// nil until they are prepared (claims.go).
	claims map[string]dra.PreparedClaim

	timerMu sync.Mutex
	timer   interface{ Stop() bool }
	timerAt time.Time
}

// ctr is what the worker knows of one container of the pod.
type ctr struct {
	name      string
	init      bool
	instances []*instance // started instances, oldest first
	restored  int32       // restarts before the agent (re)started
	prevTerm  *corev1.ContainerStateTerminated
	waiting   *corev1.ContainerStateWaiting // why no instance runs
	crash     backoff
	pull      backoff
	pullErr   string
	ready     bool
	started   bool
}

// instance is one run of a container (one restart).
type instance struct {
	id         string // containerd://<id>
	c          *runtime.Container
	log        *containerLog
	restart    int32
	image      string
	imageID    string
	startedAt  time.Time
	exit       *runtime.Exit
	probesStop context.CancelFunc
	msg        string // termination message
}

func (c *ctr) current() *instance {
	if len(c.instances) == 0 {
		return nil
	}
	return c.instances[len(c.instances)-1]
}

// restartCount is how many times the container restarted.
func (c *ctr) restartCount() int32 {
	if len(c.instances) == 0 {
		return c.restored
	}
	return c.restored + int32(len(c.instances)) - 1
}

// backoff is kube's exponential back-off (flowcontrol.Backoff): d is the
// current delay in simulated time, last when it was last raised.
type backoff struct {
	d    time.Duration
	last time.Time
}

// inBackOffSince tells whether, d counted from since, the back-off still
// holds.
func (b *backoff) inBackOffSince(now, since time.Time, t Timing) bool {
	return b.d > 0 && now.Sub(since) < t.scale(b.d)
}

// next raises the delay: initial, then doubled up to the maximum; a
// back-off idle for twice the maximum starts over.
func (b *backoff) next(now time.Time, t Timing) {
	if b.d == 0 || now.Sub(b.last) > 2*t.scale(t.BackOffMax) {
		b.d = t.BackOffInitial
	} else {
		b.d = min(2*b.d, t.BackOffMax)
	}
	b.last = now
}

func newPodWorker(n *node, pod *corev1.Pod) *podWorker {
	ctx, cancel := context.WithCancel(context.Background())
	return &podWorker{
		n: n, uid: pod.UID, key: pod.Namespace + "/" + pod.Name, ctx: ctx, cancel: cancel,
		kick: make(chan struct{}, 1), volumes: map[string]*runtime.Volume{}, ctrs: map[string]*ctr{},
	}
}

// update hands the worker a new version of its pod.
// Updates that change nothing the kubelet acts on (the status it wrote
// itself, most often) are kept but cause no sync, as the kubelet's pod
// config filters them.
func (w *podWorker) update(pod *corev1.Pod) {
	w.podMu.Lock()
	old := w.pod
	w.pod = pod
	w.podMu.Unlock()
	if old == nil || !apiequality.Semantic.DeepEqual(old.Spec, pod.Spec) ||
		!old.DeletionTimestamp.Equal(pod.DeletionTimestamp) || !equalInt64(old.DeletionGracePeriodSeconds, pod.DeletionGracePeriodSeconds) ||
		!apiequality.Semantic.DeepEqual(old.Labels, pod.Labels) || !apiequality.Semantic.DeepEqual(old.Annotations, pod.Annotations) {
		w.poke()
	}
}

func equalInt64(a, b *int64) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// removed tells the worker its pod is gone from the API: it kills what
// runs and ends.
func (w *podWorker) removed() {
	w.gone.Store(true)
	w.cancel()
}

// poke asks for a sync.
func (w *podWorker) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// after asks for a sync after d of simulated time.
func (w *podWorker) after(d time.Duration) {
	w.afterReal(w.n.cfg.Timing.scale(d))
}

// afterReal asks for a sync after d of real time. The earliest request
// wins: the sync it causes asks again for what is still due.
func (w *podWorker) afterReal(d time.Duration) {
	w.timerMu.Lock()
	defer w.timerMu.Unlock()
	now := w.n.cfg.Clock.Now()
	at := now.Add(d)
	if w.timer != nil {
		if w.timerAt.After(now) && !w.timerAt.After(at) {
			return
		}
		w.timer.Stop()
	}
	w.timerAt = at
	w.timer = w.n.cfg.Clock.AfterFunc(d, func() {
		w.timerMu.Lock()
		w.timer = nil
		w.timerMu.Unlock()
		w.poke()
	})
}

// run syncs the pod until it is removed (or the node stops), then kills
// its containers and forgets it.
func (w *podWorker) run() {
	defer w.cleanup()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-w.kick:
		}
		w.sync()
	}
}

func (w *podWorker) latest() *corev1.Pod {
	w.podMu.Lock()
	defer w.podMu.Unlock()
	return w.pod
}

func (w *podWorker) sync() {
	pod := w.latest()
	if pod == nil || w.ctx.Err() != nil {
		return
	}
	if pod.DeletionTimestamp != nil {
		w.terminate(pod)
		return
	}
	w.mu.Lock()
	rejected := false
	if !w.synced {
		w.firstSync(pod)
		// The kubelet's admission refuses a pod it meets before it runs.
		if reason, msg := admitPod(pod); !w.terminal && len(pod.Status.ContainerStatuses) == 0 && reason != "" {
			w.rejectReason, w.rejectMessage = reason, msg
			w.terminal, rejected = true, true
		}
	}
	terminal := w.terminal
	w.mu.Unlock()
	if rejected {
		w.event(pod, nil, corev1.EventTypeWarning, w.rejectReason, w.rejectMessage)
		w.writeStatus(pod, true)
		return
	}
	if terminal {
		return
	}
	w.syncPod(pod)
	w.refreshVolumes(pod)
	w.writeStatus(pod, false)
	w.mu.Lock()
	finished := false
	if st := w.lastStatus; st != nil && (st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed) && !w.terminal {
		// A finished pod's sandbox goes; its status stays.
		w.terminal, finished = true, true
		w.stopProbesLocked()
		w.killAllLocked()
		w.sandboxReady = false
		w.n.releaseIP(w.uid)
		w.unprepareClaimsLocked()
	}
	w.mu.Unlock()
	if finished {
		w.writeStatus(pod, true)
	}
}

// firstSync adopts what the API says of a pod the agent meets for the
// first time: a finished pod stays finished; a pod that ran before the
// agent restarted gets a new sandbox and keeps its restart counts.
func (w *podWorker) firstSync(pod *corev1.Pod) {
	w.synced = true
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		w.terminal = true
		st := pod.Status.DeepCopy()
		w.lastStatus = st
		return
	}
	w.startTime = metav1.NewTime(w.n.cfg.Clock.Now().Truncate(time.Second))
	if pod.Status.StartTime != nil {
		w.startTime = *pod.Status.StartTime
	}
	now := metav1.NewTime(w.n.cfg.Clock.Now().Truncate(time.Second))
	ran := false
	restore := func(statuses []corev1.ContainerStatus, init bool) {
		for _, cs := range statuses {
			c := w.ctrLocked(cs.Name, init)
			c.restored = cs.RestartCount
			if cs.ContainerID == "" {
				continue
			}
			ran = true
			c.restored++
			switch {
			case cs.State.Running != nil:
				c.prevTerm = &corev1.ContainerStateTerminated{ExitCode: 255, Reason: "Unknown", StartedAt: cs.State.Running.StartedAt, FinishedAt: now, ContainerID: cs.ContainerID}
			case cs.State.Terminated != nil:
				c.prevTerm = cs.State.Terminated.DeepCopy()
			case cs.LastTerminationState.Terminated != nil:
				c.prevTerm = cs.LastTerminationState.Terminated.DeepCopy()
			}
		}
	}
	restore(pod.Status.InitContainerStatuses, true)
	restore(pod.Status.ContainerStatuses, false)
	if ran && pod.Status.PodIP != "" {
		w.event(pod, nil, corev1.EventTypeNormal, "SandboxChanged", "Pod sandbox changed, it will be killed and re-created.")
	}
	w.lastStatus = pod.Status.DeepCopy()
}

// ctrLocked returns the worker's record of a container, making it.
func (w *podWorker) ctrLocked(name string, init bool) *ctr {
	c, ok := w.ctrs[name]
	if !ok {
		c = &ctr{name: name, init: init}
		w.ctrs[name] = c
	}
	return c
}

func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// syncPod does what the pod needs next: volumes, sandbox, init containers
// in order, then the containers, restarting those that ended as the
// restart policy says.
func (w *podWorker) syncPod(pod *corev1.Pod) {
	if !w.mountVolumes(pod) {
		return
	}
	if !w.prepareClaims(pod) {
		return
	}
	if !w.ensureSandbox(pod) {
		return
	}
	for i := range pod.Spec.InitContainers {
		spec := &pod.Spec.InitContainers[i]
		w.mu.Lock()
		c := w.ctrLocked(spec.Name, true)
		cur := c.current()
		var done, running bool
		if cur != nil {
			running = cur.exit == nil
			done = cur.exit != nil && cur.exit.Code == 0 && cur.exit.Reason != "StartError"
		}
		sidecarUp := isSidecar(spec) && running && c.started
		w.mu.Unlock()
		switch {
		case sidecarUp:
			continue
		case running:
			return
		case done && !isSidecar(spec):
			continue
		case cur != nil && pod.Spec.RestartPolicy == corev1.RestartPolicyNever && !isSidecar(spec):
			return // the pod failed: its phase says so
		}
		w.startContainer(pod, spec, c)
		return
	}
	for i := range pod.Spec.Containers {
		spec := &pod.Spec.Containers[i]
		w.mu.Lock()
		c := w.ctrLocked(spec.Name, false)
		cur := c.current()
		start := cur == nil
		if cur != nil && cur.exit != nil {
			switch pod.Spec.RestartPolicy {
			case corev1.RestartPolicyAlways, "":
				start = true
			case corev1.RestartPolicyOnFailure:
				start = cur.exit.Code != 0
			}
		}
		w.mu.Unlock()
		if start {
			w.startContainer(pod, spec, c)
			if w.ctx.Err() != nil {
				return
			}
		}
	}
	w.syncEphemeral(pod)
}

// ensureSandbox gives the pod its sandbox: an IP from the node's block
// (the node's own with hostNetwork).
func (w *podWorker) ensureSandbox(pod *corev1.Pod) bool {
	w.mu.Lock()
	ready := w.sandboxReady
	prev := w.ip
	w.mu.Unlock()
	if ready {
		return true
	}
	ip := w.n.ip.String()
	if !pod.Spec.HostNetwork {
		if prev == "" {
			prev = pod.Status.PodIP
		}
		a, err := w.n.allocateIP(w.uid, prev)
		if err != nil {
			w.event(pod, nil, corev1.EventTypeWarning, "FailedCreatePodSandBox", fmt.Sprintf(
				"Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox %q: plugin type=\"bridge\" failed (add): %v", string(w.uid), err))
			w.after(w.n.cfg.Timing.SyncRetry)
			return false
		}
		ip = a.String()
	}
	if w.lasts(w.n.cfg.Timing.SandboxSetup) {
		w.writeStatus(pod, false)
	}
	if !w.wait(w.n.cfg.Timing.SandboxSetup) {
		return false
	}
	w.mu.Lock()
	w.ip, w.sandboxReady = ip, true
	w.mu.Unlock()
	return true
}

// coalesceBelow is how long a step must last (in real time) for the
// status before it to be posted: the kubelet's status manager posts the
// latest status asynchronously, so states shorter than a request are
// seldom seen.
const coalesceBelow = 50 * time.Millisecond

// lasts tells whether a step of simulated duration d lasts long enough
// for the status before it to be posted.
func (w *podWorker) lasts(d time.Duration) bool {
	return w.n.cfg.Timing.scale(d) >= coalesceBelow
}

// wait waits d of simulated time, or until the worker ends.
func (w *podWorker) wait(d time.Duration) bool {
	if d <= 0 {
		return w.ctx.Err() == nil
	}
	t := w.n.cfg.Clock.NewTimer(w.n.cfg.Timing.scale(d))
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-w.ctx.Done():
		return false
	}
}

// terminate stops the pod's containers for its deletion, honouring the
// grace period, posts its final status and deletes it with grace 0, as
// the kubelet does.
func (w *podWorker) terminate(pod *corev1.Pod) {
	w.mu.Lock()
	if w.deleted {
		w.mu.Unlock()
		return
	}
	first := !w.terminating
	w.terminating = true
	w.stopProbesLocked()
	var running []*instance
	var names []string
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, spec := range list {
			c := w.ctrs[spec.Name]
			if c == nil {
				continue
			}
			if cur := c.current(); cur != nil && cur.exit == nil {
				running = append(running, cur)
				names = append(names, spec.Name)
			}
		}
	}
	w.mu.Unlock()
	grace := gracePeriod(pod)
	if first {
		for i, inst := range running {
			w.event(pod, w.specOf(pod, names[i]), corev1.EventTypeNormal, "Killing", "Stopping container "+names[i])
			_ = inst
		}
	}
	var wg sync.WaitGroup
	for i, inst := range running {
		wg.Add(1)
		go func() {
			defer wg.Done()
			left := time.Duration(grace) * time.Second
			if first {
				left = w.preStop(pod, w.specOf(pod, names[i]), inst, left)
			}
			inst.c.Stop(w.ctx, left)
		}()
	}
	wg.Wait()
	if w.ctx.Err() != nil {
		return
	}
	w.mu.Lock()
	for _, inst := range running {
		w.recordExitLocked(inst)
	}
	w.sandboxReady = false
	w.n.releaseIP(w.uid)
	w.unprepareClaimsLocked()
	w.mu.Unlock()
	w.writeStatus(pod, true)
	zero := int64(0)
	uid := pod.UID
	err := w.n.cs.CoreV1().Pods(pod.Namespace).Delete(w.ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
	switch {
	case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err):
		w.mu.Lock()
		w.deleted = true
		w.mu.Unlock()
	case w.ctx.Err() == nil:
		w.n.log.Warn("delete pod failed, retrying", "pod", w.key, "err", fmt.Errorf("delete pod %s: %w", w.key, err))
		w.afterReal(time.Second)
	}
}

func (w *podWorker) specOf(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			return ephemeralSpec(&pod.Spec.EphemeralContainers[i])
		}
	}
	return nil
}

// cleanup kills what still runs once the pod is gone (or the node
// stops), and, for a pod removed from the API, deletes its logs.
func (w *podWorker) cleanup() {
	w.timerMu.Lock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.timerMu.Unlock()
	w.mu.Lock()
	w.stopProbesLocked()
	killed := w.killAllLocked()
	w.mu.Unlock()
	// The sandbox (its IP) goes once its processes have: a pod that gets
	// the address next must find its ports free.
	deadline := time.NewTimer(killWait)
	defer deadline.Stop()
wait:
	for _, c := range killed {
		select {
		case <-c.Done():
		case <-deadline.C:
			w.n.log.Warn("containers still running after SIGKILL; releasing the pod's IP", "pod", w.key)
			break wait
		}
	}
	gone, pod := w.gone.Load(), w.latest()
	w.n.releaseIP(w.uid)
	w.mu.Lock()
	w.unprepareClaimsLocked()
	w.mu.Unlock()
	if gone && pod != nil {
		_ = os.RemoveAll(w.n.podDir(pod))
	}
}

func (w *podWorker) stopProbesLocked() {
	for _, c := range w.ctrs {
		for _, inst := range c.instances {
			if inst.probesStop != nil {
				inst.probesStop()
			}
		}
	}
}

// killAllLocked sends SIGKILL to the containers that run and returns them.
func (w *podWorker) killAllLocked() []*runtime.Container {
	var killed []*runtime.Container
	for _, c := range w.ctrs {
		if cur := c.current(); cur != nil && cur.exit == nil && cur.c != nil {
			cur.c.Kill()
			killed = append(killed, cur.c)
		}
	}
	return killed
}

// killWait bounds how long a pod's cleanup waits for its killed
// containers to end.
const killWait = 10 * time.Second

// writeStatus posts the pod's status when it changed, with a strategic
// merge patch of pods/status, as the kubelet's status manager does; the
// conditions of others (PodScheduled from the binding) are kept. Only the
// worker's goroutine writes, so the lock is not held across the request.
func (w *podWorker) writeStatus(pod *corev1.Pod, terminal bool) {
	w.mu.Lock()
	if w.deleted || w.gone.Load() {
		w.mu.Unlock()
		return
	}
	st := w.statusLocked(pod, terminal)
	same := w.lastStatus != nil && apiequality.Semantic.DeepEqual(*w.lastStatus, st)
	w.mu.Unlock()
	if same {
		return
	}
	order := make([]map[string]string, 0, len(st.Conditions))
	for _, c := range st.Conditions {
		order = append(order, map[string]string{"type": string(c.Type)})
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": pod.UID},
		"status":   st,
	})
	if err != nil {
		return
	}
	// The conditions keep kube's order; a condition merged by type must
	// drop the reason and message it no longer has.
	var m map[string]any
	_ = json.Unmarshal(patch, &m)
	status := m["status"].(map[string]any)
	status["$setElementOrder/conditions"] = order
	if conds, ok := status["conditions"].([]any); ok {
		for _, c := range conds {
			cm := c.(map[string]any)
			for _, k := range []string{"reason", "message"} {
				if _, ok := cm[k]; !ok {
					cm[k] = nil
				}
			}
		}
	}
	patch, _ = json.Marshal(m)
	_, err = w.n.cs.CoreV1().Pods(pod.Namespace).Patch(w.ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	switch {
	case err == nil:
		w.mu.Lock()
		w.lastStatus = &st
		w.mu.Unlock()
	case apierrors.IsNotFound(err) || w.ctx.Err() != nil:
	default:
		w.n.log.Warn("pod status update failed, retrying", "pod", w.key, "err", fmt.Errorf("update status of pod %s: %w", w.key, err))
		w.afterReal(time.Second)
	}
}
