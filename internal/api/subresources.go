package api

import (
	"fmt"
	"net/http"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

type subresourceKey struct {
	gr  schema.GroupResource
	sub string
}

type subresourceInfo struct {
	kind  string
	verbs metav1.Verbs
	// gv is the group version of kind when it is not the resource's.
	gv schema.GroupVersion
}

// subresources are the extra subresources served, by resource.
var subresources = map[subresourceKey]subresourceInfo{
	{schema.GroupResource{Resource: "pods"}, "binding"}:             {kind: "Binding", verbs: metav1.Verbs{"create"}},
	{schema.GroupResource{Resource: "pods"}, "eviction"}:            {kind: "Eviction", verbs: metav1.Verbs{"create"}, gv: policyv1.SchemeGroupVersion},
	{schema.GroupResource{Resource: "pods"}, "log"}:                 {kind: "Pod", verbs: metav1.Verbs{"get"}},
	{schema.GroupResource{Resource: "pods"}, "ephemeralcontainers"}: {kind: "Pod", verbs: metav1.Verbs{"get", "patch", "update"}},
	{schema.GroupResource{Resource: "pods"}, "exec"}:                {kind: "PodExecOptions", verbs: metav1.Verbs{"create", "get"}},
	{schema.GroupResource{Resource: "pods"}, "attach"}:              {kind: "PodAttachOptions", verbs: metav1.Verbs{"create", "get"}},
	{schema.GroupResource{Resource: "pods"}, "portforward"}:         {kind: "PodPortForwardOptions", verbs: metav1.Verbs{"create", "get"}},
	{schema.GroupResource{Resource: "pods"}, "proxy"}:               {kind: "PodProxyOptions", verbs: proxyVerbs},
	{schema.GroupResource{Resource: "services"}, "proxy"}:           {kind: "ServiceProxyOptions", verbs: proxyVerbs},
	{schema.GroupResource{Resource: "nodes"}, "proxy"}:              {kind: "NodeProxyOptions", verbs: proxyVerbs},
	{schema.GroupResource{Resource: "namespaces"}, "finalize"}:      {kind: "Namespace", verbs: metav1.Verbs{"update"}},
	{schema.GroupResource{Resource: "serviceaccounts"}, "token"}:    {kind: "TokenRequest", verbs: metav1.Verbs{"create"}, gv: tokenRequestGV},
}

// proxyVerbs are the verbs of the proxy subresources in discovery.
var proxyVerbs = metav1.Verbs{"create", "delete", "get", "patch", "update"}

// proxyResources have a proxy subresource.
var proxyResources = map[string]bool{"pods": true, "services": true, "nodes": true}

func (h *resourceHandler) serveSubresource(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	notFound := func() { writeError(w, r, errNoResource()) }
	switch {
	case info.Subresource == "status" && h.res.HasStatus:
		switch info.Verb {
		case "get":
			h.serveGet(w, r, info)
		case "update":
			h.serveUpdate(w, r, info, "status")
		case "patch":
			h.servePatch(w, r, info, "status")
		default:
			writeError(w, r, apierrors.NewMethodNotSupported(h.res.GroupResource(), r.Method))
		}
	case info.Subresource == "scale" && h.res.HasScale:
		h.serveScale(w, r, info)
	case info.Subresource == "binding" && h.res.Name == "pods" && h.res.GroupVersion.Group == "":
		if info.Verb != "create" {
			writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "pods/binding"}, r.Method))
			return
		}
		h.serveBinding(w, r, info)
	case info.Subresource == "eviction" && h.res.Name == "pods" && h.res.GroupVersion.Group == "":
		if info.Verb != "create" {
			writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "pods/eviction"}, r.Method))
			return
		}
		h.serveEviction(w, r, info)
	case info.Subresource == "log" && h.res.Name == "pods" && h.res.GroupVersion.Group == "":
		if info.Verb != "get" {
			writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "pods/log"}, r.Method))
			return
		}
		h.serveLog(w, r, info)
	case h.res.Strategy.Subresources[info.Subresource].Merge != nil:
		switch info.Verb {
		case "get":
			h.serveGet(w, r, info)
		case "update":
			h.serveUpdate(w, r, info, info.Subresource)
		case "patch":
			h.servePatch(w, r, info, info.Subresource)
		default:
			writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Group: h.res.GroupVersion.Group, Resource: h.res.Name + "/" + info.Subresource}, r.Method))
		}
	case connectSubresources[info.Subresource] && h.res.Name == "pods" && h.res.GroupVersion.Group == "":
		h.serveConnect(w, r, info)
	case info.Subresource == "proxy" && proxyResources[h.res.Name] && h.res.GroupVersion.Group == "":
		h.serveProxy(w, r, info)
	case info.Subresource == "finalize" && h.res.Name == "namespaces" && h.res.GroupVersion.Group == "":
		if info.Verb != "update" {
			writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "namespaces/finalize"}, r.Method))
			return
		}
		h.serveFinalize(w, r, info)
	case info.Subresource == "token" && h.res.Name == "serviceaccounts" && h.res.GroupVersion.Group == "":
		if info.Verb != "create" {
			writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "serviceaccounts/token"}, r.Method))
			return
		}
		h.serveTokenRequest(w, r, info)
	default:
		notFound()
	}
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
	if sel, ok := spec["selector"].(map[string]interface{}); ok {
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

func (h *resourceHandler) serveBinding(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	wr, err := readWrite(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	o, body := wr.out, wr.body
	sinfo, err := inputSerializer(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b corev1.Binding
	def := corev1.SchemeGroupVersion.WithKind("Binding")
	if _, _, err := sinfo.Serializer.Decode(body, &def, &b); err != nil {
		writeError(w, r, apierrors.NewBadRequest(err.Error()))
		return
	}
	gr := schema.GroupResource{Resource: "pods/binding"}
	if b.Name != "" && b.Name != info.Name {
		writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", b.Name, info.Name)))
		return
	}
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		writeError(w, r, apierrors.NewInvalid(schema.GroupKind{Kind: "Binding"}, info.Name, field.ErrorList{
			field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node"}),
		}))
		return
	}
	if b.Target.Name == "" {
		writeError(w, r, apierrors.NewBadRequest("target.name: Required value"))
		return
	}
	_, err = h.update(r.Context(), info.Namespace, info.Name, "binding", wr.dryRun, func(current runtime.Object) (runtime.Object, error) {
		pod := current.(*corev1.Pod)
		if pod.DeletionTimestamp != nil {
			return nil, apierrors.NewConflict(gr, info.Name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name))
		}
		if pod.Spec.NodeName != "" {
			return nil, apierrors.NewConflict(gr, info.Name, fmt.Errorf("pod %s is already assigned to node %q", pod.Name, pod.Spec.NodeName))
		}
		if b.UID != "" && b.UID != pod.UID {
			return nil, apierrors.NewConflict(gr, info.Name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", b.UID, pod.UID))
		}
		pod.Spec.NodeName = b.Target.Name
		setPodScheduled(pod, metav1.NewTime(h.s.clock.Now().Truncate(1e9)))
		pod.ResourceVersion = ""
		return pod, nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeObject(w, o, http.StatusCreated, statusGV, &metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusCreated})
}

// setPodScheduled sets the PodScheduled condition to True. A binding is
// the one write to spec.nodeName and to this condition at once.
func setPodScheduled(pod *corev1.Pod, now metav1.Time) {
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type == corev1.PodScheduled {
			if c.Status != corev1.ConditionTrue {
				c.Status, c.LastTransitionTime, c.Reason, c.Message = corev1.ConditionTrue, now, "", ""
			}
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now})
}

// serveFinalize updates a Namespace's spec.finalizers, the one field
// /finalize may change.
func (h *resourceHandler) serveFinalize(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	wr, err := readWrite(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	o := wr.out
	obj, err := h.decodeBody(w, r, wr.body)
	if err != nil {
		writeError(w, r, err)
		return
	}
	want := obj.(*corev1.Namespace)
	out, err := h.update(r.Context(), "", info.Name, "finalize", wr.dryRun, func(current runtime.Object) (runtime.Object, error) {
		ns := current.(*corev1.Namespace)
		if want.ResourceVersion != "" && want.ResourceVersion != ns.ResourceVersion {
			return nil, conflict(h.res, ns.Name)
		}
		ns.Spec.Finalizers = want.Spec.Finalizers
		ns.ResourceVersion = ""
		return ns, nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeObject(w, o, http.StatusOK, h.res.GroupVersion, out)
}
