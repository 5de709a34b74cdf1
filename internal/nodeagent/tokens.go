package nodeagent

import (
	"fmt"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// tokenMaxAge is how long the kubelet's token manager keeps a token at
// most, whatever its lifetime.
const tokenMaxAge = 24 * time.Hour

// podTokens are the bound service account tokens of one pod's projected
// volumes, as the kubelet's token manager keeps them: one per audience
// and lifetime, requested from the API (serviceaccounts/token, bound to
// the pod) and requested again once 80% of its lifetime, or a day, has
// passed.
type podTokens struct {
	mu     sync.Mutex
	tokens map[string]podToken
}

// podToken is one issued token and when it was issued and expires.
type podToken struct {
	token          string
	issued, expiry time.Time
}

// due reports whether the token is to be requested again at now.
func (t podToken) due(now time.Time) bool {
	ttl := t.expiry.Sub(t.issued)
	return !now.Before(t.issued.Add(ttl*8/10)) || !now.Before(t.issued.Add(tokenMaxAge))
}

// tokenKey identifies a projection's token: its audience and lifetime.
func tokenKey(p *corev1.ServiceAccountTokenProjection) string {
	secs := int64(0)
	if p.ExpirationSeconds != nil {
		secs = *p.ExpirationSeconds
	}
	return fmt.Sprintf("%s|%d", p.Audience, secs)
}

// anyDue reports whether one of the pod's tokens is to be requested again.
func (pt *podTokens) anyDue(now time.Time) bool {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	for _, t := range pt.tokens {
		if t.due(now) {
			return true
		}
	}
	return false
}

// projectedToken returns the token of a serviceAccountToken projection:
// the one kept while it is not due, else a new one the node requests for
// the pod's service account, bound to the pod, with the projection's
// audience (the API server's when empty) and lifetime.
func (w *podWorker) projectedToken(pod *corev1.Pod, p *corev1.ServiceAccountTokenProjection) ([]byte, error) {
	key, now := tokenKey(p), time.Now()
	w.tokens.mu.Lock()
	t, ok := w.tokens.tokens[key]
	w.tokens.mu.Unlock()
	if ok && !t.due(now) {
		return []byte(t.token), nil
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: p.ExpirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID},
	}}
	if p.Audience != "" {
		req.Spec.Audiences = []string{p.Audience}
	}
	var tr *authenticationv1.TokenRequest
	err := w.related(func() (err error) {
		tr, err = w.n.cs.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(w.ctx, sa, req, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		if ok && now.Before(t.expiry) {
			// The kubelet keeps serving a token that is due but valid
			// while the API refuses a new one.
			w.n.log.Warn("requesting a service account token failed; the pod keeps its current one", "pod", w.key, "serviceaccount", sa, "err", err)
			return []byte(t.token), nil
		}
		return nil, fmt.Errorf("failed to fetch token: %w", err)
	}
	t = podToken{token: tr.Status.Token, issued: now, expiry: tr.Status.ExpirationTimestamp.Time}
	w.tokens.mu.Lock()
	if w.tokens.tokens == nil {
		w.tokens.tokens = map[string]podToken{}
	}
	w.tokens.tokens[key] = t
	w.tokens.mu.Unlock()
	return []byte(t.token), nil
}

// hasTokenProjection reports whether a volume projects a service account
// token.
func hasTokenProjection(v *corev1.Volume) bool {
	if v.Projected == nil {
		return false
	}
	for _, s := range v.Projected.Sources {
		if s.ServiceAccountToken != nil {
			return true
		}
	}
	return false
}

// isServiceAccountVolume reports whether a volume is the one the
// ServiceAccount admission plugin adds (kube-api-access-<suffix>).
func isServiceAccountVolume(v *corev1.Volume) bool {
	return strings.HasPrefix(v.Name, "kube-api-access-")
}
