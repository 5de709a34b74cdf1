package nodeagent

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Lifecycle hooks, as the kubelet runs them: postStart right after the
// container starts (its failure kills the container: event
// FailedPostStartHook), preStop before SIGTERM when the pod stops, within
// its grace period (event FailedPreStopHook). The handlers are exec (in
// the container), httpGet (from the node, the pod's IP unless host is
// set) and sleep (simulated time).

// Event reasons of the hooks.
const (
	ReasonFailedPostStartHook = "FailedPostStartHook"
	ReasonFailedPreStopHook   = "FailedPreStopHook"
)

// runHook runs a lifecycle handler of a container's instance; its error
// says why the hook failed. It ends with ctx.
func (w *podWorker) runHook(ctx context.Context, spec *corev1.Container, inst *instance, h *corev1.LifecycleHandler) error {
	switch {
	case h.Exec != nil:
		out, code, err := inst.c.Exec(ctx, h.Exec.Command)
		if err != nil {
			return fmt.Errorf("exec hook %q of container %s: %w", strings.Join(h.Exec.Command, " "), spec.Name, err)
		}
		if code != 0 {
			return fmt.Errorf("command '%s' exited with %d: %s", strings.Join(h.Exec.Command, " "), code, out)
		}
		return nil
	case h.HTTPGet != nil:
		return w.hookHTTP(ctx, spec, h.HTTPGet)
	case h.Sleep != nil:
		t := w.n.cfg.Clock.NewTimer(w.n.cfg.Timing.scale(time.Duration(h.Sleep.Seconds) * time.Second))
		defer t.Stop()
		select {
		case <-t.C():
			return nil
		case <-ctx.Done():
			return fmt.Errorf("sleep hook of container %s: %w", spec.Name, ctx.Err())
		}
	}
	return fmt.Errorf("invalid handler of container %s: no exec, httpGet nor sleep", spec.Name)
}

// hookHTTP makes an httpGet hook's request, from the node.
func (w *podWorker) hookHTTP(ctx context.Context, spec *corev1.Container, g *corev1.HTTPGetAction) error {
	w.mu.Lock()
	ip := w.ip
	w.mu.Unlock()
	port, err := resolvePort(g.Port, spec)
	if err != nil {
		return err
	}
	req, err := httpGetRequest(ctx, g, ip, port, nil)
	if err != nil {
		return err
	}
	client := w.n.http
	if req.URL.Scheme == "https" {
		client = &http.Client{Transport: &http.Transport{DialContext: w.n.dialer.DialContext, DisableKeepAlives: true,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the kubelet does not verify hooks either
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s", dialSource.ReplaceAllString(err.Error(), "dial tcp "))
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: bad status code %d", g.Path, spec.Name, w.key, resp.StatusCode)
	}
	return nil
}

// postStart runs a container's postStart hook, if any; when it fails the
// container is killed, and postStart returns false.
func (w *podWorker) postStart(pod *corev1.Pod, spec *corev1.Container, inst *instance) bool {
	if spec.Lifecycle == nil || spec.Lifecycle.PostStart == nil {
		return true
	}
	err := w.runHook(w.ctx, spec, inst, spec.Lifecycle.PostStart)
	if err == nil || w.ctx.Err() != nil {
		return err == nil
	}
	w.n.log.Info("postStart hook failed", "pod", w.key, "container", spec.Name, "err", err)
	// The kubelet does not put the hook's output in the event, lest it
	// show a secret.
	w.event(pod, spec, corev1.EventTypeWarning, ReasonFailedPostStartHook, "PostStartHook failed")
	inst.c.Stop(w.ctx, time.Duration(gracePeriod(pod))*time.Second)
	return false
}

// preStop runs a container's preStop hook, if any, within the grace
// period, and returns the grace left for SIGTERM (at least 2s, as the
// kubelet leaves).
func (w *podWorker) preStop(pod *corev1.Pod, spec *corev1.Container, inst *instance, grace time.Duration) time.Duration {
	if spec == nil || spec.Lifecycle == nil || spec.Lifecycle.PreStop == nil || grace <= 0 {
		return grace
	}
	clk := w.n.cfg.Clock
	began := clk.Now()
	ctx, cancel := context.WithTimeout(w.ctx, w.n.cfg.Timing.scale(grace))
	defer cancel()
	if err := w.runHook(ctx, spec, inst, spec.Lifecycle.PreStop); err != nil && w.ctx.Err() == nil {
		w.n.log.Info("preStop hook failed", "pod", w.key, "container", spec.Name, "err", err)
		w.event(pod, spec, corev1.EventTypeWarning, ReasonFailedPreStopHook, "PreStopHook failed")
	}
	spent := time.Duration(float64(clk.Since(began)) * w.n.cfg.Timing.Speed)
	return max(grace-spent, 2*time.Second)
}

// gracePeriod is the pod's termination grace period in seconds.
func gracePeriod(pod *corev1.Pod) int64 {
	switch {
	case pod.DeletionGracePeriodSeconds != nil:
		return *pod.DeletionGracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return corev1.DefaultTerminationGracePeriodSeconds
}
