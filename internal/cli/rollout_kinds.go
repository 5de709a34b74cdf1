package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes"
)

var (
	statefulSetKind = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	daemonSetKind   = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
)

// statusViewer is kubectl's StatusViewer: an object's rollout status line
// and whether the rollout is done.
type statusViewer func(u *unstructured.Unstructured, revision int64) (string, bool, error)

// revisionEntry is one revision in rollout history: the object -o prints
// (a Deployment's ReplicaSet; a StatefulSet or DaemonSet with the
// revision's template), the template --revision shows, and the change
// cause the overview lists.
type revisionEntry struct {
	Object      runtime.Object
	Template    *corev1.PodTemplateSpec
	ChangeCause string
}

// rolloutKind is what the rollout subcommands do for one kind, as
// kubectl's StatusViewerFor, HistoryViewerFor and RollbackerFor.
type rolloutKind struct {
	status   statusViewer
	history  func(ctx context.Context, cs kubernetes.Interface, namespace, name string) (map[int64]revisionEntry, error)
	rollback func(ctx context.Context, cs kubernetes.Interface, namespace, name string, toRevision int64, dryRun DryRunStrategy) (string, error)
}

// rolloutKinds lists the kinds rollout status, history and undo support.
var rolloutKinds = map[schema.GroupKind]rolloutKind{
	deploymentKind:  {status: deploymentRolloutStatus, history: deploymentHistory, rollback: rollbackDeployment},
	statefulSetKind: {status: statefulSetRolloutStatus, history: revisionHistoryOf(statefulSetRevisions), rollback: rollbackRevision(statefulSetRevisions)},
	daemonSetKind:   {status: daemonSetRolloutStatus, history: revisionHistoryOf(daemonSetRevisions), rollback: rollbackRevision(daemonSetRevisions)},
}

// statefulSetRolloutStatus is kubectl's StatefulSetStatusViewer.
func statefulSetRolloutStatus(u *unstructured.Unstructured, _ int64) (string, bool, error) {
	sts := &appsv1.StatefulSet{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, sts); err != nil {
		return "", false, fmt.Errorf("failed to convert %T to %T: %v", u, sts, err)
	}
	if sts.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType {
		return "", true, fmt.Errorf("rollout status is only available for %s strategy type", appsv1.RollingUpdateStatefulSetStrategyType)
	}
	if sts.Status.ObservedGeneration == 0 || sts.Generation > sts.Status.ObservedGeneration {
		return "Waiting for statefulset spec update to be observed...\n", false, nil
	}
	if sts.Spec.Replicas != nil && sts.Status.ReadyReplicas < *sts.Spec.Replicas {
		return fmt.Sprintf("Waiting for %d pods to be ready...\n", *sts.Spec.Replicas-sts.Status.ReadyReplicas), false, nil
	}
	if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		if sts.Spec.Replicas != nil && ru.Partition != nil && sts.Status.UpdatedReplicas < *sts.Spec.Replicas-*ru.Partition {
			return fmt.Sprintf("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...\n",
				sts.Status.UpdatedReplicas, *sts.Spec.Replicas-*ru.Partition), false, nil
		}
		return fmt.Sprintf("partitioned roll out complete: %d new pods have been updated...\n", sts.Status.UpdatedReplicas), true, nil
	}
	if sts.Status.UpdateRevision != sts.Status.CurrentRevision {
		return fmt.Sprintf("waiting for statefulset rolling update to complete %d pods at revision %s...\n",
			sts.Status.UpdatedReplicas, sts.Status.UpdateRevision), false, nil
	}
	return fmt.Sprintf("statefulset rolling update complete %d pods at revision %s...\n", sts.Status.CurrentReplicas, sts.Status.CurrentRevision), true, nil
}

// daemonSetRolloutStatus is kubectl's DaemonSetStatusViewer.
func daemonSetRolloutStatus(u *unstructured.Unstructured, _ int64) (string, bool, error) {
	ds := &appsv1.DaemonSet{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ds); err != nil {
		return "", false, fmt.Errorf("failed to convert %T to %T: %v", u, ds, err)
	}
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType {
		// kubectl names the StatefulSet constant here; both read RollingUpdate.
		return "", true, fmt.Errorf("rollout status is only available for %s strategy type", appsv1.RollingUpdateStatefulSetStrategyType)
	}
	if ds.Generation > ds.Status.ObservedGeneration {
		return "Waiting for daemon set spec update to be observed...\n", false, nil
	}
	if ds.Status.UpdatedNumberScheduled < ds.Status.DesiredNumberScheduled {
		return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...\n",
			ds.Name, ds.Status.UpdatedNumberScheduled, ds.Status.DesiredNumberScheduled), false, nil
	}
	if ds.Status.NumberAvailable < ds.Status.DesiredNumberScheduled {
		return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...\n",
			ds.Name, ds.Status.NumberAvailable, ds.Status.DesiredNumberScheduled), false, nil
	}
	return fmt.Sprintf("daemon set %q successfully rolled out\n", ds.Name), true, nil
}

// revisionOwner is a StatefulSet or DaemonSet with its ControllerRevisions:
// the owner (for kind and template) and how to apply a revision's patch.
type revisionOwner struct {
	obj       runtime.Object
	kind      string
	template  *corev1.PodTemplateSpec
	revisions []*appsv1.ControllerRevision
}

// revisionsLister fetches an owner and the ControllerRevisions it controls.
type revisionsLister func(ctx context.Context, cs kubernetes.Interface, namespace, name string) (*revisionOwner, error)

func statefulSetRevisions(ctx context.Context, cs kubernetes.Interface, namespace, name string) (*revisionOwner, error) {
	sts, err := cs.AppsV1().StatefulSets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to retrieve Statefulset %s: %s", name, err)
	}
	sts.Kind, sts.APIVersion = "StatefulSet", "apps/v1"
	revs, err := controlledRevisions(ctx, cs, sts, sts.Spec.Selector)
	if err != nil {
		return nil, err
	}
	return &revisionOwner{obj: sts, kind: "StatefulSet", template: &sts.Spec.Template, revisions: revs}, nil
}

func daemonSetRevisions(ctx context.Context, cs kubernetes.Interface, namespace, name string) (*revisionOwner, error) {
	ds, err := cs.AppsV1().DaemonSets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to retrieve DaemonSet %s: %v", name, err)
	}
	ds.Kind, ds.APIVersion = "DaemonSet", "apps/v1"
	revs, err := controlledRevisions(ctx, cs, ds, ds.Spec.Selector)
	if err != nil {
		return nil, err
	}
	return &revisionOwner{obj: ds, kind: "DaemonSet", template: &ds.Spec.Template, revisions: revs}, nil
}

// controlledRevisions lists the ControllerRevisions owner controls among
// those its selector matches, as kubectl does.
func controlledRevisions(ctx context.Context, cs kubernetes.Interface, owner metav1.Object, sel *metav1.LabelSelector) ([]*appsv1.ControllerRevision, error) {
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, err
	}
	l, err := cs.AppsV1().ControllerRevisions(owner.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, err
	}
	var out []*appsv1.ControllerRevision
	for i := range l.Items {
		if metav1.IsControlledBy(&l.Items[i], owner) {
			out = append(out, &l.Items[i])
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Revision < out[j].Revision })
	return out, nil
}

// applyRevision returns the owner with a revision's patch applied.
func (o *revisionOwner) applyRevision(rev *appsv1.ControllerRevision) (runtime.Object, *corev1.PodTemplateSpec, error) {
	original, err := json.Marshal(o.obj)
	if err != nil {
		return nil, nil, err
	}
	patched, err := strategicpatch.StrategicMergePatch(original, rev.Data.Raw, o.obj)
	if err != nil {
		return nil, nil, err
	}
	switch o.obj.(type) {
	case *appsv1.StatefulSet:
		out := &appsv1.StatefulSet{}
		if err := json.Unmarshal(patched, out); err != nil {
			return nil, nil, err
		}
		return out, &out.Spec.Template, nil
	default:
		out := &appsv1.DaemonSet{}
		if err := json.Unmarshal(patched, out); err != nil {
			return nil, nil, err
		}
		return out, &out.Spec.Template, nil
	}
}

// revisionHistoryOf is the history of a kind that keeps ControllerRevisions.
func revisionHistoryOf(list revisionsLister) func(ctx context.Context, cs kubernetes.Interface, namespace, name string) (map[int64]revisionEntry, error) {
	return func(ctx context.Context, cs kubernetes.Interface, namespace, name string) (map[int64]revisionEntry, error) {
		owner, err := list(ctx, cs, namespace, name)
		if err != nil {
			return nil, err
		}
		out := map[int64]revisionEntry{}
		for _, rev := range owner.revisions {
			obj, template, err := owner.applyRevision(rev)
			if err != nil {
				return nil, fmt.Errorf("unable to parse history %s", rev.Name)
			}
			out[rev.Revision] = revisionEntry{Object: obj, Template: template, ChangeCause: rev.Annotations[changeCauseAnnotation]}
		}
		return out, nil
	}
}

// rollbackRevision is kubectl's StatefulSetRollbacker and
// DaemonSetRollbacker: it applies the revision's patch (the previous
// revision by default) to the owner.
func rollbackRevision(list revisionsLister) func(ctx context.Context, cs kubernetes.Interface, namespace, name string, toRevision int64, dryRun DryRunStrategy) (string, error) {
	return func(ctx context.Context, cs kubernetes.Interface, namespace, name string, toRevision int64, dryRun DryRunStrategy) (string, error) {
		if toRevision < 0 {
			return "", fmt.Errorf("unable to find specified revision %v in history", toRevision)
		}
		owner, err := list(ctx, cs, namespace, name)
		if err != nil {
			return "", err
		}
		if toRevision == 0 && len(owner.revisions) <= 1 {
			return "", errors.New("no last revision to roll back to")
		}
		var target *appsv1.ControllerRevision
		if toRevision == 0 {
			target = owner.revisions[len(owner.revisions)-2]
		} else {
			for _, r := range owner.revisions {
				if r.Revision == toRevision {
					target = r
				}
			}
		}
		if target == nil {
			return "", fmt.Errorf("unable to find specified revision %v in history", toRevision)
		}
		_, template, err := owner.applyRevision(target)
		if err != nil {
			return "", fmt.Errorf("failed restoring revision %d: %v", target.Revision, err)
		}
		if dryRun == DryRunClient {
			return printTemplate(template), nil
		}
		if apiequality.Semantic.DeepEqual(template, owner.template) {
			return fmt.Sprintf("skipped rollback (current template already matches revision %d)", target.Revision), nil
		}
		opts := metav1.PatchOptions{}
		if dryRun == DryRunServer {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		switch owner.kind {
		case "StatefulSet":
			_, err = cs.AppsV1().StatefulSets(namespace).Patch(ctx, name, types.StrategicMergePatchType, target.Data.Raw, opts)
		default:
			_, err = cs.AppsV1().DaemonSets(namespace).Patch(ctx, name, types.StrategicMergePatchType, target.Data.Raw, opts)
		}
		if err != nil {
			return "", fmt.Errorf("failed restoring revision %d: %v", target.Revision, err)
		}
		return "rolled back", nil
	}
}
