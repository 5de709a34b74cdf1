package replicaset

import (
	"math"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/kubectl/pkg/util/podutils"
)

// isPodActive tells whether a pod counts as a replica: neither finished nor
// being deleted.
func isPodActive(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil
}

// isPodTerminating tells whether a pod is being deleted but has not
// finished yet.
func isPodTerminating(p *corev1.Pod) bool {
	return p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// readyCondition returns the pod's Ready condition, or nil.
func readyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// podFromTemplate builds the pod a ReplicaSet creates: the template's
// labels, annotations, finalizers and spec, a name generated from the
// ReplicaSet's, and the controller reference.
func podFromTemplate(template *corev1.PodTemplateSpec, ownerName string, controllerRef *metav1.OwnerReference) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: podNamePrefix(ownerName),
			Labels:       copyMap(template.Labels),
			Annotations:  copyMap(template.Annotations),
			Finalizers:   append([]string(nil), template.Finalizers...),
		},
		Spec: *template.Spec.DeepCopy(),
	}
	if controllerRef != nil {
		pod.OwnerReferences = append(pod.OwnerReferences, *controllerRef)
	}
	return pod
}

// podNamePrefix is "<owner>-" when that is a valid name prefix, else the
// owner's name (kube's getPodsPrefix).
func podNamePrefix(owner string) string {
	// A trailing dash is fine in a prefix: check it as if a letter followed.
	if len(validation.IsDNS1123Subdomain(owner+"a")) != 0 {
		return owner
	}
	return owner + "-"
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

// podPhaseOrdinal orders phases for deletion: pending pods go first.
var podPhaseOrdinal = map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}

// rankedPods sorts pods so that those to delete first come first, by
// kube's rules (controller.ActivePodsWithRanks, with pod deletion cost and
// logarithmic scale-down, both on by default):
//
//  1. unassigned before assigned to a node;
//  2. Pending before Unknown before Running;
//  3. not ready before ready;
//  4. lower controller.kubernetes.io/pod-deletion-cost first;
//  5. more replicas of the same owner on the pod's node first;
//  6. ready for a shorter time first (on a log2 scale of age);
//  7. more container restarts first;
//  8. created more recently first (on a log2 scale of age);
//
// with ties on a log scale broken by UID.
type rankedPods struct {
	pods []*corev1.Pod
	rank []int
	now  time.Time
}

func (s rankedPods) Len() int { return len(s.pods) }

func (s rankedPods) Swap(i, j int) {
	s.pods[i], s.pods[j] = s.pods[j], s.pods[i]
	s.rank[i], s.rank[j] = s.rank[j], s.rank[i]
}

func (s rankedPods) Less(i, j int) bool {
	a, b := s.pods[i], s.pods[j]
	if a.Spec.NodeName != b.Spec.NodeName && (a.Spec.NodeName == "" || b.Spec.NodeName == "") {
		return a.Spec.NodeName == ""
	}
	if pa, pb := podPhaseOrdinal[a.Status.Phase], podPhaseOrdinal[b.Status.Phase]; pa != pb {
		return pa < pb
	}
	if ra, rb := podutils.IsPodReady(a), podutils.IsPodReady(b); ra != rb {
		return !ra
	}
	if ca, cb := deletionCost(a), deletionCost(b); ca != cb {
		return ca < cb
	}
	if s.rank[i] != s.rank[j] {
		return s.rank[i] > s.rank[j]
	}
	if podutils.IsPodReady(a) && podutils.IsPodReady(b) {
		ta, tb := readyTime(a), readyTime(b)
		if !ta.Equal(tb) {
			return s.newer(ta, tb, a, b)
		}
	}
	if ra, rb := maxRestarts(a), maxRestarts(b); ra != rb {
		return ra > rb
	}
	if ta, tb := a.CreationTimestamp.Time, b.CreationTimestamp.Time; !ta.Equal(tb) {
		return s.newer(ta, tb, a, b)
	}
	return false
}

// newer tells whether ta is more recent than tb, comparing ages on a log2
// scale when both are known so that pods of similar age are chosen among
// pseudo-randomly (by UID); a zero time counts as the most recent.
func (s rankedPods) newer(ta, tb time.Time, a, b *corev1.Pod) bool {
	if s.now.IsZero() || ta.IsZero() || tb.IsZero() {
		if ta.IsZero() || tb.IsZero() {
			return ta.IsZero()
		}
		return ta.After(tb)
	}
	if d := logRank(s.now.Sub(ta)) - logRank(s.now.Sub(tb)); d != 0 {
		return d < 0
	}
	return a.UID < b.UID
}

func logRank(age time.Duration) int64 {
	if age <= 0 {
		return -1
	}
	return int64(math.Log2(float64(age)))
}

func readyTime(p *corev1.Pod) time.Time {
	if c := readyCondition(p); c != nil && c.Status == corev1.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

func maxRestarts(p *corev1.Pod) int32 {
	var m int32
	for _, c := range p.Status.ContainerStatuses {
		m = max(m, c.RestartCount)
	}
	return m
}

// deletionCost reads the pod-deletion-cost annotation; absent or invalid
// means 0.
func deletionCost(p *corev1.Pod) int32 {
	v, ok := p.Annotations[corev1.PodDeletionCost]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}

// podsToDelete picks diff of pods to delete, preferring those earlier in
// their life. related are the active pods of every ReplicaSet with the same
// owner, used to rank pods by how crowded their node is.
func podsToDelete(pods, related []*corev1.Pod, diff int, now time.Time) []*corev1.Pod {
	if diff >= len(pods) {
		return pods
	}
	onNode := map[string]int{}
	for _, p := range related {
		if isPodActive(p) {
			onNode[p.Spec.NodeName]++
		}
	}
	ranked := rankedPods{pods: append([]*corev1.Pod(nil), pods...), rank: make([]int, len(pods)), now: now}
	for i, p := range ranked.pods {
		ranked.rank[i] = onNode[p.Spec.NodeName]
	}
	sort.Sort(ranked)
	return ranked.pods[:diff]
}
