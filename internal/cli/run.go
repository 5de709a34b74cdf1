package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/distribution/reference"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// RunOptions are the inputs of run: one pod (and with --expose a
// ClusterIP service) built from the flags. Attaching (-i, -t, --attach,
// --rm) is not offered yet: those flags are unknown.
type RunOptions struct {
	Create          CreateOptions
	Image           string
	Port            string
	Env             []string
	Labels          string
	Annotations     []string
	Restart         string
	ImagePullPolicy string
	Command         bool
	Expose          bool
	Privileged      bool

	Name string
	Args []string
}

// NewCmdRun returns the run command.
func NewCmdRun(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdRun(f, streams, runRun)
}

func newCmdRun(f *Factory, streams IOStreams, run func(context.Context, *Factory, *RunOptions) error) *cobra.Command {
	o := &RunOptions{Create: CreateOptions{Streams: streams}, Restart: "Always"}
	cmd := &cobra.Command{
		Use:                   "run NAME --image=image [--env=\"key=value\"] [--port=port] [--dry-run=server|client] [--overrides=inline-json] [--command] -- [COMMAND] [args...]",
		DisableFlagsInUseLine: true,
		Short:                 "Run a particular image on the cluster",
		Long:                  "Create and run a particular image in a pod.",
		Example: `  # Start a nginx pod
  minikctl run nginx --image=nginx

  # Start a hazelcast pod and let the container expose port 5701
  minikctl run hazelcast --image=hazelcast/hazelcast --port=5701

  # Start a hazelcast pod and set labels "app=hazelcast" and "env=prod" in the container
  minikctl run hazelcast --image=hazelcast/hazelcast --labels="app=hazelcast,env=prod"

  # Dry run; print the corresponding API objects without creating them
  minikctl run nginx --image=nginx --dry-run=client -o yaml

  # Start the nginx pod using a different command and custom arguments
  minikctl run nginx --image=nginx --command -- <cmd> <arg1> ... <argN>`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || cmd.ArgsLenAtDash() == 0 {
				return usageErrorf(cmd, "NAME is required for run")
			}
			o.Name, o.Args = args[0], args[1:]
			if err := o.Create.complete(); err != nil {
				return err
			}
			if o.Image == "" {
				return errors.New("--image is required")
			}
			if !reference.ReferenceRegexp.MatchString(o.Image) {
				return fmt.Errorf("invalid image name %q: %w", o.Image, reference.ErrReferenceInvalidFormat)
			}
			if o.Expose && o.Port == "" {
				return errors.New("--port must be set when exposing a service")
			}
			if o.Port != "" {
				if _, err := strconv.Atoi(o.Port); err != nil {
					return errors.New("--port must be a number")
				}
			}
			return run(cmd.Context(), f, o)
		},
	}
	o.Create.addFlags(cmd)
	cmd.Flags().StringVar(&o.Image, "image", "", "The image for the container to run.")
	_ = cmd.MarkFlagRequired("image")
	cmd.Flags().StringVar(&o.Port, "port", "", "The port that this container exposes.")
	cmd.Flags().StringArrayVar(&o.Env, "env", nil, "Environment variables to set in the container.")
	cmd.Flags().StringVarP(&o.Labels, "labels", "l", "", "Comma separated labels to apply to the pod. Will override previous values.")
	cmd.Flags().StringArrayVar(&o.Annotations, "annotations", nil, "Annotations to apply to the pod.")
	cmd.Flags().StringVar(&o.Restart, "restart", o.Restart, "The restart policy for this Pod.  Legal values [Always, OnFailure, Never].")
	cmd.Flags().StringVar(&o.ImagePullPolicy, "image-pull-policy", "", "The image pull policy for the container.  If left empty, this value will not be specified by the client and defaulted by the server.")
	cmd.Flags().BoolVar(&o.Command, "command", false, "If true and extra arguments are present, use them as the 'command' field in the container, rather than the 'args' field which is the default.")
	cmd.Flags().BoolVar(&o.Expose, "expose", false, "If true, create a ClusterIP service associated with the pod.  Requires `--port`.")
	cmd.Flags().BoolVar(&o.Privileged, "privileged", false, "If true, run the container in privileged mode.")
	return cmd
}

// parseRunLabels reads "k=v,k2=v2" as kubectl run does.
func parseRunLabels(spec string) (map[string]string, error) {
	if spec == "" {
		return nil, nil
	}
	labels := map[string]string{}
	for _, kv := range strings.Split(spec, ",") {
		parts := strings.Split(kv, "=")
		if len(parts) != 2 {
			return nil, fmt.Errorf("unexpected label spec: %s", kv)
		}
		if parts[0] == "" {
			return nil, errors.New("unexpected empty label key")
		}
		labels[parts[0]] = parts[1]
	}
	return labels, nil
}

// pod builds the pod of run, as kubectl's createPod.
func (o *RunOptions) pod() (*corev1.Pod, map[string]string, error) {
	labels, err := parseRunLabels(o.Labels)
	if err != nil {
		return nil, nil, err
	}
	podLabels := labels
	if len(podLabels) == 0 {
		podLabels = map[string]string{"run": o.Name}
	}
	var envs []corev1.EnvVar
	for _, e := range o.Env {
		name, value, found := strings.Cut(e, "=")
		if !found || name == "" || len(validation.IsEnvVarName(name)) != 0 {
			return nil, nil, fmt.Errorf("invalid env: %v", e)
		}
		envs = append(envs, corev1.EnvVar{Name: name, Value: value})
	}
	restart := corev1.RestartPolicy(o.Restart)
	switch restart {
	case corev1.RestartPolicyAlways, corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure:
	default:
		return nil, nil, fmt.Errorf("invalid restart policy: %s, valid values are: %s, %s, %s", o.Restart, corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)
	}
	pull := corev1.PullPolicy(o.ImagePullPolicy)
	switch pull {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever, "":
	default:
		return nil, nil, fmt.Errorf("invalid image pull policy: %s, valid values are: %s, %s, %s", o.ImagePullPolicy, corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)
	}
	annotations := map[string]string{}
	for _, a := range o.Annotations {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, nil, fmt.Errorf("invalid annotation format: %s", a)
		}
		annotations[k] = v
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	c := corev1.Container{Name: o.Name, Image: o.Image, Env: envs, ImagePullPolicy: pull}
	if o.Privileged {
		privileged := true
		c.SecurityContext = &corev1.SecurityContext{Privileged: &privileged}
	}
	if len(o.Args) > 0 {
		if o.Command {
			c.Command = o.Args
		} else {
			c.Args = o.Args
		}
	}
	if o.Port != "" {
		n, _ := strconv.Atoi(o.Port)
		c.Ports = []corev1.ContainerPort{{ContainerPort: int32(n)}}
	}
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Labels: podLabels, Annotations: annotations},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{c}, DNSPolicy: corev1.DNSClusterFirst, RestartPolicy: restart},
	}
	return pod, labels, nil
}

func runRun(ctx context.Context, f *Factory, o *RunOptions) error {
	pod, labels, err := o.pod()
	if err != nil {
		return err
	}
	if err := o.Create.createGenerated(ctx, f, pod); err != nil {
		return err
	}
	if !o.Expose {
		return nil
	}
	n, _ := strconv.Atoi(o.Port)
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Labels: labels},
		Spec: corev1.ServiceSpec{
			Selector: pod.Labels,
			Ports:    []corev1.ServicePort{{Port: int32(n), Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(int32(n))}},
		},
	}
	return utilerrors.NewAggregate([]error{o.Create.createGenerated(ctx, f, svc)})
}
