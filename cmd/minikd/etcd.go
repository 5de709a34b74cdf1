package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"minik/internal/etcd"
)

// newEtcdMemberCommand is the hidden `minikd etcd-member`: one member of a
// multi-member etcd cluster, the same etcd minikd embeds, so that an HA
// set-up on one machine (scripts/ha.sh, the HA test) needs no other
// binary. It runs until SIGINT or SIGTERM.
func newEtcdMemberCommand() *cobra.Command {
	var o etcd.MemberConfig
	cmd := &cobra.Command{
		Use:           "etcd-member --name NAME --data-dir DIR --listen-client-url URL --listen-peer-url URL --initial-cluster N1=URL1,...",
		Short:         "run one member of an etcd cluster (for HA set-ups on one machine)",
		Hidden:        true,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := etcd.StartMember(o)
			if err != nil {
				return err
			}
			defer m.Close()
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			select {
			case <-m.Ready():
				fmt.Fprintf(cmd.OutOrStdout(), "etcd member %s serving on %s\n", o.Name, o.ClientURL)
			case err := <-m.Err():
				return fmt.Errorf("etcd member %s: %w", o.Name, err)
			case <-ctx.Done():
				return nil
			}
			select {
			case err := <-m.Err():
				return fmt.Errorf("etcd member %s: %w", o.Name, err)
			case <-ctx.Done():
				return nil
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Name, "name", "", "member name, as in --initial-cluster")
	f.StringVar(&o.DataDir, "data-dir", "", "member's data directory")
	f.StringVar(&o.ClientURL, "listen-client-url", "", "URL clients reach the member at (http://127.0.0.1:2379)")
	f.StringVar(&o.PeerURL, "listen-peer-url", "", "URL peers reach the member at (http://127.0.0.1:2380)")
	f.StringVar(&o.InitialCluster, "initial-cluster", "", "every member as name=peer-url, comma-separated")
	f.StringVar(&o.LogLevel, "log-level", "error", "etcd's log level: debug, info, warn, error")
	return cmd
}
