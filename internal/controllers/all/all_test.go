package all_test

import (
	"slices"
	"testing"

	"minik/internal/auth/rbac"
	"minik/internal/controllers/all"
)

// TestEveryControllerHasABootstrapRole checks that each controller has a
// client name and that the bootstrap policy binds a controller role to the
// ServiceAccount of that name: run with service account credentials, a
// controller without one would be refused everything.
func TestEveryControllerHasABootstrapRole(t *testing.T) {
	names := all.ClientNames()
	bound := rbac.ControllerServiceAccounts()
	for name := range all.Controllers() {
		client, ok := names[name]
		if !ok {
			t.Errorf("controller %s has no client name", name)
			continue
		}
		if !slices.Contains(bound, client) {
			t.Errorf("controller %s runs as kube-system/%s, which no bootstrap controller role is bound to", name, client)
		}
	}
	for name := range names {
		if _, ok := all.Controllers()[name]; !ok {
			t.Errorf("client name of unknown controller %s", name)
		}
	}
}
