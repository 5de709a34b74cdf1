package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"minik/internal/nodeagent"
	"minik/internal/nodeagent/runtime"
	"minik/internal/server"
)

// newAgentCommand is `minikd agent`: simulated nodes in a process of their
// own, going to a minikd through its API only. Every node acts with the
// kubeconfig's (or --token's) identity; per-node identities need the node
// bootstrap of a later issue.
func newAgentCommand() *cobra.Command {
	// The flags parse straight into nodes, the node pool's configuration,
	// except the client's and the templates' (read from --node-config).
	var (
		nodes                                    nodeagent.Config
		apiServer, kubeconfig, token, nodeConfig string
		logs                                     logOptions
	)
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "run simulated nodes against a remote minikd, through its API only",
		Long: "Runs simulated nodes (kubelets with a simulated container runtime) in this process, against the API server of\n" +
			"--server (or the kubeconfig's). Stopping the agent stops renewing their Leases: the node lifecycle controller then\n" +
			"marks them NotReady. Their endpoints (container logs) listen on loopback addresses, so pods/log works when the\n" +
			"agent runs on the API server's host.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := logs.logger()
			if err != nil {
				return err
			}
			rules := clientcmd.NewDefaultClientConfigLoadingRules()
			rules.ExplicitPath = kubeconfig
			overrides := &clientcmd.ConfigOverrides{}
			if apiServer != "" {
				overrides.ClusterInfo.Server = apiServer
			}
			if token != "" {
				overrides.AuthInfo.Token = token
			}
			rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
			if err != nil {
				return fmt.Errorf("--kubeconfig: %w", err)
			}
			if nodeConfig != "" {
				if nodes.Templates, err = nodeagent.LoadNodeTemplates(nodeConfig); err != nil {
					return err
				}
			}
			nodes.Logger = logger
			nodes.ClientConfig = func(string) (*rest.Config, error) { return rest.CopyConfig(rc), nil }
			pool, err := nodeagent.New(nodes)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			go func() {
				select {
				case <-pool.Ready():
					fmt.Fprintf(cmd.OutOrStdout(), "minikd agent: %d nodes ready: %v\n", nodes.Nodes, pool.Names())
				case <-ctx.Done():
				}
			}()
			return pool.Start(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&apiServer, "server", "", "URL of the API server (default: the kubeconfig's)")
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig whose credentials the nodes use (default: $KUBECONFIG or ~/.kube/config)")
	f.StringVar(&token, "token", "", "bearer token the nodes use instead of the kubeconfig's credentials")
	f.StringVar(&nodeConfig, "node-config", "", "file of Node templates (YAML): labels, taints, capacity, nodeInfo")
	f.IntVar(&nodes.Nodes, "nodes", 2, "simulated nodes to run")
	f.IntVar(&nodes.DRADevices, "dra-devices", 2, "devices each node's simulated DRA driver (gpu.minik.io) publishes in its ResourceSlice; 0 for none")
	f.StringVar(&nodes.NamePrefix, "name-prefix", "agent-node-", "node names are <prefix>1 … <prefix>N")
	f.StringVar(&nodes.DataDir, "data-dir", filepath.Join(server.DefaultDataDir(), "agent"), "directory of the nodes' container logs")
	f.StringVar((*string)(&nodes.ImagePolicy), "image-policy", string(runtime.PolicyCatalog), "simulated registry: 'catalog' or 'strict'")
	f.Float64Var(&nodes.Timing.Speed, "simulation-speed", 1, "divides the nodes' simulated durations")
	f.IntVar(&nodes.KubeletPort, "kubelet-port", 10250, "port of each node's endpoint on its loopback address")
	f.StringSliceVar(&nodes.ClusterDNS, "cluster-dns", nil, "nameservers of pods with dnsPolicy ClusterFirst: the kube-dns Service's ClusterIP (kubectl -n kube-system get svc kube-dns)")
	f.StringVar(&nodes.ClusterDomain, "cluster-domain", "cluster.local", "the cluster's DNS domain")
	f.StringVar(&nodes.ResolvConf, "resolv-conf", "/etc/resolv.conf", "the nodes' resolver file, the base of pods' with dnsPolicy Default; empty for none")
	logs.bind(f)
	return cmd
}
