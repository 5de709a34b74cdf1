package cli

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"
)

// fakeDiscovery serves the resources of the demo: namespaces, pods,
// services, config maps, deployments, replica sets and ingresses, with
// their short names and the "all" category.
func fakeDiscovery() *fakediscovery.FakeDiscovery {
	all := []string{"all"}
	return &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "namespaces", SingularName: "namespace", Kind: "Namespace", ShortNames: []string{"ns"}, Verbs: []string{"get", "list"}},
			{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", ShortNames: []string{"po"}, Categories: all, Verbs: []string{"get", "list"}},
			{Name: "services", SingularName: "service", Namespaced: true, Kind: "Service", ShortNames: []string{"svc"}, Categories: all, Verbs: []string{"get", "list"}},
			{Name: "configmaps", SingularName: "configmap", Namespaced: true, Kind: "ConfigMap", ShortNames: []string{"cm"}, Verbs: []string{"get", "list"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment", ShortNames: []string{"deploy"}, Categories: all, Verbs: []string{"get", "list"}},
			{Name: "replicasets", SingularName: "replicaset", Namespaced: true, Kind: "ReplicaSet", ShortNames: []string{"rs"}, Categories: all, Verbs: []string{"get", "list"}},
		}},
		{GroupVersion: "networking.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "ingresses", SingularName: "ingress", Namespaced: true, Kind: "Ingress", ShortNames: []string{"ing"}, Verbs: []string{"get", "list"}},
		}},
	}}}
}

// fakeMapper is the RESTMapper of fakeDiscovery, with short names.
func fakeMapper(t *testing.T) meta.RESTMapper {
	t.Helper()
	dc := fakeDiscovery()
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		t.Fatal(err)
	}
	return restmapper.NewShortcutExpander(restmapper.NewDiscoveryRESTMapper(groups), dc, nil)
}
