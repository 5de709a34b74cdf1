package registry

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// createWithUID is create, with the UID the generic layer assigns before
// the strategy's preparation (a Job's generated selector is made of it).
func createWithUID(t *testing.T, obj runtime.Object) string {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	m.SetUID("0b9bbd1c-5cb2-4b0d-9a0e-7d6a43ef61aa")
	return invalid(obj, create(obj))
}

func TestJobDefaultsAndGeneratedSelector(t *testing.T) {
	obj := decode(t, `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: pi, image: busybox}]
`)
	if msg := createWithUID(t, obj); msg != "" {
		t.Fatal(msg)
	}
	job := obj.(*batchv1.Job)
	// The pod template's own defaults are the Pod's; only the Job's part
	// is compared here.
	sameJSON(t, &batchv1.Job{ObjectMeta: job.ObjectMeta, Spec: batchv1.JobSpec{
		Parallelism: job.Spec.Parallelism, Completions: job.Spec.Completions, BackoffLimit: job.Spec.BackoffLimit,
		CompletionMode: job.Spec.CompletionMode, Suspend: job.Spec.Suspend, ManualSelector: job.Spec.ManualSelector,
		PodReplacementPolicy: job.Spec.PodReplacementPolicy, Selector: job.Spec.Selector,
	}}, `
metadata:
  name: pi
  namespace: default
  uid: 0b9bbd1c-5cb2-4b0d-9a0e-7d6a43ef61aa
  labels:
    batch.kubernetes.io/controller-uid: 0b9bbd1c-5cb2-4b0d-9a0e-7d6a43ef61aa
    batch.kubernetes.io/job-name: pi
    controller-uid: 0b9bbd1c-5cb2-4b0d-9a0e-7d6a43ef61aa
    job-name: pi
spec:
  parallelism: 1
  completions: 1
  backoffLimit: 6
  completionMode: NonIndexed
  suspend: false
  manualSelector: false
  podReplacementPolicy: TerminatingOrFailed
  selector:
    matchLabels:
      batch.kubernetes.io/controller-uid: 0b9bbd1c-5cb2-4b0d-9a0e-7d6a43ef61aa
  template: {metadata: {}, spec: {containers: null}}
status: {}
`)
	if got := job.Spec.Template.Labels; len(got) != 4 || got[JobNameLabel] != "pi" || got[legacyJobNameLabel] != "pi" {
		t.Errorf("template labels = %v, want the four generated labels", got)
	}
}

func TestJobWithParallelismOnlyIsAWorkQueue(t *testing.T) {
	obj := decode(t, `
apiVersion: batch/v1
kind: Job
metadata: {name: queue, namespace: default, labels: {team: data}}
spec:
  parallelism: 3
  template:
    spec:
      restartPolicy: OnFailure
      containers: [{name: w, image: busybox}]
`)
	if msg := createWithUID(t, obj); msg != "" {
		t.Fatal(msg)
	}
	job := obj.(*batchv1.Job)
	if job.Spec.Completions != nil || *job.Spec.Parallelism != 3 {
		t.Errorf("completions %v, parallelism %d: want nil and 3", job.Spec.Completions, *job.Spec.Parallelism)
	}
	if len(job.Labels) != 1 || job.Labels["team"] != "data" {
		t.Errorf("the Job's own labels became %v", job.Labels)
	}
}

func TestValidateJob(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     string // the 422 message; empty when the object is valid
	}{{
		name: "a pod template that restarts always is refused",
		manifest: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default}
spec:
  template:
    spec:
      containers: [{name: pi, image: busybox}]
`,
		want: `Job.batch "pi" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`,
	}, {
		name: "negative counts are refused",
		manifest: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default}
spec:
  parallelism: -1
  completions: -2
  backoffLimit: -3
  template:
    spec:
      restartPolicy: Never
      containers: [{name: pi, image: busybox}]
`,
		want: `Job.batch "pi" is invalid: [spec.parallelism: Invalid value: -1: must be greater than or equal to 0, spec.completions: Invalid value: -2: must be greater than or equal to 0, spec.backoffLimit: Invalid value: -3: must be greater than or equal to 0]`,
	}, {
		name: "Indexed completion needs completions",
		manifest: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default}
spec:
  parallelism: 2
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers: [{name: pi, image: busybox}]
`,
		want: `Job.batch "pi" is invalid: spec.completions: Required value: when completion mode is Indexed`,
	}, {
		name: "a manual selector must match the template",
		manifest: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default}
spec:
  manualSelector: true
  selector: {matchLabels: {app: pi}}
  template:
    metadata: {labels: {app: other}}
    spec:
      restartPolicy: Never
      containers: [{name: pi, image: busybox}]
`,
		want: `Job.batch "pi" is invalid: spec.template.metadata.labels: Invalid value: {"app":"other"}: ` + "`selector` does not match template `labels`",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := createWithUID(t, decode(t, tt.manifest)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestJobTemplateAndSelectorAreImmutable(t *testing.T) {
	manifest := `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default, resourceVersion: "1"}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: pi, image: busybox}]
`
	old := decode(t, manifest)
	if msg := createWithUID(t, old); msg != "" {
		t.Fatal(msg)
	}
	job := old.DeepCopyObject().(*batchv1.Job)
	job.Spec.Template.Spec.Containers[0].Image = "busybox:1.36"
	job.Spec.Parallelism = new(int32(4))
	msg := invalid(job, update(job, old))
	want := `Job.batch "pi" is invalid: spec.template: Invalid value: `
	if len(msg) < len(want) || msg[:len(want)] != want || !strings.Contains(msg, "field is immutable") {
		t.Errorf("got %s\nwant %s...: field is immutable", msg, want)
	}
	if strings.Contains(msg, "parallelism") {
		t.Errorf("parallelism is mutable, got %s", msg)
	}
}

func TestCronJobDefaultsAndValidation(t *testing.T) {
	obj := decode(t, `
apiVersion: batch/v1
kind: CronJob
metadata: {name: hello, namespace: default}
spec:
  schedule: "*/1 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: hello, image: busybox}]
`)
	if msg := createWithUID(t, obj); msg != "" {
		t.Fatal(msg)
	}
	cj := obj.(*batchv1.CronJob)
	if cj.Spec.ConcurrencyPolicy != batchv1.AllowConcurrent || *cj.Spec.Suspend || *cj.Spec.SuccessfulJobsHistoryLimit != 3 || *cj.Spec.FailedJobsHistoryLimit != 1 {
		t.Errorf("defaults: %+v", cj.Spec)
	}
	if cj.Spec.JobTemplate.Spec.BackoffLimit != nil || cj.Spec.JobTemplate.Spec.Selector != nil {
		t.Errorf("the job template got a Job's defaults: %+v", cj.Spec.JobTemplate.Spec)
	}

	tests := []struct {
		name     string
		manifest string
		want     string
	}{{
		name: "a schedule with too few fields is refused with the parser's message",
		manifest: `
apiVersion: batch/v1
kind: CronJob
metadata: {name: hello, namespace: default}
spec:
  schedule: "* * *"
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
`,
		want: `CronJob.batch "hello" is invalid: spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]`,
	}, {
		name: "a time zone in the schedule is refused",
		manifest: `
apiVersion: batch/v1
kind: CronJob
metadata: {name: hello, namespace: default}
spec:
  schedule: "CRON_TZ=UTC 0 * * * *"
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
`,
		want: `CronJob.batch "hello" is invalid: spec.schedule: Invalid value: "CRON_TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead`,
	}, {
		name: "an unknown time zone and concurrency policy are refused",
		manifest: `
apiVersion: batch/v1
kind: CronJob
metadata: {name: hello, namespace: default}
spec:
  schedule: "@hourly"
  timeZone: Mars/Olympus
  concurrencyPolicy: Sometimes
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
`,
		want: `CronJob.batch "hello" is invalid: [spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus, spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"]`,
	}, {
		name: "a name longer than 52 characters is refused",
		manifest: `
apiVersion: batch/v1
kind: CronJob
metadata: {name: a-very-long-cronjob-name-that-is-longer-than-fifty-two-chars, namespace: default}
spec:
  schedule: "@daily"
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
`,
		want: `CronJob.batch "a-very-long-cronjob-name-that-is-longer-than-fifty-two-chars" is invalid: metadata.name: Invalid value: "a-very-long-cronjob-name-that-is-longer-than-fifty-two-chars": must be no more than 52 characters`,
	}, {
		name: "a job template with a selector is refused",
		manifest: `
apiVersion: batch/v1
kind: CronJob
metadata: {name: hello, namespace: default}
spec:
  schedule: "0 3 * * 1"
  jobTemplate: {spec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
`,
		want: `CronJob.batch "hello" is invalid: spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: ` + "`selector` will be auto-generated",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := createWithUID(t, decode(t, tt.manifest)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
