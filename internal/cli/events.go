package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"
	watchtools "k8s.io/client-go/tools/watch"
)

// EventsOptions are the inputs of events.
type EventsOptions struct {
	AllNamespaces bool
	Watch         bool
	NoHeaders     bool
	ForObject     string
	FilterTypes   []string
	PrintFlags    PrintFlags
	ChunkSize     int64

	Streams IOStreams
}

// NewCmdEvents returns the events command.
func NewCmdEvents(f *Factory, streams IOStreams) *cobra.Command {
	o := &EventsOptions{ChunkSize: 500, Streams: streams}
	cmd := &cobra.Command{
		Use:                   "events [(-o|--output=)json|yaml|name|go-template|go-template-file|template|templatefile|jsonpath|jsonpath-as-json|jsonpath-file] [--for TYPE/NAME] [--watch] [--types=Normal,Warning]",
		DisableFlagsInUseLine: true,
		Short:                 "List events",
		Long: `Display events.

 Prints a table of the most important information about events. You can request events for a namespace, for all namespace, or filtered to only those pertaining to a specified resource.`,
		Example: `  # List recent events in the demo namespace
  minikctl -n demo events

  # List recent events for the deployment
  minikctl -n demo events --for deployment/web

  # Watch warnings only
  minikctl events -A --types=Warning -w`,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, t := range o.FilterTypes {
				if !strings.EqualFold(t, "Normal") && !strings.EqualFold(t, "Warning") {
					return errors.New("valid --types are Normal or Warning")
				}
			}
			if len(args) > 0 {
				return usageErrorf(cmd, "unexpected args: %v", args)
			}
			return runEvents(cmd.Context(), f, o)
		},
	}
	o.PrintFlags.AddFlags(cmd)
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces. Namespace in current context is ignored even if specified with --namespace.")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "After listing the requested events, watch for more events.")
	cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", false, "When using the default output format, don't print headers.")
	cmd.Flags().StringVar(&o.ForObject, "for", "", "Filter events to only those pertaining to the specified resource.")
	cmd.Flags().StringSliceVar(&o.FilterTypes, "types", nil, "Output only events of given types.")
	cmd.Flags().Int64Var(&o.ChunkSize, "chunk-size", o.ChunkSize, "Return large lists in chunks rather than all at once. Pass 0 to disable. This flag is beta and may change in the future.")
	return cmd
}

func runEvents(ctx context.Context, f *Factory, o *EventsOptions) error {
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	namespace := ns
	if o.AllNamespaces {
		namespace = ""
	}
	opts := metav1.ListOptions{Limit: o.ChunkSize}
	if o.ForObject != "" {
		if !strings.Contains(o.ForObject, "/") {
			return errors.New("--for must be in resource/name form")
		}
		seg := strings.Split(o.ForObject, "/")
		if len(seg) != 2 {
			return errors.New("arguments in resource/name form may not have more than one slash")
		}
		mapper, err := f.ToRESTMapper()
		if err != nil {
			return err
		}
		full, gr := schema.ParseResourceArg(strings.ToLower(seg[0]))
		gvr := schema.GroupVersionResource{}
		if full != nil {
			gvr, _ = mapper.ResourceFor(*full)
		}
		if gvr.Empty() {
			if gvr, err = mapper.ResourceFor(gr.WithVersion("")); err != nil {
				return err
			}
		}
		gvk, err := mapper.KindFor(gvr)
		if err != nil {
			return err
		}
		opts.FieldSelector = fields.AndSelectors(
			fields.OneTermEqualSelector("involvedObject.kind", gvk.Kind),
			fields.OneTermEqualSelector("involvedObject.apiVersion", gvk.GroupVersion().String()),
			fields.OneTermEqualSelector("involvedObject.name", seg[1])).String()
	}
	types := sets.List(sets.New(o.FilterTypes...))
	keep := func(t string) bool {
		if len(types) == 0 {
			return true
		}
		for _, want := range types {
			if strings.EqualFold(want, t) {
				return true
			}
		}
		return false
	}
	cs, err := f.KubernetesClientSet()
	if err != nil {
		return err
	}
	var printer func(obj any, w io.Writer) error
	if o.PrintFlags.OutputFormat != "" {
		p, err := o.PrintFlags.ToPrinter()
		if err != nil {
			return err
		}
		printer = func(obj any, w io.Writer) error {
			switch t := obj.(type) {
			case *corev1.EventList:
				return p.PrintObj(t, w)
			case *corev1.Event:
				return p.PrintObj(t, w)
			}
			return nil
		}
	} else {
		ep := &eventPrinter{noHeaders: o.NoHeaders, allNamespaces: o.AllNamespaces}
		printer = ep.print
	}

	if o.Watch {
		wi, err := cs.CoreV1().Events(namespace).Watch(ctx, opts)
		if err != nil {
			return err
		}
		w := NewTabWriter(o.Streams.Out)
		_, err = watchtools.UntilWithoutRetry(ctx, wi, func(e watch.Event) (bool, error) {
			if e.Type == watch.Deleted {
				return false, nil
			}
			ev, ok := e.Object.(*corev1.Event)
			if !ok || !keep(ev.Type) {
				return false, nil
			}
			ev.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Event"})
			printer(ev, w)
			w.Flush()
			return false, nil
		})
		if ctx.Err() != nil {
			return nil
		}
		return err
	}

	list := &corev1.EventList{TypeMeta: metav1.TypeMeta{Kind: "EventList", APIVersion: "v1"}}
	for {
		page, err := cs.CoreV1().Events(namespace).List(ctx, opts)
		if err != nil {
			return enhanceListError(err, opts, "events")
		}
		for _, e := range page.Items {
			if !keep(e.Type) {
				continue
			}
			e.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Event"})
			list.Items = append(list.Items, e)
		}
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
	}
	if len(list.Items) == 0 {
		if o.AllNamespaces {
			fmt.Fprintln(o.Streams.ErrOut, "No events found.")
		} else {
			fmt.Fprintf(o.Streams.ErrOut, "No events found in %s namespace.\n", ns)
		}
		return nil
	}
	sort.SliceStable(list.Items, func(i, j int) bool { return eventTime(list.Items[i]).Before(eventTime(list.Items[j])) })
	w := NewTabWriter(o.Streams.Out)
	if err := printer(list, w); err != nil {
		return err
	}
	return w.Flush()
}

// eventTime is when an event was last seen.
func eventTime(e corev1.Event) time.Time {
	if e.Series != nil {
		return e.Series.LastObservedTime.Time
	}
	if !e.LastTimestamp.Time.IsZero() {
		return e.LastTimestamp.Time
	}
	return e.EventTime.Time
}

// eventPrinter prints kubectl events' table: LAST SEEN, TYPE, REASON,
// OBJECT, MESSAGE (NAMESPACE first with -A).
type eventPrinter struct {
	noHeaders, allNamespaces, headersPrinted bool
}

func (p *eventPrinter) print(obj any, w io.Writer) error {
	if !p.noHeaders && !p.headersPrinted {
		if p.allNamespaces {
			fmt.Fprintf(w, "NAMESPACE\t")
		}
		fmt.Fprintf(w, "LAST SEEN\tTYPE\tREASON\tOBJECT\tMESSAGE\n")
		p.headersPrinted = true
	}
	var events []corev1.Event
	switch t := obj.(type) {
	case *corev1.EventList:
		events = t.Items
	case *corev1.Event:
		events = []corev1.Event{*t}
	}
	for _, e := range events {
		first := translateMicroTimestampSince(e.EventTime)
		if e.EventTime.IsZero() {
			first = translateTimestampSince(e.FirstTimestamp)
		}
		interval := first
		switch {
		case e.Series != nil:
			interval = fmt.Sprintf("%s (x%d over %s)", translateMicroTimestampSince(e.Series.LastObservedTime), e.Series.Count, first)
		case e.Count > 1:
			interval = fmt.Sprintf("%s (x%d over %s)", translateTimestampSince(e.LastTimestamp), e.Count, first)
		}
		if p.allNamespaces {
			fmt.Fprintf(w, "%v\t", e.Namespace)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s/%s\t%v\n", interval, escapeTerminal(e.Type), escapeTerminal(e.Reason),
			escapeTerminal(e.InvolvedObject.Kind), escapeTerminal(e.InvolvedObject.Name), escapeTerminal(strings.TrimSpace(e.Message)))
	}
	return nil
}
