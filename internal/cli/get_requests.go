package cli

import (
	"context"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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

// requests turns the arguments (or -f manifests) into reads through the
// same ObjectSelection every command uses, with a bare TYPE listing every
// object of it; single tells whether exactly one object was named (so
// that -o yaml prints it rather than a List). Its error aborts the command
// before anything is read.
func (o *GetOptions) requests() ([]objectRequest, bool, error) {
	s := ObjectSelection{
		Args: o.Args, Filenames: o.Filenames,
		LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector,
		AllNamespaces: o.AllNamespaces, Namespace: o.Namespace, EnforceNamespace: o.ExplicitNamespace,
		AllowEmptySelector: true, BaseName: o.BaseName,
	}
	return s.resolve(o.Mapper, o.Categories, o.Streams.In)
}

// fetch performs the requests, continuing past errors: each named object
// and each page of a list becomes an info.
func (o *GetOptions) fetch(ctx context.Context, reqs []objectRequest) ([]*Info, []error) {
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
