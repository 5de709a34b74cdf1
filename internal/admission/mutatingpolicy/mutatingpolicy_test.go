package mutatingpolicy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"minik/internal/testserver"
)

// timeout bounds each wait on a loaded machine.
const timeout = 60 * time.Second

func policy(name, ns string, fp admissionregistrationv1.FailurePolicyType, mutations ...admissionregistrationv1.Mutation) *admissionregistrationv1.MutatingAdmissionPolicy {
	return &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			FailurePolicy:      &fp,
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				}}},
			},
			Mutations: mutations,
		},
	}
}

func bind(t *testing.T, cs kubernetes.Interface, pol *admissionregistrationv1.MutatingAdmissionPolicy) {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.AdmissionregistrationV1().MutatingAdmissionPolicies().Create(ctx, pol, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := &admissionregistrationv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: pol.Name + "-binding"},
		Spec:       admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: pol.Name},
	}
	if _, err := cs.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestMutatingAdmissionPolicy(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"crd"}})
	cs := srv.Client(t)
	ctx := context.Background()
	for _, ns := range []string{"mutated", "refused", "reinvoked"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("a policy labels and annotates the config maps created in its namespace", func(t *testing.T) {
		bind(t, cs, policy("team-label", "mutated", admissionregistrationv1.Fail,
			admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: `Object{metadata: Object.metadata{labels: {"team": "blue"}}}`}},
			admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeJSONPatch,
				JSONPatch: &admissionregistrationv1.JSONPatch{Expression: `[JSONPatch{op: "add", path: "/data/seen-team", value: object.metadata.labels["team"]}]`}},
		))
		// The plugin's informers see the binding shortly after its create.
		var i int
		var cm *corev1.ConfigMap
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
			i++
			in := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "mutated"}, Data: map[string]string{"a": "b"}}
			var err error
			cm, err = cs.CoreV1().ConfigMaps("mutated").Create(ctx, in, metav1.CreateOptions{})
			return err == nil && cm.Labels["team"] != "", err
		})
		if err != nil {
			t.Fatalf("no config map was labelled: %v", err)
		}
		if cm.Labels["team"] != "blue" || cm.Data["seen-team"] != "blue" || cm.Data["a"] != "b" {
			t.Errorf("config map labels %v data %v; want team=blue, seen-team=blue and a=b", cm.Labels, cm.Data)
		}
		other, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "untouched"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(other.Labels) != 0 {
			t.Errorf("a config map of another namespace got labels %v", other.Labels)
		}
	})

	t.Run("an IfNeeded policy runs again after a later policy changed the object", func(t *testing.T) {
		copyLate := policy("a-copy", "reinvoked", admissionregistrationv1.Fail,
			admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: `Object{data: {"copied": object.metadata.labels["late"]}}`}})
		copyLate.Spec.ReinvocationPolicy = admissionregistrationv1.IfNeededReinvocationPolicy
		copyLate.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "has-late", Expression: `has(object.metadata.labels) && 'late' in object.metadata.labels`}}
		bind(t, cs, copyLate)
		bind(t, cs, policy("b-late", "reinvoked", admissionregistrationv1.Fail,
			admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: `Object{metadata: Object.metadata{labels: {"late": "yes"}}}`}}))
		var i int
		var cm *corev1.ConfigMap
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
			i++
			in := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "reinvoked"}}
			var err error
			cm, err = cs.CoreV1().ConfigMaps("reinvoked").Create(ctx, in, metav1.CreateOptions{})
			return err == nil && cm.Data["copied"] != "", err
		})
		if err != nil {
			t.Fatalf("no config map got the copy: %v", err)
		}
		if cm.Data["copied"] != "yes" {
			t.Errorf("data %v, want copied=yes", cm.Data)
		}
	})

	t.Run("an apply configuration mutates a custom resource", func(t *testing.T) {
		ext := apiextensionsclient.NewForConfigOrDie(srv.RESTConfig)
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "widgets.map.example.com"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "map.example.com", Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}, "color": {Type: "string"}}},
					}}}}},
			},
		}
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pol := policy("paint", "mutated", admissionregistrationv1.Fail,
			admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: `Object{spec: Object.spec{color: "red"}}`}})
		pol.Spec.MatchConstraints.ResourceRules[0].Rule = admissionregistrationv1.Rule{APIGroups: []string{"map.example.com"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}}
		bind(t, cs, pol)
		gvr := schema.GroupVersionResource{Group: "map.example.com", Version: "v1", Resource: "widgets"}
		dc := dynamic.NewForConfigOrDie(srv.RESTConfig)
		var i int
		var got *unstructured.Unstructured
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
			i++
			w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "map.example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"name": fmt.Sprintf("w-%d", i)}, "spec": map[string]any{"size": int64(3)}}}
			var err error
			got, err = dc.Resource(gvr).Namespace("mutated").Create(ctx, w, metav1.CreateOptions{})
			if err != nil {
				return false, nil
			}
			color, _, _ := unstructured.NestedString(got.Object, "spec", "color")
			return color != "", nil
		})
		if err != nil {
			t.Fatalf("no widget was painted: %v", err)
		}
		spec, _, _ := unstructured.NestedMap(got.Object, "spec")
		if spec["color"] != "red" || spec["size"] != int64(3) {
			t.Errorf("spec %v, want color red and size 3", spec)
		}
	})

	t.Run("a failing mutation refuses the request under failurePolicy Fail", func(t *testing.T) {
		bind(t, cs, policy("broken", "refused", admissionregistrationv1.Fail,
			admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeJSONPatch,
				JSONPatch: &admissionregistrationv1.JSONPatch{Expression: `[JSONPatch{op: "remove", path: "/metadata/labels/missing"}]`}},
		))
		var i int
		var got error
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
			i++
			_, got = cs.CoreV1().ConfigMaps("refused").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "refused"}}, metav1.CreateOptions{})
			return got != nil, nil
		})
		if err != nil {
			t.Fatalf("no create was refused: %v", err)
		}
		if !apierrors.IsForbidden(got) || !strings.Contains(got.Error(), "policy 'broken' with binding 'broken-binding' denied request: JSON Patch: ") {
			t.Errorf("create refused with %v; want Forbidden by policy 'broken' with binding 'broken-binding'", got)
		}
	})
}
