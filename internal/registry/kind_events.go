package registry

import (
	"fmt"
	"k8s.io/apimachinery/pkg/runtime"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// Events exist in two APIs over one storage format: core/v1 Events and
// events.k8s.io/v1 Events. kube-apiserver validates both in core/v1's terms
// (so error paths say "involvedObject", "message", "source" for either), with
// the stricter rules only for events.k8s.io/v1. eventView is that common
// form.
type eventView struct {
	meta                *metav1.ObjectMeta
	involvedObject      corev1.ObjectReference
	related             *corev1.ObjectReference
	reason, message     string
	source              corev1.EventSource
	firstTimestamp      metav1.Time
	lastTimestamp       metav1.Time
	count               int32
	typ                 string
	eventTime           metav1.MicroTime
	series              *eventsv1.EventSeries
	action              string
	reportingController string
	reportingInstance   string
}

func coreEventView(e *corev1.Event) eventView {
	v := eventView{
		meta: &e.ObjectMeta, involvedObject: e.InvolvedObject, related: e.Related,
		reason: e.Reason, message: e.Message, source: e.Source,
		firstTimestamp: e.FirstTimestamp, lastTimestamp: e.LastTimestamp, count: e.Count,
		typ: e.Type, eventTime: e.EventTime, action: e.Action,
		reportingController: e.ReportingController, reportingInstance: e.ReportingInstance,
	}
	if e.Series != nil {
		v.series = &eventsv1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return v
}

func eventsEventView(e *eventsv1.Event) eventView {
	return eventView{
		meta: &e.ObjectMeta, involvedObject: e.Regarding, related: e.Related,
		reason: e.Reason, message: e.Note, source: e.DeprecatedSource,
		firstTimestamp: e.DeprecatedFirstTimestamp, lastTimestamp: e.DeprecatedLastTimestamp, count: e.DeprecatedCount,
		typ: e.Type, eventTime: e.EventTime, series: e.Series, action: e.Action,
		reportingController: e.ReportingController, reportingInstance: e.ReportingInstance,
	}
}

const (
	reportingInstanceLengthLimit = 128
	actionLengthLimit            = 128
	reasonLengthLimit            = 128
	noteLengthLimit              = 1024
)

// validateEventLegacy is the validation every Event passes, whichever API
// wrote it.
func validateEventLegacy(e eventView) field.ErrorList {
	var errs field.ErrorList
	nsPath := field.NewPath("involvedObject", "namespace")
	ns := e.meta.Namespace
	if e.eventTime.IsZero() {
		if e.involvedObject.Namespace == "" {
			if ns != metav1.NamespaceNone && ns != metav1.NamespaceDefault {
				errs = append(errs, field.Invalid(nsPath, e.involvedObject.Namespace, "does not match event.namespace"))
			}
		} else if ns != e.involvedObject.Namespace {
			errs = append(errs, field.Invalid(nsPath, e.involvedObject.Namespace, "does not match event.namespace"))
		}
	} else {
		if e.involvedObject.Namespace == "" && ns != metav1.NamespaceDefault && ns != metav1.NamespaceSystem {
			errs = append(errs, field.Invalid(nsPath, e.involvedObject.Namespace, "does not match event.namespace"))
		}
		if e.reportingController == "" {
			errs = append(errs, field.Required(field.NewPath("reportingController"), ""))
		}
		errs = append(errs, validateQualifiedName(e.reportingController, field.NewPath("reportingController"))...)
		if e.reportingInstance == "" {
			errs = append(errs, field.Required(field.NewPath("reportingInstance"), ""))
		}
		if len(e.reportingInstance) > reportingInstanceLengthLimit {
			errs = append(errs, field.Invalid(field.NewPath("reportingInstance"), "", fmt.Sprintf("can have at most %v characters", reportingInstanceLengthLimit)))
		}
		if e.action == "" {
			errs = append(errs, field.Required(field.NewPath("action"), ""))
		}
		if len(e.action) > actionLengthLimit {
			errs = append(errs, field.Invalid(field.NewPath("action"), "", fmt.Sprintf("can have at most %v characters", actionLengthLimit)))
		}
		if e.reason == "" {
			errs = append(errs, field.Required(field.NewPath("reason"), ""))
		}
		if len(e.reason) > reasonLengthLimit {
			errs = append(errs, field.Invalid(field.NewPath("reason"), "", fmt.Sprintf("can have at most %v characters", reasonLengthLimit)))
		}
		if len(e.message) > noteLengthLimit {
			errs = append(errs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", noteLengthLimit)))
		}
	}
	for _, msg := range validation.IsDNS1123Subdomain(ns) {
		errs = append(errs, field.Invalid(field.NewPath("namespace"), ns, msg))
	}
	return errs
}

func validateEventSeries(e eventView) field.ErrorList {
	var errs field.ErrorList
	if e.series != nil {
		if e.series.Count < 2 {
			errs = append(errs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
		}
		if e.series.LastObservedTime.IsZero() {
			errs = append(errs, field.Required(field.NewPath("series.lastObservedTime"), ""))
		}
	}
	return errs
}

// validateEventStrict adds the events.k8s.io/v1 create rules.
func validateEventStrict(e eventView) field.ErrorList {
	errs := validateEventLegacy(e)
	errs = append(errs, validateObjectMeta(e.meta, true, nameIsDNSSubdomain)...)
	errs = append(errs, validateEventSeries(e)...)
	if e.eventTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	}
	if e.typ != corev1.EventTypeNormal && e.typ != corev1.EventTypeWarning {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", e.typ)))
	}
	if !e.firstTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("firstTimestamp"), "", "needs to be unset"))
	}
	if !e.lastTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("lastTimestamp"), "", "needs to be unset"))
	}
	if e.count != 0 {
		errs = append(errs, field.Invalid(field.NewPath("count"), "", "needs to be unset"))
	}
	if e.source.Component != "" || e.source.Host != "" {
		errs = append(errs, field.Invalid(field.NewPath("source"), "", "needs to be unset"))
	}
	return errs
}

// validateEventStrictUpdate adds the events.k8s.io/v1 update rules: an
// Event's content is immutable but for its series.
func validateEventStrictUpdate(e, old eventView) field.ErrorList {
	errs := validateEventLegacy(e)
	errs = append(errs, validateObjectMetaUpdate(e.meta, old.meta)...)
	if !reflect.DeepEqual(e.series, old.series) {
		errs = append(errs, validateEventSeries(e)...)
	}
	for _, f := range []struct {
		name     string
		new, old any
	}{
		{"involvedObject", e.involvedObject, old.involvedObject},
		{"reason", e.reason, old.reason},
		{"message", e.message, old.message},
		{"source", e.source, old.source},
		{"firstTimestamp", e.firstTimestamp, old.firstTimestamp},
		{"lastTimestamp", e.lastTimestamp, old.lastTimestamp},
		{"count", e.count, old.count},
		{"reason", e.reason, old.reason},
		{"type", e.typ, old.typ},
		{"eventTime", e.eventTime, old.eventTime},
		{"action", e.action, old.action},
		{"related", e.related, old.related},
		{"reportingController", e.reportingController, old.reportingController},
		{"reportingInstance", e.reportingInstance, old.reportingInstance},
	} {
		errs = append(errs, validateImmutable(f.new, f.old, field.NewPath(f.name))...)
	}
	return errs
}

// coreEvents: core/v1 Events have no generation or status, and only
// the legacy rules apply to them.
var coreEvents = &Resource{
	GroupVersion: coreV1, Name: "events", SingularName: "event", Kind: "Event",
	Namespaced: true, ShortNames: []string{"ev"},
	Strategy: Strategy{
		Validate: validator(func(e *corev1.Event) field.ErrorList {
			return validateEventLegacy(coreEventView(e))
		}),
		ValidateUpdate: updateValidator(func(e, _ *corev1.Event) field.ErrorList {
			return validateEventLegacy(coreEventView(e))
		}),
		NoGeneration:       true,
		KeepStatusOnCreate: true,
		Fields:             selectable(coreEventFields),
		Table:              tables.CoreEvent.Convertor(nil),
	},
}

func coreEventFields(e *corev1.Event) fields.Set {
	source := e.Source.Component
	if source == "" {
		source = e.ReportingController
	}
	return fields.Set{
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"reason":                         e.Reason,
		"reportingComponent":             e.ReportingController,
		"source":                         source,
		"type":                           e.Type,
	}
}

// eventsEvents: events.k8s.io/v1 Events, with the strict rules.
var eventsEvents = &Resource{
	GroupVersion: eventsV1, Name: "events", SingularName: "event", Kind: "Event",
	Namespaced: true, ShortNames: []string{"ev"}, StoredAs: eventsV1View,
	Strategy: Strategy{
		Validate: validator(func(e *eventsv1.Event) field.ErrorList {
			return validateEventStrict(eventsEventView(e))
		}),
		ValidateUpdate: updateValidator(func(e, old *eventsv1.Event) field.ErrorList {
			return validateEventStrictUpdate(eventsEventView(e), eventsEventView(old))
		}),
		NoGeneration:       true,
		KeepStatusOnCreate: true,
		Fields:             selectable(eventsEventFields),
		Table:              tables.EventsV1Event.Convertor(nil),
	},
}

// eventsEventFields are the field-selector fields of an events.k8s.io/v1
// Event, named as that API names them.
func eventsEventFields(e *eventsv1.Event) fields.Set {
	return fields.Set{
		"regarding.kind":            e.Regarding.Kind,
		"regarding.namespace":       e.Regarding.Namespace,
		"regarding.name":            e.Regarding.Name,
		"regarding.uid":             string(e.Regarding.UID),
		"regarding.apiVersion":      e.Regarding.APIVersion,
		"regarding.resourceVersion": e.Regarding.ResourceVersion,
		"regarding.fieldPath":       e.Regarding.FieldPath,
		"reason":                    e.Reason,
		"reportingController":       e.ReportingController,
		"type":                      e.Type,
	}
}

// eventsV1View serves core Events as events.k8s.io/v1 Events, as
// kube-apiserver does, so both APIs show the same events.
var eventsV1View = &StorageView{
	Resource: "events",
	New:      func() runtime.Object { return &corev1.Event{} },
	ToStored: func(obj runtime.Object) runtime.Object {
		e := obj.(*eventsv1.Event)
		c := &corev1.Event{
			ObjectMeta:          e.ObjectMeta,
			InvolvedObject:      e.Regarding,
			Reason:              e.Reason,
			Message:             e.Note,
			Source:              e.DeprecatedSource,
			FirstTimestamp:      e.DeprecatedFirstTimestamp,
			LastTimestamp:       e.DeprecatedLastTimestamp,
			Count:               e.DeprecatedCount,
			Type:                e.Type,
			EventTime:           e.EventTime,
			Related:             e.Related,
			Action:              e.Action,
			ReportingController: e.ReportingController,
			ReportingInstance:   e.ReportingInstance,
		}
		if e.Series != nil {
			c.Series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
		}
		return c
	},
	FromStored: func(obj runtime.Object) runtime.Object {
		c := obj.(*corev1.Event)
		e := &eventsv1.Event{
			ObjectMeta:               c.ObjectMeta,
			EventTime:                c.EventTime,
			ReportingController:      c.ReportingController,
			ReportingInstance:        c.ReportingInstance,
			Action:                   c.Action,
			Reason:                   c.Reason,
			Regarding:                c.InvolvedObject,
			Related:                  c.Related,
			Note:                     c.Message,
			Type:                     c.Type,
			DeprecatedSource:         c.Source,
			DeprecatedFirstTimestamp: c.FirstTimestamp,
			DeprecatedLastTimestamp:  c.LastTimestamp,
			DeprecatedCount:          c.Count,
		}
		if c.Series != nil {
			e.Series = &eventsv1.EventSeries{Count: c.Series.Count, LastObservedTime: c.Series.LastObservedTime}
		}
		return e
	},
}
