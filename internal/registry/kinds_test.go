package registry

import (
	"context"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

func TestAllListsTheKindsInDiscoveryOrder(t *testing.T) {
	want := "v1/namespaces v1/pods v1/services v1/configmaps v1/secrets v1/serviceaccounts v1/events v1/nodes " +
		"v1/resourcequotas v1/limitranges v1/persistentvolumes v1/persistentvolumeclaims v1/endpoints v1/podtemplates v1/replicationcontrollers " +
		"apiregistration.k8s.io/v1/apiservices " +
		"apps/v1/deployments apps/v1/replicasets apps/v1/statefulsets apps/v1/daemonsets apps/v1/controllerrevisions " +
		"autoscaling/v2/horizontalpodautoscalers autoscaling/v1/horizontalpodautoscalers " +
		"batch/v1/cronjobs batch/v1/jobs " +
		"certificates.k8s.io/v1/certificatesigningrequests certificates.k8s.io/v1/clustertrustbundles certificates.k8s.io/v1/podcertificaterequests " +
		"discovery.k8s.io/v1/endpointslices " +
		"networking.k8s.io/v1/ingressclasses networking.k8s.io/v1/ingresses networking.k8s.io/v1/ipaddresses networking.k8s.io/v1/networkpolicies networking.k8s.io/v1/servicecidrs policy/v1/poddisruptionbudgets " +
		"rbac.authorization.k8s.io/v1/roles rbac.authorization.k8s.io/v1/rolebindings rbac.authorization.k8s.io/v1/clusterroles rbac.authorization.k8s.io/v1/clusterrolebindings " +
		"coordination.k8s.io/v1/leases node.k8s.io/v1/runtimeclasses " +
		"resource.k8s.io/v1/deviceclasses resource.k8s.io/v1/devicetaintrules resource.k8s.io/v1/resourceclaims resource.k8s.io/v1/resourceclaimtemplates resource.k8s.io/v1/resourceslices events.k8s.io/v1/events scheduling.k8s.io/v1/priorityclasses " +
		"storage.k8s.io/v1/csidrivers storage.k8s.io/v1/csinodes storage.k8s.io/v1/csistoragecapacities storage.k8s.io/v1/storageclasses " +
		"storage.k8s.io/v1/volumeattachments storage.k8s.io/v1/volumeattributesclasses " +
		"admissionregistration.k8s.io/v1/mutatingwebhookconfigurations admissionregistration.k8s.io/v1/validatingwebhookconfigurations " +
		"admissionregistration.k8s.io/v1/validatingadmissionpolicies admissionregistration.k8s.io/v1/validatingadmissionpolicybindings " +
		"admissionregistration.k8s.io/v1/mutatingadmissionpolicies admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings " +
		"apiextensions.k8s.io/v1/customresourcedefinitions " +
		"flowcontrol.apiserver.k8s.io/v1/flowschemas flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations " +
		"storagemigration.k8s.io/v1/storageversionmigrations"
	var got []string
	for _, r := range All() {
		got = append(got, r.GroupVersion.String()+"/"+r.Name)
	}
	if strings.Join(got, " ") != want {
		t.Errorf("All() =\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
}

func TestAllAndCreateOnlyReturnCopiesCallersMayModify(t *testing.T) {
	for _, list := range []func() []*Resource{All, CreateOnly} {
		first := list()
		for _, r := range first {
			r.Name += "-changed"
			r.Namespaced = !r.Namespaced
			if len(r.ShortNames) > 0 {
				r.ShortNames[0] = "changed"
			}
			if len(r.Subresources) > 0 {
				r.Subresources[0].Name = "changed"
				if u := r.Subresources[0].Update; u != nil {
					u.Narrow = !u.Narrow
				}
			}
			if r.Strategy.Table != nil {
				r.Strategy.Table.Columns[0].Name = "Changed"
			}
		}
		for _, r := range list() {
			if strings.Contains(r.Name, "changed") || slices.Contains(r.ShortNames, "changed") || r.Subresource("changed") != nil {
				t.Errorf("%s: a change to an earlier copy shows", r.Name)
			}
			if r.Strategy.Table != nil && r.Strategy.Table.Columns[0].Name == "Changed" {
				t.Errorf("%s: a change to an earlier copy's table shows", r.Name)
			}
		}
	}
	for _, r := range All() {
		if r.Name == "pods" && !r.Namespaced {
			t.Error("pods lost its scope through an earlier copy")
		}
		if r.Name == "namespaces" && !r.Subresource("finalize").Update.Narrow {
			t.Error("namespaces/finalize lost its narrowness through an earlier copy")
		}
	}
}

// TestEveryKindsValidationAgreesWithItsScope guards the one scope that a
// kind's own validation repeats: its metadata checks (validateObjectMeta,
// as kube's type validation calls ValidateObjectMeta) take the scope as a
// flag, which must be the descriptor's Namespaced. An object placed as
// its descriptor says must draw no namespace error.
func TestEveryKindsValidationAgreesWithItsScope(t *testing.T) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, apiregistrationv1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range All() {
		t.Run(r.GroupVersion.String()+"/"+r.Name, func(t *testing.T) {
			obj, err := s.New(r.GroupVersionKind())
			if err != nil {
				t.Fatal(err)
			}
			m, err := meta.Accessor(obj)
			if err != nil {
				t.Fatal(err)
			}
			m.SetName("x")
			if r.Namespaced {
				m.SetNamespace("default")
			}
			for _, e := range r.Strategy.Validate(context.Background(), obj) {
				if e.Field == "metadata.namespace" {
					t.Errorf("Namespaced = %v, but validation says %v", r.Namespaced, e)
				}
			}
		})
	}
}
