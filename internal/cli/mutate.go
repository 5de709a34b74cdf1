package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// mutation is the part every command that changes objects in place shares:
// the selection, --dry-run, --field-manager and the printer.
type mutation struct {
	Selection    ObjectSelection
	PrintFlags   PrintFlags
	DryRunFlag   string
	DryRun       DryRunStrategy
	FieldManager string
	Streams      IOStreams
}

func (m *mutation) addFlags(cmd *cobra.Command, usage string, selectors bool) {
	m.PrintFlags.AddFlags(cmd)
	m.Selection.Filenames.AddFlags(cmd, usage)
	addDryRunFlag(cmd, &m.DryRunFlag)
	cmd.Flags().StringVar(&m.FieldManager, "field-manager", m.FieldManager, "Name of the manager used to track field ownership.")
	if selectors {
		cmd.Flags().StringVarP(&m.Selection.LabelSelector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2,key3 in (value3)). Matching objects must satisfy all of the specified label constraints.")
		cmd.Flags().BoolVar(&m.Selection.All, "all", false, "Select all resources, in the namespace of the specified resource types")
	}
}

func (m *mutation) complete(f *Factory, cmd *cobra.Command, args []string) error {
	var err error
	if m.DryRun, err = parseDryRun(m.DryRunFlag); err != nil {
		return err
	}
	m.PrintFlags.DryRun = m.DryRun
	m.Selection.Namespace, m.Selection.EnforceNamespace, err = f.Namespace()
	if m.Selection.AllNamespaces {
		m.Selection.EnforceNamespace = false
	}
	m.Selection.Args = args
	m.Selection.BaseName = cmd.Root().Name()
	return err
}

func (m *mutation) dryRunOption() []string {
	if m.DryRun == DryRunServer {
		return []string{metav1.DryRunAll}
	}
	return nil
}

func (m *mutation) print(obj runtime.Object, operation string) error {
	pf := m.PrintFlags
	pf.Operation = operation
	printer, err := pf.ToPrinter()
	if err != nil {
		return err
	}
	return printer.PrintObj(obj, m.Streams.Out)
}

// ScaleOptions are the inputs of scale.
type ScaleOptions struct {
	mutation
	Replicas        int
	CurrentReplicas int
	ResourceVersion string
}

// NewCmdScale returns the scale command.
func NewCmdScale(f *Factory, streams IOStreams) *cobra.Command {
	o := &ScaleOptions{Replicas: -1, CurrentReplicas: -1}
	o.Streams = streams
	o.FieldManager = "kubectl-scale"
	cmd := &cobra.Command{
		Use:                   "scale [--resource-version=version] [--current-replicas=count] --replicas=COUNT (-f FILENAME | TYPE NAME)",
		DisableFlagsInUseLine: true,
		Short:                 "Set a new size for a deployment, replica set, replication controller, or stateful set",
		Long: `Set a new size for a deployment, replica set, replication controller, or stateful set.

 Scale also allows users to specify one or more preconditions for the scale action.

 If --current-replicas or --resource-version is specified, it is validated before the scale is attempted, and it is guaranteed that the precondition holds true when the scale is sent to the server.`,
		Example: `  # Scale the demo's deployment to 5 replicas
  minikctl -n demo scale --replicas=5 deployment/web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(f, cmd, args); err != nil {
				return err
			}
			if o.Replicas < 0 {
				return errors.New("The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
			}
			if o.CurrentReplicas < -1 {
				return errors.New("The --current-replicas must specify an integer of -1 or greater")
			}
			return runScale(cmd.Context(), f, o)
		},
	}
	o.addFlags(cmd, "identifying the resource to set a new size", true)
	cmd.Flags().IntVar(&o.Replicas, "replicas", o.Replicas, "The new desired number of replicas. Required.")
	cmd.Flags().IntVar(&o.CurrentReplicas, "current-replicas", o.CurrentReplicas, "Precondition for current size. Requires that the current size of the resource match this value in order to scale. -1 (default) for no condition.")
	cmd.Flags().StringVar(&o.ResourceVersion, "resource-version", "", "Precondition for resource version. Requires that the current resource version match this value in order to scale.")
	return cmd
}

func runScale(ctx context.Context, f *Factory, o *ScaleOptions) error {
	infos, _, errs := f.selectObjects(ctx, &o.Selection)
	if len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	if len(infos) == 0 {
		return errors.New("no objects passed to scale")
	}
	if o.ResourceVersion != "" && len(infos) > 1 {
		return errors.New("cannot use --resource-version with multiple resources")
	}
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	for _, info := range infos {
		u := info.Object.(*unstructured.Unstructured)
		if o.CurrentReplicas != -1 {
			cur, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
			if int(cur) != o.CurrentReplicas {
				return fmt.Errorf("Expected replicas to be %d, was %d", o.CurrentReplicas, cur)
			}
		}
		if o.ResourceVersion != "" && u.GetResourceVersion() != o.ResourceVersion {
			return fmt.Errorf("Expected resource version to be %s, was %s", o.ResourceVersion, u.GetResourceVersion())
		}
		if o.DryRun != DryRunClient {
			patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, o.Replicas)
			if _, err := resourceClient(dc, info).Patch(ctx, info.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{DryRun: o.dryRunOption(), FieldManager: o.FieldManager}, "scale"); err != nil {
				return err
			}
		}
		_ = unstructured.SetNestedField(u.Object, int64(o.Replicas), "spec", "replicas")
		if err := o.print(u, "scaled"); err != nil {
			return err
		}
	}
	return nil
}

// PatchOptions are the inputs of patch.
type PatchOptions struct {
	mutation
	Patch       string
	PatchFile   string
	PatchType   string
	Subresource string
}

var patchTypes = map[string]types.PatchType{"json": types.JSONPatchType, "merge": types.MergePatchType, "strategic": types.StrategicMergePatchType}

// NewCmdPatch returns the patch command.
func NewCmdPatch(f *Factory, streams IOStreams) *cobra.Command {
	o := &PatchOptions{PatchType: "strategic"}
	o.Streams = streams
	o.FieldManager = "kubectl-patch"
	cmd := &cobra.Command{
		Use:                   "patch (-f FILENAME | TYPE NAME) [-p PATCH|--patch-file FILE]",
		DisableFlagsInUseLine: true,
		Short:                 "Update fields of a resource",
		Long: `Update fields of a resource using strategic merge patch, a JSON merge patch, or a JSON patch.

 JSON and YAML formats are accepted.`,
		Example: `  # Set the demo's deployment to 5 replicas with a strategic merge patch
  minikctl -n demo patch deployment web -p '{"spec":{"replicas":5}}'

  # Change the image with a JSON patch
  minikctl -n demo patch deployment web --type=json -p='[{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value":"nginx:1.28"}]'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(f, cmd, args); err != nil {
				return err
			}
			if o.Patch != "" && o.PatchFile != "" {
				return errors.New("cannot specify --patch and --patch-file together")
			}
			if o.Patch == "" && o.PatchFile == "" {
				return errors.New("must specify --patch or --patch-file containing the contents of the patch")
			}
			if _, ok := patchTypes[strings.ToLower(o.PatchType)]; !ok {
				return fmt.Errorf("--type must be one of %v, not %q", []string{"json", "merge", "strategic"}, o.PatchType)
			}
			return runPatch(cmd.Context(), f, o)
		},
	}
	o.addFlags(cmd, "identifying the resource to update", false)
	cmd.Flags().StringVarP(&o.Patch, "patch", "p", "", "The patch to be applied to the resource JSON file.")
	cmd.Flags().StringVar(&o.PatchFile, "patch-file", "", "A file containing a patch to be applied to the resource.")
	cmd.Flags().StringVar(&o.PatchType, "type", o.PatchType, fmt.Sprintf("The type of patch being provided; one of %v", []string{"json", "merge", "strategic"}))
	cmd.Flags().StringVar(&o.Subresource, "subresource", "", "If specified, patch will operate on the subresource of the requested object. Must be one of [status scale]. This flag is beta and may change in the future.")
	return cmd
}

func runPatch(ctx context.Context, f *Factory, o *PatchOptions) error {
	raw := []byte(o.Patch)
	if o.PatchFile != "" {
		data, err := os.ReadFile(o.PatchFile)
		if err != nil {
			return fmt.Errorf("unable to read patch file: %v", err)
		}
		raw = data
	}
	patch, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return fmt.Errorf("unable to parse %q: %v", string(raw), err)
	}
	patchType := patchTypes[strings.ToLower(o.PatchType)]
	infos, _, errs := f.selectObjects(ctx, &o.Selection)
	if len(errs) > 0 {
		return errs[0]
	}
	if len(infos) == 0 {
		return errors.New("no objects passed to patch")
	}
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	for _, info := range infos {
		if o.DryRun == DryRunClient {
			if err := o.print(info.Object, "patched"); err != nil {
				return err
			}
			continue
		}
		var sub []string
		if o.Subresource != "" {
			sub = []string{o.Subresource}
			if cur, err := resourceClient(dc, info).Get(ctx, info.Name, metav1.GetOptions{}, sub...); err == nil {
				info.Object = cur
			}
		}
		patched, err := resourceClient(dc, info).Patch(ctx, info.Name, patchType, patch, metav1.PatchOptions{DryRun: o.dryRunOption(), FieldManager: o.FieldManager}, sub...)
		if err != nil {
			if strings.Contains(err.Error(), "415") {
				return fmt.Errorf("%s is not supported by %s: %w", patchType, info.Mapping.GroupVersionKind, err)
			}
			return err
		}
		op := "patched"
		if reflect.DeepEqual(info.Object, runtime.Object(patched)) {
			op = "patched (no change)"
		}
		if err := o.print(patched, op); err != nil {
			return err
		}
	}
	return nil
}

// LabelOptions are the inputs of label and annotate.
type LabelOptions struct {
	mutation
	Overwrite       bool
	List            bool
	ResourceVersion string
	// annotations instead of labels
	annotate bool
}

// NewCmdLabel returns the label command.
func NewCmdLabel(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdLabelOrAnnotate(f, streams, false)
}

// NewCmdAnnotate returns the annotate command.
func NewCmdAnnotate(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdLabelOrAnnotate(f, streams, true)
}

func newCmdLabelOrAnnotate(f *Factory, streams IOStreams, annotate bool) *cobra.Command {
	o := &LabelOptions{annotate: annotate}
	o.Streams = streams
	o.FieldManager = "kubectl-label"
	use, short, example := "label [--overwrite] (-f FILENAME | TYPE NAME) KEY_1=VAL_1 ... KEY_N=VAL_N [--resource-version=version]", "Update the labels on a resource", `  # Label the demo's deployment
  minikctl -n demo label deployment web tier=frontend

  # Remove the label
  minikctl -n demo label deployment web tier-`
	if annotate {
		o.FieldManager = "kubectl-annotate"
		use, short, example = "annotate [--overwrite] (-f FILENAME | TYPE NAME) KEY_1=VAL_1 ... KEY_N=VAL_N [--resource-version=version]", "Update the annotations on a resource", `  # Record why the deployment changed
  minikctl -n demo annotate deployment web kubernetes.io/change-cause="image 1.28"`
	}
	cmd := &cobra.Command{
		Use:                   use,
		DisableFlagsInUseLine: true,
		Short:                 short,
		Example:               example,
		RunE: func(cmd *cobra.Command, args []string) error {
			var resources, specs []string
			for i, a := range args {
				if strings.Contains(a, "=") || (i > 0 && strings.HasSuffix(a, "-")) {
					specs = append(specs, a)
				} else {
					resources = append(resources, a)
				}
			}
			if err := o.complete(f, cmd, resources); err != nil {
				return err
			}
			if o.List && o.PrintFlags.OutputFormat != "" {
				return errors.New("--list and --output may not be specified together")
			}
			if o.Selection.All && o.Selection.LabelSelector != "" {
				return errors.New("cannot set --all and --selector at the same time")
			}
			if len(resources) < 1 && o.Selection.Filenames.Empty() {
				return errors.New("one or more resources must be specified as <resource> <name> or <resource>/<name>")
			}
			if len(specs) < 1 && !o.List {
				what := "label"
				if annotate {
					what = "annotation"
				}
				return fmt.Errorf("at least one %s update is required", what)
			}
			add, remove, err := parseKeyValues(specs, annotate)
			if err != nil {
				return err
			}
			return runLabel(cmd.Context(), f, o, add, remove)
		},
	}
	o.addFlags(cmd, "identifying the resource to update", true)
	cmd.Flags().BoolVar(&o.Overwrite, "overwrite", false, "If true, allow labels to be overwritten, otherwise reject label updates that overwrite existing labels.")
	cmd.Flags().BoolVar(&o.List, "list", false, "If true, display the labels for a given resource.")
	cmd.Flags().StringVar(&o.ResourceVersion, "resource-version", "", "If non-empty, the labels update will only succeed if this is the current resource-version for the object. Only valid when specifying a single resource.")
	cmd.Flags().BoolVarP(&o.Selection.AllNamespaces, "all-namespaces", "A", false, "If true, check the specified action in all namespaces.")
	return cmd
}

// parseKeyValues parses "k=v" and "k-" arguments.
func parseKeyValues(specs []string, annotate bool) (map[string]string, []string, error) {
	add := map[string]string{}
	var remove []string
	for _, s := range specs {
		switch {
		case strings.Contains(s, "="):
			if annotate {
				parts := strings.SplitN(s, "=", 2)
				if parts[0] == "" {
					return nil, nil, fmt.Errorf("invalid annotation format: %s", s)
				}
				add[parts[0]] = parts[1]
				continue
			}
			parts := strings.Split(s, "=")
			if len(parts) != 2 {
				return nil, nil, fmt.Errorf("invalid label spec: %v", s)
			}
			if errs := validation.IsValidLabelValue(parts[1]); len(errs) != 0 {
				return nil, nil, fmt.Errorf("invalid label value: %q: %s", s, strings.Join(errs, ";"))
			}
			add[parts[0]] = parts[1]
		case strings.HasSuffix(s, "-"):
			remove = append(remove, s[:len(s)-1])
		default:
			if annotate {
				return nil, nil, fmt.Errorf("invalid annotation format: %s", s)
			}
			return nil, nil, fmt.Errorf("unknown label spec: %v", s)
		}
	}
	for _, r := range remove {
		if _, ok := add[r]; ok {
			if annotate {
				return nil, nil, fmt.Errorf("can not both modify and remove the following annotation(s) in the same command: %s", r)
			}
			return nil, nil, errors.New("can not both modify and remove a label in the same command")
		}
	}
	return add, remove, nil
}

func runLabel(ctx context.Context, f *Factory, o *LabelOptions, add map[string]string, remove []string) error {
	infos, _, errs := f.selectObjects(ctx, &o.Selection)
	if len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	if o.ResourceVersion != "" && len(infos) > 1 {
		return errors.New("--resource-version may only be used with a single resource")
	}
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	get := func(u *unstructured.Unstructured) map[string]string {
		if o.annotate {
			return u.GetAnnotations()
		}
		return u.GetLabels()
	}
	set := func(u *unstructured.Unstructured, m map[string]string) {
		if o.annotate {
			u.SetAnnotations(m)
		} else {
			u.SetLabels(m)
		}
	}
	for _, info := range infos {
		u := info.Object.(*unstructured.Unstructured)
		if o.List {
			gvk := u.GroupVersionKind()
			what := "labels"
			if o.annotate {
				what = "annotations"
			}
			fmt.Fprintf(o.Streams.Out, "Listing %s for %s.%s/%s:\n", what, gvk.Kind, gvk.Group, u.GetName())
			m := get(u)
			for _, k := range sets.List(sets.KeySet(m)) {
				fmt.Fprintf(o.Streams.Out, "%s%s=%s\n", " ", k, m[k])
			}
			continue
		}
		if o.ResourceVersion != "" {
			u.SetResourceVersion("")
		}
		old, err := json.Marshal(u)
		if err != nil {
			return err
		}
		current := get(u)
		if !o.Overwrite {
			var conflicts []error
			keys := sets.List(sets.KeySet(add))
			for _, k := range keys {
				if v, ok := current[k]; ok && v != add[k] {
					if o.annotate {
						conflicts = append(conflicts, fmt.Errorf("--overwrite is false but found the following declared annotation(s): '%s' already has a value (%s)", k, v))
					} else {
						conflicts = append(conflicts, fmt.Errorf("'%s' already has a value (%s), and --overwrite is false", k, v))
					}
				}
			}
			if len(conflicts) > 0 {
				return utilerrors.NewAggregate(conflicts)
			}
		}
		next := map[string]string{}
		for k, v := range current {
			next[k] = v
		}
		added, removed := sets.New[string](), sets.New[string]()
		for k, v := range add {
			if cur, ok := next[k]; !ok || cur != v {
				added.Insert(k)
			}
			next[k] = v
		}
		for _, k := range remove {
			if _, ok := next[k]; ok {
				removed.Insert(k)
				delete(next, k)
			} else if !o.annotate {
				fmt.Fprintf(o.Streams.Out, "label %q not found.\n", k)
			}
		}
		set(u, next)
		if o.ResourceVersion != "" {
			u.SetResourceVersion(o.ResourceVersion)
		}
		op := "annotated"
		if !o.annotate {
			switch {
			case added.Len() > 0 && removed.Len() > 0:
				op = "modified"
			case added.Len() > 0:
				op = "labeled"
			case removed.Len() > 0:
				op = "unlabeled"
			default:
				op = "not labeled"
			}
		}
		out := runtime.Object(u)
		changed := added.Len() > 0 || removed.Len() > 0
		if o.DryRun != DryRunClient && (changed || o.annotate) {
			modified, err := json.Marshal(u)
			if err != nil {
				return err
			}
			patch, err := jsonpatch.CreateMergePatch(old, modified)
			if err != nil {
				return err
			}
			patched, err := resourceClient(dc, info).Patch(ctx, info.Name, types.MergePatchType, patch, metav1.PatchOptions{DryRun: o.dryRunOption(), FieldManager: o.FieldManager})
			if err != nil {
				return err
			}
			out = patched
		}
		if err := o.print(out, op); err != nil {
			return err
		}
	}
	return nil
}

// SetImageOptions are the inputs of set image.
type SetImageOptions struct {
	mutation
	Images map[string]string
}

func newCmdSetImage(f *Factory, streams IOStreams) *cobra.Command {
	o := &SetImageOptions{}
	o.Streams = streams
	o.FieldManager = "kubectl-set"
	cmd := &cobra.Command{
		Use:                   "image (-f FILENAME | TYPE NAME) CONTAINER_NAME_1=CONTAINER_IMAGE_1 ... CONTAINER_NAME_N=CONTAINER_IMAGE_N",
		DisableFlagsInUseLine: true,
		Short:                 "Update the image of a pod template",
		Long: `Update existing container image(s) of resources.

 Possible resources include (case insensitive):

        pod (po), replicationcontroller (rc), deployment (deploy), daemonset (ds), statefulset (sts), cronjob (cj), replicaset (rs)`,
		Example: `  # Set the demo's nginx container image to nginx:1.28
  minikctl -n demo set image deployment/web nginx=nginx:1.28

  # Update the image of all containers of the deployment
  minikctl -n demo set image deployment/web *=nginx:1.28`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var resources []string
			o.Images = map[string]string{}
			for _, a := range args {
				if i := strings.Index(a, "="); i > 0 {
					o.Images[a[:i]] = a[i+1:]
				} else {
					resources = append(resources, a)
				}
			}
			if err := o.complete(f, cmd, resources); err != nil {
				return err
			}
			var errs []error
			if o.Selection.All && o.Selection.LabelSelector != "" {
				errs = append(errs, errors.New("cannot set --all and --selector at the same time"))
			}
			if len(resources) < 1 && o.Selection.Filenames.Empty() {
				errs = append(errs, errors.New("one or more resources must be specified as <resource> <name> or <resource>/<name>"))
			}
			if len(o.Images) < 1 {
				errs = append(errs, errors.New("at least one image update is required"))
			} else if _, all := o.Images["*"]; all && len(o.Images) > 1 {
				errs = append(errs, errors.New("all containers are already specified by *, but saw more than one container_name=container_image pairs"))
			}
			if len(errs) > 0 {
				return utilerrors.NewAggregate(errs)
			}
			return runSetImage(cmd.Context(), f, o)
		},
	}
	o.addFlags(cmd, "identifying the resource to get from a server.", true)
	return cmd
}

// podSpecPaths are where the pod spec of each kind lives.
var podSpecPaths = map[string][]string{
	"Pod":                   {"spec"},
	"Deployment":            {"spec", "template", "spec"},
	"ReplicaSet":            {"spec", "template", "spec"},
	"StatefulSet":           {"spec", "template", "spec"},
	"DaemonSet":             {"spec", "template", "spec"},
	"Job":                   {"spec", "template", "spec"},
	"ReplicationController": {"spec", "template", "spec"},
	"CronJob":               {"spec", "jobTemplate", "spec", "template", "spec"},
}

func runSetImage(ctx context.Context, f *Factory, o *SetImageOptions) error {
	infos, _, errs := f.selectObjects(ctx, &o.Selection)
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	for _, info := range infos {
		u := info.Object.(*unstructured.Unstructured)
		path, ok := podSpecPaths[u.GetKind()]
		if !ok {
			errs = append(errs, fmt.Errorf("error: %s/%s %v\n", strings.ToLower(u.GetKind()), u.GetName(), fmt.Errorf("%s is not supported", u.GroupVersionKind())))
			continue
		}
		updated := u.DeepCopy()
		found := map[string]bool{}
		for _, field := range []string{"initContainers", "containers"} {
			p := append(append([]string(nil), path...), field)
			list, ok, _ := unstructured.NestedSlice(updated.Object, p...)
			if !ok {
				continue
			}
			for i := range list {
				c, _ := list[i].(map[string]any)
				name, _ := c["name"].(string)
				if img, ok := o.Images[name]; ok {
					c["image"] = img
					found[name] = true
				} else if img, ok := o.Images["*"]; ok {
					c["image"] = img
					found["*"] = true
				}
			}
			_ = unstructured.SetNestedSlice(updated.Object, list, p...)
		}
		var missing []string
		for name := range o.Images {
			if !found[name] && name != "*" {
				missing = append(missing, name)
			}
		}
		sort.Strings(missing)
		for _, name := range missing {
			errs = append(errs, fmt.Errorf("error: unable to find container named %q", name))
		}
		if len(missing) > 0 {
			continue
		}
		out := runtime.Object(updated)
		if o.DryRun != DryRunClient {
			oldJSON, _ := json.Marshal(u)
			newJSON, _ := json.Marshal(updated)
			patch, err := jsonpatch.CreateMergePatch(oldJSON, newJSON)
			if err != nil {
				return err
			}
			if string(patch) != "{}" {
				out, err = resourceClient(dc, info).Patch(ctx, info.Name, types.MergePatchType, patch, metav1.PatchOptions{DryRun: o.dryRunOption(), FieldManager: o.FieldManager})
				if err != nil {
					errs = append(errs, fmt.Errorf("failed to patch image update to pod template: %v", err))
					continue
				}
			}
		}
		if err := o.print(out, "image updated"); err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// accessorOf returns obj's metadata (for messages).
func accessorOf(obj runtime.Object) metav1.Object {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return &metav1.ObjectMeta{}
	}
	return acc
}
