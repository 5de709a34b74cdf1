package registry

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubectl/pkg/util/podutils"
)

// Eviction, the pods/eviction subresource: POST a policy/v1 Eviction to
// /api/v1/namespaces/<ns>/pods/<name>/eviction and the pod is deleted
// (with the Eviction's deleteOptions) unless that would violate the
// PodDisruptionBudget covering it, as kube-apiserver's EvictionREST
// decides:
//
//   - a pod that is Pending, Succeeded or Failed, or already being
//     deleted, is deleted without looking at budgets;
//   - a pod covered by more than one budget is refused with a 500;
//   - a pod covered by one budget is refused with a 429 while the budget
//     allows no disruption (or its status lags its spec); otherwise the
//     budget's status.disruptionsAllowed is decremented and the pod
//     recorded in status.disruptedPods, in one compare-and-swap write,
//     before the pod is deleted;
//   - a pod that is not Ready does not count as healthy, so evicting it
//     spends no disruption when the budget is met (or its
//     unhealthyPodEvictionPolicy is AlwaysAllow): it is deleted on the
//     condition that it has not changed since it was read, lest it became
//     Ready meanwhile.
//
// Before the delete the pod gets the DisruptionTarget condition (reason
// EvictionByEvictionAPI).

const (
	// maxDisruptedPods bounds status.disruptedPods: evictions the
	// disruption controller has not yet seen are refused beyond it.
	maxDisruptedPods = 2000

	evictionRefused = "Cannot evict pod as it would violate the pod's disruption budget."
	evictionManyPDB = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."

	// reasonEvictionByEvictionAPI and messageEvictionByEvictionAPI are the
	// DisruptionTarget condition the eviction sets.
	reasonEvictionByEvictionAPI  = "EvictionByEvictionAPI"
	messageEvictionByEvictionAPI = "Eviction API: evicting"
)

// pdbGR is the resource of the budgets an eviction spends.
var pdbGR = schema.GroupResource{Group: policyv1.GroupName, Resource: "poddisruptionbudgets"}

// createEviction is pods/eviction. The Eviction must name the pod of the
// URL (and its namespace, if it names one) before admission sees it; a
// policy/v1beta1 Eviction is accepted too, as kube does.
func createEviction(ctx context.Context, env Env, ns, name string, obj runtime.Object, dryRun bool) (runtime.Object, error) {
	var ev *policyv1.Eviction
	switch o := obj.(type) {
	case *policyv1.Eviction:
		ev = o
	case *policyv1beta1.Eviction:
		ev = &policyv1.Eviction{ObjectMeta: o.ObjectMeta, DeleteOptions: o.DeleteOptions}
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Eviction object: %s", obj.GetObjectKind().GroupVersionKind().Kind))
	}
	if ev.Namespace != "" && ev.Namespace != ns {
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	ev.Namespace = ns
	if ev.Name != name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	// The API layer has refused any dryRun value but All.
	var reqDryRun []string
	if dryRun {
		reqDryRun = []string{metav1.DryRunAll}
	}
	opts, err := evictionDeleteOptions(ev, reqDryRun)
	if err != nil {
		return nil, err
	}
	if err := env.Admit(ctx, corev1.SchemeGroupVersion.WithResource("pods"), ns, name, "eviction", ev, len(opts.DryRun) > 0); err != nil {
		return nil, err
	}
	return evict(ctx, env, ns, name, opts)
}

// evictionDeleteOptions are the Eviction's deleteOptions with the
// request's dryRun, which must agree with the body's when both are given.
func evictionDeleteOptions(ev *policyv1.Eviction, dryRun []string) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	if ev.DeleteOptions != nil {
		opts = ev.DeleteOptions.DeepCopy()
	}
	switch {
	case len(opts.DryRun) == 0:
		opts.DryRun = dryRun
	case len(dryRun) > 0 && !slices.Equal(dryRun, opts.DryRun):
		return nil, apierrors.NewInternalError(fmt.Errorf("Non-matching dry-run options in request and content: %v and %v", dryRun, opts.DryRun))
	}
	for _, v := range opts.DryRun {
		if v != metav1.DryRunAll {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("Invalid dry run value: %s. Supported value is: All", v))
		}
	}
	return opts, nil
}

func resourceVersionUnset(opts *metav1.DeleteOptions) bool {
	return opts.Preconditions == nil || opts.Preconditions.ResourceVersion == nil
}

// withResourceVersion returns a copy of opts requiring the pod's
// resourceVersion.
func withResourceVersion(opts *metav1.DeleteOptions, rv string) *metav1.DeleteOptions {
	out := opts.DeepCopy()
	if out.Preconditions == nil {
		out.Preconditions = &metav1.Preconditions{}
	}
	out.Preconditions.ResourceVersion = &rv
	return out
}

// canIgnorePDB tells whether a pod may go without consulting budgets: it
// has not started, has finished, or is going already.
func canIgnorePDB(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending:
		return true
	}
	return pod.DeletionTimestamp != nil
}

// mustKeepVersion tells whether a budget-free deletion must be conditional
// on the pod not changing: a Pending pod could become Ready meanwhile.
func mustKeepVersion(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return false
	}
	return pod.DeletionTimestamp == nil
}

// evicted is the answer to an eviction that deleted the pod.
func evicted() *metav1.Status { return &metav1.Status{Status: metav1.StatusSuccess} }

// evict runs one eviction; see the comment at the top of the file.
func evict(ctx context.Context, env Env, ns, name string, opts *metav1.DeleteOptions) (*metav1.Status, error) {
	pods := env.Store(podsResource)
	var pod *corev1.Pod
	for attempt := 0; ; attempt++ {
		obj, err := pods.Get(ctx, ns, name)
		if err != nil {
			return nil, err
		}
		pod = obj.(*corev1.Pod)
		if !canIgnorePDB(pod) {
			break
		}
		del := opts
		if mustKeepVersion(pod) && resourceVersionUnset(opts) {
			del = withResourceVersion(opts, pod.ResourceVersion)
		}
		err = markAndDelete(ctx, env, pods, pod, del)
		if apierrors.IsConflict(err) && resourceVersionUnset(opts) && attempt < 20 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return evicted(), nil
	}

	pdbs, err := matchingPDBs(ctx, env, pod)
	if err != nil {
		return nil, err
	}
	if len(pdbs) > 1 {
		return &metav1.Status{Status: metav1.StatusFailure, Message: evictionManyPDB, Code: http.StatusInternalServerError}, nil
	}
	del := opts
	unready := false
	if len(pdbs) == 1 {
		pdb := pdbs[0]
		st := pdb.Status
		alwaysAllow := pdb.Spec.UnhealthyPodEvictionPolicy != nil && *pdb.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow
		if !podutils.IsPodReady(pod) && (alwaysAllow || (st.CurrentHealthy >= st.DesiredHealthy && st.DesiredHealthy > 0)) {
			// An unready pod is not healthy: its eviction spends nothing,
			// as long as it is still unready when it goes.
			unready = true
			del = withResourceVersion(opts, pod.ResourceVersion)
		} else if err := spendDisruption(ctx, env, pdb.Namespace, pdb.Name, pod.Name, len(opts.DryRun) > 0); err != nil {
			return nil, err
		}
	}
	if err := markAndDelete(ctx, env, pods, pod, del); err != nil {
		if apierrors.IsConflict(err) && unready && resourceVersionUnset(opts) {
			return nil, tooManyRequests(pdbs[0].Name)
		}
		return nil, err
	}
	return evicted(), nil
}

// matchingPDBs lists the budgets of the pod's namespace whose selector
// matches its labels; an empty or invalid selector matches nothing here.
func matchingPDBs(ctx context.Context, env Env, pod *corev1.Pod) ([]*policyv1.PodDisruptionBudget, error) {
	store := env.Store(pdbGR)
	if store == nil {
		return nil, nil
	}
	objs, err := store.List(ctx, pod.Namespace, labels.Everything())
	if err != nil {
		return nil, err
	}
	var out []*policyv1.PodDisruptionBudget
	for _, obj := range objs {
		pdb, ok := obj.(*policyv1.PodDisruptionBudget)
		if !ok {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, pdb)
	}
	return out, nil
}

// spendDisruption checks that the budget allows a disruption and takes
// one: disruptionsAllowed goes down by one and the pod is recorded in
// disruptedPods, in a write conditional on the budget not having changed
// since it was read (re-read and re-checked on a conflict). A dry run
// checks without writing.
func spendDisruption(ctx context.Context, env Env, ns, name, podName string, dryRun bool) error {
	_, err := env.Store(pdbGR).Update(ctx, ns, name, "status", dryRun, func(current runtime.Object) (runtime.Object, error) {
		pdb := current.(*policyv1.PodDisruptionBudget)
		st := &pdb.Status
		switch {
		case st.ObservedGeneration < pdb.Generation:
			return nil, tooManyRequests(pdb.Name)
		case st.DisruptionsAllowed < 0:
			return nil, apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}, pdb.Name, fmt.Errorf("pdb disruptions allowed is negative"))
		case len(st.DisruptedPods) > maxDisruptedPods:
			return nil, apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}, pdb.Name, fmt.Errorf("DisruptedPods map too big - too many evictions not confirmed by PDB controller"))
		case st.DisruptionsAllowed == 0:
			return nil, budgetExhausted(pdb)
		}
		now := metav1.NewTime(env.Now().Truncate(time.Second))
		st.DisruptionsAllowed--
		if st.DisruptionsAllowed == 0 {
			apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{
				Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse, Reason: policyv1.InsufficientPodsReason,
				ObservedGeneration: st.ObservedGeneration, LastTransitionTime: now,
			})
		}
		if st.DisruptedPods == nil {
			st.DisruptedPods = map[string]metav1.Time{}
		}
		st.DisruptedPods[podName] = now
		// The write is conditional on the revision read; on a conflict
		// Update reads the budget again and this check runs anew.
		pdb.ResourceVersion = ""
		return pdb, nil
	})
	return err
}

// budgetExhausted is kube's 429 for a budget that allows no disruption.
func budgetExhausted(pdb *policyv1.PodDisruptionBudget) error {
	err := apierrors.NewTooManyRequests(evictionRefused, 0)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy),
	})
	return err
}

// tooManyRequests is kube's 429 for a budget whose status lags (or a pod
// that changed under an eviction that spent nothing).
func tooManyRequests(pdbName string) error {
	err := apierrors.NewTooManyRequests(evictionRefused, 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdbName),
	})
	return err
}

// markAndDelete sets the pod's DisruptionTarget condition (unless dry
// run), honouring the delete preconditions, then deletes it with opts. A
// resourceVersion precondition follows the condition's own write.
func markAndDelete(ctx context.Context, env Env, pods Store, pod *corev1.Pod, opts *metav1.DeleteOptions) error {
	if len(opts.DryRun) == 0 {
		podGR := schema.GroupResource{Resource: "Pod"}
		out, err := pods.Update(ctx, pod.Namespace, pod.Name, "status", false, func(current runtime.Object) (runtime.Object, error) {
			cur := current.(*corev1.Pod)
			if p := opts.Preconditions; p != nil {
				if p.UID != nil && *p.UID != "" && *p.UID != cur.UID {
					return nil, apierrors.NewConflict(podGR, cur.Name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, cur.UID))
				}
				if p.ResourceVersion != nil && *p.ResourceVersion != "" && *p.ResourceVersion != cur.ResourceVersion {
					return nil, apierrors.NewConflict(podGR, cur.Name, fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, cur.ResourceVersion))
				}
			}
			setDisruptionTarget(cur, metav1.NewTime(env.Now().Truncate(time.Second)))
			cur.ResourceVersion = ""
			return cur, nil
		})
		if err != nil {
			return err
		}
		if !resourceVersionUnset(opts) {
			m, _ := apimeta.Accessor(out)
			opts = withResourceVersion(opts, m.GetResourceVersion())
		}
	}
	_, _, err := pods.Delete(ctx, pod.Namespace, pod.Name, opts)
	return err
}

// setDisruptionTarget sets the DisruptionTarget condition as kube's
// UpdatePodCondition does: the transition time moves only with the status.
func setDisruptionTarget(pod *corev1.Pod, now metav1.Time) {
	want := corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: reasonEvictionByEvictionAPI, Message: messageEvictionByEvictionAPI, LastTransitionTime: now,
	}
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type != corev1.DisruptionTarget {
			continue
		}
		if c.Status == want.Status {
			want.LastTransitionTime = c.LastTransitionTime
		}
		*c = want
		return
	}
	pod.Status.Conditions = append(pod.Status.Conditions, want)
}
