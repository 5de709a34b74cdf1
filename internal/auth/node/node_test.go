package node_test

import (
	"context"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"minik/internal/admission"
	"minik/internal/auth"
	"minik/internal/auth/node"
)

var n1 = &auth.User{Name: "system:node:n1", Groups: []string{auth.GroupNodes, auth.GroupAuthenticated}}

func TestAuthorizerIgnoresOtherUsers(t *testing.T) {
	a := node.NewAuthorizer()
	for _, u := range []*auth.User{
		{Name: "system:node:n1"},                           // not in system:nodes
		{Name: "alice", Groups: []string{auth.GroupNodes}}, // no node name
	} {
		d, _, _ := a.Authorize(context.Background(), auth.Attributes{User: u, Verb: "get", IsResource: true, Resource: "nodes"})
		if d != auth.NoOpinion {
			t.Errorf("%s: decision %v", u.Name, d)
		}
	}
}

func pod(name, nodeName string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name}, Spec: corev1.PodSpec{NodeName: nodeName}}
}

func attrs(op admission.Operation, resource, sub, ns, name string, obj, old runtime.Object) *admission.Attributes {
	gvr := corev1.SchemeGroupVersion.WithResource(resource)
	if resource == "leases" {
		gvr = coordinationv1.SchemeGroupVersion.WithResource(resource)
	}
	return &admission.Attributes{Operation: op, Resource: gvr, Subresource: sub, Namespace: ns, Name: name, Object: obj, OldObject: old, User: n1}
}

func TestRestriction(t *testing.T) {
	lease := func(ns, name string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	mirror := pod("static", "n1")
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	cases := []struct {
		name  string
		attrs *admission.Attributes
		want  string
	}{
		{"a node registers itself", attrs(admission.Create, "nodes", "", "", "n1", &corev1.Node{}, nil), ""},
		{"a node registers another node", attrs(admission.Create, "nodes", "", "", "n2", &corev1.Node{}, nil),
			`nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"`},
		{"a node updates another node's status", attrs(admission.Update, "nodes", "status", "", "n2", &corev1.Node{}, &corev1.Node{}),
			`nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"`},
		{"a node creates its lease", attrs(admission.Create, "leases", "", "kube-node-lease", "n1", lease("kube-node-lease", "n1"), nil), ""},
		{"a node creates another node's lease", attrs(admission.Create, "leases", "", "kube-node-lease", "n2", lease("kube-node-lease", "n2"), nil),
			`leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node`},
		{"a node reports the status of its pod", attrs(admission.Update, "pods", "status", "demo", "web-1", pod("web-1", "n1"), pod("web-1", "n1")), ""},
		{"a node reports the status of another node's pod", attrs(admission.Update, "pods", "status", "demo", "web-2", pod("web-2", "n2"), pod("web-2", "n2")),
			`pods "web-2" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself`},
		{"a node deletes its pod", attrs(admission.Delete, "pods", "", "demo", "web-1", nil, pod("web-1", "n1")), ""},
		{"a node deletes another node's pod", attrs(admission.Delete, "pods", "", "demo", "web-2", nil, pod("web-2", "n2")),
			`pods "web-2" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself`},
		{"a node creates a pod that is not a mirror pod", attrs(admission.Create, "pods", "", "demo", "x", pod("x", "n1"), nil),
			`pods "x" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods`},
		{"a node creates a mirror pod of its own", attrs(admission.Create, "pods", "", "demo", "static", mirror, nil), ""},
		{"a node writes an event", attrs(admission.Create, "events", "", "demo", "e", &corev1.Event{}, nil), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := node.Restriction{}.Validate(context.Background(), c.attrs)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || err.Error() != c.want):
				t.Fatalf("err = %v\nwant %s", err, c.want)
			}
		})
	}
}
