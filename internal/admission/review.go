package admission

import (
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// EncodeObject returns an object's JSON with its apiVersion and kind, as
// admission webhooks and policies see it. obj is not changed.
func EncodeObject(obj runtime.Object, gvk schema.GroupVersionKind) ([]byte, error) {
	if obj == nil {
		return nil, nil
	}
	c := obj.DeepCopyObject()
	c.GetObjectKind().SetGroupVersionKind(gvk)
	data, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", gvk.Kind, err)
	}
	return data, nil
}

// EnsureUID gives a request its UID for webhooks, once.
func (a *Attributes) EnsureUID() {
	if a.UID == "" {
		a.UID = uuid.NewUUID()
	}
}

// RequestNamespace is the namespace kube's admission reports: the
// request's, or for an update or deletion of a Namespace, its name.
func (a *Attributes) RequestNamespace() string {
	if a.Namespace == "" && a.Resource.Group == "" && a.Resource.Resource == "namespaces" && a.Operation != Create {
		return a.Name
	}
	return a.Namespace
}

// AdmissionRequest builds the admission.k8s.io/v1 request a webhook
// receives, with the object and old object encoded and the options of the
// operation.
func AdmissionRequest(a *Attributes) (*admissionv1.AdmissionRequest, error) {
	a.EnsureUID()
	kind := metav1.GroupVersionKind{Group: a.Kind.Group, Version: a.Kind.Version, Kind: a.Kind.Kind}
	res := metav1.GroupVersionResource{Group: a.Resource.Group, Version: a.Resource.Version, Resource: a.Resource.Resource}
	dryRun := a.DryRun
	req := &admissionv1.AdmissionRequest{
		UID: a.UID, Kind: kind, Resource: res, SubResource: a.Subresource,
		RequestKind: &kind, RequestResource: &res, RequestSubResource: a.Subresource,
		Name: a.Name, Namespace: a.RequestNamespace(), Operation: admissionv1.Operation(a.Operation),
		UserInfo: UserInfo(a), DryRun: &dryRun,
	}
	obj, err := EncodeObject(a.Object, a.Kind)
	if err != nil {
		return nil, err
	}
	old, err := EncodeObject(a.OldObject, a.Kind)
	if err != nil {
		return nil, err
	}
	req.Object.Raw, req.OldObject.Raw = obj, old
	req.Options.Raw = optionsFor(a)
	return req, nil
}

// UserInfo is the requester as admission.k8s.io reports it.
func UserInfo(a *Attributes) authenticationv1.UserInfo {
	if a.User == nil {
		return authenticationv1.UserInfo{}
	}
	return authenticationv1.UserInfo{Username: a.User.Name, UID: a.User.UID, Groups: append([]string(nil), a.User.Groups...)}
}

// optionsFor is the JSON of the operation's options (CreateOptions,
// UpdateOptions or DeleteOptions) with its dry-run setting.
func optionsFor(a *Attributes) []byte {
	var kind string
	switch a.Operation {
	case Create:
		kind = "CreateOptions"
	case Update:
		kind = "UpdateOptions"
	case Delete:
		kind = "DeleteOptions"
	default:
		return nil
	}
	opts := map[string]any{"kind": kind, "apiVersion": "meta.k8s.io/v1"}
	if a.DryRun {
		opts["dryRun"] = []string{metav1.DryRunAll}
	}
	data, _ := json.Marshal(opts)
	return data
}
