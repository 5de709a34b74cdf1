package rbac_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"

	"minik/internal/auth"
	"minik/internal/auth/node"
	"minik/internal/auth/rbac"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fixture is the bootstrap policy (aggregated) plus testdata/fixtures.yaml,
// behind the authorizer chain minikd uses: system:masters, nodes, RBAC.
type fixture struct {
	rbac  *rbac.Authorizer
	chain auth.Union
	// The caches behind the listers; tests may add to them.
	roles, roleBindings, clusterRoles, clusterRoleBindings cache.Indexer
}

// add adds RBAC objects to the fixture's caches.
func (f *fixture) add(t testing.TB, objs ...any) {
	t.Helper()
	for _, o := range objs {
		var err error
		switch o.(type) {
		case *rbacv1.Role:
			err = f.roles.Add(o)
		case *rbacv1.RoleBinding:
			err = f.roleBindings.Add(o)
		case *rbacv1.ClusterRole:
			err = f.clusterRoles.Add(o)
		case *rbacv1.ClusterRoleBinding:
			err = f.clusterRoleBindings.Add(o)
		default:
			t.Fatalf("not an RBAC object: %T", o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	idx := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	roles, roleBindings, clusterRoles, clusterRoleBindings := idx(), idx(), idx(), idx()
	var crs []*rbacv1.ClusterRole
	for _, r := range rbac.ClusterRoles() {
		crs = append(crs, r.DeepCopy())
	}
	add := func(i cache.Indexer, obj any) {
		if err := i.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range rbac.ClusterRoleBindings() {
		add(clusterRoleBindings, b.DeepCopy())
	}
	data, err := os.ReadFile(filepath.Join("testdata", "fixtures.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("fixture %q: %v", doc, err)
		}
		switch o := obj.(type) {
		case *rbacv1.Role:
			add(roles, o)
		case *rbacv1.RoleBinding:
			add(roleBindings, o)
		case *rbacv1.ClusterRole:
			crs = append(crs, o)
		case *rbacv1.ClusterRoleBinding:
			add(clusterRoleBindings, o)
		}
	}
	if _, err := rbac.AggregateAll(crs); err != nil {
		t.Fatal(err)
	}
	for _, r := range crs {
		add(clusterRoles, r)
	}
	a := rbac.NewFromListers(rbaclisters.NewRoleLister(roles), rbaclisters.NewRoleBindingLister(roleBindings),
		rbaclisters.NewClusterRoleLister(clusterRoles), rbaclisters.NewClusterRoleBindingLister(clusterRoleBindings))
	// Node n1 runs demo/web-1, which mounts the secret "token".
	graph := node.NewGraph()
	graph.AddPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web-1"}, Spec: corev1.PodSpec{
		NodeName: "n1",
		Volumes:  []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "token"}}}},
	}})
	return &fixture{rbac: a, chain: auth.Union{auth.MastersAuthorizer{}, node.NewAuthorizer(graph), a},
		roles: roles, roleBindings: roleBindings, clusterRoles: clusterRoles, clusterRoleBindings: clusterRoleBindings}
}

func user(name string, groups ...string) *auth.User {
	return &auth.User{Name: name, Groups: append(groups, auth.GroupAuthenticated)}
}

var (
	viewer      = user("viewer")
	editor      = user("editor")
	nsadmin     = user("nsadmin")
	reader      = user("rita", "readers")
	logger      = user("system:serviceaccount:demo:logger", "system:serviceaccounts", "system:serviceaccounts:demo")
	deployer    = user("system:serviceaccount:ci:deployer", "system:serviceaccounts", "system:serviceaccounts:ci")
	auditor     = user("alice", "auditors")
	prometheus  = user("prometheus")
	ghost       = user("ghost")
	anonymous   = auth.Anonymous()
	someone     = user("someone")
	admin       = user("minik-admin", auth.GroupMasters)
	ctrlManager = user(auth.UserControllerManager)
	scheduler   = user(auth.UserScheduler)
	node1       = user("system:node:n1", auth.GroupNodes)
	appsOwner   = user("apps-owner")
	// kube-controller-manager runs the taint eviction controller with
	// node-controller's service account credentials (kube has no role of its own).
	taintEvict = user("system:serviceaccount:kube-system:node-controller", "system:serviceaccounts", "system:serviceaccounts:kube-system")
	// minikd runs each controller as its own service account, as
	// kube-controller-manager --use-service-account-credentials does.
	deploymentCtrl = user("system:serviceaccount:kube-system:deployment-controller", "system:serviceaccounts", "system:serviceaccounts:kube-system")
	gcCtrl         = user("system:serviceaccount:kube-system:generic-garbage-collector", "system:serviceaccounts", "system:serviceaccounts:kube-system")
	crdCtrl        = user("system:serviceaccount:kube-system:crd-controller", "system:serviceaccounts", "system:serviceaccounts:kube-system")
)

func res(u *auth.User, verb, group, resource, ns, name string) auth.Attributes {
	resource, sub, _ := strings.Cut(resource, "/")
	return auth.Attributes{User: u, Verb: verb, IsResource: true, APIGroup: group, APIVersion: "v1",
		Resource: resource, Subresource: sub, Namespace: ns, Name: name}
}

func path(u *auth.User, verb, p string) auth.Attributes {
	return auth.Attributes{User: u, Verb: verb, Path: p}
}

// decisionCases are the golden RBAC decisions: each reads as a sentence.
var decisionCases = []struct {
	name  string
	attrs auth.Attributes
}{
	{"a viewer in demo gets a pod", res(viewer, "get", "", "pods", "demo", "web")},
	{"a viewer in demo lists pods", res(viewer, "list", "", "pods", "demo", "")},
	{"a viewer in demo creates a pod", res(viewer, "create", "", "pods", "demo", "")},
	{"a viewer in demo reads a secret", res(viewer, "get", "", "secrets", "demo", "token")},
	{"a viewer in demo lists pods in another namespace", res(viewer, "list", "", "pods", "other", "")},
	{"a viewer in demo lists pods in every namespace", res(viewer, "list", "", "pods", "", "")},
	{"a viewer in demo reads a pod's log", res(viewer, "get", "", "pods/log", "demo", "web")},
	{"a viewer in demo reads a deployment's scale", res(viewer, "get", "apps", "deployments/scale", "demo", "web")},
	{"a viewer in demo updates a deployment's scale", res(viewer, "update", "apps", "deployments/scale", "demo", "web")},
	{"a viewer in demo lists widgets aggregated into view", res(viewer, "list", "example.com", "widgets", "demo", "")},
	{"an editor in demo creates a deployment", res(editor, "create", "apps", "deployments", "demo", "")},
	{"an editor in demo reads a secret", res(editor, "get", "", "secrets", "demo", "token")},
	{"an editor in demo binds a role", res(editor, "create", "rbac.authorization.k8s.io", "rolebindings", "demo", "")},
	{"an editor in demo impersonates a service account", res(editor, "impersonate", "", "serviceaccounts", "demo", "default")},
	{"an editor in demo requests a service account token", res(editor, "create", "", "serviceaccounts/token", "demo", "default")},
	{"a namespace admin creates a rolebinding", res(nsadmin, "create", "rbac.authorization.k8s.io", "rolebindings", "demo", "")},
	{"a namespace admin binds the view role without the bind verb", res(nsadmin, "bind", "rbac.authorization.k8s.io", "clusterroles", "demo", "view")},
	{"a namespace admin lists pods cluster-wide", res(nsadmin, "list", "", "pods", "", "")},
	{"a reader gets the config map named in its role", res(reader, "get", "", "configmaps", "demo", "app-config")},
	{"a reader gets another config map", res(reader, "get", "", "configmaps", "demo", "db-config")},
	{"a reader lists config maps", res(reader, "list", "", "configmaps", "demo", "")},
	{"a service account bound without a namespace reads logs in the binding's", res(logger, "get", "", "pods/log", "demo", "web")},
	{"a service account bound without a namespace gets a pod", res(logger, "get", "", "pods", "demo", "web")},
	{"a service account of another namespace patches a scale", res(deployer, "patch", "apps", "deployments/scale", "demo", "web")},
	{"a service account of another namespace patches a deployment", res(deployer, "patch", "apps", "deployments", "demo", "web")},
	{"an auditor reads any status through */status", res(auditor, "get", "apps", "deployments/status", "demo", "web")},
	{"an auditor reads a deployment", res(auditor, "get", "apps", "deployments", "demo", "web")},
	{"a user with * in apps deletes a replica set", res(appsOwner, "delete", "apps", "replicasets", "demo", "web-1")},
	{"a user with * in apps scales a deployment", res(appsOwner, "update", "apps", "deployments/scale", "demo", "web")},
	{"a user with * in apps creates a config map", res(appsOwner, "create", "", "configmaps", "demo", "")},
	{"prometheus reads /metrics", path(prometheus, "get", "/metrics")},
	{"prometheus reads a path under /logs/*", path(prometheus, "get", "/logs/kube-apiserver.log")},
	{"prometheus reads /logs itself", path(prometheus, "get", "/logs")},
	{"prometheus posts to /metrics", path(prometheus, "post", "/metrics")},
	{"a user bound to a missing role gets a pod", res(ghost, "get", "", "pods", "demo", "web")},
	{"anyone authenticated reads /api", path(someone, "get", "/api")},
	{"anyone authenticated asks what it may do", res(someone, "create", "authorization.k8s.io", "selfsubjectaccessreviews", "", "")},
	{"anyone authenticated asks who it is", res(someone, "create", "authentication.k8s.io", "selfsubjectreviews", "", "")},
	{"anyone authenticated lists namespaces", res(someone, "list", "", "namespaces", "", "")},
	{"the anonymous user reads /healthz", path(anonymous, "get", "/healthz")},
	{"the anonymous user reads /api", path(anonymous, "get", "/api")},
	{"the anonymous user lists pods", res(anonymous, "list", "", "pods", "demo", "")},
	{"a member of system:masters deletes a node", res(admin, "delete", "", "nodes", "", "n1")},
	{"the controller manager creates a replica set", res(ctrlManager, "create", "apps", "replicasets", "demo", "")},
	{"the controller manager creates a controller's service account", res(ctrlManager, "create", "", "serviceaccounts", "kube-system", "")},
	{"the controller manager asks for a controller's token", res(ctrlManager, "create", "", "serviceaccounts/token", "kube-system", "deployment-controller")},
	{"the deployment controller creates a replica set", res(deploymentCtrl, "create", "apps", "replicasets", "demo", "")},
	{"the deployment controller records an event", res(deploymentCtrl, "create", "", "events", "demo", "")},
	{"the deployment controller creates a pod", res(deploymentCtrl, "create", "", "pods", "demo", "")},
	{"the garbage collector deletes any object", res(gcCtrl, "delete", "networking.k8s.io", "ingresses", "demo", "web")},
	{"the crd controller updates a definition's status", res(crdCtrl, "update", "apiextensions.k8s.io", "customresourcedefinitions/status", "", "crontabs.example.com")},
	{"the crd controller deletes the custom resources of a namespace", res(crdCtrl, "deletecollection", "example.com", "crontabs", "demo", "")},
	{"the controller manager watches secrets", res(ctrlManager, "watch", "", "secrets", "", "")},
	{"the controller manager renews its lease", res(ctrlManager, "update", "coordination.k8s.io", "leases", "kube-system", "kube-controller-manager")},
	{"the controller manager updates another lease", res(ctrlManager, "update", "coordination.k8s.io", "leases", "kube-system", "kube-scheduler")},
	{"the controller manager finalizes a namespace", res(ctrlManager, "update", "", "namespaces/finalize", "", "demo")},
	{"the controller manager deletes any object", res(ctrlManager, "delete", "networking.k8s.io", "ingresses", "demo", "web")},
	{"the controller manager creates a cluster role", res(ctrlManager, "create", "rbac.authorization.k8s.io", "clusterroles", "", "")},
	{"the taint eviction controller, as node-controller, marks a pod a disruption target", res(taintEvict, "patch", "", "pods/status", "demo", "web-1")},
	{"the taint eviction controller, as node-controller, deletes a pod", res(taintEvict, "delete", "", "pods", "demo", "web-1")},
	{"the taint eviction controller, as node-controller, creates a node", res(taintEvict, "create", "", "nodes", "", "")},
	{"the scheduler binds a pod", res(scheduler, "create", "", "pods/binding", "demo", "web-1")},
	{"the scheduler updates a pod", res(scheduler, "update", "", "pods", "demo", "web-1")},
	{"the scheduler records a scheduling failure", res(scheduler, "patch", "", "pods/status", "demo", "web-1")},
	{"a node renews its own lease", res(node1, "update", "coordination.k8s.io", "leases", "kube-node-lease", "n1")},
	{"a node updates another node's lease", res(node1, "update", "coordination.k8s.io", "leases", "kube-node-lease", "n2")},
	{"a node creates a lease outside kube-node-lease", res(node1, "create", "coordination.k8s.io", "leases", "default", "")},
	{"a node lists leases", res(node1, "list", "coordination.k8s.io", "leases", "kube-node-lease", "")},
	{"a node reports its status", res(node1, "patch", "", "nodes/status", "", "n1")},
	{"a node reports a pod's status", res(node1, "update", "", "pods/status", "demo", "web-1")},
	{"a node binds a pod", res(node1, "create", "", "pods/binding", "demo", "web-1")},
	{"a node reads a secret its pod mounts", res(node1, "get", "", "secrets", "demo", "token")},
	{"a node reads a secret none of its pods references", res(node1, "get", "", "secrets", "demo", "other")},
	{"a node lists secrets", res(node1, "list", "", "secrets", "demo", "")},
	{"a node deletes a deployment", res(node1, "delete", "apps", "deployments", "demo", "web")},
}

// forbiddenMessage is the Status message the API answers a denied request
// with.
func forbiddenMessage(a auth.Attributes, reason string) string {
	msg := auth.ForbiddenMessage(a)
	if reason != "" {
		msg += ": " + reason
	}
	gr := schema.GroupResource{}
	if a.IsResource {
		gr = schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}
	}
	return apierrors.NewForbidden(gr, a.Name, errors.New(msg)).Error()
}

func TestGoldenDecisions(t *testing.T) {
	f := newFixture(t)
	var b strings.Builder
	for _, c := range decisionCases {
		d, reason, err := f.chain.Authorize(context.Background(), c.attrs)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		switch d {
		case auth.Allow:
			fmt.Fprintf(&b, "%s\n\tallow: %s\n", c.name, reason)
		default:
			fmt.Fprintf(&b, "%s\n\tforbidden: %s\n", c.name, forbiddenMessage(c.attrs, reason))
		}
	}
	golden := filepath.Join("testdata", "decisions.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("decisions differ from %s at line %d:\n got %s\nwant %s\n(run with -update to accept)", golden, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("decisions differ from %s in length (run with -update to accept)", golden)
	}
}
