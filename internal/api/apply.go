package api

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// parameterCodec decodes query parameters into meta.k8s.io options.
var parameterCodec = runtime.NewParameterCodec(Scheme)

// isApply tells whether a PATCH is a server-side apply.
func isApply(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && types.PatchType(mt) == types.ApplyYAMLPatchType
}

// patchOptions decodes and validates a patch's options as kube does: a
// 422 on PatchOptions for a missing fieldManager of an apply, or a force
// on another patch.
func patchOptions(r *http.Request, pt types.PatchType) (*metav1.PatchOptions, error) {
	opts := &metav1.PatchOptions{}
	if err := parameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if errs := validation.ValidatePatchOptions(opts, pt); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs)
	}
	return opts, nil
}

// maxApplyAttempts bounds how often an apply goes back and forth between
// creating and updating while other clients create and delete the object.
const maxApplyAttempts = 5

// serveApply serves a server-side apply: the applied configuration is
// merged into the live object by the field manager (409 on conflicts with
// other managers unless forced), or creates the object when there is none
// (201); the result goes through the usual write pipeline.
func (h *resourceHandler) serveApply(w http.ResponseWriter, r *http.Request, info *RequestInfo, sub string) {
	wr, err := readWrite(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	opts, err := patchOptions(r, types.ApplyYAMLPatchType)
	if err != nil {
		writeError(w, r, err)
		return
	}
	applied := &unstructured.Unstructured{Object: map[string]any{}}
	if err := yaml.Unmarshal(wr.body, &applied.Object); err != nil {
		writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err)))
		return
	}
	switch opts.FieldValidation {
	case metav1.FieldValidationStrict, metav1.FieldValidationWarn, "":
		if err := yaml.UnmarshalStrict(wr.body, &map[string]any{}); err != nil {
			if opts.FieldValidation == metav1.FieldValidationStrict {
				writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding YAML: %v", err)))
				return
			}
			w.Header().Add("Warning", fmt.Sprintf("299 - %q", err.Error()))
		}
	}
	fm, err := h.fieldManager(sub)
	if err != nil || fm == nil {
		writeError(w, r, apierrors.NewInternalError(fmt.Errorf("no field manager for %s", h.res.GroupResource())))
		return
	}
	ctx := withWriteInfo(r.Context(), writeInfo{manager: opts.FieldManager, subresource: sub, applied: true})
	force := opts.Force != nil && *opts.Force
	apply := func(live runtime.Object) (runtime.Object, error) {
		out, err := fm.Apply(live, applied.DeepCopy(), opts.FieldManager, force)
		if err != nil {
			return nil, applyError(err)
		}
		return out, nil
	}
	for attempt := 1; ; attempt++ {
		out, err := h.update(ctx, info.Namespace, info.Name, sub, wr.dryRun, func(current runtime.Object) (runtime.Object, error) {
			obj, err := apply(current)
			if err != nil {
				return nil, err
			}
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			if cm, _ := meta.Accessor(current); m.GetResourceVersion() == cm.GetResourceVersion() {
				// The configuration named no resourceVersion: no
				// precondition, so a lost race is retried.
				m.SetResourceVersion("")
			}
			return obj, nil
		})
		if apierrors.IsNotFound(err) && sub == "" && attempt < maxApplyAttempts {
			// Apply creates what does not exist (only through the main
			// resource, as kube's status stores do not create).
			out, err = h.applyCreate(ctx, info, wr.dryRun, apply)
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			if err != nil {
				writeError(w, r, err)
				return
			}
			writeObject(w, wr.out, http.StatusCreated, h.res.GroupVersion, out)
			return
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeObject(w, wr.out, http.StatusOK, h.res.GroupVersion, out)
		return
	}
}

// applyCreate creates the object an apply describes.
func (h *resourceHandler) applyCreate(ctx context.Context, info *RequestInfo, dryRun bool, apply func(runtime.Object) (runtime.Object, error)) (runtime.Object, error) {
	obj, err := apply(h.codec.New())
	if err != nil {
		return nil, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if uid := m.GetUID(); uid != "" {
		return nil, apierrors.NewConflict(h.res.GroupResource(), info.Name, fmt.Errorf("uid mismatch: the provided object specified uid %s, and no existing object was found", uid))
	}
	if m.GetName() != info.Name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), info.Name))
	}
	if h.res.Namespaced && m.GetNamespace() != "" && m.GetNamespace() != info.Namespace {
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return h.create(ctx, info.Namespace, obj, dryRun)
}

// applyError is what a failed apply answers: its Status errors
// (conflicts, bad requests) as they are; a configuration the schema
// rejects (the field manager cannot type it) a 400 carrying the field
// manager's message; anything else a 500 carrying it. kube-apiserver
// v1.37 answers the schema's refusal with a 500 too (kubernetes#139253,
// which its pending fix makes the 400 answered here): the fault is the
// client's, and clients must not retry it as a server error.
func applyError(err error) error {
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	if strings.HasPrefix(err.Error(), typedPatchErrorPrefix) {
		return apierrors.NewBadRequest(err.Error())
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Reason: metav1.StatusReasonUnknown, Message: err.Error(),
	}}
}

// typedPatchErrorPrefix starts the field manager's error for an applied
// configuration that does not fit the kind's schema (structuredmerge's
// "failed to create typed patch object (<object>): <errors>").
const typedPatchErrorPrefix = "failed to create typed patch object"
