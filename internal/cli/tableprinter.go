package cli

import (
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"
)

// TableOptions decorate and filter the tables the TablePrinter prints.
type TableOptions struct {
	// NoHeaders omits the header line.
	NoHeaders bool
	// Wide shows the columns with priority > 0 (-o wide).
	Wide bool
	// WithNamespace adds a NAMESPACE column first (-A).
	WithNamespace bool
	// WithKind prefixes the name column with "kind.group/" (several types).
	WithKind bool
	// Kind is the kind named by WithKind.
	Kind schema.GroupKind
	// ShowLabels adds a LABELS column last.
	ShowLabels bool
	// ColumnLabels adds a column per label key (-L).
	ColumnLabels []string
}

// TablePrinter prints server-side tables (meta.k8s.io Table) as kubectl's
// human-readable output: it is cli-runtime's table printer (headers once
// for consecutive tables with the same columns, none for tables without
// rows, NAME and AGE for objects that are not tables, kubectl's
// decorations), writing through the TabWriter it is given (or one of its
// own, flushed after each object).
type TablePrinter struct {
	printer printers.ResourcePrinter
}

// NewTablePrinter returns a table printer with the given options.
func NewTablePrinter(options TableOptions) *TablePrinter {
	return &TablePrinter{printer: printers.NewTablePrinter(printers.PrintOptions{
		NoHeaders:     options.NoHeaders,
		Wide:          options.Wide,
		WithNamespace: options.WithNamespace,
		WithKind:      options.WithKind,
		Kind:          options.Kind,
		ShowLabels:    options.ShowLabels,
		ColumnLabels:  options.ColumnLabels,
	})}
}

// PrintObj prints a table, or an object or list as a NAME/AGE table.
func (p *TablePrinter) PrintObj(obj runtime.Object, output io.Writer) error {
	if tw, ok := output.(*TabWriter); ok {
		return p.printer.PrintObj(obj, tw.w)
	}
	return p.printer.PrintObj(obj, output)
}

// translateTimestampSince is the AGE of a creation timestamp.
func translateTimestampSince(ts metav1.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(ts.Time))
}

// Table versions a server may answer with.
var tableKinds = map[schema.GroupVersionKind]bool{
	metav1.SchemeGroupVersion.WithKind("Table"):                                     true,
	schema.GroupVersion{Group: "meta.k8s.io", Version: "v1beta1"}.WithKind("Table"): true,
}

// decodeObject decodes a server response: a Table (with each row's object
// decoded), or any other object or list as unstructured.
func decodeObject(data []byte) (runtime.Object, error) {
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || !tableKinds[u.GroupVersionKind()] {
		return obj, nil
	}
	return tableFromUnstructured(u)
}

// tableFromUnstructured converts a decoded Table, decoding row objects.
func tableFromUnstructured(u *unstructured.Unstructured) (*metav1.Table, error) {
	table := &metav1.Table{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, table); err != nil {
		return nil, err
	}
	for i := range table.Rows {
		row := &table.Rows[i]
		if row.Object.Raw == nil || row.Object.Object != nil {
			continue
		}
		converted, err := runtime.Decode(unstructured.UnstructuredJSONScheme, row.Object.Raw)
		if err != nil {
			return nil, err
		}
		row.Object.Object = converted
	}
	return table, nil
}
