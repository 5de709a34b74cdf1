package replicaset

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/kubectl/pkg/util/podutils"
)

// calculateStatus is the status rs should report for its active and
// terminating pods at now; manageErr, the error of the last attempt to
// create or delete pods, sets or clears the ReplicaFailure condition.
func calculateStatus(rs *appsv1.ReplicaSet, active, terminating []*corev1.Pod, manageErr error, now time.Time) appsv1.ReplicaSetStatus {
	status := *rs.Status.DeepCopy()
	templateLabels := labels.Set(rs.Spec.Template.Labels).AsSelectorPreValidated()
	var fullyLabeled, ready, available int32
	for _, p := range active {
		if templateLabels.Matches(labels.Set(p.Labels)) {
			fullyLabeled++
		}
		if podutils.IsPodReady(p) {
			ready++
			if podutils.IsPodAvailable(p, rs.Spec.MinReadySeconds, metav1.NewTime(now)) {
				available++
			}
		}
	}
	failure := condition(rs.Status, appsv1.ReplicaSetReplicaFailure)
	switch {
	case manageErr != nil && failure == nil:
		reason := ""
		if diff := len(active) - replicas(rs); diff < 0 {
			reason = ReasonFailedCreate
		} else if diff > 0 {
			reason = ReasonFailedDelete
		}
		setCondition(&status, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(now), Reason: reason, Message: manageErr.Error(),
		})
	case manageErr == nil && failure != nil:
		removeCondition(&status, appsv1.ReplicaSetReplicaFailure)
	}
	status.Replicas = int32(len(active))
	status.FullyLabeledReplicas = fullyLabeled
	status.ReadyReplicas = ready
	status.AvailableReplicas = available
	n := int32(len(terminating))
	status.TerminatingReplicas = &n
	return status
}

// replicas is the desired number of replicas (1 when unset, as defaulted).
func replicas(rs *appsv1.ReplicaSet) int {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return int(*rs.Spec.Replicas)
}

func condition(s appsv1.ReplicaSetStatus, t appsv1.ReplicaSetConditionType) *appsv1.ReplicaSetCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// setCondition adds or replaces a condition, keeping the existing one when
// its status and reason are unchanged.
func setCondition(s *appsv1.ReplicaSetStatus, c appsv1.ReplicaSetCondition) {
	if cur := condition(*s, c.Type); cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	removeCondition(s, c.Type)
	s.Conditions = append(s.Conditions, c)
}

func removeCondition(s *appsv1.ReplicaSetStatus, t appsv1.ReplicaSetConditionType) {
	var out []appsv1.ReplicaSetCondition
	for _, c := range s.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	s.Conditions = out
}

// updateStatus writes status to rs (a copy the caller owns) unless nothing
// changed, recording the generation it acted on. It retries once, on a
// fresh read, as kube's controller does.
func updateStatus(ctx context.Context, w *workload, rs *appsv1.ReplicaSet, status appsv1.ReplicaSetStatus) (*appsv1.ReplicaSet, error) {
	status.ObservedGeneration = rs.Generation
	if apiequality.Semantic.DeepEqual(rs.Status, status) {
		return rs, nil
	}
	for attempt := 0; ; attempt++ {
		rs.Status = status
		updated, err := w.updateStatus(ctx, rs)
		if err == nil {
			return updated, nil
		}
		if attempt >= 1 {
			return nil, fmt.Errorf("update status of %s %s/%s: %w", w.noun, rs.Namespace, rs.Name, err)
		}
		fresh, getErr := w.get(ctx, rs.Namespace, rs.Name)
		if getErr != nil {
			return nil, fmt.Errorf("get %s %s/%s: %w", w.noun, rs.Namespace, rs.Name, getErr)
		}
		if fresh.UID != rs.UID {
			return nil, fmt.Errorf("%s %s/%s was replaced while updating its status", w.noun, rs.Namespace, rs.Name)
		}
		// The status was computed for the generation read first: keep
		// reporting that one.
		rs = fresh
	}
}

// writtenStatus remembers, per ReplicaSet key, the object a status write
// returned and the resourceVersion it replaced. While the informer's cache
// still holds that replaced version, the written object is the newer one;
// once the cache moves on, it is forgotten. kube's controller reads the
// cache alone, and when its write conflicts, reads the ReplicaSet from the
// API server and writes again: two requests this saves.
type writtenStatus struct {
	mu sync.Mutex
	by map[string]written
}

type written struct {
	replaced string
	rs       *appsv1.ReplicaSet
}

// remember records that rs replaced the version replaced of key.
func (w *writtenStatus) remember(key, replaced string, rs *appsv1.ReplicaSet) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.by == nil {
		w.by = map[string]written{}
	}
	w.by[key] = written{replaced: replaced, rs: rs}
}

// newest returns the remembered write of key if cached is the version it
// replaced (the cache is behind), cached otherwise. Callers must not
// change what it returns.
func (w *writtenStatus) newest(key string, cached *appsv1.ReplicaSet) *appsv1.ReplicaSet {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.by[key]
	if !ok {
		return cached
	}
	if last.replaced == cached.ResourceVersion && last.rs.UID == cached.UID {
		return last.rs
	}
	delete(w.by, key)
	return cached
}

// forget drops what is remembered of key (the ReplicaSet is gone).
func (w *writtenStatus) forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.by, key)
}
