package job_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/job"
)

// slowWait is ctrltest.Wait with room for kube's pod failure backoff
// (10s, then 20s), which Jobs whose pods fail go through.
func slowWait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * ctrltest.Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", 3*ctrltest.Timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func slowWaitFor(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, ct batchv1.JobConditionType) *batchv1.Job {
	t.Helper()
	var j *batchv1.Job
	slowWait(t, "job "+name+" "+string(ct), func() bool {
		j = getJob(ctx, t, cs, ns, name)
		return hasTrueCondition(j, ct)
	})
	return j
}

func newIndexedJob(name, script string, completions, parallelism int32) *batchv1.Job {
	j := newJob(name, script)
	j.Spec.CompletionMode = new(batchv1.IndexedCompletion)
	j.Spec.Completions, j.Spec.Parallelism = new(completions), new(parallelism)
	return j
}

func createJob(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string, j *batchv1.Job) {
	t.Helper()
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func wantConditions(t *testing.T, j *batchv1.Job, reason, message string, types ...batchv1.JobConditionType) {
	t.Helper()
	for _, ct := range types {
		if c := condition(j, ct); c == nil || c.Status != corev1.ConditionTrue || c.Reason != reason || c.Message != message {
			t.Errorf("condition %s = %+v, want reason %q message %q", ct, c, reason, message)
		}
	}
}

// annotationsByIndex lists, per completion index, the values of the
// annotation on the Job's pods, oldest pod first.
func annotationsByIndex(pods []corev1.Pod, key string) map[int][]string {
	sort.Slice(pods, func(a, b int) bool { return pods[a].CreationTimestamp.Before(&pods[b].CreationTimestamp) })
	out := map[int][]string{}
	for _, p := range pods {
		ix, _ := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
		out[ix] = append(out[ix], p.Annotations[key])
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

func TestJobFeatures(t *testing.T) {
	cs, ctx := startServer(t)

	t.Run("an Indexed job runs one pod per index and completes when all succeeded", func(t *testing.T) {
		t.Parallel()
		const ns = "job-indexed"
		createNamespace(ctx, t, cs, ns)
		// Pods fail unless they get their index.
		j := newIndexedJob("idx", `[ -n "$JOB_COMPLETION_INDEX" ] && [ "$JOB_COMPLETION_INDEX" -lt 4 ]`, 4, 2)
		createJob(ctx, t, cs, ns, j)
		j = waitFor(ctx, t, cs, ns, "idx", batchv1.JobComplete)
		if s := j.Status; s.CompletedIndexes != "0-3" || s.Succeeded != 4 || s.Failed != 0 || s.Active != 0 || s.FailedIndexes != nil {
			t.Errorf("status = %+v, want completedIndexes 0-3, 4 succeeded", s)
		}
		wantConditions(t, j, "CompletionsReached", "Reached expected number of succeeded pods", batchv1.JobSuccessCriteriaMet, batchv1.JobComplete)
		pods := jobPods(ctx, t, cs, ns, "idx")
		if len(pods) != 4 {
			t.Fatalf("%d pods, want one per index", len(pods))
		}
		seen := map[string]bool{}
		for _, p := range pods {
			ix := p.Annotations[batchv1.JobCompletionIndexAnnotation]
			seen[ix] = true
			if p.Labels[batchv1.JobCompletionIndexAnnotation] != ix {
				t.Errorf("pod %s: index label %q, annotation %q", p.Name, p.Labels[batchv1.JobCompletionIndexAnnotation], ix)
			}
			if want := "idx-" + ix; p.Spec.Hostname != want {
				t.Errorf("pod %s: hostname %q, want %q", p.Name, p.Spec.Hostname, want)
			}
			if want := "idx-" + ix + "-"; p.GenerateName != want {
				t.Errorf("pod %s: generateName %q, want %q", p.Name, p.GenerateName, want)
			}
			env := p.Spec.Containers[0].Env
			if len(env) != 1 || env[0].Name != "JOB_COMPLETION_INDEX" || env[0].ValueFrom == nil || env[0].ValueFrom.FieldRef == nil ||
				env[0].ValueFrom.FieldRef.FieldPath != "metadata.labels['batch.kubernetes.io/job-completion-index']" {
				t.Errorf("pod %s: env %+v", p.Name, env)
			}
			if p.Status.Phase != corev1.PodSucceeded {
				t.Errorf("pod %s is %s", p.Name, p.Status.Phase)
			}
		}
		if len(seen) != 4 {
			t.Errorf("indexes %v, want 0 to 3", seen)
		}
	})

	t.Run("backoffLimitPerIndex runs every index and fails the job on failed indexes", func(t *testing.T) {
		t.Parallel()
		const ns = "job-per-index"
		createNamespace(ctx, t, cs, ns)
		j := newIndexedJob("odd", `exit $((JOB_COMPLETION_INDEX % 2))`, 4, 2)
		j.Spec.BackoffLimitPerIndex = new(int32(1))
		createJob(ctx, t, cs, ns, j)
		j = slowWaitFor(ctx, t, cs, ns, "odd", batchv1.JobFailed)
		wantConditions(t, j, "FailedIndexes", "Job has failed indexes", batchv1.JobFailureTarget, batchv1.JobFailed)
		if s := j.Status; s.FailedIndexes == nil || *s.FailedIndexes != "1,3" || s.CompletedIndexes != "0,2" || s.Failed != 4 || s.Succeeded != 2 {
			t.Errorf("status = %+v, want failedIndexes 1,3, completedIndexes 0,2, 4 failed, 2 succeeded", s)
		}
		got := annotationsByIndex(jobPods(ctx, t, cs, ns, "odd"), batchv1.JobIndexFailureCountAnnotation)
		want := map[int][]string{0: {"0"}, 1: {"0", "1"}, 2: {"0"}, 3: {"0", "1"}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("failure counts per index = %v, want %v", got, want)
		}
		ctrltest.Wait(t, "the FailedIndexes event", func() bool {
			return hasEvent(events(ctx, t, cs, ns, "odd"), "Warning FailedIndexes Job has failed indexes")
		})
	})

	t.Run("a job stops once more indexes failed than maxFailedIndexes", func(t *testing.T) {
		t.Parallel()
		const ns = "job-max-failed"
		createNamespace(ctx, t, cs, ns)
		j := newIndexedJob("fail", "exit 1", 4, 1)
		j.Spec.BackoffLimitPerIndex, j.Spec.MaxFailedIndexes = new(int32(0)), new(int32(0))
		createJob(ctx, t, cs, ns, j)
		j = waitFor(ctx, t, cs, ns, "fail", batchv1.JobFailed)
		wantConditions(t, j, "MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes", batchv1.JobFailureTarget, batchv1.JobFailed)
		if s := j.Status; s.FailedIndexes == nil || *s.FailedIndexes != "0" || s.Failed != 1 || s.CompletedIndexes != "" {
			t.Errorf("status = %+v, want failedIndexes 0, 1 failed", s)
		}
		if pods := jobPods(ctx, t, cs, ns, "fail"); len(pods) != 1 {
			t.Errorf("%d pods, want 1", len(pods))
		}
	})

	t.Run("a FailIndex rule fails the index at its first failure", func(t *testing.T) {
		t.Parallel()
		const ns = "job-fail-index"
		createNamespace(ctx, t, cs, ns)
		j := newIndexedJob("odd", `exit $((JOB_COMPLETION_INDEX % 2))`, 2, 2)
		j.Spec.BackoffLimitPerIndex = new(int32(1))
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:      batchv1.PodFailurePolicyActionFailIndex,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{1}},
		}}}
		createJob(ctx, t, cs, ns, j)
		j = waitFor(ctx, t, cs, ns, "odd", batchv1.JobFailed)
		wantConditions(t, j, "FailedIndexes", "Job has failed indexes", batchv1.JobFailed)
		if s := j.Status; s.FailedIndexes == nil || *s.FailedIndexes != "1" || s.CompletedIndexes != "0" || s.Failed != 1 || s.Succeeded != 1 {
			t.Errorf("status = %+v, want failedIndexes 1, completedIndexes 0, 1 failed, 1 succeeded", s)
		}
	})

	t.Run("a FailJob rule fails the job before its backoff limit", func(t *testing.T) {
		t.Parallel()
		const ns = "job-fail-job"
		createNamespace(ctx, t, cs, ns)
		j := newJob("answer", "exit 42")
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action: batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				ContainerName: new("main"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{40, 42},
			},
		}}}
		createJob(ctx, t, cs, ns, j)
		j = waitFor(ctx, t, cs, ns, "answer", batchv1.JobFailed)
		pods := jobPods(ctx, t, cs, ns, "answer")
		if len(pods) != 1 {
			t.Fatalf("%d pods, want 1", len(pods))
		}
		msg := fmt.Sprintf("Container main for pod %s/%s failed with exit code 42 matching FailJob rule at index 0", ns, pods[0].Name)
		wantConditions(t, j, "PodFailurePolicy", msg, batchv1.JobFailureTarget, batchv1.JobFailed)
		if s := j.Status; s.Failed != 1 || s.Active != 0 {
			t.Errorf("status = %+v, want 1 failed", s)
		}
		ctrltest.Wait(t, "the PodFailurePolicy event", func() bool {
			return hasEvent(events(ctx, t, cs, ns, "answer"), "Warning PodFailurePolicy "+msg)
		})
	})

	t.Run("an Ignore rule does not count the failure", func(t *testing.T) {
		t.Parallel()
		const ns = "job-ignore"
		createNamespace(ctx, t, cs, ns)
		// Each index's first pod fails with 42; its replacement, told by
		// its ignored-failure count, succeeds. One counted failure would
		// fail the index (backoffLimitPerIndex 0).
		j := newIndexedJob("retry", `[ -n "$IGNORED" ] && exit 0; exit 42`, 2, 2)
		j.Spec.BackoffLimitPerIndex = new(int32(0))
		j.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "IGNORED", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
			FieldPath: "metadata.annotations['batch.kubernetes.io/job-index-ignored-failure-count']",
		}}}}
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:      batchv1.PodFailurePolicyActionIgnore,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
		}}}
		createJob(ctx, t, cs, ns, j)
		j = slowWaitFor(ctx, t, cs, ns, "retry", batchv1.JobComplete)
		if s := j.Status; s.Failed != 0 || s.Succeeded != 2 || s.CompletedIndexes != "0,1" || s.FailedIndexes == nil || *s.FailedIndexes != "" {
			t.Errorf("status = %+v, want 2 succeeded, none failed", s)
		}
		pods := jobPods(ctx, t, cs, ns, "retry")
		if got, want := fmt.Sprint(annotationsByIndex(pods, batchv1.JobIndexIgnoredFailureCountAnnotation)), fmt.Sprint(map[int][]string{0: {"", "1"}, 1: {"", "1"}}); got != want {
			t.Errorf("ignored failure counts per index = %s, want %s", got, want)
		}
		if got, want := fmt.Sprint(annotationsByIndex(pods, batchv1.JobIndexFailureCountAnnotation)), fmt.Sprint(map[int][]string{0: {"0", "0"}, 1: {"0", "0"}}); got != want {
			t.Errorf("failure counts per index = %s, want %s", got, want)
		}
	})

	t.Run("an evicted pod matching an Ignore rule on DisruptionTarget is replaced uncounted", func(t *testing.T) {
		t.Parallel()
		const ns = "job-disruption"
		createNamespace(ctx, t, cs, ns)
		j := newIndexedJob("evicted", `[ -n "$IGNORED" ] && exit 0; sleep 3600`, 1, 1)
		j.Spec.BackoffLimit = new(int32(0))
		j.Spec.BackoffLimitPerIndex = new(int32(0))
		j.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "IGNORED", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
			FieldPath: "metadata.annotations['batch.kubernetes.io/job-index-ignored-failure-count']",
		}}}}
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:          batchv1.PodFailurePolicyActionIgnore,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}},
		}}}
		createJob(ctx, t, cs, ns, j)
		var pod corev1.Pod
		ctrltest.Wait(t, "the pod running", func() bool {
			pods := jobPods(ctx, t, cs, ns, "evicted")
			if len(pods) == 1 && pods[0].Status.Phase == corev1.PodRunning {
				pod = pods[0]
				return true
			}
			return false
		})
		if err := cs.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: ns}}); err != nil {
			t.Fatal(err)
		}
		j = slowWaitFor(ctx, t, cs, ns, "evicted", batchv1.JobComplete)
		if s := j.Status; s.Failed != 0 || s.Succeeded != 1 {
			t.Errorf("status = %+v, want 1 succeeded, none failed", s)
		}
	})

	t.Run("a succeededIndexes success policy completes the job early", func(t *testing.T) {
		t.Parallel()
		const ns = "job-success-indexes"
		createNamespace(ctx, t, cs, ns)
		j := newIndexedJob("leader", `exit $((JOB_COMPLETION_INDEX % 2))`, 5, 2)
		j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: new("0")}}}
		createJob(ctx, t, cs, ns, j)
		j = waitFor(ctx, t, cs, ns, "leader", batchv1.JobComplete)
		wantConditions(t, j, "SuccessPolicy", "Matched rules at index 0", batchv1.JobSuccessCriteriaMet, batchv1.JobComplete)
		if s := j.Status; s.CompletedIndexes != "0" || s.Active != 0 || *s.Ready != 0 || *s.Terminating != 0 || s.CompletionTime == nil {
			t.Errorf("status = %+v, want completedIndexes 0, nothing active", s)
		}
	})

	t.Run("a succeededCount success policy terminates the remaining pods uncounted", func(t *testing.T) {
		t.Parallel()
		const ns = "job-success-count"
		createNamespace(ctx, t, cs, ns)
		j := newIndexedJob("first", `[ "$JOB_COMPLETION_INDEX" = 0 ] || sleep 3600`, 3, 3)
		j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: new(int32(1))}}}
		createJob(ctx, t, cs, ns, j)
		j = waitFor(ctx, t, cs, ns, "first", batchv1.JobComplete)
		wantConditions(t, j, "SuccessPolicy", "Matched rules at index 0", batchv1.JobSuccessCriteriaMet, batchv1.JobComplete)
		if s := j.Status; s.CompletedIndexes != "0" || s.Succeeded != 1 || s.Failed != 0 || s.Active != 0 || *s.Terminating != 0 {
			t.Errorf("status = %+v, want completedIndexes 0, 1 succeeded, none failed or left", s)
		}
		for _, p := range jobPods(ctx, t, cs, ns, "first") {
			if p.Annotations[batchv1.JobCompletionIndexAnnotation] != "0" && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodFailed {
				t.Errorf("pod %s of index %s still runs (%s)", p.Name, p.Annotations[batchv1.JobCompletionIndexAnnotation], p.Status.Phase)
			}
		}
	})

	t.Run("a job managed by another controller is left alone", func(t *testing.T) {
		t.Parallel()
		const ns = "job-managed-by"
		createNamespace(ctx, t, cs, ns)
		other := newJob("elsewhere", "echo hi")
		other.Spec.ManagedBy = new("example.com/queue")
		createJob(ctx, t, cs, ns, other)
		// A Job of ours, created after it, completes: the controller has
		// seen the other one by then.
		createJob(ctx, t, cs, ns, newJob("here", "echo hi"))
		waitFor(ctx, t, cs, ns, "here", batchv1.JobComplete)
		j := getJob(ctx, t, cs, ns, "elsewhere")
		if s := j.Status; s.StartTime != nil || len(s.Conditions) != 0 || s.Active != 0 || s.Ready != nil {
			t.Errorf("status of a job managed elsewhere = %+v, want untouched", s)
		}
		if pods := jobPods(ctx, t, cs, ns, "elsewhere"); len(pods) != 0 {
			t.Errorf("%d pods of a job managed elsewhere", len(pods))
		}
	})

	t.Run("a job adopts an orphan it selects and releases a pod it no longer selects", func(t *testing.T) {
		t.Parallel()
		const ns = "job-adopt"
		createNamespace(ctx, t, cs, ns)
		j := newJob("adopt", "sleep 3600")
		j.Spec.Completions, j.Spec.Parallelism = new(int32(4)), new(int32(2))
		createJob(ctx, t, cs, ns, j)
		j = getJob(ctx, t, cs, ns, "adopt")
		var name string
		ctrltest.Wait(t, "two pods", func() bool {
			pods := jobPods(ctx, t, cs, ns, "adopt")
			if len(pods) == 2 {
				name = pods[0].Name
			}
			return len(pods) == 2
		})
		if _, err := cs.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"ownerReferences":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "the pod adopted again", func() bool {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ref := metav1.GetControllerOf(p)
			return ref != nil && ref.UID == j.UID && ref.Kind == "Job" && slices.Contains(p.Finalizers, job.TrackingFinalizer)
		})
		if _, err := cs.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"labels":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "the pod released", func() bool {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return metav1.GetControllerOf(p) == nil && !slices.Contains(p.Finalizers, job.TrackingFinalizer)
		})
		ctrltest.Wait(t, "a replacement pod", func() bool {
			return len(jobPods(ctx, t, cs, ns, "adopt")) == 2
		})
	})

	t.Run("with podReplacementPolicy Failed a terminating pod is replaced once it failed", func(t *testing.T) {
		t.Parallel()
		const ns = "job-replace-failed"
		createNamespace(ctx, t, cs, ns)
		j := newJob("graceful", "_term() { sleep 2; exit 143; }; trap _term TERM; while true; do sleep 1; done")
		j.Spec.PodReplacementPolicy = new(batchv1.Failed)
		j.Spec.BackoffLimit = new(int32(1))
		createJob(ctx, t, cs, ns, j)
		var name string
		ctrltest.Wait(t, "the pod running", func() bool {
			pods := jobPods(ctx, t, cs, ns, "graceful")
			if len(pods) == 1 && pods[0].Status.Phase == corev1.PodRunning {
				name = pods[0].Name
				return true
			}
			return false
		})
		if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64(30))}); err != nil {
			t.Fatal(err)
		}
		var s batchv1.JobStatus
		ctrltest.Wait(t, "the pod counted as terminating", func() bool {
			s = getJob(ctx, t, cs, ns, "graceful").Status
			return s.Terminating != nil && *s.Terminating == 1
		})
		if s.Active != 0 || s.Failed != 0 {
			t.Errorf("while the pod terminates: %d active, %d failed, want none", s.Active, s.Failed)
		}
		// The replacement waits for the failure, then for the backoff.
		if pods := jobPods(ctx, t, cs, ns, "graceful"); len(pods) != 1 {
			t.Errorf("%d pods while the first terminates, want no replacement yet", len(pods))
		}
		slowWait(t, "the replacement", func() bool {
			s := getJob(ctx, t, cs, ns, "graceful").Status
			return s.Active == 1 && s.Failed == 1 && s.Terminating != nil && *s.Terminating == 0
		})
	})

	t.Run("an Indexed job scaled down in completions and parallelism completes with its lower indexes", func(t *testing.T) {
		t.Parallel()
		const ns = "job-elastic"
		createNamespace(ctx, t, cs, ns)
		createJob(ctx, t, cs, ns, newIndexedJob("elastic", `[ "$JOB_COMPLETION_INDEX" -lt 2 ] || sleep 3600`, 4, 4))
		ctrltest.Wait(t, "indexes 0 and 1 succeeded", func() bool {
			return getJob(ctx, t, cs, ns, "elastic").Status.CompletedIndexes == "0,1"
		})
		if _, err := cs.BatchV1().Jobs(ns).Patch(ctx, "elastic", types.MergePatchType, []byte(`{"spec":{"completions":2,"parallelism":2}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		j := waitFor(ctx, t, cs, ns, "elastic", batchv1.JobComplete)
		if s := j.Status; s.CompletedIndexes != "0,1" || s.Succeeded != 2 || s.Failed != 0 || s.Active != 0 || *s.Terminating != 0 {
			t.Errorf("status = %+v, want completedIndexes 0,1, 2 succeeded, none failed or left", s)
		}
	})

	t.Run("suspending a running job deletes its pods uncounted", func(t *testing.T) {
		t.Parallel()
		const ns = "job-suspend-running"
		createNamespace(ctx, t, cs, ns)
		j := newJob("pause", "sleep 3600")
		j.Spec.Completions, j.Spec.Parallelism = new(int32(4)), new(int32(2))
		createJob(ctx, t, cs, ns, j)
		ctrltest.Wait(t, "two running pods", func() bool {
			n := 0
			for _, p := range jobPods(ctx, t, cs, ns, "pause") {
				if p.Status.Phase == corev1.PodRunning {
					n++
				}
			}
			return n == 2
		})
		if _, err := cs.BatchV1().Jobs(ns).Patch(ctx, "pause", types.MergePatchType, []byte(`{"spec":{"suspend":true}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		j = waitFor(ctx, t, cs, ns, "pause", batchv1.JobSuspended)
		ctrltest.Wait(t, "the pods gone", func() bool {
			return len(jobPods(ctx, t, cs, ns, "pause")) == 0
		})
		ctrltest.Wait(t, "no pod active or terminating", func() bool {
			j = getJob(ctx, t, cs, ns, "pause")
			return j.Status.Active == 0 && j.Status.Terminating != nil && *j.Status.Terminating == 0
		})
		if s := j.Status; s.Failed != 0 || s.Succeeded != 0 || s.StartTime != nil {
			t.Errorf("status of the suspended job = %+v, want nothing counted and no start time", s)
		}
	})

	t.Run("the first matching pod failure policy rule decides: Count before FailJob", func(t *testing.T) {
		t.Parallel()
		const ns = "job-count"
		createNamespace(ctx, t, cs, ns)
		j := newJob("three", "exit 3")
		j.Spec.BackoffLimit = new(int32(0))
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:      batchv1.PodFailurePolicyActionCount,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{3}},
		}, {
			Action:      batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{0}},
		}}}
		createJob(ctx, t, cs, ns, j)
		j = waitFor(ctx, t, cs, ns, "three", batchv1.JobFailed)
		wantConditions(t, j, "BackoffLimitExceeded", "Job has reached the specified backoff limit", batchv1.JobFailureTarget, batchv1.JobFailed)
		if j.Status.Failed != 1 {
			t.Errorf("%d failed, want 1", j.Status.Failed)
		}
	})

	t.Run("an Indexed job keeps one pod per index", func(t *testing.T) {
		t.Parallel()
		const ns = "job-duplicate"
		createNamespace(ctx, t, cs, ns)
		createJob(ctx, t, cs, ns, newIndexedJob("dup", "sleep 3600", 1, 1))
		j := getJob(ctx, t, cs, ns, "dup")
		ctrltest.Wait(t, "the pod of index 0 running", func() bool {
			pods := jobPods(ctx, t, cs, ns, "dup")
			return len(pods) == 1 && pods[0].Status.Phase == corev1.PodRunning
		})
		// An orphan of the same index, which the Job adopts.
		orphan := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "dup-0-orphan", Labels: j.Spec.Template.Labels,
				Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: "0"}},
			Spec: *j.Spec.Template.Spec.DeepCopy(),
		}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "one pod left for index 0", func() bool {
			live := 0
			for _, p := range jobPods(ctx, t, cs, ns, "dup") {
				if p.DeletionTimestamp == nil {
					live++
				}
			}
			s := getJob(ctx, t, cs, ns, "dup").Status
			return live == 1 && s.Active == 1 && s.Failed == 0
		})
	})
}
