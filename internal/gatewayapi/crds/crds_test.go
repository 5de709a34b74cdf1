package crds

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// moduleDir is the directory and version of sigs.k8s.io/gateway-api as
// go.mod requires it; the test is skipped when the go command cannot
// say (no module cache).
func moduleDir(t *testing.T) (dir, version string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Skipf("go list -m sigs.k8s.io/gateway-api: %v", err)
	}
	fields := strings.Fields(string(out))
	if len(fields) != 2 {
		t.Skipf("sigs.k8s.io/gateway-api is not in the module cache: %q", out)
	}
	return fields[0], fields[1]
}

// The embedded files are the module's config/crd/standard, byte for
// byte, and BundleVersion is the module's version: upgrading the module
// without copying its CRDs fails here.
func TestEmbeddedFilesAreTheModulesStandardCRDs(t *testing.T) {
	dir, version := moduleDir(t)
	if version != BundleVersion {
		t.Errorf("go.mod has sigs.k8s.io/gateway-api %s, BundleVersion is %s: copy its config/crd/standard", version, BundleVersion)
	}
	src := filepath.Join(dir, "config", "crd", "standard")
	want, err := filepath.Glob(filepath.Join(src, "*.yaml"))
	if err != nil || len(want) == 0 {
		t.Fatalf("no YAML in %s: %v", src, err)
	}
	entries, err := FS.ReadDir(Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(want) {
		t.Errorf("%d files embedded, the module has %d", len(entries), len(want))
	}
	for _, path := range want {
		name := filepath.Base(path)
		mod, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ours, err := FS.ReadFile(Dir + "/" + name)
		if err != nil {
			t.Errorf("%s is not embedded: %v", name, err)
			continue
		}
		if !bytes.Equal(mod, ours) {
			t.Errorf("%s differs from the module's copy", name)
		}
	}
}

func TestLoadDecodesEveryObjectOfTheBundle(t *testing.T) {
	b, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	want := "backendtlspolicies gatewayclasses gateways grpcroutes httproutes listenersets referencegrants tcproutes tlsroutes udproutes"
	var got []string
	for _, crd := range b.CRDs {
		got = append(got, crd.Spec.Names.Plural)
		if crd.Spec.Group != "gateway.networking.k8s.io" || crd.Name != crd.Spec.Names.Plural+"."+crd.Spec.Group {
			t.Errorf("%s: group %s", crd.Name, crd.Spec.Group)
		}
	}
	if strings.Join(got, " ") != want {
		t.Errorf("CRDs %v; want %s", got, want)
	}
	if b.Policy.Name != "safe-upgrades.gateway.networking.k8s.io" || b.Binding.Spec.PolicyName != b.Policy.Name {
		t.Errorf("policy %s, binding of %s", b.Policy.Name, b.Binding.Spec.PolicyName)
	}
	objs := []map[string]string{b.Policy.Annotations, b.Binding.Annotations}
	for _, crd := range b.CRDs {
		objs = append(objs, crd.Annotations)
	}
	for _, a := range objs {
		if a[BundleVersionAnnotation] != BundleVersion || a[ChannelAnnotation] != Channel {
			t.Errorf("annotations %v; want bundle %s, channel %s", a, BundleVersion, Channel)
		}
	}
	// Each call decodes anew: a caller's change does not leak.
	b.CRDs[0].Name = "changed"
	if again, _ := Load(); again.CRDs[0].Name == "changed" {
		t.Error("Load returned a shared object")
	}
}

func TestShouldUpdateOnlyAnOlderStandardInstall(t *testing.T) {
	bundle := map[string]string{BundleVersionAnnotation: "v1.6.3", ChannelAnnotation: "standard"}
	for _, tc := range []struct {
		name      string
		installed map[string]string
		want      bool
	}{
		{"an older patch release is updated", map[string]string{BundleVersionAnnotation: "v1.6.2", ChannelAnnotation: "standard"}, true},
		{"an older minor release is updated", map[string]string{BundleVersionAnnotation: "v1.5.1", ChannelAnnotation: "standard"}, true},
		{"a release candidate of the same version is updated", map[string]string{BundleVersionAnnotation: "v1.6.3-rc.1", ChannelAnnotation: "standard"}, true},
		{"an older release without a channel is updated", map[string]string{BundleVersionAnnotation: "v1.2.0"}, true},
		{"the same version is kept", map[string]string{BundleVersionAnnotation: "v1.6.3", ChannelAnnotation: "standard"}, false},
		{"a newer release is never downgraded", map[string]string{BundleVersionAnnotation: "v1.7.0", ChannelAnnotation: "standard"}, false},
		{"an experimental install is kept", map[string]string{BundleVersionAnnotation: "v1.5.0", ChannelAnnotation: "experimental"}, false},
		{"an install without a version is kept", map[string]string{}, false},
		{"an unreadable version is kept", map[string]string{BundleVersionAnnotation: "latest"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := shouldUpdate(tc.installed, bundle); got != tc.want {
				t.Errorf("shouldUpdate(%v) = %v; want %v", tc.installed, got, tc.want)
			}
		})
	}
}
