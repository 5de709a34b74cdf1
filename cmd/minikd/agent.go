package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
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
	var (
		apiServer, kubeconfig, token, prefix, dataDir, nodeConfig, policy, logLevel string
		nodes, port                                                                 int
		speed                                                                       float64
		clusterDNS                                                                  []string
		clusterDomain, resolvConf                                                   string
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
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level %q: %w", logLevel, err)
			}
			logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
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
			imagePolicy, err := runtime.ParseImagePolicy(policy)
			if err != nil {
				return fmt.Errorf("--image-policy: %w", err)
			}
			var templates []corev1.Node
			if nodeConfig != "" {
				if templates, err = nodeagent.LoadNodeTemplates(nodeConfig); err != nil {
					return err
				}
			}
			pool, err := nodeagent.New(nodeagent.Config{
				Nodes: nodes, NamePrefix: prefix, Templates: templates, DataDir: dataDir,
				ImagePolicy: imagePolicy, Timing: nodeagent.Timing{Speed: speed}, KubeletPort: port, Logger: logger,
				ClusterDNS: clusterDNS, ClusterDomain: clusterDomain, ResolvConf: resolvConf,
				ClientConfig: func(string) (*rest.Config, error) { return rest.CopyConfig(rc), nil },
			})
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			go func() {
				select {
				case <-pool.Ready():
					fmt.Fprintf(cmd.OutOrStdout(), "minikd agent: %d nodes ready: %v\n", nodes, pool.Names())
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
	f.IntVar(&nodes, "nodes", 2, "simulated nodes to run")
	f.StringVar(&prefix, "name-prefix", "agent-node-", "node names are <prefix>1 … <prefix>N")
	f.StringVar(&dataDir, "data-dir", filepath.Join(server.DefaultDataDir(), "agent"), "directory of the nodes' container logs")
	f.StringVar(&nodeConfig, "node-config", "", "file of Node templates (YAML): labels, taints, capacity, nodeInfo")
	f.StringVar(&policy, "image-policy", "catalog", "simulated registry: 'catalog' or 'strict'")
	f.Float64Var(&speed, "simulation-speed", 1, "divides the nodes' simulated durations")
	f.IntVar(&port, "kubelet-port", 10250, "port of each node's endpoint on its loopback address")
	f.StringSliceVar(&clusterDNS, "cluster-dns", nil, "nameservers of pods with dnsPolicy ClusterFirst: the kube-dns Service's ClusterIP (kubectl -n kube-system get svc kube-dns)")
	f.StringVar(&clusterDomain, "cluster-domain", "cluster.local", "the cluster's DNS domain")
	f.StringVar(&resolvConf, "resolv-conf", "/etc/resolv.conf", "the nodes' resolver file, the base of pods' with dnsPolicy Default; empty for none")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	return cmd
}
