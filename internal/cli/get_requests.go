package cli

import (
	"context"
	"errors"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// fetcher reads as the output needs: tables for human-readable output,
// with full objects in rows when sorting.
func (o *GetOptions) fetcher() *fetcher {
	return &fetcher{
		clientFor:     o.ClientFor,
		table:         o.PrintFlags.IsHumanReadable(),
		includeObject: o.PrintFlags.SortBy != "",
	}
}

// getRequest is one read get makes: a named object, or a whole collection
// when name is empty.
type getRequest struct {
	mapping   *meta.RESTMapping
	namespace string
	name      string // "" lists
}

// requests turns the arguments (or -f manifests) into reads, as kubectl's
// resource builder does, and tells whether exactly one object was named (so
// that -o yaml prints it rather than a List). Its error aborts the command
// before anything is read.
func (o *GetOptions) requests() ([]getRequest, bool, error) {
	namespace := o.Namespace
	if o.AllNamespaces {
		namespace = ""
	}
	byName := func(m *meta.RESTMapping, name string) (getRequest, error) {
		ns := namespace
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			ns = ""
		} else if ns == "" {
			if o.AllNamespaces {
				return getRequest{}, errors.New("a resource cannot be retrieved by name across all namespaces")
			}
			return getRequest{}, errors.New("namespace may not be empty when retrieving a resource by name")
		}
		return getRequest{mapping: m, namespace: ns, name: name}, nil
	}

	if !o.Filenames.Empty() {
		if len(o.Args) > 0 {
			return nil, false, errors.New("when paths, URLs, or stdin is provided as input, you may not specify a resource by arguments as well")
		}
		objs, errs := ReadManifests(o.Filenames, o.Streams.In)
		infos, rerrs := ResolveManifests(objs, o.Mapper, o.Namespace, o.ExplicitNamespace)
		if errs = append(errs, rerrs...); len(errs) > 0 {
			return nil, false, utilerrors.NewAggregate(errs)
		}
		var reqs []getRequest
		for _, info := range infos {
			reqs = append(reqs, getRequest{mapping: info.Mapping, namespace: info.Namespace, name: info.Name})
		}
		single := len(o.Filenames.Filenames) == 1 && o.Filenames.Filenames[0] != "-" && !isDir(o.Filenames.Filenames[0])
		return reqs, single, nil
	}

	args, err := parseResourceArgs(o.Args, o.BaseName, categoryAliases(o.Categories))
	if err != nil {
		return nil, false, err
	}
	selecting := o.LabelSelector != "" || o.FieldSelector != "" || (len(args.Types) > 0 && len(args.Names) == 0)
	switch {
	case selecting:
		if len(args.Names) > 0 {
			return nil, false, errors.New("name cannot be provided when a selector is specified")
		}
		if len(args.Tuples) > 0 {
			return nil, false, errors.New("selectors and the all flag cannot be used when passing resource/name arguments")
		}
		if len(args.Types) == 0 {
			return nil, false, errors.New("at least one resource must be specified to use a selector")
		}
		mappings, err := o.mappings(args.Types)
		if err != nil {
			return nil, false, err
		}
		var reqs []getRequest
		for _, m := range mappings {
			ns := namespace
			if m.Scope.Name() != meta.RESTScopeNameNamespace {
				ns = ""
			}
			reqs = append(reqs, getRequest{mapping: m, namespace: ns})
		}
		return reqs, false, nil
	case len(args.Tuples) > 0:
		var reqs []getRequest
		for _, t := range args.Tuples {
			m, err := mappingFor(o.Mapper, t.Resource)
			if err != nil {
				return nil, false, err
			}
			req, err := byName(m, t.Name)
			if err != nil {
				return nil, false, err
			}
			reqs = append(reqs, req)
		}
		return reqs, len(args.Tuples) == 1, nil
	case len(args.Names) > 0:
		if len(args.Types) > 1 {
			return nil, false, errors.New("you must specify only one resource")
		}
		mappings, err := o.mappings(args.Types)
		if err != nil {
			return nil, false, err
		}
		var reqs []getRequest
		for _, name := range args.Names {
			req, err := byName(mappings[0], name)
			if err != nil {
				return nil, false, err
			}
			reqs = append(reqs, req)
		}
		return reqs, len(args.Names) == 1, nil
	}
	return nil, false, errors.New(`You must provide one or more resources by argument or filename.
Example resource specifications include:
   '-f rsrc.yaml'
   '--filename=rsrc.json'
   '<resource> <name>'
   '<resource>'`)
}

// mappings resolves type arguments, dropping repeats of the same kind.
func (o *GetOptions) mappings(types []string) ([]*meta.RESTMapping, error) {
	var out []*meta.RESTMapping
	seen := map[schema.GroupVersionKind]bool{}
	for _, t := range types {
		m, err := mappingFor(o.Mapper, t)
		if err != nil {
			return nil, err
		}
		if seen[m.GroupVersionKind] {
			continue
		}
		seen[m.GroupVersionKind] = true
		out = append(out, m)
	}
	return out, nil
}

// fetch performs the requests, continuing past errors: each named object
// and each page of a list becomes an info.
func (o *GetOptions) fetch(ctx context.Context, reqs []getRequest) ([]*Info, []error) {
	f := o.fetcher()
	chunk := o.ChunkSize
	if o.PrintFlags.SortBy != "" {
		chunk = 0
	}
	var infos []*Info
	var errs []error
	for _, r := range reqs {
		if r.name != "" {
			obj, err := f.get(ctx, r.mapping, r.namespace, r.name)
			if err != nil {
				if !(o.IgnoreNotFound && apierrors.IsNotFound(err)) {
					errs = append(errs, err)
				}
				continue
			}
			infos = append(infos, &Info{Mapping: r.mapping, Namespace: r.namespace, Name: r.name, Object: obj})
			continue
		}
		opts := metav1.ListOptions{LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector, Limit: chunk}
		err := f.list(ctx, r.mapping, r.namespace, opts, func(obj runtime.Object) error {
			infos = append(infos, &Info{Mapping: r.mapping, Namespace: r.namespace, Object: obj})
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return infos, errs
}

// isDir reports whether path is a directory.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
