package api

import (
	"bytes"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	sigsjson "sigs.k8s.io/json"

	"minik/internal/registry"
	"minik/internal/storage"
)

// storageCodec encodes objects as kube-apiserver stores them in etcd
// (JSON, with apiVersion and kind) and decodes them back.
var storageSerializer = json.NewSerializerWithOptions(json.DefaultMetaFactory, Scheme, Scheme, json.SerializerOptions{})

// objectCodec converts between typed objects of one resource and their
// stored bytes.
type objectCodec struct {
	res *registry.Resource
	enc runtime.Encoder
	// view converts to and from the stored kind when it differs from the
	// served one; nil otherwise.
	view *registry.StorageView
	// custom is set for a custom resource, whose objects are
	// unstructured.
	custom *customCodec
}

func newObjectCodec(res *registry.Resource, view *registry.StorageView) *objectCodec {
	gv := res.GroupVersion
	if view != nil {
		gvks, _, _ := Scheme.ObjectKinds(view.New())
		gv = gvks[0].GroupVersion()
	}
	return &objectCodec{res: res, enc: Codecs.WithoutConversion().EncoderForVersion(storageSerializer, gv), view: view}
}

// New returns an empty object of the resource's kind.
func (c *objectCodec) New() runtime.Object {
	if c.custom != nil {
		return c.custom.New()
	}
	obj, err := Scheme.New(c.res.GroupVersionKind())
	if err != nil {
		panic(fmt.Sprintf("kind %s not in scheme: %v", c.res.GroupVersionKind(), err))
	}
	return obj
}

// NewList returns an empty list of the resource's kind.
func (c *objectCodec) NewList() runtime.Object {
	if c.custom != nil {
		return c.custom.NewList()
	}
	obj, err := Scheme.New(c.res.GroupVersion.WithKind(c.res.Kind + "List"))
	if err != nil {
		panic(fmt.Sprintf("list kind of %s not in scheme: %v", c.res.GroupVersionKind(), err))
	}
	return obj
}

// decode decodes a stored object and sets its resourceVersion.
func (c *objectCodec) decode(kv storage.KV) (runtime.Object, error) {
	if c.custom != nil {
		return c.custom.decode(kv)
	}
	var obj runtime.Object
	if c.view != nil {
		obj = c.view.New()
	} else {
		obj = c.New()
	}
	// The stored JSON's kind is known: unmarshal it straight into the
	// object, as the serializer would after sniffing apiVersion and kind
	// (a sixth of a list's time went to that sniffing).
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(kv.Value, obj); err != nil {
		return nil, fmt.Errorf("decode %s: %w", kv.Key, err)
	}
	if c.view != nil {
		obj = c.view.FromStored(obj)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	m.SetResourceVersion(fmt.Sprint(kv.Revision))
	return obj, nil
}

// encode encodes an object for storage, without its resourceVersion.
func (c *objectCodec) encode(obj runtime.Object) ([]byte, error) {
	if c.custom != nil {
		data, err := c.custom.encode(obj)
		if err == nil && c.custom.def != nil {
			// What the write answers is the object as it reads back: a
			// custom resource is defaulted from its schema when read, as
			// kube's storage codec does, so the default of a field the
			// write cleared (the status, on create) shows at once.
			c.custom.def(obj)
		}
		return data, err
	}
	if c.view != nil {
		stored := c.view.ToStored(obj)
		c.readBack(obj, stored)
		obj = stored
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	rv := m.GetResourceVersion()
	m.SetResourceVersion("")
	defer m.SetResourceVersion(rv)
	var buf bytes.Buffer
	if err := c.enc.Encode(obj, &buf); err != nil {
		return nil, fmt.Errorf("encode %s %s: %w", c.res.Kind, m.GetName(), err)
	}
	return buf.Bytes(), nil
}

// readBack sets a view's object to what its stored form reads back as,
// keeping its kind: the answer to a write through a view is the stored
// object converted back, as kube's answers are converted from the
// storage version (an autoscaling/v1 HPA gets its defaulted CPU target).
func (c *objectCodec) readBack(obj, stored runtime.Object) {
	back := reflect.ValueOf(c.view.FromStored(stored))
	dst := reflect.ValueOf(obj)
	if back.Type() != dst.Type() || dst.Kind() != reflect.Pointer {
		return
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	dst.Elem().Set(back.Elem())
	obj.GetObjectKind().SetGroupVersionKind(gvk)
}

// statusField returns the addressable Status field of a typed object, or
// an invalid value when it has none.
func statusField(obj runtime.Object) reflect.Value {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.Elem().FieldByName("Status")
}

// resetStatus clears an object's status.
func resetStatus(obj runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		delete(u.Object, "status")
		return
	}
	if f := statusField(obj); f.IsValid() && f.CanSet() {
		f.Set(reflect.Zero(f.Type()))
	}
}

// copyStatus sets dst's status to src's.
func copyStatus(dst, src runtime.Object) {
	if d, ok := dst.(*unstructured.Unstructured); ok {
		if st, ok := src.(*unstructured.Unstructured).Object["status"]; ok {
			d.Object["status"] = runtime.DeepCopyJSONValue(st)
		} else {
			delete(d.Object, "status")
		}
		return
	}
	d, s := statusField(dst), statusField(src)
	if d.IsValid() && s.IsValid() && d.CanSet() {
		d.Set(s)
	}
}

// specChanged tells whether anything but metadata, type meta and status
// differs between two objects of one kind: what bumps metadata.generation.
func specChanged(a, b runtime.Object) bool {
	if ua, ok := a.(*unstructured.Unstructured); ok {
		return customSpecChanged(ua, b.(*unstructured.Unstructured), true)
	}
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	t := va.Type()
	for i := 0; i < t.NumField(); i++ {
		switch t.Field(i).Name {
		case "TypeMeta", "ObjectMeta", "Status":
			continue
		}
		if !equalSemantic(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return true
		}
	}
	return false
}

func equalSemantic(a, b interface{}) bool {
	return equality.Semantic.DeepEqual(a, b)
}
