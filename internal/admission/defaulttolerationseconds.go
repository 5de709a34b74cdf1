package admission

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// DefaultTolerationSecondsValue is how long a pod stays bound to a node
// that is not ready or unreachable before it is evicted, unless it says
// otherwise (kube's --default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds).
const DefaultTolerationSecondsValue int64 = 300

// DefaultTolerationSeconds gives every pod NoExecute tolerations of the
// node.kubernetes.io/not-ready and node.kubernetes.io/unreachable taints
// for 300 seconds, unless it already tolerates them, as kube's plugin of
// that name does.
type DefaultTolerationSeconds struct {
	// NotReadySeconds and UnreachableSeconds override 300 when positive.
	NotReadySeconds    int64
	UnreachableSeconds int64
}

// Name implements Mutator.
func (*DefaultTolerationSeconds) Name() string { return "DefaultTolerationSeconds" }

// Admit implements Mutator.
func (p *DefaultTolerationSeconds) Admit(_ context.Context, a *Attributes) error {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" || a.Subresource != "" {
		return nil
	}
	if a.Operation != Create && a.Operation != Update {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	notReady, unreachable := false, false
	for _, t := range pod.Spec.Tolerations {
		anyEffect := t.Effect == "" || t.Effect == corev1.TaintEffectNoExecute
		if (t.Key == corev1.TaintNodeNotReady || t.Key == "") && anyEffect {
			notReady = true
		}
		if (t.Key == corev1.TaintNodeUnreachable || t.Key == "") && anyEffect {
			unreachable = true
		}
	}
	if !notReady {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, toleration(corev1.TaintNodeNotReady, p.NotReadySeconds))
	}
	if !unreachable {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, toleration(corev1.TaintNodeUnreachable, p.UnreachableSeconds))
	}
	return nil
}

func toleration(key string, seconds int64) corev1.Toleration {
	if seconds <= 0 {
		seconds = DefaultTolerationSecondsValue
	}
	return corev1.Toleration{
		Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
		TolerationSeconds: &seconds,
	}
}
