// Package crds holds the Gateway API's released standard-channel install
// (sigs.k8s.io/gateway-api, the version of BundleVersion) as data — its
// CustomResourceDefinitions and the safe-upgrades ValidatingAdmissionPolicy
// with its binding, the files of the module's config/crd/standard copied
// verbatim — and installs it into a cluster as k3s installs its own
// manifests at start (Install): what is absent is created, what is
// installed at an older bundle version is updated, and nothing is ever
// downgraded.
package crds

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// BundleVersionAnnotation is the annotation the Gateway API's install
// objects carry their release in.
const BundleVersionAnnotation = "gateway.networking.k8s.io/bundle-version"

// ChannelAnnotation is the annotation naming the release channel
// ("standard" or "experimental").
const ChannelAnnotation = "gateway.networking.k8s.io/channel"

// BundleVersion is the Gateway API release the embedded files are from;
// it is the module version of sigs.k8s.io/gateway-api in go.mod (a test
// checks both).
const BundleVersion = "v1.6.3"

// Channel is the embedded files' release channel.
const Channel = "standard"

// Dir is the directory of the embedded files in FS.
const Dir = "standard"

// FS holds the released files, as in the module's config/crd/standard.
//
//go:embed standard/*.yaml
var FS embed.FS

// Bundle is the decoded install.
type Bundle struct {
	// CRDs are the CustomResourceDefinitions, ordered by name.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// Policy and Binding are the safe-upgrades ValidatingAdmissionPolicy
	// and its binding.
	Policy  *admissionregistrationv1.ValidatingAdmissionPolicy
	Binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
}

// Load decodes the embedded files; each call returns new objects the
// caller may change.
func Load() (*Bundle, error) {
	entries, err := fs.ReadDir(FS, Dir)
	if err != nil {
		return nil, fmt.Errorf("gateway api bundle: %w", err)
	}
	b := &Bundle{}
	for _, e := range entries {
		name := path.Join(Dir, e.Name())
		data, err := FS.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("gateway api bundle: %w", err)
		}
		if err := b.add(name, data); err != nil {
			return nil, err
		}
	}
	if b.Policy == nil || b.Binding == nil || len(b.CRDs) == 0 {
		return nil, errors.New("gateway api bundle: incomplete (want CRDs, a ValidatingAdmissionPolicy and its binding)")
	}
	sort.Slice(b.CRDs, func(i, j int) bool { return b.CRDs[i].Name < b.CRDs[j].Name })
	return b, nil
}

// add decodes the documents of one file.
func (b *Bundle) add(name string, data []byte) error {
	r := utilyaml.NewYAMLReader(bufioReader(data))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("gateway api bundle %s: %w", name, err)
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return fmt.Errorf("gateway api bundle %s: %w", name, err)
		}
		var into interface{}
		switch tm.Kind {
		case "":
			continue // an empty document
		case "CustomResourceDefinition":
			crd := &apiextensionsv1.CustomResourceDefinition{}
			b.CRDs, into = append(b.CRDs, crd), crd
		case "ValidatingAdmissionPolicy":
			b.Policy = &admissionregistrationv1.ValidatingAdmissionPolicy{}
			into = b.Policy
		case "ValidatingAdmissionPolicyBinding":
			b.Binding = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
			into = b.Binding
		default:
			return fmt.Errorf("gateway api bundle %s: unexpected kind %q", name, tm.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, into); err != nil {
			return fmt.Errorf("gateway api bundle %s %s: %w", name, tm.Kind, err)
		}
	}
}

// CRDNames are the names of the bundle's definitions.
func (b *Bundle) CRDNames() []string {
	out := make([]string, len(b.CRDs))
	for i, c := range b.CRDs {
		out[i] = c.Name
	}
	return out
}

func bufioReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }
