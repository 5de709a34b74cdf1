package cli

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Info is one object a command acts on: where it came from, how it maps
// to a REST resource, its namespace and name, and the object itself (from
// a manifest, or as the server returned it: an object, a list or a Table).
type Info struct {
	Source    string
	Mapping   *meta.RESTMapping
	Namespace string
	Name      string
	Object    runtime.Object
}

// Namespaced reports whether the object's resource lives in a namespace.
func (i *Info) Namespaced() bool {
	return i.Mapping != nil && i.Mapping.Scope.Name() == meta.RESTScopeNameNamespace
}

// String describes the info as kubectl's error messages do.
func (i *Info) String() string {
	basic := fmt.Sprintf("Name: %q, Namespace: %q", i.Name, i.Namespace)
	if i.Mapping != nil {
		mapping := fmt.Sprintf("Resource: %q, GroupVersionKind: %q", i.Mapping.Resource.String(), i.Mapping.GroupVersionKind.String())
		return fmt.Sprint(mapping, "\n", basic)
	}
	return basic
}

// ObjectName returns "resource/name" ("deployments/web").
func (i *Info) ObjectName() string {
	if i.Mapping != nil {
		return fmt.Sprintf("%s/%s", i.Mapping.Resource.Resource, i.Name)
	}
	gvk := i.Object.GetObjectKind().GroupVersionKind()
	if gvk.Group == "" {
		return fmt.Sprintf("%s/%s", strings.ToLower(gvk.Kind), i.Name)
	}
	return fmt.Sprintf("%s.%s/%s", strings.ToLower(gvk.Kind), gvk.Group, i.Name)
}

// ResolveManifests maps manifest objects to infos, in order, and settles
// their namespaces as kubectl does: a namespaced object without a namespace
// gets namespace (written into the object too); with enforce (-n was
// given) an object in another namespace is an error; cluster-scoped objects
// lose any namespace. Objects that fail are reported and left out.
func ResolveManifests(objs []ManifestObject, mapper meta.RESTMapper, namespace string, enforce bool) ([]*Info, []error) {
	var infos []*Info
	var errs []error
	for _, mo := range objs {
		obj := mo.Object
		gvk := obj.GroupVersionKind()
		name, ns := obj.GetName(), obj.GetNamespace()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			if meta.IsNoMatchError(err) {
				errs = append(errs, fmt.Errorf("resource mapping not found for name: %q namespace: %q from %q: %w\nensure CRDs are installed first", name, ns, mo.Source, err))
			} else {
				errs = append(errs, fmt.Errorf("unable to recognize %q: %v", mo.Source, err))
			}
			continue
		}
		info := &Info{Source: mo.Source, Mapping: mapping, Namespace: ns, Name: name, Object: obj}
		if !info.Namespaced() {
			info.Namespace = ""
			setObjectNamespace(obj, "")
		} else if info.Namespace == "" {
			info.Namespace = namespace
			setObjectNamespace(obj, namespace)
		} else if enforce && info.Namespace != namespace {
			errs = append(errs, fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", info.Namespace, namespace, info.Namespace))
			continue
		}
		infos = append(infos, info)
	}
	return infos, errs
}

func setObjectNamespace(obj *unstructured.Unstructured, ns string) {
	if ns == "" {
		unstructured.RemoveNestedField(obj.Object, "metadata", "namespace")
		return
	}
	obj.SetNamespace(ns)
}
