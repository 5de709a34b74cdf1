package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	kpf "k8s.io/kubectl/pkg/cmd/portforward"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// defaultPodPortForwardWaitTimeout is port-forward's --pod-running-timeout
// default, as kubectl's.
const defaultPodPortForwardWaitTimeout = 60 * time.Second

// NewCmdPortForward returns the port-forward command: kubectl's options
// (pod, svc/x with the Service's targetPort, deploy/x and other
// selectors resolved to a running pod; named ports; WebSocket tunnelling
// with SPDY fallback) run over minikctl's factory. It blocks until the
// context is done (SIGINT) or the session is lost.
func NewCmdPortForward(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdPortForward(f, streams, func(ctx context.Context, o *kpf.PortForwardOptions) error {
		return o.RunPortForwardContext(ctx)
	})
}

func newCmdPortForward(f *Factory, streams IOStreams, runF func(context.Context, *kpf.PortForwardOptions) error) *cobra.Command {
	o := kpf.NewDefaultPortForwardOptions(kubectlStreams(streams))
	cmd := &cobra.Command{
		Use:                   "port-forward TYPE/NAME [options] [LOCAL_PORT:]REMOTE_PORT [...[LOCAL_PORT_N:]REMOTE_PORT_N]",
		DisableFlagsInUseLine: true,
		Short:                 "Forward one or more local ports to a pod",
		Long: `Forward one or more local ports to a pod.

 Use resource type/name such as deployment/mydeployment to select a pod. Resource type defaults to 'pod' if omitted.

 If there are multiple pods matching the criteria, a pod will be selected automatically. The forwarding session ends when the selected pod terminates, and a rerun of the command is needed to resume forwarding.`,
		Example: `  # Listen on ports 5000 and 6000 locally, forwarding data to/from ports 5000 and 6000 in the pod
  minikctl port-forward pod/mypod 5000 6000

  # Listen on ports 5000 and 6000 locally, forwarding data to/from ports 5000 and 6000 in a pod selected by the deployment
  minikctl port-forward deployment/mydeployment 5000 6000

  # Listen on port 8443 locally, forwarding to the targetPort of the service's port named "https" in a pod selected by the service
  minikctl port-forward service/myservice 8443:https

  # Listen on port 8888 locally, forwarding to 5000 in the pod
  minikctl port-forward pod/mypod 8888:5000

  # Listen on port 8888 on all addresses, forwarding to 5000 in the pod
  minikctl port-forward --address 0.0.0.0 pod/mypod 8888:5000

  # Listen on a random port locally, forwarding to 5000 in the pod
  minikctl port-forward pod/mypod :5000`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(kubectlFactory(f), cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return runF(cmd.Context(), o)
		},
	}
	cmdutil.AddPodRunningTimeoutFlag(cmd, defaultPodPortForwardWaitTimeout)
	cmd.Flags().StringSliceVar(&o.Address, "address", []string{"localhost"}, "Addresses to listen on (comma separated). Only accepts IP addresses or localhost as a value. When localhost is supplied, minikctl will try to bind on both 127.0.0.1 and ::1 and will fail if neither of these addresses are available to bind.")
	return cmd
}
