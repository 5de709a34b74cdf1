package cel

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/admission"
	"minik/internal/auth"
)

func TestExpressions(t *testing.T) {
	c, err := NewCompiler()
	if err != nil {
		t.Fatal(err)
	}
	replicas := int32(5)
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo", Labels: map[string]string{"app": "web"}},
		Spec:       appsv1.DeploymentSpec{Replicas: &replicas},
	}
	a := &admission.Attributes{
		Operation: admission.Create, Kind: appsv1.SchemeGroupVersion.WithKind("Deployment"),
		Resource: appsv1.SchemeGroupVersion.WithResource("deployments"), Namespace: "demo", Name: "web",
		Object: deploy, User: &auth.User{Name: "alice", Groups: []string{"dev"}},
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo", Labels: map[string]string{"env": "prod"}}}
	act, err := NewActivation(a, ns)
	if err != nil {
		t.Fatal(err)
	}
	act.Params = map[string]any{"data": map[string]any{"max": "3"}}
	tests := []struct {
		expr string
		want bool
	}{
		{"object.spec.replicas <= 5", true},
		{"object.spec.replicas == 5", true},
		{"object.kind == 'Deployment' && object.apiVersion == 'apps/v1'", true},
		{"has(object.metadata.labels) && object.metadata.labels.app == 'web'", true},
		{"object.metadata.name.startsWith('we')", true},
		{"oldObject == null", true},
		{"request.operation == 'CREATE' && request.userInfo.username == 'alice'", true},
		{"request.resource.group == 'apps' && request.namespace == 'demo'", true},
		{"namespaceObject.metadata.labels.env == 'prod'", true},
		{"object.spec.replicas <= int(params.data.max)", false},
		{"'dev' in request.userInfo.groups", true},
		{"object.metadata.name.lowerAscii() == 'web'", true},
		{"sets.contains(['a', 'b'], ['a'])", true},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			p, err := c.Compile(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.EvalBool(act)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("a syntax error reads as kube's compilation failure", func(t *testing.T) {
		_, err := c.Compile("object.spec.replicas <")
		if err == nil || !strings.HasPrefix(err.Error(), "compilation failed: ERROR: <input>:1:") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("an evaluation error names the expression", func(t *testing.T) {
		p, _ := c.Compile("object.spec.missing > 1")
		_, err := p.Eval(act)
		if err == nil || !strings.HasPrefix(err.Error(), "expression 'object.spec.missing > 1' resulted in error: no such key: missing") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("variables see the ones before them and fail only where read", func(t *testing.T) {
		v1, _ := c.Compile("object.spec.replicas * 2")
		v2, _ := c.Compile("variables.double + 1")
		bad, _ := c.Compile("object.nothing.here")
		vars := []Variable{{Name: "double", Program: v1}, {Name: "next", Program: v2}, {Name: "bad", Program: bad}}
		va := *act
		EvalVariables(vars, &va)
		p, _ := c.Compile("variables.next == 11")
		if ok, err := p.EvalBool(&va); !ok || err != nil {
			t.Errorf("variables.next: %v %v", ok, err)
		}
		p, _ = c.Compile("variables.bad == 1")
		if _, err := p.Eval(&va); err == nil {
			t.Error("reading a failed variable did not fail")
		}
	})
	t.Run("match conditions: any false wins over errors", func(t *testing.T) {
		conds := c.CompileConditions([]string{"broken", "no"}, []string{"object.nothing.here", "false"})
		if ok, err := Match(conds, act); ok || err != nil {
			t.Errorf("Match = %v %v", ok, err)
		}
		conds = c.CompileConditions([]string{"broken", "yes"}, []string{"object.nothing.here", "true"})
		if ok, err := Match(conds, act); ok || err == nil || !strings.Contains(err.Error(), "matchCondition 'broken'") {
			t.Errorf("Match = %v %v", ok, err)
		}
	})
}
