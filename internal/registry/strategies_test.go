package registry

import "testing"

func TestEveryResourceHasAStrategy(t *testing.T) {
	// want lists, per resource, whether kube-apiserver maintains
	// metadata.generation and whether it keeps a status sent on create.
	want := map[string]struct{ generation, keepStatus bool }{
		"v1/namespaces":                                    {false, false},
		"v1/pods":                                          {true, false},
		"v1/services":                                      {false, false},
		"v1/configmaps":                                    {false, false},
		"v1/secrets":                                       {false, false},
		"v1/serviceaccounts":                               {false, false},
		"v1/events":                                        {false, true},
		"v1/nodes":                                         {false, true},
		"v1/resourcequotas":                                {false, false},
		"apps/v1/deployments":                              {true, false},
		"apps/v1/replicasets":                              {true, false},
		"apps/v1/statefulsets":                             {true, false},
		"apps/v1/daemonsets":                               {true, false},
		"apps/v1/controllerrevisions":                      {false, false},
		"batch/v1/jobs":                                    {true, false},
		"batch/v1/cronjobs":                                {true, false},
		"discovery.k8s.io/v1/endpointslices":               {true, false},
		"networking.k8s.io/v1/ingresses":                   {true, false},
		"networking.k8s.io/v1/ingressclasses":              {true, false},
		"policy/v1/poddisruptionbudgets":                   {true, false},
		"rbac.authorization.k8s.io/v1/roles":               {false, false},
		"rbac.authorization.k8s.io/v1/rolebindings":        {false, false},
		"rbac.authorization.k8s.io/v1/clusterroles":        {false, false},
		"rbac.authorization.k8s.io/v1/clusterrolebindings": {false, false},
		"coordination.k8s.io/v1/leases":                    {false, false},
		"events.k8s.io/v1/events":                          {false, true},
		"scheduling.k8s.io/v1/priorityclasses":             {false, false},
		"v1/limitranges":                                   {false, false},
		"v1/persistentvolumes":                             {false, false},
		"v1/persistentvolumeclaims":                        {false, false},
		"storage.k8s.io/v1/storageclasses":                 {false, false},
		"admissionregistration.k8s.io/v1/mutatingwebhookconfigurations":     {true, false},
		"admissionregistration.k8s.io/v1/validatingwebhookconfigurations":   {true, false},
		"admissionregistration.k8s.io/v1/validatingadmissionpolicies":       {true, false},
		"admissionregistration.k8s.io/v1/validatingadmissionpolicybindings": {true, false},
		"apiextensions.k8s.io/v1/customresourcedefinitions":                 {true, false},
		"gateway.networking.k8s.io/v1/gatewayclasses":                       {true, false},
		"gateway.networking.k8s.io/v1/gateways":                             {true, false},
		"gateway.networking.k8s.io/v1/httproutes":                           {true, false},
		"gateway.networking.k8s.io/v1/referencegrants":                      {true, false},
	}
	for _, r := range All() {
		key := r.GroupVersion.String() + "/" + r.Name
		t.Run(key+" validates and reports kube's generation and status handling", func(t *testing.T) {
			w, ok := want[key]
			if !ok {
				t.Fatalf("no expectation for %s", key)
			}
			s := r.Strategy
			if s.Validate == nil || s.ValidateUpdate == nil {
				t.Error("strategy does not validate")
			}
			if got := !s.NoGeneration; got != w.generation {
				t.Errorf("generation maintained = %v, want %v", got, w.generation)
			}
			if s.KeepStatusOnCreate != w.keepStatus {
				t.Errorf("KeepStatusOnCreate = %v, want %v", s.KeepStatusOnCreate, w.keepStatus)
			}
		})
	}
}
