package cli

import (
	"github.com/spf13/cobra"
	krun "k8s.io/kubectl/pkg/cmd/run"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// NewCmdRun returns the run command: kubectl's run options (the pod from
// --image, --env, --port, -l, --restart and the arguments; --expose;
// with -i/--attach: wait for it to run, attach, and with --rm delete it on
// exit; with --restart=Never the container's exit code becomes minikctl's)
// run over minikctl's factory. The created objects' field manager is the
// client's user agent, not kubectl's "kubectl-run": kubectl keeps that
// flag's value unexported.
func NewCmdRun(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdRun(f, streams, func(o *krun.RunOptions, cmd *cobra.Command, args []string) error {
		return o.Run(kubectlFactory(f), cmd, args)
	})
}

func newCmdRun(f *Factory, streams IOStreams, runF func(*krun.RunOptions, *cobra.Command, []string) error) *cobra.Command {
	o := krun.NewRunOptions(kubectlStreams(streams))
	cmd := &cobra.Command{
		Use:                   "run NAME --image=image [--env=\"key=value\"] [--port=port] [--dry-run=server|client] [--overrides=inline-json] [--command] -- [COMMAND] [args...]",
		DisableFlagsInUseLine: true,
		Short:                 "Run a particular image on the cluster",
		Long:                  "Create and run a particular image in a pod.",
		Example: `  # Start a nginx pod
  minikctl run nginx --image=nginx

  # Start a hazelcast pod and let the container expose port 5701
  minikctl run hazelcast --image=hazelcast/hazelcast --port=5701

  # Start a busybox pod and keep it in the foreground, don't restart it if it exits
  minikctl run -i -t busybox --image=busybox --restart=Never

  # Start a busybox pod, run a shell in it, and delete it when the shell exits
  minikctl run -it --rm --image=busybox shell -- sh

  # Start the nginx pod using the default command, but use custom arguments (arg1 .. argN) for that command
  minikctl run nginx --image=nginx -- <arg1> <arg2> ... <argN>

  # Start the nginx pod using a different command and custom arguments
  minikctl run nginx --image=nginx --command -- <cmd> <arg1> ... <argN>`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(kubectlFactory(f), cmd); err != nil {
				return err
			}
			if err := o.Validate(args); err != nil {
				return err
			}
			return runF(o, cmd, args)
		},
	}
	o.DeleteFlags.AddFlags(cmd)
	o.PrintFlags.AddFlags(cmd)
	o.RecordFlags.AddFlags(cmd)
	_ = cmd.Flags().MarkDeprecated("filename", "it is ignored by minikctl run and will be removed in a future release")
	_ = cmd.Flags().MarkShorthandDeprecated("filename", "it is ignored by minikctl run and will be removed in a future release")
	addRunFlags(cmd, o)
	cmdutil.AddApplyAnnotationFlags(cmd)
	cmdutil.AddPodRunningTimeoutFlag(cmd, defaultPodAttachTimeout)
	return cmd
}

// addRunFlags declares run's own flags, with kubectl's names, defaults
// and help; kubectl's RunOptions reads them back from the command.
func addRunFlags(cmd *cobra.Command, o *krun.RunOptions) {
	cmdutil.AddDryRunFlag(cmd)
	cmd.Flags().StringArray("annotations", []string{}, "Annotations to apply to the pod.")
	cmd.Flags().StringVar(&o.Image, "image", o.Image, "The image for the container to run.")
	_ = cmd.MarkFlagRequired("image")
	cmd.Flags().String("image-pull-policy", "", "The image pull policy for the container.  If left empty, this value will not be specified by the client and defaulted by the server.")
	cmd.Flags().BoolVar(&o.Remove, "rm", o.Remove, "If true, delete the pod after it exits.  Only valid when attaching to the container, e.g. with '--attach' or with '-i/--stdin'.")
	cmd.Flags().StringArray("env", []string{}, "Environment variables to set in the container.")
	cmd.Flags().StringVar(&o.Port, "port", o.Port, "The port that this container exposes.")
	cmd.Flags().StringP("labels", "l", "", "Comma separated labels to apply to the pod. Will override previous values.")
	cmd.Flags().BoolVarP(&o.Interactive, "stdin", "i", o.Interactive, "Keep stdin open on the container in the pod, even if nothing is attached.")
	cmd.Flags().BoolVarP(&o.TTY, "tty", "t", o.TTY, "Allocate a TTY for the container in the pod.")
	cmd.Flags().BoolVar(&o.Attach, "attach", o.Attach, "If true, wait for the Pod to start running, and then attach to the Pod as if 'minikctl attach ...' were called.  Default false, unless '-i/--stdin' is set, in which case the default is true. With '--restart=Never' the exit code of the container process is returned.")
	cmd.Flags().BoolVar(&o.LeaveStdinOpen, "leave-stdin-open", o.LeaveStdinOpen, "If the pod is started in interactive mode or with stdin, leave stdin open after the first attach completes. By default, stdin will be closed after the first attach completes.")
	cmd.Flags().String("restart", "Always", "The restart policy for this Pod.  Legal values [Always, OnFailure, Never].")
	cmd.Flags().BoolVar(&o.Command, "command", o.Command, "If true and extra arguments are present, use them as the 'command' field in the container, rather than the 'args' field which is the default.")
	cmd.Flags().BoolVar(&o.Expose, "expose", o.Expose, "If true, create a ClusterIP service associated with the pod.  Requires `--port`.")
	cmd.Flags().BoolVarP(&o.Quiet, "quiet", "q", o.Quiet, "If true, suppress prompt messages.")
	cmd.Flags().BoolVar(&o.Privileged, "privileged", o.Privileged, "If true, run the container in privileged mode.")
	cmd.Flags().StringVar(&o.DetachKeys, "detach-keys", defaultDetachSequence, "Override the key sequence for detaching a container.")
	cmd.Flags().String("field-manager", "kubectl-run", "Name of the manager used to track field ownership.")
	o.AddOverrideFlags(cmd)
}
