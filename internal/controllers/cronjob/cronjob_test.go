package cronjob_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	testingclock "k8s.io/utils/clock/testing"

	"minik/internal/controllers"
	"minik/internal/controllers/cronjob"
	"minik/internal/controllers/ctrltest"
	"minik/internal/testserver"
)

// startController runs the API server and, in the test, the cronjob
// controller on a fake clock set at start, so that the test moves time.
// No job controller runs: the test finishes Jobs itself.
func startController(t *testing.T, start time.Time) (kubernetes.Interface, *testingclock.FakeClock) {
	t.Helper()
	srv := testserver.Start(t)
	cs := srv.Client(t)
	ctx := t.Context()
	clk := testingclock.NewFakeClock(start)
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	t.Cleanup(broadcaster.Shutdown)
	cc := &controllers.Context{
		Client:    cs,
		Informers: informers.NewSharedInformerFactory(cs, 0),
		Recorder: func(component string) record.EventRecorder {
			return broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component})
		},
		Clock: clk,
	}
	c, err := cronjob.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	cc.Informers.Start(ctx.Done())
	cc.Informers.WaitForCacheSync(ctx.Done())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx, 1) }()
	t.Cleanup(func() { <-done })
	t.Cleanup(cc.Informers.Shutdown)
	return cs, clk
}

func newCronJob(name, schedule string) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.CronJobSpec{
			Schedule: schedule,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyOnFailure,
					Containers:    []corev1.Container{{Name: "hello", Image: "busybox:1.36", Command: []string{"sh", "-c", "date; echo Hello"}}},
				}}},
			},
		},
	}
}

func jobNames(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string) []string {
	t.Helper()
	l, err := cs.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range l.Items {
		if j.DeletionTimestamp == nil {
			names = append(names, j.Name)
		}
	}
	slices.Sort(names)
	return names
}

// finish marks a Job Complete, as the job controller would.
func finish(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, at time.Time) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		start, end := metav1.NewTime(at.Add(-time.Second)), metav1.NewTime(at)
		j.Status.StartTime, j.Status.CompletionTime, j.Status.Succeeded = &start, &end, 1
		j.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: end},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: end},
		}
		_, err = cs.BatchV1().Jobs(ns).UpdateStatus(ctx, j, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func eventMessages(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) []string {
	t.Helper()
	l, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String()})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range l.Items {
		out = append(out, e.Reason+" "+e.Message)
	}
	return out
}

func hasEventPrefix(evs []string, prefix string) bool {
	return slices.ContainsFunc(evs, func(e string) bool { return strings.HasPrefix(e, prefix) })
}

func TestCronJob(t *testing.T) {
	// The fake clock starts a little after the real time the CronJobs are
	// created at, on a minute boundary plus 30s.
	start := time.Now().Truncate(time.Minute).Add(90 * time.Second)
	cs, clk := startController(t, start)
	ctx := t.Context()
	const ns = "cron"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("each scheduled time starts a job named after it, until history limits", func(t *testing.T) {
		cj := newCronJob("hello", "*/1 * * * *")
		cj.Spec.SuccessfulJobsHistoryLimit = new(int32(1))
		cj, err := cs.BatchV1().CronJobs(ns).Create(ctx, cj, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		first := start.Truncate(time.Minute)
		wantName := cronjob.JobName(cj, first)
		ctrltest.Wait(t, "the job of "+first.String(), func() bool { return slices.Contains(jobNames(ctx, t, cs, ns), wantName) })
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, wantName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := j.Annotations[cronjob.ScheduledTimestampAnnotation]; got != first.In(time.Local).Format(time.RFC3339) {
			t.Errorf("scheduled-timestamp annotation = %q, want %q", got, first.Format(time.RFC3339))
		}
		if ref := metav1.GetControllerOf(j); ref == nil || ref.Kind != "CronJob" || ref.UID != cj.UID {
			t.Errorf("job controller = %+v", ref)
		}
		if j.Labels["app"] != "hello" {
			t.Errorf("job labels = %v, want the template's", j.Labels)
		}
		if wantSuffix := first.Unix() / 60; !strings.HasSuffix(wantName, "-"+itoa(wantSuffix)) {
			t.Errorf("job name %s is not hello-<minutes>", wantName)
		}
		ctrltest.Wait(t, "active and lastScheduleTime in status", func() bool {
			got, err := cs.BatchV1().CronJobs(ns).Get(ctx, "hello", metav1.GetOptions{})
			return err == nil && len(got.Status.Active) == 1 && got.Status.Active[0].Name == wantName &&
				got.Status.LastScheduleTime != nil && got.Status.LastScheduleTime.Equal(&metav1.Time{Time: first})
		})

		// Finish it, move a minute on: the next job starts, the first is seen
		// complete; finish that one too and move on: the oldest goes.
		finish(ctx, t, cs, ns, wantName, start)
		clk.Step(time.Minute)
		second := cronjob.JobName(cj, first.Add(time.Minute))
		ctrltest.Wait(t, "the second job", func() bool { return slices.Contains(jobNames(ctx, t, cs, ns), second) })
		finish(ctx, t, cs, ns, second, clk.Now())
		clk.Step(time.Minute)
		third := cronjob.JobName(cj, first.Add(2*time.Minute))
		ctrltest.Wait(t, "only the second and third jobs", func() bool {
			return slices.Equal(jobNames(ctx, t, cs, ns), []string{second, third})
		})
		ctrltest.Wait(t, "lastSuccessfulTime", func() bool {
			got, _ := cs.BatchV1().CronJobs(ns).Get(ctx, "hello", metav1.GetOptions{})
			return got.Status.LastSuccessfulTime != nil
		})
		ctrltest.Wait(t, "create, saw-completed and delete events", func() bool {
			evs := eventMessages(ctx, t, cs, ns, "hello")
			return slices.Contains(evs, "SuccessfulCreate Created job "+wantName) &&
				hasEventPrefix(evs, "SawCompletedJob Saw completed job: "+wantName) &&
				slices.Contains(evs, "SuccessfulDelete Deleted job "+wantName)
		})
		if err := cs.BatchV1().CronJobs(ns).Delete(ctx, "hello", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("Forbid starts no job while one is active", func(t *testing.T) {
		cj := newCronJob("exclusive", "*/1 * * * *")
		cj.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent
		if _, err := cs.BatchV1().CronJobs(ns).Create(ctx, cj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// Created at real time, before the fake clock: its first time is
		// the current fake minute at the latest.
		var first string
		ctrltest.Wait(t, "a first job", func() bool {
			for _, n := range jobNames(ctx, t, cs, ns) {
				if strings.HasPrefix(n, "exclusive-") {
					first = n
					return true
				}
			}
			return false
		})
		clk.Step(time.Minute)
		ctrltest.Wait(t, "the JobAlreadyActive event", func() bool {
			return slices.Contains(eventMessages(ctx, t, cs, ns, "exclusive"),
				"JobAlreadyActive Not starting job because prior execution is running and concurrency policy is Forbid")
		})
		var mine []string
		for _, n := range jobNames(ctx, t, cs, ns) {
			if strings.HasPrefix(n, "exclusive-") {
				mine = append(mine, n)
			}
		}
		if !slices.Equal(mine, []string{first}) {
			t.Errorf("jobs %v, want only %s", mine, first)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
