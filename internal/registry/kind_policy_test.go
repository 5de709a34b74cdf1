package registry

import "testing"

func TestValidatePodDisruptionBudget(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     string // the 422 message; empty when the object is valid
	}{{
		name: "a budget with minAvailable is valid",
		manifest: `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec: {minAvailable: 2, selector: {matchLabels: {app: web}}}
`,
	}, {
		name: "a budget with a percentage maxUnavailable is valid",
		manifest: `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec: {maxUnavailable: "25%", selector: {matchLabels: {app: web}}}
`,
	}, {
		name: "a negative minAvailable and a percentage over 100 are refused",
		manifest: `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec: {minAvailable: -1}
`,
		want: `PodDisruptionBudget.policy "web" is invalid: spec.minAvailable: Invalid value: -1: must be greater than or equal to 0`,
	}, {
		name: "a maxUnavailable over 100% is refused",
		manifest: `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec: {maxUnavailable: "150%"}
`,
		want: `PodDisruptionBudget.policy "web" is invalid: spec.maxUnavailable: Invalid value: "150%": must not be greater than 100%`,
	}, {
		name: "an unknown unhealthy pod eviction policy is refused",
		manifest: `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec: {minAvailable: 1, unhealthyPodEvictionPolicy: Sometimes}
`,
		want: `PodDisruptionBudget.policy "web" is invalid: spec.unhealthyPodEvictionPolicy: Unsupported value: "Sometimes": supported values: "AlwaysAllow", "IfHealthyBudget"`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decode(t, tt.manifest)
			if got := invalid(obj, create(obj)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestPodDisruptionBudgetWithBothBoundsIsRefused(t *testing.T) {
	obj := decode(t, `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec: {minAvailable: 1, maxUnavailable: 1}
`)
	errs := create(obj)
	if len(errs) != 1 || errs[0].Field != "spec" || errs[0].Detail != "minAvailable and maxUnavailable cannot be both set" {
		t.Errorf("errors = %v, want one on spec: minAvailable and maxUnavailable cannot be both set", errs)
	}
}
