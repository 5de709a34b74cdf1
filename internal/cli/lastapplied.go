package cli

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// lastAppliedAnnotation records, on every object kubectl apply touched, the
// configuration it applied last: the "original" of the next three-way merge.
const lastAppliedAnnotation = corev1.LastAppliedConfigAnnotation

// originalConfiguration returns the last-applied configuration recorded on
// obj, or nil when there is none.
func originalConfiguration(obj *unstructured.Unstructured) []byte {
	original, ok := obj.GetAnnotations()[lastAppliedAnnotation]
	if !ok {
		return nil
	}
	return []byte(original)
}

// modifiedConfiguration serializes obj as kubectl apply does: without the
// last-applied annotation, and, when annotate is set, serialized a second
// time carrying that first serialization as the annotation (so the patch
// updates it). obj is left with its annotations as they were, except that
// a missing last-applied annotation comes back empty, as in kubectl.
func modifiedConfiguration(obj *unstructured.Unstructured, annotate bool) ([]byte, error) {
	annots := obj.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	original := annots[lastAppliedAnnotation]
	delete(annots, lastAppliedAnnotation)
	obj.SetAnnotations(annots)

	modified, err := runtime.Encode(unstructured.UnstructuredJSONScheme, obj)
	if err != nil {
		return nil, err
	}
	if annotate {
		annots[lastAppliedAnnotation] = string(modified)
		obj.SetAnnotations(annots)
		modified, err = runtime.Encode(unstructured.UnstructuredJSONScheme, obj)
		if err != nil {
			return nil, err
		}
	}

	annots[lastAppliedAnnotation] = original
	obj.SetAnnotations(annots)
	return modified, nil
}

// createApplyAnnotation sets the last-applied annotation of obj to obj's
// own configuration, before a create.
func createApplyAnnotation(obj *unstructured.Unstructured) error {
	modified, err := modifiedConfiguration(obj, false)
	if err != nil {
		return err
	}
	annots := obj.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	annots[lastAppliedAnnotation] = string(modified)
	obj.SetAnnotations(annots)
	return nil
}

// pruneNulls removes null values from a manifest before a create, as the
// server would drop them on an update of the same manifest.
func pruneNulls(m map[string]any) {
	for k, v := range m {
		if v == nil {
			delete(m, k)
			continue
		}
		switch t := v.(type) {
		case map[string]any:
			pruneNulls(t)
		case []any:
			pruneNullsFromSlice(t)
		}
	}
}

func pruneNullsFromSlice(s []any) {
	for _, v := range s {
		switch t := v.(type) {
		case map[string]any:
			pruneNulls(t)
		case []any:
			pruneNullsFromSlice(t)
		}
	}
}
