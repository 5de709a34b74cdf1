package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	goruntime "runtime"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/clientcmd/api/latest"
	"sigs.k8s.io/yaml"
)

// ClientVersion is the kubectl release minikctl is the twin of; set at
// build time with -ldflags "-X minik/internal/cli.ClientVersion=...".
var ClientVersion = "v1.37.2"

// NewCmdAPIResources returns the api-resources command.
func NewCmdAPIResources(f *Factory, streams IOStreams) *cobra.Command {
	var output, apiGroup, sortBy string
	var namespaced, noHeaders, cached bool
	var verbs, categories []string
	cmd := &cobra.Command{
		Use:   "api-resources",
		Short: "Print the supported API resources on the server",
		Long:  "Print the supported API resources on the server.",
		Example: `  # Print the supported API resources
  minikctl api-resources

  # Print the supported namespaced resources
  minikctl api-resources --namespaced=true`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usageErrorf(cmd, "unexpected arguments: %v", args)
			}
			if output != "" && output != "wide" && output != "name" {
				return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: name,wide", output)
			}
			if sortBy != "" && sortBy != "name" && sortBy != "kind" {
				return errors.New("--sort-by accepts only name or kind")
			}
			dc, err := f.Discovery()
			if err != nil {
				return err
			}
			if !cached {
				dc.Invalidate()
			}
			lists, err := dc.ServerPreferredResources()
			var errs []error
			if err != nil {
				errs = append(errs, err)
			}
			var all []metav1.APIResource
			for _, list := range lists {
				gv, err := schema.ParseGroupVersion(list.GroupVersion)
				if err != nil {
					continue
				}
				for _, r := range list.APIResources {
					if len(r.Verbs) == 0 {
						continue
					}
					if cmd.Flags().Changed("api-group") && apiGroup != gv.Group {
						continue
					}
					if cmd.Flags().Changed("namespaced") && namespaced != r.Namespaced {
						continue
					}
					if len(verbs) > 0 && !sets.New(r.Verbs...).HasAll(verbs...) {
						continue
					}
					if len(categories) > 0 && !sets.New(r.Categories...).HasAll(categories...) {
						continue
					}
					r.Group, r.Version = gv.Group, gv.Version
					all = append(all, r)
				}
			}
			sort.SliceStable(all, func(i, j int) bool {
				a, b := all[i].Group, all[j].Group
				switch sortBy {
				case "name":
					a, b = all[i].Name, all[j].Name
				case "kind":
					a, b = all[i].Kind, all[j].Kind
				}
				if a != b {
					return a < b
				}
				return all[i].Name < all[j].Name
			})
			w := NewTabWriter(streams.Out)
			defer w.Flush()
			if output == "name" {
				for _, r := range all {
					name := r.Name
					if r.Group != "" {
						name += "." + r.Group
					}
					fmt.Fprintf(w, "%s\n", name)
				}
				return aggregate(errs)
			}
			if !noHeaders {
				cols := []string{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"}
				if output == "wide" {
					cols = append(cols, "VERBS", "CATEGORIES")
				}
				fmt.Fprintf(w, "%s\n", strings.Join(cols, "\t"))
			}
			for _, r := range all {
				gv := schema.GroupVersion{Group: r.Group, Version: r.Version}.String()
				if output == "wide" {
					fmt.Fprintf(w, "%s\t%s\t%s\t%v\t%s\t%v\t%v\n", r.Name, strings.Join(r.ShortNames, ","), gv, r.Namespaced, r.Kind, strings.Join(r.Verbs, ","), strings.Join(r.Categories, ","))
					continue
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%v\t%s\n", r.Name, strings.Join(r.ShortNames, ","), gv, r.Namespaced, r.Kind)
			}
			return aggregate(errs)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format. One of: (wide, name).")
	cmd.Flags().BoolVar(&noHeaders, "no-headers", false, "When using the default or custom-column output format, don't print headers (default print headers).")
	cmd.Flags().StringVar(&apiGroup, "api-group", "", "Limit to resources in the specified API group.")
	cmd.Flags().BoolVar(&namespaced, "namespaced", true, "If false, non-namespaced resources will be returned, otherwise returning namespaced resources by default.")
	cmd.Flags().StringSliceVar(&verbs, "verbs", nil, "Limit to resources that support the specified verbs.")
	cmd.Flags().StringVar(&sortBy, "sort-by", "", "If non-empty, sort list of resources using specified field. The field can be either 'name' or 'kind'.")
	cmd.Flags().BoolVar(&cached, "cached", false, "Use the cached list of resources if available.")
	cmd.Flags().StringSliceVar(&categories, "categories", nil, "Limit to resources that belong to the specified categories.")
	return cmd
}

// NewCmdAPIVersions returns the api-versions command.
func NewCmdAPIVersions(f *Factory, streams IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:     "api-versions",
		Short:   "Print the supported API versions on the server, in the form of \"group/version\"",
		Long:    "Print the supported API versions on the server, in the form of \"group/version\".",
		Example: "  # Print the supported API versions\n  minikctl api-versions",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usageErrorf(cmd, "unexpected arguments: %v", args)
			}
			dc, err := f.Discovery()
			if err != nil {
				return err
			}
			dc.Invalidate()
			groups, err := dc.ServerGroups()
			if err != nil {
				return fmt.Errorf("couldn't get available api versions from server: %v", err)
			}
			versions := metav1.ExtractGroupVersions(groups)
			sort.Strings(versions)
			for _, v := range versions {
				fmt.Fprintln(streams.Out, v)
			}
			return nil
		},
	}
}

// NewCmdVersion returns the version command.
func NewCmdVersion(f *Factory, streams IOStreams) *cobra.Command {
	var clientOnly bool
	var output string
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the client and server version information",
		Long:    "Print the client and server version information for the current context.",
		Example: "  # Print the client and server versions for the current context\n  minikctl version",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usageErrorf(cmd, "extra arguments: %v", args)
			}
			if output != "" && output != "yaml" && output != "json" {
				return errors.New(`--output must be 'yaml' or 'json'`)
			}
			type versions struct {
				ClientVersion    *apimachineryversion.Info `json:"clientVersion,omitempty"`
				KustomizeVersion string                    `json:"kustomizeVersion,omitempty"`
				ServerVersion    *apimachineryversion.Info `json:"serverVersion,omitempty"`
			}
			v := versions{ClientVersion: &apimachineryversion.Info{Major: "1", Minor: "37", GitVersion: ClientVersion, GitTreeState: "clean", GoVersion: goVersion(), Compiler: "gc", Platform: platform()}}
			var serverErr error
			if !clientOnly {
				dc, err := f.Discovery()
				if err == nil {
					dc.Invalidate()
					v.ServerVersion, serverErr = dc.ServerVersion()
				} else {
					serverErr = err
				}
			}
			switch output {
			case "":
				fmt.Fprintf(streams.Out, "Client Version: %s\n", v.ClientVersion.GitVersion)
				if v.ServerVersion != nil {
					fmt.Fprintf(streams.Out, "Server Version: %s\n", v.ServerVersion.GitVersion)
				}
			case "yaml":
				data, err := yaml.Marshal(&v)
				if err != nil {
					return err
				}
				fmt.Fprintln(streams.Out, string(data))
			case "json":
				data, err := json.MarshalIndent(&v, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(streams.Out, string(data))
			}
			return serverErr
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "If true, shows client version only (no server required).")
	cmd.Flags().StringVarP(&output, "output", "o", "", "One of 'yaml' or 'json'.")
	return cmd
}

// NewCmdConfig returns the config command with view, get-contexts,
// use-context and current-context.
func NewCmdConfig(f *Factory, streams IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:                   "config SUBCOMMAND",
		DisableFlagsInUseLine: true,
		Short:                 "Modify kubeconfig files",
		Long: `Modify kubeconfig files using subcommands like "minikctl config set current-context my-context".

 The loading order follows these rules:

  1.  If the --kubeconfig flag is set, then only that file is loaded. The flag may only be set once and no merging takes place.
  2.  If $KUBECONFIG environment variable is set, then it is used as a list of paths (normal path delimiting rules for your system). These paths are merged. When a value is modified, it is modified in the file that defines the stanza. When a value is created, it is created in the first file that exists. If no files in the chain exist, then it creates the last file in the list.
  3.  Otherwise, ${HOME}/.kube/config is used and no merging takes place.`,
		RunE: subcommandRun(streams.ErrOut),
	}
	var minify, raw, flatten bool
	viewPrint := &PrintFlags{OutputFormat: "yaml"}
	view := &cobra.Command{
		Use:   "view",
		Short: "Display merged kubeconfig settings or a specified kubeconfig file",
		Long:  "Display merged kubeconfig settings or a specified kubeconfig file.\n\n You can use --output jsonpath={...} to extract specific values using a jsonpath expression.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usageErrorf(cmd, "unexpected arguments: %v", args)
			}
			raw0, err := f.ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				return err
			}
			config := &raw0
			if minify {
				if err := clientcmdapi.MinifyConfig(config); err != nil {
					return err
				}
			}
			if flatten {
				if err := clientcmdapi.FlattenConfig(config); err != nil {
					return err
				}
			} else if !raw {
				if err := clientcmdapi.RedactSecrets(config); err != nil {
					return err
				}
				clientcmdapi.ShortenConfig(config)
			}
			converted, err := latest.Scheme.ConvertToVersion(config, latest.ExternalVersion)
			if err != nil {
				return err
			}
			pf := *viewPrint
			if pf.OutputFormat == "" || !cmd.Flags().Changed("output") && pf.Template != "" {
				// As kubectl's: YAML by default, a go-template when
				// --template is given without -o.
				pf.OutputFormat = ""
				if pf.Template == "" {
					pf.OutputFormat = "yaml"
				}
			}
			printer, err := pf.ToPrinter()
			if err != nil {
				return err
			}
			data, err := json.Marshal(converted)
			if err != nil {
				return err
			}
			obj, err := decodeObject(data)
			if err != nil {
				return err
			}
			return printer.PrintObj(obj, streams.Out)
		},
	}
	view.Flags().BoolVar(&minify, "minify", false, "Remove all information not used by current-context from the output")
	view.Flags().BoolVar(&raw, "raw", false, "Display raw byte data and sensitive data")
	view.Flags().BoolVar(&flatten, "flatten", false, "Flatten the resulting kubeconfig file into self-contained output (useful for creating portable kubeconfig files)")
	viewPrint.AddFlags(view)

	var noHeaders bool
	var ctxOutput string
	getContexts := &cobra.Command{
		Use:   "get-contexts [(-o|--output=)name)]",
		Short: "Describe one or many contexts",
		Long:  "Display one or many contexts from the kubeconfig file.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if ctxOutput != "" && ctxOutput != "name" {
				return fmt.Errorf("--output %v is not available in kubectl config get-contexts; resetting to default output format", ctxOutput)
			}
			config, err := f.ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				return err
			}
			nameOnly := ctxOutput == "name"
			w := NewTabWriter(streams.Out)
			defer w.Flush()
			if !noHeaders && !nameOnly {
				fmt.Fprintf(w, "%s\n", strings.Join([]string{"CURRENT", "NAME", "CLUSTER", "AUTHINFO", "NAMESPACE"}, "\t"))
			}
			names := args
			if len(names) == 0 {
				for n := range config.Contexts {
					names = append(names, n)
				}
				sort.Strings(names)
			}
			var errs []error
			for _, n := range names {
				c, ok := config.Contexts[n]
				if !ok {
					errs = append(errs, fmt.Errorf("context %v not found", n))
					continue
				}
				if nameOnly {
					fmt.Fprintf(w, "%s\n", n)
					continue
				}
				prefix := " "
				if n == config.CurrentContext {
					prefix = "*"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", prefix, n, c.Cluster, c.AuthInfo, c.Namespace)
			}
			return aggregate(errs)
		},
	}
	getContexts.Flags().BoolVar(&noHeaders, "no-headers", false, "When using the default or custom-column output format, don't print headers (default print headers).")
	getContexts.Flags().StringVarP(&ctxOutput, "output", "o", "", "Output format. One of: (name).")

	useContext := &cobra.Command{
		Use:     "use-context CONTEXT_NAME",
		Aliases: []string{"use"},
		Short:   "Set the current-context in a kubeconfig file",
		Long:    "Set the current-context in a kubeconfig file.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				if len(args) == 0 {
					return fmt.Errorf("Unexpected args: %v\nSee '%s -h' for help and examples", args, cmd.CommandPath())
				}
				return fmt.Errorf("Unexpected args: %v\nSee '%s -h' for help and examples", args[1:], cmd.CommandPath())
			}
			loader := f.ToRawKubeConfigLoader()
			config, err := loader.RawConfig()
			if err != nil {
				return err
			}
			if _, ok := config.Contexts[args[0]]; !ok {
				return fmt.Errorf("no context exists with the name: %q", args[0])
			}
			config.CurrentContext = args[0]
			if err := clientcmd.ModifyConfig(loader.ConfigAccess(), config, true); err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "Switched to context %q.\n", args[0])
			return nil
		},
	}
	currentContext := &cobra.Command{
		Use:   "current-context",
		Short: "Display the current-context",
		Long:  "Display the current-context.",
		RunE: func(cmd *cobra.Command, args []string) error {
			config, err := f.ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				return err
			}
			if config.CurrentContext == "" {
				return errors.New("current-context is not set")
			}
			fmt.Fprintf(streams.Out, "%s\n", config.CurrentContext)
			return nil
		},
	}
	cmd.AddCommand(view, getContexts, useContext, currentContext, newCmdConfigSetContext(f, streams))
	return cmd
}

// helpErrorf is the error of kubectl's config subcommands: the help on
// stdout, then the message alone.
func helpErrorf(cmd *cobra.Command, format string, args ...any) error {
	if err := cmd.Help(); err != nil {
		return err
	}
	return fmt.Errorf(format, args...)
}

// newCmdConfigSetContext returns config set-context: it creates or
// modifies a context of the kubeconfig file, merging the given fields.
func newCmdConfigSetContext(f *Factory, streams IOStreams) *cobra.Command {
	var current bool
	var cluster, authInfo, namespace string
	cmd := &cobra.Command{
		Use:                   "set-context [NAME | --current] [--cluster=cluster_nickname] [--user=user_nickname] [--namespace=namespace]",
		DisableFlagsInUseLine: true,
		Short:                 "Set a context entry in kubeconfig",
		Long:                  "Set a context entry in kubeconfig.\n\n Specifying a name that already exists will merge new fields on top of existing values for those fields.",
		Example: `  # Set the user field on the gce context entry without touching other values
  minikctl config set-context gce --user=cluster-admin`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return helpErrorf(cmd, "Unexpected args: %v", args)
			}
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			if name == "" && !current {
				return errors.New("you must specify a non-empty context name or --current")
			}
			if name != "" && current {
				return errors.New("you cannot specify both a context name and --current")
			}
			access := f.ToRawKubeConfigLoader().ConfigAccess()
			config, err := access.GetStartingConfig()
			if err != nil {
				return err
			}
			if current {
				if config.CurrentContext == "" {
					return errors.New("no current context is set")
				}
				name = config.CurrentContext
			}
			c, exists := config.Contexts[name]
			if !exists {
				c = clientcmdapi.NewContext()
			}
			modified := *c
			if cmd.Flags().Changed("cluster") {
				modified.Cluster = cluster
			}
			if cmd.Flags().Changed("user") {
				modified.AuthInfo = authInfo
			}
			if cmd.Flags().Changed("namespace") {
				modified.Namespace = namespace
			}
			config.Contexts[name] = &modified
			if err := clientcmd.ModifyConfig(access, *config, true); err != nil {
				return fmt.Errorf("write context %q: %w", name, err)
			}
			if exists {
				fmt.Fprintf(streams.Out, "Context %q modified.\n", name)
			} else {
				fmt.Fprintf(streams.Out, "Context %q created.\n", name)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&current, "current", false, "Modify the current context")
	cmd.Flags().StringVar(&cluster, "cluster", "", "cluster for the context entry in kubeconfig")
	cmd.Flags().StringVar(&authInfo, "user", "", "user for the context entry in kubeconfig")
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "namespace for the context entry in kubeconfig")
	return cmd
}

// NewCmdCompletion returns the completion command (bash, zsh, fish).
func NewCmdCompletion(streams IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:                   "completion SHELL",
		DisableFlagsInUseLine: true,
		Short:                 "Output shell completion code for the specified shell (bash, zsh, fish, or powershell)",
		Long:                  `Output shell completion code for the specified shell (bash, zsh, fish, or powershell). The shell code must be evaluated to provide interactive completion of minikctl commands.  This can be done by sourcing it from the .bash_profile.`,
		Example: `  # Load the minikctl completion code for bash into the current shell
  source <(minikctl completion bash)`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf(cmd, "Shell not specified.")
			}
			if len(args) > 1 {
				return usageErrorf(cmd, "Too many arguments. Expected only the shell type.")
			}
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(streams.Out, true)
			case "zsh":
				return root.GenZshCompletion(streams.Out)
			case "fish":
				return root.GenFishCompletion(streams.Out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(streams.Out)
			}
			return usageErrorf(cmd, "Unsupported shell type %q.", args[0])
		},
	}
}

func goVersion() string { return goruntime.Version() }

func platform() string { return goruntime.GOOS + "/" + goruntime.GOARCH }
