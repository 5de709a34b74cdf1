package tables

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Events have the same table in core/v1 and events.k8s.io/v1: kube-apiserver
// converts both to its internal Event before printing. Here both are read
// into an eventView, which holds what the columns need under the core/v1
// names.

var eventColumns = []metav1.TableColumnDefinition{
	col("Last Seen", "string", corev1.Event{}.SwaggerDoc()["lastTimestamp"]),
	col("Type", "string", corev1.Event{}.SwaggerDoc()["type"]),
	col("Reason", "string", corev1.Event{}.SwaggerDoc()["reason"]),
	col("Object", "string", corev1.Event{}.SwaggerDoc()["involvedObject"]),
	wide("Subobject", "string", corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]),
	wide("Source", "string", corev1.Event{}.SwaggerDoc()["source"]),
	col("Message", "string", corev1.Event{}.SwaggerDoc()["message"]),
	wide("First Seen", "string", corev1.Event{}.SwaggerDoc()["firstTimestamp"]),
	wide("Count", "string", corev1.Event{}.SwaggerDoc()["count"]),
	withPriority(nameColumn(), 1),
}

// CoreEvent is kubectl's table of core/v1 Events.
var CoreEvent = kindTable(eventColumns, func(e *corev1.Event, now time.Time) []interface{} {
	v := eventView{
		name:                e.Name,
		eventType:           e.Type,
		reason:              e.Reason,
		message:             e.Message,
		regarding:           e.InvolvedObject,
		source:              e.Source,
		reportingController: e.ReportingController,
		reportingInstance:   e.ReportingInstance,
		firstTimestamp:      e.FirstTimestamp,
		lastTimestamp:       e.LastTimestamp,
		eventTime:           e.EventTime,
		count:               e.Count,
	}
	if e.Series != nil {
		v.series = &eventSeries{count: e.Series.Count, lastObservedTime: e.Series.LastObservedTime}
	}
	return v.cells(now)
})

// EventsV1Event is kubectl's table of events.k8s.io/v1 Events: the core Event columns, read from the events.k8s.io fields.
var EventsV1Event = kindTable(eventColumns, func(e *eventsv1.Event, now time.Time) []interface{} {
	v := eventView{
		name:                e.Name,
		eventType:           e.Type,
		reason:              e.Reason,
		message:             e.Note,
		regarding:           e.Regarding,
		source:              e.DeprecatedSource,
		reportingController: e.ReportingController,
		reportingInstance:   e.ReportingInstance,
		firstTimestamp:      e.DeprecatedFirstTimestamp,
		lastTimestamp:       e.DeprecatedLastTimestamp,
		eventTime:           e.EventTime,
		count:               e.DeprecatedCount,
	}
	if e.Series != nil {
		v.series = &eventSeries{count: e.Series.Count, lastObservedTime: e.Series.LastObservedTime}
	}
	return v.cells(now)
})

// eventView is an event of either API group, with core/v1's field names.
type eventView struct {
	name                                   string
	eventType, reason, message             string
	regarding                              corev1.ObjectReference
	source                                 corev1.EventSource
	reportingController, reportingInstance string
	firstTimestamp, lastTimestamp          metav1.Time
	eventTime                              metav1.MicroTime
	count                                  int32
	series                                 *eventSeries
}

type eventSeries struct {
	count            int32
	lastObservedTime metav1.MicroTime
}

// cells renders an event's row. FIRST SEEN falls back to eventTime (new
// events API), LAST SEEN to the series' last observation or FIRST SEEN, and
// COUNT to the series count, or 1 for a singleton event.
func (e eventView) cells(now time.Time) []interface{} {
	first := age(e.firstTimestamp, now)
	if e.firstTimestamp.IsZero() {
		first = microAge(e.eventTime, now)
	}
	last := age(e.lastTimestamp, now)
	if e.lastTimestamp.IsZero() {
		last = first
	}
	count := e.count
	if e.series != nil {
		last = microAge(e.series.lastObservedTime, now)
		count = e.series.count
	} else if count == 0 {
		count = 1
	}

	object := strings.ToLower(e.regarding.Kind)
	if e.regarding.Name != "" {
		object += "/" + e.regarding.Name
	}
	return []interface{}{
		last,
		e.eventType,
		e.reason,
		object,
		e.regarding.FieldPath,
		eventSource(e.source, e.reportingController, e.reportingInstance),
		strings.TrimSpace(e.message),
		first,
		int64(count),
		e.name,
	}
}

// eventSource is the SOURCE cell: "component, host", using the reporting
// controller and instance when the deprecated source is empty.
func eventSource(s corev1.EventSource, reportingController, reportingInstance string) string {
	component := firstNonEmpty(s.Component, reportingController)
	instance := firstNonEmpty(s.Host, reportingInstance)
	if instance == "" {
		return component
	}
	return component + ", " + instance
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
