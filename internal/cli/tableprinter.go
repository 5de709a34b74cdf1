package cli

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
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

// objectMetaColumns are the columns of objects the server did not send as
// a table.
var objectMetaColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name"},
	{Name: "Age", Type: "string"},
}

// TablePrinter prints server-side tables (meta.k8s.io Table) as kubectl's
// human-readable output. Headers are printed once for consecutive tables
// with the same columns, and not at all for tables without rows. Objects
// that are not tables print as NAME and AGE.
//
// Lines go through a TabWriter; when the writer given to PrintObj is not
// one, the printer wraps it and flushes after each object.
type TablePrinter struct {
	options        TableOptions
	lastColumns    []metav1.TableColumnDefinition
	printedHeaders bool
}

// NewTablePrinter returns a table printer with the given options.
func NewTablePrinter(options TableOptions) *TablePrinter {
	return &TablePrinter{options: options}
}

// PrintObj prints a table, or an object or list as a NAME/AGE table.
func (p *TablePrinter) PrintObj(obj runtime.Object, output io.Writer) error {
	if _, ok := output.(*TabWriter); !ok {
		w := NewTabWriter(output)
		output = w
		defer w.Flush()
	}
	table, ok := obj.(*metav1.Table)
	if !ok {
		var err error
		if table, err = objectMetaTable(obj); err != nil {
			return err
		}
	}
	options := p.options
	if p.printedHeaders && (len(table.ColumnDefinitions) == 0 || reflect.DeepEqual(table.ColumnDefinitions, p.lastColumns)) {
		options.NoHeaders = true
	}
	if len(table.ColumnDefinitions) == 0 {
		table.ColumnDefinitions = p.lastColumns
	} else if !reflect.DeepEqual(table.ColumnDefinitions, p.lastColumns) {
		p.lastColumns = table.ColumnDefinitions
		p.printedHeaders = false
	}
	if len(table.Rows) > 0 {
		p.printedHeaders = true
	}
	decorateTable(table, options)
	return printTable(table, output, options)
}

// objectMetaTable builds the NAME/AGE table of an object or list.
func objectMetaTable(obj runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{ColumnDefinitions: objectMetaColumns}
	var objs []runtime.Object
	if meta.IsListType(obj) {
		items, err := meta.ExtractList(obj)
		if err != nil {
			return nil, err
		}
		objs = items
	} else {
		objs = []runtime.Object{obj}
	}
	for _, o := range objs {
		m, err := meta.Accessor(o)
		if err != nil {
			return nil, err
		}
		table.Rows = append(table.Rows, metav1.TableRow{
			Cells:  []any{m.GetName(), translateTimestampSince(m.GetCreationTimestamp())},
			Object: runtime.RawExtension{Object: o},
		})
	}
	return table, nil
}

// translateTimestampSince is the AGE of a creation timestamp.
func translateTimestampSince(ts metav1.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(ts.Time))
}

// decorateTable adds the NAMESPACE, label and LABELS columns and the kind
// prefix of names, from each row's object metadata.
func decorateTable(table *metav1.Table, options TableOptions) {
	width := len(table.ColumnDefinitions) + len(options.ColumnLabels)
	if options.WithNamespace {
		width++
	}
	if options.ShowLabels {
		width++
	}
	columns := table.ColumnDefinitions
	nameColumn := -1
	if options.WithKind && !options.Kind.Empty() {
		for i := range columns {
			if columns[i].Format == "name" && columns[i].Type == "string" {
				nameColumn = i
				break
			}
		}
	}
	if width != len(table.ColumnDefinitions) {
		columns = make([]metav1.TableColumnDefinition, 0, width)
		if options.WithNamespace {
			columns = append(columns, metav1.TableColumnDefinition{Name: "Namespace", Type: "string"})
		}
		columns = append(columns, table.ColumnDefinitions...)
		for _, label := range formatLabelHeaders(options.ColumnLabels) {
			columns = append(columns, metav1.TableColumnDefinition{Name: label, Type: "string"})
		}
		if options.ShowLabels {
			columns = append(columns, metav1.TableColumnDefinition{Name: "Labels", Type: "string"})
		}
	}
	includeLabels := len(options.ColumnLabels) > 0 || options.ShowLabels
	if includeLabels || options.WithNamespace || nameColumn != -1 {
		for i := range table.Rows {
			row := table.Rows[i]
			if nameColumn != -1 && nameColumn < len(row.Cells) {
				row.Cells[nameColumn] = fmt.Sprintf("%s/%s", strings.ToLower(options.Kind.String()), row.Cells[nameColumn])
			}
			var m metav1.Object
			if obj := row.Object.Object; obj != nil {
				if acc, err := meta.Accessor(obj); err == nil {
					m = acc
				}
			}
			if m == nil {
				if options.WithNamespace {
					row.Cells = append([]any{nil}, row.Cells...)
				}
				for len(row.Cells) < width {
					row.Cells = append(row.Cells, nil)
				}
				table.Rows[i] = row
				continue
			}
			if options.WithNamespace {
				row.Cells = append([]any{m.GetNamespace()}, row.Cells...)
			}
			if includeLabels {
				for _, key := range options.ColumnLabels {
					row.Cells = append(row.Cells, m.GetLabels()[key])
				}
				if options.ShowLabels {
					row.Cells = append(row.Cells, labels.FormatLabels(m.GetLabels()))
				}
			}
			table.Rows[i] = row
		}
	}
	table.ColumnDefinitions = columns
}

func formatLabelHeaders(columnLabels []string) []string {
	heads := make([]string, len(columnLabels))
	for i, l := range columnLabels {
		p := strings.Split(l, "/")
		heads[i] = strings.ToUpper(p[len(p)-1])
	}
	return heads
}

// printTable writes the header (unless disabled or there are no rows) and
// the rows, skipping priority columns unless wide.
func printTable(table *metav1.Table, output io.Writer, options TableOptions) error {
	var sb strings.Builder
	if !options.NoHeaders {
		if len(table.Rows) == 0 {
			return nil
		}
		first := true
		for _, column := range table.ColumnDefinitions {
			if !options.Wide && column.Priority != 0 {
				continue
			}
			if !first {
				sb.WriteByte('\t')
			}
			first = false
			sb.WriteString(strings.ToUpper(column.Name))
		}
		sb.WriteByte('\n')
	}
	for _, row := range table.Rows {
		first := true
		for i, cell := range row.Cells {
			if i >= len(table.ColumnDefinitions) {
				break
			}
			if !options.Wide && table.ColumnDefinitions[i].Priority != 0 {
				continue
			}
			if !first {
				sb.WriteByte('\t')
			}
			first = false
			if cell != nil {
				sb.WriteString(formatCell(cell))
			}
		}
		sb.WriteByte('\n')
	}
	_, err := io.WriteString(output, sb.String())
	return err
}

// formatCell renders a cell: strings are cut at the first line break
// (with "..."), other values print with fmt.
func formatCell(cell any) string {
	s, ok := cell.(string)
	if !ok {
		return escapeTerminal(fmt.Sprint(cell))
	}
	if i := strings.IndexAny(s, "\f\n\r"); i >= 0 {
		return escapeTerminal(s[:i]) + "..."
	}
	return escapeTerminal(s)
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
