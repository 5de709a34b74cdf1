package nodeagent

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	draclaim "k8s.io/dynamic-resource-allocation/resourceclaim"

	"minik/internal/nodeagent/dra"
	"minik/internal/nodeagent/runtime"
)

// reasonFailedPrepareDynamicResources is the kubelet's event reason when
// a pod's claims cannot be prepared.
const reasonFailedPrepareDynamicResources = "FailedPrepareDynamicResources"

// prepareClaims is the kubelet's PrepareDynamicResources, run before the
// sandbox: each claim of the pod must be allocated and reserved for it;
// the node's DRA driver then prepares its devices. A failure is reported
// with kube's event and retried after Timing.SyncRetry. It returns
// whether every claim is prepared.
func (w *podWorker) prepareClaims(pod *corev1.Pod) bool {
	if len(pod.Spec.ResourceClaims) == 0 {
		return true
	}
	w.mu.Lock()
	done := w.claims != nil
	w.mu.Unlock()
	if done {
		return true
	}
	prepared, err := w.tryPrepareClaims(pod)
	if err != nil {
		if w.ctx.Err() != nil {
			return false
		}
		w.event(pod, nil, corev1.EventTypeWarning, reasonFailedPrepareDynamicResources,
			fmt.Sprintf("Failed to prepare dynamic resources: prepare dynamic resources: %v", err))
		w.after(w.n.cfg.Timing.SyncRetry)
		return false
	}
	w.mu.Lock()
	w.claims = prepared
	w.mu.Unlock()
	return true
}

func (w *podWorker) tryPrepareClaims(pod *corev1.Pod) (map[string]dra.PreparedClaim, error) {
	claims := make([]*resourcev1.ResourceClaim, len(pod.Spec.ResourceClaims))
	for i := range pod.Spec.ResourceClaims {
		pc := &pod.Spec.ResourceClaims[i]
		name, checkOwner, err := draclaim.Name(pod, pc)
		if err != nil {
			return nil, err
		}
		if name == nil {
			continue
		}
		var claim *resourcev1.ResourceClaim
		err = w.related(func() (err error) {
			claim, err = w.n.cs.ResourceV1().ResourceClaims(pod.Namespace).Get(w.ctx, *name, metav1.GetOptions{})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("fetch ResourceClaim %s: %w", *name, err)
		}
		if checkOwner {
			if err := draclaim.IsForPod(pod, claim, false); err != nil {
				return nil, err
			}
		}
		if !draclaim.IsReservedForPod(pod, claim, false) {
			return nil, fmt.Errorf("pod %s (%s) is not allowed to use ResourceClaim %s (%s)", pod.Name, pod.UID, *name, claim.UID)
		}
		if claim.Status.Allocation == nil {
			return nil, fmt.Errorf("ResourceClaim %s: not allocated", claim.Name)
		}
		for _, r := range claim.Status.Allocation.Devices.Results {
			if r.Driver != dra.DriverName || w.n.dra == nil {
				return nil, fmt.Errorf("DRA driver %s is not registered", r.Driver)
			}
		}
		claims[i] = claim
	}
	prepared := map[string]dra.PreparedClaim{}
	for i, claim := range claims {
		if claim == nil || w.n.dra == nil {
			continue
		}
		pc, err := w.n.dra.Prepare(claim, pod.UID)
		if err != nil {
			w.unprepare(prepared)
			return nil, fmt.Errorf("NodePrepareResources failed for ResourceClaim %s: %w", claim.Name, err)
		}
		prepared[pod.Spec.ResourceClaims[i].Name] = pc
	}
	return prepared, nil
}

// unprepareClaimsLocked releases the pod's prepared claims, once its
// containers are stopped (the kubelet's UnprepareDynamicResources). The
// caller holds w.mu.
func (w *podWorker) unprepareClaimsLocked() {
	if w.claims == nil {
		return
	}
	w.unprepare(w.claims)
	w.claims = map[string]dra.PreparedClaim{}
}

func (w *podWorker) unprepare(claims map[string]dra.PreparedClaim) {
	if w.n.dra == nil {
		return
	}
	for _, pc := range claims {
		w.n.dra.Unprepare(pc.UID, w.uid)
	}
}

// claimEnv adds what the prepared claims a container references inject
// into its environment: the devices' CDI edits, which replace a variable
// of the same name, as a CDI runtime applies them.
func (w *podWorker) claimEnv(spec *corev1.Container, env []runtime.EnvVar) []runtime.EnvVar {
	if len(spec.Resources.Claims) == 0 {
		return env
	}
	w.mu.Lock()
	vars := dra.ContainerEnv(spec.Resources.Claims, w.claims)
	w.mu.Unlock()
	at := map[string]int{}
	for i, e := range env {
		at[e.Name] = i
	}
	for _, kv := range vars {
		k, v, _ := strings.Cut(kv, "=")
		if i, ok := at[k]; ok {
			env[i].Value = v
			continue
		}
		at[k] = len(env)
		env = append(env, runtime.EnvVar{Name: k, Value: v})
	}
	return env
}
