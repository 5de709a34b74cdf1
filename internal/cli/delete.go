package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// errTimedOut is the message of every wait that ran out of time.
const errTimedOut = "timed out waiting for the condition"

// DeleteOptions are the inputs of delete.
type DeleteOptions struct {
	Selection      ObjectSelection
	Cascade        string
	Propagation    metav1.DeletionPropagation
	GracePeriod    int
	Now            bool
	Force          bool
	Wait           bool
	Timeout        time.Duration
	IgnoreNotFound bool
	Output         string
	DryRunFlag     string
	DryRun         DryRunStrategy
	Quiet          bool

	Streams IOStreams
}

// NewCmdDelete returns the delete command.
func NewCmdDelete(f *Factory, streams IOStreams) *cobra.Command {
	o := &DeleteOptions{Cascade: "background", GracePeriod: -1, Wait: true, Streams: streams}
	cmd := &cobra.Command{
		Use:                   "delete ([-f FILENAME] | [-k DIRECTORY] | TYPE [(NAME | -l label | --all)])",
		DisableFlagsInUseLine: true,
		Short:                 "Delete resources by file names, stdin, resources and names, or by resources and label selector",
		Long: `Delete resources by file names, stdin, resources and names, or by resources and label selector.

 JSON and YAML formats are accepted. Only one type of argument may be specified: file names, resources and names, or resources and label selector.

 By default, delete waits for the objects to be gone (--wait=true); --cascade chooses how dependents are deleted: background, foreground or orphan.`,
		Example: `  # Delete the demo's objects
  minikctl delete -f web.yaml

  # Delete pods and services with label app=web
  minikctl -n demo delete pod,service -l app=web

  # Delete a pod with minimal delay
  minikctl -n demo delete pod web-6d4cf56db6-abcde --now`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(f, cmd, args); err != nil {
				return err
			}
			return runDelete(cmd.Context(), f, o)
		},
	}
	o.Selection.Filenames.AddFlags(cmd, "containing the resource to delete.")
	cmd.Flags().BoolVar(&o.Selection.All, "all", false, "Delete all resources, in the namespace of the specified resource types.")
	cmd.Flags().BoolVarP(&o.Selection.AllNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces. Namespace in current context is ignored even if specified with --namespace.")
	cmd.Flags().StringVarP(&o.Selection.LabelSelector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2,key3 in (value3)). Matching objects must satisfy all of the specified label constraints.")
	cmd.Flags().StringVar(&o.Selection.FieldSelector, "field-selector", "", "Selector (field query) to filter on, supports '=', '==', and '!='.(e.g. --field-selector key1=value1,key2=value2). The server only supports a limited number of field queries per type.")
	cmd.Flags().StringVar(&o.Cascade, "cascade", o.Cascade, `Must be "background", "orphan", or "foreground". Selects the deletion cascading strategy for the dependents (e.g. Pods created by a ReplicationController). Defaults to background.`)
	cmd.Flags().Lookup("cascade").NoOptDefVal = "background"
	cmd.Flags().IntVar(&o.GracePeriod, "grace-period", o.GracePeriod, "Period of time in seconds given to the resource to terminate gracefully. Ignored if negative. Set to 1 for immediate shutdown. Can only be set to 0 when --force is true (force deletion).")
	cmd.Flags().BoolVar(&o.Now, "now", false, "If true, resources are signaled for immediate shutdown (same as --grace-period=1).")
	cmd.Flags().BoolVar(&o.Force, "force", false, "If true, immediately remove resources from API and bypass graceful deletion. Note that immediate deletion of some resources may result in inconsistency or data loss and requires confirmation.")
	cmd.Flags().BoolVar(&o.Wait, "wait", o.Wait, "If true, wait for resources to be gone before returning. This waits for finalizers.")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 0, "The length of time to wait before giving up on a delete, zero means determine a timeout from the size of the object")
	cmd.Flags().BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, "Treat \"resource not found\" as a successful delete. Defaults to \"true\" when --all is specified.")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output mode. Use \"-o name\" for shorter output (resource/name).")
	addDryRunFlag(cmd, &o.DryRunFlag)
	return cmd
}

// Complete settles the grace period, cascade and selection.
func (o *DeleteOptions) Complete(f *Factory, cmd *cobra.Command, args []string) error {
	var err error
	o.Selection.Namespace, o.Selection.EnforceNamespace, err = f.Namespace()
	if err != nil {
		return err
	}
	if o.Selection.AllNamespaces {
		o.Selection.EnforceNamespace = false
	}
	o.Selection.Args = args
	o.Selection.BaseName = cmd.Root().Name()
	if o.Selection.All && !cmd.Flags().Changed("ignore-not-found") {
		o.IgnoreNotFound = true
	}
	if o.Now {
		if o.GracePeriod != -1 {
			return errors.New("--now and --grace-period cannot be specified together")
		}
		o.GracePeriod = 1
	}
	if o.GracePeriod == 0 && !o.Force {
		o.GracePeriod = 1
	}
	if o.Force && o.GracePeriod < 0 {
		o.GracePeriod = 0
	}
	switch o.Cascade {
	case "background", "true":
		o.Propagation = metav1.DeletePropagationBackground
	case "foreground":
		o.Propagation = metav1.DeletePropagationForeground
	case "orphan", "false":
		o.Propagation = metav1.DeletePropagationOrphan
	default:
		return fmt.Errorf(`invalid cascade value (%v). Must be "background", "foreground", or "orphan"`, o.Cascade)
	}
	if o.DryRun, err = parseDryRun(o.DryRunFlag); err != nil {
		return err
	}
	if o.Output != "" && o.Output != "name" {
		return fmt.Errorf("unexpected -o output mode: %v. We only support '-o name'", o.Output)
	}
	o.Quiet = false
	if o.Selection.All && o.Selection.LabelSelector != "" {
		return errors.New("cannot set --all and --selector at the same time")
	}
	if o.Selection.All && o.Selection.FieldSelector != "" {
		return errors.New("cannot set --all and --field-selector at the same time")
	}
	if o.Force && o.GracePeriod > 0 {
		return errors.New("--force and --grace-period greater than 0 cannot be specified together")
	}
	if o.GracePeriod == 0 && o.Force {
		fmt.Fprintln(o.Streams.ErrOut, "Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.")
	}
	return nil
}

// runDelete deletes the selected objects, printing kubectl's line for
// each, then (with --wait) waits for them to be gone.
func runDelete(ctx context.Context, f *Factory, o *DeleteOptions) error {
	infos, _, errs := f.selectObjects(ctx, &o.Selection)
	if o.IgnoreNotFound {
		errs = ignoreNotFound(errs)
	}
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	uids := map[string]types.UID{}
	var deleted []*Info
	for _, info := range infos {
		deleted = append(deleted, info)
		if o.DryRun == DryRunClient {
			o.printDeleted(info)
			continue
		}
		opts := metav1.DeleteOptions{PropagationPolicy: &o.Propagation}
		if o.GracePeriod >= 0 {
			g := int64(o.GracePeriod)
			opts.GracePeriodSeconds = &g
		}
		if o.DryRun == DryRunServer {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		if u, ok := info.Object.(*unstructured.Unstructured); ok {
			uids[infoKey(info)] = u.GetUID()
		}
		if err := resourceClient(dc, info).Delete(ctx, info.Name, opts); err != nil {
			if o.IgnoreNotFound && apierrors.IsNotFound(err) {
				continue
			}
			errs = append(errs, addSourceToErr("deleting", info.Source, err))
			continue
		}
		o.printDeleted(info)
	}
	if len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	if len(deleted) == 0 {
		fmt.Fprintf(o.Streams.Out, "No resources found\n")
		return nil
	}
	if !o.Wait || o.DryRun != DryRunNone {
		return nil
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 168 * time.Hour
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, info := range deleted {
		if err := waitDeleted(wctx, dc, info, uids[infoKey(info)], o.Streams); err != nil {
			if apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err) {
				return nil
			}
			return err
		}
	}
	return nil
}

func infoKey(info *Info) string {
	return info.Mapping.Resource.String() + "/" + info.Namespace + "/" + info.Name
}

// printDeleted prints kubectl's `kind.group "name" deleted from NS
// namespace` line (or the name with -o name).
func (o *DeleteOptions) printDeleted(info *Info) {
	gvk := info.Mapping.GroupVersionKind
	kind := strings.ToLower(gvk.Kind)
	if gvk.Group != "" {
		kind += "." + gvk.Group
	}
	operation := "deleted"
	if o.GracePeriod == 0 {
		operation = "force deleted"
	}
	if info.Namespaced() {
		operation = fmt.Sprintf("%s from %s namespace", operation, info.Namespace)
	}
	switch o.DryRun {
	case DryRunClient:
		operation += " (dry run)"
	case DryRunServer:
		operation += " (server dry run)"
	}
	if o.Output == "name" {
		fmt.Fprintf(o.Streams.Out, "%s/%s\n", kind, info.Name)
		return
	}
	fmt.Fprintf(o.Streams.Out, "%s \"%s\" %s\n", kind, info.Name, operation)
}

// resourceClient is the dynamic client of an info's resource.
func resourceClient(dc dynamic.Interface, info *Info) dynamic.ResourceInterface {
	r := dc.Resource(info.Mapping.Resource)
	if info.Namespaced() {
		return r.Namespace(info.Namespace)
	}
	return r
}

// listWatchByName lists and watches one object by name.
func listWatchByName(dc dynamic.Interface, info *Info) *cache.ListWatch {
	selector := fields.OneTermEqualSelector("metadata.name", info.Name).String()
	client := resourceClient(dc, info)
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = selector
			return client.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			return client.Watch(ctx, opts)
		},
	}
}

// waitDeleted waits, by watching, until the object is gone (or replaced
// by one with another uid); ctx bounds the wait.
func waitDeleted(ctx context.Context, dc dynamic.Interface, info *Info, uid types.UID, streams IOStreams) error {
	got, err := resourceClient(dc, info).Get(ctx, info.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if uid != "" && got.GetUID() != uid {
		return nil
	}
	precondition := func(store cache.Store) (bool, error) {
		obj, exists, err := store.Get(&metav1.ObjectMeta{Namespace: info.Namespace, Name: info.Name})
		if err != nil {
			return true, err
		}
		if !exists {
			return true, nil
		}
		if acc, err := meta.Accessor(obj); err == nil && uid != "" && acc.GetUID() != uid {
			return true, nil
		}
		return false, nil
	}
	_, err = watchtools.UntilWithSync(ctx, listWatchByName(dc, info), &unstructured.Unstructured{}, precondition, func(e watch.Event) (bool, error) {
		switch e.Type {
		case watch.Error:
			fmt.Fprintf(streams.ErrOut, "error: An error occurred while waiting for the object to be deleted: %v", apierrors.FromObject(e.Object))
			return false, nil
		case watch.Deleted:
			return true, nil
		}
		return false, nil
	})
	if err != nil && (errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), errTimedOut)) {
		return fmt.Errorf("%s on %s/%s", errTimedOut, info.Mapping.Resource.Resource, info.Name)
	}
	return err
}
