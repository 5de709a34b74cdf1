package api

import (
	"encoding/json"
	"net/http"
	"runtime"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"

	"minik/internal/registry"
)

// serveAPI answers everything under /api and /apis: discovery documents
// and resource requests.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	info := requestInfoFrom(r.Context())
	routes := s.routes.Load()
	delegation := s.delegation()
	if h := delegation.delegatedHandler(r.URL.Path); h != nil {
		// A delegated watch is initialized as far as this server's
		// priority and fairness can tell.
		utilflowcontrol.RequestDelegated(r.Context())
		h.ServeHTTP(w, r)
		return
	}
	if info.IsResourceRequest {
		gvr := schema.GroupVersionResource{Group: info.APIGroup, Version: info.APIVersion, Resource: info.Resource}
		h, ok := routes.handlers[gvr]
		if !ok {
			if c, ok := s.createOnly[gvr]; ok {
				c.serve(w, r, info)
				return
			}
			if l, ok := s.local[gvr]; ok {
				l.serve(w, r, info)
				return
			}
			writeError(w, r, errNoResource())
			return
		}
		h.serve(w, r, info)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{}, r.Method))
		return
	}
	parts := splitPath(r.URL.Path)
	switch {
	case len(parts) == 1 && wantsAggregated(r):
		s.writeAggregated(w, routes, parts[0] == "api", delegation)
	case len(parts) == 1 && parts[0] == "api":
		s.writeDiscovery(w, r, &metav1.APIVersions{
			Versions:                   []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}},
		})
	case len(parts) == 1 && parts[0] == "apis":
		list := &metav1.APIGroupList{}
		for _, gv := range routes.groupOrder {
			if gv.Group == "" || containsGroup(list.Groups, gv.Group) {
				continue
			}
			list.Groups = append(list.Groups, routes.apiGroup(gv.Group))
		}
		list.Groups = delegation.mergeGroups(list.Groups, "")
		s.writeDiscovery(w, r, list)
	case len(parts) == 2 && parts[0] == "apis":
		g := routes.apiGroup(parts[1])
		var groups []metav1.APIGroup
		if len(g.Versions) > 0 {
			groups = []metav1.APIGroup{g}
		}
		if groups = delegation.mergeGroups(groups, parts[1]); len(groups) == 1 {
			g = groups[0]
		}
		if len(g.Versions) == 0 {
			writeError(w, r, errNoResource())
			return
		}
		s.writeDiscovery(w, r, &g)
	case len(parts) == 2 && parts[0] == "api", len(parts) == 3 && parts[0] == "apis":
		gv := schema.GroupVersion{Version: parts[len(parts)-1]}
		if parts[0] == "apis" {
			gv.Group = parts[1]
		}
		resources, ok := routes.byGroupVersion[gv]
		if !ok {
			writeError(w, r, errNoResource())
			return
		}
		s.writeDiscovery(w, r, resourceList(gv, resources))
	default:
		writeError(w, r, errNoResource())
	}
}

func containsGroup(gs []metav1.APIGroup, name string) bool {
	for _, g := range gs {
		if g.Name == name {
			return true
		}
	}
	return false
}

func (t *routeTable) apiGroup(name string) metav1.APIGroup {
	g := metav1.APIGroup{Name: name}
	for _, gv := range t.groupOrder {
		if gv.Group != name {
			continue
		}
		v := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
		g.Versions = append(g.Versions, v)
		if g.PreferredVersion.Version == "" {
			g.PreferredVersion = v
		}
	}
	return g
}

var (
	allVerbs    = metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	statusVerbs = metav1.Verbs{"get", "patch", "update"}
)

// resourceList is the discovery document of one group version.
func resourceList(gv schema.GroupVersion, resources []*registry.Resource) *metav1.APIResourceList {
	list := &metav1.APIResourceList{GroupVersion: gv.String()}
	for _, res := range resources {
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: res.Name, SingularName: res.SingularName, Namespaced: res.Namespaced, Kind: res.Kind,
			Verbs: verbsOf(res), ShortNames: res.ShortNames, Categories: res.Categories,
		})
		if res.HasStatus {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name: res.Name + "/status", Namespaced: res.Namespaced, Kind: res.Kind, Verbs: statusVerbs,
			})
		}
		if res.HasScale {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name: res.Name + "/scale", Namespaced: res.Namespaced, Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: statusVerbs,
			})
		}
		for _, sr := range res.Subresources {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name: res.Name + "/" + sr.Name, Namespaced: res.Namespaced, Group: sr.GroupVersion.Group, Version: sr.GroupVersion.Version, Kind: sr.Kind, Verbs: sr.Verbs,
			})
		}
	}
	return list
}

func (s *Server) writeDiscovery(w http.ResponseWriter, r *http.Request, obj kruntime.Object) {
	o, err := negotiateOutput(r, false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if o.info.MediaType == mediaProtobuf {
		o, _ = negotiateOutput(&http.Request{Header: http.Header{}, URL: r.URL}, false)
	}
	writeObject(w, o, http.StatusOK, statusGV, obj)
}

func (s *Server) serveVersion(w http.ResponseWriter, r *http.Request) {
	v := s.cfg.Version
	if v.GoVersion == "" {
		v.GoVersion = runtime.Version()
		v.Compiler = runtime.Compiler
		v.Platform = runtime.GOOS + "/" + runtime.GOARCH
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
