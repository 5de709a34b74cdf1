package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/journey"
	trail "minik/internal/trail/v1alpha1"
)

// JourneyOptions are the options of journey.
type JourneyOptions struct {
	Namespace string
	Name      string
	Revision  int64
	Output    string
	Watch     bool
	// Interval is how often --watch reads the cluster again.
	Interval time.Duration
	Timeout  time.Duration
	Streams  IOStreams

	cs    kubernetes.Interface
	trail rest.Interface // nil: the cluster serves no trail
}

// NewCmdJourney returns the journey command.
func NewCmdJourney(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdJourney(f, streams, func(ctx context.Context, o *JourneyOptions) error { return o.Run(ctx) })
}

func newCmdJourney(f *Factory, streams IOStreams, runF func(context.Context, *JourneyOptions) error) *cobra.Command {
	o := &JourneyOptions{Output: "text", Streams: streams, Interval: time.Second}
	cmd := &cobra.Command{
		Use:                   "journey (TYPE NAME | TYPE/NAME) [--revision N] [-o text|mermaid|json|html] [--watch]",
		DisableFlagsInUseLine: true,
		Short:                 "Show the journey of a rollout through the control plane and the nodes",
		Long: `Show the journey of a rollout through the control plane and the nodes.

 The journey follows one revision of a Deployment from the apply through authentication, authorization and admission, the Deployment and ReplicaSet controllers, the scheduler, the kubelets and the container runtime, readiness, EndpointSlices and the Ingress/Gateway proxy, grouped by the six stages of a release. Each step has its actor, its time since the apply and its result. A rollout that has not converged ends at the stage where it stopped, with the failure checkpoint and its evidence, and the command exits non-zero, as 'rollout status' after a timeout.

 The steps come from minikd's write trail (trail.minik.dev). Against a cluster that does not serve it, the journey is built from managedFields, Events, ownerReferences and conditions, and says it is approximate.`,
		Example: `  # The journey of the current rollout of web, as a timeline
  minikctl -n demo journey deployment/web

  # Its sequence diagrams, in Mermaid
  minikctl -n demo journey deployment/web -o mermaid

  # One page with both diagrams as SVG
  minikctl -n demo journey deployment/web -o html > web.html

  # Follow a rollout live until it converges
  minikctl -n demo journey deployment/web --watch`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(f, cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return runF(cmd.Context(), o)
		},
	}
	cmd.Flags().Int64Var(&o.Revision, "revision", o.Revision, "The revision whose journey to show. Defaults to 0 (the current revision).")
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "Output format. One of: (text, mermaid, json, html).")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", o.Watch, "Follow the rollout, printing the journey again as it moves, until it converges.")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", o.Timeout, "With --watch, the length of time to wait before giving up, zero means never.")
	return cmd
}

// rolloutKindsNames are the kinds rollout knows, for the error of a kind
// without one.
const rolloutKindsNames = "deployments (journey), daemonsets and statefulsets (rollout status)"

// Complete resolves the object argument and builds the clients.
func (o *JourneyOptions) Complete(f *Factory, cmd *cobra.Command, args []string) error {
	var typ string
	switch {
	case len(args) == 1 && strings.Count(args[0], "/") == 1:
		typ, o.Name, _ = strings.Cut(args[0], "/")
	case len(args) == 2 && !strings.Contains(args[0], "/"):
		typ, o.Name = args[0], args[1]
	default:
		return usageErrorf(cmd, "journey needs one object, as TYPE/NAME or TYPE NAME (deployment/web)")
	}
	if typ == "" || o.Name == "" {
		return usageErrorf(cmd, "journey needs one object, as TYPE/NAME or TYPE NAME (deployment/web)")
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	o.Namespace = ns
	mapper, err := f.ToRESTMapper()
	if err != nil {
		return err
	}
	mapping, err := mappingFor(mapper, typ)
	if err != nil {
		return err
	}
	switch gk := mapping.GroupVersionKind.GroupKind(); gk {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}:
	case schema.GroupKind{Group: "apps", Kind: "DaemonSet"}, schema.GroupKind{Group: "apps", Kind: "StatefulSet"}:
		return fmt.Errorf("the journey of a %s rollout is not implemented: journey follows the rollouts of deployments", gk.Kind)
	default:
		return fmt.Errorf("%s %q has no rollout: the kinds with a rollout are %s", mapping.Resource.GroupResource(), o.Name, rolloutKindsNames)
	}
	if o.cs, err = f.KubernetesClientSet(); err != nil {
		return err
	}
	o.trail, err = trailClient(f)
	return err
}

// trailClient is a REST client of trail.minik.dev when the cluster serves
// it, else nil.
func trailClient(f *Factory) (rest.Interface, error) {
	disc, err := f.Discovery()
	if err != nil {
		return nil, err
	}
	if _, err := disc.ServerResourcesForGroupVersion(trail.GroupVersion.String()); err != nil {
		return nil, nil
	}
	return f.RESTClientFor(trail.GroupVersion)
}

// Validate checks the flags.
func (o *JourneyOptions) Validate() error {
	if o.Revision < 0 {
		return fmt.Errorf("revision must be a positive integer: %v", o.Revision)
	}
	if !slices.Contains(journey.Formats, o.Output) {
		return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: %s", o.Output, strings.Join(journey.Formats, ","))
	}
	return nil
}

// errNotConverged is returned, after the journey is printed, for a
// rollout that has not converged.
type errNotConverged struct{ j *journey.Journey }

func (e errNotConverged) Error() string {
	if cp := e.j.Checkpoint; cp != nil {
		return fmt.Sprintf("deployment %q has not converged: stopped at stage %d (%s): %s", e.j.Deployment, cp.Stage, cp.Stage, cp.Name)
	}
	return fmt.Sprintf("deployment %q has not converged", e.j.Deployment)
}

// Run reads the cluster, prints the journey, and with --watch prints it
// again at every change until it converges (or --timeout passes).
func (o *JourneyOptions) Run(ctx context.Context) error {
	if o.Watch && o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	var last []byte
	for {
		j, err := o.Journey(ctx)
		if err != nil {
			if o.Watch && ctx.Err() != nil {
				return errors.New("timed out waiting for the condition")
			}
			return err
		}
		var buf bytes.Buffer
		if err := journey.Write(&buf, j, o.Output); err != nil {
			return err
		}
		if !bytes.Equal(buf.Bytes(), last) {
			if last != nil {
				fmt.Fprintln(o.Streams.Out)
			}
			if _, err := o.Streams.Out.Write(buf.Bytes()); err != nil {
				return err
			}
			last = buf.Bytes()
		}
		if j.Converged {
			return nil
		}
		if !o.Watch {
			return errNotConverged{j}
		}
		select {
		case <-ctx.Done():
			return errors.New("timed out waiting for the condition")
		case <-time.After(o.Interval):
		}
	}
}

// Journey reads the inputs and builds the journey.
func (o *JourneyOptions) Journey(ctx context.Context) (*journey.Journey, error) {
	in, err := o.Inputs(ctx)
	if err != nil {
		return nil, err
	}
	j, err := journey.Build(in, o.Revision)
	if errors.Is(err, journey.ErrNotFound) {
		return nil, apierrors.NewNotFound(appsv1.Resource("deployments"), o.Name)
	}
	return j, err
}

// Inputs reads what the journey of the Deployment needs: the objects of
// its namespace that take part, and the namespace's trail.
func (o *JourneyOptions) Inputs(ctx context.Context) (*journey.Inputs, error) {
	in := &journey.Inputs{Namespace: o.Namespace, Name: o.Name, Now: time.Now()}
	ns := o.Namespace
	d, err := o.cs.AppsV1().Deployments(ns).Get(ctx, o.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, err
	default:
		in.Deployment = d
	}
	if o.trail != nil {
		in.Records, err = listRecords(ctx, o.trail, ns)
		switch {
		case apierrors.IsForbidden(err):
			in.Records = nil
			in.NoTrail = "you may not list the trail of " + ns + " (records.trail.minik.dev)"
		case err != nil:
			return nil, err
		}
	}
	if in.Deployment == nil {
		return in, nil
	}
	list := func(what string, fn func() error) error {
		if err := fn(); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
			return fmt.Errorf("list %s in %s: %w", what, ns, err)
		}
		return nil
	}
	sel := metav1.FormatLabelSelector(d.Spec.Selector)
	steps := []struct {
		what string
		fn   func() error
	}{
		{"replicasets", func() error {
			l, err := o.cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
			if err == nil {
				in.ReplicaSets = l.Items
			}
			return err
		}},
		{"pods", func() error {
			l, err := o.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
			if err == nil {
				in.Pods = l.Items
			}
			return err
		}},
		{"services", func() error {
			l, err := o.cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
			if err == nil {
				in.Services = l.Items
			}
			return err
		}},
		{"endpointslices", func() error {
			l, err := o.cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{})
			if err == nil {
				in.EndpointSlices = l.Items
			}
			return err
		}},
		{"ingresses", func() error {
			l, err := o.cs.NetworkingV1().Ingresses(ns).List(ctx, metav1.ListOptions{})
			if err == nil {
				in.Ingresses = l.Items
			}
			return err
		}},
		{"events", func() error {
			l, err := o.cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
			if err == nil {
				in.Events = l.Items
			}
			return err
		}},
	}
	for _, s := range steps {
		if err := list(s.what, s.fn); err != nil {
			return nil, err
		}
	}
	in.PreviousLogs = previousLogs(ctx, o.cs, in.Pods)
	return in, nil
}

// previousLogs reads the last lines of the previous run of each restarted
// container (at most maxPreviousLogs of them), as `kubectl logs
// --previous --tail` would; a log that cannot be read is left out.
func previousLogs(ctx context.Context, cs kubernetes.Interface, pods []corev1.Pod) map[string]string {
	const maxPreviousLogs = 10
	out := map[string]string{}
	tail := int64(journey.PreviousLogLines)
	for _, p := range pods {
		for _, st := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			if st.RestartCount == 0 || len(out) >= maxPreviousLogs {
				continue
			}
			raw, err := cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: st.Name, Previous: true, TailLines: &tail}).DoRaw(ctx)
			if err == nil && len(raw) > 0 {
				out[journey.PreviousLogKey(p.Name, st.Name)] = string(raw)
			}
		}
	}
	return out
}

// listRecords lists a namespace's trail, page by page, oldest first.
func listRecords(ctx context.Context, c rest.Interface, ns string) ([]trail.Record, error) {
	out := []trail.Record{}
	cont := ""
	for {
		req := c.Get().Namespace(ns).Resource(trail.Resource).Param("limit", "500")
		if cont != "" {
			req = req.Param("continue", cont)
		}
		raw, err := req.DoRaw(ctx)
		if err != nil {
			return nil, fmt.Errorf("list the trail of %s: %w", ns, err)
		}
		var page trail.RecordList
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("list the trail of %s: %w", ns, err)
		}
		out = append(out, page.Items...)
		if cont = page.Continue; cont == "" {
			return out, nil
		}
	}
}
