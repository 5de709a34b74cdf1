package cli

import (
	"bufio"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"
)

var jsonRegexp = regexp.MustCompile(`^\{\.?([^{}]+)\}$|^\.?([^{}]+)$`)

// RelaxedJSONPathExpression accepts "name1.name2", ".name1.name2",
// "{name1.name2}" and "{.name1.name2}", and returns "{.name1.name2}".
func RelaxedJSONPathExpression(pathExpression string) (string, error) {
	if pathExpression == "" {
		return pathExpression, nil
	}
	submatches := jsonRegexp.FindStringSubmatch(pathExpression)
	if submatches == nil {
		return "", fmt.Errorf("unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'")
	}
	fieldSpec := submatches[1]
	if fieldSpec == "" {
		fieldSpec = submatches[2]
	}
	return fmt.Sprintf("{.%s}", fieldSpec), nil
}

// Column is one custom column: its header and its JSONPath.
type Column struct {
	Header    string
	FieldSpec string
}

// CustomColumnsPrinter prints one row per object, one column per JSONPath.
type CustomColumnsPrinter struct {
	Columns   []Column
	NoHeaders bool

	printedHeaders bool
}

// NewCustomColumnsPrinterFromSpec parses "HEADER:PATH,HEADER:PATH".
func NewCustomColumnsPrinterFromSpec(spec string, noHeaders bool) (*CustomColumnsPrinter, error) {
	if spec == "" {
		return nil, fmt.Errorf("custom-columns format specified but no custom columns given")
	}
	parts := strings.Split(spec, ",")
	columns := make([]Column, len(parts))
	for i, part := range parts {
		colSpec := strings.SplitN(part, ":", 2)
		if len(colSpec) != 2 {
			return nil, fmt.Errorf("unexpected custom-columns spec: %s, expected <header>:<json-path-expr>", part)
		}
		path, err := RelaxedJSONPathExpression(colSpec[1])
		if err != nil {
			return nil, err
		}
		columns[i] = Column{Header: colSpec[0], FieldSpec: path}
	}
	return &CustomColumnsPrinter{Columns: columns, NoHeaders: noHeaders}, nil
}

// NewCustomColumnsPrinterFromTemplate parses a custom-columns file: a line
// of headers and a line of JSONPaths, separated by whitespace.
func NewCustomColumnsPrinterFromTemplate(tmpl string, noHeaders bool) (*CustomColumnsPrinter, error) {
	scanner := bufio.NewScanner(strings.NewReader(tmpl))
	if !scanner.Scan() {
		return nil, fmt.Errorf("invalid template, missing header line. Expected format is one line of space separated headers, one line of space separated column specs.")
	}
	headers := splitOnWhitespace(scanner.Text())
	if !scanner.Scan() {
		return nil, fmt.Errorf("invalid template, missing spec line. Expected format is one line of space separated headers, one line of space separated column specs.")
	}
	specs := splitOnWhitespace(scanner.Text())
	if len(headers) != len(specs) {
		return nil, fmt.Errorf("number of headers (%d) and field specifications (%d) don't match", len(headers), len(specs))
	}
	columns := make([]Column, len(headers))
	for i := range headers {
		path, err := RelaxedJSONPathExpression(specs[i])
		if err != nil {
			return nil, err
		}
		columns[i] = Column{Header: headers[i], FieldSpec: path}
	}
	return &CustomColumnsPrinter{Columns: columns, NoHeaders: noHeaders}, nil
}

func splitOnWhitespace(line string) []string {
	return strings.Fields(line)
}

// PrintObj prints the headers (once) and a row per object or list item.
func (p *CustomColumnsPrinter) PrintObj(obj runtime.Object, out io.Writer) error {
	if _, ok := out.(*TabWriter); !ok {
		w := NewTabWriter(out)
		out = w
		defer w.Flush()
	}
	if !p.NoHeaders && !p.printedHeaders {
		headers := make([]string, len(p.Columns))
		for i := range p.Columns {
			headers[i] = p.Columns[i].Header
		}
		fmt.Fprintln(out, strings.Join(headers, "\t"))
		p.printedHeaders = true
	}
	parsers := make([]*jsonpath.JSONPath, len(p.Columns))
	for i := range p.Columns {
		parsers[i] = jsonpath.New(fmt.Sprintf("column%d", i)).AllowMissingKeys(true)
		if err := parsers[i].Parse(p.Columns[i].FieldSpec); err != nil {
			return err
		}
	}
	if meta.IsListType(obj) {
		items, err := meta.ExtractList(obj)
		if err != nil {
			return err
		}
		for _, item := range items {
			if err := p.printOne(item, parsers, out); err != nil {
				return err
			}
		}
		return nil
	}
	return p.printOne(obj, parsers, out)
}

func (p *CustomColumnsPrinter) printOne(obj runtime.Object, parsers []*jsonpath.JSONPath, out io.Writer) error {
	columns := make([]string, len(parsers))
	for i, parser := range parsers {
		var values [][]reflect.Value
		var err error
		if u, ok := obj.(runtime.Unstructured); ok {
			values, err = parser.FindResults(u.UnstructuredContent())
		} else {
			values, err = parser.FindResults(reflect.ValueOf(obj).Elem().Interface())
		}
		if err != nil {
			return err
		}
		var strs []string
		if len(values) == 0 || len(values[0]) == 0 {
			strs = append(strs, "<none>")
		}
		for _, arr := range values {
			for _, v := range arr {
				strs = append(strs, escapeTerminal(fmt.Sprint(v)))
			}
		}
		columns[i] = strings.Join(strs, ",")
	}
	_, err := fmt.Fprintln(out, strings.Join(columns, "\t"))
	return err
}

// escapeTerminal makes control characters visible, as kubectl does, so a
// value cannot drive the terminal.
func escapeTerminal(s string) string {
	if !strings.ContainsRune(s, '\x1b') && !strings.ContainsRune(s, '\r') {
		return s
	}
	return strings.NewReplacer("\x1b", "^[", "\r", "\\r").Replace(s)
}
