package cli

import (
	"context"
	"io"
	"net/url"
	"sync/atomic"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
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
			e := cpExecutor{streamExecutor: streamExecutor{ctx: cmd.Context()}, finished: &atomic.Bool{}}
			o.Executor = e
			defer e.finished.Store(true)
			return runF(cmd.Context(), o)
		},
	}
	cmdutil.AddContainerVarFlags(cmd, &o.Container, o.Container)
	cmd.Flags().BoolVarP(&o.NoPreserve, "no-preserve", "", false, "The copied file/directory's ownership and permissions will not be preserved in the container")
	cmd.Flags().IntVarP(&o.MaxTries, "retries", "", 0, "Set number of retries to complete a copy operation from a container. Specify 0 to disable or any negative value for infinite retrying. The default is 0 (no retry).")
	return cmd
}

// cpExecutor is the executor of cp's tar sessions. kubectl runs them
// from goroutines that exit the process on an error — harmless in
// kubectl, whose process has exited by then, but minikctl's context is
// cancelled when the command returns, and the sessions would then fail
// and exit the process (a test's, too). The remote tar stops at the
// archive's end marker: copying in, the rest of the last record is never
// read; copying out, the rest is never read locally. So once a session
// ends, what the archive still has to write is read and dropped, and a
// session that ends after the command has returned reports nothing.
type cpExecutor struct {
	streamExecutor
	finished *atomic.Bool
}

// Execute runs one tar session, then drains its stdin.
func (e cpExecutor) Execute(u *url.URL, cfg *rest.Config, stdin io.Reader, stdout, stderr io.Writer, tty bool, q remotecommand.TerminalSizeQueue) error {
	err := e.streamExecutor.Execute(u, cfg, stdin, stdout, stderr, tty, q)
	if stdin != nil {
		_, _ = io.Copy(io.Discard, stdin)
	}
	if e.finished.Load() {
		return nil
	}
	return err
}
