package cli

import (
	"context"

	"github.com/spf13/cobra"
	kcp "k8s.io/kubectl/pkg/cmd/cp"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// NewCmdCp returns the cp command: kubectl's copy options (a tar stream
// through exec both ways, its path checks and warnings) run over
// minikctl's factory.
func NewCmdCp(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdCp(f, streams, func(ctx context.Context, o *kcp.CopyOptions) error { return o.Run() })
}

func newCmdCp(f *Factory, streams IOStreams, runF func(context.Context, *kcp.CopyOptions) error) *cobra.Command {
	o := kcp.NewCopyOptions(kubectlStreams(streams))
	cmd := &cobra.Command{
		Use:                   "cp <file-spec-src> <file-spec-dest>",
		DisableFlagsInUseLine: true,
		Short:                 "Copy files and directories to and from containers",
		Long:                  "Copy files and directories to and from containers.",
		Example: `  # !!!Important Note!!!
  # Requires that the 'tar' binary is present in your container
  # image.  If 'tar' is not present, 'minikctl cp' will fail.

  # Copy /tmp/foo_dir local directory to /tmp/bar_dir in a remote pod in the default namespace
  minikctl cp /tmp/foo_dir <some-pod>:/tmp/bar_dir

  # Copy /tmp/foo local file to /tmp/bar in a remote pod in a specific container
  minikctl cp /tmp/foo <some-pod>:/tmp/bar -c <specific-container>

  # Copy /tmp/foo local file to /tmp/bar in a remote pod in namespace <some-namespace>
  minikctl cp /tmp/foo <some-namespace>/<some-pod>:/tmp/bar

  # Copy /tmp/foo from a remote pod to /tmp/bar locally
  minikctl cp <some-namespace>/<some-pod>:/tmp/foo /tmp/bar`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(kubectlFactory(f), cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			o.Executor = streamExecutor{ctx: cmd.Context()}
			return runF(cmd.Context(), o)
		},
	}
	cmdutil.AddContainerVarFlags(cmd, &o.Container, o.Container)
	cmd.Flags().BoolVarP(&o.NoPreserve, "no-preserve", "", false, "The copied file/directory's ownership and permissions will not be preserved in the container")
	cmd.Flags().IntVarP(&o.MaxTries, "retries", "", 0, "Set number of retries to complete a copy operation from a container. Specify 0 to disable or any negative value for infinite retrying. The default is 0 (no retry).")
	return cmd
}
