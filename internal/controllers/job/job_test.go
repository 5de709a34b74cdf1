package job_test

import (
	"context"
	"slices"
	"sort"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/job"
	"minik/internal/testserver"
)

// startServer runs the job, ttl-after-finished and garbage collector
// controllers with a scheduler and one simulated node, which runs the
// pods' commands.
func startServer(t *testing.T) (kubernetes.Interface, context.Context) {
	t.Helper()
	srv := testserver.StartWith(t, testserver.Options{
		Controllers: []string{job.Name, job.TTLName, "garbagecollector"},
		Scheduler:   true,
		Nodes:       1,
	})
	return srv.Client(t), t.Context()
}

func createNamespace(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func newJob(name, script string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "busybox:1.36", Command: []string{"sh", "-c", script}}},
			}},
		},
	}
}

func getJob(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) *batchv1.Job {
	t.Helper()
	j, err := cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func condition(j *batchv1.Job, ct batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == ct {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

func hasTrueCondition(j *batchv1.Job, ct batchv1.JobConditionType) bool {
	c := condition(j, ct)
	return c != nil && c.Status == corev1.ConditionTrue
}

func waitFor(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, ct batchv1.JobConditionType) *batchv1.Job {
	t.Helper()
	var j *batchv1.Job
	ctrltest.Wait(t, "job "+name+" "+string(ct), func() bool {
		j = getJob(ctx, t, cs, ns, name)
		return hasTrueCondition(j, ct)
	})
	return j
}

func jobPods(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) []corev1.Pod {
	t.Helper()
	l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// events returns "Type Reason Message" of the job controller's events
// about the Job, sorted.
func events(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) []string {
	t.Helper()
	l, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String()})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range l.Items {
		if e.Source.Component == job.Component {
			out = append(out, e.Type+" "+e.Reason+" "+e.Message)
		}
	}
	sort.Strings(out)
	return out
}

func hasEvent(evs []string, want string) bool { return slices.Contains(evs, want) }

func TestJob(t *testing.T) {
	cs, ctx := startServer(t)

	t.Run("a job of 3 completions, 2 at a time, completes", func(t *testing.T) {
		t.Parallel()
		const ns = "job-complete"
		createNamespace(ctx, t, cs, ns)
		j := newJob("pi", "echo 3.14159")
		j.Spec.Completions, j.Spec.Parallelism = new(int32(3)), new(int32(2))
		if _, err := cs.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		j = waitFor(ctx, t, cs, ns, "pi", batchv1.JobComplete)
		if s := j.Status; s.Succeeded != 3 || s.Failed != 0 || s.Active != 0 || s.StartTime == nil || s.CompletionTime == nil {
			t.Errorf("status = %+v, want 3 succeeded, none active, start and completion times", s)
		}
		for _, ct := range []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet, batchv1.JobComplete} {
			c := condition(j, ct)
			if c == nil || c.Reason != "CompletionsReached" || c.Message != "Reached expected number of succeeded pods" {
				t.Errorf("condition %s = %+v", ct, c)
			}
		}
		if u := j.Status.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) != 0 {
			t.Errorf("uncounted pods left: %+v", u)
		}
		pods := jobPods(ctx, t, cs, ns, "pi")
		if len(pods) != 3 {
			t.Fatalf("%d pods, want 3", len(pods))
		}
		var created []string
		for _, p := range pods {
			created = append(created, "Normal SuccessfulCreate Created pod: "+p.Name)
			if slices.Contains(p.Finalizers, job.TrackingFinalizer) {
				t.Errorf("pod %s still has the tracking finalizer", p.Name)
			}
			if p.Status.Phase != corev1.PodSucceeded {
				t.Errorf("pod %s is %s", p.Name, p.Status.Phase)
			}
			if ref := metav1.GetControllerOf(&p); ref == nil || ref.Kind != "Job" || ref.UID != j.UID {
				t.Errorf("pod %s controller = %+v", p.Name, ref)
			}
		}
		ctrltest.Wait(t, "creation and completion events", func() bool {
			evs := events(ctx, t, cs, ns, "pi")
			for _, c := range created {
				if !hasEvent(evs, c) {
					return false
				}
			}
			return hasEvent(evs, "Normal Completed Job completed")
		})
	})

	t.Run("a job whose pods fail hits its backoff limit", func(t *testing.T) {
		t.Parallel()
		const ns = "job-fail"
		createNamespace(ctx, t, cs, ns)
		j := newJob("broken", "echo oops; exit 1")
		j.Spec.Completions, j.Spec.Parallelism, j.Spec.BackoffLimit = new(int32(2)), new(int32(2)), new(int32(1))
		if _, err := cs.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		j = waitFor(ctx, t, cs, ns, "broken", batchv1.JobFailed)
		for _, ct := range []batchv1.JobConditionType{batchv1.JobFailureTarget, batchv1.JobFailed} {
			c := condition(j, ct)
			if c == nil || c.Reason != "BackoffLimitExceeded" || c.Message != "Job has reached the specified backoff limit" {
				t.Errorf("condition %s = %+v", ct, c)
			}
		}
		if s := j.Status; s.Failed != 2 || s.Succeeded != 0 || s.Active != 0 || s.CompletionTime != nil {
			t.Errorf("status = %+v, want 2 failed, no completion time", s)
		}
		ctrltest.Wait(t, "the BackoffLimitExceeded event", func() bool {
			return hasEvent(events(ctx, t, cs, ns, "broken"), "Warning BackoffLimitExceeded Job has reached the specified backoff limit")
		})
	})

	t.Run("a job past its active deadline fails", func(t *testing.T) {
		t.Parallel()
		const ns = "job-deadline"
		createNamespace(ctx, t, cs, ns)
		j := newJob("slow", "sleep 3600")
		j.Spec.ActiveDeadlineSeconds = new(int64(1))
		if _, err := cs.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		j = waitFor(ctx, t, cs, ns, "slow", batchv1.JobFailed)
		if c := condition(j, batchv1.JobFailed); c.Reason != "DeadlineExceeded" || c.Message != "Job was active longer than specified deadline" {
			t.Errorf("Failed condition = %+v", c)
		}
		if j.Status.Active != 0 {
			t.Errorf("%d pods still active", j.Status.Active)
		}
	})

	t.Run("a suspended job runs no pod until resumed", func(t *testing.T) {
		t.Parallel()
		const ns = "job-suspend"
		createNamespace(ctx, t, cs, ns)
		j := newJob("later", "echo resumed")
		j.Spec.Suspend = new(true)
		if _, err := cs.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		j = waitFor(ctx, t, cs, ns, "later", batchv1.JobSuspended)
		if c := condition(j, batchv1.JobSuspended); c.Reason != "JobSuspended" || c.Message != "Job suspended" || j.Status.StartTime != nil {
			t.Errorf("suspended job: condition %+v, startTime %v", c, j.Status.StartTime)
		}
		if pods := jobPods(ctx, t, cs, ns, "later"); len(pods) != 0 {
			t.Errorf("%d pods of a suspended job", len(pods))
		}
		if _, err := cs.BatchV1().Jobs(ns).Patch(ctx, "later", types.MergePatchType, []byte(`{"spec":{"suspend":false}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		j = waitFor(ctx, t, cs, ns, "later", batchv1.JobComplete)
		if c := condition(j, batchv1.JobSuspended); c == nil || c.Status != corev1.ConditionFalse || c.Reason != "JobResumed" {
			t.Errorf("Suspended condition after resuming = %+v", c)
		}
		ctrltest.Wait(t, "Suspended and Resumed events", func() bool {
			evs := events(ctx, t, cs, ns, "later")
			return hasEvent(evs, "Normal Suspended Job suspended") && hasEvent(evs, "Normal Resumed Job resumed")
		})
	})

	t.Run("a finished job with a TTL is deleted with its pods", func(t *testing.T) {
		t.Parallel()
		const ns = "job-ttl"
		createNamespace(ctx, t, cs, ns)
		j := newJob("short-lived", "echo bye")
		j.Spec.TTLSecondsAfterFinished = new(int32(0))
		if _, err := cs.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "the job and its pods gone", func() bool {
			_, err := cs.BatchV1().Jobs(ns).Get(ctx, "short-lived", metav1.GetOptions{})
			return apierrors.IsNotFound(err) && len(jobPods(ctx, t, cs, ns, "short-lived")) == 0
		})
	})
}
