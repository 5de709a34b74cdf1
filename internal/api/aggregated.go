package api

import (
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minik/internal/registry"
)

// aggregatedMediaType is the content type of aggregated discovery, which
// lets a client learn every group, version and resource in one request.
const aggregatedMediaType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// wantsAggregated tells whether the Accept header asks for aggregated
// discovery (v2) before anything else the server can send.
func wantsAggregated(r *http.Request) bool {
	for _, clause := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err != nil {
			continue
		}
		if mt == mediaJSON && params["as"] == "APIGroupDiscoveryList" && params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2" {
			return true
		}
		if params["as"] == "" {
			return false
		}
	}
	return false
}

// writeAggregated answers /api (legacy only) or /apis (every group) with
// an APIGroupDiscoveryList; /apis with the delegated versions.
func (s *Server) writeAggregated(w http.ResponseWriter, routes *routeTable, legacy bool, delegation *Delegation) {
	list := apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: metav1.TypeMeta{APIVersion: "apidiscovery.k8s.io/v2", Kind: "APIGroupDiscoveryList"}}
	var group *apidiscoveryv2.APIGroupDiscovery
	for _, gv := range routes.groupOrder {
		if (gv.Group == "") != legacy {
			continue
		}
		if group == nil || group.Name != gv.Group {
			list.Items = append(list.Items, apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: gv.Group}})
			group = &list.Items[len(list.Items)-1]
		}
		group.Versions = append(group.Versions, apidiscoveryv2.APIVersionDiscovery{
			Version: gv.Version, Resources: resourceDiscovery(routes.byGroupVersion[gv]), Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
		})
	}
	if !legacy {
		delegation.mergeAggregated(&list)
	}
	w.Header().Set("Content-Type", aggregatedMediaType)
	w.Header().Set("Vary", "Accept")
	_ = json.NewEncoder(w).Encode(&list)
}

func resourceDiscovery(resources []*registry.Resource) []apidiscoveryv2.APIResourceDiscovery {
	out := make([]apidiscoveryv2.APIResourceDiscovery, 0, len(resources))
	for _, res := range resources {
		gvk := res.GroupVersionKind()
		scope := apidiscoveryv2.ScopeCluster
		if res.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		d := apidiscoveryv2.APIResourceDiscovery{
			Resource: res.Name, SingularResource: res.SingularName, Scope: scope,
			ResponseKind: &metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
			Verbs:        verbsOf(res), ShortNames: res.ShortNames, Categories: res.Categories,
		}
		sub := func(name string, kind schema.GroupVersionKind, verbs []string) {
			d.Subresources = append(d.Subresources, apidiscoveryv2.APISubresourceDiscovery{
				Subresource: name, Verbs: verbs,
				ResponseKind: &metav1.GroupVersionKind{Group: kind.Group, Version: kind.Version, Kind: kind.Kind},
			})
		}
		if res.HasStatus {
			sub("status", gvk, statusVerbs)
		}
		if res.HasScale {
			sub("scale", scaleGV.WithKind("Scale"), statusVerbs)
		}
		for _, sr := range res.Subresources {
			gv := res.GroupVersion
			if !sr.GroupVersion.Empty() {
				gv = sr.GroupVersion
			}
			sub(sr.Name, gv.WithKind(sr.Kind), sr.Verbs)
		}
		out = append(out, d)
	}
	return out
}
