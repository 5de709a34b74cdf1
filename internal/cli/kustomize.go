package cli

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kustomize/v5/commands/build"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// NewCmdKustomize returns the kustomize command: kustomize's own build
// command (sigs.k8s.io/kustomize), as kubectl embeds it.
func NewCmdKustomize(streams IOStreams) *cobra.Command {
	h := build.MakeHelp("minikctl", "kustomize")
	return build.NewCmdBuild(filesys.MakeFsOnDisk(), &build.Help{Use: h.Use, Short: h.Short, Long: h.Long, Example: h.Example}, streams.Out)
}

// kustomizeManifests builds the kustomization in dir as -k does in
// kubectl (cli-runtime's KustomizeVisitor: default options, legacy
// order) and decodes its objects, each with dir as its source.
func kustomizeManifests(dir string) ([]ManifestObject, []error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionLegacy
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, []error{err}
	}
	yml, err := m.AsYaml()
	if err != nil {
		return nil, []error{fmt.Errorf("kustomization %s: %w", dir, err)}
	}
	return decodeManifest(bytes.NewReader(yml), dir)
}
