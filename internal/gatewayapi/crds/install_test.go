package crds_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"minik/internal/cli"
	"minik/internal/gatewayapi/crds"
	"minik/internal/testserver"
)

// setAnnotation sets a CRD's bundle-version annotation and lets change
// alter its spec, as a user's own install would.
func setVersion(ctx context.Context, xc apiextensionsclient.Interface, name, version string, change func(*apiextensionsv1.CustomResourceDefinition)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := xc.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		crd.Annotations[crds.BundleVersionAnnotation] = version
		if change != nil {
			change(crd)
		}
		_, err = xc.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, crd, metav1.UpdateOptions{})
		return err
	})
}

// minikd installs the bundle at start; Install run again keeps what is
// current or newer, updates what is older, and the safe-upgrades policy
// it installed refuses a version before v1.5.0.
func TestMinikdInstallsTheBundleAndNeverDowngradesIt(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"crd"}})
	srv.WaitForGatewayAPI(t)
	ctx := t.Context()
	xc := apiextensionsclient.NewForConfigOrDie(srv.RESTConfig)
	clients := crds.Clients{APIExtensions: xc, Kubernetes: srv.Client(t)}
	b, err := crds.Load()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("every definition is installed at the bundle's version and established", func(t *testing.T) {
		for _, name := range b.CRDNames() {
			crd, err := xc.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if crd.Annotations[crds.BundleVersionAnnotation] != crds.BundleVersion {
				t.Errorf("%s: bundle version %q", name, crd.Annotations[crds.BundleVersionAnnotation])
			}
		}
		vap, err := clients.Kubernetes.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, b.Policy.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Held as kube holds it: the API server's defaults filled in.
		if vap.Spec.MatchConstraints.MatchPolicy == nil || *vap.Spec.MatchConstraints.MatchPolicy != "Equivalent" || len(vap.Spec.Validations) != 2 {
			t.Errorf("policy spec %+v", vap.Spec)
		}
		if _, err := clients.Kubernetes.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, b.Binding.Name, metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("installing again keeps everything", func(t *testing.T) {
		out, err := crds.Install(ctx, clients, b)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != len(b.CRDs)+2 {
			t.Fatalf("%d outcomes", len(out))
		}
		for _, o := range out {
			if o.Action != crds.Kept || o.Installed != crds.BundleVersion {
				t.Errorf("%+v; want kept at %s", o, crds.BundleVersion)
			}
		}
	})

	const classes = "gatewayclasses.gateway.networking.k8s.io"
	t.Run("a newer install is kept", func(t *testing.T) {
		if err := setVersion(ctx, xc, classes, "v9.0.0", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := crds.Install(ctx, clients, b); err != nil {
			t.Fatal(err)
		}
		crd, err := xc.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, classes, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if v := crd.Annotations[crds.BundleVersionAnnotation]; v != "v9.0.0" {
			t.Errorf("a newer install was replaced: version %s", v)
		}
	})

	t.Run("an older install is updated to the bundle", func(t *testing.T) {
		dropColumns := func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Versions[0].AdditionalPrinterColumns = nil
			crd.Annotations["example.com/keep"] = "mine"
		}
		if err := setVersion(ctx, xc, classes, "v1.6.0", dropColumns); err != nil {
			t.Fatal(err)
		}
		out, err := crds.Install(ctx, clients, b)
		if err != nil {
			t.Fatal(err)
		}
		updated := 0
		for _, o := range out {
			if o.Action == crds.Updated {
				updated++
				if o.Name != classes || o.Installed != "v1.6.0" {
					t.Errorf("updated %+v", o)
				}
			}
		}
		if updated != 1 {
			t.Errorf("%d objects updated; want 1", updated)
		}
		crd, err := xc.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, classes, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if crd.Annotations[crds.BundleVersionAnnotation] != crds.BundleVersion || crd.Annotations["example.com/keep"] != "mine" ||
			len(crd.Spec.Versions[0].AdditionalPrinterColumns) == 0 {
			t.Errorf("after the update: annotations %v, columns %v", crd.Annotations, crd.Spec.Versions[0].AdditionalPrinterColumns)
		}
	})

	t.Run("the safe-upgrades policy refuses a version before v1.5.0", func(t *testing.T) {
		err := setVersion(ctx, xc, classes, "v1.4.0", nil)
		if err == nil || !strings.Contains(err.Error(), "Installing CRDs with version before v1.5.0 is prohibited by default") {
			t.Errorf("err = %v; want the safe-upgrades policy's denial", err)
		}
	})
}

// run runs one minikctl command line and returns its stdout, stderr and
// exit code.
func run(t *testing.T, kubeconfig string, args ...string) (string, string, int) {
	t.Helper()
	streams, _, out, errOut := cli.TestStreams()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	code := cli.Run(ctx, append([]string{"--kubeconfig", kubeconfig}, args...), streams)
	return out.String(), errOut.String(), code
}

// Applying the official install over minikd's, as a user following the
// Gateway API's guide does, updates it without an error: client-side, and
// server-side for the definitions. (Server-side apply of the policy and
// its binding conflicts, as on kube, with whoever wrote them first: their
// matchConstraints and matchResources are atomic structs the API server
// defaults, so they need --force-conflicts.) get crds lists the
// definitions.
func TestApplyingTheOfficialCRDsOverMinikdsInstall(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"crd"}})
	srv.WaitForGatewayAPI(t)
	all, defs := t.TempDir(), t.TempDir()
	entries, err := crds.FS.ReadDir(crds.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := crds.FS.ReadFile(crds.Dir + "/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		dirs := []string{all}
		if strings.Contains(string(data), "kind: CustomResourceDefinition") {
			dirs = append(dirs, defs)
		}
		for _, dir := range dirs {
			if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	b, err := crds.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		policy bool
	}{
		{"client-side apply of the install", []string{"apply", "-f", all}, true},
		{"server-side apply of the definitions", []string{"apply", "--server-side", "-f", defs}, false},
		{"server-side apply of the install, forced", []string{"apply", "--server-side", "--force-conflicts", "-f", all}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, srv.KubeconfigPath, tc.args...)
			if code != 0 {
				t.Fatalf("minikctl %s: exit %d\n%s%s", strings.Join(tc.args, " "), code, out, errOut)
			}
			for _, name := range b.CRDNames() {
				if !strings.Contains(out, "customresourcedefinition.apiextensions.k8s.io/"+name+" ") {
					t.Errorf("no line for %s:\n%s", name, out)
				}
			}
			if tc.policy && !strings.Contains(out, "validatingadmissionpolicy.admissionregistration.k8s.io/"+b.Policy.Name+" ") {
				t.Errorf("no line for the policy:\n%s", out)
			}
		})
	}
	out, errOut, code := run(t, srv.KubeconfigPath, "get", "crds")
	if code != 0 {
		t.Fatalf("get crds: exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, "NAME") || !strings.Contains(out, "CREATED AT") {
		t.Errorf("get crds header:\n%s", out)
	}
	for _, name := range b.CRDNames() {
		if !strings.Contains(out, "\n"+name+" ") {
			t.Errorf("get crds does not list %s:\n%s", name, out)
		}
	}
}
