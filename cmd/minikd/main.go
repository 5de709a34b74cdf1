// Command minikd is minik's control plane: an embedded etcd and the
// Kubernetes API server in one process.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"minik/internal/server"
	"minik/internal/version"
)

func main() {
	if err := newCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	// The flags parse straight into cfg; only the logger is made after.
	cfg := server.Config{Out: os.Stdout, AutoNetwork: true}
	var logs logOptions
	cmd := &cobra.Command{
		Use:           "minikd",
		Short:         "minik's local Kubernetes control plane",
		Version:       version.Kubernetes + "+minik." + version.Minik,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := logs.logger()
			if err != nil {
				return err
			}
			cfg.Logger = logger
			s, err := server.New(cfg)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return s.Start(ctx)
		},
	}
	bindServerFlags(cmd.Flags(), &cfg)
	logs.bind(cmd.Flags())
	cmd.AddCommand(newAgentCommand())
	cmd.AddCommand(newKubeconfigCommand())
	cmd.AddCommand(newEtcdMemberCommand())
	return cmd
}
