package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// NewRootCommand returns minikctl's root command with its global flags and
// verbs, writing to streams. Commands return errors; they do not print
// them (see Run).
func NewRootCommand(streams IOStreams) *cobra.Command {
	flags := NewConfigFlags()
	f := NewFactory(flags, streams)
	cmd := &cobra.Command{
		Use:   "minikctl",
		Short: "minikctl controls the minik cluster manager",
		Long: `minikctl controls the minik cluster manager: a kubectl twin for minikd.

 Find more information at the project's README.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Run: func(cmd *cobra.Command, args []string) {
			cmd.SetOut(streams.Out)
			_ = cmd.Help()
		},
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	flags.AddFlags(cmd.PersistentFlags())
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return flagError{fmt.Errorf("%s\nSee '%s --help' for usage.", err, c.CommandPath())}
	})
	cmd.CompletionOptions.DisableDefaultCmd = true
	cmd.AddCommand(
		NewCmdApply(f, streams),
		NewCmdGet(f, streams),
		NewCmdDescribe(f, streams),
		NewCmdLogs(f, streams),
		NewCmdRollout(f, streams),
		NewCmdDelete(f, streams),
		NewCmdScale(f, streams),
		NewCmdPatch(f, streams),
		NewCmdSet(f, streams),
		NewCmdEdit(f, streams),
		NewCmdCreate(f, streams),
		NewCmdLabel(f, streams),
		NewCmdAnnotate(f, streams),
		NewCmdTaint(f, streams),
		NewCmdCordon(f, streams),
		NewCmdUncordon(f, streams),
		NewCmdDrain(f, streams),
		NewCmdWait(f, streams),
		NewCmdEvents(f, streams),
		NewCmdAPIResources(f, streams),
		NewCmdAPIVersions(f, streams),
		NewCmdVersion(f, streams),
		NewCmdConfig(f, streams),
		NewCmdCompletion(streams),
		NewCmdAuth(f, streams),
		NewCmdRun(f, streams),
		NewCmdExpose(f, streams),
		NewCmdReplace(f, streams),
		NewCmdDiff(f, streams),
		NewCmdExplain(f, streams),
		NewCmdKustomize(streams),
		NewCmdExec(f, streams),
		NewCmdAttach(f, streams),
		NewCmdCp(f, streams),
		NewCmdPortForward(f, streams),
		NewCmdDebug(f, streams),
		NewCmdTop(f, streams),
		NewCmdJourney(f, streams),
		NewCmdCertificate(f, streams),
	)
	return cmd
}

// subcommandRun is the run of a command that only groups subcommands, as
// kubectl's DefaultSubCommandRun: an unknown subcommand is a usage error;
// none prints the help to out and fails, so a script never sees success
// for a command that did nothing.
func subcommandRun(out io.Writer) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageErrorf(cmd, "unknown command %q", strings.Join(args, " "))
		}
		cmd.SetOut(out)
		cmd.SetErr(out)
		if err := cmd.Help(); err != nil {
			return err
		}
		return ErrExit
	}
}

// Run executes minikctl with args (without the program name) and returns
// the process exit code, having printed any error as kubectl does.
func Run(ctx context.Context, args []string, streams IOStreams) int {
	cmd := NewRootCommand(streams)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	return PrintError(streams.ErrOut, err)
}
