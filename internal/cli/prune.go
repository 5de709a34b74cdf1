package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/kubectl/pkg/util/prune"
)

// PruneOptions are apply's --prune flags: after applying, objects of the
// allowlisted kinds that carry the last-applied annotation, match the
// selector, live in a namespace the manifests touched (or are
// cluster-scoped) and were not applied now are deleted, as kubectl's
// label-based prune does.
type PruneOptions struct {
	Prune     bool
	All       bool
	Selector  string
	Allowlist []string
}

func (p *PruneOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&p.Prune, "prune", false, "Automatically delete resource objects, that do not appear in the configs and are created by either apply or create --save-config. Should be used with either -l or --all.")
	cmd.Flags().BoolVar(&p.All, "all", false, "Select all resources in the namespace of the specified resource types.")
	cmd.Flags().StringVarP(&p.Selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2,key3 in (value3)). Matching objects must satisfy all of the specified label constraints.")
	cmd.Flags().StringArrayVar(&p.Allowlist, "prune-allowlist", nil, "Overwrite the default allowlist with <group/version/kind> for --prune")
}

// validate is kubectl's check of the prune flags.
func (p *PruneOptions) validate(serverSide bool) error {
	if p.All && p.Selector != "" {
		return errors.New("cannot set --all and --selector at the same time")
	}
	if !p.Prune {
		return nil
	}
	if !p.All && p.Selector == "" {
		return errors.New("all resources selected for prune without explicitly passing --all. To prune all resources, pass the --all flag. If you did not mean to prune all resources, specify a label selector")
	}
	if serverSide {
		return errors.New("--prune is in alpha and doesn't currently work on objects created by server-side apply")
	}
	return nil
}

// selectInfos keeps the manifests' objects the selector matches (apply
// -l applies only those, as kubectl's).
func (p *PruneOptions) selectInfos(infos []*Info) ([]*Info, error) {
	if p.Selector == "" {
		return infos, nil
	}
	sel, err := labels.Parse(p.Selector)
	if err != nil {
		return nil, fmt.Errorf("the provided selector %q is not valid: %v", p.Selector, err)
	}
	var out []*Info
	for _, info := range infos {
		if sel.Matches(labels.Set(accessorOf(info.Object).GetLabels())) {
			out = append(out, info)
		}
	}
	return out, nil
}

// pruneAll deletes what the applied infos no longer name, printing
// "kind/name pruned".
func (o *ApplyOptions) pruneAll(ctx context.Context, applied []*Info) error {
	resources, err := prune.ParseResources(o.Mapper, o.Prune.Allowlist)
	if err != nil {
		return err
	}
	namespaced, clusterScoped, err := prune.GetRESTMappings(o.Mapper, resources, o.EnforceNamespace)
	if err != nil {
		return fmt.Errorf("error retrieving RESTMappings to prune: %v", err)
	}
	// Applied objects are known by uid (the server's answer) and by
	// resource and name (a client dry run has no answer).
	visited := sets.New[string]()
	namespaces := sets.New[string]()
	for _, info := range applied {
		if uid := accessorOf(info.Object).GetUID(); uid != "" {
			visited.Insert(string(uid))
		}
		visited.Insert(pruneKey(info.Mapping.Resource.GroupResource().String(), info.Namespace, info.Name))
		if info.Namespaced() {
			namespaces.Insert(info.Namespace)
		}
	}
	for _, ns := range sets.List(namespaces) {
		for _, m := range namespaced {
			if err := o.pruneMapping(ctx, ns, m, visited); err != nil {
				return fmt.Errorf("error pruning namespaced object %v: %v", m.GroupVersionKind, err)
			}
		}
	}
	for _, m := range clusterScoped {
		if err := o.pruneMapping(ctx, metav1.NamespaceNone, m, visited); err != nil {
			return fmt.Errorf("error pruning nonNamespaced object %v: %v", m.GroupVersionKind, err)
		}
	}
	return nil
}

func pruneKey(resource, namespace, name string) string {
	return resource + "/" + namespace + "/" + name
}

func (o *ApplyOptions) pruneMapping(ctx context.Context, namespace string, m *meta.RESTMapping, visited sets.Set[string]) error {
	client := o.Dynamic.Resource(m.Resource).Namespace(namespace)
	list, err := client.List(ctx, metav1.ListOptions{LabelSelector: o.Prune.Selector})
	if err != nil {
		return err
	}
	printer, err := o.printer("pruned")
	if err != nil {
		return err
	}
	for i := range list.Items {
		obj := &list.Items[i]
		key := pruneKey(m.Resource.GroupResource().String(), obj.GetNamespace(), obj.GetName())
		if _, ok := obj.GetAnnotations()[lastAppliedAnnotation]; !ok || visited.Has(string(obj.GetUID())) || visited.Has(key) {
			continue
		}
		if o.DryRun != DryRunClient {
			background := metav1.DeletePropagationBackground
			if err := client.Delete(ctx, obj.GetName(), metav1.DeleteOptions{DryRun: o.dryRun(), PropagationPolicy: &background}); err != nil {
				return err
			}
		}
		if err := printer.PrintObj(obj, o.Streams.Out); err != nil {
			return err
		}
	}
	return nil
}
