package statefulset

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/controllers/history"
)

// reconciler brings one StatefulSet's pods in line with its spec during
// one sync, after kube's defaultStatefulSetControl.
type reconciler struct {
	c               *Controller
	set             *appsv1.StatefulSet
	current, update *appsv1.ControllerRevision
	currentTemplate *corev1.PodTemplateSpec
	start, replicas int
	partition       int
	slots           []*corev1.Pod // by ordinal-start, nil when missing
	condemned       []*corev1.Pod // ordinals beyond the replicas, highest first
	requeueAfter    time.Duration
	firstUnhealthy  *corev1.Pod
	monotonic       bool
}

func (r *reconciler) init(pods []*corev1.Pod) error {
	set := r.set
	r.replicas = int(replicasOf(set))
	if set.Spec.Ordinals != nil {
		r.start = int(set.Spec.Ordinals.Start)
	}
	r.monotonic = set.Spec.PodManagementPolicy != appsv1.ParallelPodManagement
	if u := set.Spec.UpdateStrategy; u.Type == appsv1.RollingUpdateStatefulSetStrategyType && u.RollingUpdate != nil && u.RollingUpdate.Partition != nil {
		r.partition = int(*u.RollingUpdate.Partition)
	}
	t, err := history.Template(r.current)
	if err != nil {
		return err
	}
	r.currentTemplate = t
	r.slots = make([]*corev1.Pod, r.replicas)
	byOrdinal(pods)
	for _, p := range pods {
		o := ordinalOf(p)
		if parentName(p) != set.Name || o < 0 {
			continue
		}
		if o >= r.start && o < r.start+r.replicas {
			r.slots[o-r.start] = p
		} else {
			r.condemned = append([]*corev1.Pod{p}, r.condemned...)
		}
	}
	for _, p := range r.slots {
		if p != nil && !isHealthy(p) {
			r.firstUnhealthy = p
			break
		}
	}
	if r.firstUnhealthy == nil {
		for i := len(r.condemned) - 1; i >= 0; i-- {
			if !isHealthy(r.condemned[i]) {
				r.firstUnhealthy = r.condemned[i]
				break
			}
		}
	}
	return nil
}

func replicasOf(set *appsv1.StatefulSet) int32 {
	if set.Spec.Replicas == nil {
		return 1
	}
	return *set.Spec.Replicas
}

// manage creates, replaces and deletes pods. With OrderedReady it acts on
// one pod at a time and waits for every earlier one to be Running and
// Ready; with Parallel it acts on all at once.
func (r *reconciler) manage(ctx context.Context) error {
	set := r.set
	now := r.c.clock.Now()
	for i, p := range r.slots {
		ordinal := r.start + i
		if p != nil && (isFailed(p) || isSucceeded(p)) && !isTerminating(p) {
			// A finished pod is replaced under the same name.
			if err := r.deletePod(ctx, p); err != nil {
				return err
			}
			if r.monotonic {
				return nil
			}
			continue
		}
		if p == nil {
			if err := r.createPod(ctx, ordinal); err != nil {
				return err
			}
			if r.monotonic {
				return nil
			}
			continue
		}
		if !r.monotonic {
			continue
		}
		if isTerminating(p) || !isRunningAndReady(p) {
			r.c.log.Debug("waiting for pod to be running and ready", "statefulset", set.Namespace+"/"+set.Name, "pod", p.Name)
			return nil
		}
		if !isRunningAndAvailable(p, set.Spec.MinReadySeconds, now) {
			r.requeueAfter = time.Duration(set.Spec.MinReadySeconds) * time.Second
			return nil
		}
	}
	// Scale down, highest ordinal first.
	for _, p := range r.condemned {
		if isTerminating(p) {
			if r.monotonic {
				return nil
			}
			continue
		}
		if r.monotonic && !isRunningAndReady(p) && p != r.firstUnhealthy {
			return nil
		}
		if err := r.deletePod(ctx, p); err != nil {
			return err
		}
		if r.monotonic {
			return nil
		}
	}
	if set.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType {
		return nil
	}
	// Rolling update: from the highest ordinal down to the partition, one
	// pod at a time, each once every pod is healthy.
	for _, p := range r.slots {
		if p == nil || !isHealthy(p) {
			return nil
		}
	}
	for i := len(r.slots) - 1; i >= r.partition-r.start && i >= 0; i-- {
		p := r.slots[i]
		if revisionOf(p) != r.update.Name && !isTerminating(p) {
			return r.deletePod(ctx, p)
		}
		if !isHealthy(p) {
			return nil
		}
	}
	return nil
}

// createPod creates the pod of an ordinal: from the current revision
// below the partition, from the update revision from it on.
func (r *reconciler) createPod(ctx context.Context, ordinal int) error {
	set := r.set
	template, revision := &set.Spec.Template, r.update.Name
	if set.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && ordinal < r.start+r.partition {
		template, revision = r.currentTemplate, r.current.Name
	}
	pod := newPod(set, template, ordinal, revision)
	if err := r.createClaims(ctx, pod); err != nil {
		return err
	}
	_, err := r.c.client.CoreV1().Pods(set.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
		r.c.recorder.Eventf(set, corev1.EventTypeWarning, ReasonFailedCreate, "create Pod %s in StatefulSet %s failed error: %s", pod.Name, set.Name, err)
		return fmt.Errorf("create pod %s/%s: %w", set.Namespace, pod.Name, err)
	}
	r.c.recorder.Eventf(set, corev1.EventTypeNormal, ReasonSuccessfulCreate, "create Pod %s in StatefulSet %s successful", pod.Name, set.Name)
	return nil
}

// createClaims creates the pod's claims from the volumeClaimTemplates
// that do not exist yet, with the set's selector labels, as kube does.
func (r *reconciler) createClaims(ctx context.Context, pod *corev1.Pod) error {
	set := r.set
	for _, tmpl := range set.Spec.VolumeClaimTemplates {
		claim := claimFor(set, &tmpl, pod.Name)
		_, err := r.c.client.CoreV1().PersistentVolumeClaims(set.Namespace).Create(ctx, claim, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				return nil
			}
			r.c.recorder.Eventf(set, corev1.EventTypeWarning, ReasonFailedCreate, "create Claim %s for Pod %s in StatefulSet %s failed error: %s", claim.Name, pod.Name, set.Name, err)
			return fmt.Errorf("create claim %s/%s: %w", set.Namespace, claim.Name, err)
		}
		r.c.recorder.Eventf(set, corev1.EventTypeNormal, ReasonSuccessfulCreate, "create Claim %s Pod %s in StatefulSet %s success", claim.Name, pod.Name, set.Name)
	}
	return nil
}

// claimName is the claim a template gives a pod: <template>-<pod>.
func claimName(tmpl *corev1.PersistentVolumeClaim, pod string) string {
	return tmpl.Name + "-" + pod
}

// claimFor builds the claim of a template for a pod.
func claimFor(set *appsv1.StatefulSet, tmpl *corev1.PersistentVolumeClaim, pod string) *corev1.PersistentVolumeClaim {
	claim := tmpl.DeepCopy()
	claim.ObjectMeta = metav1.ObjectMeta{
		Name:        claimName(tmpl, pod),
		Namespace:   set.Namespace,
		Labels:      copyMap(tmpl.Labels),
		Annotations: copyMap(tmpl.Annotations),
	}
	if set.Spec.Selector != nil && len(set.Spec.Selector.MatchLabels) > 0 {
		if claim.Labels == nil {
			claim.Labels = map[string]string{}
		}
		for k, v := range set.Spec.Selector.MatchLabels {
			claim.Labels[k] = v
		}
	}
	claim.Status = corev1.PersistentVolumeClaimStatus{}
	return claim
}

func (r *reconciler) deletePod(ctx context.Context, p *corev1.Pod) error {
	set := r.set
	err := r.c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		r.c.recorder.Eventf(set, corev1.EventTypeWarning, ReasonFailedDelete, "delete Pod %s in StatefulSet %s failed error: %s", p.Name, set.Name, err)
		return fmt.Errorf("delete pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	r.c.recorder.Eventf(set, corev1.EventTypeNormal, ReasonSuccessfulDelete, "delete Pod %s in StatefulSet %s successful", p.Name, set.Name)
	return nil
}

// newPod builds the pod of an ordinal: the template, the stable name and
// hostname, the subdomain of the governing service, the identity labels
// and the revision label.
func newPod(set *appsv1.StatefulSet, template *corev1.PodTemplateSpec, ordinal int, revision string) *corev1.Pod {
	name := podName(set, ordinal)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       set.Namespace,
			Labels:          map[string]string{},
			Annotations:     copyMap(template.Annotations),
			Finalizers:      append([]string(nil), template.Finalizers...),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(set, controllerKind)},
		},
		Spec: *template.Spec.DeepCopy(),
	}
	for k, v := range template.Labels {
		pod.Labels[k] = v
	}
	pod.Labels[appsv1.StatefulSetPodNameLabel] = name
	pod.Labels[appsv1.PodIndexLabel] = fmt.Sprint(ordinal)
	pod.Labels[appsv1.ControllerRevisionHashLabelKey] = revision
	pod.Spec.Hostname = name
	pod.Spec.Subdomain = set.Spec.ServiceName
	// Each claim template replaces any template volume of its name with
	// the pod's own claim.
	if len(set.Spec.VolumeClaimTemplates) > 0 {
		claims := map[string]bool{}
		var volumes []corev1.Volume
		for i := range set.Spec.VolumeClaimTemplates {
			tmpl := &set.Spec.VolumeClaimTemplates[i]
			claims[tmpl.Name] = true
			volumes = append(volumes, corev1.Volume{Name: tmpl.Name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(tmpl, name)},
			}})
		}
		for _, v := range pod.Spec.Volumes {
			if !claims[v.Name] {
				volumes = append(volumes, v)
			}
		}
		pod.Spec.Volumes = volumes
	}
	return pod
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// status computes the StatefulSet's status from its pods, completing a
// rolling update (current revision := update revision) once every replica
// is updated and ready.
func (r *reconciler) status(pods []*corev1.Pod, collisionCount int32) appsv1.StatefulSetStatus {
	set := r.set
	now := r.c.clock.Now()
	st := appsv1.StatefulSetStatus{
		ObservedGeneration: set.Generation,
		CurrentRevision:    r.current.Name,
		UpdateRevision:     r.update.Name,
		CollisionCount:     &collisionCount,
		Conditions:         set.Status.Conditions,
	}
	for _, p := range pods {
		if isCreated(p) {
			st.Replicas++
		}
		if isRunningAndReady(p) {
			st.ReadyReplicas++
			if isRunningAndAvailable(p, set.Spec.MinReadySeconds, now) {
				st.AvailableReplicas++
			}
		}
		if isCreated(p) && !isTerminating(p) {
			if revisionOf(p) == r.current.Name {
				st.CurrentReplicas++
			}
			if revisionOf(p) == r.update.Name {
				st.UpdatedReplicas++
			}
		}
	}
	// kube counts the pods a sync creates; this status is computed from
	// the pods seen before acting, so a missing ordinal (deleted for the
	// update, not yet recreated) must also hold the update back.
	if set.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType &&
		st.UpdatedReplicas == st.Replicas && st.ReadyReplicas == st.Replicas && r.allSlotsFilled() {
		st.CurrentRevision = st.UpdateRevision
		st.CurrentReplicas = st.UpdatedReplicas
	}
	if st.CurrentRevision == st.UpdateRevision {
		st.CurrentReplicas = st.UpdatedReplicas
	}
	return st
}

// allSlotsFilled tells whether every ordinal of the replicas has a pod.
func (r *reconciler) allSlotsFilled() bool {
	for _, p := range r.slots {
		if p == nil {
			return false
		}
	}
	return true
}
