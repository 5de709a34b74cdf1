package cli

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
)

// errKeyChanged is kubectl's message when a JSON merge patch would change
// an object's identity.
var errKeyChanged = errors.New("At least one of apiVersion, kind and name was changed")

// threeWayPatch computes the patch kubectl apply sends: from original (the
// last-applied configuration), modified (the manifest, carrying its new
// last-applied annotation) and current (the live object). Built-in kinds
// get a strategic merge patch using the patch metadata (merge keys and
// strategies) of their Go types; other kinds get a JSON merge patch. Fields
// changed by others are overwritten with the manifest's values. An empty
// patch is "{}".
func threeWayPatch(gvk schema.GroupVersionKind, original, modified, current []byte) ([]byte, types.PatchType, error) {
	versioned, err := scheme.Scheme.New(gvk)
	switch {
	case runtime.IsNotRegisteredError(err):
		patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, current,
			mergepatch.RequireKeyUnchanged("apiVersion"),
			mergepatch.RequireKeyUnchanged("kind"),
			mergepatch.RequireMetadataKeyUnchanged("name"))
		if err != nil {
			if mergepatch.IsPreconditionFailed(err) {
				return nil, "", errKeyChanged
			}
			return nil, "", err
		}
		return patch, types.MergePatchType, nil
	case err != nil:
		return nil, "", fmt.Errorf("getting instance of versioned object for %v: %w", gvk, err)
	}
	lookup, err := strategicpatch.NewPatchMetaFromStruct(versioned)
	if err != nil {
		return nil, "", err
	}
	patch, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current, lookup, true)
	if err != nil {
		return nil, "", err
	}
	return patch, types.StrategicMergePatchType, nil
}

// twoWayPatch is the patch from original to modified: strategic merge for
// built-in kinds, JSON merge patch for others.
func twoWayPatch(gvk schema.GroupVersionKind, original, modified []byte) ([]byte, types.PatchType, error) {
	versioned, err := scheme.Scheme.New(gvk)
	if err != nil {
		if runtime.IsNotRegisteredError(err) {
			patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, original)
			return patch, types.MergePatchType, err
		}
		return nil, "", err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(original, modified, versioned)
	return patch, types.StrategicMergePatchType, err
}
