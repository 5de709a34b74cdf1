package node_test

import (
	"context"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"minik/internal/admission"
	"minik/internal/auth"
	"minik/internal/auth/node"
)

var n1 = &auth.User{Name: "system:node:n1", Groups: []string{auth.GroupNodes, auth.GroupAuthenticated}}

func TestAuthorizerIgnoresOtherUsers(t *testing.T) {
	a := node.NewAuthorizer(node.NewGraph())
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

// podMap is a PodGetter over fixed pods.
type podMap map[string]*corev1.Pod

func (m podMap) GetPod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	if p, ok := m[ns+"/"+name]; ok {
		return p, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("pods"), name)
}

func TestRestriction(t *testing.T) {
	mine, theirs := pod("web-1", "n1"), pod("web-2", "n2")
	mine.UID, theirs.UID = "uid-1", "uid-2"
	pods := podMap{"demo/web-1": mine, "demo/web-2": theirs}
	token := func(kind, name string, uid types.UID) *authenticationv1.TokenRequest {
		tr := &authenticationv1.TokenRequest{}
		if kind != "" {
			tr.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: kind, Name: name, UID: uid}
		}
		return tr
	}
	labelled := func(labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	own := labelled(map[string]string{corev1.LabelHostname: "n1", "team": "a"})
	lease := func(ns, name string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	mirror := pod("static", "n1")
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	yes := true
	mirror.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "n1", Controller: &yes}}
	unowned := pod("static", "n1")
	unowned.Annotations = mirror.Annotations
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
		{"a node creates a mirror pod its Node does not own", attrs(admission.Create, "pods", "", "demo", "static", unowned, nil),
			`pods "static" is forbidden: node "n1" can only create pods with an owner reference set to itself`},
		{"a node writes an event", attrs(admission.Create, "events", "", "demo", "e", &corev1.Event{}, nil), ""},
		{"a node deletes another node's pod it names only", attrs(admission.Delete, "pods", "", "demo", "web-2", nil, nil),
			`pods "web-2" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself`},
		{"a node updates a pod's spec", attrs(admission.Update, "pods", "", "demo", "web-1", pod("web-1", "n1"), pod("web-1", "n1")),
			`pods "web-1" is forbidden: unexpected operation "UPDATE", node "n1" can only create and delete mirror pods`},
		{"a node relabels its pod through status", attrs(admission.Update, "pods", "status", "demo", "web-1",
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Labels: map[string]string{"a": "b"}}, Spec: corev1.PodSpec{NodeName: "n1"}}, pod("web-1", "n1")),
			`pods "web-1" is forbidden: node "n1" cannot update labels through pod status`},
		{"a node evicts its pod", attrs(admission.Create, "pods", "eviction", "demo", "web-1", &policyv1.Eviction{}, nil), ""},
		{"a node evicts another node's pod", attrs(admission.Create, "pods", "eviction", "demo", "web-2", &policyv1.Eviction{}, nil),
			`pods "web-2" is forbidden: node n1 can only evict pods with spec.nodeName set to itself`},
		{"a node writes a pod's binding", attrs(admission.Create, "pods", "binding", "demo", "web-1", &corev1.Binding{}, nil),
			`pods "web-1" is forbidden: unexpected pod subresource "binding", only 'status' and 'eviction' are allowed`},
		{"a node registers with a node-restriction label", attrs(admission.Create, "nodes", "", "", "n1",
			labelled(map[string]string{"node-restriction.kubernetes.io/x": "y", "team": "a"}), nil),
			`nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: node-restriction.kubernetes.io/x`},
		{"a node registers with a node-role label", attrs(admission.Create, "nodes", "", "", "n1",
			labelled(map[string]string{"node-role.kubernetes.io/control-plane": ""}), nil),
			`nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: node-role.kubernetes.io/control-plane`},
		{"a node registers with the kubelet's labels", attrs(admission.Create, "nodes", "", "", "n1",
			labelled(map[string]string{corev1.LabelHostname: "n1", corev1.LabelTopologyZone: "z", "node.kubernetes.io/exclude-from-external-load-balancers": "", "kubelet.kubernetes.io/x": "y"}), nil), ""},
		{"a node labels itself node-restriction.kubernetes.io/x", attrs(admission.Update, "nodes", "", "", "n1",
			labelled(map[string]string{corev1.LabelHostname: "n1", "team": "a", "node-restriction.kubernetes.io/x": "y"}), own),
			`nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/x`},
		{"a node removes a label kube reserves", attrs(admission.Update, "nodes", "", "", "n1",
			labelled(map[string]string{"team": "a"}), labelled(map[string]string{"team": "a", "example.k8s.io/tier": "1"})),
			`nodes "n1" is forbidden: is not allowed to modify labels: example.k8s.io/tier`},
		{"a node changes its own hostname label and a label of its own", attrs(admission.Update, "nodes", "", "", "n1",
			labelled(map[string]string{corev1.LabelHostname: "other", "team": "b"}), own), ""},
		{"a node removes its taint", attrs(admission.Update, "nodes", "", "", "n1", own,
			labelled(own.Labels, corev1.Taint{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule})),
			`nodes "n1" is forbidden: node "n1" is not allowed to modify taints`},
		{"a node asks a token bound to its pod", attrs(admission.Create, "serviceaccounts", "token", "demo", "default", token("Pod", "web-1", "uid-1"), nil), ""},
		{"a node asks an unbound token", attrs(admission.Create, "serviceaccounts", "token", "demo", "default", token("", "", ""), nil),
			`serviceaccounts "default" is forbidden: node requested token not bound to a pod`},
		{"a node asks a token bound to a secret", attrs(admission.Create, "serviceaccounts", "token", "demo", "default", token("Secret", "s", "u"), nil),
			`serviceaccounts "default" is forbidden: node requested token not bound to a pod`},
		{"a node asks a token bound to a pod without its uid", attrs(admission.Create, "serviceaccounts", "token", "demo", "default", token("Pod", "web-1", ""), nil),
			`serviceaccounts "default" is forbidden: node requested token with a pod binding without a uid`},
		{"a node asks a token bound to a recreated pod", attrs(admission.Create, "serviceaccounts", "token", "demo", "default", token("Pod", "web-1", "old"), nil),
			`serviceaccounts "default" is forbidden: the UID in the bound object reference (old) does not match the UID in record. The object might have been deleted and then recreated`},
		{"a node asks a token bound to another node's pod", attrs(admission.Create, "serviceaccounts", "token", "demo", "default", token("Pod", "web-2", "uid-2"), nil),
			`serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node`},
		{"a node asks a token bound to a pod that does not exist", attrs(admission.Create, "serviceaccounts", "token", "demo", "default", token("Pod", "gone", "u"), nil),
			`pods "gone" not found`},
		{"a node reports a claim's capacity", attrs(admission.Update, "persistentvolumeclaims", "status", "demo", "data",
			&corev1.PersistentVolumeClaim{Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}}},
			&corev1.PersistentVolumeClaim{Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}), ""},
		{"a node writes a claim", attrs(admission.Update, "persistentvolumeclaims", "", "demo", "data", &corev1.PersistentVolumeClaim{}, &corev1.PersistentVolumeClaim{}),
			`persistentvolumeclaims "data" is forbidden: may only update PVC status`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := node.Restriction{Pods: pods}.Validate(context.Background(), c.attrs)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || err.Error() != c.want):
				t.Fatalf("err = %v\nwant %s", err, c.want)
			}
		})
	}
}

func TestRestrictionKeepsClaimsButTheirStatus(t *testing.T) {
	old := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "data"}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}
	lost := old.DeepCopy()
	lost.Status.Phase = corev1.ClaimLost
	err := node.Restriction{}.Validate(context.Background(), attrs(admission.Update, "persistentvolumeclaims", "status", "demo", "data", lost, old))
	prefix := `persistentvolumeclaims "data" is forbidden: node "n1" is not allowed to update fields other than status.capacity and status.conditions: `
	if !apierrors.IsForbidden(err) || !strings.HasPrefix(err.Error(), prefix) {
		t.Fatalf("err = %v", err)
	}
}
