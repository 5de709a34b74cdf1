package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	kubectldescribe "k8s.io/kubectl/pkg/describe"
)

// DescribeOptions are the inputs of describe.
type DescribeOptions struct {
	Selection  ObjectSelection
	ShowEvents bool
	ChunkSize  int64

	Streams IOStreams
}

// NewCmdDescribe returns the describe command.
func NewCmdDescribe(f *Factory, streams IOStreams) *cobra.Command {
	o := &DescribeOptions{ShowEvents: true, ChunkSize: 500, Streams: streams}
	cmd := &cobra.Command{
		Use:                   "describe (-f FILENAME | TYPE [NAME_PREFIX | -l label] | TYPE/NAME)",
		DisableFlagsInUseLine: true,
		Short:                 "Show details of a specific resource or group of resources",
		Long: `Show details of a specific resource or group of resources.

 Print a detailed description of the selected resources, including related resources such as events or controllers. You may select a single object by name, all objects of that type, provide a name prefix, or label selector. For example:

        $ minikctl describe TYPE NAME_PREFIX

 will first check for an exact match on TYPE and NAME_PREFIX. If no such resource exists, it will output details for every resource that has a name prefixed with NAME_PREFIX.

Use "minikctl api-resources" for a complete list of supported resources.`,
		Example: `  # Describe the demo's deployment
  minikctl -n demo describe deployment web

  # Describe every pod of the deployment, by label
  minikctl -n demo describe pod -l app=web

  # Describe pods whose names start with "web"
  minikctl -n demo describe pods web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(f, cmd, args); err != nil {
				return err
			}
			return runDescribe(cmd.Context(), f, o)
		},
	}
	o.Selection.Filenames.AddFlags(cmd, "containing the resource to describe")
	cmd.Flags().StringVarP(&o.Selection.LabelSelector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', and '!='.(e.g. -l key1=value1,key2=value2)")
	cmd.Flags().BoolVarP(&o.Selection.AllNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces. Namespace in current context is ignored even if specified with --namespace.")
	cmd.Flags().BoolVar(&o.ShowEvents, "show-events", o.ShowEvents, "If true, display events related to the described object.")
	cmd.Flags().Int64Var(&o.ChunkSize, "chunk-size", o.ChunkSize, "Return large lists in chunks rather than all at once. Pass 0 to disable. This flag is beta and may change in the future.")
	return cmd
}

// Complete fills the options from the factory and the arguments.
func (o *DescribeOptions) Complete(f *Factory, cmd *cobra.Command, args []string) error {
	var err error
	o.Selection.Namespace, o.Selection.EnforceNamespace, err = f.Namespace()
	if err != nil {
		return err
	}
	if o.Selection.AllNamespaces {
		o.Selection.EnforceNamespace = false
	}
	base := cmd.Root().Name()
	if len(args) == 0 && o.Selection.Filenames.Empty() {
		return fmt.Errorf("You must specify the type of resource to describe. Use \"%s api-resources\" for a complete list of supported resources.\n", base)
	}
	o.Selection.Args = args
	o.Selection.BaseName = base
	o.Selection.AllowEmptySelector = true
	return nil
}

// runDescribe describes every selected object, one after another with a
// blank line between them, continuing past errors. When "TYPE NAME" finds
// nothing, every object of TYPE whose name starts with NAME is described.
func runDescribe(ctx context.Context, f *Factory, o *DescribeOptions) error {
	infos, _, errs := f.selectObjects(ctx, &o.Selection)
	cs, err := f.KubernetesClientSet()
	if err != nil {
		return err
	}
	cfg, err := f.ToRESTConfig()
	if err != nil {
		return err
	}
	d := &describer{client: cs, config: cfg, showEvents: o.ShowEvents, chunkSize: o.ChunkSize}
	if len(errs) == 1 && len(infos) == 0 && apierrors.IsNotFound(errs[0]) && len(o.Selection.Args) == 2 {
		return describeMatching(ctx, f, d, o, errs[0])
	}
	seen := sets.New[string]()
	first := true
	for _, info := range infos {
		s, err := d.describe(ctx, info)
		if err != nil {
			if !seen.Has(err.Error()) {
				seen.Insert(err.Error())
				errs = append(errs, err)
			}
			continue
		}
		if first {
			first = false
			fmt.Fprint(o.Streams.Out, s)
		} else {
			fmt.Fprintf(o.Streams.Out, "\n\n%s", s)
		}
	}
	if len(infos) == 0 && len(errs) == 0 {
		if o.Selection.AllNamespaces {
			fmt.Fprintln(o.Streams.ErrOut, "No resources found")
		} else {
			fmt.Fprintf(o.Streams.ErrOut, "No resources found in %s namespace.\n", o.Selection.Namespace)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// describeMatching describes the objects of a type whose names start with
// prefix, or returns the original NotFound error when there are none.
func describeMatching(ctx context.Context, f *Factory, d *describer, o *DescribeOptions, original error) error {
	sel := ObjectSelection{Args: o.Selection.Args[:1], Namespace: o.Selection.Namespace, AllowEmptySelector: true, BaseName: o.Selection.BaseName}
	infos, _, errs := f.selectObjects(ctx, &sel)
	if len(errs) > 0 {
		return errs[0]
	}
	found := false
	for _, info := range infos {
		if !strings.HasPrefix(info.Name, o.Selection.Args[1]) {
			continue
		}
		found = true
		s, err := d.describe(ctx, info)
		if err != nil {
			return err
		}
		fmt.Fprintf(o.Streams.Out, "%s\n", s)
	}
	if !found {
		return original
	}
	return nil
}

// describer renders kubectl's description of an object, reading what the
// description needs besides the object (events, replica sets, pods,
// endpoint slices, leases).
type describer struct {
	client kubernetes.Interface
	// config builds kubectl's own describers (k8s.io/kubectl/pkg/describe)
	// for the kinds minikctl has no layout of its own for.
	config     *rest.Config
	showEvents bool
	chunkSize  int64
}

// describe renders one object: with its kind's describer when there is
// one, else generically from its fields.
func (d *describer) describe(ctx context.Context, info *Info) (string, error) {
	typed, err := toTyped(info.Object)
	if err != nil {
		return "", err
	}
	if fn, ok := kindDescribers[info.Mapping.GroupVersionKind.GroupKind()]; ok {
		if _, isTyped := typed.(runtime.Unstructured); !isTyped {
			return fn(ctx, d, typed)
		}
	}
	if kd, ok := kubectldescribe.DescriberFor(info.Mapping.GroupVersionKind.GroupKind(), d.config); ok {
		// kubectl's describers read the object again themselves; their
		// requests are bounded by the REST config's timeout.
		return kd.Describe(info.Namespace, info.Name, kubectldescribe.DescriberSettings{ShowEvents: d.showEvents, ChunkSize: d.chunkSize})
	}
	return d.describeGeneric(ctx, info.Object)
}
