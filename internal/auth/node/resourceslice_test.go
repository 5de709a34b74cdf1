package node_test

import (
	"context"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/admission"
	"minik/internal/auth"
	"minik/internal/auth/node"
)

func slice(name, nodeName string) *resourcev1.ResourceSlice {
	s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if nodeName != "" {
		s.Spec.NodeName = &nodeName
	}
	return s
}

// TestResourceSlices: a node reads and writes the ResourceSlices naming
// it, lists them only by spec.nodeName, and creates or deletes only its
// own, as kube's Node authorizer and NodeRestriction allow.
func TestResourceSlices(t *testing.T) {
	g := node.NewGraph()
	g.AddSlice(slice("mine", "n1"))
	g.AddSlice(slice("theirs", "n2"))
	g.AddSlice(slice("network", ""))
	a := node.NewAuthorizer(g)
	for _, tc := range []struct {
		verb, name, fieldSelector, sub string
		want                           auth.Decision
		reason                         string
	}{
		{verb: "create", want: auth.Allow},
		{verb: "get", name: "mine", want: auth.Allow},
		{verb: "update", name: "mine", want: auth.Allow},
		{verb: "delete", name: "theirs", reason: "no relationship found between node 'n1' and this object"},
		{verb: "get", name: "network", reason: "no relationship found between node 'n1' and this object"},
		{verb: "list", fieldSelector: "spec.nodeName=n1", want: auth.Allow},
		{verb: "deletecollection", fieldSelector: "spec.driver=gpu.example.com,spec.nodeName=n1", want: auth.Allow},
		{verb: "watch", fieldSelector: "spec.nodeName=n2", reason: "can only list/watch/deletecollection resourceslices with nodeName field selector"},
		{verb: "list", reason: "can only list/watch/deletecollection resourceslices with nodeName field selector"},
		{verb: "get", name: "mine", sub: "status", reason: "cannot authorize ResourceSlice subresources"},
		{verb: "escalate", name: "mine", reason: "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection"},
	} {
		d, reason, err := a.Authorize(context.Background(), auth.Attributes{User: n1, Verb: tc.verb, IsResource: true,
			APIGroup: "resource.k8s.io", Resource: "resourceslices", Subresource: tc.sub, Name: tc.name, FieldSelector: tc.fieldSelector})
		if d != tc.want || reason != tc.reason || err != nil {
			t.Errorf("%s %q %q: %v %q %v; want %v %q", tc.verb, tc.name, tc.fieldSelector, d, reason, err, tc.want, tc.reason)
		}
	}
	g.DeleteSlice("mine")
	if d, _, _ := a.Authorize(context.Background(), auth.Attributes{User: n1, Verb: "get", IsResource: true, APIGroup: "resource.k8s.io", Resource: "resourceslices", Name: "mine"}); d != auth.NoOpinion {
		t.Errorf("a deleted slice: %v", d)
	}

	gvr := resourcev1.SchemeGroupVersion.WithResource("resourceslices")
	for _, tc := range []struct {
		op       admission.Operation
		obj, old *resourcev1.ResourceSlice
		want     string
	}{
		{op: admission.Create, obj: slice("mine", "n1")},
		{op: admission.Create, obj: slice("theirs", "n2"), want: `resourceslices.resource.k8s.io "theirs" is forbidden: can only create ResourceSlice with the same NodeName as the requesting node`},
		{op: admission.Create, obj: slice("network", ""), want: `resourceslices.resource.k8s.io "network" is forbidden: can only create ResourceSlice with the same NodeName as the requesting node`},
		{op: admission.Update, obj: slice("theirs", "n2"), old: slice("theirs", "n2")},
		{op: admission.Delete, old: slice("theirs", "n2"), want: `resourceslices.resource.k8s.io "theirs" is forbidden: can only delete ResourceSlice with the same NodeName as the requesting node`},
		{op: admission.Delete, old: slice("mine", "n1")},
	} {
		at := &admission.Attributes{Operation: tc.op, Resource: gvr, User: n1}
		if tc.obj != nil {
			at.Object, at.Name = tc.obj, tc.obj.Name
		}
		if tc.old != nil {
			at.OldObject, at.Name = tc.old, tc.old.Name
		}
		got := ""
		if err := (node.Restriction{}).Validate(context.Background(), at); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s %s: %q; want %q", tc.op, at.Name, got, tc.want)
		}
	}
}
