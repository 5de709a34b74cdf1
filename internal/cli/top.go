package cli

import (
	"github.com/spf13/cobra"
	ktop "k8s.io/kubectl/pkg/cmd/top"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// NewCmdTop returns the top command and its node and pod subcommands:
// kubectl's options (metrics.k8s.io through k8s.io/metrics' clientset,
// kubectl's columns, sorting, --containers, --sum, and "Metrics API not
// available" when the server does not serve the group) over minikctl's
// factory. Without a subcommand it prints its help and fails, as kubectl.
func NewCmdTop(f *Factory, streams IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Display resource (CPU/memory) usage",
		Long: `Display resource (CPU/memory) usage.

 The top command allows you to see the resource consumption for nodes or pods.

 This command requires the Metrics API (metrics.k8s.io) to be served; minikd serves it from its simulated nodes.`,
		SuggestFor: []string{"stats"},
		RunE:       subcommandRun(streams.ErrOut),
	}
	cmd.AddCommand(newCmdTopNode(f, streams, func(o *ktop.TopNodeOptions) error { return o.RunTopNode() }))
	cmd.AddCommand(newCmdTopPod(f, streams, func(o *ktop.TopPodOptions) error { return o.RunTopPod() }))
	return cmd
}

func newCmdTopNode(f *Factory, streams IOStreams, runF func(*ktop.TopNodeOptions) error) *cobra.Command {
	o := &ktop.TopNodeOptions{IOStreams: kubectlStreams(streams), UseProtocolBuffers: true}
	cmd := &cobra.Command{
		Use:                   "node [NAME | -l label]",
		DisableFlagsInUseLine: true,
		Short:                 "Display resource (CPU/memory) usage of nodes",
		Long: `Display resource (CPU/memory) usage of nodes.

 The top-node command allows you to see the resource consumption of nodes.`,
		Example: `  # Show metrics for all nodes
  minikctl top node

  # Show metrics for a given node
  minikctl top node NODE_NAME`,
		Aliases: []string{"nodes", "no"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(kubectlFactory(f), cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return runF(o)
		},
	}
	cmdutil.AddLabelSelectorFlagVar(cmd, &o.Selector)
	cmd.Flags().StringVar(&o.SortBy, "sort-by", o.SortBy, "If non-empty, sort nodes list using specified field. The field can be either 'cpu' or 'memory'.")
	cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", o.NoHeaders, "If present, print output without headers")
	cmd.Flags().BoolVar(&o.UseProtocolBuffers, "use-protocol-buffers", o.UseProtocolBuffers, "Enables using protocol-buffers to access Metrics API.")
	cmd.Flags().BoolVar(&o.ShowCapacity, "show-capacity", o.ShowCapacity, "Print node resources based on Capacity instead of Allocatable(default) of the nodes.")
	cmd.Flags().BoolVar(&o.ShowSwap, "show-swap", o.ShowSwap, "Print node resources related to swap memory.")
	return cmd
}

func newCmdTopPod(f *Factory, streams IOStreams, runF func(*ktop.TopPodOptions) error) *cobra.Command {
	o := &ktop.TopPodOptions{IOStreams: kubectlStreams(streams), UseProtocolBuffers: true}
	cmd := &cobra.Command{
		Use:                   "pod [NAME | -l label]",
		DisableFlagsInUseLine: true,
		Short:                 "Display resource (CPU/memory) usage of pods",
		Long: `Display resource (CPU/memory) usage of pods.

 The 'top pod' command allows you to see the resource consumption of pods.

 Due to the metrics pipeline delay, they may be unavailable for a few minutes since pod creation.`,
		Example: `  # Show metrics for all pods in the default namespace
  minikctl top pod

  # Show metrics for all pods in the given namespace
  minikctl top pod --namespace=NAMESPACE

  # Show metrics for a given pod and its containers
  minikctl top pod POD_NAME --containers

  # Show metrics for the pods defined by label name=myLabel
  minikctl top pod -l name=myLabel`,
		Aliases: []string{"pods", "po"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(kubectlFactory(f), cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return runF(o)
		},
	}
	cmdutil.AddLabelSelectorFlagVar(cmd, &o.LabelSelector)
	cmd.Flags().StringVar(&o.FieldSelector, "field-selector", o.FieldSelector, "Selector (field query) to filter on, supports '=', '==', and '!='.(e.g. --field-selector key1=value1,key2=value2). The server only supports a limited number of field queries per type.")
	cmd.Flags().StringVar(&o.SortBy, "sort-by", o.SortBy, "If non-empty, sort pods list using specified field. The field can be either 'cpu' or 'memory'.")
	cmd.Flags().BoolVar(&o.PrintContainers, "containers", o.PrintContainers, "If present, print usage of containers within a pod.")
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", o.AllNamespaces, "If present, list the requested object(s) across all namespaces. Namespace in current context is ignored even if specified with --namespace.")
	cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", o.NoHeaders, "If present, print output without headers.")
	cmd.Flags().BoolVar(&o.UseProtocolBuffers, "use-protocol-buffers", o.UseProtocolBuffers, "Enables using protocol-buffers to access Metrics API.")
	cmd.Flags().BoolVar(&o.Sum, "sum", o.Sum, "Print the sum of the resource usage")
	cmd.Flags().BoolVar(&o.ShowSwap, "show-swap", o.ShowSwap, "Print pod resources related to swap memory.")
	return cmd
}
