package api

import (
	"net/http"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestDelegationMergesIntoDiscovery(t *testing.T) {
	d := &Delegation{Versions: []DelegatedVersion{
		{GroupVersion: schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}, Resources: []metav1.APIResource{
			{Name: "flunders", SingularName: "flunder", Namespaced: true, Kind: "Flunder", Verbs: metav1.Verbs{"get"}},
			{Name: "flunders/status", Namespaced: true, Kind: "Flunder", Verbs: metav1.Verbs{"get"}},
		}},
		{GroupVersion: schema.GroupVersion{Group: "wardle.example.com", Version: "v1beta1"}, Handler: http.NotFoundHandler()},
		{GroupVersion: schema.GroupVersion{Group: "wardle.example.com", Version: "v1alpha1"}, Stale: true},
	}}
	groups := d.mergeGroups([]metav1.APIGroup{{Name: "metrics.k8s.io", Versions: []metav1.GroupVersionForDiscovery{{GroupVersion: "metrics.k8s.io/v1beta1", Version: "v1beta1"}}}}, "")
	if len(groups) != 2 || len(groups[0].Versions) != 1 || groups[1].Name != "wardle.example.com" || len(groups[1].Versions) != 2 || groups[1].PreferredVersion.Version != "v1beta1" {
		t.Errorf("groups = %+v", groups)
	}
	if only := d.mergeGroups(nil, "wardle.example.com"); len(only) != 1 {
		t.Errorf("the group's document = %+v", only)
	}

	list := &apidiscoveryv2.APIGroupDiscoveryList{Items: []apidiscoveryv2.APIGroupDiscovery{{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics.k8s.io"},
		Versions:   []apidiscoveryv2.APIVersionDiscovery{{Version: "v1beta1", Resources: []apidiscoveryv2.APIResourceDiscovery{{Resource: "nodes"}}}},
	}}}
	d.mergeAggregated(list)
	if len(list.Items) != 2 {
		t.Fatalf("groups = %d, want 2", len(list.Items))
	}
	m := list.Items[0].Versions
	if len(m) != 1 || len(m[0].Resources) != 1 || m[0].Resources[0].Resource != "flunders" || m[0].Resources[0].Scope != apidiscoveryv2.ScopeNamespace ||
		len(m[0].Resources[0].Subresources) != 1 || m[0].Resources[0].Subresources[0].Subresource != "status" ||
		m[0].Resources[0].ResponseKind.Group != "metrics.k8s.io" || m[0].Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent {
		t.Errorf("the delegated metrics.k8s.io/v1beta1 did not replace the local one: %+v", m)
	}
	w := list.Items[1]
	if w.Name != "wardle.example.com" || len(w.Versions) != 2 || w.Versions[1].Freshness != apidiscoveryv2.DiscoveryFreshnessStale || len(w.Versions[1].Resources) != 0 {
		t.Errorf("wardle.example.com = %+v, want v1beta1 then a stale v1alpha1", w)
	}
	if d.delegatedHandler("/apis/wardle.example.com/v1beta1/namespaces/a/flunders") == nil || d.delegatedHandler("/apis/wardle.example.com/v1beta1") == nil {
		t.Error("a delegated version's request was not delegated")
	}
	if d.delegatedHandler("/apis/wardle.example.com") != nil || d.delegatedHandler("/api/v1/pods") != nil {
		t.Error("a group's document or the core group was delegated")
	}
}
