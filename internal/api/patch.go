package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// patchTypes are the patch content types served.
var patchTypes = map[string]types.PatchType{
	string(types.JSONPatchType):           types.JSONPatchType,
	string(types.MergePatchType):          types.MergePatchType,
	string(types.StrategicMergePatchType): types.StrategicMergePatchType,
}

// patchMediaTypeError is kube's 415 for a patch it cannot apply.
func patchMediaTypeError(ct string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s, %s, %s, %s",
			types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyYAMLPatchType),
	}}
}

// jsonEncoder encodes objects of a group version as JSON.
func jsonEncode(obj runtime.Object, h *resourceHandler) ([]byte, error) {
	var buf bytes.Buffer
	enc := Codecs.WithoutConversion().EncoderForVersion(storageSerializer, h.res.GroupVersion)
	if err := enc.Encode(obj, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// maxJSONPatchOperations bounds the operations of a JSON patch, as
// kube-apiserver's handler does.
const maxJSONPatchOperations = 10000

// maxJSONPatchCopyBytes bounds how much a JSON patch's copy operations may
// add to an object, as kube-apiserver's JSONPatchMaxCopyBytes does (the
// request body limit: without it a 2 kB patch of copies doubling a
// subtree grows the server by gigabytes).
const maxJSONPatchCopyBytes = maxBodyBytes

func init() {
	// The library's bound is a global; kube-apiserver sets it the same
	// way when it builds its server, keeping a smaller one already set.
	for {
		cur := atomic.LoadInt64(&jsonpatch.AccumulatedCopySizeLimit)
		if cur > 0 && cur <= maxJSONPatchCopyBytes || atomic.CompareAndSwapInt64(&jsonpatch.AccumulatedCopySizeLimit, cur, maxJSONPatchCopyBytes) {
			return
		}
	}
}

// applyPatch applies a patch of type pt to the JSON of an object of the
// resource's kind. dataStruct is an object of the typed struct whose patch
// strategy applies (for strategic merge patches). Its errors are kube's:
// a 400 for a patch that does not decode, 413 for too many operations, 422
// for a JSON patch that does not apply.
func applyPatch(pt types.PatchType, current, patch []byte, dataStruct runtime.Object) ([]byte, error) {
	switch pt {
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if len(p) > maxJSONPatchOperations {
			return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(p)))
		}
		if err := checkJSONPatch(p); err != nil {
			return nil, unprocessablePatch(err)
		}
		out, err := p.Apply(current)
		if err != nil {
			return nil, unprocessablePatch(err)
		}
		return out, nil
	case types.MergePatchType:
		out, err := jsonpatch.MergePatch(current, patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return out, nil
	case types.StrategicMergePatchType:
		return strategicMergePatch(current, patch, dataStruct)
	}
	return nil, patchMediaTypeError(string(pt))
}

// unprocessablePatch is kube's 422 for a JSON patch that does not apply.
func unprocessablePatch(err error) error {
	return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
}

// checkJSONPatch refuses what the json-patch library would panic on (a
// nil pointer): an operation on the whole document without a value. A
// test of it fails, as a test of any other path without a value does; a
// replacement of it needs an object or an array.
func checkJSONPatch(p jsonpatch.Patch) error {
	for _, op := range p {
		if path, err := op.Path(); err != nil || path != "" || op["value"] != nil {
			continue
		}
		switch op.Kind() {
		case "test":
			return fmt.Errorf("testing value %s failed: %w", "", jsonpatch.ErrTestFailed)
		case "replace":
			return errors.New("replace operation value must be object or array")
		}
	}
	return nil
}

// strategicMergePatch applies a strategic merge patch to current with the
// patch strategy of dataStruct's type. Directives and merge keys whose
// values the library would panic comparing are a 400; so are its own
// format errors, and the errors kube answers 422 for are a 422.
func strategicMergePatch(current, patch []byte, dataStruct runtime.Object) ([]byte, error) {
	lookup, err := strategicpatch.NewPatchMetaFromStruct(dataStruct)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var orig, p map[string]any
	if err := json.Unmarshal(current, &orig); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if err := checkStrategicPatch(p, lookup); err != nil {
		return nil, strategicPatchError(err)
	}
	out, err := strategicpatch.StrategicMergeMapPatchUsingLookupPatchMeta(orig, p, lookup)
	if err != nil {
		return nil, strategicPatchError(err)
	}
	data, err := json.Marshal(out)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return data, nil
}

// strategicPatchError is kube's status for a strategic merge patch the
// library refused: 422 for what it names unprocessable, otherwise 400
// (kube answers its other errors with a 500, as if the server were at
// fault).
func strategicPatchError(err error) error {
	switch err {
	case mergepatch.ErrNoListOfLists, mergepatch.ErrPatchContentNotMatchRetainKeys:
		return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	}
	return apierrors.NewBadRequest(err.Error())
}

// checkStrategicPatch walks a strategic merge patch with its schema and
// refuses values the library uses as map keys or compares with ==, where
// a map or a list panics: the entries of $retainKeys and $setElementOrder
// lists, the values of merge keys; and lists of lists, which it does not
// support. lookup is nil below fields the schema does not describe, where
// only directives are checked.
func checkStrategicPatch(patch map[string]any, lookup strategicpatch.LookupPatchMeta) error {
	for k, v := range patch {
		switch {
		case k == "$retainKeys":
			if !scalarList(v, false) {
				return mergepatch.ErrBadPatchFormatForRetainKeys
			}
		case strings.HasPrefix(k, "$setElementOrder/"):
			// A list of maps is ordered by their merge keys' values, a
			// list of scalars by its values.
			keyed := false
			if lookup != nil {
				_, pm, err := lookup.LookupPatchMetadataForSlice(strings.TrimPrefix(k, "$setElementOrder/"))
				keyed = err == nil && pm.GetPatchMergeKey() != ""
			}
			if !scalarList(v, keyed) {
				return mergepatch.ErrBadPatchFormatForSetElementOrderList
			}
		case strings.HasPrefix(k, "$"):
		default:
			if err := checkStrategicValue(k, v, lookup); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkStrategicValue checks the patch value v of field k (see
// checkStrategicPatch).
func checkStrategicValue(k string, v any, lookup strategicpatch.LookupPatchMeta) error {
	switch v := v.(type) {
	case map[string]any:
		var sub strategicpatch.LookupPatchMeta
		if lookup != nil {
			if s, _, err := lookup.LookupPatchMetadataForStruct(k); err == nil {
				sub = s
			}
		}
		return checkStrategicPatch(v, sub)
	case []any:
		var sub strategicpatch.LookupPatchMeta
		var mergeKey string
		if lookup != nil {
			if s, pm, err := lookup.LookupPatchMetadataForSlice(k); err == nil {
				sub, mergeKey = s, pm.GetPatchMergeKey()
			}
		}
		for _, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				if _, isList := e.([]any); isList && lookup != nil {
					return mergepatch.ErrNoListOfLists
				}
				continue
			}
			if mv, ok := m[mergeKey]; ok && mergeKey != "" && !scalar(mv) {
				return fmt.Errorf("the merge key %s of a %s entry must be a string, a number or a boolean: %v", mergeKey, k, mv)
			}
			if err := checkStrategicPatch(m, sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// scalar tells whether v is a JSON scalar (comparable and hashable).
func scalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

// scalarList tells whether v is a list of scalars or, when maps is set,
// also of maps whose values are scalars ($setElementOrder of a list of
// maps names their merge keys).
func scalarList(v any, maps bool) bool {
	l, ok := v.([]any)
	if !ok {
		return v == nil
	}
	for _, e := range l {
		if m, ok := e.(map[string]any); ok && maps {
			for _, mv := range m {
				if !scalar(mv) {
					return false
				}
			}
			continue
		}
		if !scalar(e) {
			return false
		}
	}
	return true
}

// patchType reads a PATCH request's content type.
func patchType(r *http.Request) (types.PatchType, error) {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", patchMediaTypeError(ct)
	}
	pt, ok := patchTypes[mt]
	if !ok {
		return "", patchMediaTypeError(ct)
	}
	return pt, nil
}

func (h *resourceHandler) servePatch(w http.ResponseWriter, r *http.Request, info *RequestInfo, sub string) {
	if isApply(r) {
		h.serveApply(w, r, info, sub)
		return
	}
	pt, err := patchType(r)
	if err == nil && h.custom != nil && pt == types.StrategicMergePatchType {
		err = customPatchMediaTypeError()
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	wr, err := readWrite(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if _, err := patchOptions(r, pt); err != nil {
		writeError(w, r, err)
		return
	}
	o, dryRun, patch := wr.out, wr.dryRun, wr.body
	warned := false
	out, err := h.update(r.Context(), info.Namespace, info.Name, sub, dryRun, func(current runtime.Object) (runtime.Object, error) {
		cur, err := jsonEncode(current, h)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		patched, err := applyPatch(pt, cur, patch, h.codec.New())
		if err != nil {
			return nil, err
		}
		// Unknown fields are reported once, not once per retry.
		ww := w
		if warned {
			ww = discardHeaders{w}
		}
		req := r.Clone(r.Context())
		req.Header.Set("Content-Type", mediaJSON)
		obj, err := h.decodeBody(ww, req, patched)
		if err != nil {
			return nil, err
		}
		warned = true
		m, _ := meta.Accessor(obj)
		cm, _ := meta.Accessor(current)
		if m.GetResourceVersion() == cm.GetResourceVersion() {
			// The patch named no resourceVersion: no precondition, so a
			// conflicting write is retried on the new object.
			m.SetResourceVersion("")
		}
		return obj, nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	noteResponseObject(r.Context(), out)
	writeObject(w, o, http.StatusOK, h.res.GroupVersion, out)
}

// discardHeaders is a ResponseWriter whose header changes are dropped.
type discardHeaders struct{ http.ResponseWriter }

func (d discardHeaders) Header() http.Header { return http.Header{} }
