package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/yaml"
)

// ResourcePrinter prints objects: single objects, lists and (for the table
// printer) server-side tables.
type ResourcePrinter interface {
	PrintObj(obj runtime.Object, w io.Writer) error
}

// NamePrinter prints "kind.group/name", followed by the operation when one
// is set ("deployment.apps/web created").
type NamePrinter struct {
	// ShortOutput prints the name only.
	ShortOutput bool
	// Operation is the past-tense verb to print after the name.
	Operation string
}

// PrintObj prints the object's name, or every item's for a list.
func (p *NamePrinter) PrintObj(obj runtime.Object, w io.Writer) error {
	if meta.IsListType(obj) {
		if _, ok := obj.(*unstructured.UnstructuredList); !ok {
			return fmt.Errorf("list types are not supported by name printing: %T", obj)
		}
		items, err := meta.ExtractList(obj)
		if err != nil {
			return err
		}
		for _, item := range items {
			if err := p.PrintObj(item, w); err != nil {
				return err
			}
		}
		return nil
	}
	name := "<unknown>"
	if acc, err := meta.Accessor(obj); err == nil {
		if n := acc.GetName(); n != "" {
			name = n
		}
	}
	gk := obj.GetObjectKind().GroupVersionKind().GroupKind()
	return printName(w, name, p.Operation, p.ShortOutput, gk)
}

func printName(w io.Writer, name, operation string, short bool, gk schema.GroupKind) error {
	if gk.Kind == "" {
		return fmt.Errorf("missing kind for resource with name %v", name)
	}
	resource := strings.ToLower(gk.Kind)
	if gk.Group != "" {
		resource += "." + gk.Group
	}
	var err error
	if short || operation == "" {
		_, err = fmt.Fprintf(w, "%s/%s\n", resource, name)
	} else {
		_, err = fmt.Fprintf(w, "%s/%s %s\n", resource, name, operation)
	}
	return err
}

// JSONPrinter prints objects as JSON indented by four spaces.
type JSONPrinter struct{}

// PrintObj prints obj as JSON.
func (p *JSONPrinter) PrintObj(obj runtime.Object, w io.Writer) error {
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		return fmt.Errorf("missing apiVersion or kind; try GetObjectKind().SetGroupVersionKind() if you know the type")
	}
	data, err := json.MarshalIndent(obj, "", "    ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	_, err = w.Write(data)
	return err
}

// YAMLPrinter prints objects as YAML, separated by "---" after the first.
type YAMLPrinter struct {
	printCount int
}

// PrintObj prints obj as YAML.
func (p *YAMLPrinter) PrintObj(obj runtime.Object, w io.Writer) error {
	p.printCount++
	if p.printCount > 1 {
		if _, err := w.Write([]byte("---\n")); err != nil {
			return err
		}
	}
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		return fmt.Errorf("missing apiVersion or kind; try GetObjectKind().SetGroupVersionKind() if you know the type")
	}
	data, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// JSONPathPrinter prints the result of a JSONPath template over an object.
type JSONPathPrinter struct {
	rawTemplate string
	*jsonpath.JSONPath
}

// NewJSONPathPrinter parses tmpl; asJSON prints results as JSON; missing
// keys print nothing when allowMissingKeys.
func NewJSONPathPrinter(tmpl string, asJSON, allowMissingKeys bool) (*JSONPathPrinter, error) {
	j := jsonpath.New("out")
	if err := j.Parse(tmpl); err != nil {
		return nil, err
	}
	j.AllowMissingKeys(allowMissingKeys)
	j.EnableJSONOutput(asJSON)
	return &JSONPathPrinter{rawTemplate: tmpl, JSONPath: j}, nil
}

// PrintObj executes the template over obj.
func (p *JSONPathPrinter) PrintObj(obj runtime.Object, w io.Writer) error {
	var query any
	if u, ok := obj.(runtime.Unstructured); ok {
		query = u.UnstructuredContent()
	} else {
		data, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		m := map[string]any{}
		if err := json.Unmarshal(data, &m); err != nil {
			return err
		}
		query = m
	}
	if err := p.JSONPath.Execute(w, query); err != nil {
		buf := bytes.NewBuffer(nil)
		fmt.Fprintf(buf, "Error executing template: %v. Printing more information for debugging the template:\n", err)
		fmt.Fprintf(buf, "\ttemplate was:\n\t\t%v\n", p.rawTemplate)
		fmt.Fprintf(buf, "\tobject given to jsonpath engine was:\n\t\t%#v\n\n", query)
		return fmt.Errorf("error executing jsonpath %q: %v\n", p.rawTemplate, buf.String())
	}
	return nil
}

// GoTemplatePrinter prints the result of a Go template over an object, as
// kubectl's -o go-template: the template sees the object as the JSON-like
// map its JSON decodes to (integers stay integers), a list as the List with
// its items, and has kubectl's extra functions, exists and base64decode.
type GoTemplatePrinter struct {
	rawTemplate string
	template    *template.Template
}

// NewGoTemplatePrinter parses tmpl; a missing map key prints "<no value>"
// when allowMissingKeys, and fails the template otherwise.
func NewGoTemplatePrinter(tmpl string, allowMissingKeys bool) (*GoTemplatePrinter, error) {
	t, err := template.New("output").Funcs(template.FuncMap{
		"exists":       templateExists,
		"base64decode": templateBase64Decode,
	}).Parse(tmpl)
	if err != nil {
		return nil, err
	}
	if allowMissingKeys {
		t.Option("missingkey=default")
	} else {
		t.Option("missingkey=error")
	}
	return &GoTemplatePrinter{rawTemplate: tmpl, template: t}, nil
}

// PrintObj executes the template over obj. When it fails, what it printed
// so far is followed on w by what kubectl prints to debug the template (the
// template, the object's JSON and the map given to the template), and the
// error names the template.
func (p *GoTemplatePrinter) PrintObj(obj runtime.Object, w io.Writer) error {
	data, err := utiljson.Marshal(obj)
	if err != nil {
		return err
	}
	in := map[string]any{}
	if err := utiljson.Unmarshal(data, &in); err != nil {
		return err
	}
	if err := p.execute(w, in); err != nil {
		fmt.Fprintf(w, "Error executing template: %v. Printing more information for debugging the template:\n", err)
		fmt.Fprintf(w, "\ttemplate was:\n\t\t%v\n", p.rawTemplate)
		fmt.Fprintf(w, "\traw data was:\n\t\t%v\n", string(data))
		fmt.Fprintf(w, "\tobject given to template engine was:\n\t\t%+v\n\n", in)
		return fmt.Errorf("error executing template %q: %v", p.rawTemplate, err)
	}
	return nil
}

// execute runs the template, turning a panic of the template engine into
// an error.
func (p *GoTemplatePrinter) execute(w io.Writer, data any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("caught panic: %+v", r)
		}
	}()
	return p.template.Execute(w, data)
}

// templateBase64Decode is the base64decode template function: the string
// whose standard base64 encoding v is ({{.data.token | base64decode}}).
func templateBase64Decode(v string) (string, error) {
	data, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return "", fmt.Errorf("base64 decode failed: %v", err)
	}
	return string(data), nil
}

// templateExists is the exists template function: whether item has a
// non-nil value at the path of indices, each a map key or a slice (or
// string) index, as the index function would walk it — without failing
// where index would.
func templateExists(item any, indices ...any) bool {
	v := reflect.ValueOf(item)
	for _, i := range indices {
		var isNil bool
		if v, isNil = templateIndirect(v); isNil {
			return false
		}
		key := reflect.ValueOf(i)
		switch v.Kind() {
		case reflect.Array, reflect.Slice, reflect.String:
			var n int64
			switch {
			case key.CanInt():
				n = key.Int()
			case key.CanUint() && key.Uint() <= math.MaxInt64:
				n = int64(key.Uint())
			default:
				return false
			}
			if n < 0 || n >= int64(v.Len()) {
				return false
			}
			v = v.Index(int(n))
		case reflect.Map:
			if !key.IsValid() {
				key = reflect.Zero(v.Type().Key())
			}
			if !key.Type().AssignableTo(v.Type().Key()) {
				return false
			}
			found := v.MapIndex(key)
			if !found.IsValid() {
				return false
			}
			v = found
		default:
			return false
		}
	}
	_, isNil := templateIndirect(v)
	return !isNil
}

// templateIndirect follows pointers and empty interfaces (as text/template
// does) and reports whether it reached nil. Like kubectl's, it takes the
// invalid value (an untyped nil) for a value.
func templateIndirect(v reflect.Value) (reflect.Value, bool) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return v, true
		}
		if v.Kind() == reflect.Interface && v.NumMethod() > 0 {
			break
		}
		v = v.Elem()
	}
	return v, false
}

// omitManagedFieldsPrinter hides metadata.managedFields, as kubectl does
// unless --show-managed-fields.
type omitManagedFieldsPrinter struct {
	delegate ResourcePrinter
}

// PrintObj prints a copy of obj without managed fields.
func (p *omitManagedFieldsPrinter) PrintObj(obj runtime.Object, w io.Writer) error {
	switch t := obj.(type) {
	case *unstructured.Unstructured:
		m, _ := t.Object["metadata"].(map[string]any)
		if _, ok := m["managedFields"]; ok {
			t = t.DeepCopy()
			t.SetManagedFields(nil)
			obj = t
		}
	case *unstructured.UnstructuredList:
		t = t.DeepCopy()
		for i := range t.Items {
			t.Items[i].SetManagedFields(nil)
		}
		obj = t
	case metav1.Object:
		if len(t.GetManagedFields()) > 0 {
			c := obj.DeepCopyObject()
			c.(metav1.Object).SetManagedFields(nil)
			obj = c
		}
	}
	return p.delegate.PrintObj(obj, w)
}

func readFileArg(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return string(data), nil
}
