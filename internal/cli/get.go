package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
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

	// BaseName is the root command's name, used in messages.
	BaseName string
	Streams  IOStreams

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
	return cmd
}

// Complete fills the options from the factory and the arguments.
func (o *GetOptions) Complete(f *Factory, cmd *cobra.Command, args []string) error {
	o.Args = args
	o.BaseName = cmd.Root().Name()
	var err error
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

// getResult is what the resource arguments select: the infos fetched and
// whether one object was named (so -o yaml prints it, not a List).
type getResult struct {
	infos             []*Info
	singleItemImplied bool
}

func (o *GetOptions) fetcher() *fetcher {
	return &fetcher{
		clientFor:     o.ClientFor,
		table:         o.PrintFlags.IsHumanReadable(),
		includeObject: o.PrintFlags.SortBy != "",
	}
}

// resolve turns the arguments into requests, as kubectl's resource builder
// does; the error aborts the command before anything is fetched.
type getRequest struct {
	mapping   *meta.RESTMapping
	namespace string
	name      string // "" lists
}

func (o *GetOptions) requests() ([]getRequest, bool, error) {
	namespace := o.Namespace
	if o.AllNamespaces {
		namespace = ""
	}
	byName := func(m *meta.RESTMapping, name string) (getRequest, error) {
		ns := namespace
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			ns = ""
		} else if ns == "" {
			if o.AllNamespaces {
				return getRequest{}, errors.New("a resource cannot be retrieved by name across all namespaces")
			}
			return getRequest{}, errors.New("namespace may not be empty when retrieving a resource by name")
		}
		return getRequest{mapping: m, namespace: ns, name: name}, nil
	}

	if !o.Filenames.Empty() {
		if len(o.Args) > 0 {
			return nil, false, errors.New("when paths, URLs, or stdin is provided as input, you may not specify a resource by arguments as well")
		}
		objs, errs := ReadManifests(o.Filenames, o.Streams.In)
		infos, rerrs := ResolveManifests(objs, o.Mapper, o.Namespace, o.ExplicitNamespace)
		if errs = append(errs, rerrs...); len(errs) > 0 {
			return nil, false, utilerrors.NewAggregate(errs)
		}
		var reqs []getRequest
		for _, info := range infos {
			reqs = append(reqs, getRequest{mapping: info.Mapping, namespace: info.Namespace, name: info.Name})
		}
		single := len(o.Filenames.Filenames) == 1 && o.Filenames.Filenames[0] != "-" && !isDir(o.Filenames.Filenames[0])
		return reqs, single, nil
	}

	args, err := parseResourceArgs(o.Args, o.BaseName, categoryAliases(o.Categories))
	if err != nil {
		return nil, false, err
	}
	selecting := o.LabelSelector != "" || o.FieldSelector != "" || (len(args.Types) > 0 && len(args.Names) == 0)
	switch {
	case selecting:
		if len(args.Names) > 0 {
			return nil, false, errors.New("name cannot be provided when a selector is specified")
		}
		if len(args.Tuples) > 0 {
			return nil, false, errors.New("selectors and the all flag cannot be used when passing resource/name arguments")
		}
		if len(args.Types) == 0 {
			return nil, false, errors.New("at least one resource must be specified to use a selector")
		}
		mappings, err := o.mappings(args.Types)
		if err != nil {
			return nil, false, err
		}
		var reqs []getRequest
		for _, m := range mappings {
			ns := namespace
			if m.Scope.Name() != meta.RESTScopeNameNamespace {
				ns = ""
			}
			reqs = append(reqs, getRequest{mapping: m, namespace: ns})
		}
		return reqs, false, nil
	case len(args.Tuples) > 0:
		var reqs []getRequest
		for _, t := range args.Tuples {
			m, err := mappingFor(o.Mapper, t.Resource)
			if err != nil {
				return nil, false, err
			}
			req, err := byName(m, t.Name)
			if err != nil {
				return nil, false, err
			}
			reqs = append(reqs, req)
		}
		return reqs, len(args.Tuples) == 1, nil
	case len(args.Names) > 0:
		if len(args.Types) > 1 {
			return nil, false, errors.New("you must specify only one resource")
		}
		mappings, err := o.mappings(args.Types)
		if err != nil {
			return nil, false, err
		}
		var reqs []getRequest
		for _, name := range args.Names {
			req, err := byName(mappings[0], name)
			if err != nil {
				return nil, false, err
			}
			reqs = append(reqs, req)
		}
		return reqs, len(args.Names) == 1, nil
	}
	return nil, false, errors.New(`You must provide one or more resources by argument or filename.
Example resource specifications include:
   '-f rsrc.yaml'
   '--filename=rsrc.json'
   '<resource> <name>'
   '<resource>'`)
}

// mappings resolves type arguments, dropping repeats of the same kind.
func (o *GetOptions) mappings(types []string) ([]*meta.RESTMapping, error) {
	var out []*meta.RESTMapping
	seen := map[schema.GroupVersionKind]bool{}
	for _, t := range types {
		m, err := mappingFor(o.Mapper, t)
		if err != nil {
			return nil, err
		}
		if seen[m.GroupVersionKind] {
			continue
		}
		seen[m.GroupVersionKind] = true
		out = append(out, m)
	}
	return out, nil
}

// fetch performs the requests, continuing past errors: each named object
// and each page of a list becomes an info.
func (o *GetOptions) fetch(ctx context.Context, reqs []getRequest) ([]*Info, []error) {
	f := o.fetcher()
	chunk := o.ChunkSize
	if o.PrintFlags.SortBy != "" {
		chunk = 0
	}
	var infos []*Info
	var errs []error
	for _, r := range reqs {
		if r.name != "" {
			obj, err := f.get(ctx, r.mapping, r.namespace, r.name)
			if err != nil {
				if !(o.IgnoreNotFound && apierrors.IsNotFound(err)) {
					errs = append(errs, err)
				}
				continue
			}
			infos = append(infos, &Info{Mapping: r.mapping, Namespace: r.namespace, Name: r.name, Object: obj})
			continue
		}
		opts := metav1.ListOptions{LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector, Limit: chunk}
		err := f.list(ctx, r.mapping, r.namespace, opts, func(obj runtime.Object) error {
			infos = append(infos, &Info{Mapping: r.mapping, Namespace: r.namespace, Object: obj})
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return infos, errs
}

// runGet prints the selected objects: as tables (one group per type, a
// blank line between groups, names prefixed by kind when several types are
// shown), or through the -o printer.
func runGet(ctx context.Context, o *GetOptions) error {
	if o.Watch || o.WatchOnly {
		return runWatch(ctx, o)
	}
	reqs, single, err := o.requests()
	if err != nil {
		return err
	}
	infos, errs := o.fetch(ctx, reqs)
	if !o.PrintFlags.IsHumanReadable() {
		return o.printGeneric(infos, errs, single)
	}

	if o.PrintFlags.SortBy != "" {
		for _, info := range infos {
			if err := sortObject(info.Object, o.PrintFlags.SortBy); err != nil {
				return err
			}
		}
	}

	printWithKind := multipleGVKsRequested(infos)
	tracking := &trackingWriter{delegate: o.Streams.Out}
	separator := &separatorWriter{delegate: tracking}
	w := NewTabWriter(separator)
	allNamespaced := !o.AllNamespaces
	var printer ResourcePrinter
	var lastMapping *meta.RESTMapping
	for _, info := range infos {
		allNamespaced = allNamespaced && info.Namespaced()
		withNamespace := o.AllNamespaces && info.Namespaced()
		if printer == nil || lastMapping == nil || info.Mapping.Resource != lastMapping.Resource {
			if err := w.Flush(); err != nil {
				return err
			}
			w.ResetWidths()
			if lastMapping != nil && !o.PrintFlags.NoHeaders && tracking.written > 0 {
				separator.ready = true
			}
			pf := o.PrintFlags
			pf.Kind = info.Mapping.GroupVersionKind.GroupKind()
			pf.WithNamespace = withNamespace
			pf.WithKind = printWithKind
			if printer, err = pf.ToPrinter(); err != nil {
				return err
			}
			lastMapping = info.Mapping
		}
		if err := printer.PrintObj(info.Object, w); err != nil {
			errs = append(errs, err)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if tracking.written == 0 && !o.IgnoreNotFound && len(errs) == 0 {
		if allNamespaced {
			fmt.Fprintf(o.Streams.ErrOut, "No resources found in %s namespace.\n", o.Namespace)
		} else {
			fmt.Fprintln(o.Streams.ErrOut, "No resources found")
		}
	}
	return utilerrors.NewAggregate(errs)
}

// printGeneric prints through a non-table printer: one named object as
// itself, anything else as a List of all the items.
func (o *GetOptions) printGeneric(infos []*Info, errs []error, single bool) error {
	if len(errs) > 0 && single {
		return utilerrors.Reduce(utilerrors.Flatten(utilerrors.NewAggregate(errs)))
	}
	if len(infos) == 0 && o.IgnoreNotFound {
		return utilerrors.Reduce(utilerrors.Flatten(utilerrors.NewAggregate(errs)))
	}
	printer, err := o.PrintFlags.ToPrinter()
	if err != nil {
		return err
	}
	var items []runtime.Object
	for _, info := range infos {
		if meta.IsListType(info.Object) {
			list, err := meta.ExtractList(info.Object)
			if err != nil {
				return err
			}
			items = append(items, list...)
			continue
		}
		items = append(items, info.Object)
	}

	var obj runtime.Object
	if single && len(items) == 1 {
		obj = items[0]
	} else {
		list := &unstructured.UnstructuredList{Object: map[string]any{
			"kind":       "List",
			"apiVersion": "v1",
			"metadata":   map[string]any{"resourceVersion": ""},
		}}
		for _, item := range items {
			u, err := toUnstructured(item)
			if err != nil {
				return err
			}
			list.Items = append(list.Items, *u)
		}
		if o.PrintFlags.SortBy != "" {
			if err := sortObject(list, o.PrintFlags.SortBy); err != nil {
				return err
			}
		}
		obj = list
	}
	if err := printer.PrintObj(obj, o.Streams.Out); err != nil {
		errs = append(errs, err)
	}
	return utilerrors.Reduce(utilerrors.Flatten(utilerrors.NewAggregate(errs)))
}

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	data, err := json.Marshal(&corev1.List{Items: []runtime.RawExtension{{Object: obj}}})
	if err != nil {
		return nil, err
	}
	var m struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m.Items[0]}, nil
}

func multipleGVKsRequested(infos []*Info) bool {
	if len(infos) < 2 {
		return false
	}
	gvk := infos[0].Mapping.GroupVersionKind
	for _, info := range infos {
		if info.Mapping.GroupVersionKind != gvk {
			return true
		}
	}
	return false
}

// trackingWriter counts the bytes written, to know whether anything was.
type trackingWriter struct {
	delegate io.Writer
	written  int
}

func (t *trackingWriter) Write(p []byte) (int, error) {
	t.written += len(p)
	return t.delegate.Write(p)
}

// separatorWriter writes a blank line before the next output once ready:
// the line between two groups of a multi-type get.
type separatorWriter struct {
	delegate io.Writer
	ready    bool
}

func (s *separatorWriter) Write(p []byte) (int, error) {
	if len(p) != 0 && s.ready {
		if _, err := fmt.Fprintln(s.delegate); err != nil {
			return 0, err
		}
		s.ready = false
	}
	return s.delegate.Write(p)
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
