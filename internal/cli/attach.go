package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	kattach "k8s.io/kubectl/pkg/cmd/attach"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// defaultPodAttachTimeout is attach's --pod-running-timeout default, as kubectl's.
const defaultPodAttachTimeout = 60 * time.Second

// defaultDetachSequence is kubectl's --detach-keys default.
const defaultDetachSequence = "ctrl-p,ctrl-q"

// NewCmdAttach returns the attach command: kubectl's attach options (pod
// or TYPE/NAME, TTY forced to the container's, the session notices and
// the reattach hint) run over minikctl's factory.
func NewCmdAttach(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdAttach(f, streams, func(ctx context.Context, o *kattach.AttachOptions) error { return o.Run() })
}

func newCmdAttach(f *Factory, streams IOStreams, runF func(context.Context, *kattach.AttachOptions) error) *cobra.Command {
	o := kattach.NewAttachOptions(kubectlStreams(streams))
	cmd := &cobra.Command{
		Use:                   "attach (POD | TYPE/NAME) -c CONTAINER",
		DisableFlagsInUseLine: true,
		Short:                 "Attach to a running container",
		Long:                  "Attach to a process that is already running inside an existing container.",
		Example: `  # Get output from running pod mypod; use the 'kubectl.kubernetes.io/default-container' annotation
  # for selecting the container to be attached or the first container in the pod will be chosen
  minikctl attach mypod

  # Get output from ruby-container from pod mypod
  minikctl attach mypod -c ruby-container

  # Switch to raw terminal mode; sends stdin to 'bash' in ruby-container from pod mypod
  # and sends stdout/stderr from 'bash' back to the client
  minikctl attach mypod -c ruby-container -i -t

  # Get output from the first pod of a replica set named nginx
  minikctl attach rs/nginx`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(kubectlFactory(f), cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			o.Attach = streamExecutor{ctx: cmd.Context()}
			return runF(cmd.Context(), o)
		},
	}
	cmdutil.AddPodRunningTimeoutFlag(cmd, defaultPodAttachTimeout)
	cmdutil.AddContainerVarFlags(cmd, &o.ContainerName, o.ContainerName)
	cmd.Flags().BoolVarP(&o.Stdin, "stdin", "i", o.Stdin, "Pass stdin to the container")
	cmd.Flags().BoolVarP(&o.TTY, "tty", "t", o.TTY, "Stdin is a TTY")
	cmd.Flags().BoolVarP(&o.Quiet, "quiet", "q", o.Quiet, "Only print output from the remote session")
	cmd.Flags().StringVar(&o.DetachKeys, "detach-keys", defaultDetachSequence, "Override the key sequence for detaching a container")
	return cmd
}
