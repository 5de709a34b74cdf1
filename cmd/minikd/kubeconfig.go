package main

import (
	"time"

	"github.com/spf13/cobra"

	"minik/internal/server"
)

// newKubeconfigCommand is `minikd kubeconfig`: it mints a client
// certificate for a user with the data dir's CA and prints a kubeconfig
// for it, for RBAC demos and CI.
func newKubeconfigCommand() *cobra.Command {
	o := server.UserKubeconfigOptions{}
	cmd := &cobra.Command{
		Use:   "kubeconfig --user NAME [--group G1,G2] [--ttl 24h]",
		Short: "print a kubeconfig with a new client certificate for a user",
		Long: "Signs a client certificate for --user (its groups: --group) with the CA of --data-dir and prints a kubeconfig\n" +
			"using it. Bind the user (or a group) to a role to give it permissions, for example:\n" +
			"  kubectl create rolebinding viewer --clusterrole=view --user=viewer -n demo",
		Example:       "  minikd kubeconfig --user viewer --group viewers --ttl 1h > viewer.kubeconfig",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := server.UserKubeconfig(o)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(data)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.DataDir, "data-dir", server.DefaultDataDir(), "data dir of the minikd whose CA signs the certificate")
	f.StringVar(&o.User, "user", "", "user name (the certificate's common name)")
	f.StringSliceVar(&o.Groups, "group", nil, "groups of the user, comma-separated (the certificate's organizations)")
	f.DurationVar(&o.TTL, "ttl", 24*time.Hour, "how long the certificate is valid")
	f.StringVar(&o.Server, "server", "", "API server URL (default: the one in the data dir's admin kubeconfig)")
	return cmd
}
