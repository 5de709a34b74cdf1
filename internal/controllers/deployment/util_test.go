package deployment

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func intOrStr(s string) *intstr.IntOrString {
	v := intstr.Parse(s)
	return &v
}

func TestResolveFenceposts(t *testing.T) {
	tests := []struct {
		name                   string
		surge, unavailable     *intstr.IntOrString
		desired                int32
		wantSurge, wantUnavail int32
		wantErr                bool
	}{
		{"both zero percent still lets one pod be unavailable", intOrStr("0%"), intOrStr("0%"), 0, 0, 1, false},
		{"percentages round surge up and unavailability down", intOrStr("39%"), intOrStr("39%"), 10, 4, 3, false},
		{"kube's defaults on three replicas", intOrStr("25%"), intOrStr("25%"), 3, 1, 0, false},
		{"kube's defaults on four replicas", intOrStr("25%"), intOrStr("25%"), 4, 1, 1, false},
		{"absolute numbers are taken as they are", intOrStr("2"), intOrStr("1"), 3, 2, 1, false},
		{"a missing surge is zero", nil, intOrStr("39%"), 10, 0, 3, false},
		{"a bad surge is an error", intOrStr("oops"), intOrStr("39%"), 10, 0, 0, true},
		{"a bad unavailability is an error", intOrStr("55%"), intOrStr("urg"), 10, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			surge, unavail, err := resolveFenceposts(tt.surge, tt.unavailable, tt.desired)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && (surge != tt.wantSurge || unavail != tt.wantUnavail) {
				t.Fatalf("got surge %d unavailable %d, want %d %d", surge, unavail, tt.wantSurge, tt.wantUnavail)
			}
		})
	}
}

func rollingDeployment(replicas int32, surge, unavailable string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Strategy: appsv1.DeploymentStrategy{
				Type:          appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: intOrStr(surge), MaxUnavailable: intOrStr(unavailable)},
			},
		},
	}
}

func rsOfSize(name string, size int32, maxReplicas string, age time.Duration) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Unix(1_000_000, 0).Add(-age))},
		Spec:       appsv1.ReplicaSetSpec{Replicas: &size},
	}
	if maxReplicas != "" {
		rs.Annotations = map[string]string{MaxReplicasAnnotation: maxReplicas}
	}
	return rs
}

func TestNewRSNewReplicas(t *testing.T) {
	tests := []struct {
		name    string
		d       *appsv1.Deployment
		oldSize int32
		newSize int32
		want    int32
	}{
		{"a first rollout takes every replica the surge allows", rollingDeployment(3, "25%", "25%"), 0, 0, 3},
		{"a new template starts with the surge", rollingDeployment(3, "25%", "25%"), 3, 0, 1},
		{"no room above the surge, no growth", rollingDeployment(3, "1", "0"), 3, 1, 1},
		{"never beyond the Deployment's replicas", rollingDeployment(3, "5", "0"), 1, 1, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldRS, newRS := rsOfSize("old", tt.oldSize, "", time.Hour), rsOfSize("new", tt.newSize, "", 0)
			got, err := newRSNewReplicas(tt.d, []*appsv1.ReplicaSet{oldRS, newRS}, newRS)
			if err != nil || got != tt.want {
				t.Fatalf("newRSNewReplicas = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
	d := rollingDeployment(3, "25%", "25%")
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	if got, _ := newRSNewReplicas(d, nil, rsOfSize("new", 0, "", 0)); got != 3 {
		t.Fatalf("Recreate: newRSNewReplicas = %d, want 3", got)
	}
}

func TestProportion(t *testing.T) {
	// A rollout of 10 replicas (surge 3) caught at old 8 / new 5 when the
	// Deployment grows to 20: 10 more go 8:5 (rounded) to each.
	d := rollingDeployment(20, "3", "2")
	d.Status.Replicas = 13
	old := rsOfSize("old", 8, "13", time.Hour)
	newer := rsOfSize("new", 5, "13", 0)
	toAdd := int32(20 + 3 - 13)
	pOld := proportion(old, d, toAdd, 0)
	pNew := proportion(newer, d, toAdd, pOld)
	// old: round(8*23/13) = 14, so +6; new: round(5*23/13) = 9, so +4, the
	// 4 still allowed.
	if pOld != 6 || pNew != 4 {
		t.Fatalf("proportions old %d new %d, want 6 and 4", pOld, pNew)
	}
	if got := proportion(rsOfSize("empty", 0, "13", 0), d, toAdd, 0); got != 0 {
		t.Fatalf("an empty ReplicaSet got %d, want 0: proportional scaling never scales up from zero", got)
	}
	shrink := rollingDeployment(0, "3", "2")
	if got := proportion(old, shrink, -13, 0); got != -8 {
		t.Fatalf("scaling to zero: proportion = %d, want -8", got)
	}
}

func TestSetConditionKeepsTransitionTime(t *testing.T) {
	t0, t1 := time.Unix(100, 0), time.Unix(200, 0)
	var st appsv1.DeploymentStatus
	setCondition(&st, newCondition(t0, appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonNewReplicaSetCreated, "a"))
	setCondition(&st, newCondition(t1, appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonNewReplicaSetCreated, "b"))
	if c := getCondition(st, appsv1.DeploymentProgressing); c.Message != "a" {
		t.Fatalf("same status and reason replaced the condition: %+v", c)
	}
	setCondition(&st, newCondition(t1, appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonReplicaSetUpdated, "c"))
	c := getCondition(st, appsv1.DeploymentProgressing)
	if c.Reason != ReasonReplicaSetUpdated || !c.LastTransitionTime.Time.Equal(t0) || !c.LastUpdateTime.Time.Equal(t1) {
		t.Fatalf("new reason, same status: %+v", c)
	}
	setCondition(&st, newCondition(t1, appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonProgressDeadlineExceeded, "d"))
	if c := getCondition(st, appsv1.DeploymentProgressing); !c.LastTransitionTime.Time.Equal(t1) {
		t.Fatalf("a status change did not move the transition time: %+v", c)
	}
}

func TestDeploymentTimedOut(t *testing.T) {
	d := rollingDeployment(3, "25%", "25%")
	d.Spec.ProgressDeadlineSeconds = new(int32(10))
	start := time.Unix(1000, 0)
	st := appsv1.DeploymentStatus{}
	setCondition(&st, newCondition(start, appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonReplicaSetUpdated, ""))
	if deploymentTimedOut(d, &st, start.Add(10*time.Second)) {
		t.Fatal("timed out at the deadline, not after it")
	}
	if !deploymentTimedOut(d, &st, start.Add(11*time.Second)) {
		t.Fatal("not timed out past the deadline")
	}
	st = appsv1.DeploymentStatus{}
	setCondition(&st, newCondition(start, appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonNewReplicaSetAvailable, ""))
	if deploymentTimedOut(d, &st, start.Add(time.Hour)) {
		t.Fatal("a completed rollout timed out")
	}
}

func TestSetNewReplicaSetAnnotations(t *testing.T) {
	d := rollingDeployment(3, "25%", "25%")
	d.Annotations = map[string]string{"team": "a", corev1.LastAppliedConfigAnnotation: "{}", RevisionAnnotation: "9"}
	rs := &appsv1.ReplicaSet{}
	if !setNewReplicaSetAnnotations(d, rs, "2", false) {
		t.Fatal("no change reported")
	}
	want := map[string]string{"team": "a", RevisionAnnotation: "2", DesiredReplicasAnnotation: "3", MaxReplicasAnnotation: "4"}
	for k, v := range want {
		if rs.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, rs.Annotations[k], v)
		}
	}
	if _, ok := rs.Annotations[corev1.LastAppliedConfigAnnotation]; ok {
		t.Error("the last-applied configuration was copied")
	}
	// A rollback makes revision 2 revision 5 and remembers 2.
	if !setNewReplicaSetAnnotations(d, rs, "5", true) || rs.Annotations[RevisionAnnotation] != "5" || rs.Annotations[RevisionHistoryAnnotation] != "2" {
		t.Fatalf("after rollback: %v", rs.Annotations)
	}
	if setNewReplicaSetAnnotations(d, rs, "4", true) {
		t.Fatal("a lower revision changed the annotations")
	}
}
