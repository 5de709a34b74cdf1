package nodeagent

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// probeKind names a probe as the kubelet's events do.
type probeKind string

const (
	readiness probeKind = "Readiness"
	liveness  probeKind = "Liveness"
	startup   probeKind = "Startup"
)

// startProbes runs the container's probes until ctx ends (the instance
// exits or is stopped): the startup probe first, then readiness and
// liveness, each on its period and thresholds.
func (w *podWorker) startProbes(ctx context.Context, pod *corev1.Pod, spec *corev1.Container, c *ctr, inst *instance) {
	rest := func() {
		if spec.ReadinessProbe != nil {
			go w.probeLoop(ctx, readiness, spec.ReadinessProbe, pod, spec, c, inst)
		}
		if spec.LivenessProbe != nil {
			go w.probeLoop(ctx, liveness, spec.LivenessProbe, pod, spec, c, inst)
		}
	}
	if spec.StartupProbe != nil {
		go func() {
			if w.probeLoop(ctx, startup, spec.StartupProbe, pod, spec, c, inst) {
				rest()
			}
		}()
		return
	}
	rest()
}

// probeLoop probes until ctx ends. A startup probe returns true once it
// succeeded; liveness and startup probes that fail FailureThreshold times
// in a row kill the container, to be restarted.
func (w *podWorker) probeLoop(ctx context.Context, kind probeKind, p *corev1.Probe, pod *corev1.Pod, spec *corev1.Container, c *ctr, inst *instance) bool {
	t := w.n.cfg.Timing
	clk := w.n.cfg.Clock
	sleep := func(d time.Duration) bool {
		tm := clk.NewTimer(t.scale(d))
		defer tm.Stop()
		select {
		case <-tm.C():
			return true
		case <-ctx.Done():
			return false
		}
	}
	if p.InitialDelaySeconds > 0 && !sleep(time.Duration(p.InitialDelaySeconds)*time.Second) {
		return false
	}
	period := time.Duration(max(p.PeriodSeconds, 1)) * time.Second
	successes, failures := 0, 0
	for {
		ok, msg, errored := w.probe(ctx, kind, p, spec, inst)
		if ctx.Err() != nil {
			return false
		}
		if ok {
			successes, failures = successes+1, 0
		} else {
			successes, failures = 0, failures+1
			verb := "failed"
			if errored {
				verb = "errored"
			}
			w.event(pod, spec, corev1.EventTypeWarning, "Unhealthy", fmt.Sprintf("%s probe %s: %s", kind, verb, msg))
		}
		switch kind {
		case readiness:
			w.mu.Lock()
			changed := false
			if ok && successes >= int(max(p.SuccessThreshold, 1)) && !c.ready && c.current() == inst {
				c.ready, changed = true, true
			}
			if !ok && failures >= int(max(p.FailureThreshold, 1)) && c.ready && c.current() == inst {
				c.ready, changed = false, true
			}
			w.mu.Unlock()
			if changed {
				w.poke()
			}
		case startup:
			if ok {
				w.mu.Lock()
				if c.current() == inst {
					c.started = true
					c.ready = spec.ReadinessProbe == nil
				}
				w.mu.Unlock()
				w.poke()
				return true
			}
			fallthrough
		case liveness:
			if !ok && failures >= int(max(p.FailureThreshold, 1)) {
				w.event(pod, spec, corev1.EventTypeNormal, "Killing", fmt.Sprintf("Container %s failed %s probe, will be restarted", spec.Name, strings.ToLower(string(kind))))
				grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
				if pod.Spec.TerminationGracePeriodSeconds != nil {
					grace = *pod.Spec.TerminationGracePeriodSeconds
				}
				if p.TerminationGracePeriodSeconds != nil {
					grace = *p.TerminationGracePeriodSeconds
				}
				w.mu.Lock()
				if c.current() == inst {
					c.ready = false
				}
				w.mu.Unlock()
				w.poke()
				inst.c.Stop(w.ctx, time.Duration(grace)*time.Second)
				return false
			}
		}
		if !sleep(period) {
			return false
		}
	}
}

// dialSource strips the local address Go puts in dial errors ("dial tcp
// 127.1.1.1:0->127.1.1.2:80"): the kubelet's messages do not have it.
var dialSource = regexp.MustCompile(`dial tcp \S+->`)

// probe runs one probe: a real HTTP request or TCP dial to the pod's
// address, or an exec in the container. It returns the result, the
// failure's message, and whether the probe errored rather than failed.
func (w *podWorker) probe(ctx context.Context, kind probeKind, p *corev1.Probe, spec *corev1.Container, inst *instance) (bool, string, bool) {
	w.mu.Lock()
	ip := w.ip
	w.mu.Unlock()
	timeout := time.Duration(max(p.TimeoutSeconds, 1)) * time.Second
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	clean := func(err error) string { return dialSource.ReplaceAllString(err.Error(), "dial tcp ") }
	switch {
	case p.HTTPGet != nil:
		g := p.HTTPGet
		port, err := resolvePort(g.Port, spec)
		if err != nil {
			return false, err.Error(), true
		}
		req, err := httpGetRequest(ctx, g, ip, port, http.Header{"User-Agent": {"kube-probe/1.37"}, "Accept": {"*/*"}})
		if err != nil {
			return false, err.Error(), true
		}
		client := w.n.http
		if req.URL.Scheme == "https" {
			client = &http.Client{Transport: &http.Transport{DialContext: w.n.dialer.DialContext, DisableKeepAlives: true,
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // the kubelet does not verify probes either
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, clean(err), false
		}
		resp.Body.Close()
		if resp.StatusCode >= 200 && resp.StatusCode < 400 {
			return true, "", false
		}
		return false, fmt.Sprintf("HTTP probe failed with statuscode: %d", resp.StatusCode), false
	case p.TCPSocket != nil, p.GRPC != nil:
		var port int
		var err error
		host := ip
		if p.TCPSocket != nil {
			if port, err = resolvePort(p.TCPSocket.Port, spec); err != nil {
				return false, err.Error(), true
			}
			if p.TCPSocket.Host != "" {
				host = p.TCPSocket.Host
			}
		} else {
			port = int(p.GRPC.Port)
		}
		conn, err := w.n.dialer.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return false, clean(err), false
		}
		conn.Close()
		return true, "", false
	case p.Exec != nil:
		out, code, err := inst.c.Exec(ctx, p.Exec.Command)
		if err != nil {
			if ctx.Err() == context.DeadlineExceeded {
				return false, fmt.Sprintf("command %q timed out", strings.Join(p.Exec.Command, " ")), false
			}
			return false, err.Error(), true
		}
		if code != 0 {
			return false, strings.TrimRight(string(out), "\n"), false
		}
		return true, "", false
	}
	return false, "missing probe handler", true
}

// resolvePort turns a probe's port (a number or a container port's name)
// into a number.
func resolvePort(p intstr.IntOrString, spec *corev1.Container) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	for _, cp := range spec.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil {
		return n, nil
	}
	return 0, fmt.Errorf("couldn't find port: %v in %v", p.StrVal, spec.Name)
}

// httpGetRequest is the kubelet's GET for an httpGet probe or hook: to
// the action's host (else the pod's IP) and port, its scheme (http by
// default), path and query, with the given default headers and then the
// action's own (a Host header sets the request's host).
func httpGetRequest(ctx context.Context, g *corev1.HTTPGetAction, podIP string, port int, defaults http.Header) (*http.Request, error) {
	host := g.Host
	if host == "" {
		host = podIP
	}
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port))}
	u.Path, u.RawQuery, _ = strings.Cut(g.Path, "?")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	for k, v := range defaults {
		req.Header[k] = v
	}
	for _, h := range g.HTTPHeaders {
		if strings.EqualFold(h.Name, "Host") {
			req.Host = h.Value
			continue
		}
		req.Header.Set(h.Name, h.Value)
	}
	return req, nil
}
