// Command minikd is minik's control plane: an embedded etcd and the
// Kubernetes API server in one process.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
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
	var (
		dataDir, listen, etcdServers, logLevel string
		ctrls                                  []string
		workers                                int
		leaderElect                            bool
	)
	cmd := &cobra.Command{
		Use:           "minikd",
		Short:         "minik's local Kubernetes control plane",
		Version:       version.Kubernetes + "+minik." + version.Minik,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level %q: %w", logLevel, err)
			}
			logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
			cfg := server.Config{
				DataDir: dataDir, Listen: listen, Out: os.Stdout, Logger: logger,
				Controllers: ctrls, ControllerWorkers: workers, LeaderElect: leaderElect,
			}
			if etcdServers != "" {
				cfg.EtcdServers = strings.Split(etcdServers, ",")
			}
			s, err := server.New(cfg)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return s.Start(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data-dir", server.DefaultDataDir(), "directory of etcd's data, the certificates and the kubeconfig")
	f.StringVar(&listen, "listen", "127.0.0.1:6443", "address the API server listens on (port 0 picks a free one)")
	f.StringVar(&etcdServers, "etcd-servers", "", "comma-separated client URLs of an external etcd cluster (no embedded etcd starts)")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.StringSliceVar(&ctrls, "controllers", []string{"*"}, "controllers to run: '*' for all, 'name' to enable one, '-name' to disable one")
	f.IntVar(&workers, "controller-workers", 5, "workers per controller")
	f.BoolVar(&leaderElect, "leader-elect", false, "run controllers and scheduler only while holding their Lease (for several minikd sharing one etcd)")
	return cmd
}
