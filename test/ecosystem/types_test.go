package ecosystem_test

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
)

// The Guestbook API, as a kubebuilder project would scaffold it: v1 (the
// storage version and conversion hub, spec.size) and v2 (spec.replicas),
// both with a status subresource.
var (
	groupV1 = schema.GroupVersion{Group: "webapp.minik.test", Version: "v1"}
	groupV2 = schema.GroupVersion{Group: "webapp.minik.test", Version: "v2"}
)

// GuestbookSpec is v1's spec.
type GuestbookSpec struct {
	Size int32 `json:"size"`
}

// GuestbookStatus is the status of both versions.
type GuestbookStatus struct {
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// ConfigMaps counts the ConfigMaps labelled for the guestbook, seen
	// through a metadata-only watch.
	ConfigMaps int32 `json:"configMaps,omitempty"`
}

// Guestbook is v1, the hub.
type Guestbook struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GuestbookSpec   `json:"spec"`
	Status            GuestbookStatus `json:"status,omitempty"`
}

// GuestbookList is v1's list.
type GuestbookList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Guestbook `json:"items"`
}

// GuestbookV2Spec is v2's spec.
type GuestbookV2Spec struct {
	Replicas int32 `json:"replicas"`
}

// GuestbookV2 is v2, converted through the hub.
type GuestbookV2 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GuestbookV2Spec `json:"spec"`
	Status            GuestbookStatus `json:"status,omitempty"`
}

// GuestbookV2List is v2's list.
type GuestbookV2List struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GuestbookV2 `json:"items"`
}

func (g *Guestbook) DeepCopyObject() runtime.Object {
	out := *g
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

func (l *GuestbookList) DeepCopyObject() runtime.Object {
	out := *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]Guestbook, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*Guestbook)
	}
	return &out
}

func (g *GuestbookV2) DeepCopyObject() runtime.Object {
	out := *g
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

func (l *GuestbookV2List) DeepCopyObject() runtime.Object {
	out := *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]GuestbookV2, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*GuestbookV2)
	}
	return &out
}

// Hub marks v1 as the conversion hub.
func (*Guestbook) Hub() {}

// ConvertTo converts v2 to the hub.
func (g *GuestbookV2) ConvertTo(hub conversion.Hub) error {
	h, ok := hub.(*Guestbook)
	if !ok {
		return fmt.Errorf("unexpected hub %T", hub)
	}
	g.ObjectMeta.DeepCopyInto(&h.ObjectMeta)
	h.Spec.Size, h.Status = g.Spec.Replicas, g.Status
	return nil
}

// ConvertFrom converts the hub to v2.
func (g *GuestbookV2) ConvertFrom(hub conversion.Hub) error {
	h, ok := hub.(*Guestbook)
	if !ok {
		return fmt.Errorf("unexpected hub %T", hub)
	}
	h.ObjectMeta.DeepCopyInto(&g.ObjectMeta)
	g.Spec.Replicas, g.Status = h.Spec.Size, h.Status
	return nil
}

func addGuestbooks(s *runtime.Scheme) error {
	s.AddKnownTypeWithName(groupV1.WithKind("Guestbook"), &Guestbook{})
	s.AddKnownTypeWithName(groupV1.WithKind("GuestbookList"), &GuestbookList{})
	s.AddKnownTypeWithName(groupV2.WithKind("Guestbook"), &GuestbookV2{})
	s.AddKnownTypeWithName(groupV2.WithKind("GuestbookList"), &GuestbookV2List{})
	metav1.AddToGroupVersion(s, groupV1)
	metav1.AddToGroupVersion(s, groupV2)
	return nil
}

// guestbookCRD is the definition controller-gen would write for the types.
func guestbookCRD() *apiextensionsv1.CustomResourceDefinition {
	status := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"readyReplicas": {Type: "integer", Format: "int32"},
		"configMaps":    {Type: "integer", Format: "int32"},
	}}
	version := func(name, field string, storage bool) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{
			Name: name, Served: true, Storage: storage,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "metadata": {Type: "object"},
					"spec": {Type: "object", Required: []string{field}, Properties: map[string]apiextensionsv1.JSONSchemaProps{
						field: {Type: "integer", Format: "int32", Minimum: ptr.To[float64](0)},
					}},
					"status": status,
				},
			}},
			Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
		}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "guestbooks.webapp.minik.test"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group:    groupV1.Group,
			Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: "guestbooks", Singular: "guestbook", Kind: "Guestbook", ListKind: "GuestbookList"},
			Scope:    apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{version("v1", "size", true), version("v2", "replicas", false)},
		},
	}
}
