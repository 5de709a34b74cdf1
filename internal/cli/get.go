package cli

import (
	"context"
	"fmt"
	"net/url"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// GetOptions are the inputs of get.
type GetOptions struct {
	PrintFlags PrintFlags
	Filenames  FilenameOptions

	Args              []string
	LabelSelector     string
	FieldSelector     string
	AllNamespaces     bool
	Namespace         string
	ExplicitNamespace bool
	Watch             bool
	WatchOnly         bool
	IgnoreNotFound    bool
	ChunkSize         int64
	// Raw is --raw: a URI to GET from the server, its body printed as is.
	Raw string

	// BaseName is the root command's name, used in messages.
	BaseName string
	Streams  IOStreams
	// RawClient makes the --raw request.
	RawClient *rest.RESTClient

	Mapper     meta.RESTMapper
	Categories restmapper.CategoryExpander
	ClientFor  func(schema.GroupVersion) (rest.Interface, error)
}

// NewCmdGet returns the get command.
func NewCmdGet(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdGet(f, streams, runGet)
}

// newCmdGet returns the get command running run with the completed and
// validated options (tests capture them).
func newCmdGet(f *Factory, streams IOStreams, run func(context.Context, *GetOptions) error) *cobra.Command {
	o := &GetOptions{
		PrintFlags: PrintFlags{HumanReadable: true},
		ChunkSize:  500,
		Streams:    streams,
	}
	cmd := &cobra.Command{
		Use:                   "get [(-o|--output=)json|yaml|name|wide|custom-columns=...|jsonpath=...] (TYPE[.VERSION][.GROUP] [NAME | -l label] | TYPE[.VERSION][.GROUP]/NAME ...) [flags]",
		DisableFlagsInUseLine: true,
		Short:                 "Display one or many resources",
		Long: `Display one or many resources.

Prints a table of the most important information about the specified resources. You can filter the list using a label selector and the --selector flag. If the desired resource type is namespaced you will only see results in the current namespace if you don't specify any namespace.

By specifying the output as 'jsonpath' and providing a JSONPath expression as the value of the --template flag, you can filter the attributes of the fetched resources.`,
		Example: `  # List all pods in ps output format
  minikctl get pods

  # List deployments and services together
  minikctl -n demo get deployment,service

  # List a single deployment in YAML
  minikctl -n demo get deployment web -o yaml

  # Return only the names of the pods, with JSONPath
  minikctl get pods -o jsonpath='{.items[*].metadata.name}'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(f, cmd, args); err != nil {
				return err
			}
			if err := o.Validate(cmd); err != nil {
				return err
			}
			return run(cmd.Context(), o)
		},
	}
	o.PrintFlags.AddFlags(cmd)
	o.Filenames.AddFlags(cmd, "identifying the resource to get from a server.")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", o.Watch, "After listing/getting the requested object, watch for changes.")
	cmd.Flags().BoolVar(&o.WatchOnly, "watch-only", o.WatchOnly, "Watch for changes to the requested object(s), without listing/getting first.")
	cmd.Flags().Int64Var(&o.ChunkSize, "chunk-size", o.ChunkSize, "Return large lists in chunks rather than all at once. Pass 0 to disable. This flag is beta and may change in the future.")
	cmd.Flags().BoolVar(&o.IgnoreNotFound, "ignore-not-found", o.IgnoreNotFound, "If set to true, suppresses NotFound error for specific objects that do not exist. Using this flag with commands that query for collections of resources has no effect when no resources are found.")
	cmd.Flags().StringVarP(&o.LabelSelector, "selector", "l", o.LabelSelector, "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2,key3 in (value3)). Matching objects must satisfy all of the specified label constraints.")
	cmd.Flags().StringVar(&o.FieldSelector, "field-selector", o.FieldSelector, "Selector (field query) to filter on, supports '=', '==', and '!='.(e.g. --field-selector key1=value1,key2=value2). The server only supports a limited number of field queries per type.")
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", o.AllNamespaces, "If present, list the requested object(s) across all namespaces. Namespace in current context is ignored even if specified with --namespace.")
	cmd.Flags().StringVar(&o.Raw, "raw", o.Raw, "Raw URI to request from the server.  Uses the transport specified by the kubeconfig file.")
	return cmd
}

// Complete fills the options from the factory and the arguments.
func (o *GetOptions) Complete(f *Factory, cmd *cobra.Command, args []string) error {
	o.Args = args
	o.BaseName = cmd.Root().Name()
	var err error
	if o.Raw != "" {
		if len(args) > 0 {
			return fmt.Errorf("arguments may not be passed when --raw is specified")
		}
		c, err := f.RESTClientFor(corev1.SchemeGroupVersion)
		if err != nil {
			return err
		}
		o.RawClient, _ = c.(*rest.RESTClient)
		return nil
	}
	o.Namespace, o.ExplicitNamespace, err = f.Namespace()
	if err != nil {
		return err
	}
	if o.AllNamespaces {
		o.ExplicitNamespace = false
	}
	if !o.Watch && !o.WatchOnly && len(args) == 0 && o.Filenames.Empty() {
		fmt.Fprintf(o.Streams.ErrOut, "You must specify the type of resource to get. Use \"%s api-resources\" for a complete list of supported resources.\n\n", o.BaseName)
		return usageErrorf(cmd, "Required resource not specified.")
	}
	if (o.Watch || o.WatchOnly) && o.PrintFlags.SortBy != "" {
		fmt.Fprintf(o.Streams.ErrOut, "warning: --watch or --watch-only requested, --sort-by will be ignored\n")
	}
	if o.Mapper, err = f.ToRESTMapper(); err != nil {
		return err
	}
	if o.Categories, err = f.CategoryExpander(); err != nil {
		return err
	}
	o.ClientFor = f.RESTClientFor
	return nil
}

// Validate checks flag combinations.
func (o *GetOptions) Validate(cmd *cobra.Command) error {
	if o.Raw != "" {
		if o.Watch || o.WatchOnly || o.LabelSelector != "" {
			return fmt.Errorf("--raw may not be specified with other flags that filter the server request or alter the output")
		}
		if o.PrintFlags.OutputFormat != "" {
			return fmt.Errorf("--raw and --output are mutually exclusive")
		}
		if _, err := url.ParseRequestURI(o.Raw); err != nil {
			return fmt.Errorf("--raw must be a valid URL path: %v", err)
		}
		if o.RawClient == nil {
			return fmt.Errorf("--raw: no REST client for the server")
		}
	}
	if o.PrintFlags.ShowLabels {
		format, _ := o.PrintFlags.outputFormat()
		if format != "" && format != "wide" {
			return fmt.Errorf("--show-labels option cannot be used with %s printer", o.PrintFlags.OutputFormat)
		}
	}
	if _, err := o.PrintFlags.ToPrinter(); err != nil {
		return err
	}
	return nil
}
