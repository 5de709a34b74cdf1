package nodeagent

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"minik/internal/nodeagent/runtime"
)

// podFullName is the kubelet's format.Pod: name_namespace(uid).
func podFullName(pod *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

// event records an event about the pod, or one of its containers when
// spec is set, from component kubelet on this node.
func (w *podWorker) event(pod *corev1.Pod, spec *corev1.Container, typ, reason, msg string) {
	ref := &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, ResourceVersion: pod.ResourceVersion}
	if spec != nil {
		field := "spec.containers{" + spec.Name + "}"
		for i := range pod.Spec.InitContainers {
			if pod.Spec.InitContainers[i].Name == spec.Name {
				field = "spec.initContainers{" + spec.Name + "}"
			}
		}
		for i := range pod.Spec.EphemeralContainers {
			if pod.Spec.EphemeralContainers[i].Name == spec.Name {
				field = "spec.ephemeralContainers{" + spec.Name + "}"
			}
		}
		ref.FieldPath = field
	}
	w.n.rec.Event(ref, typ, reason, msg)
}

// setWaiting records why the container does not run.
func (w *podWorker) setWaiting(c *ctr, reason, msg string) {
	w.mu.Lock()
	c.waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: msg}
	w.mu.Unlock()
}

// startContainer starts (or restarts) a container: crash back-off, image,
// configuration, creation, start, probes. On failure the container waits
// with the reason the kubelet gives, and a sync is scheduled.
func (w *podWorker) startContainer(pod *corev1.Pod, spec *corev1.Container, c *ctr) {
	t := w.n.cfg.Timing
	clk := w.n.cfg.Clock
	w.mu.Lock()
	if cur := c.current(); cur != nil && cur.exit != nil {
		now := clk.Now()
		if c.crash.inBackOffSince(now, cur.exit.Finished, t) {
			msg := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", formatDuration(c.crash.d), spec.Name, podFullName(pod))
			c.waiting = &corev1.ContainerStateWaiting{Reason: ReasonCrashLoopBackOff, Message: msg}
			w.afterReal(t.scale(c.crash.d) - now.Sub(cur.exit.Finished))
			w.mu.Unlock()
			w.event(pod, spec, corev1.EventTypeWarning, "BackOff", fmt.Sprintf("Back-off restarting failed container %s in pod %s", spec.Name, podFullName(pod)))
			return
		}
		c.crash.next(now, t)
	}
	w.mu.Unlock()

	img, ok := w.ensureImage(pod, spec, c)
	if !ok {
		return
	}
	rspec, err := w.containerConfig(pod, spec)
	if err != nil {
		w.setWaiting(c, ReasonCreateContainerConfigError, err.Error())
		w.event(pod, spec, corev1.EventTypeWarning, "Failed", "Error: "+err.Error())
		w.mu.Lock()
		w.after(t.SyncRetry)
		w.mu.Unlock()
		return
	}
	w.mu.Lock()
	restart := c.restored
	if len(c.instances) > 0 {
		restart = c.restored + int32(len(c.instances))
	}
	w.mu.Unlock()
	dir := filepath.Join(w.n.podDir(pod), spec.Name)
	log, err := openLog(filepath.Join(dir, strconv.Itoa(int(restart))+".log"), clk)
	if err != nil {
		w.setWaiting(c, ReasonCreateContainerError, err.Error())
		w.event(pod, spec, corev1.EventTypeWarning, "Failed", "Error: "+err.Error())
		w.mu.Lock()
		w.after(t.SyncRetry)
		w.mu.Unlock()
		return
	}
	rspec.Log = log
	rc, err := w.n.rt.Create(rspec)
	if err != nil {
		log.close()
		w.setWaiting(c, ReasonCreateContainerError, err.Error())
		w.event(pod, spec, corev1.EventTypeWarning, "Failed", "Error: "+err.Error())
		w.mu.Lock()
		w.after(t.SyncRetry)
		w.mu.Unlock()
		return
	}
	if !w.wait(t.ContainerCreate) {
		log.close()
		return
	}
	w.event(pod, spec, corev1.EventTypeNormal, "Created", "Created container: "+spec.Name)
	inst := &instance{
		id: "containerd://" + rc.ID, c: rc, log: log, restart: restart,
		image: img.Ref.String(), imageID: img.Ref.ID(), startedAt: clk.Now(),
	}
	if img.Ref.Digest == "" && img.Ref.Tag != "" {
		inst.image = img.Ref.Repository + ":" + img.Ref.Tag
	}
	// Logs of runs before the previous one are removed, as the kubelet's
	// container garbage collection does.
	w.mu.Lock()
	if n := len(c.instances); n >= 2 {
		_ = removeLog(c.instances[n-2].log)
	}
	c.instances = append(c.instances, inst)
	c.waiting = nil
	c.ready, c.started = false, false
	w.mu.Unlock()

	if err := rc.Start(); err != nil {
		w.mu.Lock()
		w.recordExitLocked(inst)
		w.mu.Unlock()
		w.event(pod, spec, corev1.EventTypeWarning, "Failed", "Error: "+err.Error())
		w.poke()
		return
	}
	w.event(pod, spec, corev1.EventTypeNormal, "Started", "Started container "+spec.Name)
	if !w.postStart(pod, spec, inst) {
		w.mu.Lock()
		w.recordExitLocked(inst)
		w.mu.Unlock()
		w.poke()
		return
	}
	ctx, stop := context.WithCancel(w.ctx)
	w.mu.Lock()
	inst.probesStop = stop
	c.started = spec.StartupProbe == nil
	c.ready = c.started && spec.ReadinessProbe == nil
	w.mu.Unlock()
	go func() {
		select {
		case <-rc.Done():
		case <-w.ctx.Done():
			return
		}
		stop()
		w.mu.Lock()
		w.recordExitLocked(inst)
		w.mu.Unlock()
		w.poke()
	}()
	w.startProbes(ctx, pod, spec, c, inst)
}

// recordExitLocked notes how an instance ended and closes its log.
func (w *podWorker) recordExitLocked(inst *instance) {
	if inst.exit != nil {
		return
	}
	e := inst.c.Exit()
	if e == nil {
		return
	}
	inst.exit = e
	inst.msg = e.Message
	if inst.msg == "" {
		inst.msg = terminationMessage(w.latest(), inst)
	}
	for _, c := range w.ctrs {
		if c.current() == inst {
			c.ready, c.started = false, false
		}
	}
	inst.log.close()
}

// terminationMessage reads the container's termination message file, or,
// with FallbackToLogsOnError and a failure, the end of its log.
func terminationMessage(pod *corev1.Pod, inst *instance) string {
	if pod == nil {
		return ""
	}
	var spec *corev1.Container
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if strings.HasSuffix(inst.log.path, "/"+list[i].Name+"/"+strconv.Itoa(int(inst.restart))+".log") {
				spec = &list[i]
			}
		}
	}
	if spec == nil {
		return ""
	}
	path := spec.TerminationMessagePath
	if path == "" {
		path = corev1.TerminationMessagePathDefault
	}
	if data, err := inst.c.ReadFile(path); err == nil && len(data) > 0 {
		return string(data)
	}
	if spec.TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError && inst.exit.Code != 0 {
		return inst.log.tail(80, 2048)
	}
	return ""
}

// jittered is d plus up to half of it, as the kubelet's pod worker
// jitters its retries.
func jittered(d time.Duration) time.Duration {
	return d + time.Duration(rand.Int64N(int64(d)/2+1))
}

// formatDuration prints a back-off as the kubelet does (10s, 1m20s, 5m0s).
func formatDuration(d time.Duration) string {
	return d.Round(time.Second).String()
}

// ensureImage makes the container's image present as its pull policy
// says, with the kubelet's events, back-off and reasons.
func (w *podWorker) ensureImage(pod *corev1.Pod, spec *corev1.Container, c *ctr) (runtime.Image, bool) {
	t := w.n.cfg.Timing
	rt := w.n.rt
	image := spec.Image
	present, err := rt.ImagePresent(image)
	fail := func(reason, waitMsg string, d time.Duration) (runtime.Image, bool) {
		w.setWaiting(c, reason, waitMsg)
		w.event(pod, spec, corev1.EventTypeWarning, "Failed", "Error: "+reason)
		w.mu.Lock()
		w.after(d)
		w.mu.Unlock()
		return runtime.Image{}, false
	}
	if err != nil {
		msg := fmt.Sprintf("Failed to apply default image tag %q: %v", image, err)
		w.event(pod, spec, corev1.EventTypeWarning, "InspectFailed", msg)
		return fail(ReasonInvalidImageName, msg, t.SyncRetry)
	}
	policy := spec.ImagePullPolicy
	ref, _ := runtime.ParseReference(image)
	switch {
	case !present && policy == corev1.PullNever:
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", image)
		w.event(pod, spec, corev1.EventTypeWarning, ReasonErrImageNeverPull, msg)
		return fail(ReasonErrImageNeverPull, msg, t.SyncRetry)
	case present && policy != corev1.PullAlways:
		w.event(pod, spec, corev1.EventTypeNormal, "Pulled", fmt.Sprintf("Container image %q already present on machine", image))
		img, _ := rt.Rules().Resolve(ref, runtime.PolicyCatalog)
		return img, true
	}
	now := w.n.cfg.Clock.Now()
	w.mu.Lock()
	inBackOff := c.pull.inBackOffSince(now, c.pull.last, t)
	remaining := t.scale(c.pull.d) - now.Sub(c.pull.last)
	prevErr := c.pullErr
	w.mu.Unlock()
	if inBackOff {
		msg := fmt.Sprintf("Back-off pulling image %q", image)
		w.event(pod, spec, corev1.EventTypeNormal, "BackOff", msg)
		w.setWaiting(c, ReasonImagePullBackOff, msg+": "+prevErr)
		w.event(pod, spec, corev1.EventTypeWarning, "Failed", "Error: "+ReasonImagePullBackOff)
		w.afterReal(max(remaining, t.scale(jittered(t.SyncRetry))))
		return runtime.Image{}, false
	}
	w.event(pod, spec, corev1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", image))
	if w.lasts(t.PullLatency) {
		w.writeStatus(pod, false)
	}
	res, err := rt.Pull(w.ctx, image)
	if err != nil {
		if w.ctx.Err() != nil {
			return runtime.Image{}, false
		}
		w.event(pod, spec, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %v", image, err))
		w.mu.Lock()
		c.pull.next(w.n.cfg.Clock.Now(), t)
		c.pullErr = ReasonErrImagePull + ": " + err.Error()
		w.mu.Unlock()
		// As the kubelet requeues a pod whose sync failed, the next try
		// comes after the worker's back-off, not when the pull's ends: in
		// between, the container shows ImagePullBackOff.
		return fail(ReasonErrImagePull, err.Error(), jittered(t.SyncRetry))
	}
	w.event(pod, spec, corev1.EventTypeNormal, "Pulled", fmt.Sprintf("Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.",
		image, res.Duration.Truncate(time.Millisecond), res.Total.Truncate(time.Millisecond), res.Image.Size))
	return res.Image, true
}

// containerConfig resolves what the runtime needs: environment, mounts,
// command and args with $(VAR) expanded, ports, the pod's address.
func (w *podWorker) containerConfig(pod *corev1.Pod, spec *corev1.Container) (runtime.ContainerSpec, error) {
	w.mu.Lock()
	ip := w.ip
	w.mu.Unlock()
	env, err := w.makeEnv(pod, spec, ip)
	if err != nil {
		return runtime.ContainerSpec{}, err
	}
	env = w.claimEnv(spec, env)
	vars := map[string]string{}
	for _, e := range env {
		vars[e.Name] = e.Value
	}
	rs := runtime.ContainerSpec{
		Name: spec.Name, Image: spec.Image, Env: env, IP: ip,
		Hostname: pod.Name, Pod: pod.Namespace + "/" + pod.Name, Node: w.n.name,
		Stdin: spec.Stdin, StdinOnce: spec.StdinOnce, TTY: spec.TTY,
		User:           containerUser(pod, spec),
		ReadOnlyRootFS: spec.SecurityContext != nil && spec.SecurityContext.ReadOnlyRootFilesystem != nil && *spec.SecurityContext.ReadOnlyRootFilesystem,
		Sysctls:        podSysctls(pod),
	}
	w.podFiles(pod, ip, &rs)
	for _, a := range spec.Command {
		rs.Command = append(rs.Command, expandVars(a, vars))
	}
	for _, a := range spec.Args {
		rs.Args = append(rs.Args, expandVars(a, vars))
	}
	for _, p := range spec.Ports {
		if p.Protocol == "" || p.Protocol == corev1.ProtocolTCP {
			rs.Ports = append(rs.Ports, p.ContainerPort)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range spec.VolumeMounts {
		vol, ok := w.volumes[m.Name]
		if !ok {
			return runtime.ContainerSpec{}, fmt.Errorf("cannot find volume %q to mount into container %q", m.Name, spec.Name)
		}
		sub := m.SubPath
		if m.SubPathExpr != "" {
			var err error
			if sub, err = expandSubPath(m.SubPathExpr, vars); err != nil {
				return runtime.ContainerSpec{}, err
			}
		}
		if sub != "" {
			if err := checkSubPath(sub); err != nil {
				return runtime.ContainerSpec{}, err
			}
		}
		rs.Mounts = append(rs.Mounts, runtime.Mount{Path: m.MountPath, Volume: vol, SubPath: sub, ReadOnly: m.ReadOnly})
	}
	return rs, nil
}

// containerUser is the identity a container runs as: its security
// context's runAsUser and runAsGroup, else the pod's, with the pod's
// fsGroup and supplementalGroups; nil (root) when none is set.
func containerUser(pod *corev1.Pod, spec *corev1.Container) *runtime.User {
	var uid, gid *int64
	var u runtime.User
	if psc := pod.Spec.SecurityContext; psc != nil {
		uid, gid = psc.RunAsUser, psc.RunAsGroup
		u.FSGroup = psc.FSGroup
		u.Groups = append(u.Groups, psc.SupplementalGroups...)
	}
	if sc := spec.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			gid = sc.RunAsGroup
		}
	}
	if uid == nil && gid == nil && u.FSGroup == nil && len(u.Groups) == 0 {
		return nil
	}
	if uid != nil {
		u.UID = *uid
	}
	if gid != nil {
		u.GID = *gid
	}
	return &u
}

// expandVars expands $(VAR) references as the kubelet does: defined
// variables are replaced, others left as written; $$ is a literal $.
func expandVars(s string, vars map[string]string) string {
	return expand(s, func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	})
}

// expandSubPath expands a volume mount's subPathExpr as the kubelet does:
// a variable that is undefined or empty is an error naming every such
// one.
func expandSubPath(expr string, vars map[string]string) (string, error) {
	var missing []string
	out := expand(expr, func(name string) (string, bool) {
		v := vars[name]
		if v == "" && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
		return v, true
	})
	if len(missing) > 0 {
		slices.Sort(missing)
		return "", fmt.Errorf("missing value for %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// checkSubPath refuses a subPath the kubelet refuses: an absolute one, or
// one with a ".." element.
func checkSubPath(sub string) error {
	if path.IsAbs(sub) {
		return fmt.Errorf("error SubPath `%s` must not be an absolute path", sub)
	}
	if slices.Contains(strings.Split(sub, "/"), "..") {
		return fmt.Errorf("unable to provision SubPath `%s`: must not contain '..'", sub)
	}
	return nil
}

// expand replaces $(NAME) with what lookup gives (a reference it does not
// know stays as written); $$ is a literal $.
func expand(s string, lookup func(string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}
