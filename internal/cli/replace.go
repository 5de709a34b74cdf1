package cli

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// ReplaceOptions are the inputs of replace: the manifests' objects replace
// the live ones (PUT); with Force they are deleted, waited for, and
// created again.
type ReplaceOptions struct {
	Create  CreateOptions
	Force   bool
	Timeout time.Duration
}

// NewCmdReplace returns the replace command.
func NewCmdReplace(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdReplace(f, streams, runReplace)
}

func newCmdReplace(f *Factory, streams IOStreams, run func(context.Context, *Factory, *ReplaceOptions) error) *cobra.Command {
	o := &ReplaceOptions{Create: CreateOptions{Streams: streams}}
	cmd := &cobra.Command{
		Use:                   "replace -f FILENAME",
		DisableFlagsInUseLine: true,
		Short:                 "Replace a resource by file name or stdin",
		Long: `Replace a resource by file name or stdin.

 JSON and YAML formats are accepted. If replacing an existing resource, the complete resource spec must be provided. This can be obtained by

        $ minikctl get TYPE NAME -o yaml`,
		Example: `  # Replace a pod using the data in pod.json
  minikctl replace -f ./pod.json

  # Force replace, delete and then re-create the resource
  minikctl replace --force -f ./pod.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd, "Unexpected args: %v", args)
			}
			if o.Create.Filenames.Empty() {
				return errors.New("must specify one of -f and -k")
			}
			if err := o.Create.complete(); err != nil {
				return err
			}
			if o.Timeout != 0 && !o.Force {
				return errors.New("--timeout must have --force specified")
			}
			if o.Force && o.Create.DryRun != DryRunNone {
				return errors.New("--dry-run can not be used when --force is set")
			}
			o.Create.PrintFlags.Operation = "replaced"
			return run(cmd.Context(), f, o)
		},
	}
	o.Create.addFlags(cmd)
	cmd.Flags().Lookup("field-manager").DefValue = "kubectl-replace"
	o.Create.FieldManager = "kubectl-replace"
	o.Create.Filenames.AddFlags(cmd, "to use to replace the resource.")
	cmd.Flags().BoolVar(&o.Force, "force", false, "If true, immediately remove resources from API and bypass graceful deletion. Note that immediate deletion of some resources may result in inconsistency or data loss and requires confirmation.")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 0, "The length of time to wait before giving up on a delete, zero means determine a timeout from the size of the object")
	return cmd
}

func runReplace(ctx context.Context, f *Factory, o *ReplaceOptions) error {
	ns, enforce, err := f.Namespace()
	if err != nil {
		return err
	}
	mapper, err := f.ToRESTMapper()
	if err != nil {
		return err
	}
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	validation, err := parseValidate(o.Create.Validate)
	if err != nil {
		return err
	}
	objs, errs := ReadManifests(o.Create.Filenames, o.Create.Streams.In)
	infos, rerrs := ResolveManifests(objs, mapper, ns, enforce)
	errs = append(errs, rerrs...)
	printer, err := o.Create.PrintFlags.ToPrinter()
	if err != nil {
		return err
	}
	var dryRun []string
	if o.Create.DryRun == DryRunServer {
		dryRun = []string{metav1.DryRunAll}
	}
	if o.Force {
		return o.forceReplace(ctx, f, infos, errs)
	}
	for _, info := range infos {
		obj := info.Object.(*unstructured.Unstructured)
		if o.Create.DryRun != DryRunClient {
			client := resourceClient(dc, info)
			if obj.GetResourceVersion() == "" {
				// As kubectl's Replace with overwrite: the live
				// object's version, so the manifest wins.
				live, err := client.Get(ctx, info.Name, metav1.GetOptions{})
				if err != nil {
					errs = append(errs, addSourceToErr("replacing", info.Source, err))
					continue
				}
				obj.SetResourceVersion(live.GetResourceVersion())
			}
			replaced, err := client.Update(ctx, obj, metav1.UpdateOptions{DryRun: dryRun, FieldManager: o.Create.FieldManager, FieldValidation: validation})
			if err != nil {
				errs = append(errs, addSourceToErr("replacing", info.Source, err))
				continue
			}
			info.Object = replaced
		}
		if err := printer.PrintObj(info.Object, o.Create.Streams.Out); err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// forceReplace deletes every object (immediately, as --force), waits
// until each is gone, then creates it from its manifest.
func (o *ReplaceOptions) forceReplace(ctx context.Context, f *Factory, infos []*Info, errs []error) error {
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	del := &DeleteOptions{Streams: o.Create.Streams, GracePeriod: -1, Output: o.Create.PrintFlags.OutputFormat}
	for _, info := range infos {
		live, err := resourceClient(dc, info).Get(ctx, info.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return utilerrors.NewAggregate(append(errs, err))
		}
		if err := resourceClient(dc, info).Delete(ctx, info.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return utilerrors.NewAggregate(append(errs, err))
		}
		del.printDeleted(info)
		// kubectl waits five minutes unless --timeout says otherwise.
		timeout := o.Timeout
		if timeout == 0 {
			timeout = 5 * time.Minute
		}
		waitCtx, cancel := context.WithTimeout(ctx, timeout)
		err = waitDeleted(waitCtx, dc, info, live.GetUID(), o.Create.Streams)
		cancel()
		if err != nil {
			return utilerrors.NewAggregate(append(errs, err))
		}
	}
	o.Create.PrintFlags.Operation = "replaced"
	for _, info := range infos {
		obj := info.Object.(*unstructured.Unstructured)
		obj.SetResourceVersion("")
		if err := o.Create.create(ctx, f, obj, info.Namespace); err != nil {
			return utilerrors.NewAggregate(append(errs, err))
		}
	}
	return utilerrors.NewAggregate(errs)
}
