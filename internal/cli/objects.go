package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/restmapper"
)

// ObjectSelection is how the commands that act on objects (describe,
// delete, label, scale, rollout, wait, ...) name them, as kubectl's
// resource builder reads them: -f manifests, TYPE NAME..., TYPE/NAME...,
// or TYPE with -l / --field-selector / --all.
type ObjectSelection struct {
	Args          []string
	Filenames     FilenameOptions
	LabelSelector string
	FieldSelector string
	// All selects every object of the types (--all).
	All           bool
	AllNamespaces bool
	Namespace     string
	// EnforceNamespace makes manifests in another namespace an error (-n
	// was given).
	EnforceNamespace bool
	// AllowEmptySelector lets a bare TYPE mean every object of the type
	// (describe, get); otherwise it is kubectl's "no name was specified".
	AllowEmptySelector bool
	// BaseName is the root command's name, for messages.
	BaseName string
}

// objectRequest is one read: a named object, or a collection.
type objectRequest struct {
	mapping   *meta.RESTMapping
	namespace string
	name      string // "" selects
	source    string
	manifest  *unstructured.Unstructured
}

// resolve turns the selection into reads without contacting the server
// beyond discovery; its error aborts the command before anything is read.
// single reports whether exactly one object was named.
func (s *ObjectSelection) resolve(mapper meta.RESTMapper, categories restmapper.CategoryExpander, stdin io.Reader) ([]objectRequest, bool, error) {
	namespace := s.Namespace
	if s.AllNamespaces {
		namespace = ""
	}
	if s.All && (s.LabelSelector != "" || s.FieldSelector != "") {
		if s.LabelSelector != "" {
			return nil, false, fmt.Errorf("found non-empty label selector %q with previously set 'all' parameter. ", s.LabelSelector)
		}
		return nil, false, fmt.Errorf("found non-empty field selector %q with previously set 'all' parameter. ", s.FieldSelector)
	}
	byName := func(m *meta.RESTMapping, name string) (objectRequest, error) {
		ns := namespace
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			ns = ""
		} else if ns == "" {
			if s.AllNamespaces {
				return objectRequest{}, errors.New("a resource cannot be retrieved by name across all namespaces")
			}
			return objectRequest{}, errors.New("namespace may not be empty when retrieving a resource by name")
		}
		return objectRequest{mapping: m, namespace: ns, name: name}, nil
	}

	if !s.Filenames.Empty() {
		if len(s.Args) > 0 {
			// kubectl's builder words it by what the arguments name.
			if len(s.Args) > 1 || strings.Contains(s.Args[0], "/") {
				return nil, false, errors.New("when paths, URLs, or stdin is provided as input, you may not specify a resource by arguments as well")
			}
			return nil, false, errors.New("when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well")
		}
		objs, errs := ReadManifests(s.Filenames, stdin)
		infos, rerrs := ResolveManifests(objs, mapper, s.Namespace, s.EnforceNamespace)
		if errs = append(errs, rerrs...); len(errs) > 0 {
			return nil, false, utilerrors.NewAggregate(errs)
		}
		var reqs []objectRequest
		for _, info := range infos {
			reqs = append(reqs, objectRequest{mapping: info.Mapping, namespace: info.Namespace, name: info.Name, source: info.Source, manifest: info.Object.(*unstructured.Unstructured)})
		}
		single := len(s.Filenames.Filenames) == 1 && s.Filenames.Filenames[0] != "-" && !isDir(s.Filenames.Filenames[0])
		return reqs, single, nil
	}

	var expand func(string) string
	if categories != nil {
		expand = categoryAliases(categories)
	}
	args, err := parseResourceArgs(s.Args, s.BaseName, expand)
	if err != nil {
		return nil, false, err
	}
	selecting := s.LabelSelector != "" || s.FieldSelector != "" || s.All ||
		(s.AllowEmptySelector && len(args.Types) > 0 && len(args.Names) == 0)
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
		mappings, err := uniqueMappings(mapper, args.Types)
		if err != nil {
			return nil, false, err
		}
		var reqs []objectRequest
		for _, m := range mappings {
			ns := namespace
			if m.Scope.Name() != meta.RESTScopeNameNamespace {
				ns = ""
			}
			reqs = append(reqs, objectRequest{mapping: m, namespace: ns})
		}
		return reqs, false, nil
	case len(args.Tuples) > 0:
		var reqs []objectRequest
		for _, t := range args.Tuples {
			m, err := mappingFor(mapper, t.Resource)
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
		mappings, err := uniqueMappings(mapper, args.Types)
		if err != nil {
			return nil, false, err
		}
		var reqs []objectRequest
		for _, name := range args.Names {
			req, err := byName(mappings[0], name)
			if err != nil {
				return nil, false, err
			}
			reqs = append(reqs, req)
		}
		return reqs, len(args.Names) == 1, nil
	case len(args.Types) > 0:
		if _, err := uniqueMappings(mapper, args.Types); err != nil {
			return nil, false, err
		}
		return nil, false, errors.New("resource(s) were provided, but no name was specified")
	}
	return nil, false, errors.New(`You must provide one or more resources by argument or filename.
Example resource specifications include:
   '-f rsrc.yaml'
   '--filename=rsrc.json'
   '<resource> <name>'
   '<resource>'`)
}

// uniqueMappings resolves type arguments, dropping repeats of a kind.
func uniqueMappings(mapper meta.RESTMapper, types []string) ([]*meta.RESTMapping, error) {
	var out []*meta.RESTMapping
	seen := map[schema.GroupVersionKind]bool{}
	for _, t := range types {
		m, err := mappingFor(mapper, t)
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

// objectFetcher reads the objects of requests in full, as unstructured.
type objectFetcher struct {
	dynamic       dynamic.Interface
	labelSelector string
	fieldSelector string
	chunkSize     int64
}

func (f *objectFetcher) resource(m *meta.RESTMapping, namespace string) dynamic.ResourceInterface {
	r := f.dynamic.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return r.Namespace(namespace)
	}
	return r
}

// fetch reads every request in order, continuing past errors (as kubectl's
// ContinueOnError builder): named objects one by one, collections page by
// page, flattened into one info per object.
func (f *objectFetcher) fetch(ctx context.Context, reqs []objectRequest) ([]*Info, []error) {
	var infos []*Info
	var errs []error
	for _, r := range reqs {
		if r.name != "" {
			obj, err := f.resource(r.mapping, r.namespace).Get(ctx, r.name, metav1.GetOptions{})
			if err != nil {
				errs = append(errs, addSourceToErr("getting", r.source, err))
				continue
			}
			infos = append(infos, &Info{Source: r.source, Mapping: r.mapping, Namespace: r.namespace, Name: r.name, Object: obj})
			continue
		}
		opts := metav1.ListOptions{LabelSelector: f.labelSelector, FieldSelector: f.fieldSelector, Limit: f.chunkSize}
		for {
			list, err := f.resource(r.mapping, r.namespace).List(ctx, opts)
			if err != nil {
				errs = append(errs, enhanceListError(err, opts, r.mapping.Resource.String()))
				break
			}
			for i := range list.Items {
				item := &list.Items[i]
				infos = append(infos, &Info{Mapping: r.mapping, Namespace: item.GetNamespace(), Name: item.GetName(), Object: item})
			}
			if list.GetContinue() == "" {
				break
			}
			opts.Continue = list.GetContinue()
		}
	}
	return infos, errs
}

// selectObjects resolves and reads a selection: the objects found and the
// errors met on the way (a resolution error comes back alone).
func (f *Factory) selectObjects(ctx context.Context, s *ObjectSelection) ([]*Info, bool, []error) {
	mapper, err := f.ToRESTMapper()
	if err != nil {
		return nil, false, []error{err}
	}
	categories, err := f.CategoryExpander()
	if err != nil {
		return nil, false, []error{err}
	}
	reqs, single, err := s.resolve(mapper, categories, f.streams.In)
	if err != nil {
		return nil, false, []error{err}
	}
	dc, err := f.DynamicClient()
	if err != nil {
		return nil, false, []error{err}
	}
	if _, err := labels.Parse(s.LabelSelector); err != nil {
		return nil, false, []error{fmt.Errorf("the provided selector %q is not valid: %v", s.LabelSelector, err)}
	}
	fetcher := &objectFetcher{dynamic: dc, labelSelector: s.LabelSelector, fieldSelector: s.FieldSelector, chunkSize: 500}
	infos, errs := fetcher.fetch(ctx, reqs)
	return infos, single, errs
}

// ignoreNotFound drops NotFound errors.
func ignoreNotFound(errs []error) []error {
	var out []error
	for _, err := range errs {
		if !apierrors.IsNotFound(err) {
			out = append(out, err)
		}
	}
	return out
}

// toTyped converts an unstructured object to its Go type (*appsv1.Deployment,
// ...) when the kind is built in; other kinds stay unstructured.
func toTyped(obj runtime.Object) (runtime.Object, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	typed, err := scheme.Scheme.New(u.GroupVersionKind())
	if err != nil {
		if runtime.IsNotRegisteredError(err) {
			return u, nil
		}
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
		return nil, err
	}
	typed.GetObjectKind().SetGroupVersionKind(u.GroupVersionKind())
	return typed, nil
}

// aggregate joins errors as kubectl's aggregate does (nil when none).
func aggregate(errs []error) error {
	return utilerrors.NewAggregate(errs)
}
