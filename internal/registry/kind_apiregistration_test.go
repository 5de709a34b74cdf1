package registry

import (
	"testing"

	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/yaml"
)

// decodeAPIService reads an APIService manifest (the kind is not in
// client-go's scheme, which decode uses).
func decodeAPIService(t *testing.T, manifest string) *apiregistrationv1.APIService {
	t.Helper()
	as := &apiregistrationv1.APIService{}
	if err := yaml.UnmarshalStrict([]byte("apiVersion: apiregistration.k8s.io/v1\nkind: APIService\n"+manifest), as); err != nil {
		t.Fatalf("decode manifest: %v", err)
	}
	return as
}

// TestAPIServiceValidation checks kube-aggregator's validation messages.
func TestAPIServiceValidation(t *testing.T) {
	cases := []struct{ name, manifest, want string }{
		{"a local APIService is valid", "metadata: {name: v1.example.com}\nspec: {group: example.com, version: v1, groupPriorityMinimum: 1000, versionPriority: 15}", ""},
		{"the legacy v1 has an empty group", "metadata: {name: v1.}\nspec: {version: v1, groupPriorityMinimum: 18000, versionPriority: 1}", ""},
		{"the name is version.group", "metadata: {name: example}\nspec: {group: example.com, version: v1, groupPriorityMinimum: 1000, versionPriority: 15}",
			"metadata.name: Invalid value: \"example\": must be `spec.version+\".\"+spec.group`: \"v1.example.com\""},
		{"only v1 may have an empty group", "metadata: {name: v2.}\nspec: {version: v2, groupPriorityMinimum: 1000, versionPriority: 15}",
			"spec.group: Required value: only v1 may have an empty group and it better be legacy kube"},
		{"priorities are in range", "metadata: {name: v1.example.com}\nspec: {group: example.com, version: v1, groupPriorityMinimum: 20001, versionPriority: 0}",
			"spec.groupPriorityMinimum: Invalid value: 20001: must be positive and less than 20000\n" +
				"spec.versionPriority: Invalid value: 0: must be positive and less than 1000"},
		{"the version is a DNS-1035 label", "metadata: {name: 1v.example.com}\nspec: {group: example.com, version: 1v, groupPriorityMinimum: 1000, versionPriority: 15}",
			"spec.version: Invalid value: \"1v\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"},
		{"a local APIService has no caBundle nor insecureSkipTLSVerify", "metadata: {name: v1.example.com}\nspec: {group: example.com, version: v1, groupPriorityMinimum: 1000, versionPriority: 15, caBundle: Zm9v, insecureSkipTLSVerify: true}",
			"spec.caBundle: Invalid value: \"3 bytes\": local APIServices may not have a caBundle\n" +
				"spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify"},
		{"a service reference names its service and a valid port", "metadata: {name: v1.example.com}\nspec: {group: example.com, version: v1, groupPriorityMinimum: 1000, versionPriority: 15, service: {port: 70000}}",
			"spec.service.namespace: Required value\nspec.service.name: Required value\n" +
				"spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive"},
		{"caBundle and insecureSkipTLSVerify exclude each other", "metadata: {name: v1.example.com}\nspec: {group: example.com, version: v1, groupPriorityMinimum: 1000, versionPriority: 15, caBundle: Zm9v, insecureSkipTLSVerify: true, service: {namespace: ns, name: api}}",
			"spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := messages(create(decodeAPIService(t, tc.manifest))); got != tc.want {
				t.Errorf("errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	t.Run("a service's port defaults to 443 and a local APIService is created Available", func(t *testing.T) {
		as := decodeAPIService(t, "metadata: {name: v1.example.com}\nspec: {group: example.com, version: v1, groupPriorityMinimum: 1000, versionPriority: 15, service: {namespace: ns, name: api}}")
		if errs := create(as); len(errs) > 0 {
			t.Fatal(errs)
		}
		if p := as.Spec.Service.Port; p == nil || *p != 443 {
			t.Errorf("port = %v, want 443", p)
		}
		if len(as.Status.Conditions) != 0 {
			t.Errorf("a service's APIService got conditions on create: %v", as.Status.Conditions)
		}
		local := decodeAPIService(t, "metadata: {name: v1.example.com}\nspec: {group: example.com, version: v1, groupPriorityMinimum: 1000, versionPriority: 15}")
		if errs := create(local); len(errs) > 0 {
			t.Fatal(errs)
		}
		if c := local.Status.Conditions; len(c) != 1 || c[0].Type != apiregistrationv1.Available || c[0].Status != apiregistrationv1.ConditionTrue || c[0].Reason != "Local" || c[0].Message != "Local APIServices are always available" {
			t.Errorf("conditions = %+v, want Available True (Local)", c)
		}
	})
	t.Run("a status condition is True, False or Unknown", func(t *testing.T) {
		old := decodeAPIService(t, "metadata: {name: v1.example.com, resourceVersion: \"1\"}\nspec: {group: example.com, version: v1, groupPriorityMinimum: 1000, versionPriority: 15}")
		create(old)
		as := old.DeepCopy()
		as.Status.Conditions[0].Status = "Maybe"
		if got, want := messages(strategyOf(as).ValidateUpdate(t.Context(), as, old)), `status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown"`; got != want {
			t.Errorf("errors:\n got %s\nwant %s", got, want)
		}
	})
}
