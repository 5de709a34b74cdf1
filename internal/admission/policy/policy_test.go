package policy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	admissionlisters "k8s.io/client-go/listers/admissionregistration/v1"
	"k8s.io/client-go/tools/cache"

	"minik/internal/admission"
)

func indexer(objs ...runtime.Object) cache.Indexer {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, o := range objs {
		if err := idx.Add(o); err != nil {
			panic(err)
		}
	}
	return idx
}

// params is a ParamSource over ConfigMaps given as JSON maps.
type params map[string]map[string]any

func (p params) Namespaced(_ context.Context, k admissionregistrationv1.ParamKind) (bool, error) {
	if k.Kind != "ConfigMap" {
		return false, apierrors.NewNotFound(schema.GroupResource{}, k.Kind)
	}
	return true, nil
}

func (p params) Get(_ context.Context, _ admissionregistrationv1.ParamKind, ns, name string) (map[string]any, error) {
	if obj, ok := p[ns+"/"+name]; ok {
		return obj, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func (p params) List(context.Context, admissionregistrationv1.ParamKind, string, labels.Selector) ([]map[string]any, error) {
	return nil, nil
}

var deployRules = &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
	RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
	},
}}}

func policy(name string, validations ...admissionregistrationv1.Validation) *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec:       admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: deployRules, Validations: validations},
	}
}

func binding(name, policy string, actions ...admissionregistrationv1.ValidationAction) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec:       admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy, ValidationActions: actions},
	}
}

func newPlugin(t *testing.T, src ParamSource, objs ...runtime.Object) *Plugin {
	t.Helper()
	var pols, binds []runtime.Object
	for _, o := range objs {
		if _, ok := o.(*admissionregistrationv1.ValidatingAdmissionPolicy); ok {
			pols = append(pols, o)
		} else {
			binds = append(binds, o)
		}
	}
	p, err := New(Config{
		Policies: admissionlisters.NewValidatingAdmissionPolicyLister(indexer(pols...)),
		Bindings: admissionlisters.NewValidatingAdmissionPolicyBindingLister(indexer(binds...)),
		Namespaces: func(_ context.Context, name string) (*corev1.Namespace, error) {
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": "prod"}}}, nil
		},
		Params: src,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func deployAttrs(replicas int32) *admission.Attributes {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo"}, Spec: appsv1.DeploymentSpec{Replicas: &replicas}}
	return &admission.Attributes{
		Operation: admission.Create, Kind: appsv1.SchemeGroupVersion.WithKind("Deployment"), Resource: appsv1.SchemeGroupVersion.WithResource("deployments"),
		Namespace: "demo", Name: "web", Object: d,
	}
}

func TestValidatingAdmissionPolicy(t *testing.T) {
	ctx := context.Background()
	maxReplicas := admissionregistrationv1.Validation{Expression: "object.spec.replicas <= 5", Message: "replicas must be no greater than 5"}

	t.Run("a failed validation with Deny refuses with kube's message, reason Invalid, code 422", func(t *testing.T) {
		p := newPlugin(t, nil, policy("max-replicas", maxReplicas), binding("max-replicas-binding", "max-replicas", admissionregistrationv1.Deny))
		err := p.Validate(ctx, deployAttrs(7))
		want := `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: replicas must be no greater than 5`
		if err == nil || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
		st := err.(apierrors.APIStatus).Status()
		if st.Reason != metav1.StatusReasonInvalid || st.Code != 422 || len(st.Details.Causes) != 1 {
			t.Errorf("status = %+v", st)
		}
		if err := p.Validate(ctx, deployAttrs(3)); err != nil {
			t.Errorf("3 replicas: %v", err)
		}
	})
	t.Run("without a message the expression is quoted; a reason sets the code", func(t *testing.T) {
		forbidden := metav1.StatusReasonForbidden
		v := admissionregistrationv1.Validation{Expression: "object.spec.replicas <= 5", Reason: &forbidden}
		p := newPlugin(t, nil, policy("p", v), binding("b", "p", admissionregistrationv1.Deny))
		err := p.Validate(ctx, deployAttrs(7))
		if err == nil || err.Error() != `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: object.spec.replicas <= 5` || !apierrors.IsForbidden(err) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a messageExpression computes the message", func(t *testing.T) {
		v := maxReplicas
		v.MessageExpression = "'replicas ' + string(object.spec.replicas) + ' is more than 5'"
		p := newPlugin(t, nil, policy("p", v), binding("b", "p", admissionregistrationv1.Deny))
		err := p.Validate(ctx, deployAttrs(7))
		if err == nil || err.Error() != `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: replicas 7 is more than 5` {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("Warn sends a warning and admits", func(t *testing.T) {
		p := newPlugin(t, nil, policy("p", maxReplicas), binding("b", "p", admissionregistrationv1.Warn))
		var ctx context.Context
		rec := httptest.NewRecorder()
		admission.WithWarnings(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { ctx = r.Context() })).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		if err := p.Validate(ctx, deployAttrs(7)); err != nil {
			t.Fatal(err)
		}
		want := `299 - "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': replicas must be no greater than 5"`
		if got := rec.Header().Values("Warning"); len(got) != 1 || got[0] != want {
			t.Errorf("warnings = %q", got)
		}
	})
	t.Run("an evaluation error follows failurePolicy", func(t *testing.T) {
		broken := admissionregistrationv1.Validation{Expression: "object.spec.nothing > 1"}
		pol := policy("p", broken)
		p := newPlugin(t, nil, pol, binding("b", "p", admissionregistrationv1.Deny))
		err := p.Validate(ctx, deployAttrs(1))
		want := `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: expression 'object.spec.nothing > 1' resulted in error: no such key: nothing`
		if err == nil || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
		ig := admissionregistrationv1.Ignore
		pol = policy("p", broken)
		pol.Spec.FailurePolicy = &ig
		p = newPlugin(t, nil, pol, binding("b", "p", admissionregistrationv1.Deny))
		if err := p.Validate(ctx, deployAttrs(1)); err != nil {
			t.Fatalf("Ignore: %v", err)
		}
	})
	t.Run("match conditions and the binding's match resources narrow the policy", func(t *testing.T) {
		pol := policy("p", maxReplicas)
		pol.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "only-web", Expression: "object.metadata.name == 'api'"}}
		p := newPlugin(t, nil, pol, binding("b", "p", admissionregistrationv1.Deny))
		if err := p.Validate(ctx, deployAttrs(7)); err != nil {
			t.Fatalf("match condition: %v", err)
		}
		b := binding("b", "p", admissionregistrationv1.Deny)
		b.Spec.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}}
		p = newPlugin(t, nil, policy("p", maxReplicas), b)
		if err := p.Validate(ctx, deployAttrs(7)); err != nil {
			t.Fatalf("binding namespaceSelector: %v", err)
		}
	})
	t.Run("variables and namespaceObject are available", func(t *testing.T) {
		pol := policy("p", admissionregistrationv1.Validation{Expression: "variables.limit >= object.spec.replicas", Message: "too many"})
		pol.Spec.Variables = []admissionregistrationv1.Variable{{Name: "limit", Expression: "namespaceObject.metadata.labels.env == 'prod' ? 10 : 2"}}
		p := newPlugin(t, nil, pol, binding("b", "p", admissionregistrationv1.Deny))
		if err := p.Validate(ctx, deployAttrs(7)); err != nil {
			t.Fatalf("prod allows 10: %v", err)
		}
	})
	t.Run("params come from the binding's paramRef", func(t *testing.T) {
		pol := policy("p", admissionregistrationv1.Validation{Expression: "object.spec.replicas <= int(params.data.maxReplicas)", MessageExpression: "'at most ' + params.data.maxReplicas + ' replicas'"})
		pol.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
		deny := admissionregistrationv1.DenyAction
		b := binding("b", "p", admissionregistrationv1.Deny)
		b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Name: "limits", ParameterNotFoundAction: &deny}
		src := params{"demo/limits": {"data": map[string]any{"maxReplicas": "4"}}}
		p := newPlugin(t, src, pol, b)
		err := p.Validate(ctx, deployAttrs(5))
		if err == nil || err.Error() != `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: at most 4 replicas` {
			t.Fatalf("err = %v", err)
		}
		b.Spec.ParamRef.Name = "missing"
		p = newPlugin(t, src, pol, b)
		err = p.Validate(ctx, deployAttrs(1))
		want := "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
		if err == nil || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
		allow := admissionregistrationv1.AllowAction
		b.Spec.ParamRef.ParameterNotFoundAction = &allow
		p = newPlugin(t, src, pol, b)
		if err := p.Validate(ctx, deployAttrs(100)); err != nil {
			t.Fatalf("Allow without params: %v", err)
		}
	})
	t.Run("the first denial by binding name is reported", func(t *testing.T) {
		p := newPlugin(t, nil,
			policy("p1", admissionregistrationv1.Validation{Expression: "false", Message: "one"}),
			policy("p2", admissionregistrationv1.Validation{Expression: "false", Message: "two"}),
			binding("b2", "p2", admissionregistrationv1.Deny), binding("b1", "p1", admissionregistrationv1.Deny))
		err := p.Validate(ctx, deployAttrs(1))
		if err == nil || err.Error() != `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'p1' with binding 'b1' denied request: one` {
			t.Fatalf("err = %v", err)
		}
	})
}
