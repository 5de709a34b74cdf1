package registry

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// batchV1 is batch/v1: Jobs and CronJobs.
var batchV1 = schema.GroupVersion{Group: "batch", Version: "v1"}

// The labels kube-apiserver generates on a Job's pod template (and, when
// the Job has none of its own, on the Job) when it generates its selector;
// the unprefixed pair is kept for clients that predate the prefixed one.
const (
	JobControllerUIDLabel       = "batch.kubernetes.io/controller-uid"
	JobNameLabel                = "batch.kubernetes.io/job-name"
	legacyJobControllerUIDLabel = "controller-uid"
	legacyJobNameLabel          = "job-name"
)

// jobs: Jobs keep metadata.generation; a Job that does not ask for
// a manual selector gets one generated from its UID on create, with the
// matching labels on its pod template.
var jobs = &Resource{
	GroupVersion: batchV1, Name: "jobs", SingularName: "job", Kind: "Job",
	Namespaced: true, Categories: []string{"all"}, HasStatus: true,
	Strategy: Strategy{
		Default:          defaulter(defaultJob),
		PrepareForCreate: creator(generateJobSelector),
		Validate:         validator(validateJob),
		ValidateUpdate:   updateValidator(validateJobUpdate),
		Fields:           selectable(jobFields),
		Table:            tables.Job.Convertor(nil),
	},
}

// defaultJob is kube's SetDefaults_Job: completions and parallelism 1 when
// neither is set (parallelism alone makes a work queue), backoffLimit 6,
// NonIndexed, not suspended, and the pod template's defaults.
func defaultJob(j *batchv1.Job) {
	defaultJobSpec(&j.Spec)
	if len(j.Labels) == 0 && len(j.Spec.Template.Labels) > 0 {
		j.Labels = copyLabels(j.Spec.Template.Labels)
	}
}

func defaultJobSpec(s *batchv1.JobSpec) {
	if s.Completions == nil && s.Parallelism == nil {
		s.Completions = new(int32(1))
		s.Parallelism = new(int32(1))
	}
	if s.Parallelism == nil {
		s.Parallelism = new(int32(1))
	}
	if s.BackoffLimit == nil {
		if s.BackoffLimitPerIndex != nil {
			s.BackoffLimit = new(int32(1<<31 - 1))
		} else {
			s.BackoffLimit = new(int32(6))
		}
	}
	if s.CompletionMode == nil {
		s.CompletionMode = new(batchv1.NonIndexedCompletion)
	}
	if s.Suspend == nil {
		s.Suspend = new(false)
	}
	if s.ManualSelector == nil {
		s.ManualSelector = new(false)
	}
	if s.PodFailurePolicy != nil {
		// kube's SetDefaults_PodFailurePolicyOnPodConditionsPattern.
		for i := range s.PodFailurePolicy.Rules {
			for k := range s.PodFailurePolicy.Rules[i].OnPodConditions {
				if pat := &s.PodFailurePolicy.Rules[i].OnPodConditions[k]; pat.Status == "" {
					pat.Status = corev1.ConditionTrue
				}
			}
		}
	}
	if s.PodReplacementPolicy == nil {
		if s.PodFailurePolicy != nil {
			s.PodReplacementPolicy = new(batchv1.Failed)
		} else {
			s.PodReplacementPolicy = new(batchv1.TerminatingOrFailed)
		}
	}
	defaultPodTemplateSpec(&s.Template)
}

func copyLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// generateJobSelector is kube's Job PrepareForCreate: unless the Job asks
// for a manual selector, its selector becomes the controller-uid label
// and its template gets the uid and name labels. A Job without labels of
// its own then carries its template's.
func generateJobSelector(j *batchv1.Job) {
	if j.Spec.ManualSelector != nil && *j.Spec.ManualSelector {
		return
	}
	uid, name := string(j.UID), j.Name
	if j.Spec.Template.Labels == nil {
		j.Spec.Template.Labels = map[string]string{}
	}
	userLabels := len(j.Labels) > 0 && !apiequality.Semantic.DeepEqual(j.Labels, j.Spec.Template.Labels)
	for k, v := range map[string]string{
		JobControllerUIDLabel: uid, JobNameLabel: name,
		legacyJobControllerUIDLabel: uid, legacyJobNameLabel: name,
	} {
		if _, ok := j.Spec.Template.Labels[k]; !ok {
			j.Spec.Template.Labels[k] = v
		}
	}
	if j.Spec.Selector == nil {
		j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{JobControllerUIDLabel: uid}}
	}
	if !userLabels {
		j.Labels = copyLabels(j.Spec.Template.Labels)
	}
}

func validateJob(j *batchv1.Job) field.ErrorList {
	errs := validateObjectMeta(&j.ObjectMeta, true, nameIsDNSSubdomain)
	errs = append(errs, validateGeneratedJobSelector(j)...)
	errs = append(errs, validateJobSpec(&j.Spec, specPath, true)...)
	return append(errs, validateJobNameAllowsCompletions(j)...)
}

func validateJobUpdate(j, old *batchv1.Job) field.ErrorList {
	errs := validateObjectMetaUpdate(&j.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateGeneratedJobSelector(j)...)
	errs = append(errs, validateJobSpec(&j.Spec, specPath, true)...)
	errs = append(errs, validateJobCompletionsUpdate(&j.Spec, &old.Spec)...)
	errs = append(errs, validateImmutable(j.Spec.Selector, old.Spec.Selector, specPath.Child("selector"))...)
	errs = append(errs, validateImmutable(j.Spec.Template, old.Spec.Template, specPath.Child("template"))...)
	errs = append(errs, validateImmutable(j.Spec.CompletionMode, old.Spec.CompletionMode, specPath.Child("completionMode"))...)
	errs = append(errs, validateImmutable(j.Spec.PodFailurePolicy, old.Spec.PodFailurePolicy, specPath.Child("podFailurePolicy"))...)
	errs = append(errs, validateImmutable(j.Spec.BackoffLimitPerIndex, old.Spec.BackoffLimitPerIndex, specPath.Child("backoffLimitPerIndex"))...)
	errs = append(errs, validateImmutable(j.Spec.ManagedBy, old.Spec.ManagedBy, specPath.Child("managedBy"))...)
	errs = append(errs, validateImmutable(j.Spec.SuccessPolicy, old.Spec.SuccessPolicy, specPath.Child("successPolicy"))...)
	errs = append(errs, validateJobNameAllowsCompletions(j)...)
	errs = append(errs, validateJobStatus(&j.Status, field.NewPath("status"))...)
	return append(errs, validateJobStatusTransition(j, old)...)
}

// validateGeneratedJobSelector checks that a generated selector and the
// template's labels are still the ones generated for this Job.
func validateGeneratedJobSelector(j *batchv1.Job) field.ErrorList {
	if j.Spec.ManualSelector != nil && *j.Spec.ManualSelector || j.Spec.Selector == nil {
		return nil
	}
	var errs field.ErrorList
	if j.UID == "" {
		errs = append(errs, field.Required(metadataPath.Child("uid"), ""))
	}
	tp := specPath.Child("template", "metadata")
	errs = append(errs, validateHasLabel(j.Spec.Template.Labels, tp, JobControllerUIDLabel, string(j.UID))...)
	errs = append(errs, validateHasLabel(j.Spec.Template.Labels, tp, JobNameLabel, j.Name)...)
	if sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector); err == nil &&
		!sel.Matches(labels.Set{JobControllerUIDLabel: string(j.UID), JobNameLabel: j.Name}) {
		errs = append(errs, field.Invalid(specPath.Child("selector"), j.Spec.Selector, "`selector` not auto-generated"))
	}
	return errs
}

func validateHasLabel(l map[string]string, p *field.Path, key, want string) field.ErrorList {
	got, ok := l[key]
	if !ok {
		return field.ErrorList{field.Required(p.Child("labels").Key(key), "")}
	}
	if got != want {
		return field.ErrorList{field.Invalid(p.Child("labels").Key(key), l, fmt.Sprintf("must be '%s'", want))}
	}
	return nil
}

// validateJobSpec is kube's ValidateJobSpec; withSelector is false for the
// job template of a CronJob, whose selector is generated later.
func validateJobSpec(s *batchv1.JobSpec, p *field.Path, withSelector bool) field.ErrorList {
	var errs field.ErrorList
	if s.Parallelism != nil {
		errs = append(errs, validateNonnegative(int64(*s.Parallelism), p.Child("parallelism"))...)
	}
	if s.Completions != nil {
		errs = append(errs, validateNonnegative(int64(*s.Completions), p.Child("completions"))...)
	}
	if s.ActiveDeadlineSeconds != nil {
		errs = append(errs, validateNonnegative(*s.ActiveDeadlineSeconds, p.Child("activeDeadlineSeconds"))...)
	}
	if s.BackoffLimit != nil {
		errs = append(errs, validateNonnegative(int64(*s.BackoffLimit), p.Child("backoffLimit"))...)
	}
	if s.TTLSecondsAfterFinished != nil {
		errs = append(errs, validateNonnegative(int64(*s.TTLSecondsAfterFinished), p.Child("ttlSecondsAfterFinished"))...)
	}
	errs = append(errs, validateJobIndexedLimits(s, p)...)
	if s.CompletionMode != nil {
		switch *s.CompletionMode {
		case batchv1.NonIndexedCompletion:
		case batchv1.IndexedCompletion:
			if s.Completions == nil {
				errs = append(errs, field.Required(p.Child("completions"), fmt.Sprintf("when completion mode is %s", batchv1.IndexedCompletion)))
			}
			if s.Parallelism != nil && *s.Parallelism > 100000 {
				errs = append(errs, field.Invalid(p.Child("parallelism"), *s.Parallelism, "must be less than or equal to 100000 when completion mode is Indexed"))
			}
			errs = append(errs, validateMaxFailedIndexes(s, p)...)
		default:
			errs = append(errs, field.NotSupported(p.Child("completionMode"), *s.CompletionMode, []string{string(batchv1.NonIndexedCompletion), string(batchv1.IndexedCompletion)}))
		}
	}
	errs = append(errs, validateJobPolicies(s, p)...)
	if withSelector {
		if s.Selector == nil {
			errs = append(errs, field.Required(p.Child("selector"), ""))
		} else {
			errs = append(errs, validateLabelSelector(s.Selector, p.Child("selector"))...)
			if sel, err := metav1.LabelSelectorAsSelector(s.Selector); err == nil && !sel.Matches(labels.Set(s.Template.Labels)) {
				errs = append(errs, field.Invalid(p.Child("template", "metadata", "labels"), s.Template.Labels, "`selector` does not match template `labels`"))
			}
		}
	}
	errs = append(errs, validatePodTemplateSpec(&s.Template, p.Child("template"))...)
	if rp := s.Template.Spec.RestartPolicy; rp == corev1.RestartPolicyAlways || rp == "" {
		// As kube: Always is what defaulting gives a template without one.
		errs = append(errs, field.Required(p.Child("template", "spec", "restartPolicy"),
			fmt.Sprintf("valid values: %q, %q", corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)))
	} else if rp != corev1.RestartPolicyOnFailure && rp != corev1.RestartPolicyNever {
		errs = append(errs, field.NotSupported(p.Child("template", "spec", "restartPolicy"), rp,
			[]string{string(corev1.RestartPolicyOnFailure), string(corev1.RestartPolicyNever)}))
	} else if s.PodFailurePolicy != nil && rp != corev1.RestartPolicyNever {
		errs = append(errs, field.Invalid(p.Child("template", "spec", "restartPolicy"), rp,
			fmt.Sprintf("only %q is supported when podFailurePolicy is specified", corev1.RestartPolicyNever)))
	}
	return errs
}

func validateJobStatus(s *batchv1.JobStatus, p *field.Path) field.ErrorList {
	errs := validateNonnegative(int64(s.Active), p.Child("active"))
	errs = append(errs, validateNonnegative(int64(s.Succeeded), p.Child("succeeded"))...)
	errs = append(errs, validateNonnegative(int64(s.Failed), p.Child("failed"))...)
	if s.Ready != nil {
		errs = append(errs, validateNonnegative(int64(*s.Ready), p.Child("ready"))...)
	}
	return errs
}

// jobFields is kube's selectable fields of a Job: status.successful.
func jobFields(j *batchv1.Job) fields.Set {
	return fields.Set{"status.successful": strconv.Itoa(int(j.Status.Succeeded))}
}

// cronJobs: CronJobs keep metadata.generation; their status is
// written by the cronjob controller.
var cronJobs = &Resource{
	GroupVersion: batchV1, Name: "cronjobs", SingularName: "cronjob", Kind: "CronJob",
	Namespaced: true, ShortNames: []string{"cj"}, Categories: []string{"all"}, HasStatus: true,
	Strategy: Strategy{
		Default:        defaulter(defaultCronJob),
		Validate:       validator(validateCronJob),
		ValidateUpdate: updateValidator(validateCronJobUpdate),
		Table:          tables.CronJob.Convertor(nil),
	},
}

// defaultCronJob is kube's SetDefaults_CronJob: concurrency Allow, not
// suspended, history limits 3 and 1. Of the job template only the pod
// template gets defaults: the Job's own come when a Job is created from it.
func defaultCronJob(cj *batchv1.CronJob) {
	s := &cj.Spec
	if s.ConcurrencyPolicy == "" {
		s.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if s.Suspend == nil {
		s.Suspend = new(false)
	}
	if s.SuccessfulJobsHistoryLimit == nil {
		s.SuccessfulJobsHistoryLimit = new(int32(3))
	}
	if s.FailedJobsHistoryLimit == nil {
		s.FailedJobsHistoryLimit = new(int32(1))
	}
	defaultPodTemplateSpec(&s.JobTemplate.Spec.Template)
}

// cronJobNameMax is the longest CronJob name: its Jobs are named
// "<name>-<minutes since the epoch>", eleven characters more, within 63.
const cronJobNameMax = 63 - 11

func validateCronJob(cj *batchv1.CronJob) field.ErrorList {
	errs := validateObjectMeta(&cj.ObjectMeta, true, nameIsDNSSubdomain)
	if len(cj.Name) > cronJobNameMax {
		errs = append(errs, field.Invalid(metadataPath.Child("name"), cj.Name, fmt.Sprintf("must be no more than %d characters", cronJobNameMax)))
	}
	return append(errs, validateCronJobSpec(&cj.Spec, specPath)...)
}

func validateCronJobUpdate(cj, old *batchv1.CronJob) field.ErrorList {
	errs := validateObjectMetaUpdate(&cj.ObjectMeta, &old.ObjectMeta)
	return append(errs, validateCronJobSpec(&cj.Spec, specPath)...)
}

func validateCronJobSpec(s *batchv1.CronJobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Schedule == "" {
		errs = append(errs, field.Required(p.Child("schedule"), ""))
	} else {
		errs = append(errs, validateSchedule(s.Schedule, s.TimeZone, p.Child("schedule"))...)
	}
	errs = append(errs, validateTimeZone(s.TimeZone, p.Child("timeZone"))...)
	if s.StartingDeadlineSeconds != nil {
		errs = append(errs, validateNonnegative(*s.StartingDeadlineSeconds, p.Child("startingDeadlineSeconds"))...)
	}
	switch s.ConcurrencyPolicy {
	case batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent:
	case "":
		errs = append(errs, field.Required(p.Child("concurrencyPolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(p.Child("concurrencyPolicy"), s.ConcurrencyPolicy,
			[]string{string(batchv1.AllowConcurrent), string(batchv1.ForbidConcurrent), string(batchv1.ReplaceConcurrent)}))
	}
	if s.SuccessfulJobsHistoryLimit != nil {
		errs = append(errs, validateNonnegative(int64(*s.SuccessfulJobsHistoryLimit), p.Child("successfulJobsHistoryLimit"))...)
	}
	if s.FailedJobsHistoryLimit != nil {
		errs = append(errs, validateNonnegative(int64(*s.FailedJobsHistoryLimit), p.Child("failedJobsHistoryLimit"))...)
	}
	return append(errs, validateJobTemplateSpec(&s.JobTemplate, p.Child("jobTemplate"))...)
}

// validateSchedule checks a cron schedule as kube-apiserver does, with
// robfig/cron's standard parser (five fields or a descriptor such as
// "@hourly"); a time zone belongs in spec.timeZone, not in the schedule.
func validateSchedule(schedule string, tz *string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, err := cron.ParseStandard(schedule); err != nil {
		errs = append(errs, field.Invalid(p, schedule, err.Error()))
	}
	if strings.Contains(schedule, "TZ") {
		if tz != nil {
			errs = append(errs, field.Invalid(p, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
		} else {
			errs = append(errs, field.Invalid(p, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
		}
	}
	return errs
}

var validTimeZoneCharacters = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

// validateTimeZone is kube's: nil, or an IANA zone this server knows.
func validateTimeZone(tz *string, p *field.Path) field.ErrorList {
	if tz == nil {
		return nil
	}
	if *tz == "" {
		return field.ErrorList{field.Invalid(p, *tz, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(*tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !validTimeZoneCharacters.MatchString(part) {
			return field.ErrorList{field.Invalid(p, *tz, fmt.Sprintf("unknown time zone %s", *tz))}
		}
	}
	var errs field.ErrorList
	if strings.EqualFold(*tz, "Local") {
		errs = append(errs, field.Invalid(p, *tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(*tz); err != nil {
		errs = append(errs, field.Invalid(p, *tz, err.Error()))
	}
	return errs
}

// validateJobTemplateSpec checks a CronJob's job template: a Job spec
// whose selector is always generated.
func validateJobTemplateSpec(t *batchv1.JobTemplateSpec, p *field.Path) field.ErrorList {
	errs := validateLabels(t.Labels, p.Child("metadata", "labels"))
	errs = append(errs, validateAnnotations(t.Annotations, p.Child("metadata", "annotations"))...)
	errs = append(errs, validateJobSpec(&t.Spec, p.Child("spec"), false)...)
	if t.Spec.Selector != nil {
		errs = append(errs, field.Invalid(p.Child("spec", "selector"), t.Spec.Selector, "`selector` will be auto-generated"))
	}
	if t.Spec.ManualSelector != nil && *t.Spec.ManualSelector {
		errs = append(errs, field.NotSupported(p.Child("spec", "manualSelector"), t.Spec.ManualSelector, []string{"nil", "false"}))
	}
	return errs
}
