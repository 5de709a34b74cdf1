package tainteviction

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEvictionTime(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	since := t0.Add(time.Minute)
	secs := func(n int64) *int64 { return &n }
	taint := func(key string, added *time.Time) corev1.Taint {
		tt := corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute}
		if added != nil {
			at := metav1.NewTime(*added)
			tt.TimeAdded = &at
		}
		return tt
	}
	tolerate := func(key string, seconds *int64) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds}
	}
	for _, tc := range []struct {
		name        string
		taints      []corev1.Taint
		tolerations []corev1.Toleration
		want        time.Time
		forever     bool
	}{
		{name: "no taints keep the pod forever", forever: true},
		{
			name:        "an untolerated taint evicts at once",
			taints:      []corev1.Taint{taint("a", &t0), taint("b", &t0)},
			tolerations: []corev1.Toleration{tolerate("a", nil)},
			want:        time.Time{},
		},
		{
			name:        "a toleration without seconds keeps the pod forever",
			taints:      []corev1.Taint{taint("a", &t0)},
			tolerations: []corev1.Toleration{tolerate("a", nil)},
			forever:     true,
		},
		{
			name:        "a toleration of zero seconds evicts at once",
			taints:      []corev1.Taint{taint("a", &t0)},
			tolerations: []corev1.Toleration{tolerate("a", secs(0))},
			want:        time.Time{},
		},
		{
			name:        "tolerationSeconds count from the taint's timeAdded",
			taints:      []corev1.Taint{taint("a", &t0)},
			tolerations: []corev1.Toleration{tolerate("a", secs(30))},
			want:        t0.Add(30 * time.Second),
		},
		{
			name:        "a taint without timeAdded counts from when the pod was first seen tainted",
			taints:      []corev1.Taint{taint("a", nil)},
			tolerations: []corev1.Toleration{tolerate("a", secs(30))},
			want:        since.Add(30 * time.Second),
		},
		{
			name:        "the earliest deadline of several taints wins",
			taints:      []corev1.Taint{taint("a", &t0), taint("b", ptr(t0.Add(-20*time.Second))), taint("c", &t0)},
			tolerations: []corev1.Toleration{tolerate("a", secs(30)), tolerate("b", secs(40)), tolerate("c", nil)},
			want:        t0.Add(20 * time.Second),
		},
		{
			name:   "each taint takes the first toleration that tolerates it",
			taints: []corev1.Taint{taint("a", &t0)},
			tolerations: []corev1.Toleration{
				{Operator: corev1.TolerationOpExists, TolerationSeconds: secs(5)},
				tolerate("a", nil),
			},
			want: t0.Add(5 * time.Second),
		},
		{
			name:        "a toleration for another value does not tolerate",
			taints:      []corev1.Taint{{Key: "a", Value: "x", Effect: corev1.TaintEffectNoExecute}},
			tolerations: []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpEqual, Value: "y", Effect: corev1.TaintEffectNoExecute}},
			want:        time.Time{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, forever := evictionTime(tc.taints, tc.tolerations, since)
			if forever != tc.forever || !got.Equal(tc.want) {
				t.Errorf("evictionTime = %v, forever %v; want %v, forever %v", got, forever, tc.want, tc.forever)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestDisruptionPatch(t *testing.T) {
	now := metav1.NewTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	earlier := metav1.NewTime(now.Add(-time.Hour))
	for _, tc := range []struct {
		name       string
		conditions []corev1.PodCondition
		want       string
	}{
		{
			name: "a pod without the condition gets it, transitioned now",
			want: `{"status":{"conditions":[{"lastTransitionTime":"2025-01-02T03:04:05Z","message":"Taint manager: deleting due to NoExecute taint","reason":"DeletionByTaintManager","status":"True","type":"DisruptionTarget"}]}}`,
		},
		{
			name:       "a pod marked already is not patched",
			conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: ReasonDeletionByTaintManager, Message: MessageDeletionByTaintManager}},
		},
		{
			name:       "a pod already a disruption target for another reason keeps its transition time",
			conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler", LastTransitionTime: earlier}},
			want:       `{"status":{"conditions":[{"lastTransitionTime":"2025-01-02T02:04:05Z","message":"Taint manager: deleting due to NoExecute taint","reason":"DeletionByTaintManager","status":"True","type":"DisruptionTarget"}]}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := disruptionPatch(&corev1.Pod{Status: corev1.PodStatus{Conditions: tc.conditions}}, now)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("patch\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
