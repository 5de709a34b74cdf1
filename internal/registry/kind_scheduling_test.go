package registry

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var pcGR = schema.GroupResource{Group: "scheduling.k8s.io", Resource: "priorityclasses"}

func TestPriorityClassValidation(t *testing.T) {
	pc := func(name string, value int32, mod ...func(*schedulingv1.PriorityClass)) *schedulingv1.PriorityClass {
		p := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		for _, m := range mod {
			m(p)
		}
		return p
	}
	tests := []struct {
		name string
		obj  *schedulingv1.PriorityClass
		want string
	}{
		{"a user class up to a billion is valid", pc("high", 1000000000), ""},
		{"the system classes are valid", SystemPriorityClasses()[0], ""},
		{"a user class above a billion is refused", pc("too-high", 1000000001),
			"value: Forbidden: maximum allowed value of a user defined priority is 1000000000"},
		{"the system- prefix is reserved", pc("system-mine", 10),
			"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"},
		{"a system class must have its value", pc("system-node-critical", 10),
			"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-node-critical PriorityClass must be 2000001000"},
		{"a system class may not be the global default", pc("system-cluster-critical", 2000000000, func(p *schedulingv1.PriorityClass) { p.GlobalDefault = true }),
			"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: globalDefault of system-cluster-critical PriorityClass must be false"},
		{"an unknown preemption policy is refused", pc("odd", 1, func(p *schedulingv1.PriorityClass) { p.PreemptionPolicy = new(corev1.PreemptionPolicy("Sometimes")) }),
			`preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorsOf(t, pcGR, tc.obj); got != tc.want {
				t.Errorf("errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	t.Run("the preemption policy defaults to PreemptLowerPriority", func(t *testing.T) {
		p := pc("plain", 1)
		errorsOf(t, pcGR, p)
		if p.PreemptionPolicy == nil || *p.PreemptionPolicy != corev1.PreemptLowerPriority {
			t.Errorf("preemptionPolicy = %v", p.PreemptionPolicy)
		}
	})
}

func TestPriorityClassUpdateKeepsValueAndPolicy(t *testing.T) {
	s := admissionStrategy(t, pcGR)
	never := corev1.PreemptNever
	old := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high", ResourceVersion: "1"}, Value: 1000}
	s.Default(old)
	upd := old.DeepCopy()
	upd.Value, upd.PreemptionPolicy, upd.Description = 2000, &never, "changed"
	var msgs []string
	for _, e := range s.ValidateUpdate(context.Background(), upd, old) {
		msgs = append(msgs, e.Error())
	}
	want := "value: Forbidden: may not be changed in an update.\n" +
		`preemptionPolicy: Invalid value: "Never": field is immutable`
	if got := strings.Join(msgs, "\n"); got != want {
		t.Errorf("errors:\n got %s\nwant %s", got, want)
	}
	upd = old.DeepCopy()
	upd.Description, upd.GlobalDefault = "changed", true
	if errs := s.ValidateUpdate(context.Background(), upd, old); len(errs) != 0 {
		t.Errorf("description and globalDefault may change: %v", errs)
	}
}
