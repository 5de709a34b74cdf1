package api

import (
	"net/http"
	"slices"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/registry"
)

func (h *resourceHandler) serveSubresource(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	switch {
	case info.Subresource == "status" && h.res.HasStatus:
		if !slices.Contains(statusVerbs, info.Verb) {
			h.subresourceMethodNotSupported(w, r, info)
			return
		}
		h.serveWritableView(w, r, info)
		return
	case info.Subresource == "scale" && h.res.HasScale:
		h.serveScale(w, r, info)
		return
	}
	sr := h.res.Subresource(info.Subresource)
	if sr == nil {
		writeError(w, r, errNoResource())
		return
	}
	// A connect subresource carries any method its target serves (OPTIONS
	// through a proxy has no verb, as in kube, and only who may do
	// anything may send it).
	if !slices.Contains(sr.Verbs, info.Verb) && (info.Verb != "" || sr.Connect == nil) {
		h.subresourceMethodNotSupported(w, r, info)
		return
	}
	switch {
	case sr.Update != nil:
		h.serveWritableView(w, r, info)
	case sr.Create != nil:
		h.serveSubresourceCreate(w, r, info, sr)
	case sr.Connect != nil:
		h.serveSubresourceConnect(w, r, info, sr)
	default:
		// A descriptor's subresource has one of Update, Create and
		// Connect; one with none has nothing to serve it.
		writeError(w, r, errNoResource())
	}
}

// subresourceMethodNotSupported is kube's 405 for a verb the subresource
// does not serve.
func (h *resourceHandler) subresourceMethodNotSupported(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Group: h.res.GroupVersion.Group, Resource: h.res.Name + "/" + info.Subresource}, r.Method))
}

// serveWritableView serves a subresource that is a view of the object
// (status, or one with an update strategy: pods/ephemeralcontainers,
// pods/resize, namespaces/finalize), once its verb is known to be served.
func (h *resourceHandler) serveWritableView(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	switch info.Verb {
	case "get":
		h.serveGet(w, r, info)
	case "update":
		h.serveUpdate(w, r, info, info.Subresource)
	case "patch":
		h.servePatch(w, r, info, info.Subresource)
	}
}

// serveSubresourceCreate serves a create on a subresource: the body is
// decoded as the subresource's kind and handed to its Create.
func (h *resourceHandler) serveSubresourceCreate(w http.ResponseWriter, r *http.Request, info *RequestInfo, sr *registry.Subresource) {
	wr, err := readWrite(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	sinfo, err := inputSerializer(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	gv := sr.GroupVersion
	if gv.Empty() {
		gv = h.res.GroupVersion
	}
	def := gv.WithKind(sr.Kind)
	obj, _, err := sinfo.Serializer.Decode(wr.body, &def, nil)
	if err != nil {
		writeError(w, r, cannotBeHandled(def, err))
		return
	}
	out, err := sr.Create(r.Context(), serverEnv{h.s}, info.Namespace, info.Name, obj, wr.dryRun)
	if err != nil {
		writeError(w, r, err)
		return
	}
	code, outGV := http.StatusCreated, gv
	if st, ok := out.(*metav1.Status); ok {
		outGV = statusGV
		if st.Code != 0 {
			code = int(st.Code)
		}
	}
	writeObject(w, wr.out, code, outGV, out)
}

var scaleGV = autoscalingv1.SchemeGroupVersion

// scaleOf builds the Scale of an object with spec.replicas,
// status.replicas and spec.selector.
func scaleOf(obj runtime.Object) (*autoscalingv1.Scale, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	m, _ := meta.Accessor(obj)
	sc := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{
		Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
		ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp(),
	}}
	spec, _ := u["spec"].(map[string]interface{})
	status, _ := u["status"].(map[string]interface{})
	if v, ok := spec["replicas"].(int64); ok {
		sc.Spec.Replicas = int32(v)
	}
	if v, ok := status["replicas"].(int64); ok {
		sc.Status.Replicas = int32(v)
	}
	if s, ok := registry.ScaleSelector(obj); ok {
		sc.Status.Selector = s
	} else if sel, ok := spec["selector"].(map[string]interface{}); ok {
		var ls metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(sel, &ls); err == nil {
			if s, err := metav1.LabelSelectorAsSelector(&ls); err == nil {
				sc.Status.Selector = s.String()
			}
		}
	}
	return sc, nil
}

// scaleOf is the Scale of one of the resource's objects.
func (h *resourceHandler) scaleOf(obj runtime.Object) (*autoscalingv1.Scale, error) {
	if h.custom != nil {
		sc, err := h.customScaleOf(obj)
		if err != nil {
			return nil, err
		}
		return sc.(*autoscalingv1.Scale), nil
	}
	return scaleOf(obj)
}

// setReplicas sets the replicas of one of the resource's objects.
func (h *resourceHandler) setReplicas(obj runtime.Object, replicas int32) (runtime.Object, error) {
	if h.custom != nil {
		return h.setCustomReplicas(obj, replicas)
	}
	return setReplicas(obj, replicas)
}

// setReplicas sets an object's spec.replicas.
func setReplicas(obj runtime.Object, replicas int32) (runtime.Object, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	spec, _ := u["spec"].(map[string]interface{})
	if spec == nil {
		spec = map[string]interface{}{}
		u["spec"] = spec
	}
	spec["replicas"] = int64(replicas)
	out := obj.DeepCopyObject()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, out); err != nil {
		return nil, err
	}
	return out, nil
}

func (h *resourceHandler) serveScale(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	o, err := negotiateOutput(r, false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var result runtime.Object
	switch info.Verb {
	case "get":
		result, err = h.get(r.Context(), info.Namespace, info.Name)
	case "update", "patch":
		result, err = h.updateScale(w, r, info)
	default:
		err = apierrors.NewMethodNotSupported(schema.GroupResource{Group: h.res.GroupVersion.Group, Resource: h.res.Name + "/scale"}, r.Method)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	sc, err := h.scaleOf(result)
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	writeObject(w, o, http.StatusOK, scaleGV, sc)
}

// updateScale applies a Scale update or patch to the parent's replicas.
func (h *resourceHandler) updateScale(w http.ResponseWriter, r *http.Request, info *RequestInfo) (runtime.Object, error) {
	dryRun, err := isDryRun(r)
	if err != nil {
		return nil, err
	}
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	var pt types.PatchType
	if info.Verb == "patch" {
		if pt, err = patchType(r); err != nil {
			return nil, err
		}
	}
	return h.update(r.Context(), info.Namespace, info.Name, "", dryRun, func(current runtime.Object) (runtime.Object, error) {
		curObj, err := h.scaleOf(current)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		cur := curObj
		var next autoscalingv1.Scale
		data := body
		if pt != "" {
			curJSON, err := runtime.Encode(Codecs.LegacyCodec(scaleGV), cur)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			if data, err = applyPatch(pt, curJSON, body, &autoscalingv1.Scale{}); err != nil {
				return nil, err
			}
		}
		info, err := inputSerializer(r)
		if err != nil || pt != "" {
			info, _ = runtime.SerializerInfoForMediaType(Codecs.SupportedMediaTypes(), mediaJSON)
		}
		def := scaleGV.WithKind("Scale")
		if _, _, err := info.Serializer.Decode(data, &def, &next); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if next.Spec.Replicas < 0 {
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: "autoscaling", Kind: "Scale"}, cur.Name, field.ErrorList{
				field.Invalid(field.NewPath("spec", "replicas"), next.Spec.Replicas, "must be greater than or equal to 0"),
			})
		}
		if next.ResourceVersion != "" && next.ResourceVersion != cur.ResourceVersion {
			return nil, conflict(h.res, cur.Name)
		}
		out, err := h.setReplicas(current, next.Spec.Replicas)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		m, _ := meta.Accessor(out)
		m.SetResourceVersion("")
		return out, nil
	})
}
