package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Delegated group versions are served by another server: the server
// hands every request under /apis/<group>/<version> (its discovery
// document included) to the version's handler once the request is
// authenticated, authorized and counted, as kube-apiserver's aggregator
// proxies an APIService's group version to its extension API server (see
// internal/aggregator). A delegated version is listed in /apis,
// /apis/<group> and aggregated discovery with the resources its server
// last reported; one it could not be asked is listed Stale. A delegated
// version also served locally (metrics.k8s.io) is the delegate's while
// delegated.

// DelegatedVersion is one group version another server serves.
type DelegatedVersion struct {
	// GroupVersion is the delegated group version (not the legacy core).
	GroupVersion schema.GroupVersion
	// Handler serves every request under /apis/<group>/<version>.
	Handler http.Handler
	// Resources are the version's resources as its server last listed
	// them (its /apis/<group>/<version>); none while unknown.
	Resources []metav1.APIResource
	// Stale tells that the last attempt to read them failed: aggregated
	// discovery marks the version Stale (and lists no resources), as
	// kube's aggregator does.
	Stale bool
}

// Delegation is the group versions served elsewhere, in discovery
// order (after the server's own groups).
type Delegation struct {
	Versions []DelegatedVersion
}

// Delegator tells the current Delegation; it may change at any time.
type Delegator interface {
	Delegation() *Delegation
}

// delegation returns the current delegation, nil without a Delegator.
func (s *Server) delegation() *Delegation {
	if s.cfg.Delegator == nil {
		return nil
	}
	return s.cfg.Delegator.Delegation()
}

// delegatedHandler returns the handler of a request under a delegated
// group version, or nil.
func (d *Delegation) delegatedHandler(path string) http.Handler {
	if d == nil || !strings.HasPrefix(path, "/apis/") {
		return nil
	}
	parts := splitPath(path)
	if len(parts) < 3 {
		return nil
	}
	for _, v := range d.Versions {
		if v.GroupVersion.Group == parts[1] && v.GroupVersion.Version == parts[2] {
			return v.Handler
		}
	}
	return nil
}

// ServedGroupVersions returns the group versions the server serves
// itself (built-in, create-only and local resources), in discovery
// order; custom resources' are not among them.
func (s *Server) ServedGroupVersions() []schema.GroupVersion {
	return append([]schema.GroupVersion(nil), s.builtin.groupOrder...)
}

// mergeGroups adds the delegated versions to /apis's group list: a
// version of a listed group joins it, others make new groups in order.
func (d *Delegation) mergeGroups(groups []metav1.APIGroup, only string) []metav1.APIGroup {
	if d == nil {
		return groups
	}
	for _, v := range d.Versions {
		gv := v.GroupVersion
		if only != "" && gv.Group != only {
			continue
		}
		entry := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
		i := 0
		for i < len(groups) && groups[i].Name != gv.Group {
			i++
		}
		if i == len(groups) {
			groups = append(groups, metav1.APIGroup{Name: gv.Group, PreferredVersion: entry})
		}
		g := &groups[i]
		seen := false
		for _, have := range g.Versions {
			seen = seen || have.Version == gv.Version
		}
		if !seen {
			g.Versions = append(g.Versions, entry)
		}
	}
	return groups
}

// mergeAggregated puts the delegated versions in aggregated discovery,
// in place of a local version of the same name.
func (d *Delegation) mergeAggregated(list *apidiscoveryv2.APIGroupDiscoveryList) {
	if d == nil {
		return
	}
	for _, v := range d.Versions {
		gv := v.GroupVersion
		entry := apidiscoveryv2.APIVersionDiscovery{Version: gv.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
		if v.Stale {
			entry.Freshness = apidiscoveryv2.DiscoveryFreshnessStale
		} else {
			entry.Resources = discoveryOfResourceList(gv, v.Resources)
		}
		i := 0
		for i < len(list.Items) && list.Items[i].Name != gv.Group {
			i++
		}
		if i == len(list.Items) {
			list.Items = append(list.Items, apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: gv.Group}})
		}
		g := &list.Items[i]
		replaced := false
		for j := range g.Versions {
			if g.Versions[j].Version == gv.Version {
				g.Versions[j], replaced = entry, true
			}
		}
		if !replaced {
			g.Versions = append(g.Versions, entry)
		}
	}
}

// discoveryOfResourceList converts a legacy resource list into aggregated
// discovery's resources, as kube's ConvertGroupVersionIntoToDiscovery
// does: "<resource>/<sub>" entries become subresources of their
// resource, and kinds without a group or version are the list's.
func discoveryOfResourceList(gv schema.GroupVersion, resources []metav1.APIResource) []apidiscoveryv2.APIResourceDiscovery {
	out := []apidiscoveryv2.APIResourceDiscovery{}
	index := map[string]int{}
	kindOf := func(r metav1.APIResource) *metav1.GroupVersionKind {
		k := &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
		if k.Group == "" && k.Version == "" {
			k.Group, k.Version = gv.Group, gv.Version
		}
		return k
	}
	for _, r := range resources {
		if strings.Contains(r.Name, "/") {
			continue
		}
		scope := apidiscoveryv2.ScopeCluster
		if r.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		index[r.Name] = len(out)
		out = append(out, apidiscoveryv2.APIResourceDiscovery{
			Resource: r.Name, SingularResource: r.SingularName, Scope: scope, ResponseKind: kindOf(r),
			Verbs: r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories,
		})
	}
	for _, r := range resources {
		parent, sub, ok := strings.Cut(r.Name, "/")
		if !ok {
			continue
		}
		i, ok := index[parent]
		if !ok {
			scope := apidiscoveryv2.ScopeCluster
			if r.Namespaced {
				scope = apidiscoveryv2.ScopeNamespace
			}
			index[parent] = len(out)
			i = len(out)
			out = append(out, apidiscoveryv2.APIResourceDiscovery{Resource: parent, Scope: scope})
		}
		out[i].Subresources = append(out[i].Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource: sub, ResponseKind: kindOf(r), Verbs: r.Verbs,
		})
	}
	return out
}

// openAPIV3Prefix is where OpenAPI v3 is served: its index, and a
// document per group version under apis/<group>/<version>.
const openAPIV3Prefix = "/openapi/v3"

// withDelegatedOpenAPI serves the OpenAPI v3 of delegated group versions
// as kube's aggregator does: /openapi/v3/apis/<group>/<version> is the
// extension's own (proxied), and the index lists it; everything else is
// next's.
func (s *Server) withDelegatedOpenAPI(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := s.delegation()
		if d == nil || len(d.Versions) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		p := r.URL.Path
		if rest, ok := strings.CutPrefix(p, openAPIV3Prefix+"/apis/"); ok {
			if h := d.delegatedHandler("/apis/" + rest); h != nil && len(splitPath(rest)) == 2 {
				h.ServeHTTP(w, r)
				return
			}
		}
		if (p != openAPIV3Prefix && p != openAPIV3Prefix+"/") || r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		inner := r.Clone(r.Context())
		inner.Header.Del("If-None-Match")
		inner.Header.Del("If-Modified-Since")
		rec := &bufferedResponse{header: http.Header{}, code: http.StatusOK}
		next.ServeHTTP(rec, inner)
		var idx struct {
			Paths map[string]map[string]string `json:"paths"`
		}
		if rec.code != http.StatusOK || json.Unmarshal(rec.body.Bytes(), &idx) != nil || idx.Paths == nil {
			copyResponse(w, rec)
			return
		}
		for _, v := range d.Versions {
			key := "apis/" + v.GroupVersion.Group + "/" + v.GroupVersion.Version
			idx.Paths[key] = map[string]string{"serverRelativeURL": openAPIV3Prefix + "/" + key}
		}
		body, err := json.Marshal(idx)
		if err != nil {
			copyResponse(w, rec)
			return
		}
		sum := sha256.Sum256(body)
		etag := strconv.Quote(strings.ToUpper(hex.EncodeToString(sum[:])))
		w.Header().Set("Etag", etag)
		w.Header().Set("Content-Type", mediaJSON)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = w.Write(body)
	})
}

// bufferedResponse keeps a response in memory.
type bufferedResponse struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header         { return b.header }
func (b *bufferedResponse) WriteHeader(code int)        { b.code = code }
func (b *bufferedResponse) Write(p []byte) (int, error) { return b.body.Write(p) }

func copyResponse(w http.ResponseWriter, b *bufferedResponse) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	w.WriteHeader(b.code)
	_, _ = w.Write(b.body.Bytes())
}
