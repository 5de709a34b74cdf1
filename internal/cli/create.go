package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// CreateOptions are the flags every create subcommand shares.
type CreateOptions struct {
	PrintFlags   PrintFlags
	DryRunFlag   string
	DryRun       DryRunStrategy
	FieldManager string
	Validate     string
	Filenames    FilenameOptions
	Streams      IOStreams
	// ErrorPrefix, when set, prefixes the server's error on create, as
	// kubectl's generators do ("failed to create quota: ...").
	ErrorPrefix string
}

func (o *CreateOptions) addFlags(cmd *cobra.Command) {
	o.PrintFlags.AddFlags(cmd)
	addDryRunFlag(cmd, &o.DryRunFlag)
	cmd.Flags().StringVar(&o.FieldManager, "field-manager", "kubectl-create", "Name of the manager used to track field ownership.")
	cmd.Flags().StringVar(&o.Validate, "validate", "strict", `Must be one of: strict (or true), warn, ignore (or false).`)
}

// NewCmdCreate returns the create command: -f manifests, or one of the
// generators (namespace, deployment, configmap, secret generic).
func NewCmdCreate(f *Factory, streams IOStreams) *cobra.Command {
	o := &CreateOptions{Streams: streams}
	cmd := &cobra.Command{
		Use:                   "create -f FILENAME",
		DisableFlagsInUseLine: true,
		Short:                 "Create a resource from a file or from stdin",
		Long:                  "Create a resource from a file or from stdin.\n\n JSON and YAML formats are accepted.",
		Example: `  # Create the objects of a manifest
  minikctl create -f web.yaml

  # Create a namespace
  minikctl create namespace demo`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd, "Unexpected args: %v", args)
			}
			if o.Filenames.Empty() {
				// As kubectl: say what is missing, then behave as a
				// group command.
				fmt.Fprint(streams.ErrOut, "Error: must specify one of -f and -k\n\n")
				return subcommandRun(streams.ErrOut)(cmd, args)
			}
			return runCreateFiles(cmd.Context(), f, o)
		},
	}
	o.addFlags(cmd)
	o.Filenames.AddFlags(cmd, "to use to create the resource")
	cmd.AddCommand(newCmdCreateNamespace(f, streams), newCmdCreateDeployment(f, streams), newCmdCreateConfigMap(f, streams), newCmdCreateSecret(f, streams),
		newCmdCreateJob(f, streams), newCmdCreateCronJob(f, streams), newCmdCreateService(f, streams), newCmdCreateRole(f, streams),
		newCmdCreateClusterRole(f, streams), newCmdCreateRoleBinding(f, streams), newCmdCreateClusterRoleBinding(f, streams),
		newCmdCreateServiceAccount(f, streams), newCmdCreateToken(f, streams), newCmdCreatePriorityClass(f, streams),
		newCmdCreateQuota(f, streams), newCmdCreatePodDisruptionBudget(f, streams), newCmdCreateIngress(f, streams))
	return cmd
}

func (o *CreateOptions) complete() error {
	var err error
	if o.DryRun, err = parseDryRun(o.DryRunFlag); err != nil {
		return err
	}
	o.PrintFlags.DryRun = o.DryRun
	o.PrintFlags.Operation = "created"
	return nil
}

// create sends obj (typed or unstructured) and prints "kind/name created".
func (o *CreateOptions) create(ctx context.Context, f *Factory, obj runtime.Object, namespace string) error {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: content}
	if u.GetKind() == "" {
		gvks, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil {
			return err
		}
		u.SetGroupVersionKind(gvks[0])
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	mapper, err := f.ToRESTMapper()
	if err != nil {
		return err
	}
	gvk := u.GroupVersionKind()
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	info := &Info{Mapping: mapping, Namespace: namespace, Name: u.GetName(), Object: u}
	if !info.Namespaced() {
		info.Namespace = ""
	}
	out := runtime.Object(u)
	if o.DryRun != DryRunClient {
		dc, err := f.DynamicClient()
		if err != nil {
			return err
		}
		validation, err := parseValidate(o.Validate)
		if err != nil {
			return err
		}
		opts := metav1.CreateOptions{FieldManager: o.FieldManager, FieldValidation: validation}
		if o.DryRun == DryRunServer {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		created, err := resourceClient(dc, info).Create(ctx, u, opts)
		if err != nil && o.ErrorPrefix != "" {
			return fmt.Errorf("%s %v", o.ErrorPrefix, err)
		}
		if err != nil {
			return err
		}
		out = created
	}
	printer, err := o.PrintFlags.ToPrinter()
	if err != nil {
		return err
	}
	return printer.PrintObj(out, o.Streams.Out)
}

// createGenerated creates an object a create subcommand built, in the
// --namespace (or the context's) namespace, which the object carries when
// it was given explicitly, as kubectl's generators print it.
func (o *CreateOptions) createGenerated(ctx context.Context, f *Factory, obj interface {
	runtime.Object
	metav1.Object
}) error {
	ns, enforce, err := f.Namespace()
	if err != nil {
		return err
	}
	if enforce {
		obj.SetNamespace(ns)
	}
	return o.create(ctx, f, obj, ns)
}

func runCreateFiles(ctx context.Context, f *Factory, o *CreateOptions) error {
	if err := o.complete(); err != nil {
		return err
	}
	ns, enforce, err := f.Namespace()
	if err != nil {
		return err
	}
	mapper, err := f.ToRESTMapper()
	if err != nil {
		return err
	}
	objs, errs := ReadManifests(o.Filenames, o.Streams.In)
	infos, rerrs := ResolveManifests(objs, mapper, ns, enforce)
	errs = append(errs, rerrs...)
	for _, info := range infos {
		if err := o.create(ctx, f, info.Object, info.Namespace); err != nil {
			errs = append(errs, addSourceToErr("creating", info.Source, err))
		}
	}
	return utilerrors.NewAggregate(errs)
}

// nameArg is kubectl's "exactly one NAME is required" check.
func nameArg(cmd *cobra.Command, args []string) (string, error) {
	if len(args) != 1 {
		return "", usageErrorf(cmd, "exactly one NAME is required, got %d", len(args))
	}
	return args[0], nil
}

func newCmdCreateNamespace(f *Factory, streams IOStreams) *cobra.Command {
	o := &CreateOptions{Streams: streams}
	cmd := &cobra.Command{
		Use:                   "namespace NAME [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"ns"},
		Short:                 "Create a namespace with the specified name",
		Long:                  "Create a namespace with the specified name.",
		Example:               "  # Create a new namespace named my-namespace\n  minikctl create namespace my-namespace",
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := nameArg(cmd, args)
			if err != nil {
				return err
			}
			if err := o.complete(); err != nil {
				return err
			}
			ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
			return o.create(cmd.Context(), f, ns, "")
		},
	}
	o.addFlags(cmd)
	return cmd
}

func newCmdCreateDeployment(f *Factory, streams IOStreams) *cobra.Command {
	o := &CreateOptions{Streams: streams}
	var images []string
	var replicas, port int32 = 1, -1
	cmd := &cobra.Command{
		Use:                   "deployment NAME --image=image -- [COMMAND] [args...]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"deploy"},
		Short:                 "Create a deployment with the specified name",
		Long:                  "Create a deployment with the specified name.",
		Example:               "  # Create a deployment named web that runs the nginx image\n  minikctl create deployment web --image=nginx:1.27 --replicas=3 --port=80",
		RunE: func(cmd *cobra.Command, args []string) error {
			var command []string
			if n := cmd.ArgsLenAtDash(); n >= 0 {
				command, args = args[n:], args[:n]
			}
			name, err := nameArg(cmd, args)
			if err != nil {
				return err
			}
			if len(images) > 1 && len(command) > 0 {
				return errors.New("cannot specify multiple --image options and command")
			}
			if err := o.complete(); err != nil {
				return err
			}
			labels := map[string]string{"app": name}
			d := &appsv1.Deployment{
				TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
				Spec: appsv1.DeploymentSpec{
					Replicas: &replicas,
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}},
				},
			}
			for _, image := range images {
				cname := image[strings.LastIndex(image, "/")+1:]
				cname = strings.Split(strings.Split(cname, "@")[0], ":")[0]
				cname = strings.NewReplacer("_", "-", ".", "-").Replace(cname)
				d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: cname, Image: image, Command: command})
			}
			if port >= 0 && len(d.Spec.Template.Spec.Containers) > 0 {
				d.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: port}}
			}
			return o.createGenerated(cmd.Context(), f, d)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringSliceVar(&images, "image", nil, "Image names to run. A deployment can have multiple images set for multi-container pod.")
	_ = cmd.MarkFlagRequired("image")
	cmd.Flags().Int32Var(&port, "port", port, "The containerPort that this deployment exposes.")
	cmd.Flags().Int32VarP(&replicas, "replicas", "r", replicas, "Number of replicas to create. Default is 1.")
	return cmd
}

// keyValueSources reads --from-literal, --from-file and --from-env-file
// into key/value pairs, in kubectl's order and with its messages.
func keyValueSources(literals, files, envFiles []string, what string) ([][2]string, error) {
	if len(envFiles) > 0 && (len(files) > 0 || len(literals) > 0) {
		return nil, errors.New("from-env-file cannot be combined with from-file or from-literal")
	}
	var out [][2]string
	for _, l := range literals {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid literal source %v, expected key=value", l)
		}
		out = append(out, [2]string{k, strings.Trim(v, `"`)})
	}
	for _, src := range files {
		key, path, hasKey := strings.Cut(src, "=")
		if !hasKey {
			path, key = src, filepath.Base(src)
		}
		fi, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("error reading %s: %v", path, err)
		}
		if fi.IsDir() {
			if hasKey {
				return nil, errors.New("cannot give a key name for a directory path")
			}
			entries, err := os.ReadDir(path)
			if err != nil {
				return nil, fmt.Errorf("error listing files in %s: %v", path, err)
			}
			for _, e := range entries {
				if e.Type().IsRegular() {
					data, err := os.ReadFile(filepath.Join(path, e.Name()))
					if err != nil {
						return nil, err
					}
					out = append(out, [2]string{e.Name(), string(data)})
				}
			}
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("error reading %s: %v", path, err)
		}
		out = append(out, [2]string{key, string(data)})
	}
	for _, path := range envFiles {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("error reading %s: %v", path, err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				v = os.Getenv(k)
			}
			out = append(out, [2]string{k, v})
		}
	}
	seen := map[string]bool{}
	for _, kv := range out {
		if errs := validation.IsConfigMapKey(kv[0]); len(errs) > 0 {
			if what == "Secret" {
				return nil, fmt.Errorf("%q is not valid key name for a Secret %s", kv[0], strings.Join(errs, ";"))
			}
			return nil, fmt.Errorf("%q is not a valid key name for a ConfigMap: %s", kv[0], strings.Join(errs, ","))
		}
		if seen[kv[0]] {
			if what == "Secret" {
				return nil, fmt.Errorf("cannot add key %s, another key by that name already exists", kv[0])
			}
			return nil, fmt.Errorf("cannot add key %q, another key by that name already exists in Data", kv[0])
		}
		seen[kv[0]] = true
	}
	return out, nil
}

func newCmdCreateConfigMap(f *Factory, streams IOStreams) *cobra.Command {
	o := &CreateOptions{Streams: streams}
	var literals, files, envFiles []string
	cmd := &cobra.Command{
		Use:                   "configmap NAME [--from-file=[key=]source] [--from-literal=key1=value1] [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"cm"},
		Short:                 "Create a config map from a local file, directory or literal value",
		Long:                  "Create a config map based on a file, directory, or specified literal value.",
		Example:               "  # Create a config map with a literal key/value\n  minikctl create configmap settings --from-literal=greeting=hello",
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := nameArg(cmd, args)
			if err != nil {
				return err
			}
			if err := o.complete(); err != nil {
				return err
			}
			kvs, err := keyValueSources(literals, files, envFiles, "ConfigMap")
			if err != nil {
				return err
			}
			cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
			for _, kv := range kvs {
				if cm.Data == nil {
					cm.Data = map[string]string{}
				}
				cm.Data[kv[0]] = kv[1]
			}
			return o.createGenerated(cmd.Context(), f, cm)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringSliceVar(&files, "from-file", nil, "Key file can be specified using its file path, in which case file basename will be used as configmap key, or optionally with a key and file path, in which case the given key will be used.  Specifying a directory will iterate each named file in the directory whose basename is a valid configmap key.")
	cmd.Flags().StringArrayVar(&literals, "from-literal", nil, "Specify a key and literal value to insert in configmap (i.e. mykey=somevalue)")
	cmd.Flags().StringSliceVar(&envFiles, "from-env-file", nil, "Specify the path to a file to read lines of key=val pairs to create a configmap.")
	return cmd
}

func newCmdCreateSecret(f *Factory, streams IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret (docker-registry | generic | tls)",
		Short: "Create a secret using a specified subcommand",
		Long:  "Create a secret with specified type.",
		RunE:  subcommandRun(streams.ErrOut),
	}
	o := &CreateOptions{Streams: streams}
	var literals, files, envFiles []string
	var secretType string
	generic := &cobra.Command{
		Use:                   "generic NAME [--type=string] [--from-file=[key=]source] [--from-literal=key1=value1] [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Short:                 "Create a secret from a local file, directory, or literal value",
		Long:                  "Create a secret based on a file, directory, or specified literal value.",
		Example:               "  # Create a new secret named my-secret with keys for each file in folder bar\n  minikctl create secret generic my-secret --from-file=path/to/bar",
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := nameArg(cmd, args)
			if err != nil {
				return err
			}
			if err := o.complete(); err != nil {
				return err
			}
			kvs, err := keyValueSources(literals, files, envFiles, "Secret")
			if err != nil {
				return err
			}
			s := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: metav1.ObjectMeta{Name: name}, Type: corev1.SecretType(secretType)}
			for _, kv := range kvs {
				if s.Data == nil {
					s.Data = map[string][]byte{}
				}
				s.Data[kv[0]] = []byte(kv[1])
			}
			return o.createGenerated(cmd.Context(), f, s)
		},
	}
	o.addFlags(generic)
	generic.Flags().StringSliceVar(&files, "from-file", nil, "Key files can be specified using their file path, in which case a default name will be given to them, or optionally with a name and file path, in which case the given name will be used.  Specifying a directory will iterate each named file in the directory that is a valid secret key.")
	generic.Flags().StringArrayVar(&literals, "from-literal", nil, "Specify a key and literal value to insert in secret (i.e. mykey=somevalue)")
	generic.Flags().StringSliceVar(&envFiles, "from-env-file", nil, "Specify the path to a file to read lines of key=val pairs to create a secret.")
	generic.Flags().StringVar(&secretType, "type", "", "The type of secret to create")
	cmd.AddCommand(generic, newCmdCreateSecretTLS(f, streams), newCmdCreateSecretDockerRegistry(f, streams))
	return cmd
}

// NewCmdEdit returns the edit command: the object opens in $KUBE_EDITOR or
// $EDITOR (else vi) as YAML; the change is sent as a patch.
func NewCmdEdit(f *Factory, streams IOStreams) *cobra.Command {
	var sel ObjectSelection
	var output string
	cmd := &cobra.Command{
		Use:                   "edit (RESOURCE/NAME | -f FILENAME)",
		DisableFlagsInUseLine: true,
		Short:                 "Edit a resource on the server",
		Long: `Edit a resource from the default editor.

 The edit command allows you to directly edit any API resource you can retrieve via the command-line tools. It will open the editor defined by your KUBE_EDITOR, or EDITOR environment variables, or fall back to 'vi' for Linux or 'notepad' for Windows.`,
		Example: "  # Edit the demo's deployment\n  minikctl -n demo edit deployment/web",
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			sel.Namespace, sel.EnforceNamespace, err = f.Namespace()
			if err != nil {
				return err
			}
			sel.Args, sel.BaseName = args, cmd.Root().Name()
			infos, _, errs := f.selectObjects(cmd.Context(), &sel)
			if len(errs) > 0 {
				return utilerrors.NewAggregate(errs)
			}
			return runEdit(cmd.Context(), f, streams, infos, output)
		},
	}
	sel.Filenames.AddFlags(cmd, "to use to edit the resource")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "Output format. One of: (json, yaml).")
	return cmd
}

func runEdit(ctx context.Context, f *Factory, streams IOStreams, infos []*Info, format string) error {
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	editor := os.Getenv("KUBE_EDITOR")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	var errs []error
	for _, info := range infos {
		u := info.Object.(*unstructured.Unstructured).DeepCopy()
		u.SetManagedFields(nil)
		var original []byte
		if format == "json" {
			original, err = json.MarshalIndent(u, "", "    ")
		} else {
			original, err = yaml.Marshal(u)
		}
		if err != nil {
			return err
		}
		header := "# Please edit the object below. Lines beginning with a '#' will be ignored,\n# and an empty file will abort the edit. If an error occurs while saving this file will be\n# reopened with the relevant failures.\n#\n"
		file, err := os.CreateTemp("", "minikctl-edit-*."+map[bool]string{true: "json", false: "yaml"}[format == "json"])
		if err != nil {
			return err
		}
		path := file.Name()
		file.WriteString(header)
		file.Write(original)
		file.Close()
		c := exec.CommandContext(ctx, "sh", "-c", editor+` "$1"`, "editor", path)
		c.Stdin, c.Stdout, c.Stderr = streams.In, streams.Out, streams.ErrOut
		if err := c.Run(); err != nil {
			os.Remove(path)
			return fmt.Errorf("there was a problem with the editor %q", editor)
		}
		edited, err := os.ReadFile(path)
		os.Remove(path)
		if err != nil {
			return err
		}
		var lines []string
		for _, l := range strings.Split(string(edited), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "#") {
				lines = append(lines, l)
			}
		}
		stripped := []byte(strings.Join(lines, "\n"))
		if len(bytes.TrimSpace(stripped)) == 0 {
			fmt.Fprintln(streams.ErrOut, "Edit cancelled, saved file was empty.")
			continue
		}
		if bytes.Equal(bytes.TrimSpace(stripped), bytes.TrimSpace(original)) {
			fmt.Fprintln(streams.ErrOut, "Edit cancelled, no changes made.")
			continue
		}
		origJSON, err := yaml.YAMLToJSON(original)
		if err != nil {
			return err
		}
		newJSON, err := yaml.YAMLToJSON(stripped)
		if err != nil {
			errs = append(errs, fmt.Errorf("error: %v", err))
			continue
		}
		patch, patchType, err := editPatch(info.Mapping.GroupVersionKind, origJSON, newJSON)
		if err != nil {
			return err
		}
		patched, err := resourceClient(dc, info).Patch(ctx, info.Name, patchType, patch, metav1.PatchOptions{FieldManager: "kubectl-edit"})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		(&NamePrinter{Operation: "edited"}).PrintObj(patched, streams.Out)
	}
	return utilerrors.NewAggregate(errs)
}

// editPatch is a strategic merge patch for built-in kinds, else a JSON
// merge patch.
func editPatch(gvk schema.GroupVersionKind, original, modified []byte) ([]byte, types.PatchType, error) {
	return twoWayPatch(gvk, original, modified)
}
