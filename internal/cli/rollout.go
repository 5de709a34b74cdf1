package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// Annotations of deployments and their replica sets that rollouts read.
const (
	revisionAnnotation    = "deployment.kubernetes.io/revision"
	changeCauseAnnotation = "kubernetes.io/change-cause"
	restartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"
	timedOutReason        = "ProgressDeadlineExceeded"
)

var deploymentKind = schema.GroupKind{Group: "apps", Kind: "Deployment"}

// rolloutSelection are the flags every rollout subcommand shares.
type rolloutSelection struct {
	Selection ObjectSelection
}

func (r *rolloutSelection) addFlags(cmd *cobra.Command, usage string) {
	r.Selection.Filenames.AddFlags(cmd, usage)
	cmd.Flags().StringVarP(&r.Selection.LabelSelector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2,key3 in (value3)). Matching objects must satisfy all of the specified label constraints.")
}

// complete fills the selection; an empty one is kubectl's "required
// resource not specified".
func (r *rolloutSelection) complete(f *Factory, cmd *cobra.Command, args []string) error {
	if len(args) == 0 && r.Selection.Filenames.Empty() {
		return errors.New("required resource not specified")
	}
	var err error
	r.Selection.Namespace, r.Selection.EnforceNamespace, err = f.Namespace()
	r.Selection.Args = args
	r.Selection.BaseName = cmd.Root().Name()
	r.Selection.AllowEmptySelector = true
	return err
}

// NewCmdRollout returns the rollout command and its subcommands.
func NewCmdRollout(f *Factory, streams IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:                   "rollout SUBCOMMAND",
		DisableFlagsInUseLine: true,
		Short:                 "Manage the rollout of a resource",
		Long: `Manage the rollout of one or many resources.

 Valid resource types include:

  *  deployments
  *  daemonsets
  *  statefulsets`,
		Example: `  # Rollback to the previous deployment
  minikctl rollout undo deployment/web

  # Check the rollout status of a deployment
  minikctl -n demo rollout status deployment/web --timeout=120s`,
		RunE: subcommandRun(streams.Out),
	}
	cmd.AddCommand(newCmdRolloutStatus(f, streams), newCmdRolloutHistory(f, streams), newCmdRolloutUndo(f, streams),
		newCmdRolloutRestart(f, streams), newCmdRolloutPause(f, streams), newCmdRolloutResume(f, streams))
	return cmd
}

// RolloutStatusOptions are the inputs of rollout status.
type RolloutStatusOptions struct {
	rolloutSelection
	Watch    bool
	Revision int64
	Timeout  time.Duration
	Streams  IOStreams
}

func newCmdRolloutStatus(f *Factory, streams IOStreams) *cobra.Command {
	o := &RolloutStatusOptions{Watch: true, Streams: streams}
	cmd := &cobra.Command{
		Use:                   "status (TYPE NAME | TYPE/NAME) [flags]",
		DisableFlagsInUseLine: true,
		Short:                 "Show the status of the rollout",
		Long: `Show the status of the rollout.

 By default 'rollout status' will watch the status of the latest rollout until it's done. If you don't want to wait for the rollout to finish then you can use --watch=false. Note that if a new rollout starts in-between, then 'rollout status' will continue watching the latest revision. If you want to pin to a specific revision and abort if it is rolled over by another revision, use --revision=N where N is the revision you need to watch for.`,
		Example: `  # Watch the rollout status of a deployment
  minikctl -n demo rollout status deployment/web --timeout=120s`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(f, cmd, args); err != nil {
				return err
			}
			if o.Revision < 0 {
				return fmt.Errorf("revision must be a positive integer: %v", o.Revision)
			}
			return runRolloutStatus(cmd.Context(), f, o)
		},
	}
	o.addFlags(cmd, "identifying the resource to get from a server.")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", o.Watch, "Watch the status of the rollout until it's done.")
	cmd.Flags().Int64Var(&o.Revision, "revision", o.Revision, "Pin to a specific revision for showing its status. Defaults to 0 (last revision).")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", o.Timeout, "The length of time to wait before ending watch, zero means never. Any other values should contain a corresponding time unit (e.g. 1s, 2m, 3h).")
	return cmd
}

// runRolloutStatus watches each selected object (a list then a watch from
// its resource version, never polling) and prints its rollout status at
// every change until the rollout is done, fails, or --timeout passes.
func runRolloutStatus(ctx context.Context, f *Factory, o *RolloutStatusOptions) error {
	infos, _, errs := f.selectObjects(ctx, &o.Selection)
	if len(errs) > 0 {
		return errs[0]
	}
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	for _, info := range infos {
		kind, ok := rolloutKinds[info.Mapping.GroupVersionKind.GroupKind()]
		if !ok || kind.status == nil {
			return fmt.Errorf("no status viewer has been implemented for %v", info.Mapping.GroupVersionKind.GroupKind())
		}
		if err := o.watchOne(ctx, dc, info, kind.status); err != nil {
			return err
		}
	}
	if len(infos) == 0 {
		fmt.Fprintf(o.Streams.ErrOut, "No resources found in %s namespace.\n", o.Selection.Namespace)
	}
	return nil
}

func (o *RolloutStatusOptions) watchOne(ctx context.Context, dc dynamic.Interface, info *Info, statusOf statusViewer) error {
	selector := fields.OneTermEqualSelector("metadata.name", info.Name).String()
	client := dc.Resource(info.Mapping.Resource).Namespace(info.Namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = selector
			return client.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			return client.Watch(ctx, opts)
		},
	}
	wctx, cancel := watchtools.ContextWithOptionalTimeout(ctx, o.Timeout)
	defer cancel()
	_, err := watchtools.UntilWithSync(wctx, lw, &unstructured.Unstructured{}, nil, func(e watch.Event) (bool, error) {
		switch e.Type {
		case watch.Added, watch.Modified:
			status, done, err := statusOf(e.Object.(*unstructured.Unstructured), o.Revision)
			if err != nil {
				return false, err
			}
			fmt.Fprint(o.Streams.Out, status)
			return done || !o.Watch, nil
		case watch.Deleted:
			return true, errors.New("object has been deleted")
		default:
			return true, fmt.Errorf("internal error: unexpected event %#v", e)
		}
	})
	return err
}

// deploymentRolloutStatus is kubectl's status line of a deployment and
// whether its rollout is done.
func deploymentRolloutStatus(u *unstructured.Unstructured, revision int64) (string, bool, error) {
	d := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
		return "", false, fmt.Errorf("failed to convert %T to %T: %v", u, d, err)
	}
	if revision > 0 {
		current, err := revisionOf(d)
		if err != nil {
			return "", false, fmt.Errorf("cannot get the revision of deployment %q: %v", d.Name, err)
		}
		if revision != current {
			return "", false, fmt.Errorf("desired revision (%d) is different from the running revision (%d)", revision, current)
		}
	}
	if d.Generation > d.Status.ObservedGeneration {
		return "Waiting for deployment spec update to be observed...\n", false, nil
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == timedOutReason {
			return "", false, fmt.Errorf("deployment %q exceeded its progress deadline", d.Name)
		}
	}
	if d.Spec.Replicas != nil && d.Status.UpdatedReplicas < *d.Spec.Replicas {
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d out of %d new replicas have been updated...\n", d.Name, d.Status.UpdatedReplicas, *d.Spec.Replicas), false, nil
	}
	if d.Status.Replicas > d.Status.UpdatedReplicas {
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d old replicas are pending termination...\n", d.Name, d.Status.Replicas-d.Status.UpdatedReplicas), false, nil
	}
	if d.Status.AvailableReplicas < d.Status.UpdatedReplicas {
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d of %d updated replicas are available...\n", d.Name, d.Status.AvailableReplicas, d.Status.UpdatedReplicas), false, nil
	}
	return fmt.Sprintf("deployment %q successfully rolled out\n", d.Name), true, nil
}

// revisionOf reads the revision annotation of an object (0 when unset).
func revisionOf(obj metav1.Object) (int64, error) {
	v, ok := obj.GetAnnotations()[revisionAnnotation]
	if !ok {
		return 0, nil
	}
	return strconv.ParseInt(v, 10, 64)
}

// RolloutHistoryOptions are the inputs of rollout history.
type RolloutHistoryOptions struct {
	rolloutSelection
	Revision   int64
	PrintFlags PrintFlags
	Streams    IOStreams
}

func newCmdRolloutHistory(f *Factory, streams IOStreams) *cobra.Command {
	o := &RolloutHistoryOptions{Streams: streams}
	cmd := &cobra.Command{
		Use:                   "history (TYPE NAME | TYPE/NAME) [flags]",
		DisableFlagsInUseLine: true,
		Short:                 "View rollout history",
		Long:                  "View previous rollout revisions and configurations.",
		Example: `  # View the rollout history of a deployment
  minikctl rollout history deployment/web

  # View the details of deployment revision 3
  minikctl rollout history deployment/web --revision=3`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(f, cmd, args); err != nil {
				return err
			}
			if o.Revision < 0 {
				return fmt.Errorf("revision must be a positive integer: %v", o.Revision)
			}
			if _, err := o.PrintFlags.ToPrinter(); err != nil {
				return err
			}
			return runRolloutHistory(cmd.Context(), f, o)
		},
	}
	o.addFlags(cmd, "identifying the resource to get from a server.")
	cmd.Flags().Int64Var(&o.Revision, "revision", o.Revision, "See the details, including podTemplate of the revision specified")
	o.PrintFlags.AddFlags(cmd)
	return cmd
}

// deploymentHistory maps the revisions of a deployment to its replica sets.
func deploymentHistory(ctx context.Context, cs kubernetes.Interface, namespace, name string) (map[int64]revisionEntry, error) {
	h, err := deploymentReplicaSets(ctx, cs, namespace, name)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]revisionEntry, len(h))
	for v, rs := range h {
		out[v] = revisionEntry{Object: rs, Template: templateWithChangeCause(rs), ChangeCause: rs.Annotations[changeCauseAnnotation]}
	}
	return out, nil
}

// deploymentReplicaSets maps the revisions of a deployment to its replica sets.
func deploymentReplicaSets(ctx context.Context, cs kubernetes.Interface, namespace, name string) (map[int64]*appsv1.ReplicaSet, error) {
	dep, err := cs.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to retrieve deployment %s: %v", name, err)
	}
	owned, err := listOwnedReplicaSets(ctx, cs.AppsV1().ReplicaSets(namespace), dep, 0)
	if err != nil {
		return nil, fmt.Errorf("failed to retrieve replica sets from deployment %s: %v", name, err)
	}
	out := map[int64]*appsv1.ReplicaSet{}
	for _, rs := range owned {
		v, err := revisionOf(rs)
		if err != nil {
			continue
		}
		rs.Kind, rs.APIVersion = "ReplicaSet", "apps/v1"
		out[v] = rs
	}
	return out, nil
}

func sortedRevisions(h map[int64]revisionEntry) []int64 {
	revs := make([]int64, 0, len(h))
	for r := range h {
		revs = append(revs, r)
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i] < revs[j] })
	return revs
}

func runRolloutHistory(ctx context.Context, f *Factory, o *RolloutHistoryOptions) error {
	infos, _, errs := f.selectObjects(ctx, &o.Selection)
	if len(errs) > 0 {
		return errs[0]
	}
	cs, err := f.KubernetesClientSet()
	if err != nil {
		return err
	}
	for _, info := range infos {
		gk := info.Mapping.GroupVersionKind.GroupKind()
		kind, ok := rolloutKinds[gk]
		if !ok || kind.history == nil {
			return fmt.Errorf("no history viewer has been implemented for %q", gk.String())
		}
		history, err := kind.history(ctx, cs, info.Namespace, info.Name)
		if err != nil {
			return err
		}
		if o.PrintFlags.OutputFormat != "" {
			printer, err := o.PrintFlags.ToPrinter()
			if err != nil {
				return err
			}
			if o.Revision > 0 {
				entry, ok := history[o.Revision]
				if !ok {
					return errors.New("unable to find the specified revision")
				}
				if err := printer.PrintObj(entry.Object, o.Streams.Out); err != nil {
					return err
				}
				continue
			}
			for _, r := range sortedRevisions(history) {
				printer.PrintObj(history[r].Object, o.Streams.Out)
			}
			continue
		}
		view, err := viewHistory(history, o.Revision)
		if err != nil {
			return err
		}
		withRevision := ""
		if o.Revision > 0 {
			withRevision = fmt.Sprintf("with revision #%d", o.Revision)
		}
		p := &NamePrinter{Operation: fmt.Sprintf("%s\n%s", withRevision, view)}
		if err := p.PrintObj(info.Object, o.Streams.Out); err != nil {
			return err
		}
	}
	return nil
}

// viewHistory renders the REVISION/CHANGE-CAUSE table, or one revision's
// pod template.
func viewHistory(history map[int64]revisionEntry, revision int64) (string, error) {
	if len(history) == 0 {
		return "No rollout history found.", nil
	}
	if revision > 0 {
		entry, ok := history[revision]
		if !ok {
			return "", errors.New("unable to find the specified revision")
		}
		return printTemplate(entry.Template), nil
	}
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "REVISION\tCHANGE-CAUSE\n")
		for _, r := range sortedRevisions(history) {
			cause := history[r].ChangeCause
			if cause == "" {
				cause = "<none>"
			}
			w.Write(level0, "%d\t%s\n", r, cause)
		}
		return nil
	})
}

// templateWithChangeCause is a replica set's template carrying the
// replica set's change cause, as kubectl shows revisions.
func templateWithChangeCause(rs *appsv1.ReplicaSet) *corev1.PodTemplateSpec {
	t := rs.Spec.Template.DeepCopy()
	if cause := rs.Annotations[changeCauseAnnotation]; cause != "" {
		if t.Annotations == nil {
			t.Annotations = map[string]string{}
		}
		t.Annotations[changeCauseAnnotation] = cause
	}
	return t
}

// printTemplate renders a pod template as kubectl's history and dry-run
// undo do: the describe layout, with tabs left as they are.
func printTemplate(t *corev1.PodTemplateSpec) string {
	buf := &bytes.Buffer{}
	describePodTemplate(t, &prefixWriter{out: buf})
	return buf.String()
}

// RolloutUndoOptions are the inputs of rollout undo.
type RolloutUndoOptions struct {
	rolloutSelection
	ToRevision int64
	DryRunFlag string
	PrintFlags PrintFlags
	Streams    IOStreams
}

func newCmdRolloutUndo(f *Factory, streams IOStreams) *cobra.Command {
	o := &RolloutUndoOptions{Streams: streams}
	cmd := &cobra.Command{
		Use:                   "undo (TYPE NAME | TYPE/NAME) [flags]",
		DisableFlagsInUseLine: true,
		Short:                 "Undo a previous rollout",
		Long:                  "Roll back to a previous rollout.",
		Example: `  # Roll back to the previous deployment
  minikctl rollout undo deployment/web

  # Roll back to revision 3
  minikctl rollout undo deployment/web --to-revision=3`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(f, cmd, args); err != nil {
				return err
			}
			dryRun, err := parseDryRun(o.DryRunFlag)
			if err != nil {
				return err
			}
			o.PrintFlags.DryRun = dryRun
			return runRolloutUndo(cmd.Context(), f, o, dryRun)
		},
	}
	o.addFlags(cmd, "identifying the resource to get from a server.")
	cmd.Flags().Int64Var(&o.ToRevision, "to-revision", o.ToRevision, "The revision to rollback to. Default to 0 (last revision).")
	addDryRunFlag(cmd, &o.DryRunFlag)
	o.PrintFlags.AddFlags(cmd)
	return cmd
}

func runRolloutUndo(ctx context.Context, f *Factory, o *RolloutUndoOptions, dryRun DryRunStrategy) error {
	infos, _, errs := f.selectObjects(ctx, &o.Selection)
	if len(errs) > 0 {
		return errs[0]
	}
	cs, err := f.KubernetesClientSet()
	if err != nil {
		return err
	}
	for _, info := range infos {
		acc, err := meta.Accessor(info.Object)
		if err != nil {
			return err
		}
		if _, ok := acc.GetAnnotations()[corev1.LastAppliedConfigAnnotation]; ok {
			fmt.Fprintf(o.Streams.ErrOut, "Warning: resource %[1]s was previously managed with '%[3]s apply'. Rolling back will not update the %[2]s annotation, which may cause unexpected behavior on future '%[3]s apply' operations. Consider using '%[3]s apply' with your previous configuration file instead.\n", info.ObjectName(), corev1.LastAppliedConfigAnnotation, o.Selection.BaseName)
		}
		gk := info.Mapping.GroupVersionKind.GroupKind()
		kind, ok := rolloutKinds[gk]
		if !ok || kind.rollback == nil {
			return fmt.Errorf("no rollbacker has been implemented for %q", gk)
		}
		result, err := kind.rollback(ctx, cs, info.Namespace, info.Name, o.ToRevision, dryRun)
		if err != nil {
			return err
		}
		pf := o.PrintFlags
		pf.Operation = result
		pf.DryRun = DryRunNone
		printer, err := pf.ToPrinter()
		if err != nil {
			return err
		}
		if err := printer.PrintObj(info.Object, o.Streams.Out); err != nil {
			return err
		}
	}
	return nil
}

// rollbackDeployment restores the pod template of a revision (the
// previous one by default) with a client-side JSON patch of the template
// and annotations, as kubectl does; it returns the outcome to print.
func rollbackDeployment(ctx context.Context, cs kubernetes.Interface, namespace, name string, toRevision int64, dryRun DryRunStrategy) (string, error) {
	if toRevision < 0 {
		return "", fmt.Errorf("unable to find specified revision %v in history", toRevision)
	}
	dep, err := cs.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("failed to retrieve Deployment %s: %v", name, err)
	}
	owned, err := listOwnedReplicaSets(ctx, cs.AppsV1().ReplicaSets(namespace), dep, 0)
	if err != nil {
		return "", fmt.Errorf("failed to retrieve replica sets from deployment %s: %v", dep.Name, err)
	}
	var target *appsv1.ReplicaSet
	latest, previous := int64(-1), int64(-1)
	var latestRS, previousRS *appsv1.ReplicaSet
	for _, rs := range owned {
		v, err := revisionOf(rs)
		if err != nil {
			continue
		}
		if toRevision == 0 {
			if latest < v {
				previous, previousRS = latest, latestRS
				latest, latestRS = v, rs
			} else if previous < v {
				previous, previousRS = v, rs
			}
		} else if toRevision == v {
			target = rs
			break
		}
	}
	if toRevision > 0 && target == nil {
		return "", fmt.Errorf("unable to find specified revision %v in history", toRevision)
	}
	if toRevision == 0 {
		if previousRS == nil {
			return "", fmt.Errorf("no rollout history found for deployment %q", dep.Name)
		}
		target = previousRS
		toRevision = previous
	}
	if dryRun == DryRunClient {
		return printTemplate(&target.Spec.Template), nil
	}
	if dep.Spec.Paused {
		return "", errors.New("you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume' and try again")
	}
	if equalIgnoreHash(&target.Spec.Template, &dep.Spec.Template) {
		return fmt.Sprintf("skipped rollback (current template already matches revision %d)", toRevision), nil
	}
	template := target.Spec.Template.DeepCopy()
	delete(template.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	skip := map[string]bool{
		corev1.LastAppliedConfigAnnotation:          true,
		revisionAnnotation:                          true,
		"deployment.kubernetes.io/revision-history": true,
		"deployment.kubernetes.io/desired-replicas": true,
		"deployment.kubernetes.io/max-replicas":     true,
		appsv1.DeprecatedRollbackTo:                 true,
	}
	annotations := map[string]string{}
	for k := range skip {
		if v, ok := dep.Annotations[k]; ok {
			annotations[k] = v
		}
	}
	for k, v := range target.Annotations {
		if !skip[k] {
			annotations[k] = v
		}
	}
	patch, err := json.Marshal([]any{
		map[string]any{"op": "replace", "path": "/spec/template", "value": template},
		map[string]any{"op": "replace", "path": "/metadata/annotations", "value": annotations},
	})
	if err != nil {
		return "", fmt.Errorf("failed restoring revision %d: %v", toRevision, err)
	}
	opts := metav1.PatchOptions{}
	if dryRun == DryRunServer {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if _, err := cs.AppsV1().Deployments(namespace).Patch(ctx, name, types.JSONPatchType, patch, opts); err != nil {
		return "", fmt.Errorf("failed restoring revision %d: %v", toRevision, err)
	}
	return "rolled back", nil
}

// objectPatcher is what restart, pause and resume do to an object: change
// the typed object in place, or fail with kubectl's message.
type objectPatcher func(obj runtime.Object) error

// RolloutPatchOptions are the inputs of restart, pause and resume.
type RolloutPatchOptions struct {
	rolloutSelection
	FieldManager string
	PrintFlags   PrintFlags
	Streams      IOStreams
}

func newCmdRolloutRestart(f *Factory, streams IOStreams) *cobra.Command {
	return newRolloutPatchCommand(f, streams, "restart RESOURCE", "Restart a resource", `Restart a resource.

        Resource rollout will be restarted.`, `  # Restart the demo's deployment
  minikctl -n demo rollout restart deployment/web`, "restarted", "", "kubectl-rollout", func(obj runtime.Object) error {
		var template *corev1.PodTemplateSpec
		switch o := obj.(type) {
		case *appsv1.Deployment:
			if o.Spec.Paused {
				return errors.New("can't restart paused deployment (run rollout resume first)")
			}
			template = &o.Spec.Template
		case *appsv1.StatefulSet:
			if o.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType {
				return errors.New("can not restart StatefulSet with OnDelete strategy")
			}
			template = &o.Spec.Template
		case *appsv1.DaemonSet:
			if o.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType {
				return errors.New("can not restart DaemonSet with OnDelete strategy")
			}
			template = &o.Spec.Template
		default:
			return errors.New("restarting is not supported")
		}
		if template.Annotations == nil {
			template.Annotations = map[string]string{}
		}
		template.Annotations[restartedAtAnnotation] = time.Now().Format(time.RFC3339)
		return nil
	})
}

func newCmdRolloutPause(f *Factory, streams IOStreams) *cobra.Command {
	return newRolloutPatchCommand(f, streams, "pause RESOURCE", "Mark the provided resource as paused", `Mark the provided resource as paused.

 Paused resources will not be reconciled by a controller. Use "minikctl rollout resume" to resume a paused resource. Currently only deployments support being paused.`, `  # Mark the web deployment as paused
  minikctl rollout pause deployment/web`, "paused", "already paused", "kubectl-rollout", func(obj runtime.Object) error {
		d, ok := obj.(*appsv1.Deployment)
		if !ok {
			return errors.New("pausing is not supported")
		}
		if d.Spec.Paused {
			return errors.New("is already paused")
		}
		d.Spec.Paused = true
		return nil
	})
}

func newCmdRolloutResume(f *Factory, streams IOStreams) *cobra.Command {
	return newRolloutPatchCommand(f, streams, "resume RESOURCE", "Resume a paused resource", `Resume a paused resource.

 Paused resources will not be reconciled by a controller. By resuming a resource, we allow it to be reconciled again. Currently only deployments support being resumed.`, `  # Resume an already paused deployment
  minikctl rollout resume deployment/web`, "resumed", "already resumed", "kubectl-rollout", func(obj runtime.Object) error {
		d, ok := obj.(*appsv1.Deployment)
		if !ok {
			return errors.New("resuming is not supported")
		}
		if !d.Spec.Paused {
			return errors.New("is not paused")
		}
		d.Spec.Paused = false
		return nil
	})
}

// newRolloutPatchCommand builds restart, pause or resume: each computes a
// strategic merge patch client side and sends it.
func newRolloutPatchCommand(f *Factory, streams IOStreams, use, short, long, example, done, noop, manager string, fn objectPatcher) *cobra.Command {
	o := &RolloutPatchOptions{FieldManager: manager, Streams: streams}
	cmd := &cobra.Command{
		Use:                   use,
		DisableFlagsInUseLine: true,
		Short:                 short,
		Long:                  long,
		Example:               example,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(f, cmd, args); err != nil {
				return err
			}
			if _, err := o.PrintFlags.ToPrinter(); err != nil {
				return err
			}
			return runRolloutPatch(cmd.Context(), f, o, done, noop, fn)
		},
	}
	o.addFlags(cmd, "identifying the resource to get from a server.")
	o.PrintFlags.AddFlags(cmd)
	cmd.Flags().StringVar(&o.FieldManager, "field-manager", o.FieldManager, "Name of the manager used to track field ownership.")
	return cmd
}

func runRolloutPatch(ctx context.Context, f *Factory, o *RolloutPatchOptions, done, noop string, fn objectPatcher) error {
	infos, _, errs := f.selectObjects(ctx, &o.Selection)
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	if len(infos) == 0 && len(errs) == 0 {
		fmt.Fprintf(o.Streams.ErrOut, "No resources found in %s namespace.\n", o.Selection.Namespace)
		return nil
	}
	for _, info := range infos {
		resourceString := info.Mapping.Resource.Resource
		if g := info.Mapping.Resource.Group; g != "" {
			resourceString += "." + g
		}
		patch, err := calculatePatch(info.Object, fn)
		if err != nil {
			if noop != "" && (err.Error() == "is already paused" || err.Error() == "is not paused") {
				if perr := o.print(info.Object, noop); perr != nil {
					errs = append(errs, perr)
				}
				continue
			}
			errs = append(errs, fmt.Errorf("error: %s %q %v", resourceString, info.Name, err))
			continue
		}
		if len(patch) == 0 || string(patch) == "{}" {
			if done == "restarted" {
				errs = append(errs, fmt.Errorf("failed to create patch for %v: if restart has already been triggered within the past second, please wait before attempting to trigger another", info.Name))
				continue
			}
			if perr := o.print(info.Object, noop); perr != nil {
				errs = append(errs, perr)
			}
			continue
		}
		obj, err := dc.Resource(info.Mapping.Resource).Namespace(info.Namespace).Patch(ctx, info.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: o.FieldManager})
		if err != nil {
			errs = append(errs, fmt.Errorf("failed to patch: %v", err))
			continue
		}
		if err := o.print(obj, done); err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.NewAggregate(errs)
}

func (o *RolloutPatchOptions) print(obj runtime.Object, operation string) error {
	pf := o.PrintFlags
	pf.Operation = operation
	printer, err := pf.ToPrinter()
	if err != nil {
		return err
	}
	return printer.PrintObj(obj, o.Streams.Out)
}

// calculatePatch applies fn to a typed copy of obj and returns the two-way
// strategic merge patch from obj to the result.
func calculatePatch(obj runtime.Object, fn objectPatcher) ([]byte, error) {
	typed, err := toTyped(obj.DeepCopyObject())
	if err != nil {
		return nil, err
	}
	original, err := json.Marshal(typed)
	if err != nil {
		return nil, err
	}
	if err := fn(typed); err != nil {
		return nil, err
	}
	modified, err := json.Marshal(typed)
	if err != nil {
		return nil, err
	}
	if _, ok := typed.(runtime.Unstructured); ok {
		return nil, errors.New("cannot patch an object of an unknown kind")
	}
	return strategicpatch.CreateTwoWayMergePatch(original, modified, typed)
}
