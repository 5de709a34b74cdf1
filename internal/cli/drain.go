package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// DrainOptions are the inputs of cordon, uncordon and drain, as kubectl's
// DrainCmdOptions and drain.Helper.
type DrainOptions struct {
	mutation
	// Force deletes pods no controller owns; IgnoreDaemonSets leaves
	// DaemonSet pods alone; DeleteEmptyDirData deletes pods with emptyDir
	// volumes.
	Force, IgnoreDaemonSets, DeleteEmptyDirData bool
	// GracePeriod is each pod's grace period in seconds; negative keeps
	// the pod's own.
	GracePeriod int
	// Timeout bounds the whole drain; zero means no bound.
	Timeout time.Duration
	// PodSelector narrows the pods drained.
	PodSelector string
	// DisableEviction deletes pods instead of evicting them, bypassing
	// their disruption budgets.
	DisableEviction bool
	// SkipWaitForDeleteTimeout skips pods deleted more than that many
	// seconds ago; zero never skips.
	SkipWaitForDeleteTimeout int
	// ChunkSize pages the pod lists.
	ChunkSize int64
	// EvictRetryDelay is the pause after an eviction refused with 429
	// (kubectl's 5s); PollInterval is how often a drained pod is looked
	// for until it is gone (kubectl's 1s). Tests shorten both.
	EvictRetryDelay, PollInterval time.Duration
}

func newDrainOptions(streams IOStreams) *DrainOptions {
	o := &DrainOptions{GracePeriod: -1, ChunkSize: 500, EvictRetryDelay: 5 * time.Second, PollInterval: time.Second}
	o.Streams = streams
	return o
}

// Messages of the pod filters, as kubectl's.
const (
	daemonSetFatal      = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
	daemonSetWarning    = "ignoring DaemonSet-managed Pods"
	localStorageFatal   = "Pods with local storage (use --delete-emptydir-data to override)"
	localStorageWarning = "deleting Pods with local storage"
	unmanagedFatal      = "Pods that declare no controller (use --force to override)"
	unmanagedWarning    = "deleting Pods that declare no controller"
)

// NewCmdCordon returns the cordon command.
func NewCmdCordon(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdCordonOrUncordon(f, streams, true)
}

// NewCmdUncordon returns the uncordon command.
func NewCmdUncordon(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdCordonOrUncordon(f, streams, false)
}

func newCmdCordonOrUncordon(f *Factory, streams IOStreams, desired bool) *cobra.Command {
	o := newDrainOptions(streams)
	verb, short := "cordon", "Mark node as unschedulable"
	if !desired {
		verb, short = "uncordon", "Mark node as schedulable"
	}
	cmd := &cobra.Command{
		Use:                   verb + " NODE",
		DisableFlagsInUseLine: true,
		Short:                 short,
		Long:                  short + ".",
		Example:               fmt.Sprintf("  # %s \"minik-node-1\"\n  minikctl %s minik-node-1", short, verb),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(f, cmd, args); err != nil {
				return err
			}
			return runCordonOrUncordon(cmd.Context(), f, o, desired)
		},
	}
	o.addSelectorFlags(cmd)
	return cmd
}

// NewCmdDrain returns the drain command.
func NewCmdDrain(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdDrain(f, newDrainOptions(streams))
}

// newCmdDrain is NewCmdDrain filling o, whose defaults tests may change.
func newCmdDrain(f *Factory, o *DrainOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:                   "drain NODE",
		DisableFlagsInUseLine: true,
		Short:                 "Drain node in preparation for maintenance",
		Long: `Drain node in preparation for maintenance.

 The given node will be marked unschedulable to prevent new pods from arriving. 'drain' evicts the pods if the API server supports eviction. Otherwise, it will use normal DELETE to delete the pods. The 'drain' evicts or deletes all pods except mirror pods (which cannot be deleted through the API server).  If there are daemon set-managed pods, drain will not proceed without --ignore-daemonsets, and regardless it will not delete any daemon set-managed pods, because those pods would be immediately replaced by the daemon set controller, which ignores unschedulable markings.  If there are any pods that are neither mirror pods nor managed by a replication controller, replica set, daemon set, stateful set, or job, then drain will not delete any pods unless you use --force.  --force will also allow deletion to proceed if the managing resource of one or more pods is missing.

 'drain' waits for graceful termination. You should not operate on the machine until the command completes.

 When you are ready to put the node back into service, use minikctl uncordon, which will make the node schedulable again.`,
		Example: `  # Drain node "minik-node-1", even if there are pods not managed by a controller on it
  minikctl drain minik-node-1 --force

  # As above, but abort if there are pods not managed by a controller, and use a grace period of 15 minutes
  minikctl drain minik-node-1 --grace-period=900`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(f, cmd, args); err != nil {
				return err
			}
			return runDrain(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.Force, "force", o.Force, "Continue even if there are pods that do not declare a controller.")
	fl.BoolVar(&o.IgnoreDaemonSets, "ignore-daemonsets", o.IgnoreDaemonSets, "Ignore DaemonSet-managed pods.")
	fl.BoolVar(&o.DeleteEmptyDirData, "delete-emptydir-data", o.DeleteEmptyDirData, "Continue even if there are pods using emptyDir (local data that will be deleted when the node is drained).")
	fl.IntVar(&o.GracePeriod, "grace-period", o.GracePeriod, "Period of time in seconds given to each pod to terminate gracefully. If negative, the default value specified in the pod will be used.")
	fl.DurationVar(&o.Timeout, "timeout", o.Timeout, "The length of time to wait before giving up, zero means infinite")
	fl.StringVar(&o.PodSelector, "pod-selector", o.PodSelector, "Label selector to filter pods on the node")
	fl.BoolVar(&o.DisableEviction, "disable-eviction", o.DisableEviction, "Force drain to use delete, even if eviction is supported. This will bypass checking PodDisruptionBudgets, use with caution.")
	fl.IntVar(&o.SkipWaitForDeleteTimeout, "skip-wait-for-delete-timeout", o.SkipWaitForDeleteTimeout, "If pod DeletionTimestamp older than N seconds, skip waiting for the pod.  Seconds must be greater than 0 to skip.")
	fl.Int64Var(&o.ChunkSize, "chunk-size", o.ChunkSize, "Return large lists in chunks rather than all at once. Pass 0 to disable. This flag is beta and may change in the future.")
	o.addSelectorFlags(cmd)
	return cmd
}

func (o *DrainOptions) addSelectorFlags(cmd *cobra.Command) {
	addDryRunFlag(cmd, &o.DryRunFlag)
	cmd.Flags().StringVarP(&o.Selection.LabelSelector, "selector", "l", "", "Selector (label query) to filter on")
}

// complete checks the arguments as kubectl does and selects the nodes:
// by name, or by label.
func (o *DrainOptions) complete(f *Factory, cmd *cobra.Command, args []string) error {
	if len(args) == 0 && !cmd.Flags().Changed("selector") {
		return usageErrorf(cmd, "USAGE: %s [flags]", cmd.Use)
	}
	if len(args) > 0 && o.Selection.LabelSelector != "" {
		return usageErrorf(cmd, "error: cannot specify both a node name and a --selector option")
	}
	if o.PodSelector != "" {
		if _, err := labels.Parse(o.PodSelector); err != nil {
			return errors.New("--pod-selector=<pod_selector> must be a valid label selector")
		}
	}
	if err := o.mutation.complete(f, cmd, append([]string{"nodes"}, args...)); err != nil {
		return err
	}
	o.Selection.AllowEmptySelector = true
	return nil
}

// selectNodes reads the nodes named or selected, typed.
func (o *DrainOptions) selectNodes(ctx context.Context, f *Factory) ([]*Info, []*corev1.Node, error) {
	infos, _, errs := f.selectObjects(ctx, &o.Selection)
	if len(errs) > 0 {
		return nil, nil, utilerrors.Flatten(utilerrors.NewAggregate(errs))
	}
	nodes := make([]*corev1.Node, 0, len(infos))
	for _, info := range infos {
		typed, err := toTyped(info.Object)
		if err != nil {
			return nil, nil, err
		}
		node, ok := typed.(*corev1.Node)
		if !ok {
			return nil, nil, fmt.Errorf("error: expected resource of type node, got %q", info.Mapping.Resource)
		}
		nodes = append(nodes, node)
	}
	return infos, nodes, nil
}

func runCordonOrUncordon(ctx context.Context, f *Factory, o *DrainOptions, desired bool) error {
	infos, nodes, err := o.selectNodes(ctx, f)
	if err != nil {
		return err
	}
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	o.cordonOrUncordon(ctx, dc, infos, nodes, desired)
	return nil
}

// cordonOrUncordon sets spec.unschedulable on each node with a patch,
// reporting each node's outcome; a node it cannot change is reported on
// stderr and skipped, as kubectl does.
func (o *DrainOptions) cordonOrUncordon(ctx context.Context, dc dynamic.Interface, infos []*Info, nodes []*corev1.Node, desired bool) {
	verb, already, changed := "cordon", "already cordoned", "cordoned"
	if !desired {
		verb, already, changed = "uncordon", "already uncordoned", "uncordoned"
	}
	for i, node := range nodes {
		if node.Spec.Unschedulable == desired {
			if err := o.print(infos[i].Object, already); err != nil {
				fmt.Fprintf(o.Streams.ErrOut, "error: %v\n", err)
			}
			continue
		}
		if o.DryRun != DryRunClient {
			if err := o.patchUnschedulable(ctx, dc, infos[i], node, desired); err != nil {
				fmt.Fprintf(o.Streams.ErrOut, "error: unable to %s node %q: %v\n", verb, node.Name, err)
				continue
			}
		}
		if err := o.print(infos[i].Object, changed); err != nil {
			fmt.Fprintf(o.Streams.ErrOut, "%v\n", err)
		}
	}
}

func (o *DrainOptions) patchUnschedulable(ctx context.Context, dc dynamic.Interface, info *Info, node *corev1.Node, desired bool) error {
	before, err := json.Marshal(node)
	if err != nil {
		return err
	}
	next := node.DeepCopy()
	next.Spec.Unschedulable = desired
	after, err := json.Marshal(next)
	if err != nil {
		return err
	}
	patch, patchType, err := twoWayPatch(info.Mapping.GroupVersionKind, before, after)
	if err != nil {
		return err
	}
	_, err = resourceClient(dc, info).Patch(ctx, info.Name, patchType, patch, metav1.PatchOptions{DryRun: o.dryRunOption()})
	return err
}

// runDrain cordons the nodes, then evicts (or deletes) their pods, node
// after node; a node that cannot be drained is reported and the others
// are still drained.
func runDrain(ctx context.Context, f *Factory, o *DrainOptions) error {
	infos, nodes, err := o.selectNodes(ctx, f)
	if err != nil {
		return err
	}
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	cs, err := f.KubernetesClientSet()
	if err != nil {
		return err
	}
	o.cordonOrUncordon(ctx, dc, infos, nodes, true)
	var fatal []error
	var pending []string
	for i, node := range nodes {
		if err := o.drainNode(ctx, cs, node.Name); err != nil {
			fmt.Fprintf(o.Streams.ErrOut, "error: unable to drain node %q due to error: %s, continuing command...\n", node.Name, err)
			fatal = append(fatal, err)
			pending = append(pending, node.Name)
			continue
		}
		if err := o.print(infos[i].Object, "drained"); err != nil {
			return err
		}
	}
	if len(pending) > 0 {
		fmt.Fprintf(o.Streams.ErrOut, "There are pending nodes to be drained:\n")
		for _, name := range pending {
			fmt.Fprintf(o.Streams.ErrOut, " %s\n", name)
		}
	}
	return utilerrors.Flatten(utilerrors.NewAggregate(fatal))
}

// drainNode evicts or deletes the node's pods that the filters let go.
func (o *DrainOptions) drainNode(ctx context.Context, cs kubernetes.Interface, node string) error {
	list, errs := o.podsForDeletion(ctx, cs, node)
	if errs != nil {
		return utilerrors.NewAggregate(errs)
	}
	if w := list.warnings(); w != "" {
		fmt.Fprintf(o.Streams.ErrOut, "Warning: %s\n", w)
	}
	pods := list.pods()
	if o.DryRun == DryRunClient {
		for _, pod := range pods {
			fmt.Fprintf(o.Streams.Out, "evicting pod %s/%s (dry run)\n", pod.Namespace, pod.Name)
		}
		return nil
	}
	if err := o.deleteOrEvict(ctx, cs, pods); err != nil {
		if pendingList, newErrs := o.podsForDeletion(ctx, cs, node); pendingList != nil {
			if left := pendingList.pods(); len(left) > 0 {
				fmt.Fprintf(o.Streams.ErrOut, "There are pending pods in node %q when an error occurred: %v\n", node, err)
				for _, p := range left {
					fmt.Fprintf(o.Streams.ErrOut, "pod/%s\n", p.Name)
				}
			}
			if newErrs != nil {
				fmt.Fprintf(o.Streams.ErrOut, "Following errors occurred while getting the list of pods to delete:\n%s", utilerrors.NewAggregate(newErrs))
			}
		}
		return err
	}
	return nil
}

// podDelete is a pod and the filters' verdict on it.
type podDelete struct {
	pod            corev1.Pod
	delete         bool
	warning, fatal string
}

type podDeleteList []podDelete

func (l podDeleteList) pods() []corev1.Pod {
	var out []corev1.Pod
	for _, p := range l {
		if p.delete {
			out = append(out, p.pod)
		}
	}
	return out
}

// group lists "namespace/name" of the pods by message, messages in the
// order first seen.
func group(l podDeleteList, msg func(podDelete) string) (order []string, byMsg map[string][]string) {
	byMsg = map[string][]string{}
	for _, p := range l {
		m := msg(p)
		if m == "" {
			continue
		}
		if _, ok := byMsg[m]; !ok {
			order = append(order, m)
		}
		byMsg[m] = append(byMsg[m], p.pod.Namespace+"/"+p.pod.Name)
	}
	return order, byMsg
}

func (l podDeleteList) warnings() string {
	order, byMsg := group(l, func(p podDelete) string { return p.warning })
	msgs := make([]string, 0, len(order))
	for _, m := range order {
		msgs = append(msgs, fmt.Sprintf("%s: %s", m, strings.Join(byMsg[m], ", ")))
	}
	return strings.Join(msgs, "; ")
}

func (l podDeleteList) errors() []error {
	order, byMsg := group(l, func(p podDelete) string { return p.fatal })
	var errs []error
	for _, m := range order {
		errs = append(errs, fmt.Errorf("cannot delete %s: %s", m, strings.Join(byMsg[m], ", ")))
	}
	return errs
}

// podsForDeletion lists the node's pods (narrowed by --pod-selector) and
// runs kubectl's filters on each: deleted long ago, DaemonSet, mirror,
// emptyDir, no controller — the first that keeps a pod decides.
func (o *DrainOptions) podsForDeletion(ctx context.Context, cs kubernetes.Interface, node string) (podDeleteList, []error) {
	sel, err := labels.Parse(o.PodSelector)
	if err != nil {
		return nil, []error{err}
	}
	opts := metav1.ListOptions{
		LabelSelector: sel.String(),
		FieldSelector: fields.SelectorFromSet(fields.Set{"spec.nodeName": node}).String(),
		Limit:         o.ChunkSize,
	}
	var pods []corev1.Pod
	for {
		page, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, opts)
		if err != nil {
			return nil, []error{err}
		}
		pods = append(pods, page.Items...)
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
	}
	filters := []func(context.Context, kubernetes.Interface, *corev1.Pod) podDelete{
		o.skipDeletedFilter, o.daemonSetFilter, o.mirrorPodFilter, o.localStorageFilter, o.unreplicatedFilter,
	}
	list := make(podDeleteList, 0, len(pods))
	for _, pod := range pods {
		pod.Kind, pod.APIVersion = "Pod", "v1"
		var verdict podDelete
		for _, filter := range filters {
			verdict = filter(ctx, cs, &pod)
			if !verdict.delete {
				break
			}
		}
		verdict.pod = pod
		list = append(list, verdict)
	}
	if errs := list.errors(); len(errs) > 0 {
		return list, errs
	}
	return list, nil
}

var deleteOK = podDelete{delete: true}

func finished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func (o *DrainOptions) shouldSkip(pod *corev1.Pod) bool {
	return o.SkipWaitForDeleteTimeout > 0 && pod.DeletionTimestamp != nil &&
		int(time.Since(pod.DeletionTimestamp.Time).Seconds()) > o.SkipWaitForDeleteTimeout
}

func (o *DrainOptions) skipDeletedFilter(_ context.Context, _ kubernetes.Interface, pod *corev1.Pod) podDelete {
	if o.shouldSkip(pod) {
		return podDelete{}
	}
	return deleteOK
}

func (o *DrainOptions) daemonSetFilter(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod) podDelete {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "DaemonSet" || ref.APIVersion != "apps/v1" || finished(pod) {
		return deleteOK
	}
	if _, err := cs.AppsV1().DaemonSets(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) && o.Force {
			return podDelete{delete: true, warning: err.Error()}
		}
		return podDelete{fatal: err.Error()}
	}
	if !o.IgnoreDaemonSets {
		return podDelete{fatal: daemonSetFatal}
	}
	return podDelete{warning: daemonSetWarning}
}

func (o *DrainOptions) mirrorPodFilter(_ context.Context, _ kubernetes.Interface, pod *corev1.Pod) podDelete {
	if _, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return podDelete{}
	}
	return deleteOK
}

func (o *DrainOptions) localStorageFilter(_ context.Context, _ kubernetes.Interface, pod *corev1.Pod) podDelete {
	hasEmptyDir := false
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil {
			hasEmptyDir = true
		}
	}
	switch {
	case !hasEmptyDir || finished(pod):
		return deleteOK
	case !o.DeleteEmptyDirData:
		return podDelete{fatal: localStorageFatal}
	}
	return podDelete{delete: true, warning: localStorageWarning}
}

func (o *DrainOptions) unreplicatedFilter(_ context.Context, _ kubernetes.Interface, pod *corev1.Pod) podDelete {
	switch {
	case finished(pod), metav1.GetControllerOf(pod) != nil:
		return deleteOK
	case o.Force:
		return podDelete{delete: true, warning: unmanagedWarning}
	}
	return podDelete{fatal: unmanagedFatal}
}

// deleteOrEvict evicts the pods when the server serves pods/eviction and
// eviction is not disabled, and deletes them otherwise.
func (o *DrainOptions) deleteOrEvict(ctx context.Context, cs kubernetes.Interface, pods []corev1.Pod) error {
	if len(pods) == 0 {
		return nil
	}
	if !o.DisableEviction {
		supported, err := evictionSupported(cs)
		if err != nil {
			return err
		}
		if supported {
			return o.evictPods(ctx, cs, pods)
		}
	}
	return o.deletePods(ctx, cs, pods)
}

// evictionSupported tells whether discovery lists policy/v1 Eviction as
// the pods/eviction subresource.
func evictionSupported(cs kubernetes.Interface) (bool, error) {
	list, err := cs.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		return false, err
	}
	for _, r := range list.APIResources {
		if r.Name == "pods/eviction" && r.Kind == "Eviction" && r.Group == policyv1.GroupName && r.Version == "v1" {
			return true, nil
		}
	}
	return false, nil
}

func (o *DrainOptions) deleteOptions() metav1.DeleteOptions {
	var opts metav1.DeleteOptions
	if o.GracePeriod >= 0 {
		g := int64(o.GracePeriod)
		opts.GracePeriodSeconds = &g
	}
	opts.DryRun = o.dryRunOption()
	return opts
}

// globalTimeout is --timeout, or forever.
func (o *DrainOptions) globalTimeout() time.Duration {
	if o.Timeout == 0 {
		return time.Duration(math.MaxInt64)
	}
	return o.Timeout
}

// syncWriter serializes the writes of the per-pod goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// evictPods evicts every pod at once, each retrying while its budget
// refuses (429), then waits for each to be gone.
func (o *DrainOptions) evictPods(ctx context.Context, cs kubernetes.Interface, pods []corev1.Pod) error {
	out := &syncWriter{w: o.Streams.Out}
	errOut := &syncWriter{w: o.Streams.ErrOut}
	printer := *o
	printer.Streams.Out = out
	timeout := o.globalTimeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	results := make(chan error, len(pods))
	for _, pod := range pods {
		go func(pod corev1.Pod) {
			results <- printer.evictOne(ctx, cs, pod, out, errOut, timeout)
		}(pod)
	}
	var errs []error
	for range pods {
		if err := <-results; err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.NewAggregate(errs)
}

func (o *DrainOptions) evictOne(ctx context.Context, cs kubernetes.Interface, pod corev1.Pod, out, errOut io.Writer, timeout time.Duration) error {
	active := pod
	for {
		if o.DryRun == DryRunServer {
			fmt.Fprintf(out, "evicting pod %s/%s (server dry run)\n", active.Namespace, active.Name)
		} else {
			fmt.Fprintf(out, "evicting pod %s/%s\n", active.Namespace, active.Name)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("error when evicting pods/%q -n %q: global timeout reached: %v", active.Name, active.Namespace, timeout)
		}
		opts := o.deleteOptions()
		err := cs.PolicyV1().Evictions(active.Namespace).Evict(ctx, &policyv1.Eviction{
			ObjectMeta:    metav1.ObjectMeta{Name: active.Name, Namespace: active.Namespace},
			DeleteOptions: &opts,
		})
		terminating := apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
		switch {
		case err == nil:
		case apierrors.IsNotFound(err):
			return nil
		case apierrors.IsTooManyRequests(err):
			fmt.Fprintf(errOut, "error when evicting pods/%q -n %q (will retry after %v): %v\n", active.Name, active.Namespace, o.EvictRetryDelay, err)
			o.sleep(ctx, o.EvictRetryDelay)
		case terminating && active.DeletionTimestamp != nil:
			// The namespace is going and the pod with it: wait for it.
			err = nil
		case terminating:
			fmt.Fprintf(errOut, "error when evicting pod %q from terminating namespace %q (will retry after %v): %v\n", active.Name, active.Namespace, o.EvictRetryDelay, err)
			o.sleep(ctx, o.EvictRetryDelay)
		default:
			return fmt.Errorf("error when evicting pods/%q -n %q: %v", active.Name, active.Namespace, err)
		}
		if err == nil {
			break
		}
		if fresh, err := cs.CoreV1().Pods(active.Namespace).Get(ctx, active.Name, metav1.GetOptions{}); err == nil {
			active = *fresh
			active.Kind, active.APIVersion = "Pod", "v1"
		}
	}
	if o.DryRun == DryRunServer {
		return nil
	}
	if _, err := o.waitForDelete(ctx, cs, []corev1.Pod{active}, "evicted", math.MaxInt64); err != nil {
		return fmt.Errorf("error when waiting for pod %q in namespace %q to terminate: %v", pod.Name, pod.Namespace, err)
	}
	return nil
}

// sleep waits for d or until ctx is done.
func (o *DrainOptions) sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// deletePods deletes the pods, then waits for them all to be gone.
func (o *DrainOptions) deletePods(ctx context.Context, cs kubernetes.Interface, pods []corev1.Pod) error {
	for _, pod := range pods {
		err := cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, o.deleteOptions())
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	if o.DryRun == DryRunServer {
		return nil
	}
	_, err := o.waitForDelete(ctx, cs, pods, "deleted", o.globalTimeout())
	return err
}

// waitForDelete polls until each pod is gone (or replaced by one with
// another UID), printing "pod/<name> <verb>" for each.
func (o *DrainOptions) waitForDelete(ctx context.Context, cs kubernetes.Interface, pods []corev1.Pod, verb string, timeout time.Duration) ([]corev1.Pod, error) {
	if timeout < math.MaxInt64 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	for {
		var left []corev1.Pod
		for _, pod := range pods {
			p, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err) || (err == nil && p.UID != pod.UID):
				if err := o.print(&pod, verb); err != nil {
					fmt.Fprintf(o.Streams.Out, "pod %s/%s %s\n", pod.Namespace, pod.Name, verb)
				}
			case err != nil:
				if ctx.Err() != nil {
					return pods, ctx.Err()
				}
				return pods, err
			case o.shouldSkip(p):
				fmt.Fprintf(o.Streams.Out, "pod %q has DeletionTimestamp older than %v seconds, skipping\n", pod.Name, o.SkipWaitForDeleteTimeout)
			default:
				left = append(left, pod)
			}
		}
		pods = left
		if len(pods) == 0 {
			return nil, nil
		}
		o.sleep(ctx, o.PollInterval)
		if ctx.Err() != nil {
			return pods, ctx.Err()
		}
	}
}
