package cli

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// describeJob is kubectl's Job description: the spec's counts and
// policies, when it started and completed, its pods' counts, the pod
// template and the events.
func describeJob(ctx context.Context, d *describer, obj runtime.Object) (string, error) {
	job := obj.(*batchv1.Job)
	events := d.events(ctx, job)
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "Name:\t%s\n", job.Name)
		w.Write(level0, "Namespace:\t%s\n", job.Namespace)
		if selector, err := metav1.LabelSelectorAsSelector(job.Spec.Selector); err == nil {
			w.Write(level0, "Selector:\t%s\n", selector)
		} else {
			w.Write(level0, "Selector:\tFailed to get selector: %s\n", err)
		}
		printLabelsMultiline(w, "Labels", job.Labels)
		printAnnotationsMultiline(w, "Annotations", job.Annotations)
		if ref := metav1.GetControllerOf(job); ref != nil {
			w.Write(level0, "Controlled By:\t%s/%s\n", ref.Kind, ref.Name)
		}
		if job.Spec.Parallelism != nil {
			w.Write(level0, "Parallelism:\t%d\n", *job.Spec.Parallelism)
		}
		if job.Spec.Completions != nil {
			w.Write(level0, "Completions:\t%d\n", *job.Spec.Completions)
		} else {
			w.Write(level0, "Completions:\t<unset>\n")
		}
		if job.Spec.CompletionMode != nil {
			w.Write(level0, "Completion Mode:\t%s\n", *job.Spec.CompletionMode)
		}
		if job.Spec.Suspend != nil {
			w.Write(level0, "Suspend:\t%v\n", *job.Spec.Suspend)
		}
		if job.Spec.BackoffLimit != nil {
			w.Write(level0, "Backoff Limit:\t%v\n", *job.Spec.BackoffLimit)
		}
		if job.Spec.TTLSecondsAfterFinished != nil {
			w.Write(level0, "TTL Seconds After Finished:\t%v\n", *job.Spec.TTLSecondsAfterFinished)
		}
		if job.Status.StartTime != nil {
			w.Write(level0, "Start Time:\t%s\n", job.Status.StartTime.Time.Format(time.RFC1123Z))
		}
		if job.Status.CompletionTime != nil {
			w.Write(level0, "Completed At:\t%s\n", job.Status.CompletionTime.Time.Format(time.RFC1123Z))
		}
		if job.Status.StartTime != nil && job.Status.CompletionTime != nil {
			w.Write(level0, "Duration:\t%s\n", duration.HumanDuration(job.Status.CompletionTime.Sub(job.Status.StartTime.Time)))
		}
		if job.Spec.ActiveDeadlineSeconds != nil {
			w.Write(level0, "Active Deadline Seconds:\t%ds\n", *job.Spec.ActiveDeadlineSeconds)
		}
		if job.Status.Ready == nil {
			w.Write(level0, "Pods Statuses:\t%d Active / %d Succeeded / %d Failed\n", job.Status.Active, job.Status.Succeeded, job.Status.Failed)
		} else {
			w.Write(level0, "Pods Statuses:\t%d Active (%d Ready) / %d Succeeded / %d Failed\n", job.Status.Active, *job.Status.Ready, job.Status.Succeeded, job.Status.Failed)
		}
		if job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion {
			w.Write(level0, "Completed Indexes:\t%s\n", capIndexesListOrNone(job.Status.CompletedIndexes, 50))
		}
		describePodTemplate(&job.Spec.Template, w)
		d.printEvents(ctx, w, events)
		return nil
	})
}

// capIndexesListOrNone cuts a list of indexes after the first comma past
// softLimit characters.
func capIndexesListOrNone(indexes string, softLimit int) string {
	if indexes == "" {
		return "<none>"
	}
	ix := softLimit
	for ; ix < len(indexes); ix++ {
		if indexes[ix] == ',' {
			break
		}
	}
	if ix >= len(indexes) {
		return indexes
	}
	return indexes[:ix+1] + "..."
}

// describeCronJob is kubectl's CronJob description: schedule and
// policies, the job template, the last schedule time, the active Jobs and
// the events.
func describeCronJob(ctx context.Context, d *describer, obj runtime.Object) (string, error) {
	cj := obj.(*batchv1.CronJob)
	events := d.events(ctx, cj)
	return tabbedString(func(w *prefixWriter) error {
		w.Write(level0, "Name:\t%s\n", cj.Name)
		w.Write(level0, "Namespace:\t%s\n", cj.Namespace)
		printLabelsMultiline(w, "Labels", cj.Labels)
		printAnnotationsMultiline(w, "Annotations", cj.Annotations)
		w.Write(level0, "Schedule:\t%s\n", cj.Spec.Schedule)
		w.Write(level0, "Concurrency Policy:\t%s\n", cj.Spec.ConcurrencyPolicy)
		w.Write(level0, "Suspend:\t%s\n", boolPtrString(cj.Spec.Suspend))
		if l := cj.Spec.SuccessfulJobsHistoryLimit; l != nil {
			w.Write(level0, "Successful Job History Limit:\t%d\n", *l)
		} else {
			w.Write(level0, "Successful Job History Limit:\t<unset>\n")
		}
		if l := cj.Spec.FailedJobsHistoryLimit; l != nil {
			w.Write(level0, "Failed Job History Limit:\t%d\n", *l)
		} else {
			w.Write(level0, "Failed Job History Limit:\t<unset>\n")
		}
		if s := cj.Spec.StartingDeadlineSeconds; s != nil {
			w.Write(level0, "Starting Deadline Seconds:\t%ds\n", *s)
		} else {
			w.Write(level0, "Starting Deadline Seconds:\t<unset>\n")
		}
		describeJobTemplate(&cj.Spec.JobTemplate, w)
		if t := cj.Status.LastScheduleTime; t != nil {
			w.Write(level0, "Last Schedule Time:\t%s\n", t.Time.Format(time.RFC1123Z))
		} else {
			w.Write(level0, "Last Schedule Time:\t<unset>\n")
		}
		w.Write(level0, "Active Jobs:\t")
		if len(cj.Status.Active) == 0 {
			w.WriteLine("<none>")
		} else {
			for i, j := range cj.Status.Active {
				if i != 0 {
					w.Write(level0, ", ")
				}
				w.Write(level0, "%s", j.Name)
			}
			w.WriteLine("")
		}
		d.printEvents(ctx, w, events)
		return nil
	})
}

func describeJobTemplate(t *batchv1.JobTemplateSpec, w *prefixWriter) {
	if t.Spec.Selector != nil {
		if selector, err := metav1.LabelSelectorAsSelector(t.Spec.Selector); err == nil {
			w.Write(level0, "Selector:\t%s\n", selector)
		} else {
			w.Write(level0, "Selector:\tFailed to get selector: %s\n", err)
		}
	} else {
		w.Write(level0, "Selector:\t<unset>\n")
	}
	if t.Spec.Parallelism != nil {
		w.Write(level0, "Parallelism:\t%d\n", *t.Spec.Parallelism)
	} else {
		w.Write(level0, "Parallelism:\t<unset>\n")
	}
	if t.Spec.Completions != nil {
		w.Write(level0, "Completions:\t%d\n", *t.Spec.Completions)
	} else {
		w.Write(level0, "Completions:\t<unset>\n")
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		w.Write(level0, "Active Deadline Seconds:\t%ds\n", *t.Spec.ActiveDeadlineSeconds)
	}
	describePodTemplate(&t.Spec.Template, w)
}

// boolPtrString is kubectl's printBoolPtr.
func boolPtrString(b *bool) string {
	switch {
	case b == nil:
		return "<unset>"
	case *b:
		return "True"
	}
	return "False"
}
