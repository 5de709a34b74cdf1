package cel

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/admission"
	"minik/internal/auth"
)

const benchExpr = "object.spec.replicas <= 5 && object.metadata.name.startsWith('we') && request.userInfo.username == 'alice'"

// BenchmarkCompile measures compiling one validation expression.
func BenchmarkCompile(b *testing.B) {
	c, err := NewCompiler()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := c.Compile(benchExpr); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEval measures evaluating one validation expression against a
// Deployment create, activation included.
func BenchmarkEval(b *testing.B) {
	c, err := NewCompiler()
	if err != nil {
		b.Fatal(err)
	}
	p, err := c.Compile(benchExpr)
	if err != nil {
		b.Fatal(err)
	}
	replicas := int32(3)
	a := &admission.Attributes{
		Operation: admission.Create, Kind: appsv1.SchemeGroupVersion.WithKind("Deployment"),
		Resource: appsv1.SchemeGroupVersion.WithResource("deployments"), Namespace: "demo", Name: "web",
		Object: &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo"}, Spec: appsv1.DeploymentSpec{Replicas: &replicas}},
		User:   &auth.User{Name: "alice"},
	}
	for b.Loop() {
		act, err := NewActivation(a, nil)
		if err != nil {
			b.Fatal(err)
		}
		if ok, err := p.EvalBool(act); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkWithVariables measures building one policy's environment with
// two variables, as the policy plugin does once per policy version.
func BenchmarkWithVariables(b *testing.B) {
	c, err := NewCompiler()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := c.WithVariables([]string{"limit", "over"}, []string{"quantity('1Gi')", "object.spec.replicas > 5"}); err != nil {
			b.Fatal(err)
		}
	}
}
