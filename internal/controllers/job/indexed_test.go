package job

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCompletedIndexesFormat(t *testing.T) {
	tests := []struct {
		prev        string
		add         []int
		completions int
		want        string
		total       int
	}{
		{"", nil, 5, "", 0},
		{"", []int{0}, 5, "0", 1},
		{"", []int{0, 1}, 5, "0,1", 2},
		{"", []int{0, 1, 2}, 5, "0-2", 3},
		{"1,3-5", []int{2}, 10, "1-5", 5},
		{"1,3-5", []int{7, 9}, 10, "1,3-5,7,9", 6},
		{"0-3,8-12", nil, 10, "0-3,8,9", 6},
		{"x,2,3", []int{4}, 5, "2-4", 3},
	}
	for _, tt := range tests {
		got := parseIndexes(tt.prev, tt.completions).withIndexes(tt.add)
		if got.String() != tt.want || got.total() != tt.total {
			t.Errorf("%q + %v (completions %d) = %q (%d), want %q (%d)", tt.prev, tt.add, tt.completions, got, got.total(), tt.want, tt.total)
		}
	}
	oi := parseIndexes("1,3-5,9", 10)
	for ix, want := range map[int]bool{0: false, 1: true, 2: false, 3: true, 5: true, 6: false, 9: true, 10: false} {
		if oi.has(ix) != want {
			t.Errorf("has(%d) = %v", ix, !want)
		}
	}
}

func indexedPod(ix string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: ix}}, Status: corev1.PodStatus{Phase: phase}}
}

func TestFirstPendingIndexes(t *testing.T) {
	job := &batchv1.Job{Spec: batchv1.JobSpec{Completions: new(int32(8)), CompletionMode: new(batchv1.IndexedCompletion)}}
	jc := &syncCtx{
		job:              job,
		active:           []*corev1.Pod{indexedPod("1", corev1.PodRunning), indexedPod("4", corev1.PodPending)},
		succeededIndexes: parseIndexes("0,2", 8),
		failedIndexes:    parseIndexes("5", 8),
	}
	if got := firstPendingIndexes(jc, 3); len(got) != 3 || got[0] != 3 || got[1] != 6 || got[2] != 7 {
		t.Errorf("pending = %v, want [3 6 7]", got)
	}
	if got := firstPendingIndexes(jc, 10); len(got) != 3 {
		t.Errorf("pending = %v, want only indexes below completions", got)
	}
}

func TestMatchSuccessPolicy(t *testing.T) {
	policy := &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
		{SucceededIndexes: new("0-2,5"), SucceededCount: new(int32(3))},
		{SucceededCount: new(int32(5))},
	}}
	for _, tt := range []struct {
		succeeded string
		want      string
	}{
		{"", ""},
		{"0,1", ""},
		{"0,1,5", "Matched rules at index 0"},
		{"3,4,6-7", ""},
		{"3,4,6-8", "Matched rules at index 1"},
	} {
		msg, _ := matchSuccessPolicy(policy, 10, parseIndexes(tt.succeeded, 10))
		if msg != tt.want {
			t.Errorf("succeeded %q: %q, want %q", tt.succeeded, msg, tt.want)
		}
	}
}
