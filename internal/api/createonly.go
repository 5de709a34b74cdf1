package api

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minik/internal/auth"
	"minik/internal/registry"
)

// Create-only virtual resources are answered, not stored: a client POSTs
// an object (a SelfSubjectAccessReview, a TokenReview) and gets it back
// with its status filled in, 201 Created. Every other verb is 405. Their
// descriptors are registry.CreateOnly(); what each answers is its
// descriptor's Answer. The HTTP side (decoding, namespace checks, encoding)
// is written once, in createOnlyHandler.serve.

// createOnlyHandler serves one create-only resource.
type createOnlyHandler struct {
	h *resourceHandler
}

// verbsOf are the verbs discovery advertises for a resource.
func verbsOf(res *registry.Resource) metav1.Verbs {
	if res.Answer != nil {
		return metav1.Verbs{"create"}
	}
	if _, ok := localGVRs.Load(res.GroupVersionResource()); ok {
		return readOnlyVerbs
	}
	verbs := make(metav1.Verbs, 0, len(allVerbs))
	for _, v := range allVerbs {
		if res.Serves(v) {
			verbs = append(verbs, v)
		}
	}
	return verbs
}

// addCreateOnly registers the create-only resources with the server and
// its discovery.
func (s *Server) addCreateOnly(resources []*registry.Resource) error {
	s.createOnly = map[schema.GroupVersionResource]*createOnlyHandler{}
	for _, res := range resources {
		gvr := res.GroupVersionResource()
		if res.Answer == nil {
			return fmt.Errorf("api: create-only resource %s: no answer for kind %s", gvr, res.Kind)
		}
		if _, dup := s.builtin.handlers[gvr]; dup {
			return fmt.Errorf("api: resource %s described twice", gvr)
		}
		if _, dup := s.createOnly[gvr]; dup {
			return fmt.Errorf("api: resource %s described twice", gvr)
		}
		s.createOnly[gvr] = &createOnlyHandler{h: newResourceHandler(s, res)}
		t := s.builtin
		if _, seen := t.byGroupVersion[res.GroupVersion]; !seen {
			t.groupOrder = append(t.groupOrder, res.GroupVersion)
		}
		t.byGroupVersion[res.GroupVersion] = append(t.byGroupVersion[res.GroupVersion], res)
	}
	return nil
}

// serve answers a request for a create-only resource.
func (c *createOnlyHandler) serve(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	res := c.h.res
	if info.Verb != "create" || info.Name != "" || info.Subresource != "" {
		writeError(w, r, apierrors.NewMethodNotSupported(res.GroupResource(), verbOrMethod(info, r)))
		return
	}
	if res.Namespaced != (info.Namespace != "") {
		writeError(w, r, errNoResource())
		return
	}
	o, err := negotiateOutput(r, false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	obj, err := c.h.decodeBody(w, r, body)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if res.Namespaced {
		m, _ := meta.Accessor(obj)
		if m.GetNamespace() == "" {
			m.SetNamespace(info.Namespace)
		} else if m.GetNamespace() != info.Namespace {
			writeError(w, r, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request"))
			return
		}
	}
	dryRun, err := isDryRun(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out, err := res.Answer(registry.WithDryRun(r.Context(), dryRun), serverEnv{c.h.s}, info.Namespace, obj)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeObject(w, o, http.StatusCreated, res.GroupVersion, out)
}

func verbOrMethod(info *RequestInfo, r *http.Request) string {
	if info.Verb != "" {
		return info.Verb
	}
	return r.Method
}

// authorizer is the server's authorizer chain as one authorizer.
func (s *Server) authorizer() auth.Union { return auth.Union(s.cfg.Authorizers) }
