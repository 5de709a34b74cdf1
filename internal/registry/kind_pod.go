package registry

import (
	"fmt"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// pods: Pods keep metadata.generation (bumped on spec changes) and
// start Pending with their QoS class computed.
var pods = &Resource{
	GroupVersion: coreV1, Name: "pods", SingularName: "pod", Kind: "Pod",
	Namespaced: true, ShortNames: []string{"po"}, Categories: []string{"all"}, HasStatus: true, DeleteReturnsObject: true,
	Subresources: []Subresource{
		{Name: "attach", Kind: "PodAttachOptions", Verbs: connectVerbs, UpgradeNeedsCreate: true, Connect: connectRemoteCommand("attach")},
		{Name: "binding", Kind: "Binding", Verbs: metav1.Verbs{"create"}, Create: createBinding},
		{Name: "ephemeralcontainers", Kind: "Pod", Verbs: metav1.Verbs{"get", "patch", "update"}, Update: podEphemeralContainers()},
		{Name: "eviction", GroupVersion: policyv1.SchemeGroupVersion, Kind: "Eviction", Verbs: metav1.Verbs{"create"}, Create: createEviction},
		{Name: "exec", Kind: "PodExecOptions", Verbs: connectVerbs, UpgradeNeedsCreate: true, Connect: connectRemoteCommand("exec")},
		{Name: "log", Kind: "Pod", Verbs: metav1.Verbs{"get"}, Connect: connectLog},
		{Name: "portforward", Kind: "PodPortForwardOptions", Verbs: connectVerbs, UpgradeNeedsCreate: true, Connect: connectPortForward},
		{Name: "proxy", Kind: "PodProxyOptions", Verbs: proxyVerbs, Connect: connectPodProxy},
		{Name: "resize", Kind: "Pod", Verbs: metav1.Verbs{"get", "patch", "update"}, Update: podResize()},
	},
	Strategy: Strategy{
		Default:          defaulter(defaultPod),
		PrepareForCreate: creator(preparePodForCreate),
		Validate:         validator(validatePod),
		ValidateUpdate:   updateValidator(validatePodUpdate),
		Fields:           selectable(podFields),
		GracePeriod:      podGracePeriod,
		Table:            tables.Pod.Convertor(nil),
	},
}

func preparePodForCreate(pod *corev1.Pod) {
	pod.Status = corev1.PodStatus{
		Phase:    corev1.PodPending,
		QOSClass: podQOS(pod),
	}
	if len(pod.Spec.SchedulingGates) > 0 {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
			Type:    corev1.PodScheduled,
			Status:  corev1.ConditionFalse,
			Reason:  corev1.PodReasonSchedulingGated,
			Message: "Scheduling is blocked due to non-empty scheduling gates",
		})
	}
}

func validatePod(pod *corev1.Pod) field.ErrorList {
	errs := validatePodMetadataAndSpec(pod)
	if len(pod.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(specPath.Child("ephemeralContainers"), "cannot be set on create"))
	}
	if pod.Spec.NodeName != "" && len(pod.Spec.SchedulingGates) != 0 {
		errs = append(errs, field.Forbidden(specPath.Child("nodeName"), "cannot be set until all schedulingGates have been cleared"))
	}
	return errs
}

// validatePodMetadataAndSpec checks what a Pod must satisfy on create and on
// every update.
func validatePodMetadataAndSpec(pod *corev1.Pod) field.ErrorList {
	errs := validateObjectMeta(&pod.ObjectMeta, true, nameIsDNSSubdomain)
	errs = append(errs, validatePodSpecificAnnotations(pod.Annotations, &pod.Spec, metadataPath.Child("annotations"))...)
	errs = append(errs, validatePodSpec(&pod.Spec, specPath, podSpecOpts{isPod: true, podName: pod.Name})...)
	if pod.Spec.ServiceAccountName == "" {
		for vi, v := range pod.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for si, s := range v.Projected.Sources {
				if s.ServiceAccountToken != nil {
					errs = append(errs, field.Forbidden(specPath.Child("volumes").Index(vi).Child("projected", "sources").Index(si).Child("serviceAccountToken"),
						"must not be specified when serviceAccountName is not set"))
				}
			}
		}
	}
	for i := range pod.Spec.Containers {
		errs = append(errs, validateContainerOnlyForPod(&pod.Spec.Containers[i], specPath.Child("containers").Index(i))...)
	}
	for i := range pod.Spec.InitContainers {
		errs = append(errs, validateContainerOnlyForPod(&pod.Spec.InitContainers[i], specPath.Child("initContainers").Index(i))...)
	}
	return errs
}

// updatablePodSpecFields are the PodSpec fields a Pod update may change, as
// kube-apiserver lists them in its refusal.
var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

// validatePodUpdate enforces that a Pod's spec is immutable but for images,
// the active deadline, added tolerations, removed scheduling gates and a few
// more. Resources change through the resize subresource, not here.
func validatePodUpdate(pod, old *corev1.Pod) field.ErrorList {
	errs := validateObjectMetaUpdate(&pod.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validatePodMetadataAndSpec(pod)...)
	errs = append(errs, validateMirrorAnnotationUpdate(pod, old)...)

	cErrs, stop := validateContainerUpdates(pod.Spec.Containers, old.Spec.Containers, specPath.Child("containers"))
	errs = append(errs, cErrs...)
	if stop {
		return errs
	}
	cErrs, stop = validateContainerUpdates(pod.Spec.InitContainers, old.Spec.InitContainers, specPath.Child("initContainers"))
	errs = append(errs, cErrs...)
	if stop {
		return errs
	}

	adsPath := specPath.Child("activeDeadlineSeconds")
	if ads := pod.Spec.ActiveDeadlineSeconds; ads != nil {
		if *ads < 0 || *ads > math.MaxInt32 {
			return append(errs, field.Invalid(adsPath, *ads, validation.InclusiveRangeError(0, math.MaxInt32)))
		}
		if o := old.Spec.ActiveDeadlineSeconds; o != nil && *o < *ads {
			return append(errs, field.Invalid(adsPath, *ads, "must be less than or equal to previous value"))
		}
	} else if old.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Invalid(adsPath, pod.Spec.ActiveDeadlineSeconds, "must not update from a positive integer to nil value"))
	}

	errs = append(errs, validateOnlyAddedTolerations(pod.Spec.Tolerations, old.Spec.Tolerations, specPath.Child("tolerations"))...)
	errs = append(errs, validateOnlyDeletedSchedulingGates(pod.Spec.SchedulingGates, old.Spec.SchedulingGates, specPath.Child("schedulingGates"))...)

	if apiequality.Semantic.DeepEqual(pod.Spec, old.Spec) {
		return errs
	}
	if oldQOS := qosOfStored(old); oldQOS != podQOS(pod) {
		errs = append(errs, field.Invalid(metadataPath, string(pod.Status.QOSClass), "Pod QoS is immutable"))
	}

	munged := *pod.Spec.DeepCopy()
	for i := range munged.Containers {
		munged.Containers[i].Image = old.Spec.Containers[i].Image
	}
	for i := range munged.InitContainers {
		munged.InitContainers[i].Image = old.Spec.InitContainers[i].Image
	}
	munged.ActiveDeadlineSeconds = old.Spec.ActiveDeadlineSeconds
	munged.SchedulingGates = old.Spec.SchedulingGates
	munged.Tolerations = old.Spec.Tolerations
	if o := old.Spec.TerminationGracePeriodSeconds; o != nil && *o < 0 &&
		munged.TerminationGracePeriodSeconds != nil && *munged.TerminationGracePeriodSeconds == 1 {
		munged.TerminationGracePeriodSeconds = o
	}
	if len(old.Spec.SchedulingGates) > 0 && !apiequality.Semantic.DeepEqual(munged.NodeSelector, old.Spec.NodeSelector) {
		// A gated Pod may gain node selector entries.
		for k, v := range old.Spec.NodeSelector {
			if nv, ok := munged.NodeSelector[k]; !ok || nv != v {
				errs = append(errs, field.Invalid(specPath.Child("nodeSelector"), munged.NodeSelector, "only additions to spec.nodeSelector are allowed (no mutations or deletions)"))
				break
			}
		}
		munged.NodeSelector = old.Spec.NodeSelector
	}
	if !apiequality.Semantic.DeepEqual(munged, old.Spec) {
		errs = append(errs, field.Forbidden(specPath, fmt.Sprintf("pod updates may not change fields other than %s\n%v",
			strings.Join(updatablePodSpecFields, ","), podSpecDiff(old.Spec, munged))))
	}
	return errs
}

// v1TypeName matches a core/v1 type name in go-cmp's output, which
// indents with spaces and no-break spaces.
var v1TypeName = regexp.MustCompile(`(^|[\s\x{a0}\[\]*&(])v1\.([A-Z])`)

// podSpecDiff shows what an update changed, as kube-apiserver does with
// go-cmp; kube-apiserver compares its internal types, so the type names
// read "core." rather than "v1.".
func podSpecDiff(old, spec corev1.PodSpec) string {
	return v1TypeName.ReplaceAllString(cmp.Diff(old, spec), "${1}core.${2}")
}

// qosOfStored returns the QoS class recorded on a stored Pod, or computes it
// when the status lacks one.
func qosOfStored(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return podQOS(pod)
}

func validateMirrorAnnotationUpdate(pod, old *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	p := metadataPath.Child("annotations").Key(corev1.MirrorPodAnnotationKey)
	oldV, hadOld := old.Annotations[corev1.MirrorPodAnnotationKey]
	newV, hasNew := pod.Annotations[corev1.MirrorPodAnnotationKey]
	switch {
	case hadOld && (!hasNew || newV != oldV):
		errs = append(errs, field.Forbidden(p, "may not remove or update mirror pod annotation"))
	case !hadOld && hasNew:
		errs = append(errs, field.Forbidden(p, "may not add mirror pod annotation"))
	}
	return errs
}

func validateContainerUpdates(cs, old []corev1.Container, p *field.Path) (field.ErrorList, bool) {
	if len(cs) != len(old) {
		return field.ErrorList{field.Forbidden(p, "pod updates may not add or remove containers")}, true
	}
	var errs field.ErrorList
	for i, c := range cs {
		if c.Image == "" {
			errs = append(errs, field.Required(p.Index(i).Child("image"), ""))
		}
		if len(strings.TrimSpace(c.Image)) != len(c.Image) {
			errs = append(errs, field.Invalid(p.Index(i).Child("image"), c.Image, "must not have leading or trailing whitespace"))
		}
	}
	return errs, false
}

func validateOnlyAddedTolerations(ts, old []corev1.Toleration, p *field.Path) field.ErrorList {
	for _, o := range old {
		found := false
		for _, t := range ts {
			oc := o
			oc.TolerationSeconds = t.TolerationSeconds
			if reflect.DeepEqual(oc, t) {
				found = true
				break
			}
		}
		if !found {
			return field.ErrorList{field.Forbidden(p, "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return validateTolerations(ts, p)
}

func validateOnlyDeletedSchedulingGates(gates, old []corev1.PodSchedulingGate, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	existing := map[string]bool{}
	for _, g := range old {
		existing[g.Name] = true
	}
	for i, g := range gates {
		if !existing[g.Name] {
			errs = append(errs, field.Forbidden(p.Index(i).Child("name"), fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", g.Name)))
		}
	}
	return errs
}

// podFields are the field-selector fields of a Pod.
func podFields(pod *corev1.Pod) fields.Set {
	podIP := ""
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	} else {
		podIP = pod.Status.PodIP
	}
	return fields.Set{
		"spec.nodeName":            pod.Spec.NodeName,
		"spec.restartPolicy":       string(pod.Spec.RestartPolicy),
		"spec.schedulerName":       pod.Spec.SchedulerName,
		"spec.serviceAccountName":  pod.Spec.ServiceAccountName,
		"spec.hostNetwork":         strconv.FormatBool(pod.Spec.HostNetwork),
		"status.phase":             string(pod.Status.Phase),
		"status.podIP":             podIP,
		"status.nominatedNodeName": pod.Status.NominatedNodeName,
	}
}

// podGracePeriod is how long a Pod assigned to a node is given to stop
// before it is removed: its kubelet then deletes it with grace 0. Pods
// not yet scheduled, or already finished, go at once.
func podGracePeriod(obj runtime.Object, opts *metav1.DeleteOptions) int64 {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return 0
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return 0
	}
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if opts.GracePeriodSeconds != nil {
		grace = *opts.GracePeriodSeconds
	}
	return max(grace, 0)
}
