package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic"
)

// TaintOptions are the inputs of taint.
type TaintOptions struct {
	mutation
	// Resources are the arguments before the taint changes: the type
	// ("nodes") and the node names.
	Resources []string
	// Add and Remove are the parsed taint changes; a removal without an
	// effect removes every taint of its key.
	Add, Remove []corev1.Taint
	Overwrite   bool
	// Validate is accepted for kubectl's --validate; taint sends no
	// manifest to validate.
	Validate string
}

// The operations taint reports, as kubectl's.
const (
	taintModified  = "modified"
	taintTainted   = "tainted"
	taintUntainted = "untainted"
)

// NewCmdTaint returns the taint command.
func NewCmdTaint(f *Factory, streams IOStreams) *cobra.Command {
	o := &TaintOptions{}
	o.Streams = streams
	o.FieldManager = "kubectl-taint"
	cmd := &cobra.Command{
		Use:                   "taint NODE NAME KEY_1=VAL_1:TAINT_EFFECT_1 ... KEY_N=VAL_N:TAINT_EFFECT_N",
		DisableFlagsInUseLine: true,
		Short:                 "Update the taints on one or more nodes",
		Long: fmt.Sprintf(`Update the taints on one or more nodes.

  * A taint consists of a key, value, and effect. As an argument here, it is expressed as key=value:effect.
  * The key must begin with a letter or number, and may contain letters, numbers, hyphens, dots, and underscores, up to %d characters.
  * Optionally, the key can begin with a DNS subdomain prefix and a single '/', like example.com/my-app.
  * The value is optional. If given, it must begin with a letter or number, and may contain letters, numbers, hyphens, dots, and underscores, up to %d characters.
  * The effect must be NoSchedule, PreferNoSchedule or NoExecute.
  * Currently taint can only apply to node.`, validation.DNS1123SubdomainMaxLength, validation.LabelValueMaxLength),
		Example: `  # Keep pods without a matching toleration off node minik-node-1; an existing
  # dedicated:NoSchedule taint gets the new value with --overwrite
  minikctl taint nodes minik-node-1 dedicated=special-user:NoSchedule

  # Remove the taint with key dedicated and effect NoSchedule
  minikctl taint nodes minik-node-1 dedicated:NoSchedule-

  # Remove every taint with key dedicated
  minikctl taint nodes minik-node-1 dedicated-

  # Taint the nodes labelled tier=batch
  minikctl taint node -l tier=batch dedicated=batch:PreferNoSchedule`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(f, cmd, args); err != nil {
				return err
			}
			if err := o.validate(f); err != nil {
				return err
			}
			return runTaint(cmd.Context(), f, o)
		},
	}
	o.PrintFlags.AddFlags(cmd)
	addDryRunFlag(cmd, &o.DryRunFlag)
	cmd.Flags().StringVar(&o.Validate, "validate", "strict", `Must be one of: strict (or true), warn, ignore (or false).`)
	cmd.Flags().Lookup("validate").NoOptDefVal = "strict"
	cmd.Flags().StringVarP(&o.Selection.LabelSelector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', and '!='.(e.g. -l key1=value1,key2=value2)")
	cmd.Flags().BoolVar(&o.Overwrite, "overwrite", false, "If true, allow taints to be overwritten, otherwise reject taint updates that overwrite existing taints.")
	cmd.Flags().BoolVar(&o.Selection.All, "all", false, "Select all nodes in the cluster")
	cmd.Flags().StringVar(&o.FieldManager, "field-manager", o.FieldManager, "Name of the manager used to track field ownership.")
	return cmd
}

// complete splits the arguments into resources and taint changes, as
// kubectl does: every resource comes first.
func (o *TaintOptions) complete(f *Factory, cmd *cobra.Command, args []string) error {
	var changes []string
	o.Resources = nil
	for _, a := range args {
		isChange := strings.Contains(a, "=") || strings.Contains(a, ":") || strings.HasSuffix(a, "-")
		switch {
		case isChange:
			changes = append(changes, a)
		case len(changes) > 0:
			return fmt.Errorf("all resources must be specified before taint changes: %s", a)
		default:
			o.Resources = append(o.Resources, a)
		}
	}
	if err := o.mutation.complete(f, cmd, nil); err != nil {
		return err
	}
	if len(o.Resources) < 1 {
		return errors.New("one or more resources must be specified as <resource> <name>")
	}
	if len(changes) < 1 {
		return errors.New("at least one taint update is required")
	}
	var err error
	if o.Add, o.Remove, err = parseTaints(changes); err != nil {
		return usageErrorf(cmd, "%s", err)
	}
	// With a selector or --all, kubectl selects nodes and ignores names.
	o.Selection.Args = o.Resources
	if o.Selection.LabelSelector != "" || o.Selection.All {
		o.Selection.Args = o.Resources[:1]
	}
	return nil
}

// validate checks that the resources are nodes, that no taint is both
// added and removed, and that some node is named or selected.
func (o *TaintOptions) validate(f *Factory) error {
	mapper, err := f.ToRESTMapper()
	if err != nil {
		return err
	}
	resourceType := strings.ToLower(o.Resources[0])
	mapping, err := mappingFor(mapper, resourceType)
	if err != nil {
		return err
	}
	if mapping.GroupVersionKind.Kind != "Node" {
		return fmt.Errorf("invalid resource type %s, only node types are supported", resourceType)
	}
	var conflicts []string
	for _, add := range o.Add {
		for _, rm := range o.Remove {
			if add.Key == rm.Key && (rm.Effect == "" || add.Effect == rm.Effect) {
				conflicts = append(conflicts, fmt.Sprintf("{\"%s\":\"%s\"}", rm.Key, rm.Effect))
			}
		}
	}
	if len(conflicts) > 0 {
		return fmt.Errorf("can not both modify and remove the following taint(s) in the same command: %s", strings.Join(conflicts, ", "))
	}
	switch {
	case o.Selection.All && o.Selection.LabelSelector != "":
		return errors.New("setting 'all' parameter with a non empty selector is prohibited")
	case !o.Selection.All && o.Selection.LabelSelector == "" && len(o.Resources) < 2:
		return errors.New("at least one resource name must be specified since 'all' parameter is not set")
	}
	return nil
}

// parseTaints parses the taint changes: "key=value:Effect" and
// "key:Effect" add, the same or a bare "key" followed by "-" remove.
func parseTaints(specs []string) (add, remove []corev1.Taint, err error) {
	seen := map[corev1.TaintEffect]map[string]bool{}
	for _, spec := range specs {
		if rest, ok := strings.CutSuffix(spec, "-"); ok {
			t, err := parseTaint(rest)
			if err != nil {
				return nil, nil, err
			}
			remove = append(remove, corev1.Taint{Key: t.Key, Effect: t.Effect})
			continue
		}
		t, err := parseTaint(spec)
		if err != nil {
			return nil, nil, err
		}
		if t.Effect == "" {
			return nil, nil, fmt.Errorf("invalid taint spec: %v", spec)
		}
		if seen[t.Effect][t.Key] {
			return nil, nil, fmt.Errorf("duplicated taints with the same key and effect: %v", t)
		}
		if seen[t.Effect] == nil {
			seen[t.Effect] = map[string]bool{}
		}
		seen[t.Effect][t.Key] = true
		add = append(add, t)
	}
	return add, remove, nil
}

// parseTaint parses "key=value:Effect", "key:Effect" or "key".
func parseTaint(spec string) (corev1.Taint, error) {
	var t corev1.Taint
	parts := strings.Split(spec, ":")
	switch len(parts) {
	case 1:
		t.Key = parts[0]
	case 2:
		t.Effect = corev1.TaintEffect(parts[1])
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return corev1.Taint{}, fmt.Errorf("invalid taint effect: %v, unsupported taint effect", t.Effect)
		}
		kv := strings.Split(parts[0], "=")
		if len(kv) > 2 {
			return corev1.Taint{}, fmt.Errorf("invalid taint spec: %v", spec)
		}
		t.Key = kv[0]
		if len(kv) == 2 {
			t.Value = kv[1]
			if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
				return corev1.Taint{}, fmt.Errorf("invalid taint spec: %v, %s", spec, strings.Join(errs, "; "))
			}
		}
	default:
		return corev1.Taint{}, fmt.Errorf("invalid taint spec: %v", spec)
	}
	if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
		return corev1.Taint{}, fmt.Errorf("invalid taint spec: %v, %s", spec, strings.Join(errs, "; "))
	}
	return t, nil
}

// runTaint changes the taints of each node selected, continuing past the
// nodes it cannot change; their errors come back together.
func runTaint(ctx context.Context, f *Factory, o *TaintOptions) error {
	infos, _, errs := f.selectObjects(ctx, &o.Selection)
	if len(infos) > 0 {
		dc, err := f.DynamicClient()
		if err != nil {
			return err
		}
		for _, info := range infos {
			if err := o.taintNode(ctx, dc, info); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return utilerrors.Flatten(utilerrors.NewAggregate(errs))
}

// taintNode computes one node's new taints and sends them as a patch (or,
// with --dry-run=client, prints the node as it would be).
func (o *TaintOptions) taintNode(ctx context.Context, dc dynamic.Interface, info *Info) error {
	typed, err := toTyped(info.Object)
	if err != nil {
		return err
	}
	node, ok := typed.(*corev1.Node)
	if !ok {
		return fmt.Errorf("unexpected type %T, expected Node", typed)
	}
	if !o.Overwrite {
		if exists := existingTaints(node.Spec.Taints, o.Add); exists != "" {
			return fmt.Errorf("node %s already has %v taint(s) with same effect(s) and --overwrite is false", node.Name, exists)
		}
	}
	operation, taints, err := o.reorganize(node.Spec.Taints)
	if err != nil {
		return err
	}
	before, err := json.Marshal(node)
	if err != nil {
		return err
	}
	node.Spec.Taints = taints
	after, err := json.Marshal(node)
	if err != nil {
		return err
	}
	patch, patchType, err := twoWayPatch(info.Mapping.GroupVersionKind, before, after)
	if err != nil {
		return fmt.Errorf("patch for node %s: %w", node.Name, err)
	}
	var out runtime.Object
	if o.DryRun == DryRunClient {
		if out, err = applyPatchLocally(info.Object, patch); err != nil {
			return err
		}
	} else {
		out, err = resourceClient(dc, info).Patch(ctx, info.Name, patchType, patch, metav1.PatchOptions{DryRun: o.dryRunOption(), FieldManager: o.FieldManager})
		if err != nil {
			return err
		}
	}
	return o.print(out, operation)
}

// existingTaints names, comma-separated, the keys of the taints to add
// that the node already has with the same effect.
func existingTaints(current, add []corev1.Taint) string {
	var keys []string
	for _, t := range add {
		for _, c := range current {
			if t.Key == c.Key && t.Effect == c.Effect {
				keys = append(keys, t.Key)
			}
		}
	}
	return strings.Join(keys, ",")
}

// reorganize returns the node's taints after the change, added ones
// first, and the operation to report. Like kubectl, it reports
// "modified" whenever --overwrite is set, and fails when a taint to
// remove is not there.
func (o *TaintOptions) reorganize(current []corev1.Taint) (string, []corev1.Taint, error) {
	taints := append([]corev1.Taint{}, o.Add...)
	for _, c := range current {
		replaced := false
		for _, t := range taints {
			if t.MatchTaint(&c) {
				replaced = true
				break
			}
		}
		if !replaced {
			taints = append(taints, c)
		}
	}
	added := len(taints) != len(current)
	var errs []error
	removed := false
	for _, rm := range o.Remove {
		kept := []corev1.Taint{}
		for _, t := range taints {
			if t.Key == rm.Key && (rm.Effect == "" || t.Effect == rm.Effect) {
				continue
			}
			kept = append(kept, t)
		}
		// kubectl judges "removed" by the last removal alone.
		removed = len(kept) != len(taints)
		if !removed {
			errs = append(errs, fmt.Errorf("taint %q not found", rm.ToString()))
		}
		taints = kept
	}
	operation := taintUntainted
	switch {
	case added && removed, o.Overwrite:
		operation = taintModified
	case added:
		operation = taintTainted
	}
	return operation, taints, utilerrors.NewAggregate(errs)
}

// applyPatchLocally returns obj with a strategic merge patch of a Node
// applied, for --dry-run=client.
func applyPatchLocally(obj runtime.Object, patch []byte) (runtime.Object, error) {
	original, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	patched, err := strategicpatch.StrategicMergePatch(original, patch, &corev1.Node{})
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(patched); err != nil {
		return nil, err
	}
	return u, nil
}
