package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// JSONListWatch lists and watches the objects under path (an API path such
// as /apis/apiextensions.k8s.io/v1/customresourcedefinitions) as JSON,
// decoding lists into L and watched objects into T: the list-watch of an
// informer for a kind the controller manager's clientset has no typed
// client for (CustomResourceDefinitions, or any resource's metadata as
// PartialObjectMetadata).
func JSONListWatch[T, L any, PT interface {
	*T
	runtime.Object
}, PL interface {
	*L
	runtime.Object
}](client rest.Interface, path string) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			body, err := client.Get().AbsPath(path).SpecificallyVersionedParams(&opts, metav1.ParameterCodec, metav1.SchemeGroupVersion).
				SetHeader("Accept", "application/json").Do(ctx).Raw()
			if err != nil {
				return nil, err
			}
			list := PL(new(L))
			if err := json.Unmarshal(body, list); err != nil {
				return nil, fmt.Errorf("decode list of %s: %w", path, err)
			}
			return list, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.Watch = true
			body, err := client.Get().AbsPath(path).SpecificallyVersionedParams(&opts, metav1.ParameterCodec, metav1.SchemeGroupVersion).
				SetHeader("Accept", "application/json").Stream(ctx)
			if err != nil {
				return nil, err
			}
			return watch.NewStreamWatcher(&jsonEventDecoder[T, PT]{body: body, dec: json.NewDecoder(body)},
				apierrors.NewClientErrorReporter(http.StatusInternalServerError, "GET", "ClientWatchDecoding")), nil
		},
	}
}

// jsonEventDecoder reads a JSON watch stream of T objects.
type jsonEventDecoder[T any, PT interface {
	*T
	runtime.Object
}] struct {
	body io.ReadCloser
	dec  *json.Decoder
}

func (d *jsonEventDecoder[T, PT]) Decode() (watch.EventType, runtime.Object, error) {
	var ev struct {
		Type   watch.EventType `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	if err := d.dec.Decode(&ev); err != nil {
		return "", nil, err
	}
	if ev.Type == watch.Error {
		var st metav1.Status
		if err := json.Unmarshal(ev.Object, &st); err != nil {
			return "", nil, err
		}
		return ev.Type, &st, nil
	}
	obj := PT(new(T))
	if err := json.Unmarshal(ev.Object, obj); err != nil {
		return "", nil, err
	}
	return ev.Type, obj, nil
}

func (d *jsonEventDecoder[T, PT]) Close() { _ = d.body.Close() }
