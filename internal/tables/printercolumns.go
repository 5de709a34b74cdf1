package tables

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"
)

// PrinterColumns is kube-apiextensions-apiserver's table of a custom
// resource with these additionalPrinterColumns: Name, then each column
// read with its JSONPath (the first value found; nil when there is none)
// and typed as declared, a "date" becoming an age. It accepts typed
// objects too, read as their JSON form. It fails on
// a JSONPath that does not parse, with kube's message.
func PrinterColumns(cols []apiextensionsv1.CustomResourceColumnDefinition) (Table, error) {
	t := Table{columns: []metav1.TableColumnDefinition{nameColumn()}}
	paths := make([]*jsonpath.JSONPath, 0, len(cols))
	for _, c := range cols {
		p := jsonpath.New(c.Name)
		if err := p.Parse(fmt.Sprintf("{%s}", c.JSONPath)); err != nil {
			return Table{}, fmt.Errorf("unrecognized column definition %q", c.JSONPath)
		}
		p.AllowMissingKeys(true)
		desc := fmt.Sprintf("Custom resource definition column (in JSONPath format): %s", c.JSONPath)
		if c.Description != "" {
			desc = c.Description
		}
		paths = append(paths, p)
		t.columns = append(t.columns, metav1.TableColumnDefinition{Name: c.Name, Type: c.Type, Format: c.Format, Description: desc, Priority: c.Priority})
	}
	t.row = func(obj runtime.Object, now time.Time) ([]interface{}, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("print %T as a table: %w", obj, err)
		}
		var content map[string]interface{}
		if u, ok := obj.(runtime.Unstructured); ok {
			content = u.UnstructuredContent()
		} else if content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, fmt.Errorf("print %s as a table: %w", m.GetName(), err)
		}
		cells := make([]interface{}, 1, 1+len(paths))
		cells[0] = m.GetName()
		var buf bytes.Buffer
		for i, p := range paths {
			results, err := p.FindResults(content)
			if err != nil || len(results) == 0 || len(results[0]) == 0 {
				cells = append(cells, nil)
				continue
			}
			value := results[0][0].Interface()
			if cols[i].Type != "string" {
				cells = append(cells, cellForJSONValue(cols[i].Type, value, now))
				continue
			}
			if err := p.PrintResults(&buf, []reflect.Value{reflect.ValueOf(value)}); err != nil {
				cells = append(cells, nil)
				continue
			}
			cells = append(cells, buf.String())
			buf.Reset()
		}
		return cells, nil
	}
	return t, nil
}

// cellForJSONValue types a printer column's value as kube's custom
// resource table convertor does: nil when it is not of the column's type;
// a date is an age ("<invalid>" when it does not parse).
func cellForJSONValue(typ string, value interface{}, now time.Time) interface{} {
	if value == nil {
		return nil
	}
	switch typ {
	case "integer":
		switch v := value.(type) {
		case int64:
			return v
		case float64:
			return int64(v)
		case json.Number:
			if i, err := v.Int64(); err == nil {
				return i
			}
		}
	case "number":
		switch v := value.(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		case json.Number:
			if f, err := v.Float64(); err == nil {
				return f
			}
		}
	case "boolean":
		if b, ok := value.(bool); ok {
			return b
		}
	case "string":
		if s, ok := value.(string); ok {
			return s
		}
	case "date":
		if s, ok := value.(string); ok {
			var ts metav1.Time
			if err := ts.UnmarshalQueryParameter(s); err != nil {
				return "<invalid>"
			}
			return age(ts, now)
		}
	}
	return nil
}
