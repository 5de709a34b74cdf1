package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// DiffOptions are the inputs of diff: the manifests are applied with a
// server dry run (client-side apply's patch, or with ServerSide a
// server-side apply) and the live and merged objects are compared with
// `diff -u -N` or $KUBECTL_EXTERNAL_DIFF. As kubectl, the exit code is 0
// when nothing differs, 1 when something does, and >1 on an error.
type DiffOptions struct {
	Apply       ApplyOptions
	ShowSecrets bool
}

// NewCmdDiff returns the diff command.
func NewCmdDiff(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdDiff(f, streams, runDiff)
}

func newCmdDiff(f *Factory, streams IOStreams, run func(context.Context, *DiffOptions) error) *cobra.Command {
	o := &DiffOptions{Apply: ApplyOptions{Streams: streams, FieldManager: "kubectl-client-side-apply", DryRunFlag: "server", ValidateFlag: "strict", NoAnnotate: true}}
	cmd := &cobra.Command{
		Use:                   "diff -f FILENAME",
		DisableFlagsInUseLine: true,
		Short:                 "Diff the live version against a would-be applied version",
		Long: `Diff configurations specified by file name or stdin between the current online configuration, and the configuration as it would be if applied.

 The output is always YAML.

 KUBECTL_EXTERNAL_DIFF environment variable can be used to select your own diff command. Users can use external commands with params too, example: KUBECTL_EXTERNAL_DIFF="colordiff -N -u"

 By default, the "diff" command available in your path will be run with the "-u" (unified diff) and "-N" (treat absent files as empty) options.

 Exit status: 0 No differences were found. 1 Differences were found. >1 Kubectl or diff failed with an error.

 Note: KUBECTL_EXTERNAL_DIFF, if used, is expected to follow that convention.`,
		Example: `  # Diff resources included in web.yaml
  minikctl diff -f web.yaml

  # Diff file read from stdin
  cat service.yaml | minikctl diff -f -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd, "Unexpected args: %v", args)
			}
			if err := o.Apply.Complete(f, cmd); err != nil {
				return err
			}
			if o.Apply.ServerSide && !cmd.Flags().Changed("field-manager") {
				o.Apply.FieldManager = FieldManagerServerSideApply
			}
			return run(cmd.Context(), o)
		},
	}
	o.Apply.Filenames.AddFlags(cmd, "contains the configuration to diff")
	cmd.Flags().BoolVar(&o.Apply.ServerSide, "server-side", false, "If true, apply runs in the server instead of the client.")
	cmd.Flags().BoolVar(&o.Apply.ForceConflicts, "force-conflicts", false, "If true, server-side apply will force the changes against conflicts.")
	cmd.Flags().StringVar(&o.Apply.FieldManager, "field-manager", o.Apply.FieldManager, "Name of the manager used to track field ownership.")
	cmd.Flags().BoolVar(&o.Apply.PrintFlags.ShowManagedFields, "show-managed-fields", false, "If true, include managed fields in the diff.")
	cmd.Flags().BoolVar(&o.ShowSecrets, "show-secret", false, "If true, include Secret data in diff")
	return cmd
}

func runDiff(ctx context.Context, o *DiffOptions) error {
	live, err := os.MkdirTemp("", "LIVE-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(live)
	merged, err := os.MkdirTemp("", "MERGED-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(merged)
	objs, errs := ReadManifests(o.Apply.Filenames, o.Apply.Streams.In)
	if len(errs) > 0 {
		return diffFailure{aggregate(errs)}
	}
	infos, errs := ResolveManifests(objs, o.Apply.Mapper, o.Apply.Namespace, o.Apply.EnforceNamespace)
	if len(errs) > 0 {
		return diffFailure{aggregate(errs)}
	}
	// The dry-run apply prints nothing and warns about nothing: diff
	// shows only the difference.
	quiet := o.Apply
	quiet.Streams = IOStreams{In: o.Apply.Streams.In, Out: io.Discard, ErrOut: io.Discard}
	for _, info := range infos {
		current, err := quiet.get(ctx, info)
		if err != nil && !apierrors.IsNotFound(err) {
			return diffFailure{err}
		}
		if err := quiet.applyOne(ctx, info); err != nil {
			return diffFailure{err}
		}
		name := diffName(info)
		var before *unstructured.Unstructured
		if current != nil && err == nil {
			before = current
		}
		after, _ := info.Object.(*unstructured.Unstructured)
		if !o.ShowSecrets {
			maskSecrets(before, after)
		}
		for _, side := range []struct {
			dir string
			obj *unstructured.Unstructured
		}{{live, before}, {merged, after}} {
			if err := writeDiffObject(filepath.Join(side.dir, name), side.obj, o.Apply.PrintFlags.ShowManagedFields); err != nil {
				return diffFailure{err}
			}
		}
	}
	return runDiffProgram(ctx, o.Apply.Streams, live, merged)
}

// diffFailure is an error of diff itself, which exits >1 as kubectl's.
type diffFailure struct{ error }

func (e diffFailure) Unwrap() error { return e.error }

// diffName is kubectl's file name of an object in the compared
// directories: [group.]version.kind.namespace.name.
func diffName(info *Info) string {
	gvk := info.Mapping.GroupVersionKind
	group := ""
	if gvk.Group != "" {
		group = gvk.Group + "."
	}
	return fmt.Sprintf("%s%s.%s.%s.%s", group, gvk.Version, gvk.Kind, info.Namespace, info.Name)
}

// writeDiffObject writes obj as YAML (nothing for an absent object, so
// that diff -N treats it as empty).
func writeDiffObject(path string, obj *unstructured.Unstructured, showManagedFields bool) error {
	if obj == nil {
		return nil
	}
	obj = obj.DeepCopy()
	if !showManagedFields {
		obj.SetManagedFields(nil)
	}
	data, err := yaml.Marshal(obj.Object)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.WriteFile(path, data, 0o600)
}

// maskSecrets replaces the values of Secrets' data as kubectl's diff does:
// "***" where both sides agree, "*** (before)" and "*** (after)" where
// they differ.
func maskSecrets(before, after *unstructured.Unstructured) {
	isSecret := func(u *unstructured.Unstructured) bool {
		return u != nil && u.GetKind() == "Secret" && u.GroupVersionKind().Group == ""
	}
	if !isSecret(before) && !isSecret(after) {
		return
	}
	var b, a map[string]any
	if before != nil {
		b, _, _ = unstructured.NestedMap(before.Object, "data")
	}
	if after != nil {
		a, _, _ = unstructured.NestedMap(after.Object, "data")
	}
	for k, v := range b {
		if av, ok := a[k]; ok && av == v {
			b[k], a[k] = "***", "***"
		} else {
			b[k] = "*** (before)"
			if ok {
				a[k] = "*** (after)"
			}
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			a[k] = "*** (after)"
		}
	}
	if before != nil && b != nil {
		_ = unstructured.SetNestedMap(before.Object, b, "data")
	}
	if after != nil && a != nil {
		_ = unstructured.SetNestedMap(after.Object, a, "data")
	}
	unstructured.RemoveNestedField(objOrEmpty(before), "stringData")
	unstructured.RemoveNestedField(objOrEmpty(after), "stringData")
}

func objOrEmpty(u *unstructured.Unstructured) map[string]any {
	if u == nil {
		return map[string]any{}
	}
	return u.Object
}

// validDiffArg is what kubectl keeps of $KUBECTL_EXTERNAL_DIFF's
// arguments.
var validDiffArg = regexp.MustCompile(`^[a-zA-Z0-9-=]+$`)

// runDiffProgram compares the directories with diff -u -N (or
// $KUBECTL_EXTERNAL_DIFF): its exit status 1 becomes minikctl's, without a
// message.
func runDiffProgram(ctx context.Context, streams IOStreams, live, merged string) error {
	program, args := "diff", []string{"-u", "-N"}
	if env := os.Getenv("KUBECTL_EXTERNAL_DIFF"); env != "" {
		words := strings.Split(env, " ")
		program, args = words[0], nil
		for _, w := range words[1:] {
			if validDiffArg.MatchString(w) {
				args = append(args, w)
			}
		}
	}
	cmd := exec.CommandContext(ctx, program, append(args, live, merged)...)
	cmd.Stdout, cmd.Stderr = streams.Out, streams.ErrOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return ErrExit
	}
	if err != nil {
		return diffFailure{fmt.Errorf("failed to run %q: %w", program, err)}
	}
	return nil
}
