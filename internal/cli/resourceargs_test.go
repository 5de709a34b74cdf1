package cli

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/client-go/restmapper"
)

func TestParseResourceArgs(t *testing.T) {
	expand := categoryAliases(restmapper.NewDiscoveryCategoryExpander(fakeDiscovery()))
	tests := []struct {
		args    []string
		want    string
		wantErr string
	}{
		{args: []string{"deploy"}, want: "types=[deploy] names=[] tuples=[]"},
		{args: []string{"deployment,service"}, want: "types=[deployment service] names=[] tuples=[]"},
		{args: []string{"deploy,deploy,svc"}, want: "types=[deploy svc] names=[] tuples=[]"},
		{args: []string{"deploy", "web", "api"}, want: "types=[deploy] names=[web api] tuples=[]"},
		{args: []string{"deploy,svc", "web"}, want: "types=[] names=[] tuples=[{deploy web} {svc web}]"},
		{args: []string{"deploy/web", "svc/web"}, want: "types=[] names=[] tuples=[{deploy web} {svc web}]"},
		{args: []string{"all"}, want: "types=[pods services deployments.apps replicasets.apps] names=[] tuples=[]"},
		{args: []string{"all,cm"}, want: "types=[pods services deployments.apps replicasets.apps cm] names=[] tuples=[]"},
		{args: []string{"deploy", "svc/web"}, wantErr: "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'minikctl get resource/<resource_name>' instead of 'minikctl get resource resource/<resource_name>'"},
		{args: []string{"deploy/web/x"}, wantErr: "arguments in resource/name form may not have more than one slash"},
		{args: []string{"deploy,svc/web"}, wantErr: "arguments in resource/name form must have a single resource and name"},
		{args: []string{"deploy/"}, wantErr: "arguments in resource/name form must have a single resource and name"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r, err := parseResourceArgs(tt.args, "minikctl", expand)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("types=%v names=%v tuples=%v", r.Types, r.Names, r.Tuples)
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestMappingFor(t *testing.T) {
	mapper := fakeMapper(t)
	tests := map[string]string{
		"deploy":              "apps/v1, Resource=deployments",
		"deployments":         "apps/v1, Resource=deployments",
		"deployment":          "apps/v1, Resource=deployments",
		"Deployment":          "apps/v1, Resource=deployments",
		"deployments.apps":    "apps/v1, Resource=deployments",
		"deployments.v1.apps": "apps/v1, Resource=deployments",
		"po":                  "/v1, Resource=pods",
		"svc":                 "/v1, Resource=services",
		"ns":                  "/v1, Resource=namespaces",
		"ing":                 "networking.k8s.io/v1, Resource=ingresses",
		"rs":                  "apps/v1, Resource=replicasets",
		"cm":                  "/v1, Resource=configmaps",
	}
	for arg, want := range tests {
		t.Run(arg, func(t *testing.T) {
			m, err := mappingFor(mapper, arg)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Resource.String(); got != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
	if _, err := mappingFor(mapper, "widgets"); err == nil || err.Error() != `the server doesn't have a resource type "widgets"` {
		t.Errorf("unknown type: %v", err)
	}
}
