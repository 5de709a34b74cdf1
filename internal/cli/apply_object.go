package cli

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// resource returns the dynamic client of the info's resource and namespace.
func (o *ApplyOptions) resource(info *Info) dynamic.ResourceInterface {
	r := o.Dynamic.Resource(info.Mapping.Resource)
	if info.Namespaced() {
		return r.Namespace(info.Namespace)
	}
	return r
}

// dryRun is the dryRun option of requests.
func (o *ApplyOptions) dryRun() []string {
	if o.DryRun == DryRunServer {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// applyOne creates the object with its last-applied annotation when it
// does not exist, and otherwise patches it with the three-way merge of
// last-applied, manifest and live object; it prints the outcome.
func (o *ApplyOptions) applyOne(ctx context.Context, info *Info) error {
	obj, ok := info.Object.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("unexpected object type %T", info.Object)
	}
	if info.Name == "" {
		if gen := obj.GetGenerateName(); gen != "" {
			return fmt.Errorf("from %s: cannot use generate name with apply", gen)
		}
	}

	if o.ServerSide {
		return o.serverSideApply(ctx, info, obj)
	}

	modified, err := modifiedConfiguration(obj, !o.NoAnnotate)
	if err != nil {
		return addSourceToErr(fmt.Sprintf("retrieving modified configuration from:\n%s\nfor:", info.String()), info.Source, err)
	}

	current, err := o.get(ctx, info)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			return addSourceToErr(fmt.Sprintf("retrieving current configuration of:\n%s\nfrom server for:", info.String()), info.Source, err)
		}
		if !o.NoAnnotate {
			if err := createApplyAnnotation(obj); err != nil {
				return addSourceToErr("creating", info.Source, err)
			}
		} else if a := obj.GetAnnotations(); a != nil && a[lastAppliedAnnotation] == "" {
			// The manifest as written (modifiedConfiguration restored
			// an absent annotation as empty).
			delete(a, lastAppliedAnnotation)
			if len(a) == 0 {
				a = nil
			}
			obj.SetAnnotations(a)
		}
		pruneNulls(obj.Object)
		if o.DryRun != DryRunClient {
			created, err := o.resource(info).Create(ctx, obj, metav1.CreateOptions{
				DryRun:          o.dryRun(),
				FieldManager:    o.FieldManager,
				FieldValidation: o.FieldValidation,
			})
			if err != nil {
				return addSourceToErr("creating", info.Source, err)
			}
			info.Object = created
		}
		return o.printResult(info, "created")
	}

	if o.DryRun != DryRunClient {
		if _, ok := current.GetAnnotations()[lastAppliedAnnotation]; !ok {
			fmt.Fprintf(o.Streams.ErrOut, "Warning: resource %[1]s is missing the %[2]s annotation which is required by %[3]s apply. %[3]s apply should only be used on resources created declaratively by either %[3]s create --save-config or %[3]s apply. The missing annotation will be patched automatically.\n", info.ObjectName(), lastAppliedAnnotation, o.BaseName)
		}
		patch, patched, err := o.patch(ctx, info, current, modified)
		if err != nil {
			return addSourceToErr(fmt.Sprintf("applying patch:\n%s\nto:\n%v\nfor:", patch, info), info.Source, err)
		}
		info.Object = patched
		if patched.GetDeletionTimestamp() != nil {
			fmt.Fprintf(o.Streams.ErrOut, "Warning: Detected changes to resource %s which is currently being deleted.\n", patched.GetName())
		}
		if string(patch) == "{}" {
			return o.printResult(info, "unchanged")
		}
	}
	return o.printResult(info, "configured")
}

// get reads the live object.
func (o *ApplyOptions) get(ctx context.Context, info *Info) (*unstructured.Unstructured, error) {
	if info.Name == "" {
		return nil, errors.New("resource name may not be empty")
	}
	return o.resource(info).Get(ctx, info.Name, metav1.GetOptions{})
}

// patch sends the three-way patch, recomputing it from a fresh read after
// a conflict (up to maxPatchRetry times). An empty patch is not sent.
func (o *ApplyOptions) patch(ctx context.Context, info *Info, current *unstructured.Unstructured, modified []byte) ([]byte, *unstructured.Unstructured, error) {
	patch, patched, err := o.patchOnce(ctx, info, current, modified)
	for i := 1; i <= maxPatchRetry && apierrors.IsConflict(err); i++ {
		if i > 1 {
			o.Sleep(patchBackOff)
		}
		current, err = o.get(ctx, info)
		if err != nil {
			return nil, nil, err
		}
		patch, patched, err = o.patchOnce(ctx, info, current, modified)
	}
	return patch, patched, err
}

// patchOnce computes the patch against current and sends it, unless empty.
func (o *ApplyOptions) patchOnce(ctx context.Context, info *Info, current *unstructured.Unstructured, modified []byte) ([]byte, *unstructured.Unstructured, error) {
	currentJSON, err := runtime.Encode(unstructured.UnstructuredJSONScheme, current)
	if err != nil {
		return nil, nil, addSourceToErr(fmt.Sprintf("serializing current configuration from:\n%v\nfor:", current), info.Source, err)
	}
	original := originalConfiguration(current)
	patch, patchType, err := threeWayPatch(info.Mapping.GroupVersionKind, original, modified, currentJSON)
	if err != nil {
		if errors.Is(err, errKeyChanged) {
			return nil, nil, err
		}
		return nil, nil, addSourceToErr(fmt.Sprintf("creating patch with:\noriginal:\n%s\nmodified:\n%s\ncurrent:\n%s\nfor:", original, modified, currentJSON), info.Source, err)
	}
	if string(patch) == "{}" {
		return patch, current, nil
	}
	patched, err := o.resource(info).Patch(ctx, info.Name, patchType, patch, metav1.PatchOptions{
		DryRun:          o.dryRun(),
		FieldManager:    o.FieldManager,
		FieldValidation: o.FieldValidation,
	})
	return patch, patched, err
}

// printResult prints "kind/name operation" (or just the name for -o
// name); with -o yaml or json, objects print together at the end instead.
func (o *ApplyOptions) printResult(info *Info, operation string) error {
	if o.shouldPrintObject() {
		return nil
	}
	printer, err := o.printer(operation)
	if err != nil {
		return err
	}
	return printer.PrintObj(info.Object, o.Streams.Out)
}

// serverSideConflictHelp follows a server-side apply conflict, as kubectl
// explains it.
const serverSideConflictHelp = `%v
Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the ` + "`--force-conflicts`" + ` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts`

// serverSideApply sends the manifest's object as an apply patch (the
// server merges it, creating the object if needed) and prints
// "serverside-applied".
func (o *ApplyOptions) serverSideApply(ctx context.Context, info *Info, obj *unstructured.Unstructured) error {
	if info.Name == "" {
		return errors.New("resource name may not be empty")
	}
	data, err := runtime.Encode(unstructured.UnstructuredJSONScheme, obj)
	if err != nil {
		return addSourceToErr("serverside-apply", info.Source, err)
	}
	applied, err := o.resource(info).Patch(ctx, info.Name, types.ApplyPatchType, data, metav1.PatchOptions{
		DryRun:          o.dryRun(),
		Force:           &o.ForceConflicts,
		FieldManager:    o.FieldManager,
		FieldValidation: o.FieldValidation,
	})
	if err != nil {
		if apierrors.IsConflict(err) {
			return fmt.Errorf(serverSideConflictHelp, err)
		}
		return err
	}
	info.Object = applied
	if applied.GetDeletionTimestamp() != nil {
		fmt.Fprintf(o.Streams.ErrOut, "Warning: Detected changes to resource %s which is currently being deleted.\n", applied.GetName())
	}
	return o.printResult(info, "serverside-applied")
}
