package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	kexec "k8s.io/kubectl/pkg/cmd/exec"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// defaultPodExecTimeout is exec's --pod-running-timeout default, as kubectl's.
const defaultPodExecTimeout = 60 * time.Second

// NewCmdExec returns the exec command: kubectl's exec options (pod or
// TYPE/NAME resolution, the "Defaulted container" notice, container
// validation, raw terminal and resize with -it) run over minikctl's
// factory. A remote exit code becomes minikctl's (see PrintError).
func NewCmdExec(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdExec(f, streams, func(ctx context.Context, o *kexec.ExecOptions) error { return o.Run() })
}

func newCmdExec(f *Factory, streams IOStreams, runF func(context.Context, *kexec.ExecOptions) error) *cobra.Command {
	o := &kexec.ExecOptions{StreamOptions: kexec.StreamOptions{IOStreams: kubectlStreams(streams)}}
	cmd := &cobra.Command{
		Use:                   "exec (POD | TYPE/NAME) [-c CONTAINER] [flags] -- COMMAND [args...]",
		DisableFlagsInUseLine: true,
		Short:                 "Execute a command in a container",
		Long:                  "Execute a command in a container.",
		Example: `  # Get output from running the 'date' command from pod mypod, using the first container by default
  minikctl exec mypod -- date

  # Get output from running the 'date' command in ruby-container from pod mypod
  minikctl exec mypod -c ruby-container -- date

  # Switch to raw terminal mode; sends stdin to 'bash' in ruby-container from pod mypod
  # and sends stdout/stderr from 'bash' back to the client
  minikctl exec mypod -c ruby-container -i -t -- bash -il

  # Get output from running 'date' command from the first pod of the deployment mydeployment, using the first container by default
  minikctl exec deploy/mydeployment -- date

  # Get output from running 'date' command from the first pod of the service myservice, using the first container by default
  minikctl exec svc/myservice -- date`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(kubectlFactory(f), cmd, args, cmd.ArgsLenAtDash()); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			o.Executor = streamExecutor{ctx: cmd.Context()}
			return runF(cmd.Context(), o)
		},
	}
	cmdutil.AddPodRunningTimeoutFlag(cmd, defaultPodExecTimeout)
	cmdutil.AddJsonFilenameFlag(cmd.Flags(), &o.FilenameOptions.Filenames, "to use to exec into the resource")
	cmdutil.AddContainerVarFlags(cmd, &o.ContainerName, o.ContainerName)
	cmd.Flags().BoolVarP(&o.Stdin, "stdin", "i", o.Stdin, "Pass stdin to the container")
	cmd.Flags().BoolVarP(&o.TTY, "tty", "t", o.TTY, "Stdin is a TTY")
	cmd.Flags().BoolVarP(&o.Quiet, "quiet", "q", o.Quiet, "Only print output from the remote session")
	return cmd
}
