package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/dynamic"
)

const (
	// FieldManagerClientSideApply is the field manager of client-side apply.
	FieldManagerClientSideApply = "kubectl-client-side-apply"
	// FieldManagerServerSideApply is the default field manager of
	// server-side apply ("kubectl", as kubectl names it for backward
	// compatibility).
	FieldManagerServerSideApply = "kubectl"
)

const (
	// maxPatchRetry is how often a patch is recomputed after a conflict.
	maxPatchRetry = 5
	// patchBackOff is the pause between conflict retries after the first.
	patchBackOff = time.Second
)

// ApplyOptions are the inputs of apply.
type ApplyOptions struct {
	PrintFlags PrintFlags
	Filenames  FilenameOptions

	DryRunFlag      string
	DryRun          DryRunStrategy
	FieldManager    string
	ValidateFlag    string
	FieldValidation string
	Overwrite       bool
	// ServerSide sends each object as a server-side apply; ForceConflicts
	// takes over fields other managers own.
	ServerSide     bool
	ForceConflicts bool
	// NoAnnotate leaves the last-applied annotation alone (diff's dry
	// runs, as kubectl's).
	NoAnnotate bool
	// Prune deletes what the manifests no longer name (--prune).
	Prune            PruneOptions
	Namespace        string
	EnforceNamespace bool

	// BaseName is the root command's name, used in warnings.
	BaseName string
	Streams  IOStreams

	Mapper  meta.RESTMapper
	Dynamic dynamic.Interface
	// Sleep waits between conflict retries (replaceable in tests).
	Sleep func(time.Duration)
}

// NewCmdApply returns the apply command.
func NewCmdApply(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdApply(f, streams, runApply)
}

// newCmdApply returns the apply command running run with the completed and
// validated options (tests capture them).
func newCmdApply(f *Factory, streams IOStreams, run func(context.Context, *ApplyOptions) error) *cobra.Command {
	o := &ApplyOptions{
		FieldManager: FieldManagerClientSideApply,
		Overwrite:    true,
		Streams:      streams,
		Sleep:        time.Sleep,
	}
	cmd := &cobra.Command{
		Use:                   "apply (-f FILENAME)",
		DisableFlagsInUseLine: true,
		Short:                 "Apply a configuration to a resource by file name or stdin",
		Long: `Apply a configuration to a resource by file name or stdin. The resource name must be specified. This resource will be created if it doesn't exist yet. To use 'apply', always create the resource initially with either 'apply' or 'create --save-config'.

JSON and YAML formats are accepted.`,
		Example: `  # Apply the configuration in web.yaml
  minikctl apply -f web.yaml

  # Apply every manifest under a directory, recursively
  minikctl apply -R -f manifests/

  # Apply the JSON passed into stdin
  cat pod.json | minikctl apply -f -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(f, cmd); err != nil {
				return err
			}
			if err := o.Validate(cmd, args); err != nil {
				return err
			}
			return run(cmd.Context(), o)
		},
	}
	o.PrintFlags.AddFlags(cmd)
	o.Filenames.AddFlags(cmd, "that contains the configuration to apply")
	addDryRunFlag(cmd, &o.DryRunFlag)
	cmd.Flags().StringVar(&o.FieldManager, "field-manager", o.FieldManager, "Name of the manager used to track field ownership.")
	cmd.Flags().StringVar(&o.ValidateFlag, "validate", "strict", `Must be one of: strict (or true), warn, ignore (or false). "true" or "strict" will use a schema to validate the input and fail the request if invalid. It will perform server side validation if ServerSideFieldValidation is enabled on the api-server, but will fall back to less reliable client-side validation if not. "warn" will warn about unknown or duplicate fields without blocking the request if server-side field validation is enabled on the API server, and behave as "ignore" otherwise. "false" or "ignore" will not perform any schema validation, silently dropping any unknown or duplicate fields.`)
	cmd.Flags().Lookup("validate").NoOptDefVal = "strict"
	cmd.Flags().BoolVar(&o.Overwrite, "overwrite", o.Overwrite, "Automatically resolve conflicts between the modified and live configuration by using values from the modified configuration")
	cmd.Flags().BoolVar(&o.ServerSide, "server-side", false, "If true, apply runs in the server instead of the client.")
	cmd.Flags().BoolVar(&o.ForceConflicts, "force-conflicts", false, "If true, server-side apply will force the changes against conflicts.")
	o.Prune.addFlags(cmd)
	return cmd
}

// Complete fills the options from the factory and flags.
func (o *ApplyOptions) Complete(f *Factory, cmd *cobra.Command) error {
	o.BaseName = cmd.Root().Name()
	if o.ServerSide && !cmd.Flags().Changed("field-manager") {
		o.FieldManager = FieldManagerServerSideApply
	}
	var err error
	if o.DryRun, err = parseDryRun(o.DryRunFlag); err != nil {
		return err
	}
	o.PrintFlags.DryRun = o.DryRun
	o.PrintFlags.Operation = "created"
	if o.FieldValidation, err = parseValidate(o.ValidateFlag); err != nil {
		return err
	}
	if o.Filenames.Empty() {
		return errors.New("must specify one of -f and -k")
	}
	if o.Namespace, o.EnforceNamespace, err = f.Namespace(); err != nil {
		return err
	}
	if o.Mapper, err = f.ToRESTMapper(); err != nil {
		return err
	}
	if o.Dynamic, err = f.DynamicClient(); err != nil {
		return err
	}
	return nil
}

// parseValidate maps --validate to the server's fieldValidation directive.
func parseValidate(v string) (string, error) {
	switch v {
	case "true", "strict":
		return metav1.FieldValidationStrict, nil
	case "warn":
		return metav1.FieldValidationWarn, nil
	case "false", "ignore":
		return metav1.FieldValidationIgnore, nil
	}
	return "", fmt.Errorf("invalid - validate option %q; must be one of: strict (or true), warn, ignore (or false)", v)
}

// Validate checks the arguments and the output format.
func (o *ApplyOptions) Validate(cmd *cobra.Command, args []string) error {
	if len(args) != 0 {
		return usageErrorf(cmd, "Unexpected args: %v", args)
	}
	if o.ForceConflicts && !o.ServerSide {
		return errors.New("--force-conflicts only works with --server-side")
	}
	if o.DryRun == DryRunClient && o.ServerSide {
		return errors.New("--dry-run=client doesn't work with --server-side (did you mean --dry-run=server instead?)")
	}
	if err := o.Prune.validate(o.ServerSide); err != nil {
		return err
	}
	_, err := o.printer("created")
	return err
}

// printer returns the printer of one applied object.
func (o *ApplyOptions) printer(operation string) (ResourcePrinter, error) {
	pf := o.PrintFlags
	pf.Operation = operation
	return pf.ToPrinter()
}

// shouldPrintObject reports whether objects are printed in full (-o yaml,
// json, ...) at the end, instead of one line per object.
func (o *ApplyOptions) shouldPrintObject() bool {
	format, _ := o.PrintFlags.outputFormat()
	return (format != "" || o.PrintFlags.Template != "") && format != "name"
}

// runApply applies every object of the manifests, in order, continuing
// past failures; it returns all errors together (reading and mapping
// errors first).
func runApply(ctx context.Context, o *ApplyOptions) error {
	objs, errs := ReadManifests(o.Filenames, o.Streams.In)
	if len(objs) == 0 && len(errs) == 1 {
		return errs[0]
	}
	var infos []*Info
	if len(objs) > 0 {
		var rerrs []error
		infos, rerrs = ResolveManifests(objs, o.Mapper, o.Namespace, o.EnforceNamespace)
		errs = append(errs, rerrs...)
	}
	infos, err := o.Prune.selectInfos(infos)
	if err != nil {
		return err
	}
	if len(infos) == 0 && len(errs) == 0 {
		return errors.New("no objects passed to apply")
	}
	for _, info := range infos {
		if err := o.applyOne(ctx, info); err != nil {
			errs = append(errs, err)
		}
	}
	if o.Prune.Prune && len(errs) == 0 {
		if err := o.pruneAll(ctx, infos); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 1 {
		return errs[0]
	}
	if len(errs) > 1 {
		return utilerrors.NewAggregate(errs)
	}
	return o.printObjects(infos)
}

// printObjects prints the applied objects for -o yaml/json: one object as
// itself, several as a List.
func (o *ApplyOptions) printObjects(infos []*Info) error {
	if !o.shouldPrintObject() || len(infos) == 0 {
		return nil
	}
	printer, err := o.printer("")
	if err != nil {
		return err
	}
	obj := infos[0].Object
	if len(infos) > 1 {
		list := &unstructured.UnstructuredList{Object: map[string]any{
			"kind":       "List",
			"apiVersion": "v1",
			"metadata":   map[string]any{},
		}}
		for _, info := range infos {
			u, err := toUnstructured(info.Object)
			if err != nil {
				return err
			}
			list.Items = append(list.Items, *u)
		}
		obj = list
	}
	return printer.PrintObj(obj, o.Streams.Out)
}
