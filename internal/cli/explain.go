package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/openapi"
	"k8s.io/kubectl/pkg/explain"
	explainv2 "k8s.io/kubectl/pkg/explain/v2"
)

// ExplainOptions are the inputs of explain: a TYPE[.FIELD...] path
// rendered from the server's OpenAPI v3 with kubectl's own templates
// (k8s.io/kubectl/pkg/explain/v2), so the layout is kubectl's.
type ExplainOptions struct {
	Path       string
	APIVersion string
	Recursive  bool
	MaxDepth   int
	Output     string

	Mapper  meta.RESTMapper
	OpenAPI openapi.Client
	Streams IOStreams
}

// NewCmdExplain returns the explain command.
func NewCmdExplain(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdExplain(f, streams, runExplain)
}

func newCmdExplain(f *Factory, streams IOStreams, run func(context.Context, *ExplainOptions) error) *cobra.Command {
	o := &ExplainOptions{Streams: streams, Output: "plaintext"}
	cmd := &cobra.Command{
		Use:                   "explain TYPE [--recursive=FALSE|TRUE] [--api-version=api-version-group] [-o|--output=plaintext|plaintext-openapiv2]",
		DisableFlagsInUseLine: true,
		Short:                 "Get documentation for a resource",
		Long: `Describe fields and structure of various resources.

 This command describes the fields associated with each supported API resource. Fields are identified via a simple JSONPath identifier:

        TYPE.FIELDNAME[.FIELDNAME]

 Information about each field is retrieved from the server in OpenAPI format.`,
		Example: `  # Get the documentation of the resource and its fields
  minikctl explain pods

  # Get all the fields in the resource
  minikctl explain pods --recursive

  # Get the explanation for deployment in supported api versions
  minikctl explain deployments --api-version=apps/v1

  # Get the documentation of a specific field of a resource
  minikctl explain pods.spec.containers`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("You must specify the type of resource to explain. Use \"%s api-resources\" for a complete list of supported resources.\n", cmd.Root().Name())
			}
			if len(args) > 1 {
				return errors.New("We accept only this format: explain RESOURCE\n")
			}
			if o.MaxDepth > 0 && !o.Recursive {
				return errors.New("--max-depth requires --recursive")
			}
			if o.MaxDepth < 0 {
				return errors.New("--max-depth must be non-negative")
			}
			if o.Output != "plaintext" {
				return fmt.Errorf("unsupported output format: %s", o.Output)
			}
			o.Path = args[0]
			var err error
			if o.Mapper, err = f.ToRESTMapper(); err != nil {
				return err
			}
			dc, err := f.Discovery()
			if err != nil {
				return err
			}
			o.OpenAPI = dc.OpenAPIV3()
			return run(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVarP(&o.Recursive, "recursive", "R", false, "Print the fields of fields. Use --max-depth to cap the recursion depth.")
	cmd.Flags().StringVar(&o.APIVersion, "api-version", "", "Get different explanations for particular API version (API group/version)")
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "Format in which to render the schema (plaintext)")
	cmd.Flags().IntVar(&o.MaxDepth, "max-depth", 0, "Maximum recursion depth when printing nested fields with --recursive. 0 means no limit. Requires --recursive when greater than 0.")
	return cmd
}

func runExplain(_ context.Context, o *ExplainOptions) error {
	var gvr schema.GroupVersionResource
	var fields []string
	var err error
	if o.APIVersion == "" {
		gvr, fields, err = explain.SplitAndParseResourceRequestWithMatchingPrefix(o.Path, o.Mapper)
	} else {
		gvr, fields, err = explain.SplitAndParseResourceRequest(o.Path, o.Mapper)
	}
	if err != nil {
		return err
	}
	if o.APIVersion != "" {
		gv, err := schema.ParseGroupVersion(o.APIVersion)
		if err != nil {
			return err
		}
		gvr.Group, gvr.Version = gv.Group, gv.Version
	}
	// The client's requests take no context: they are bounded by the
	// --request-timeout of the REST config.
	return explainv2.PrintModelDescription(fields, o.Streams.Out, o.OpenAPI, gvr, o.Recursive, o.MaxDepth, o.Output)
}
