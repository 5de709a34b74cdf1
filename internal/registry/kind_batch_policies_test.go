package registry

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestValidateJobPolicies(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     string // the 422 message; empty when the object is valid
	}{{
		name: "a valid Indexed Job with every policy",
		manifest: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default}
spec:
  completions: 4
  parallelism: 2
  completionMode: Indexed
  backoffLimitPerIndex: 1
  maxFailedIndexes: 2
  managedBy: example.com/queue
  podFailurePolicy:
    rules:
    - action: FailIndex
      onExitCodes: {containerName: main, operator: In, values: [1, 2]}
    - action: Ignore
      onPodConditions: [{type: DisruptionTarget}]
  successPolicy:
    rules: [{succeededIndexes: "0,2-3", succeededCount: 2}]
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
`,
	}, {
		name: "per-index fields need Indexed completion",
		manifest: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default}
spec:
  backoffLimitPerIndex: 1
  maxFailedIndexes: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
`,
		want: `Job.batch "pi" is invalid: [spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode, spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode]`,
	}, {
		name: "a pod failure policy needs restartPolicy Never and well-formed rules",
		manifest: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default}
spec:
  podFailurePolicy:
    rules:
    - action: FailIndex
      onExitCodes: {containerName: other, operator: In, values: [2, 0]}
  template:
    spec:
      restartPolicy: OnFailure
      containers: [{name: main, image: busybox}]
`,
		want: `Job.batch "pi" is invalid: [spec.podFailurePolicy.rules[0].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set, spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: "other": must be one of the container or initContainer names in the pod template, spec.podFailurePolicy.rules[0].onExitCodes.values[1]: Invalid value: 0: must not be 0 for the In operator, spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [2,0]: must be ordered, spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified]`,
	}, {
		name: "a success policy needs Indexed completion",
		manifest: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default}
spec:
  successPolicy:
    rules: [{succeededCount: 1}]
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
`,
		want: `Job.batch "pi" is invalid: spec.successPolicy: Invalid value: {"rules":[{"succeededCount":1}]}: requires indexed completion mode`,
	}, {
		name: "success policy indexes must be below completions",
		manifest: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default}
spec:
  completions: 3
  completionMode: Indexed
  successPolicy:
    rules: [{succeededIndexes: "1-3"}]
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
`,
		want: `Job.batch "pi" is invalid: spec.successPolicy.rules[0].succeededIndexes: Invalid value: "1-3": error parsing succeededIndexes: too large index: "3"`,
	}, {
		name: "an Indexed Job's last hostname must be a DNS label",
		manifest: `
apiVersion: batch/v1
kind: Job
metadata: {name: a123456789012345678901234567890123456789012345678901234567890, namespace: default}
spec:
  completions: 100
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
`,
		want: `Job.batch "a123456789012345678901234567890123456789012345678901234567890" is invalid: metadata.name: Invalid value: "a123456789012345678901234567890123456789012345678901234567890": will not able to create pod with invalid DNS label: a123456789012345678901234567890123456789012345678901234567890-99`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := createWithUID(t, decode(t, tt.manifest)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestJobPoliciesDefaultsAndImmutability(t *testing.T) {
	manifest := `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default, resourceVersion: "1"}
spec:
  completions: 2
  parallelism: 2
  completionMode: Indexed
  backoffLimitPerIndex: 1
  podFailurePolicy:
    rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
`
	old := decode(t, manifest)
	if msg := createWithUID(t, old); msg != "" {
		t.Fatal(msg)
	}
	j := old.(*batchv1.Job)
	if got := j.Spec.PodFailurePolicy.Rules[0].OnPodConditions[0].Status; got != corev1.ConditionTrue {
		t.Errorf("onPodConditions status defaulted to %q, want True", got)
	}
	if got := *j.Spec.BackoffLimit; got != 1<<31-1 {
		t.Errorf("backoffLimit defaulted to %d with backoffLimitPerIndex, want MaxInt32", got)
	}
	if got := *j.Spec.PodReplacementPolicy; got != batchv1.Failed {
		t.Errorf("podReplacementPolicy defaulted to %s with a pod failure policy, want Failed", got)
	}

	scaled := j.DeepCopy()
	scaled.Spec.Completions, scaled.Spec.Parallelism = new(int32(3)), new(int32(3))
	if msg := invalid(scaled, update(scaled, old)); msg != "" {
		t.Errorf("scaling an Indexed Job's completions with parallelism: %s", msg)
	}
	changed := j.DeepCopy()
	changed.Spec.Completions = new(int32(3))
	changed.Spec.BackoffLimitPerIndex = new(int32(2))
	changed.Spec.ManagedBy = new("example.com/other")
	want := `Job.batch "pi" is invalid: [spec.completions: Invalid value: 3: can only be modified in tandem with spec.parallelism, spec.backoffLimitPerIndex: Invalid value: 2: field is immutable, spec.managedBy: Invalid value: "example.com/other": field is immutable]`
	if msg := invalid(changed, update(changed, old)); msg != want {
		t.Errorf("got  %s\nwant %s", msg, want)
	}
}

func TestJobStatusTransitions(t *testing.T) {
	manifest := `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default, resourceVersion: "1"}
spec:
  completions: 3
  parallelism: 3
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
`
	old := decode(t, manifest)
	if msg := createWithUID(t, old); msg != "" {
		t.Fatal(msg)
	}
	o := old.(*batchv1.Job)
	o.Status.Failed, o.Status.StartTime = 2, &metav1.Time{Time: time.Unix(1000, 0)}

	j := o.DeepCopy()
	j.Status.Failed = 1
	j.Status.CompletedIndexes = "2,1"
	j.Status.FailedIndexes = new("0")
	j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	j.Status.CompletionTime = &metav1.Time{Time: time.Unix(2000, 0)}
	want := `Job.batch "pi" is invalid: [status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition, ` +
		`status.completedIndexes: Invalid value: "2,1": error parsing completedIndexes: non-increasing order, previous: 2, current: 1, ` +
		`status.failedIndexes: Invalid value: "0": cannot set non-null failedIndexes when backoffLimitPerIndex is null, ` +
		`status.failed: Invalid value: 1: cannot decrease the failed counter]`
	if msg := invalid(j, update(j, o)); msg != want {
		t.Errorf("got  %s\nwant %s", msg, want)
	}

	done := o.DeepCopy()
	done.Status.CompletedIndexes, done.Status.Succeeded = "0-2", 3
	done.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue},
	}
	done.Status.CompletionTime = &metav1.Time{Time: time.Unix(2000, 0)}
	if msg := invalid(done, update(done, o)); msg != "" {
		t.Errorf("completing the job: %s", msg)
	}
}
