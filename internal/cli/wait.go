package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/client-go/util/jsonpath"
)

// WaitOptions are the inputs of wait.
type WaitOptions struct {
	Selection  ObjectSelection
	For        []string
	Timeout    time.Duration
	PrintFlags PrintFlags

	Streams IOStreams
}

// waitCondition checks one object; done reports success.
type waitCondition struct {
	kind string // "delete", "create", "condition", "jsonpath"
	// condition=NAME[=VALUE]
	name, value string
	// jsonpath
	parser   *jsonpath.JSONPath
	matchAny bool
}

// NewCmdWait returns the wait command.
func NewCmdWait(f *Factory, streams IOStreams) *cobra.Command {
	o := &WaitOptions{Timeout: 30 * time.Second, PrintFlags: PrintFlags{Operation: "condition met"}, Streams: streams}
	cmd := &cobra.Command{
		Use:                   "wait ([-f FILENAME] | resource.group/resource.name | resource.group [(-l label | --all)]) [--for=create|--for=delete|--for condition=available|--for=jsonpath='{}'[=value]]",
		DisableFlagsInUseLine: true,
		Short:                 "Wait for a specific condition on one or many resources",
		Long: `Experimental: Wait for a specific condition on one or many resources.

 The command takes multiple resources and waits until the specified condition is seen in the Status field of every given resource.

 A successful message will be printed to stdout indicating when the specified condition has been met. You can use -o option to change to output destination.`,
		Example: `  # Wait for the demo's deployment to be available
  minikctl -n demo wait --for=condition=Available deployment/web --timeout=120s

  # Wait for the pods of the deployment to be ready
  minikctl -n demo wait --for=condition=Ready pod -l app=web

  # Wait for a pod to be gone
  minikctl -n demo wait --for=delete pod/web-6d4cf56db6-abcde --timeout=60s`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			o.Selection.Namespace, o.Selection.EnforceNamespace, err = f.Namespace()
			if err != nil {
				return err
			}
			o.Selection.Args = args
			o.Selection.BaseName = cmd.Root().Name()
			o.Selection.AllowEmptySelector = true
			conds, err := parseWaitConditions(o.For)
			if err != nil {
				return err
			}
			if _, err := o.PrintFlags.ToPrinter(); err != nil {
				return err
			}
			return runWait(cmd.Context(), f, o, conds)
		},
	}
	o.PrintFlags.AddFlags(cmd)
	o.Selection.Filenames.AddFlags(cmd, "identifying the resource.")
	cmd.Flags().BoolVar(&o.Selection.All, "all", false, "Select all resources in the namespace of the specified resource types")
	cmd.Flags().BoolVarP(&o.Selection.AllNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces. Namespace in current context is ignored even if specified with --namespace.")
	cmd.Flags().StringVarP(&o.Selection.LabelSelector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2,key3 in (value3)). Matching objects must satisfy all of the specified label constraints.")
	cmd.Flags().StringVar(&o.Selection.FieldSelector, "field-selector", "", "Selector (field query) to filter on, supports '=', '==', and '!='.(e.g. --field-selector key1=value1,key2=value2). The server only supports a limited number of field queries per type.")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", o.Timeout, "The length of time to wait before giving up. Zero means check once and don't wait, negative means wait for a week.")
	cmd.Flags().StringArrayVar(&o.For, "for", nil, "The condition to wait on: [create|delete|condition=condition-name[=condition-value]|jsonpath='{JSONPath expression}'=[JSONPath value]]. The default condition-value is true. Condition values are compared after Unicode simple case folding, which is a more general form of case-insensitivity. Multiple conditions are supported and AND'ed to each other in a sequential order. If --for=create is passed, it is always waited first.")
	return cmd
}

// parseWaitConditions reads the --for flags as kubectl does.
func parseWaitConditions(fors []string) ([]waitCondition, error) {
	var out []waitCondition
	for _, c := range fors {
		lower := strings.ToLower(c)
		switch {
		case lower == "delete":
			out = append(out, waitCondition{kind: "delete"})
		case lower == "create":
			out = append(out, waitCondition{kind: "create"})
		case strings.HasPrefix(c, "condition="):
			name, value := strings.TrimPrefix(c, "condition="), "true"
			if i := strings.Index(name, "="); i != -1 {
				name, value = name[:i], name[i+1:]
			}
			out = append(out, waitCondition{kind: "condition", name: name, value: value})
		case strings.HasPrefix(c, "jsonpath="):
			expr, value, err := splitJSONPathCondition(strings.TrimPrefix(c, "jsonpath="))
			if err != nil {
				return nil, err
			}
			if expr == "" {
				return nil, errors.New("jsonpath expression cannot be empty")
			}
			p := jsonpath.New("wait").AllowMissingKeys(true)
			if err := p.Parse(expr); err != nil {
				return nil, err
			}
			out = append(out, waitCondition{kind: "jsonpath", parser: p, value: value, matchAny: value == ""})
		default:
			return nil, fmt.Errorf("unrecognized condition: %q", c)
		}
	}
	if out == nil {
		return nil, fmt.Errorf("unrecognized condition: %q", fors)
	}
	return out, nil
}

// splitJSONPathCondition splits "{.a.b}=value" on a single '='.
func splitJSONPathCondition(input string) (string, string, error) {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(input); i++ {
		if input[i] == '=' {
			if i < len(input)-1 && input[i+1] == '=' {
				cur.WriteString("==")
				i++
				continue
			}
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(input[i])
	}
	parts = append(parts, cur.String())
	if len(parts) < 1 || len(parts) > 2 {
		return "", "", errors.New("jsonpath wait format must be --for=jsonpath='{.status.readyReplicas}'=3 or --for=jsonpath='{.status.readyReplicas}'")
	}
	expr, err := RelaxedJSONPathExpression(parts[0])
	if err != nil {
		return "", "", err
	}
	if len(parts) == 1 {
		return expr, "", nil
	}
	value := strings.Trim(parts[1], `'"`)
	if value == "" {
		return "", "", errors.New("jsonpath wait has to have a value after equal sign, like --for=jsonpath='{.status.readyReplicas}'=3")
	}
	return expr, value, nil
}

// runWait waits on every selected object for every condition in turn,
// watching (never polling, except for --for=create), and prints
// "kind/name condition met" for each success.
func runWait(ctx context.Context, f *Factory, o *WaitOptions, conds []waitCondition) error {
	timeout := o.Timeout
	if timeout < 0 {
		timeout = 168 * time.Hour
	}
	ctx, cancel := watchtools.ContextWithOptionalTimeout(ctx, timeout)
	defer cancel()
	isDelete, isCreate := false, false
	for _, c := range conds {
		isDelete = isDelete || c.kind == "delete"
		isCreate = isCreate || c.kind == "create"
	}
	if isCreate {
		err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
			infos, _, errs := f.selectObjects(ctx, &o.Selection)
			if len(errs) > 0 {
				if apierrors.IsNotFound(errs[0]) {
					return false, nil
				}
				return false, errs[0]
			}
			return len(infos) > 0, nil
		})
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) || wait.Interrupted(err) {
				return errors.New(errTimedOut)
			}
			return err
		}
	}
	infos, _, errs := f.selectObjects(ctx, &o.Selection)
	if isDelete {
		errs = ignoreNotFound(errs)
	}
	if len(errs) > 0 {
		return errs[0]
	}
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	printer, err := o.PrintFlags.ToPrinter()
	if err != nil {
		return err
	}
	for _, info := range infos {
		for _, c := range conds {
			obj, err := c.wait(ctx, dc, info, o.Timeout, o.Streams)
			if err != nil {
				return err
			}
			printer.PrintObj(obj, o.Streams.Out)
		}
	}
	if len(infos) == 0 && !isDelete {
		return errors.New("no matching resources found")
	}
	return nil
}

// wait waits for one condition on one object and returns the object seen.
func (c waitCondition) wait(ctx context.Context, dc dynamic.Interface, info *Info, timeout time.Duration, streams IOStreams) (runtime.Object, error) {
	if info.Name == "" {
		return nil, errors.New("resource name must be provided")
	}
	timedOut := fmt.Errorf("%s on %s/%s", errTimedOut, info.Mapping.Resource.Resource, info.Name)
	switch c.kind {
	case "create":
		return info.Object, nil
	case "delete":
		got, err := resourceClient(dc, info).Get(ctx, info.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return info.Object, nil
		}
		if err != nil {
			return nil, err
		}
		if timeout == 0 {
			return nil, fmt.Errorf("condition not met for %s", info.ObjectName())
		}
		if err := waitDeleted(ctx, dc, info, got.GetUID(), streams); err != nil {
			return nil, err
		}
		return got, nil
	}
	if timeout == 0 {
		got, err := resourceClient(dc, info).Get(ctx, info.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		ok, err := c.check(got)
		if err != nil {
			return got, err
		}
		if !ok {
			return got, fmt.Errorf("condition not met for %s", info.ObjectName())
		}
		return got, nil
	}
	precondition := func(store cache.Store) (bool, error) {
		_, exists, err := store.Get(&metav1.ObjectMeta{Namespace: info.Namespace, Name: info.Name})
		if err != nil {
			return true, err
		}
		if !exists {
			return true, apierrors.NewNotFound(info.Mapping.Resource.GroupResource(), info.Name)
		}
		return false, nil
	}
	ev, err := watchtools.UntilWithSync(ctx, listWatchByName(dc, info), &unstructured.Unstructured{}, precondition, func(e watch.Event) (bool, error) {
		switch e.Type {
		case watch.Error:
			fmt.Fprintf(streams.ErrOut, "error: An error occurred while waiting for the condition to be satisfied: %v", apierrors.FromObject(e.Object))
			return false, nil
		case watch.Deleted:
			return false, nil
		}
		return c.check(e.Object.(*unstructured.Unstructured))
	})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || wait.Interrupted(err) {
			return nil, timedOut
		}
		return nil, err
	}
	return ev.Object, nil
}

// check evaluates a condition or jsonpath condition on an object.
func (c waitCondition) check(obj *unstructured.Unstructured) (bool, error) {
	if c.kind == "jsonpath" {
		results, err := c.parser.FindResults(obj.Object)
		if err != nil {
			return false, err
		}
		if len(results) == 0 || len(results[0]) == 0 {
			return false, nil
		}
		if len(results) > 1 {
			return false, errors.New("given jsonpath expression matches more than one list")
		}
		if len(results[0]) > 1 {
			return false, errors.New("given jsonpath expression matches more than one value")
		}
		r := results[0][0]
		if c.matchAny {
			return true, nil
		}
		switch r.Interface().(type) {
		case map[string]any, []any:
			return false, errors.New("jsonpath leads to a nested object or list which is not supported")
		}
		return strings.TrimSpace(fmt.Sprintf("%v", r.Interface())) == strings.TrimSpace(c.value), nil
	}
	conditions, found, err := unstructured.NestedSlice(obj.Object, "status", "conditions")
	if err != nil || !found {
		return false, nil
	}
	for _, raw := range conditions {
		cond, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		name, _, _ := unstructured.NestedString(cond, "type")
		if !strings.EqualFold(name, c.name) {
			continue
		}
		status, found, _ := unstructured.NestedString(cond, "status")
		if !found {
			continue
		}
		if gen, found, _ := unstructured.NestedInt64(obj.Object, "metadata", "generation"); found {
			observed, ok, _ := unstructured.NestedInt64(cond, "observedGeneration")
			if !ok {
				observed, ok, _ = unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
			}
			if ok && observed < gen {
				return false, nil
			}
		}
		return strings.EqualFold(status, c.value), nil
	}
	return false, nil
}
