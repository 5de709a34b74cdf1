package podautoscaler

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// The pure parts of kube's algorithm: limits without behavior, rate
// policies over recent scale events, tolerances.

func TestLimitWithRules(t *testing.T) {
	for _, tc := range []struct {
		current, desired, minR, maxR, want int32
		reason                             string
	}{
		{1, 16, 1, 10, 4, "ScaleUpLimit"},     // at most 4 from 1
		{4, 16, 1, 10, 8, "ScaleUpLimit"},     // at most twice
		{4, 16, 1, 5, 5, "TooManyReplicas"},   // the maximum is lower
		{3, 1, 2, 5, 2, "TooFewReplicas"},     // never below the minimum
		{3, 4, 1, 5, 4, "DesiredWithinRange"}, // as asked
	} {
		got, reason, _ := limitWithRules(tc.current, tc.desired, tc.minR, tc.maxR)
		if got != tc.want || reason != tc.reason {
			t.Errorf("limitWithRules(%d → %d in [%d,%d]) = %d %s; want %d %s", tc.current, tc.desired, tc.minR, tc.maxR, got, reason, tc.want, tc.reason)
		}
	}
}

func TestScaleLimitsFollowPolicies(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	sel := func(s autoscalingv2.ScalingPolicySelect) *autoscalingv2.ScalingPolicySelect { return &s }
	up := &autoscalingv2.HPAScalingRules{SelectPolicy: sel(autoscalingv2.MaxChangePolicySelect), Policies: []autoscalingv2.HPAScalingPolicy{
		{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
		{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
	}}
	if got := scaleUpLimit(now, 10, nil, nil, up); got != 20 {
		t.Errorf("scale-up limit from 10 = %d; want 20 (100%% beats 4 pods)", got)
	}
	// 6 pods were added 5 s ago: the period started at 4.
	recent := []timestampedScaleEvent{{replicaChange: 6, timestamp: now.Add(-5 * time.Second)}}
	if got := scaleUpLimit(now, 10, recent, nil, up); got != 8 {
		t.Errorf("scale-up limit from 10 after +6 = %d; want 8", got)
	}
	up.SelectPolicy = sel(autoscalingv2.MinChangePolicySelect)
	if got := scaleUpLimit(now, 10, nil, nil, up); got != 14 {
		t.Errorf("Min scale-up limit from 10 = %d; want 14", got)
	}
	up.SelectPolicy = sel(autoscalingv2.DisabledPolicySelect)
	if got := scaleUpLimit(now, 10, nil, nil, up); got != 10 {
		t.Errorf("disabled scale-up limit = %d; want 10", got)
	}
	down := &autoscalingv2.HPAScalingRules{SelectPolicy: sel(autoscalingv2.MaxChangePolicySelect), Policies: []autoscalingv2.HPAScalingPolicy{
		{Type: autoscalingv2.PercentScalingPolicy, Value: 50, PeriodSeconds: 60},
		{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60},
	}}
	if got := scaleDownLimit(now, 10, nil, nil, down); got != 5 {
		t.Errorf("scale-down limit from 10 = %d; want 5", got)
	}
}

func TestTolerances(t *testing.T) {
	tol := tolerances{0.1, 0.1}
	for ratio, want := range map[float64]bool{0.95: true, 1.1: true, 1.11: false, 0.89: false} {
		if got := tol.within(ratio); got != want {
			t.Errorf("within(%v) = %v; want %v", ratio, got, want)
		}
	}
}
