package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation"
	envutil "k8s.io/kubectl/pkg/cmd/set/env"
)

// NewCmdSet returns the set command with its image, env, serviceaccount
// and selector subcommands.
func NewCmdSet(f *Factory, streams IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:                   "set SUBCOMMAND",
		DisableFlagsInUseLine: true,
		Short:                 "Set specific features on objects",
		Long:                  "Configure application resources.\n\n These commands help you make changes to existing application resources.",
		RunE:                  subcommandRun(streams.ErrOut),
	}
	cmd.AddCommand(newCmdSetImage(f, streams), NewCmdSetEnv(f, streams), NewCmdSetServiceAccount(f, streams), NewCmdSetSelector(f, streams))
	return cmd
}

// podSpecUpdate is what set env and set serviceaccount share: the
// selection (or, with Local, the manifests alone), the change each pod
// spec gets, and kubectl's strategic merge patch of the difference.
type podSpecUpdate struct {
	mutation
	Local bool
}

func (o *podSpecUpdate) addFlags(cmd *cobra.Command, usage string) {
	o.mutation.addFlags(cmd, usage, false)
	cmd.Flags().BoolVar(&o.Selection.All, "all", false, "Select all resources, in the namespace of the specified resource types")
	cmd.Flags().BoolVar(&o.Local, "local", false, "If true, set "+cmd.Name()+" will NOT contact api-server but run locally.")
}

func (o *podSpecUpdate) validateLocal() error {
	if o.Local && o.DryRun == DryRunServer {
		return errors.New("cannot specify --local and --dry-run=server - did you mean --dry-run=client?")
	}
	return nil
}

// infos returns the objects to change: read from the server, or with
// --local from the manifests only.
func (o *podSpecUpdate) infos(ctx context.Context, f *Factory) ([]*Info, []error) {
	if !o.Local {
		infos, _, errs := f.selectObjects(ctx, &o.Selection)
		return infos, errs
	}
	if o.Selection.Filenames.Empty() {
		return nil, []error{errors.New("error: you must specify resources by --filename when --local is set.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'")}
	}
	objs, errs := ReadManifests(o.Selection.Filenames, o.Streams.In)
	var infos []*Info
	for _, mo := range objs {
		infos = append(infos, &Info{Source: mo.Source, Namespace: mo.Object.GetNamespace(), Name: mo.Object.GetName(), Object: mo.Object})
	}
	return infos, errs
}

// typedPodSpec returns the typed form of obj and its pod spec, or an
// error naming a kind without one.
func typedPodSpec(obj runtime.Object) (runtime.Object, *corev1.PodSpec, error) {
	typed, err := toTyped(obj)
	if err != nil {
		return nil, nil, err
	}
	switch t := typed.(type) {
	case *corev1.Pod:
		return t, &t.Spec, nil
	case *corev1.ReplicationController:
		if t.Spec.Template == nil {
			t.Spec.Template = &corev1.PodTemplateSpec{}
		}
		return t, &t.Spec.Template.Spec, nil
	case *corev1.PodTemplate:
		return t, &t.Template.Spec, nil
	case *appsv1.Deployment:
		return t, &t.Spec.Template.Spec, nil
	case *appsv1.ReplicaSet:
		return t, &t.Spec.Template.Spec, nil
	case *appsv1.StatefulSet:
		return t, &t.Spec.Template.Spec, nil
	case *appsv1.DaemonSet:
		return t, &t.Spec.Template.Spec, nil
	case *batchv1.Job:
		return t, &t.Spec.Template.Spec, nil
	case *batchv1.CronJob:
		return t, &t.Spec.JobTemplate.Spec.Template.Spec, nil
	}
	return nil, nil, fmt.Errorf("object %s does not have a pod spec", typed.GetObjectKind().GroupVersionKind())
}

// typedPatch is the strategic merge patch from before to the typed object
// after, as kubectl's set commands compute it.
func typedPatch(before []byte, after runtime.Object) ([]byte, error) {
	data, err := json.Marshal(after)
	if err != nil {
		return nil, err
	}
	return strategicpatch.CreateTwoWayMergePatch(before, data, after)
}

// apply changes every pod spec of infos with change, then patches the
// server (or, locally or on a client dry run, prints the changed object).
// patchFailure prefixes a failed patch's error, as kubectl's message.
// Objects change does not alter are skipped when skipUnchanged.
func (o *podSpecUpdate) apply(ctx context.Context, f *Factory, infos []*Info, change func(runtime.Object, *corev1.PodSpec) error, patchFailure string, skipUnchanged bool) []error {
	var errs []error
	for _, info := range infos {
		typed, spec, err := typedPodSpec(info.Object)
		if err != nil {
			errs = append(errs, fmt.Errorf("error: %s %v\n", info.ObjectName(), err))
			continue
		}
		before, err := json.Marshal(typed)
		if err != nil {
			return append(errs, err)
		}
		if err := change(typed, spec); err != nil {
			errs = append(errs, fmt.Errorf("error: %s %v\n", info.ObjectName(), err))
			continue
		}
		patch, err := typedPatch(before, typed)
		if err != nil {
			errs = append(errs, fmt.Errorf("error: %s %v\n", info.ObjectName(), err))
			continue
		}
		if skipUnchanged && string(patch) == "{}" {
			continue
		}
		out, err := o.send(ctx, f, info, typed, patch)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %v", patchFailure, err))
			continue
		}
		if err := o.print(out, o.PrintFlags.Operation); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// send patches info on the server with a strategic merge patch and returns
// the server's object; locally or on a client dry run it returns changed.
func (o *podSpecUpdate) send(ctx context.Context, f *Factory, info *Info, changed runtime.Object, patch []byte) (runtime.Object, error) {
	if o.Local || o.DryRun == DryRunClient {
		return changed, nil
	}
	dc, err := f.DynamicClient()
	if err != nil {
		return nil, err
	}
	return resourceClient(dc, info).Patch(ctx, info.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{DryRun: o.dryRunOption(), FieldManager: o.FieldManager})
}

// SetEnvOptions are the inputs of set env.
type SetEnvOptions struct {
	podSpecUpdate
	Containers string
	From       string
	Prefix     string
	Env        []string
	Keys       []string
	List       bool
	Resolve    bool
	Overwrite  bool

	envArgs []string
}

// NewCmdSetEnv returns the set env command.
func NewCmdSetEnv(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdSetEnv(f, streams, runSetEnv)
}

func newCmdSetEnv(f *Factory, streams IOStreams, run func(context.Context, *Factory, *SetEnvOptions) error) *cobra.Command {
	o := &SetEnvOptions{Containers: "*", Overwrite: true}
	o.Streams = streams
	o.FieldManager = "kubectl-set"
	cmd := &cobra.Command{
		Use:                   "env RESOURCE/NAME KEY_1=VAL_1 ... KEY_N=VAL_N",
		DisableFlagsInUseLine: true,
		Short:                 "Update environment variables on a pod template",
		Long: `Update environment variables on a pod template.

 List environment variable definitions in one or more pods, pod templates. Add, update, or remove container environment variable definitions in one or more pod templates (within replication controllers or deployment configurations). View or modify the environment variable definitions on all containers in the specified pods or pod templates, or just those that match a wildcard.

 If "--env -" is passed, environment variables can be read from STDIN using the standard env syntax.

 Possible resources include (case insensitive):

        pod (po), replicationcontroller (rc), deployment (deploy), daemonset (ds), statefulset (sts), cronjob (cj), replicaset (rs)`,
		Example: `  # Update deployment 'web' with a new environment variable
  minikctl -n demo set env deployment/web STORAGE_DIR=/local

  # List the environment variables defined on a deployment 'web'
  minikctl -n demo set env deployment/web --list

  # Import environment from a config map with a prefix
  minikctl -n demo set env --from=configmap/settings --prefix=MYSQL_ deployment/web

  # Remove the environment variable ENV from container 'nginx' in all deployment configs
  minikctl -n demo set env deployments --all --containers="nginx" ENV-`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Selection.All && o.Selection.LabelSelector != "" {
				return errors.New("cannot set --all and --selector at the same time")
			}
			resources, envArgs, ok := envutil.SplitEnvironmentFromResources(args)
			if !ok {
				return fmt.Errorf("all resources must be specified before environment changes: %s", strings.Join(args, " "))
			}
			o.envArgs = envArgs
			if err := o.complete(f, cmd, resources); err != nil {
				return err
			}
			o.PrintFlags.Operation = "env updated"
			if err := o.validateLocal(); err != nil {
				return err
			}
			if o.Selection.Filenames.Empty() && len(resources) < 1 {
				return errors.New("one or more resources must be specified as <resource> <name> or <resource>/<name>")
			}
			if o.List && o.PrintFlags.OutputFormat != "" {
				return errors.New("--list and --output may not be specified together")
			}
			if len(o.Keys) > 0 && o.From == "" {
				return errors.New("when specifying --keys, a configmap or secret must be provided with --from")
			}
			return run(cmd.Context(), f, o)
		},
	}
	o.addFlags(cmd, "the resource to update the env")
	cmd.Flags().StringVarP(&o.Selection.LabelSelector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2,key3 in (value3)). Matching objects must satisfy all of the specified label constraints.")
	cmd.Flags().StringVarP(&o.Containers, "containers", "c", o.Containers, "The names of containers in the selected pod templates to change - may use wildcards")
	cmd.Flags().StringVar(&o.From, "from", "", "The name of a resource from which to inject environment variables")
	cmd.Flags().StringVar(&o.Prefix, "prefix", "", "Prefix to append to variable names")
	cmd.Flags().StringArrayVarP(&o.Env, "env", "e", nil, "Specify a key-value pair for an environment variable to set into each container.")
	cmd.Flags().StringSliceVar(&o.Keys, "keys", nil, "Comma-separated list of keys to import from specified resource")
	cmd.Flags().BoolVar(&o.List, "list", false, "If true, display the environment and any changes in the standard format. this flag will removed when we have kubectl view env.")
	cmd.Flags().BoolVar(&o.Resolve, "resolve", false, "If true, show secret or configmap references when listing variables")
	cmd.Flags().BoolVar(&o.Overwrite, "overwrite", o.Overwrite, "If true, allow environment to be overwritten, otherwise reject updates that overwrite existing environment.")
	return cmd
}

// validEnvName matches what kubectl replaces with "_" in a key imported
// with --from.
func keyToEnvName(key string) string {
	var b strings.Builder
	for _, r := range key {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return strings.ToUpper(b.String())
}

// envFrom returns the variables --from names: one per key of a config
// map or secret, referring to it.
func (o *SetEnvOptions) envFrom(ctx context.Context, f *Factory) ([]corev1.EnvVar, error) {
	sel := o.Selection
	sel.Args = []string{o.From}
	sel.Filenames = FilenameOptions{}
	infos, _, errs := f.selectObjects(ctx, &sel)
	if len(errs) > 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	var env []corev1.EnvVar
	for _, info := range infos {
		typed, err := toTyped(info.Object)
		if err != nil {
			return nil, err
		}
		var keys []string
		var ref func(key string) *corev1.EnvVarSource
		switch from := typed.(type) {
		case *corev1.Secret:
			for k := range from.Data {
				keys = append(keys, k)
			}
			ref = func(key string) *corev1.EnvVarSource {
				return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: from.Name}, Key: key}}
			}
		case *corev1.ConfigMap:
			for k := range from.Data {
				keys = append(keys, k)
			}
			ref = func(key string) *corev1.EnvVarSource {
				return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: from.Name}, Key: key}}
			}
		default:
			return nil, errors.New("unsupported resource specified in --from")
		}
		sort.Strings(keys)
		for _, k := range keys {
			if len(o.Keys) > 0 && !containsString(o.Keys, k) {
				continue
			}
			name := keyToEnvName(k)
			if name != k {
				fmt.Fprintf(o.Streams.ErrOut, "Warning: key %s transferred to %s\n", k, name)
			}
			env = append(env, corev1.EnvVar{Name: name, ValueFrom: ref(k)})
		}
	}
	return env, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// selectContainers returns the containers whose names match the
// wildcard pattern of --containers.
func selectContainers(containers []corev1.Container, pattern string) []*corev1.Container {
	var out []*corev1.Container
	for i := range containers {
		if ok, _ := path.Match(pattern, containers[i].Name); ok || pattern == "*" {
			out = append(out, &containers[i])
		}
	}
	return out
}

// updateEnv is kubectl's: a variable added replaces every one of its
// name, a removed one goes, and removal wins over addition.
func updateEnv(existing, env []corev1.EnvVar, remove []string) []corev1.EnvVar {
	out := []corev1.EnvVar{}
	covered := map[string]bool{}
	for _, r := range remove {
		covered[r] = true
	}
	find := func(name string) (corev1.EnvVar, bool) {
		for _, e := range env {
			if e.Name == name {
				return e, true
			}
		}
		return corev1.EnvVar{}, false
	}
	for _, e := range existing {
		if covered[e.Name] {
			continue
		}
		if newer, ok := find(e.Name); ok {
			covered[e.Name] = true
			out = append(out, newer)
			continue
		}
		out = append(out, e)
	}
	for _, e := range env {
		if covered[e.Name] {
			continue
		}
		covered[e.Name] = true
		out = append(out, e)
	}
	return out
}

func runSetEnv(ctx context.Context, f *Factory, o *SetEnvOptions) error {
	env, remove, _, err := envutil.ParseEnv(append(append([]string(nil), o.Env...), o.envArgs...), o.Streams.In)
	if err != nil {
		return err
	}
	if o.From != "" {
		more, err := o.envFrom(ctx, f)
		if err != nil {
			return err
		}
		env = append(env, more...)
	}
	for i := range env {
		env[i].Name = o.Prefix + env[i].Name
		if errs := validation.IsEnvVarName(env[i].Name); len(errs) > 0 && o.Prefix != "" {
			return fmt.Errorf("%q is not a valid environment variable name: %s", env[i].Name, strings.Join(errs, ", "))
		}
	}
	infos, errs := o.infos(ctx, f)
	if o.List {
		for _, info := range infos {
			if err := o.list(f, info, env, remove); err != nil {
				errs = append(errs, err)
			}
		}
		return utilerrors.NewAggregate(errs)
	}
	if len(env) == 0 && len(remove) == 0 {
		return errors.New("at least one environment variable must be provided")
	}
	errs = append(errs, o.apply(ctx, f, infos, func(obj runtime.Object, spec *corev1.PodSpec) error {
		containers := append(selectContainers(spec.Containers, o.Containers), selectContainers(spec.InitContainers, o.Containers)...)
		if len(containers) == 0 {
			fmt.Fprintf(o.Streams.ErrOut, "Warning: %s/%s does not have any containers matching %q\n", obj.GetObjectKind().GroupVersionKind().Kind, accessorOf(obj).GetName(), o.Containers)
			return nil
		}
		for _, c := range containers {
			if !o.Overwrite {
				for _, e := range env {
					for _, cur := range c.Env {
						if cur.Name == e.Name && cur.Value != e.Value {
							return fmt.Errorf("'%s' already has a value (%s), and --overwrite is false", cur.Name, cur.Value)
						}
					}
				}
			}
			c.Env = updateEnv(c.Env, env, remove)
		}
		return nil
	}, "failed to patch env update to pod template:", true)...)
	return utilerrors.NewAggregate(errs)
}

// list prints the environment of info's containers after the changes, as
// set env --list does; --resolve reads the values references point to.
func (o *SetEnvOptions) list(f *Factory, info *Info, env []corev1.EnvVar, remove []string) error {
	typed, spec, err := typedPodSpec(info.Object)
	if err != nil {
		return fmt.Errorf("error: %s %v\n", info.ObjectName(), err)
	}
	kind, name := typed.GetObjectKind().GroupVersionKind().Kind, accessorOf(typed).GetName()
	containers := append(selectContainers(spec.Containers, o.Containers), selectContainers(spec.InitContainers, o.Containers)...)
	store := envutil.NewResourceStore()
	failed := false
	for _, c := range containers {
		c.Env = updateEnv(c.Env, env, remove)
		fmt.Fprintf(o.Streams.Out, "# %s %s, container %s\n", kind, name, c.Name)
		resolveErrors := map[string][]string{}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				fmt.Fprintf(o.Streams.Out, "%s=%s\n", e.Name, e.Value)
				continue
			}
			if o.Resolve {
				cs, err := f.KubernetesClientSet()
				if err != nil {
					return err
				}
				value, err := envutil.GetEnvVarRefValue(cs, info.Namespace, store, e.ValueFrom, typed, c)
				if err == nil {
					fmt.Fprintf(o.Streams.Out, "%s=%s\n", e.Name, value)
					continue
				}
				resolveErrors[err.Error()] = append(resolveErrors[err.Error()], e.Name)
				failed = true
			}
			fmt.Fprintf(o.Streams.Out, "# %s from %s\n", e.Name, envutil.GetEnvVarRefString(e.ValueFrom))
		}
		var msgs []string
		for msg, vars := range resolveErrors {
			sort.Strings(vars)
			msgs = append(msgs, fmt.Sprintf("error retrieving reference for %s: %v", strings.Join(vars, ", "), msg))
		}
		sort.Strings(msgs)
		for _, m := range msgs {
			fmt.Fprintln(o.Streams.ErrOut, m)
		}
	}
	if failed {
		return fmt.Errorf("error: %s failed to retrieve valueFrom references\n", info.ObjectName())
	}
	return nil
}

// SetServiceAccountOptions are the inputs of set serviceaccount.
type SetServiceAccountOptions struct {
	podSpecUpdate
	ServiceAccount string
}

// NewCmdSetServiceAccount returns the set serviceaccount command.
func NewCmdSetServiceAccount(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdSetServiceAccount(f, streams, runSetServiceAccount)
}

func newCmdSetServiceAccount(f *Factory, streams IOStreams, run func(context.Context, *Factory, *SetServiceAccountOptions) error) *cobra.Command {
	o := &SetServiceAccountOptions{}
	o.Streams = streams
	o.FieldManager = "kubectl-set"
	cmd := &cobra.Command{
		Use:                   "serviceaccount (-f FILENAME | TYPE NAME) SERVICE_ACCOUNT",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"sa"},
		Short:                 "Update the service account of a resource",
		Long: `Update the service account of pod template resources.

 Possible resources (case insensitive) can be:

 replicationcontroller (rc), deployment (deploy), daemonset (ds), job, replicaset (rs), statefulset`,
		Example: `  # Set deployment web's service account to serviceaccount1
  minikctl -n demo set serviceaccount deployment web serviceaccount1

  # Print the result (in YAML format) of updated nginx deployment with the service account from local file, without hitting the API server
  minikctl set sa -f nginx-deployment.yaml serviceaccount1 --local --dry-run=client -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("serviceaccount is required")
			}
			o.ServiceAccount = args[len(args)-1]
			if err := o.complete(f, cmd, args[:len(args)-1]); err != nil {
				return err
			}
			o.PrintFlags.Operation = "serviceaccount updated"
			if err := o.validateLocal(); err != nil {
				return err
			}
			if o.Selection.Filenames.Empty() && len(o.Selection.Args) == 0 {
				return errors.New("You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'")
			}
			return run(cmd.Context(), f, o)
		},
	}
	o.addFlags(cmd, "identifying the resource to get from a server.")
	return cmd
}

func runSetServiceAccount(ctx context.Context, f *Factory, o *SetServiceAccountOptions) error {
	infos, errs := o.infos(ctx, f)
	errs = append(errs, o.apply(ctx, f, infos, func(_ runtime.Object, spec *corev1.PodSpec) error {
		spec.ServiceAccountName = o.ServiceAccount
		return nil
	}, "failed to patch ServiceAccountName", false)...)
	return utilerrors.NewAggregate(errs)
}

// SetSelectorOptions are the inputs of set selector.
type SetSelectorOptions struct {
	podSpecUpdate
	Selector        *metav1.LabelSelector
	ResourceVersion string
}

// NewCmdSetSelector returns the set selector command.
func NewCmdSetSelector(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdSetSelector(f, streams, runSetSelector)
}

func newCmdSetSelector(f *Factory, streams IOStreams, run func(context.Context, *Factory, *SetSelectorOptions) error) *cobra.Command {
	o := &SetSelectorOptions{}
	o.Streams = streams
	o.FieldManager = "kubectl-set"
	cmd := &cobra.Command{
		Use:                   "selector (-f FILENAME | TYPE NAME) EXPRESSIONS [--resource-version=version]",
		DisableFlagsInUseLine: true,
		Short:                 "Set the selector on a resource",
		Long: fmt.Sprintf(`Set the selector on a resource. Note that the new selector will overwrite the old selector if the resource had one prior to the invocation of 'set selector'.

 A selector must begin with a letter or number, and may contain letters, numbers, hyphens, dots, and underscores, up to %d characters. If --resource-version is specified, then updates will use this resource version, otherwise the existing resource-version will be used. Note: currently selectors can only be set on Service objects.`, validation.LabelValueMaxLength),
		Example: `  # Set the labels and selector before creating a deployment/service pair
  minikctl create service clusterip my-svc --clusterip="None" -o yaml --dry-run=client | minikctl set selector --local -f - 'environment=qa' -o yaml | minikctl create -f -
  minikctl create deployment my-dep -o yaml --dry-run=client | minikctl label --local -f - environment=qa -o yaml | minikctl create -f -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var resources []string
			if len(args) > 0 {
				resources = args[:len(args)-1]
				sel, err := metav1.ParseToLabelSelector(args[len(args)-1])
				if err != nil {
					return err
				}
				o.Selector = sel
			}
			if err := o.complete(f, cmd, resources); err != nil {
				return err
			}
			o.PrintFlags.Operation = "selector updated"
			if o.Selector == nil {
				return errors.New("one selector is required")
			}
			return run(cmd.Context(), f, o)
		},
	}
	o.addFlags(cmd, "identifying the resource.")
	cmd.Flags().StringVar(&o.ResourceVersion, "resource-version", "", "If non-empty, the selectors update will only succeed if this is the current resource-version for the object. Only valid when specifying a single resource.")
	return cmd
}

func runSetSelector(ctx context.Context, f *Factory, o *SetSelectorOptions) error {
	infos, errs := o.infos(ctx, f)
	if len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	for _, info := range infos {
		typed, err := toTyped(info.Object)
		if err != nil {
			return err
		}
		if o.ResourceVersion != "" {
			accessorOf(typed).SetResourceVersion("")
		}
		before, err := json.Marshal(typed)
		if err != nil {
			return err
		}
		svc, ok := typed.(*corev1.Service)
		if !ok {
			return errors.New("setting a selector is only supported for Services")
		}
		if len(o.Selector.MatchExpressions) > 0 {
			return fmt.Errorf("match expression %v not supported on this object", o.Selector.MatchExpressions)
		}
		svc.Spec.Selector = map[string]string{}
		for k, v := range o.Selector.MatchLabels {
			svc.Spec.Selector[k] = v
		}
		if o.ResourceVersion != "" {
			svc.ResourceVersion = o.ResourceVersion
		}
		patch, err := typedPatch(before, svc)
		if err != nil {
			return err
		}
		out, err := o.send(ctx, f, info, svc, patch)
		if err != nil {
			return err
		}
		if err := o.print(out, o.PrintFlags.Operation); err != nil {
			return err
		}
	}
	return nil
}
