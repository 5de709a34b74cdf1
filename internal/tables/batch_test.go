package tables

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func jobTemplate(image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: image}}}}
}

func jobCondition(t batchv1.JobConditionType) batchv1.JobCondition {
	return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue}
}

func jobFixtures() []runtime.Object {
	started := ago(10 * time.Minute)
	finished := ago(10*time.Minute - 47*time.Second)
	generated := &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "8f6c7a0e-0d2b-4c55-a3a7-2bd0d6e1b7c1"}}
	deleting := objMeta("being-deleted", time.Hour)
	deleting.DeletionTimestamp = ptrTo(ago(time.Second))
	return []runtime.Object{
		&batchv1.Job{ObjectMeta: objMeta("pi", 11*time.Minute),
			Spec:   batchv1.JobSpec{Completions: ptrTo[int32](3), Parallelism: ptrTo[int32](2), Selector: generated, Template: jobTemplate("perl:5.34")},
			Status: batchv1.JobStatus{Succeeded: 3, StartTime: &started, CompletionTime: &finished, Conditions: []batchv1.JobCondition{jobCondition(batchv1.JobSuccessCriteriaMet), jobCondition(batchv1.JobComplete)}}},
		&batchv1.Job{ObjectMeta: objMeta("running", 2*time.Minute),
			Spec:   batchv1.JobSpec{Completions: ptrTo[int32](5), Parallelism: ptrTo[int32](1), Template: jobTemplate("busybox")},
			Status: batchv1.JobStatus{Succeeded: 2, Active: 1, StartTime: ptrTo(ago(95 * time.Second))}},
		&batchv1.Job{ObjectMeta: objMeta("crashing", 5*time.Minute),
			Spec:   batchv1.JobSpec{Completions: ptrTo[int32](1), Parallelism: ptrTo[int32](1), Template: jobTemplate("busybox")},
			Status: batchv1.JobStatus{Failed: 7, StartTime: ptrTo(ago(5 * time.Minute)), Conditions: []batchv1.JobCondition{jobCondition(batchv1.JobFailureTarget), jobCondition(batchv1.JobFailed)}}},
		&batchv1.Job{ObjectMeta: objMeta("failing", 30*time.Second),
			Spec:   batchv1.JobSpec{Completions: ptrTo[int32](1), Parallelism: ptrTo[int32](1), Template: jobTemplate("busybox")},
			Status: batchv1.JobStatus{Failed: 7, StartTime: ptrTo(ago(30 * time.Second)), Conditions: []batchv1.JobCondition{jobCondition(batchv1.JobFailureTarget)}}},
		&batchv1.Job{ObjectMeta: objMeta("queue", 3*time.Hour),
			Spec:   batchv1.JobSpec{Parallelism: ptrTo[int32](4), Suspend: ptrTo(true), Template: jobTemplate("busybox")},
			Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{jobCondition(batchv1.JobSuspended)}}},
		&batchv1.Job{ObjectMeta: objMeta("single-worker", 3*time.Hour), Spec: batchv1.JobSpec{Parallelism: ptrTo[int32](1), Template: jobTemplate("busybox")}},
		&batchv1.Job{ObjectMeta: deleting, Spec: batchv1.JobSpec{Completions: ptrTo[int32](1), Template: jobTemplate("busybox")}},
	}
}

func cronJobFixtures() []runtime.Object {
	tmpl := batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: jobTemplate("busybox:1.36")}}
	return []runtime.Object{
		&batchv1.CronJob{ObjectMeta: objMeta("hello", 25*time.Minute),
			Spec:   batchv1.CronJobSpec{Schedule: "*/1 * * * *", Suspend: ptrTo(false), JobTemplate: tmpl},
			Status: batchv1.CronJobStatus{Active: []corev1.ObjectReference{{Name: "hello-29555225"}}, LastScheduleTime: ptrTo(ago(26 * time.Second))}},
		&batchv1.CronJob{ObjectMeta: objMeta("nightly-backup", 9*24*time.Hour),
			Spec:   batchv1.CronJobSpec{Schedule: "0 3 * * *", TimeZone: ptrTo("Europe/Paris"), Suspend: ptrTo(true), JobTemplate: tmpl},
			Status: batchv1.CronJobStatus{LastScheduleTime: ptrTo(ago(36 * time.Hour))}},
		&batchv1.CronJob{ObjectMeta: objMeta("never-ran", 10*time.Second), Spec: batchv1.CronJobSpec{Schedule: "@monthly", JobTemplate: tmpl}},
	}
}
