package cli

import (
	"github.com/spf13/cobra"
	kdebug "k8s.io/kubectl/pkg/cmd/debug"
)

// NewCmdDebug returns the debug command: kubectl's debug options (an
// ephemeral container added through pods/ephemeralcontainers, --target,
// --copy-to, node debugging pods, profiles; with -i it waits for the
// container and attaches) run over minikctl's factory.
func NewCmdDebug(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdDebug(f, streams, func(o *kdebug.DebugOptions, cmd *cobra.Command) error {
		return o.Run(kubectlFactory(f), cmd)
	})
}

func newCmdDebug(f *Factory, streams IOStreams, runF func(*kdebug.DebugOptions, *cobra.Command) error) *cobra.Command {
	o := kdebug.NewDebugOptions(kubectlStreams(streams))
	cmd := &cobra.Command{
		Use:                   "debug (POD | TYPE[[.VERSION].GROUP]/NAME) [ -- COMMAND [args...] ]",
		DisableFlagsInUseLine: true,
		Short:                 "Create debugging sessions for troubleshooting workloads and nodes",
		Long: `Debug cluster resources using interactive debugging containers.

 'debug' provides automation for common debugging tasks for cluster objects identified by resource and name. Pods will be used by default if no resource is specified.

 The action taken by 'debug' varies depending on what resource is specified. Supported actions include:

  *  Workload: Create a copy of an existing pod with certain attributes changed, for example changing the image tag to a new version.
  *  Workload: Add an ephemeral container to an already running pod, for example to add debugging utilities without restarting the pod.
  *  Node: Create a new pod that runs in the node's host namespaces and can access the node's filesystem.`,
		Example: `  # Create an interactive debugging session in pod mypod and immediately attach to it.
  minikctl debug mypod -it --image=busybox

  # Create a debug container named debugger using a custom automated debugging image.
  minikctl debug --image=myproj/debug-tools -c debugger mypod

  # Create an interactive debugging session targeting the processes of container app in pod mypod.
  minikctl debug mypod -it --image=busybox --target=app

  # Create a copy of mypod adding a debug container and attach to it
  minikctl debug mypod -it --image=busybox --copy-to=my-debugger

  # Create an interactive debugging session on a node and immediately attach to it.
  # The container will run in the host namespaces and the host's filesystem will be mounted at /host
  minikctl debug node/mynode -it --image=busybox`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(kubectlFactory(f), cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return runF(o, cmd)
		},
	}
	o.AddFlags(cmd)
	return cmd
}
