package rbac_test

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/auth/rbac/validation"

	"minik/internal/admission"
	"minik/internal/auth"
	"minik/internal/auth/rbac"
)

func rbacAttrs(op admission.Operation, u *auth.User, resource, ns string, obj, old runtime.Object) *admission.Attributes {
	m, _ := obj.(metav1.Object)
	return &admission.Attributes{
		Operation: op, User: u, Namespace: ns, Name: m.GetName(), Object: obj, OldObject: old,
		Resource: rbacv1.SchemeGroupVersion.WithResource(resource),
	}
}

func role(ns, name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
}

func roleBinding(ns, name, kind, roleName string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: roleName},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "bob"}},
	}
}

func rule(verbs []string, groups []string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources}
}

func TestEscalationCheck(t *testing.T) {
	f := newFixture(t)
	// binder may bind cluster-admin in demo; escalator may escalate roles
	// in demo; neither holds much else.
	binder, escalator := user("binder"), user("escalator")
	f.add(t,
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "binder"}, Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"bind"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{"cluster-admin"}},
			rule([]string{"create"}, []string{rbacv1.GroupName}, "rolebindings"),
		}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "binder"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "binder"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "binder"}}},
		role("demo", "escalator", rule([]string{"escalate", "create"}, []string{rbacv1.GroupName}, "roles")),
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "escalator"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "escalator"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "escalator"}}},
	)
	check := &rbac.EscalationCheck{Authorizer: f.chain, Rules: f.rbac}
	secretsRole := role("demo", "secrets", rule([]string{"get", "list"}, []string{""}, "secrets"))
	nodesRole := role("demo", "nodes", rule([]string{"get"}, []string{""}, "nodes"), rule([]string{"create", "delete"}, []string{"apps"}, "deployments"))
	ownedOld := role("demo", "nodes", nodesRole.Rules...)
	ownedNew := ownedOld.DeepCopy()
	ownedNew.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "u1"}}
	ownedNew.Finalizers = []string{"example.com/keep"}
	aggregating := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gather"}, AggregationRule: &rbacv1.AggregationRule{
		ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"team": "a"}}},
	}}

	cases := []struct {
		name  string
		attrs *admission.Attributes
		want  string // "" means allowed
	}{
		{"a namespace admin creates a role it holds", rbacAttrs(admission.Create, nsadmin, "roles", "demo", secretsRole, nil), ""},
		{"a namespace admin creates a role granting what it does not hold", rbacAttrs(admission.Create, nsadmin, "roles", "demo", nodesRole, nil),
			`roles.rbac.authorization.k8s.io "nodes" is forbidden: user "nsadmin" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" +
				`{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}`},
		{"an editor creates a role granting what edit lacks, listing each missing permission", rbacAttrs(admission.Create, editor, "roles", "demo",
			role("demo", "rbac-writer", rule([]string{"create", "delete"}, []string{rbacv1.GroupName}, "roles", "rolebindings"), rule([]string{"get"}, []string{""}, "pods")), nil),
			`roles.rbac.authorization.k8s.io "rbac-writer" is forbidden: user "editor" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" +
				`{APIGroups:["rbac.authorization.k8s.io"], Resources:["rolebindings"], Verbs:["create" "delete"]}` + "\n" +
				`{APIGroups:["rbac.authorization.k8s.io"], Resources:["roles"], Verbs:["create" "delete"]}`},
		{"a user allowed to escalate creates any role", rbacAttrs(admission.Create, escalator, "roles", "demo", nodesRole, nil), ""},
		{"a member of system:masters creates any role", rbacAttrs(admission.Create, admin, "roles", "demo", nodesRole, nil), ""},
		{"an update that only adds owners and finalizers passes", rbacAttrs(admission.Update, viewer, "roles", "demo", ownedNew, ownedOld), ""},
		{"a namespace admin binds view in its namespace", rbacAttrs(admission.Create, nsadmin, "rolebindings", "demo", roleBinding("demo", "b", "ClusterRole", "view"), nil), ""},
		{"a namespace admin binds view in another namespace", rbacAttrs(admission.Create, nsadmin, "rolebindings", "other", roleBinding("other", "b", "ClusterRole", "view"), nil),
			`rolebindings.rbac.authorization.k8s.io "b" is forbidden: user "nsadmin" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:`},
		{"a namespace admin binds cluster-admin", rbacAttrs(admission.Create, nsadmin, "rolebindings", "demo", roleBinding("demo", "b", "ClusterRole", "cluster-admin"), nil),
			`rolebindings.rbac.authorization.k8s.io "b" is forbidden: user "nsadmin" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" +
				`{APIGroups:["*"], Resources:["*"], Verbs:["*"]}` + "\n" +
				`{NonResourceURLs:["*"], Verbs:["*"]}`},
		{"a user allowed to bind cluster-admin binds it", rbacAttrs(admission.Create, binder, "rolebindings", "demo", roleBinding("demo", "b", "ClusterRole", "cluster-admin"), nil), ""},
		{"a user allowed to bind cluster-admin binds it cluster-wide", rbacAttrs(admission.Create, binder, "clusterrolebindings", "",
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}}, nil),
			`clusterrolebindings.rbac.authorization.k8s.io "b" is forbidden: user "binder" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:`},
		{"a binding to a missing role", rbacAttrs(admission.Create, nsadmin, "rolebindings", "demo", roleBinding("demo", "b", "ClusterRole", "nope"), nil),
			`clusterroles.rbac.authorization.k8s.io "nope" not found`},
		{"an aggregating cluster role needs cluster-admin", rbacAttrs(admission.Create, someone, "clusterroles", "", aggregating, nil),
			`clusterroles.rbac.authorization.k8s.io "gather" is forbidden: must have cluster-admin privileges to use the aggregationRule`},
		{"the same, by a member of system:masters", rbacAttrs(admission.Create, admin, "clusterroles", "", aggregating, nil), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := check.Validate(context.Background(), c.attrs)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && err == nil:
				t.Fatalf("allowed; want %s", c.want)
			case c.want != "" && !hasPrefixOrEqual(err.Error(), c.want):
				t.Fatalf("err:\n%v\nwant:\n%s", err, c.want)
			}
		})
	}
}

// hasPrefixOrEqual lets a case give only the head of a long message.
func hasPrefixOrEqual(got, want string) bool {
	return got == want || (len(want) > 0 && want[len(want)-1] == ':' && len(got) > len(want) && got[:len(want)] == want)
}

func TestCoversAndCompaction(t *testing.T) {
	owner := []rbacv1.PolicyRule{
		{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods", "*/status"}},
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}},
		{Verbs: []string{"get"}, NonResourceURLs: []string{"/logs/*"}},
	}
	cases := []struct {
		name    string
		servant rbacv1.PolicyRule
		covered bool
	}{
		{"the same verbs on the same resource", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}, true},
		{"a subresource through */status", rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"services/status"}}, true},
		{"another verb", rbacv1.PolicyRule{Verbs: []string{"delete"}, APIGroups: []string{""}, Resources: []string{"pods"}}, false},
		{"a named object among the owner's names", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}}, true},
		{"every object when the owner holds one", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}, false},
		{"a URL under a wildcard", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/logs/a"}}, true},
		{"a wildcard the owner does not hold", rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"pods"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if ok, missing := validation.Covers(owner, []rbacv1.PolicyRule{c.servant}); ok != c.covered {
				t.Fatalf("covered = %v (missing %v), want %v", ok, missing, c.covered)
			}
		})
	}
	got := rbac.CompactString(rbac.CompactRules([]rbacv1.PolicyRule{
		{Verbs: []string{"get"}, APIGroups: []string{"apps"}, Resources: []string{"deployments"}},
		{Verbs: []string{"list"}, APIGroups: []string{"apps"}, Resources: []string{"deployments"}},
	})[0])
	if want := `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}`; got != want {
		t.Fatalf("compacted %s, want %s", got, want)
	}
}

func TestBootstrapAggregation(t *testing.T) {
	var roles []*rbacv1.ClusterRole
	byName := map[string]*rbacv1.ClusterRole{}
	for _, r := range rbac.ClusterRoles() {
		r := r.DeepCopy()
		roles = append(roles, r)
		byName[r.Name] = r
	}
	if _, err := rbac.AggregateAll(roles); err != nil {
		t.Fatal(err)
	}
	view, edit, admin := byName["view"], byName["edit"], byName["admin"]
	if len(view.Rules) == 0 {
		t.Fatal("view has no rules after aggregation")
	}
	if ok, missing := validation.Covers(edit.Rules, view.Rules); !ok {
		t.Fatalf("edit does not cover view: %v", missing)
	}
	if ok, missing := validation.Covers(admin.Rules, edit.Rules); !ok {
		t.Fatalf("admin does not cover edit: %v", missing)
	}
	if ok, _ := validation.Covers(view.Rules, []rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, "secrets")}); ok {
		t.Fatal("view reads secrets")
	}
	for _, b := range rbac.ClusterRoleBindings() {
		if _, ok := byName[b.RoleRef.Name]; !ok {
			t.Errorf("binding %s refers to a missing role %s", b.Name, b.RoleRef.Name)
		}
	}
}
