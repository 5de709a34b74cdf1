package tables

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	batchv1beta1 "k8s.io/api/batch/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Tables of batch/v1 kinds. kube-apiserver takes the CronJob descriptions
// from the batch/v1beta1 types, so we do too.

// Job is kube's Job table: the status the conditions add up to,
// succeeded pods against completions, and how long the Job ran (or has
// been running).
var Job = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Status", "string", "Status of the job."),
		col("Completions", "string", batchv1.JobStatus{}.SwaggerDoc()["succeeded"]),
		col("Duration", "string", "Time required to complete the job."),
		ageColumn(),
		wide("Containers", "string", containersDescription),
		wide("Images", "string", imagesDescription),
		wide("Selector", "string", batchv1.JobSpec{}.SwaggerDoc()["selector"]),
	},
	func(j *batchv1.Job, now time.Time) []interface{} {
		names, images := containerCells(j.Spec.Template.Spec.Containers)
		return []interface{}{
			j.Name,
			jobStatus(j),
			jobCompletions(j),
			jobDuration(j, now),
			age(j.CreationTimestamp, now),
			names,
			images,
			metav1.FormatLabelSelector(j.Spec.Selector),
		}
	},
)

// jobStatus is the STATUS cell: Complete, Failed, Terminating, Suspended,
// FailureTarget or Running, in that order of precedence.
func jobStatus(j *batchv1.Job) string {
	switch {
	case hasJobCondition(j, batchv1.JobComplete):
		return "Complete"
	case hasJobCondition(j, batchv1.JobFailed):
		return "Failed"
	case j.DeletionTimestamp != nil:
		return "Terminating"
	case hasJobCondition(j, batchv1.JobSuspended):
		return "Suspended"
	case hasJobCondition(j, batchv1.JobFailureTarget):
		return "FailureTarget"
	}
	return "Running"
}

func hasJobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// jobCompletions is "succeeded/completions"; a work queue (no completions)
// reads "succeeded/1", with " of parallelism" when that is above one.
func jobCompletions(j *batchv1.Job) string {
	if j.Spec.Completions != nil {
		return fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
	}
	if p := replicas(j.Spec.Parallelism); p > 1 {
		return fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, p)
	}
	return fmt.Sprintf("%d/1", j.Status.Succeeded)
}

// jobDuration is empty before the Job starts, then the time since it
// started, then the time it took.
func jobDuration(j *batchv1.Job, now time.Time) string {
	switch {
	case j.Status.StartTime == nil:
		return ""
	case j.Status.CompletionTime == nil:
		return duration.HumanDuration(now.Sub(j.Status.StartTime.Time))
	}
	return duration.HumanDuration(j.Status.CompletionTime.Sub(j.Status.StartTime.Time))
}

// CronJob is kubectl's table of batch/v1 CronJobs.
var CronJob = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Schedule", "string", batchv1beta1.CronJobSpec{}.SwaggerDoc()["schedule"]),
		col("Timezone", "string", batchv1beta1.CronJobSpec{}.SwaggerDoc()["timeZone"]),
		col("Suspend", "boolean", batchv1beta1.CronJobSpec{}.SwaggerDoc()["suspend"]),
		col("Active", "integer", batchv1beta1.CronJobStatus{}.SwaggerDoc()["active"]),
		col("Last Schedule", "string", batchv1beta1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"]),
		ageColumn(),
		wide("Containers", "string", containersDescription),
		wide("Images", "string", imagesDescription),
		wide("Selector", "string", batchv1.JobSpec{}.SwaggerDoc()["selector"]),
	},
	func(cj *batchv1.CronJob, now time.Time) []interface{} {
		lastSchedule := "<none>"
		if t := cj.Status.LastScheduleTime; t != nil {
			lastSchedule = age(*t, now)
		}
		tz := "<none>"
		if cj.Spec.TimeZone != nil {
			tz = *cj.Spec.TimeZone
		}
		names, images := containerCells(cj.Spec.JobTemplate.Spec.Template.Spec.Containers)
		return []interface{}{
			cj.Name,
			cj.Spec.Schedule,
			tz,
			boolPtrCell(cj.Spec.Suspend),
			int64(len(cj.Status.Active)),
			lastSchedule,
			age(cj.CreationTimestamp, now),
			names,
			images,
			metav1.FormatLabelSelector(cj.Spec.JobTemplate.Spec.Selector),
		}
	},
)

// boolPtrCell is kube's printBoolPtr: "True", "False" or "<unset>" (a
// string, although the column's type is boolean).
func boolPtrCell(b *bool) string {
	switch {
	case b == nil:
		return "<unset>"
	case *b:
		return "True"
	}
	return "False"
}
