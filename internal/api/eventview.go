package api

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// storedAs converts between a served kind and the kind it is stored as,
// when the two differ: events.k8s.io/v1 Events are core/v1 Events in
// storage, as in kube-apiserver, so both APIs show the same events.
type storedAs struct {
	// resource is the stored resource's name in etcd keys.
	resource string
	// new returns an empty stored object.
	new func() runtime.Object
	// toStored converts a served object to its stored form.
	toStored func(runtime.Object) runtime.Object
	// fromStored converts a stored object to its served form.
	fromStored func(runtime.Object) runtime.Object
}

// eventsV1View serves core Events as events.k8s.io/v1 Events.
var eventsV1View = &storedAs{
	resource: "events",
	new:      func() runtime.Object { return &corev1.Event{} },
	toStored: func(obj runtime.Object) runtime.Object {
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
	fromStored: func(obj runtime.Object) runtime.Object {
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
