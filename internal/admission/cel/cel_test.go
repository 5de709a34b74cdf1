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
		// Kubernetes' libraries, as kube-apiserver v1.37 has them.
		{"quantity('500m').isLessThan(quantity('1'))", true},
		{"quantity('1Gi').compareTo(quantity('1024Mi')) == 0", true},
		{"url('https://example.com:8443/a?b=c').getHost() == 'example.com:8443'", true},
		{"url('https://example.com/a').getScheme() == 'https'", true},
		{"ip('10.0.0.1').family() == 4 && ip('::1').isLoopback()", true},
		{"cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))", true},
		{"cidr('10.0.0.0/8').containsIP('192.168.0.1')", false},
		{"format.dns1123Label().validate('web').hasValue()", false},
		{"format.dns1123Label().validate('Not_A_Label').hasValue()", true},
		{"[1, 2, 3].isSorted() && [3, 1].max() == 3", true},
		{"'abc-123'.find('[0-9]+') == '123'", true},
		{"isSemver('1.2.3') && semver('1.2.3').isLessThan(semver('1.10.0'))", true},
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
		vc, vars, err := c.WithVariables([]string{"double", "next", "bad"}, []string{"object.spec.replicas * 2", "variables.double + 1", "object.nothing.here"})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vars {
			if v.Err != nil {
				t.Fatalf("variable %s: %v", v.Name, v.Err)
			}
		}
		va := *act
		EvalVariables(vars, &va)
		p, err := vc.Compile("variables.next == 11")
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := p.EvalBool(&va); !ok || err != nil {
			t.Errorf("variables.next: %v %v", ok, err)
		}
		if _, err := c.Compile("variables.next == 11"); err == nil || !strings.Contains(err.Error(), "undefined field 'next'") {
			t.Errorf("a variable another policy declares compiled: %v", err)
		}
		p, _ = vc.Compile("variables.bad == 1")
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
