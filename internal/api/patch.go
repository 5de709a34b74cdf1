package api

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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

// applyPatch applies a patch of type pt to the JSON of an object of the
// resource's kind. dataStruct is an object of the typed struct whose patch
// strategy applies (for strategic merge patches).
func applyPatch(pt types.PatchType, current, patch []byte, dataStruct runtime.Object) ([]byte, error) {
	switch pt {
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		out, err := p.Apply(current)
		if err != nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
		return out, nil
	case types.MergePatchType:
		out, err := jsonpatch.MergePatch(current, patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return out, nil
	case types.StrategicMergePatchType:
		out, err := strategicpatch.StrategicMergePatch(current, patch, dataStruct)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return out, nil
	}
	return nil, patchMediaTypeError(string(pt))
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
	writeObject(w, o, http.StatusOK, h.res.GroupVersion, out)
}

// discardHeaders is a ResponseWriter whose header changes are dropped.
type discardHeaders struct{ http.ResponseWriter }

func (d discardHeaders) Header() http.Header { return http.Header{} }
