package node_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/auth"
	"minik/internal/auth/node"
)

// webPod is demo/web bound to nodeName, referencing a secret volume, a
// configmap in its environment, a claim and its service account.
func webPod(nodeName string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web"},
		Spec: corev1.PodSpec{
			NodeName:           nodeName,
			ServiceAccountName: "web",
			Volumes: []corev1.Volume{
				{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tls"}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
			},
			Containers: []corev1.Container{{Name: "web", Env: []corev1.EnvVar{{Name: "MODE", ValueFrom: &corev1.EnvVarSource{
				ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "mode"},
			}}}}},
		},
	}
}

func TestGraphRelatesWhatPodsReference(t *testing.T) {
	g := node.NewGraph()
	g.AddPod(webPod("n1"))
	g.AddPV(&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"}, Spec: corev1.PersistentVolumeSpec{
		ClaimRef: &corev1.ObjectReference{Namespace: "demo", Name: "data"},
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
			Driver: "d", VolumeHandle: "h", NodeStageSecretRef: &corev1.SecretReference{Namespace: "storage", Name: "creds"},
		}},
	}})
	cases := []struct {
		name       string
		node       string
		kind       node.Kind
		ns, object string
		want       bool
	}{
		{"its pod's secret volume", "n1", node.Secret, "demo", "tls", true},
		{"its pod's configmap env", "n1", node.ConfigMap, "demo", "settings", true},
		{"its pod's claim", "n1", node.PersistentVolumeClaim, "demo", "data", true},
		{"its pod's ephemeral claim", "n1", node.PersistentVolumeClaim, "demo", "web-scratch", true},
		{"the volume bound to its pod's claim", "n1", node.PersistentVolume, "", "pv-1", true},
		{"the secret of that volume", "n1", node.Secret, "storage", "creds", true},
		{"its pod's service account", "n1", node.ServiceAccount, "demo", "web", true},
		{"a secret of the same name elsewhere", "n1", node.Secret, "other", "tls", false},
		{"a secret nobody references", "n1", node.Secret, "demo", "db", false},
		{"a configmap by a secret's name", "n1", node.ConfigMap, "demo", "tls", false},
		{"another node, the same secret", "n2", node.Secret, "demo", "tls", false},
		{"another node, the volume", "n2", node.PersistentVolume, "", "pv-1", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := g.Related(c.node, c.kind, c.ns, c.object); got != c.want {
				t.Fatalf("Related(%s, %v, %s/%s) = %v", c.node, c.kind, c.ns, c.object, got)
			}
		})
	}
}

func TestGraphFollowsPodUpdatesAndDeletes(t *testing.T) {
	g := node.NewGraph()
	pending := webPod("")
	g.AddPod(pending)
	if g.Related("n1", node.Secret, "demo", "tls") {
		t.Fatal("an unbound pod relates its secret")
	}
	if pods, _ := g.Size(); pods != 0 {
		t.Fatalf("the graph holds %d unbound pods", pods)
	}
	g.AddPod(webPod("n1"))
	if !g.Related("n1", node.Secret, "demo", "tls") {
		t.Fatal("a bound pod does not relate its secret")
	}
	// A second pod on n1 with the same secret keeps it when the first goes.
	other := webPod("n1")
	other.Name = "web-2"
	g.AddPod(other)
	g.DeletePod("demo", "web")
	if !g.Related("n1", node.Secret, "demo", "tls") {
		t.Fatal("the secret went with one of the two pods using it")
	}
	// The pod no longer mounts the secret: the update drops it.
	changed := other.DeepCopy()
	changed.Spec.Volumes = nil
	g.AddPod(changed)
	if g.Related("n1", node.Secret, "demo", "tls") || g.Related("n1", node.PersistentVolumeClaim, "demo", "data") {
		t.Fatal("an update did not drop the references it removed")
	}
	if !g.Related("n1", node.ConfigMap, "demo", "settings") {
		t.Fatal("an update dropped a reference it kept")
	}
	g.DeletePod("demo", "web-2")
	if g.Related("n1", node.ConfigMap, "demo", "settings") {
		t.Fatal("a deleted pod still relates its configmap")
	}
	if pods, _ := g.Size(); pods != 0 {
		t.Fatalf("the graph holds %d pods after every delete", pods)
	}
	mirror := webPod("n1")
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	g.AddPod(mirror)
	if g.Related("n1", node.Secret, "demo", "tls") {
		t.Fatal("a mirror pod relates a secret")
	}
}

func TestAuthorizerAnswersFromTheGraph(t *testing.T) {
	g := node.NewGraph()
	g.AddPod(webPod("n1"))
	a := node.NewAuthorizer(g)
	res := func(verb, resource, sub, ns, name string) auth.Attributes {
		return auth.Attributes{User: n1, Verb: verb, IsResource: true, Resource: resource, Subresource: sub, Namespace: ns, Name: name}
	}
	noRelation := "no relationship found between node 'n1' and this object"
	cases := []struct {
		name   string
		attrs  auth.Attributes
		allow  bool
		reason string
	}{
		{"gets its pod's secret", res("get", "secrets", "", "demo", "tls"), true, ""},
		{"watches its pod's secret by name", res("watch", "secrets", "", "demo", "tls"), true, ""},
		{"gets another secret", res("get", "secrets", "", "demo", "db"), false, noRelation},
		{"lists secrets", res("list", "secrets", "", "demo", ""), false, "No Object name found"},
		{"lists secrets of every namespace", res("list", "secrets", "", "", ""), false, "can only read namespaced object of this type"},
		{"updates its pod's secret", res("update", "secrets", "", "demo", "tls"), false, "can only read resources of this type"},
		{"gets its pod's configmap", res("get", "configmaps", "", "demo", "settings"), true, ""},
		{"gets its pod's claim", res("get", "persistentvolumeclaims", "", "demo", "data"), true, ""},
		{"lists claims", res("list", "persistentvolumeclaims", "", "demo", ""), false, "can only get individual resources of this type"},
		{"updates its pod's claim's status", res("patch", "persistentvolumeclaims", "status", "demo", "data"), true, ""},
		{"gets an unbound volume", res("get", "persistentvolumes", "", "", "pv-9"), false, noRelation},
		{"creates a token for its pod's service account", res("create", "serviceaccounts", "token", "demo", "web"), true, ""},
		{"creates a token for another service account", res("create", "serviceaccounts", "token", "demo", "default"), false, noRelation},
		{"gets a service account", res("get", "serviceaccounts", "", "demo", "web"), false, "can only create tokens for individual service accounts"},
		{"reads pods", res("list", "pods", "", "", ""), true, ""},
		{"gets its lease", auth.Attributes{User: n1, Verb: "get", IsResource: true, APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "kube-node-lease", Name: "n1"}, true, ""},
		{"gets its CSINode", auth.Attributes{User: n1, Verb: "get", IsResource: true, APIGroup: "storage.k8s.io", Resource: "csinodes", Name: "n1"}, true, ""},
		{"updates another CSINode", auth.Attributes{User: n1, Verb: "update", IsResource: true, APIGroup: "storage.k8s.io", Resource: "csinodes", Name: "n2"}, false,
			"can only access CSINode with the same name as the requesting node"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, reason, err := a.Authorize(context.Background(), c.attrs)
			if err != nil {
				t.Fatal(err)
			}
			if (d == auth.Allow) != c.allow || reason != c.reason {
				t.Fatalf("decision %v, reason %q; want allow=%v, reason %q", d, reason, c.allow, c.reason)
			}
		})
	}
}

// BenchmarkGraph measures a pod's update into the graph and an
// authorization lookup, on a graph of 10,000 pods over 100 nodes.
func BenchmarkGraph(b *testing.B) {
	g := node.NewGraph()
	pods := make([]*corev1.Pod, 10000)
	for i := range pods {
		p := webPod(fmt.Sprintf("n%d", i%100))
		p.Name = fmt.Sprintf("web-%d", i)
		pods[i] = p
		g.AddPod(p)
	}
	b.Run("AddPod", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			g.AddPod(pods[i%len(pods)])
		}
	})
	b.Run("Related", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			g.Related(fmt.Sprint("n", i%100), node.Secret, "demo", "tls")
		}
	})
}
