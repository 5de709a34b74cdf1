package nodeagent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// handler is the node's endpoint, as the kubelet's on port 10250:
// /containerLogs/<namespace>/<pod>/<container> (what the API server
// proxies pods/log to), the streaming endpoints of streams.go (exec,
// attach, portForward, run), /pods, /stats/summary, /metrics and
// /healthz. Errors are Status objects with the
// kubelet's messages.
func (n *node) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", n.serveLogs)
	st := streams{n}
	for _, m := range []string{"GET", "POST"} {
		mux.HandleFunc(m+" /exec/{namespace}/{pod}/{container}", st.serveExec)
		mux.HandleFunc(m+" /attach/{namespace}/{pod}/{container}", st.serveAttach)
		mux.HandleFunc(m+" /portForward/{namespace}/{pod}", st.servePortForward)
	}
	mux.HandleFunc("POST /run/{namespace}/{pod}/{container}", st.serveRun)
	mux.HandleFunc("GET /pods", st.servePods)
	mux.HandleFunc("GET /stats/summary", n.serveStatsSummary(n.cfg.Clock.Now()))
	mux.Handle("GET /metrics", n.metricsHandler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok"))
	})
	return mux
}

func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.ErrStatus
	st.Kind, st.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_ = json.NewEncoder(w).Encode(&st)
}

// parseLogOptions reads the PodLogOptions of a request.
func parseLogOptions(r *http.Request, now time.Time) (logOptions, bool, error) {
	q := r.URL.Query()
	o := logOptions{tail: -1}
	isTrue := func(k string) bool { b, _ := strconv.ParseBool(q.Get(k)); return b }
	o.follow, o.timestamps = isTrue("follow"), isTrue("timestamps")
	previous := isTrue("previous")
	num := func(k string) (int64, bool, error) {
		v := q.Get(k)
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, false, fmt.Errorf("%s: Invalid value: %q: must be greater than or equal to 0", k, v)
		}
		return n, true, nil
	}
	if n, ok, err := num("tailLines"); err != nil {
		return o, false, err
	} else if ok {
		o.tail = n
	}
	if n, ok, err := num("limitBytes"); err != nil {
		return o, false, err
	} else if ok {
		o.limitBytes = n
		if n == 0 {
			o.limitBytes = -1
		}
	}
	if n, ok, err := num("sinceSeconds"); err != nil {
		return o, false, err
	} else if ok {
		o.since = now.Add(-time.Duration(n) * time.Second)
	}
	if v := q.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return o, false, fmt.Errorf("sinceTime: Invalid value: %q: %v", v, err)
		}
		o.since = t
	}
	return o, previous, nil
}

// serveLogs streams a container's log. Which run's log follows kube's
// rules (validateContainerLogStatus): the running container, else the
// last terminated one; previous asks for the run before.
func (n *node) serveLogs(w http.ResponseWriter, r *http.Request) {
	ns, podName, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	o, previous, err := parseLogOptions(r, n.cfg.Clock.Now())
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	n.mu.Lock()
	pw := n.byName[ns+"/"+podName]
	n.mu.Unlock()
	if pw == nil {
		writeStatus(w, apierrors.NewNotFound(corev1.Resource("pods"), podName))
		return
	}
	l, serr := pw.logFor(container, previous)
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	if o.limitBytes < 0 {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	_ = writeLog(r.Context(), l, o, w, flush)
}

// logFor picks the log of a container's run, with the kubelet's errors.
func (pw *podWorker) logFor(name string, previous bool) (*containerLog, *apierrors.StatusError) {
	pod := pw.latest()
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pod == nil {
		return nil, apierrors.NewNotFound(corev1.Resource("pods"), pw.key)
	}
	spec := pw.specOf(pod, name)
	if spec == nil {
		return nil, apierrors.NewNotFound(corev1.Resource("pods"), fmt.Sprintf("container %q not found in pod %q", name, pod.Name))
	}
	init := false
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			init = true
		}
	}
	defaultWaiting := ReasonContainerCreating
	if len(pod.Spec.InitContainers) > 0 {
		defaultWaiting = ReasonPodInitializing
	}
	var cs corev1.ContainerStatus
	if pw.terminal && pw.lastStatus != nil && len(pw.ctrs) == 0 {
		for _, s := range append(append([]corev1.ContainerStatus(nil), pw.lastStatus.InitContainerStatuses...), pw.lastStatus.ContainerStatuses...) {
			if s.Name == name {
				cs = s
			}
		}
	} else {
		cs = pw.containerStatusLocked(spec, init, defaultWaiting, pw.terminating)
	}
	c := pw.ctrs[name]
	byID := func(id string) *containerLog {
		if c == nil || id == "" {
			return nil
		}
		for _, inst := range c.instances {
			if inst.id == id {
				return inst.log
			}
		}
		return nil
	}
	bad := func(format string, args ...any) *apierrors.StatusError {
		return apierrors.NewBadRequest(fmt.Sprintf(format, args...))
	}
	last := cs.LastTerminationState.Terminated
	var id string
	switch st := cs.State; {
	case previous:
		if last == nil || last.ContainerID == "" {
			return nil, bad("previous terminated container %q in pod %q not found", name, pod.Name)
		}
		id = last.ContainerID
	case st.Running != nil:
		id = cs.ContainerID
	case st.Terminated != nil:
		id = st.Terminated.ContainerID
		if id == "" {
			if last == nil || last.ContainerID == "" {
				return nil, bad("container %q in pod %q is terminated", name, pod.Name)
			}
			id = last.ContainerID
		}
	case last != nil:
		if last.ContainerID == "" {
			return nil, bad("container %q in pod %q is terminated", name, pod.Name)
		}
		id = last.ContainerID
	case st.Waiting != nil:
		switch st.Waiting.Reason {
		case ReasonErrImagePull:
			return nil, bad("container %q in pod %q is waiting to start: image can't be pulled", name, pod.Name)
		case ReasonImagePullBackOff:
			return nil, bad("container %q in pod %q is waiting to start: trying and failing to pull image", name, pod.Name)
		}
		return nil, bad("container %q in pod %q is waiting to start: %v", name, pod.Name, st.Waiting.Reason)
	default:
		return nil, bad("container %q in pod %q is waiting to start - no logs yet", name, pod.Name)
	}
	l := byID(id)
	if l == nil {
		// A run from before the agent restarted: its log is gone.
		return nil, bad("failed to try resolving symlinks in path %q: lstat %s: no such file or directory", pw.key, id)
	}
	return l, nil
}
