// Package v1alpha1 is the trail.minik.dev/v1alpha1 API: Record, one
// write the API server answered (see internal/trail, which records and
// serves them). Clients (minikctl journey) import it without the server.
package v1alpha1

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// GroupVersion is the served group version, trail.minik.dev/v1alpha1.
var GroupVersion = schema.GroupVersion{Group: "trail.minik.dev", Version: "v1alpha1"}

// Resource is the plural name of records in the group.
const Resource = "records"

// AddToScheme registers Record and RecordList.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Record{}, &RecordList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Labels every Record carries, for label selectors.
const (
	// LabelResource is the written resource ("pods", "deployments.apps").
	LabelResource = "trail.minik.dev/resource"
	// LabelVerb is the request's verb.
	LabelVerb = "trail.minik.dev/verb"
)

// Record is one request that asked the API server to change an object, as
// the server answered it. Its namespace is the object's (a write of a
// cluster-scoped object has none and is listed only across namespaces);
// its name is the trail's sequence number, zero-padded, so names sort in
// the order the writes were answered.
type Record struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// User is whom the request acted as; empty when it was not
	// authenticated.
	User string `json:"user,omitempty"`
	// Groups are the user's groups.
	Groups []string `json:"groups,omitempty"`
	// UserAgent is the client's User-Agent.
	UserAgent string `json:"userAgent,omitempty"`
	// Verb is create, update, patch, delete or deletecollection.
	Verb string `json:"verb"`
	// ObjectRef is the object written.
	ObjectRef ObjectRef `json:"objectRef"`
	// Owner is the object's controller owner reference after the write.
	Owner *metav1.OwnerReference `json:"owner,omitempty"`
	// Code is the response's status code.
	Code int32 `json:"code"`
	// Reason and Message are the Status of a failed request.
	Reason  metav1.StatusReason `json:"reason,omitempty"`
	Message string              `json:"message,omitempty"`
	// Time is when the request arrived.
	Time metav1.MicroTime `json:"time"`
	// Manager is the field manager whose fields are in Fields.
	Manager string `json:"manager,omitempty"`
	// Fields are the fields that manager owns after the write (the
	// object's managedFields entry for it), a managedFields-style set.
	Fields *metav1.FieldsV1 `json:"fields,omitempty"`
	// Deliveries are the watches the change was sent to, first per
	// identity, in order.
	Deliveries []Delivery `json:"deliveries,omitempty"`
}

// Delivery is a change sent to one identity's watch.
type Delivery struct {
	User string           `json:"user"`
	Time metav1.MicroTime `json:"time"`
}

// ObjectRef names the object a request wrote.
type ObjectRef struct {
	APIGroup        string    `json:"apiGroup,omitempty"`
	APIVersion      string    `json:"apiVersion,omitempty"`
	Resource        string    `json:"resource"`
	Subresource     string    `json:"subresource,omitempty"`
	Namespace       string    `json:"namespace,omitempty"`
	Name            string    `json:"name,omitempty"`
	UID             types.UID `json:"uid,omitempty"`
	ResourceVersion string    `json:"resourceVersion,omitempty"`
	Generation      int64     `json:"generation,omitempty"`
}

// RecordList is a list of Records.
type RecordList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Record `json:"items"`
}

// DeepCopyInto copies r into out.
func (r *Record) DeepCopyInto(out *Record) {
	*out = *r
	out.TypeMeta = r.TypeMeta
	r.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if r.Groups != nil {
		out.Groups = append([]string(nil), r.Groups...)
	}
	if r.Owner != nil {
		out.Owner = r.Owner.DeepCopy()
	}
	if r.Fields != nil {
		out.Fields = r.Fields.DeepCopy()
	}
	if r.Deliveries != nil {
		out.Deliveries = append([]Delivery(nil), r.Deliveries...)
	}
}

// DeepCopy returns a copy of r.
func (r *Record) DeepCopy() *Record {
	if r == nil {
		return nil
	}
	out := new(Record)
	r.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (r *Record) DeepCopyObject() runtime.Object { return r.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *RecordList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &RecordList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Record, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// ResourceLabel is how LabelResource names a group's resource.
func ResourceLabel(group, resource string) string {
	if group == "" {
		return resource
	}
	return fmt.Sprintf("%s.%s", resource, group)
}
