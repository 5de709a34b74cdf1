package cli

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
)

// runWatch prints the selected objects (unless --watch-only), then every
// change to them as it happens, until the server ends the watch or ctx is
// done. Only one resource type may be watched.
func runWatch(ctx context.Context, o *GetOptions) error {
	reqs, _, err := o.requests()
	if err != nil {
		return err
	}
	if len(reqs) == 0 {
		return errors.New("no resources to watch")
	}
	if len(reqs) > 1 {
		if reqs[0].name == "" {
			return errors.New("you may only specify a single resource type")
		}
		for _, r := range reqs[1:] {
			if r.mapping.GroupVersionKind != reqs[0].mapping.GroupVersionKind {
				return errors.New("watch is only supported on individual resources and resource collections - more than 1 resource was found")
			}
		}
		return errors.New("watch is only supported on individual resources and resource collections, but a list of resources is found")
	}
	req := reqs[0]
	pf := o.PrintFlags
	pf.Kind = req.mapping.GroupVersionKind.GroupKind()
	pf.WithNamespace = o.AllNamespaces && req.mapping.Scope.Name() == meta.RESTScopeNameNamespace
	printer, err := pf.ToPrinter()
	if err != nil {
		return err
	}
	f := o.fetcher()
	f.includeObject = false

	// Read the current state, to print it and to start the watch after it.
	opts := metav1.ListOptions{LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector}
	var current runtime.Object
	if req.name != "" {
		current, err = f.get(ctx, req.mapping, req.namespace, req.name)
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", req.name).String()
	} else {
		current, err = o.listAll(ctx, f, req, opts)
	}
	if err != nil {
		return err
	}
	rv := ""
	if acc, err := meta.ListAccessor(current); err == nil {
		rv = acc.GetResourceVersion()
	} else if acc, err := meta.Accessor(current); err == nil {
		rv = acc.GetResourceVersion()
	}
	if t, ok := current.(*metav1.Table); ok && rv == "" && req.name != "" && len(t.Rows) == 1 {
		if acc, err := meta.Accessor(t.Rows[0].Object.Object); err == nil {
			rv = acc.GetResourceVersion()
		}
	}
	opts.ResourceVersion = rv

	w := NewTabWriter(o.Streams.Out)
	if !o.WatchOnly {
		var objs []runtime.Object
		if _, isTable := current.(*metav1.Table); !isTable && meta.IsListType(current) {
			if objs, err = meta.ExtractList(current); err != nil {
				return err
			}
		} else {
			objs = []runtime.Object{current}
		}
		for _, obj := range objs {
			if err := printer.PrintObj(obj, w); err != nil {
				return fmt.Errorf("unable to output the provided object: %v", err)
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}

	err = f.watch(ctx, req.mapping, req.namespace, opts, func(ev watchEvent) error {
		if err := printer.PrintObj(ev.Object, w); err != nil {
			return err
		}
		return w.Flush()
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// listAll reads a whole collection (all pages) as one table or list.
func (o *GetOptions) listAll(ctx context.Context, f *fetcher, req objectRequest, opts metav1.ListOptions) (runtime.Object, error) {
	opts.Limit = o.ChunkSize
	var all runtime.Object
	err := f.list(ctx, req.mapping, req.namespace, opts, func(page runtime.Object) error {
		if all == nil {
			all = page
			return nil
		}
		switch t := all.(type) {
		case *metav1.Table:
			if p, ok := page.(*metav1.Table); ok {
				t.Rows = append(t.Rows, p.Rows...)
			}
		default:
			items, err := meta.ExtractList(page)
			if err != nil {
				return err
			}
			existing, err := meta.ExtractList(all)
			if err != nil {
				return err
			}
			return meta.SetList(all, append(existing, items...))
		}
		return nil
	})
	return all, err
}
