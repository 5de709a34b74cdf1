package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/rawhttp"
)

// runGet prints the selected objects: as tables (one group per type, a
// blank line between groups, names prefixed by kind when several types are
// shown), or through the -o printer.
func runGet(ctx context.Context, o *GetOptions) error {
	if o.Raw != "" {
		return rawhttp.RawGet(o.RawClient, genericiooptions.IOStreams{In: o.Streams.In, Out: o.Streams.Out, ErrOut: o.Streams.ErrOut}, o.Raw)
	}
	if o.Watch || o.WatchOnly {
		return runWatch(ctx, o)
	}
	reqs, single, err := o.requests()
	if err != nil {
		return err
	}
	infos, errs := o.fetch(ctx, reqs)
	if !o.PrintFlags.IsHumanReadable() {
		return o.printGeneric(infos, errs, single)
	}

	if o.PrintFlags.SortBy != "" {
		for _, info := range infos {
			if err := sortObject(info.Object, o.PrintFlags.SortBy); err != nil {
				return err
			}
		}
	}

	printWithKind := multipleGVKsRequested(infos)
	tracking := &trackingWriter{delegate: o.Streams.Out}
	separator := &separatorWriter{delegate: tracking}
	w := NewTabWriter(separator)
	allNamespaced := !o.AllNamespaces
	var printer ResourcePrinter
	var lastMapping *meta.RESTMapping
	for _, info := range infos {
		allNamespaced = allNamespaced && info.Namespaced()
		withNamespace := o.AllNamespaces && info.Namespaced()
		if printer == nil || lastMapping == nil || info.Mapping.Resource != lastMapping.Resource {
			if err := w.Flush(); err != nil {
				return err
			}
			w.ResetWidths()
			if lastMapping != nil && !o.PrintFlags.NoHeaders && tracking.written > 0 {
				separator.ready = true
			}
			pf := o.PrintFlags
			pf.Kind = info.Mapping.GroupVersionKind.GroupKind()
			pf.WithNamespace = withNamespace
			pf.WithKind = printWithKind
			if printer, err = pf.ToPrinter(); err != nil {
				return err
			}
			lastMapping = info.Mapping
		}
		if err := printer.PrintObj(info.Object, w); err != nil {
			errs = append(errs, err)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if tracking.written == 0 && !o.IgnoreNotFound && len(errs) == 0 {
		if allNamespaced {
			fmt.Fprintf(o.Streams.ErrOut, "No resources found in %s namespace.\n", o.Namespace)
		} else {
			fmt.Fprintln(o.Streams.ErrOut, "No resources found")
		}
	}
	return utilerrors.NewAggregate(errs)
}

// printGeneric prints through a non-table printer: one named object as
// itself, anything else as a List of all the items.
func (o *GetOptions) printGeneric(infos []*Info, errs []error, single bool) error {
	if len(errs) > 0 && single {
		return utilerrors.Reduce(utilerrors.Flatten(utilerrors.NewAggregate(errs)))
	}
	if len(infos) == 0 && o.IgnoreNotFound {
		return utilerrors.Reduce(utilerrors.Flatten(utilerrors.NewAggregate(errs)))
	}
	printer, err := o.PrintFlags.ToPrinter()
	if err != nil {
		return err
	}
	var items []runtime.Object
	for _, info := range infos {
		if meta.IsListType(info.Object) {
			list, err := meta.ExtractList(info.Object)
			if err != nil {
				return err
			}
			items = append(items, list...)
			continue
		}
		items = append(items, info.Object)
	}

	var obj runtime.Object
	if single && len(items) == 1 {
		obj = items[0]
	} else {
		list := &unstructured.UnstructuredList{Object: map[string]any{
			"kind":       "List",
			"apiVersion": "v1",
			"metadata":   map[string]any{"resourceVersion": ""},
		}}
		for _, item := range items {
			u, err := toUnstructured(item)
			if err != nil {
				return err
			}
			list.Items = append(list.Items, *u)
		}
		if o.PrintFlags.SortBy != "" {
			if err := sortObject(list, o.PrintFlags.SortBy); err != nil {
				return err
			}
		}
		obj = list
	}
	if err := printer.PrintObj(obj, o.Streams.Out); err != nil {
		errs = append(errs, err)
	}
	return utilerrors.Reduce(utilerrors.Flatten(utilerrors.NewAggregate(errs)))
}

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	data, err := json.Marshal(&corev1.List{Items: []runtime.RawExtension{{Object: obj}}})
	if err != nil {
		return nil, err
	}
	var m struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m.Items[0]}, nil
}

func multipleGVKsRequested(infos []*Info) bool {
	if len(infos) < 2 {
		return false
	}
	gvk := infos[0].Mapping.GroupVersionKind
	for _, info := range infos {
		if info.Mapping.GroupVersionKind != gvk {
			return true
		}
	}
	return false
}

// trackingWriter counts the bytes written, to know whether anything was.
type trackingWriter struct {
	delegate io.Writer
	written  int
}

// Write counts and forwards p.
func (t *trackingWriter) Write(p []byte) (int, error) {
	t.written += len(p)
	return t.delegate.Write(p)
}

// separatorWriter writes a blank line before the next output once ready:
// the line between two groups of a multi-type get.
type separatorWriter struct {
	delegate io.Writer
	ready    bool
}

// Write forwards p, after the blank line when one is due.
func (s *separatorWriter) Write(p []byte) (int, error) {
	if len(p) != 0 && s.ready {
		if _, err := fmt.Fprintln(s.delegate); err != nil {
			return 0, err
		}
		s.ready = false
	}
	return s.delegate.Write(p)
}
