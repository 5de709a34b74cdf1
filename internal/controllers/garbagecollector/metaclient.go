package garbagecollector

import (
	"context"
	"encoding/json"
	"fmt"
	"path"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"minik/internal/controllers"
)

// MetadataClient reads and deletes objects of any resource, and patches
// their metadata, with plain JSON requests: what the garbage collector and
// the namespace controller need of kube's metadata client. (kube's asks for
// PartialObjectMetadata, which minik's API server does not serve; objects
// are read whole and only their metadata decoded.)
//
// It sends its requests through a REST client used for nothing but raw
// bytes, such as the clientset's discovery client, and so shares its
// identity, transport and rate limiter.
type MetadataClient struct {
	rest rest.Interface
}

// NewMetadataClient returns a client sending its requests through c.
func NewMetadataClient(c rest.Interface) *MetadataClient { return &MetadataClient{rest: c} }

// resourcePath is the URL path of an object (name set) or a collection.
func resourcePath(gvr schema.GroupVersionResource, namespace, name string) string {
	p := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		p = "/api/" + gvr.Version
	}
	if namespace != "" {
		p = path.Join(p, "namespaces", namespace)
	}
	p = path.Join(p, gvr.Resource)
	if name != "" {
		p = path.Join(p, name)
	}
	return p
}

func describe(gvr schema.GroupVersionResource, namespace, name string) string {
	gr := gvr.GroupResource().String()
	switch {
	case name == "":
		return gr + " in namespace " + namespace
	case namespace == "":
		return gr + " " + name
	}
	return gr + " " + namespace + "/" + name
}

// Get reads an object's metadata.
func (m *MetadataClient) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*metav1.PartialObjectMetadata, error) {
	body, err := m.rest.Get().AbsPath(resourcePath(gvr, namespace, name)).SetHeader("Accept", "application/json").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var obj metav1.PartialObjectMetadata
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, fmt.Errorf("decode %s: %w", describe(gvr, namespace, name), err)
	}
	return &obj, nil
}

// List reads the metadata of every object of a resource in a namespace (all
// namespaces if empty).
func (m *MetadataClient) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string) (*metav1.PartialObjectMetadataList, error) {
	body, err := m.rest.Get().AbsPath(resourcePath(gvr, namespace, "")).SetHeader("Accept", "application/json").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var list metav1.PartialObjectMetadataList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("decode list of %s: %w", describe(gvr, namespace, ""), err)
	}
	return &list, nil
}

// Delete deletes an object.
func (m *MetadataClient) Delete(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, opts metav1.DeleteOptions) error {
	return m.delete(ctx, resourcePath(gvr, namespace, name), opts)
}

// DeleteCollection deletes every object of a resource in a namespace.
func (m *MetadataClient) DeleteCollection(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.DeleteOptions) error {
	return m.delete(ctx, resourcePath(gvr, namespace, ""), opts)
}

func (m *MetadataClient) delete(ctx context.Context, p string, opts metav1.DeleteOptions) error {
	opts.TypeMeta = metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "DeleteOptions"}
	body, err := json.Marshal(opts)
	if err != nil {
		return err
	}
	return m.rest.Delete().AbsPath(p).SetHeader("Accept", "application/json").
		SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
}

// Patch patches an object.
func (m *MetadataClient) Patch(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, pt types.PatchType, data []byte) error {
	return m.rest.Patch(pt).AbsPath(resourcePath(gvr, namespace, name)).SetHeader("Accept", "application/json").
		Body(data).Do(ctx).Error()
}

// ListWatch lists and watches the metadata of a resource's objects in all
// namespaces, for an informer of *metav1.PartialObjectMetadata: the
// informer of a resource client-go has no type for.
func (m *MetadataClient) ListWatch(gvr schema.GroupVersionResource) *cache.ListWatch {
	return controllers.JSONListWatch[metav1.PartialObjectMetadata, metav1.PartialObjectMetadataList](m.rest, resourcePath(gvr, "", ""))
}
