package rbac_test

import (
	"context"
	"testing"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"minik/internal/auth"
	"minik/internal/auth/rbac"
)

// BenchmarkAuthorize is the cost of one decision of the chain minikd runs
// (system:masters, nodes, RBAC) over the bootstrap policy and the golden
// fixture, from listers (the golden fixture has no informers, so it lists
// and sorts the bindings on every decision) and from informer-backed
// snapshots (as minikd runs).
func BenchmarkAuthorize(b *testing.B) {
	f := newFixture(b)
	cases := []struct {
		name  string
		attrs auth.Attributes
	}{
		{"allowed-by-rolebinding", res(viewer, "get", "", "pods", "demo", "web")},
		{"denied", res(viewer, "create", "", "pods", "demo", "")},
		{"allowed-by-clusterrolebinding", res(deploymentCtrl, "create", "apps", "replicasets", "demo", "")},
		{"system-masters", res(admin, "delete", "", "nodes", "", "n1")},
	}
	for _, c := range cases {
		b.Run("listers/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_, _, _ = f.chain.Authorize(context.Background(), c.attrs)
			}
		})
	}
	// The same objects behind informers.
	cs := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(cs, 0)
	a := rbac.New(factory)
	chain := auth.Union{auth.MastersAuthorizer{}, a}
	stop := make(chan struct{})
	defer close(stop)
	r := factory.Rbac().V1()
	for _, o := range f.roles.List() {
		_ = r.Roles().Informer().GetIndexer().Add(o)
	}
	for _, o := range f.roleBindings.List() {
		_ = r.RoleBindings().Informer().GetIndexer().Add(o)
	}
	for _, o := range f.clusterRoles.List() {
		_ = r.ClusterRoles().Informer().GetIndexer().Add(o)
	}
	for _, o := range f.clusterRoleBindings.List() {
		_ = r.ClusterRoleBindings().Informer().GetIndexer().Add(o)
	}
	for _, c := range cases {
		b.Run("snapshot/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_, _, _ = chain.Authorize(context.Background(), c.attrs)
			}
		})
	}
}
