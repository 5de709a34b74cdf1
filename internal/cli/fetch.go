package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// tableAccept asks for a server-side table, falling back to the object.
var tableAccept = strings.Join([]string{
	"application/json;as=Table;v=v1;g=meta.k8s.io",
	"application/json;as=Table;v=v1beta1;g=meta.k8s.io",
	"application/json",
}, ",")

// fetcher reads objects from the server, as server-side tables when asked.
type fetcher struct {
	clientFor func(schema.GroupVersion) (rest.Interface, error)
	// table asks for tables; includeObject asks for the full object in each
	// row (needed to sort rows) instead of its metadata.
	table         bool
	includeObject bool
}

func (f *fetcher) request(verb string, mapping *meta.RESTMapping, namespace string) (*rest.Request, error) {
	c, err := f.clientFor(mapping.GroupVersionKind.GroupVersion())
	if err != nil {
		return nil, err
	}
	req := c.Verb(verb).
		NamespaceIfScoped(namespace, mapping.Scope.Name() == meta.RESTScopeNameNamespace).
		Resource(mapping.Resource.Resource)
	if f.table {
		req.SetHeader("Accept", tableAccept)
		if f.includeObject {
			req.Param("includeObject", "Object")
		}
	}
	return req, nil
}

func doDecode(ctx context.Context, req *rest.Request) (runtime.Object, error) {
	result := req.Do(ctx)
	if err := result.Error(); err != nil {
		return nil, err
	}
	data, err := result.Raw()
	if err != nil {
		return nil, err
	}
	return decodeObject(data)
}

// get reads one object (a one-row table when tables are asked for).
func (f *fetcher) get(ctx context.Context, mapping *meta.RESTMapping, namespace, name string) (runtime.Object, error) {
	if name == "" {
		return nil, errors.New("resource name may not be empty")
	}
	req, err := f.request("GET", mapping, namespace)
	if err != nil {
		return nil, err
	}
	return doDecode(ctx, req.Name(name))
}

// list reads a collection page by page (opts.Limit items a page, following
// continue tokens) and calls visit with each page: a table or a list.
func (f *fetcher) list(ctx context.Context, mapping *meta.RESTMapping, namespace string, opts metav1.ListOptions, visit func(runtime.Object) error) error {
	for {
		req, err := f.request("GET", mapping, namespace)
		if err != nil {
			return err
		}
		req.SpecificallyVersionedParams(&opts, metav1.ParameterCodec, metav1.SchemeGroupVersion)
		obj, err := doDecode(ctx, req)
		if err != nil {
			return enhanceListError(err, opts, mapping.Resource.String())
		}
		if err := visit(obj); err != nil {
			return err
		}
		next := ""
		if lm, err := meta.ListAccessor(obj); err == nil {
			next = lm.GetContinue()
		}
		if next == "" {
			return nil
		}
		opts.Continue = next
	}
}

// enhanceListError says what was being listed, as kubectl does.
func enhanceListError(err error, opts metav1.ListOptions, subject string) error {
	if apierrors.IsResourceExpired(err) {
		return err
	}
	if !apierrors.IsBadRequest(err) && !apierrors.IsNotFound(err) {
		return err
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		if opts.LabelSelector == "" && opts.FieldSelector == "" {
			se.ErrStatus.Message = fmt.Sprintf("Unable to list %q: %v", subject, se.ErrStatus.Message)
		} else {
			se.ErrStatus.Message = fmt.Sprintf("Unable to find %q that match label selector %q, field selector %q: %v", subject, opts.LabelSelector, opts.FieldSelector, se.ErrStatus.Message)
		}
		return se
	}
	if opts.LabelSelector == "" && opts.FieldSelector == "" {
		return fmt.Errorf("Unable to list %q: %v", subject, err)
	}
	return fmt.Errorf("Unable to find %q that match label selector %q, field selector %q: %v", subject, opts.LabelSelector, opts.FieldSelector, err)
}

// watchEvent is one event of a watch stream, its object decoded as
// decodeObject does.
type watchEvent struct {
	Type   string
	Object runtime.Object
}

// watch opens a watch and calls fn with each event until the server ends
// the stream, ctx is done, or fn returns an error (which watch returns).
func (f *fetcher) watch(ctx context.Context, mapping *meta.RESTMapping, namespace string, opts metav1.ListOptions, fn func(watchEvent) error) error {
	req, err := f.request("GET", mapping, namespace)
	if err != nil {
		return err
	}
	opts.Watch = true
	req.SpecificallyVersionedParams(&opts, metav1.ParameterCodec, metav1.SchemeGroupVersion)
	stream, err := req.Stream(ctx)
	if err != nil {
		return err
	}
	defer stream.Close()
	dec := json.NewDecoder(stream)
	for {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		}
		obj, err := decodeObject(ev.Object)
		if err != nil {
			return err
		}
		if ev.Type == "ERROR" {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				status := &metav1.Status{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, status); err == nil {
					return apierrors.FromObject(status)
				}
			}
			return fmt.Errorf("watch error: %s", string(ev.Object))
		}
		if ev.Type == "BOOKMARK" {
			continue
		}
		if err := fn(watchEvent{Type: ev.Type, Object: obj}); err != nil {
			return err
		}
	}
}
