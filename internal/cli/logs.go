package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/kubectl/pkg/util/podutils"
)

const (
	logsUsageStr = "logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]"
	// defaultPodLogsTimeout is --pod-running-timeout's default.
	defaultPodLogsTimeout = 20 * time.Second
	// selectorTail is --tail's default with -l.
	selectorTail int64 = 10
)

var logsUsageErrStr = fmt.Sprintf("expected '%s'.\nPOD or TYPE/NAME is a required argument for the logs command", logsUsageStr)

// LogsOptions are the inputs of logs.
type LogsOptions struct {
	Namespace     string
	ResourceArg   string
	Resources     []string
	Selector      string
	Container     string
	AllContainers bool
	AllPods       bool
	Prefix        bool

	Follow               bool
	Previous             bool
	Timestamps           bool
	IgnoreLogErrors      bool
	LimitBytes           int64
	Tail                 int64
	TailSpecified        bool
	SinceTime            string
	Since                time.Duration
	MaxFollowConcurrency int
	PodRunningTimeout    time.Duration

	ContainerNameSpecified bool

	Streams IOStreams
	Client  kubernetes.Interface
}

// logTarget is one container whose log is read.
type logTarget struct {
	pod       string
	namespace string
	container string
	opts      *corev1.PodLogOptions
}

// NewCmdLogs returns the logs command.
func NewCmdLogs(f *Factory, streams IOStreams) *cobra.Command {
	o := &LogsOptions{Tail: -1, MaxFollowConcurrency: 5, Streams: streams}
	cmd := &cobra.Command{
		Use:                   logsUsageStr,
		DisableFlagsInUseLine: true,
		Short:                 "Print the logs for a container in a pod",
		Long:                  "Print the logs for a container in a pod or specified resource. If the pod has only one container, the container name is optional.",
		Example: `  # Return snapshot logs from pod nginx with only one container
  minikctl logs nginx

  # Return snapshot logs from all pods and containers of the demo's deployment, each line prefixed
  minikctl logs deployment/web --all-pods=true --all-containers=true --prefix=true --namespace demo

  # Begin streaming the logs from all containers in pods defined by label app=web
  minikctl logs -f -l app=web --all-containers=true

  # Display only the most recent 20 lines of output in pod nginx
  minikctl logs --tail=20 nginx`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(f, cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return runLogs(cmd.Context(), f, o)
		},
	}
	cmd.Flags().BoolVar(&o.AllPods, "all-pods", o.AllPods, "Get logs from all pod(s). Sets prefix to true.")
	cmd.Flags().BoolVar(&o.AllContainers, "all-containers", o.AllContainers, "Get all containers' logs in the pod(s).")
	cmd.Flags().BoolVarP(&o.Follow, "follow", "f", o.Follow, "Specify if the logs should be streamed.")
	cmd.Flags().BoolVar(&o.Timestamps, "timestamps", o.Timestamps, "Include timestamps on each line in the log output")
	cmd.Flags().Int64Var(&o.LimitBytes, "limit-bytes", o.LimitBytes, "Maximum bytes of logs to return. Defaults to no limit.")
	cmd.Flags().BoolVarP(&o.Previous, "previous", "p", o.Previous, "If true, print the logs for the previous instance of the container in a pod if it exists.")
	cmd.Flags().Int64Var(&o.Tail, "tail", o.Tail, "Lines of recent log file to display. Defaults to -1 with no selector, showing all log lines otherwise 10, if a selector is provided.")
	cmd.Flags().BoolVar(&o.IgnoreLogErrors, "ignore-errors", o.IgnoreLogErrors, "If watching / following pod logs, allow for any errors that occur to be non-fatal")
	cmd.Flags().StringVar(&o.SinceTime, "since-time", o.SinceTime, "Only return logs after a specific date (RFC3339). Defaults to all logs. Only one of since-time / since may be used.")
	cmd.Flags().DurationVar(&o.Since, "since", o.Since, "Only return logs newer than a relative duration like 5s, 2m, or 3h. Defaults to all logs. Only one of since-time / since may be used.")
	cmd.Flags().StringVarP(&o.Container, "container", "c", o.Container, "Print the logs of this container")
	cmd.Flags().DurationVar(&o.PodRunningTimeout, "pod-running-timeout", defaultPodLogsTimeout, "The length of time (like 5s, 2m, or 3h, higher than zero) to wait until at least one pod is running")
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", o.Selector, "Selector (label query) to filter on.")
	cmd.Flags().IntVar(&o.MaxFollowConcurrency, "max-log-requests", o.MaxFollowConcurrency, "Specify maximum number of concurrent logs to follow when using by a selector. Defaults to 5.")
	cmd.Flags().BoolVar(&o.Prefix, "prefix", o.Prefix, "Prefix each log line with the log source (pod name and container name)")
	return cmd
}

// Complete reads the arguments: POD or TYPE/NAME, optionally a container.
func (o *LogsOptions) Complete(f *Factory, cmd *cobra.Command, args []string) error {
	o.ContainerNameSpecified = cmd.Flags().Changed("container")
	o.TailSpecified = cmd.Flags().Changed("tail")
	o.Resources = args
	switch len(args) {
	case 0:
		if o.Selector == "" {
			return usageErrorf(cmd, "%s", logsUsageErrStr)
		}
	case 1:
		o.ResourceArg = args[0]
		if o.Selector != "" {
			return usageErrorf(cmd, "only a selector (-l) or a POD name is allowed")
		}
	case 2:
		o.ResourceArg = args[0]
		o.Container = args[1]
	default:
		return usageErrorf(cmd, "%s", logsUsageErrStr)
	}
	if o.AllPods {
		o.Prefix = true
	}
	if o.PodRunningTimeout <= 0 {
		return errors.New("--pod-running-timeout must be higher than zero")
	}
	var err error
	if o.Namespace, _, err = f.Namespace(); err != nil {
		return err
	}
	o.Client, err = f.KubernetesClientSet()
	return err
}

// Validate checks flag combinations as kubectl does.
func (o *LogsOptions) Validate() error {
	if o.SinceTime != "" && o.Since != 0 {
		return errors.New("at most one of `sinceTime` or `sinceSeconds` may be specified")
	}
	if o.AllContainers && o.Container != "" {
		return fmt.Errorf("--all-containers=true should not be specified with container name %s", o.Container)
	}
	if o.ContainerNameSpecified && len(o.Resources) == 2 {
		return errors.New("only one of -c or an inline [CONTAINER] arg is allowed")
	}
	if o.LimitBytes < 0 {
		return errors.New("--limit-bytes must be greater than 0")
	}
	if o.Since < 0 {
		return errors.New("--since must be greater than 0")
	}
	if o.Tail < -1 {
		return errors.New("--tail must be greater than or equal to -1")
	}
	return nil
}

// logOptions is the pods/log request the flags describe.
func (o *LogsOptions) logOptions() (*corev1.PodLogOptions, error) {
	opts := &corev1.PodLogOptions{Container: o.Container, Follow: o.Follow, Previous: o.Previous, Timestamps: o.Timestamps}
	if o.SinceTime != "" {
		t, err := time.Parse(time.RFC3339Nano, o.SinceTime)
		if err != nil {
			if t, err = time.Parse(time.RFC3339, o.SinceTime); err != nil {
				return nil, err
			}
		}
		mt := metav1.NewTime(t)
		opts.SinceTime = &mt
	}
	if o.LimitBytes != 0 {
		opts.LimitBytes = &o.LimitBytes
	}
	if o.Since != 0 {
		sec := int64(o.Since.Round(time.Second).Seconds())
		opts.SinceSeconds = &sec
	}
	switch {
	case o.Selector != "" && o.Tail == -1 && !o.TailSpecified:
		tail := selectorTail
		opts.TailLines = &tail
	case o.Tail != -1:
		tail := o.Tail
		opts.TailLines = &tail
	}
	return opts, nil
}

// runLogs finds the pods and containers the arguments name and copies
// their logs to Out: one after another, or, when following several, all
// at once (at most --max-log-requests).
func runLogs(ctx context.Context, f *Factory, o *LogsOptions) error {
	opts, err := o.logOptions()
	if err != nil {
		return err
	}
	targets, err := o.targets(ctx, f, opts)
	if err != nil {
		return err
	}
	if o.Follow && len(targets) > 1 {
		if len(targets) > o.MaxFollowConcurrency {
			return fmt.Errorf("you are attempting to follow %d log streams, but maximum allowed concurrency is %d, use --max-log-requests to increase the limit", len(targets), o.MaxFollowConcurrency)
		}
		return o.parallel(ctx, targets)
	}
	for _, t := range targets {
		if err := o.consume(ctx, t, o.prefixed(t, o.Streams.Out), o.Streams.Out); err != nil {
			return err
		}
	}
	return nil
}

// targets resolves the containers to read.
func (o *LogsOptions) targets(ctx context.Context, f *Factory, opts *corev1.PodLogOptions) ([]logTarget, error) {
	if o.Selector != "" {
		if _, err := labels.Parse(o.Selector); err != nil {
			return nil, fmt.Errorf("the provided selector %q is not valid: %v", o.Selector, err)
		}
		list, err := o.Client.CoreV1().Pods(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: o.Selector})
		if err != nil {
			return nil, err
		}
		if len(list.Items) == 0 {
			fmt.Fprintf(o.Streams.ErrOut, "No resources found in %s namespace.\n", o.Namespace)
		}
		var out []logTarget
		for i := range list.Items {
			t, err := o.podTargets(&list.Items[i], opts, o.AllContainers)
			if err != nil {
				return nil, err
			}
			out = append(out, t...)
		}
		return out, nil
	}

	sel := ObjectSelection{Args: []string{o.ResourceArg}, Namespace: o.Namespace, BaseName: "minikctl"}
	if !strings.Contains(o.ResourceArg, "/") {
		sel.Args = []string{"pods", o.ResourceArg}
	}
	infos, _, errs := f.selectObjects(ctx, &sel)
	if len(errs) > 0 {
		return nil, utilerrorsReduce(errs)
	}
	if len(infos) != 1 {
		return nil, errors.New("expected a resource")
	}
	obj, err := toTyped(infos[0].Object)
	if err != nil {
		return nil, err
	}
	if pod, ok := obj.(*corev1.Pod); ok {
		return o.podTargets(pod, opts, o.AllContainers)
	}
	namespace, selector, err := selectorForObject(obj)
	if err != nil {
		return nil, fmt.Errorf("cannot get the logs from %s: %v", goTypeName(obj), err)
	}
	pods, err := o.podsFor(ctx, namespace, selector)
	if err != nil {
		return nil, err
	}
	if !o.AllPods {
		if len(pods) > 1 {
			fmt.Fprintf(o.Streams.ErrOut, "Found %v pods, using pod/%v\n", len(pods), pods[0].Name)
		}
		return o.podTargets(&pods[0], opts, o.AllContainers)
	}
	sort.SliceStable(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	var out []logTarget
	for i := range pods {
		t, err := o.podTargets(&pods[i], opts, o.AllContainers)
		if err != nil {
			return nil, err
		}
		out = append(out, t...)
	}
	return out, nil
}

// podsFor lists the pods of a selector, best candidates for logs first,
// waiting up to --pod-running-timeout for one to appear.
func (o *LogsOptions) podsFor(ctx context.Context, namespace string, selector labels.Selector) ([]corev1.Pod, error) {
	opts := metav1.ListOptions{LabelSelector: selector.String()}
	list, err := o.Client.CoreV1().Pods(namespace).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	if len(list.Items) > 0 {
		pods := list.Items
		sort.SliceStable(pods, func(i, j int) bool { return betterForLogs(&pods[i], &pods[j]) })
		return pods, nil
	}
	opts.ResourceVersion = list.ResourceVersion
	w, err := o.Client.CoreV1().Pods(namespace).Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	wctx, cancel := context.WithTimeout(ctx, o.PodRunningTimeout)
	defer cancel()
	ev, err := watchtools.UntilWithoutRetry(wctx, w, func(e watch.Event) (bool, error) {
		return e.Type == watch.Added || e.Type == watch.Modified, nil
	})
	if err != nil {
		if wait.Interrupted(err) || wctx.Err() != nil {
			return nil, errors.New("timed out waiting for the condition")
		}
		return nil, err
	}
	pod, ok := ev.Object.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("%#v is not a pod event", ev)
	}
	return []corev1.Pod{*pod}, nil
}

// betterForLogs orders pods as kubectl's ByLogging: scheduled before
// unscheduled, running before unknown before pending, ready before not
// ready, more restarts first, older first.
func betterForLogs(a, b *corev1.Pod) bool {
	if (a.Spec.NodeName != "") != (b.Spec.NodeName != "") {
		return a.Spec.NodeName != ""
	}
	rank := map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}
	if rank[a.Status.Phase] != rank[b.Status.Phase] {
		return rank[a.Status.Phase] > rank[b.Status.Phase]
	}
	if podutils.IsPodReady(a) != podutils.IsPodReady(b) {
		return podutils.IsPodReady(a)
	}
	if ra, rb := maxRestarts(a), maxRestarts(b); ra != rb {
		return ra > rb
	}
	return a.CreationTimestamp.Before(&b.CreationTimestamp)
}

func maxRestarts(p *corev1.Pod) int32 {
	var m int32
	for _, s := range p.Status.ContainerStatuses {
		m = max(m, s.RestartCount)
	}
	return m
}

// podTargets returns the containers of a pod to read: all of them, or the
// one named, or the default one (the kubectl.kubernetes.io/default-container
// annotation, else the first, saying so when there are others).
func (o *LogsOptions) podTargets(pod *corev1.Pod, opts *corev1.PodLogOptions, all bool) ([]logTarget, error) {
	if all {
		var out []logTarget
		var names []string
		for _, c := range pod.Spec.InitContainers {
			names = append(names, c.Name)
		}
		for _, c := range pod.Spec.Containers {
			names = append(names, c.Name)
		}
		for _, c := range pod.Spec.EphemeralContainers {
			names = append(names, c.Name)
		}
		for _, n := range names {
			c := opts.DeepCopy()
			c.Container = n
			out = append(out, logTarget{pod: pod.Name, namespace: pod.Namespace, container: n, opts: c})
		}
		return out, nil
	}
	c := opts.DeepCopy()
	if c.Container == "" {
		if def := pod.Annotations["kubectl.kubernetes.io/default-container"]; def != "" {
			if containerExists(pod, def) {
				c.Container = def
			} else {
				fmt.Fprintf(o.Streams.ErrOut, "Default container name %q not found in pod %s\n", def, pod.Name)
			}
		}
	}
	if c.Container == "" {
		if len(pod.Spec.Containers) == 0 {
			return nil, fmt.Errorf("pod %s has no containers", pod.Name)
		}
		c.Container = pod.Spec.Containers[0].Name
		if len(pod.Spec.Containers) > 1 || len(pod.Spec.InitContainers) > 0 || len(pod.Spec.EphemeralContainers) > 0 {
			fmt.Fprintf(o.Streams.ErrOut, "Defaulted container %q out of: %s\n", c.Container, allContainerNames(pod))
		}
	}
	if !containerExists(pod, c.Container) {
		return nil, fmt.Errorf("container %s is not valid for pod %s out of: %s", c.Container, pod.Name, allContainerNames(pod))
	}
	return []logTarget{{pod: pod.Name, namespace: pod.Namespace, container: c.Container, opts: c}}, nil
}

func containerExists(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

func allContainerNames(pod *corev1.Pod) string {
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// selectorForObject returns the namespace and pod selector of a workload
// or service, as kubectl's SelectorsForObject.
func selectorForObject(obj runtime.Object) (string, labels.Selector, error) {
	var ls *metav1.LabelSelector
	var ns string
	switch t := obj.(type) {
	case *appsv1.Deployment:
		ns, ls = t.Namespace, t.Spec.Selector
	case *appsv1.ReplicaSet:
		ns, ls = t.Namespace, t.Spec.Selector
	case *appsv1.StatefulSet:
		ns, ls = t.Namespace, t.Spec.Selector
	case *appsv1.DaemonSet:
		ns, ls = t.Namespace, t.Spec.Selector
	case *batchv1.Job:
		ns, ls = t.Namespace, t.Spec.Selector
	case *corev1.ReplicationController:
		return t.Namespace, labels.SelectorFromSet(t.Spec.Selector), nil
	case *corev1.Service:
		if t.Spec.Selector == nil {
			return "", nil, fmt.Errorf("invalid service '%s': Service is defined without a selector", t.Name)
		}
		return t.Namespace, labels.SelectorFromSet(t.Spec.Selector), nil
	default:
		return "", nil, fmt.Errorf("selector for %s not implemented", goTypeName(obj))
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return "", nil, fmt.Errorf("invalid label selector: %v", err)
	}
	return ns, sel, nil
}

// goTypeName names an object's Go type as kubectl's %T does ("*v1.ConfigMap").
func goTypeName(obj runtime.Object) string {
	s := fmt.Sprintf("%T", obj)
	if strings.HasPrefix(s, "*unstructured.") {
		gvk := obj.GetObjectKind().GroupVersionKind()
		return "*" + gvk.Version + "." + gvk.Kind
	}
	return s
}

// prefixed adds "[pod/NAME/CONTAINER] " to each line when --prefix.
func (o *LogsOptions) prefixed(t logTarget, w io.Writer) io.Writer {
	if !o.Prefix {
		return w
	}
	return &prefixingWriter{prefix: []byte(fmt.Sprintf("[pod/%s/%s] ", t.pod, t.container)), writer: w}
}

// prefixingWriter writes its prefix and each line in one write, so lines
// of concurrent streams do not interleave.
type prefixingWriter struct {
	prefix []byte
	writer io.Writer
}

// Write writes the prefix and p at once.
func (pw *prefixingWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := pw.writer.Write(append(append([]byte(nil), pw.prefix...), p...))
	if n > len(p) {
		return len(p), err
	}
	return n, err
}

// consume copies one container's log line by line. A followed log that
// fails with a server error is retried every second, up to
// --pod-running-timeout, as kubectl does.
func (o *LogsOptions) consume(ctx context.Context, t logTarget, out, errOut io.Writer) error {
	if !o.Follow {
		err := consumeLog(ctx, o.Client.CoreV1().Pods(t.namespace).GetLogs(t.pod, t.opts), out)
		if err != nil && o.IgnoreLogErrors {
			fmt.Fprint(errOut, "error: "+err.Error()+"\n")
			return nil
		}
		return err
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, o.PodRunningTimeout, true, func(context.Context) (bool, error) {
		err := consumeLog(ctx, o.Client.CoreV1().Pods(t.namespace).GetLogs(t.pod, t.opts), out)
		if err == nil {
			return true, nil
		}
		if o.IgnoreLogErrors {
			fmt.Fprint(errOut, "error: "+err.Error()+"\n")
			return true, nil
		}
		fmt.Fprintln(o.Streams.ErrOut, err.Error())
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			return false, nil
		}
		return false, err
	})
}

// parallel follows every target at once; the first error ends the copy.
func (o *LogsOptions) parallel(ctx context.Context, targets []logTarget) error {
	reader, writer := io.Pipe()
	var wg sync.WaitGroup
	wg.Add(len(targets))
	for _, t := range targets {
		go func(t logTarget) {
			defer wg.Done()
			if err := o.consume(ctx, t, o.prefixed(t, writer), writer); err != nil {
				writer.CloseWithError(err)
			}
		}(t)
	}
	go func() {
		wg.Wait()
		writer.Close()
	}()
	_, err := io.Copy(o.Streams.Out, reader)
	return err
}

// consumeLog streams one log request to out a line at a time.
func consumeLog(ctx context.Context, req *rest.Request, out io.Writer) error {
	rc, err := req.Stream(ctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	r := bufio.NewReader(rc)
	for {
		line, err := r.ReadBytes('\n')
		if _, werr := out.Write(line); werr != nil {
			return werr
		}
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// utilerrorsReduce returns one error as itself, several as an aggregate.
func utilerrorsReduce(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return aggregate(errs)
}
