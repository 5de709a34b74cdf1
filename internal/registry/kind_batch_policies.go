package registry

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The Job fields kube's ValidateJobSpec checks beyond counts and
// completion mode: backoffLimitPerIndex, maxFailedIndexes, managedBy,
// podFailurePolicy, successPolicy, podReplacementPolicy.

const (
	jobMaxFailedIndexes            = 100_000
	jobCompletionsSoftLimit        = 100_000
	jobHighCompletionsParallelism  = 10_000
	jobHighCompletionsMaxFailedIdx = 10_000
	jobMaxPodFailurePolicyRules    = 20
	jobMaxOnExitCodesValues        = 255
	jobMaxOnPodConditionsPatterns  = 20
	jobMaxManagedByLength          = 63
	jobMaxSucceededIndexesLength   = 64 * 1024
	jobMaxSuccessPolicyRules       = 20
)

func isIndexedJobSpec(s *batchv1.JobSpec) bool {
	return s.CompletionMode != nil && *s.CompletionMode == batchv1.IndexedCompletion
}

// validateJobIndexedLimits checks backoffLimitPerIndex, maxFailedIndexes
// and managedBy, in kube's order.
func validateJobIndexedLimits(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.BackoffLimitPerIndex != nil {
		errs = append(errs, validateNonnegative(int64(*s.BackoffLimitPerIndex), p.Child("backoffLimitPerIndex"))...)
	}
	if s.MaxFailedIndexes != nil {
		errs = append(errs, validateNonnegative(int64(*s.MaxFailedIndexes), p.Child("maxFailedIndexes"))...)
		if s.BackoffLimitPerIndex == nil {
			errs = append(errs, field.Required(p.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
		}
	}
	if s.ManagedBy != nil {
		errs = append(errs, validation.IsDomainPrefixedPath(p.Child("managedBy"), *s.ManagedBy)...)
		if len(*s.ManagedBy) > jobMaxManagedByLength {
			errs = append(errs, field.TooLong(p.Child("managedBy"), "", jobMaxManagedByLength))
		}
	}
	return errs
}

// validateMaxFailedIndexes checks an Indexed Job's maxFailedIndexes and
// its limits for very many completions.
func validateMaxFailedIndexes(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Completions != nil && s.MaxFailedIndexes != nil && *s.MaxFailedIndexes > *s.Completions {
		errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *s.MaxFailedIndexes, "must be less than or equal to completions"))
	}
	if s.MaxFailedIndexes != nil && *s.MaxFailedIndexes > jobMaxFailedIndexes {
		errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *s.MaxFailedIndexes, fmt.Sprintf("must be less than or equal to %d", jobMaxFailedIndexes)))
	}
	if s.Completions != nil && *s.Completions > jobCompletionsSoftLimit && s.BackoffLimitPerIndex != nil {
		if s.MaxFailedIndexes == nil {
			errs = append(errs, field.Required(p.Child("maxFailedIndexes"), fmt.Sprintf("must be specified when completions is above %d", jobCompletionsSoftLimit)))
		}
		if s.Parallelism != nil && *s.Parallelism > jobHighCompletionsParallelism {
			errs = append(errs, field.Invalid(p.Child("parallelism"), *s.Parallelism, fmt.Sprintf("must be less than or equal to %d when completions are above %d and used with backoff limit per index", jobHighCompletionsParallelism, jobCompletionsSoftLimit)))
		}
		if s.MaxFailedIndexes != nil && *s.MaxFailedIndexes > jobHighCompletionsMaxFailedIdx {
			errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *s.MaxFailedIndexes, fmt.Sprintf("must be less than or equal to %d when completions are above %d and used with backoff limit per index", jobHighCompletionsMaxFailedIdx, jobCompletionsSoftLimit)))
		}
	}
	return errs
}

// validateJobPolicies checks the per-index fields of a NonIndexed Job,
// podFailurePolicy, successPolicy and podReplacementPolicy.
func validateJobPolicies(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !isIndexedJobSpec(s) {
		if s.BackoffLimitPerIndex != nil {
			errs = append(errs, field.Invalid(p.Child("backoffLimitPerIndex"), *s.BackoffLimitPerIndex, "requires indexed completion mode"))
		}
		if s.MaxFailedIndexes != nil {
			errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *s.MaxFailedIndexes, "requires indexed completion mode"))
		}
	}
	if s.PodFailurePolicy != nil {
		errs = append(errs, validatePodFailurePolicy(s, p.Child("podFailurePolicy"))...)
	}
	if s.SuccessPolicy != nil {
		if !isIndexedJobSpec(s) {
			errs = append(errs, field.Invalid(p.Child("successPolicy"), *s.SuccessPolicy, "requires indexed completion mode"))
		} else {
			errs = append(errs, validateSuccessPolicy(s, p.Child("successPolicy"))...)
		}
	}
	if rp := s.PodReplacementPolicy; rp != nil {
		if s.PodFailurePolicy != nil {
			if *rp != batchv1.Failed {
				errs = append(errs, field.NotSupported(p.Child("podReplacementPolicy"), *rp, []batchv1.PodReplacementPolicy{batchv1.Failed}))
			}
		} else if *rp != batchv1.Failed && *rp != batchv1.TerminatingOrFailed {
			errs = append(errs, field.NotSupported(p.Child("podReplacementPolicy"), *rp, []batchv1.PodReplacementPolicy{batchv1.Failed, batchv1.TerminatingOrFailed}))
		}
	}
	return errs
}

func validatePodFailurePolicy(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rulesPath := p.Child("rules")
	if len(s.PodFailurePolicy.Rules) > jobMaxPodFailurePolicyRules {
		errs = append(errs, field.TooMany(rulesPath, len(s.PodFailurePolicy.Rules), jobMaxPodFailurePolicyRules))
	}
	containers := sets.New[string]()
	for _, c := range s.Template.Spec.Containers {
		containers.Insert(c.Name)
	}
	for _, c := range s.Template.Spec.InitContainers {
		containers.Insert(c.Name)
	}
	actions := []batchv1.PodFailurePolicyAction{batchv1.PodFailurePolicyActionCount, batchv1.PodFailurePolicyActionFailIndex,
		batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyActionIgnore}
	for i, rule := range s.PodFailurePolicy.Rules {
		rp := rulesPath.Index(i)
		actionPath := rp.Child("action")
		switch {
		case rule.Action == "":
			errs = append(errs, field.Required(actionPath, fmt.Sprintf("valid values: %q", actions)))
		case rule.Action == batchv1.PodFailurePolicyActionFailIndex:
			if s.BackoffLimitPerIndex == nil {
				errs = append(errs, field.Invalid(actionPath, rule.Action, "requires the backoffLimitPerIndex to be set"))
			}
		case !slices.Contains(actions, rule.Action):
			errs = append(errs, field.NotSupported(actionPath, rule.Action, actions))
		}
		if rule.OnExitCodes != nil {
			errs = append(errs, validateOnExitCodes(rule.OnExitCodes, rp.Child("onExitCodes"), containers)...)
		}
		if len(rule.OnPodConditions) > 0 {
			errs = append(errs, validateOnPodConditions(rule.OnPodConditions, rp.Child("onPodConditions"))...)
		}
		if rule.OnExitCodes != nil && len(rule.OnPodConditions) > 0 {
			errs = append(errs, field.Invalid(rp, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
		}
		if rule.OnExitCodes == nil && len(rule.OnPodConditions) == 0 {
			errs = append(errs, field.Invalid(rp, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required"))
		}
	}
	return errs
}

func validateOnExitCodes(r *batchv1.PodFailurePolicyOnExitCodesRequirement, p *field.Path, containers sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	ops := []batchv1.PodFailurePolicyOnExitCodesOperator{batchv1.PodFailurePolicyOnExitCodesOpIn, batchv1.PodFailurePolicyOnExitCodesOpNotIn}
	switch {
	case r.Operator == "":
		errs = append(errs, field.Required(p.Child("operator"), fmt.Sprintf("valid values: %q", ops)))
	case !slices.Contains(ops, r.Operator):
		errs = append(errs, field.NotSupported(p.Child("operator"), r.Operator, ops))
	}
	if r.ContainerName != nil && !containers.Has(*r.ContainerName) {
		errs = append(errs, field.Invalid(p.Child("containerName"), *r.ContainerName, "must be one of the container or initContainer names in the pod template"))
	}
	vp := p.Child("values")
	if len(r.Values) == 0 {
		errs = append(errs, field.Invalid(vp, r.Values, "at least one value is required"))
	} else if len(r.Values) > jobMaxOnExitCodesValues {
		errs = append(errs, field.TooMany(vp, len(r.Values), jobMaxOnExitCodesValues))
	}
	seen := sets.New[int32]()
	ordered := true
	for j, v := range r.Values {
		if r.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && v == 0 {
			errs = append(errs, field.Invalid(vp.Index(j), v, "must not be 0 for the In operator"))
		}
		if seen.Has(v) {
			errs = append(errs, field.Duplicate(vp.Index(j), v))
		}
		seen.Insert(v)
		if j > 0 && r.Values[j-1] > v {
			ordered = false
		}
	}
	if !ordered {
		errs = append(errs, field.Invalid(vp, r.Values, "must be ordered"))
	}
	return errs
}

func validateOnPodConditions(patterns []batchv1.PodFailurePolicyOnPodConditionsPattern, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(patterns) > jobMaxOnPodConditionsPatterns {
		errs = append(errs, field.TooMany(p, len(patterns), jobMaxOnPodConditionsPatterns))
	}
	statuses := []corev1.ConditionStatus{corev1.ConditionFalse, corev1.ConditionTrue, corev1.ConditionUnknown}
	for j, pat := range patterns {
		pp := p.Index(j)
		errs = append(errs, validateQualifiedName(string(pat.Type), pp.Child("type"))...)
		switch {
		case pat.Status == "":
			errs = append(errs, field.Required(pp.Child("status"), fmt.Sprintf("valid values: %q", statuses)))
		case !slices.Contains(statuses, pat.Status):
			errs = append(errs, field.NotSupported(pp.Child("status"), pat.Status, statuses))
		}
	}
	return errs
}

func validateSuccessPolicy(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rulesPath := p.Child("rules")
	if len(s.SuccessPolicy.Rules) == 0 {
		errs = append(errs, field.Required(rulesPath, "at least one rules must be specified when the successPolicy is specified"))
	}
	if len(s.SuccessPolicy.Rules) > jobMaxSuccessPolicyRules {
		errs = append(errs, field.TooMany(rulesPath, len(s.SuccessPolicy.Rules), jobMaxSuccessPolicyRules))
	}
	var completions int32
	if s.Completions != nil {
		completions = *s.Completions
	}
	for i, rule := range s.SuccessPolicy.Rules {
		rp := rulesPath.Index(i)
		if rule.SucceededCount == nil && rule.SucceededIndexes == nil {
			errs = append(errs, field.Required(rp, "at least one of succeededCount or succeededIndexes must be specified"))
		}
		var total int32
		if rule.SucceededIndexes != nil {
			ip := rp.Child("succeededIndexes")
			if len(*rule.SucceededIndexes) > jobMaxSucceededIndexesLength {
				errs = append(errs, field.TooLong(ip, "", jobMaxSucceededIndexesLength))
			}
			var err error
			if total, err = validateIndexesFormat(*rule.SucceededIndexes, completions); err != nil {
				errs = append(errs, field.Invalid(ip, *rule.SucceededIndexes, fmt.Sprintf("error parsing succeededIndexes: %s", err.Error())))
			}
		}
		if rule.SucceededCount != nil {
			cp := rp.Child("succeededCount")
			errs = append(errs, validateNonnegative(int64(*rule.SucceededCount), cp)...)
			if *rule.SucceededCount > completions {
				errs = append(errs, field.Invalid(cp, *rule.SucceededCount, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
			}
			if rule.SucceededIndexes != nil && *rule.SucceededCount > total {
				errs = append(errs, field.Invalid(cp, *rule.SucceededCount, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
			}
		}
	}
	return errs
}

// validateIndexesFormat parses kube's index list ("1,3-5"), increasing
// and below completions, and returns how many indexes it names.
func validateIndexesFormat(s string, completions int32) (int32, error) {
	if s == "" {
		return 0, nil
	}
	var last *int32
	var total int32
	for _, part := range strings.Split(s, ",") {
		x, y, err := parseIndexInterval(part, completions)
		if err != nil {
			return 0, err
		}
		if last != nil && *last >= x {
			return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", *last, x)
		}
		total += y - x + 1
		last = &y
	}
	return total, nil
}

func parseIndexInterval(s string, completions int32) (int32, int32, error) {
	bounds := strings.Split(s, "-")
	if len(bounds) > 2 {
		return 0, 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", s)
	}
	x, err := strconv.Atoi(bounds[0])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", bounds[0])
	}
	if x >= int(completions) {
		return 0, 0, fmt.Errorf("too large index: %q", bounds[0])
	}
	if len(bounds) == 1 {
		return int32(x), int32(x), nil
	}
	y, err := strconv.Atoi(bounds[1])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", bounds[1])
	}
	if y >= int(completions) {
		return 0, 0, fmt.Errorf("too large index: %q", bounds[1])
	}
	if x >= y {
		return 0, 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", x, y)
	}
	return int32(x), int32(y), nil
}

// validateJobNameAllowsCompletions: an Indexed Job's pods are named
// "<job>-<index>", which must be a DNS label for the last index.
func validateJobNameAllowsCompletions(j *batchv1.Job) field.ErrorList {
	if !isIndexedJobSpec(&j.Spec) || j.Spec.Completions == nil || *j.Spec.Completions <= 0 {
		return nil
	}
	host := fmt.Sprintf("%s-%d", j.Name, *j.Spec.Completions-1)
	if len(validation.IsDNS1123Label(host)) > 0 {
		return field.ErrorList{field.Invalid(metadataPath.Child("name"), j.Name, fmt.Sprintf("will not able to create pod with invalid DNS label: %s", host))}
	}
	return nil
}

// validateJobCompletionsUpdate: completions is immutable, except that an
// Indexed Job scales by changing it together with parallelism.
func validateJobCompletionsUpdate(s, old *batchv1.JobSpec) field.ErrorList {
	p := specPath.Child("completions")
	if !isIndexedJobSpec(s) {
		return validateImmutable(s.Completions, old.Completions, p)
	}
	if apiequality.Semantic.DeepEqual(s.Completions, old.Completions) || s.Completions == nil {
		return nil
	}
	if s.Parallelism == nil || *s.Completions != *s.Parallelism {
		return field.ErrorList{field.Invalid(p, s.Completions, "can only be modified in tandem with spec.parallelism")}
	}
	return nil
}

func jobConditionTrue(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func jobConditionFalse(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionFalse {
			return true
		}
	}
	return false
}

func jobFinished(j *batchv1.Job) bool {
	return jobConditionTrue(j, batchv1.JobComplete) || jobConditionTrue(j, batchv1.JobFailed)
}

// validateJobStatusTransition is kube's strengthened Job status validation
// (JobManagedBy, on in v1.37): each rule applies when the fields it checks
// change, so that a controller's write of other fields is not refused for
// a state a spec update left behind.
func validateJobStatusTransition(j, old *batchv1.Job) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status")
	s, os := &j.Status, &old.Status
	indexed := isIndexedJobSpec(&j.Spec)
	completedChanged := s.CompletedIndexes != os.CompletedIndexes
	failedIdxChanged := !apiequality.Semantic.DeepEqual(s.FailedIndexes, os.FailedIndexes)
	finishedChanged := jobFinished(j) != jobFinished(old)
	completeChanged := jobConditionTrue(j, batchv1.JobComplete) != jobConditionTrue(old, batchv1.JobComplete)
	failedChanged := jobConditionTrue(j, batchv1.JobFailed) != jobConditionTrue(old, batchv1.JobFailed)
	failureTargetChanged := jobConditionTrue(j, batchv1.JobFailureTarget) != jobConditionTrue(old, batchv1.JobFailureTarget)
	successMetChanged := jobConditionTrue(j, batchv1.JobSuccessCriteriaMet) != jobConditionTrue(old, batchv1.JobSuccessCriteriaMet)
	activeChanged := s.Active != os.Active
	startChanged := !apiequality.Semantic.DeepEqual(s.StartTime, os.StartTime)
	completionChanged := !apiequality.Semantic.DeepEqual(s.CompletionTime, os.CompletionTime)
	uncountedChanged := !apiequality.Semantic.DeepEqual(s.UncountedTerminatedPods, os.UncountedTerminatedPods)
	readyChanged := !apiequality.Semantic.DeepEqual(s.Ready, os.Ready)
	terminatingChanged := !apiequality.Semantic.DeepEqual(s.Terminating, os.Terminating)
	suspendedZero := j.Spec.Suspend != nil && *j.Spec.Suspend && j.Spec.Completions != nil && *j.Spec.Completions == 0
	resuming := jobConditionTrue(old, batchv1.JobSuspended) && jobConditionFalse(j, batchv1.JobSuspended)
	finished, complete := jobFinished(j), jobConditionTrue(j, batchv1.JobComplete)
	successMet, failureTarget := jobConditionTrue(j, batchv1.JobSuccessCriteriaMet), jobConditionTrue(j, batchv1.JobFailureTarget)
	var completions int32
	if j.Spec.Completions != nil {
		completions = *j.Spec.Completions
	}

	if uncountedChanged && s.UncountedTerminatedPods != nil {
		seen := sets.New[string]()
		for _, part := range []struct {
			name string
			uids []string
		}{{"succeeded", uidStrings(s.UncountedTerminatedPods.Succeeded)}, {"failed", uidStrings(s.UncountedTerminatedPods.Failed)}} {
			for i, uid := range part.uids {
				ip := p.Child("uncountedTerminatedPods", part.name).Index(i)
				switch {
				case uid == "":
					errs = append(errs, field.Invalid(ip, uid, "must not be empty"))
				case seen.Has(uid):
					errs = append(errs, field.Duplicate(ip, uid))
				default:
					seen.Insert(uid)
				}
			}
		}
	}
	if (completeChanged || failedChanged) && complete && jobConditionTrue(j, batchv1.JobFailed) {
		errs = append(errs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, "cannot set Complete=True and Failed=true conditions"))
	}
	if (completeChanged || failureTargetChanged) && complete && failureTarget {
		errs = append(errs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, "cannot set Complete=True and FailureTarget=true conditions"))
	}
	if (completeChanged || completionChanged) && s.CompletionTime != nil && !complete {
		errs = append(errs, field.Invalid(p.Child("completionTime"), s.CompletionTime, "cannot set completionTime when there is no Complete=True condition"))
	}
	if (completeChanged || completionChanged) && s.CompletionTime == nil && complete {
		errs = append(errs, field.Required(p.Child("completionTime"), "completionTime is required for Complete jobs"))
	}
	if (startChanged || completionChanged) && s.StartTime != nil && s.CompletionTime != nil && s.CompletionTime.Before(s.StartTime) {
		errs = append(errs, field.Invalid(p.Child("completionTime"), s.CompletionTime, "must be equal to or after `startTime`"))
	}
	if (failedChanged || failedIdxChanged) && jobConditionTrue(j, batchv1.JobFailed) && !failureTarget {
		errs = append(errs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, "cannot set Failed=True condition without the FailureTarget=true condition"))
	}
	if (completeChanged || successMetChanged) && complete && !successMet {
		errs = append(errs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, "cannot set Complete=True condition without the SuccessCriteriaMet=true condition"))
	}
	if (finishedChanged || activeChanged) && s.Active > 0 && finished {
		errs = append(errs, field.Invalid(p.Child("active"), s.Active, "active>0 is invalid for finished job"))
	}
	if (finishedChanged || startChanged) && !suspendedZero && s.StartTime == nil && finished {
		errs = append(errs, field.Required(p.Child("startTime"), "startTime is required for finished job"))
	}
	if (finishedChanged || uncountedChanged) && finished && s.UncountedTerminatedPods != nil && len(s.UncountedTerminatedPods.Succeeded)+len(s.UncountedTerminatedPods.Failed) > 0 {
		errs = append(errs, field.Invalid(p.Child("uncountedTerminatedPods"), s.UncountedTerminatedPods, "must be empty for finished job"))
	}
	if completedChanged && j.Spec.Completions != nil {
		if _, err := validateIndexesFormat(s.CompletedIndexes, completions); err != nil {
			errs = append(errs, field.Invalid(p.Child("completedIndexes"), s.CompletedIndexes, fmt.Sprintf("error parsing completedIndexes: %s", err.Error())))
		}
	}
	if failedIdxChanged && j.Spec.Completions != nil && j.Spec.BackoffLimitPerIndex != nil && s.FailedIndexes != nil {
		if _, err := validateIndexesFormat(*s.FailedIndexes, completions); err != nil {
			errs = append(errs, field.Invalid(p.Child("failedIndexes"), s.FailedIndexes, fmt.Sprintf("error parsing failedIndexes: %s", err.Error())))
		}
	}
	if completedChanged && len(s.CompletedIndexes) != 0 && !indexed {
		errs = append(errs, field.Invalid(p.Child("completedIndexes"), s.CompletedIndexes, "cannot set non-empty completedIndexes when non-indexed completion mode"))
	}
	if failedIdxChanged && j.Spec.BackoffLimitPerIndex == nil && s.FailedIndexes != nil {
		errs = append(errs, field.Invalid(p.Child("failedIndexes"), *s.FailedIndexes, "cannot set non-null failedIndexes when backoffLimitPerIndex is null"))
	}
	if (finishedChanged || terminatingChanged) && s.Terminating != nil && *s.Terminating > 0 && finished {
		errs = append(errs, field.Invalid(p.Child("terminating"), s.Terminating, "terminating>0 is invalid for finished job"))
	}
	if (readyChanged || activeChanged) && s.Ready != nil && *s.Ready > s.Active {
		errs = append(errs, field.Invalid(p.Child("ready"), *s.Ready, "cannot set more ready pods than active"))
	}
	if successMet && jobConditionTrue(j, batchv1.JobFailed) {
		errs = append(errs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, "cannot set SuccessCriteriaMet=True and Failed=true conditions"))
	}
	if successMet && failureTarget {
		errs = append(errs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions"))
	}
	if j.Spec.SuccessPolicy != nil && !successMet && complete {
		errs = append(errs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True"))
	}

	// Transitions.
	for _, t := range []batchv1.JobConditionType{batchv1.JobFailed, batchv1.JobComplete, batchv1.JobFailureTarget} {
		if jobConditionTrue(old, t) && !jobConditionTrue(j, t) {
			errs = append(errs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, fmt.Sprintf("cannot disable the terminal %s=True condition", string(t))))
		}
	}
	if s.Failed < os.Failed {
		errs = append(errs, field.Invalid(p.Child("failed"), s.Failed, "cannot decrease the failed counter"))
	}
	// An Indexed Job scaled down (completions with parallelism) may
	// count fewer succeeded indexes.
	if s.Succeeded < os.Succeeded && (!indexed || !apiequality.Semantic.DeepEqual(j.Spec.Completions, j.Spec.Parallelism)) {
		errs = append(errs, field.Invalid(p.Child("succeeded"), s.Succeeded, "cannot decrease the succeeded counter"))
	}
	if s.CompletionTime != nil && os.CompletionTime != nil && !s.CompletionTime.Equal(os.CompletionTime) {
		errs = append(errs, field.Invalid(p.Child("completionTime"), s.CompletionTime, "field is immutable"))
	}
	if startChanged && !resuming && os.StartTime != nil && !(j.Spec.Suspend != nil && *j.Spec.Suspend) {
		errs = append(errs, field.Invalid(p.Child("startTime"), s.StartTime, "field is immutable for unsuspended job once set"))
	}
	if jobConditionTrue(old, batchv1.JobSuccessCriteriaMet) && !successMet {
		errs = append(errs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, "cannot disable the SuccessCriteriaMet=True condition"))
	}
	if jobConditionTrue(old, batchv1.JobComplete) && !jobConditionTrue(old, batchv1.JobSuccessCriteriaMet) && successMet {
		errs = append(errs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"))
	}
	return errs
}

func uidStrings[T ~string](uids []T) []string {
	out := make([]string, len(uids))
	for i, u := range uids {
		out[i] = string(u)
	}
	return out
}
