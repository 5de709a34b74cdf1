package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var deploymentColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name"},
	{Name: "Ready", Type: "string"},
	{Name: "Up-to-date", Type: "integer"},
	{Name: "Available", Type: "integer"},
	{Name: "Age", Type: "string"},
	{Name: "Containers", Type: "string", Priority: 1},
	{Name: "Images", Type: "string", Priority: 1},
	{Name: "Selector", Type: "string", Priority: 1},
}

// partial is a row's object as the server sends it by default.
func partial(namespace, name string, labels map[string]string) runtime.RawExtension {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("meta.k8s.io/v1")
	u.SetKind("PartialObjectMetadata")
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetLabels(labels)
	return runtime.RawExtension{Object: u}
}

func deploymentTable() *metav1.Table {
	return &metav1.Table{
		ColumnDefinitions: deploymentColumns,
		Rows: []metav1.TableRow{
			{Cells: []any{"web", "3/3", int64(3), int64(3), "5m", "nginx", "nginx:1.27", "app=web"}, Object: partial("demo", "web", map[string]string{"app": "web", "tier": "front"})},
			{Cells: []any{"api-server", "0/1", int64(1), int64(0), "12s", "api", "example/api:v2", "app=api"}, Object: partial("demo", "api-server", nil)},
		},
	}
}

var serviceTable = func() *metav1.Table {
	return &metav1.Table{
		ColumnDefinitions: []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name"},
			{Name: "Type", Type: "string"},
			{Name: "Cluster-IP", Type: "string"},
			{Name: "External-IP", Type: "string"},
			{Name: "Port(s)", Type: "string"},
			{Name: "Age", Type: "string"},
			{Name: "Selector", Type: "string", Priority: 1},
		},
		Rows: []metav1.TableRow{
			{Cells: []any{"web", "ClusterIP", "10.96.0.10", "<none>", "80/TCP", "5m", "app=web"}, Object: partial("demo", "web", map[string]string{"app": "web"})},
		},
	}
}

func TestTablePrinter(t *testing.T) {
	tests := []struct {
		name    string
		options TableOptions
		tables  []*metav1.Table
		want    string
	}{
		{name: "columns are upper-case, three spaces apart, without priority columns",
			tables: []*metav1.Table{deploymentTable()},
			want: "NAME         READY   UP-TO-DATE   AVAILABLE   AGE\n" +
				"web          3/3     3            3           5m\n" +
				"api-server   0/1     1            0           12s\n"},
		{name: "wide output adds the priority columns",
			options: TableOptions{Wide: true},
			tables:  []*metav1.Table{deploymentTable()},
			want: "NAME         READY   UP-TO-DATE   AVAILABLE   AGE   CONTAINERS   IMAGES           SELECTOR\n" +
				"web          3/3     3            3           5m    nginx        nginx:1.27       app=web\n" +
				"api-server   0/1     1            0           12s   api          example/api:v2   app=api\n"},
		{name: "all namespaces adds NAMESPACE, show-labels adds LABELS, several types prefix the kind",
			options: TableOptions{WithNamespace: true, ShowLabels: true, WithKind: true, Kind: schema.GroupKind{Group: "apps", Kind: "Deployment"}},
			tables:  []*metav1.Table{deploymentTable()},
			want: "NAMESPACE   NAME                         READY   UP-TO-DATE   AVAILABLE   AGE   LABELS\n" +
				"demo        deployment.apps/web          3/3     3            3           5m    app=web,tier=front\n" +
				"demo        deployment.apps/api-server   0/1     1            0           12s   <none>\n"},
		{name: "core kinds have no group in the prefix",
			options: TableOptions{WithKind: true, Kind: schema.GroupKind{Kind: "Service"}},
			tables:  []*metav1.Table{serviceTable()},
			want: "NAME          TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)   AGE\n" +
				"service/web   ClusterIP   10.96.0.10   <none>        80/TCP    5m\n"},
		{name: "label columns show the values of the given keys",
			options: TableOptions{ColumnLabels: []string{"app", "example.com/tier"}},
			tables:  []*metav1.Table{serviceTable()},
			want: "NAME   TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)   AGE   APP   TIER\n" +
				"web    ClusterIP   10.96.0.10   <none>        80/TCP    5m    web   \n"},
		{name: "no headers prints the rows only",
			options: TableOptions{NoHeaders: true},
			tables:  []*metav1.Table{serviceTable()},
			want:    "web   ClusterIP   10.96.0.10   <none>   80/TCP   5m\n"},
		{name: "a table without rows prints nothing",
			tables: []*metav1.Table{{ColumnDefinitions: deploymentColumns}},
			want:   ""},
		{name: "tables with the same columns share one header and one alignment",
			tables: []*metav1.Table{
				{ColumnDefinitions: serviceTable().ColumnDefinitions, Rows: serviceTable().Rows},
				{ColumnDefinitions: serviceTable().ColumnDefinitions, Rows: []metav1.TableRow{{Cells: []any{"a-much-longer-name", "NodePort", "10.96.0.11", "<none>", "80:30080/TCP", "1s", ""}}}},
			},
			want: "NAME                 TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)        AGE\n" +
				"web                  ClusterIP   10.96.0.10   <none>        80/TCP         5m\n" +
				"a-much-longer-name   NodePort    10.96.0.11   <none>        80:30080/TCP   1s\n"},
		{name: "a table without columns (a watch event) reuses the last columns",
			tables: []*metav1.Table{serviceTable(), {Rows: []metav1.TableRow{{Cells: []any{"web", "ClusterIP", "10.96.0.10", "<none>", "80/TCP", "6m", ""}}}}},
			want: "NAME   TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)   AGE\n" +
				"web    ClusterIP   10.96.0.10   <none>        80/TCP    5m\n" +
				"web    ClusterIP   10.96.0.10   <none>        80/TCP    6m\n"},
		{name: "cells stop at a line break, nil cells are empty",
			tables: []*metav1.Table{{
				ColumnDefinitions: []metav1.TableColumnDefinition{{Name: "Name", Format: "name", Type: "string"}, {Name: "Message", Type: "string"}, {Name: "Extra", Type: "string"}},
				Rows:              []metav1.TableRow{{Cells: []any{"x", "first line\nsecond line", nil}}},
			}},
			// kubectl v1.37's table printer (cli-runtime) pads the
			// header to the whole cell's length before cutting it.
			want: "NAME   MESSAGE                  EXTRA\n" +
				"x      first line...            \n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			w := NewTabWriter(&out)
			p := NewTablePrinter(tt.options)
			for _, table := range tt.tables {
				if err := p.PrintObj(table, w); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s\n(quoted: %q)", out.String(), tt.want, out.String())
			}
		})
	}
}

func TestTablePrinterPrintsObjectsAsNameAndAge(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Widget")
	u.SetName("w")
	u.SetCreationTimestamp(metav1.NewTime(time.Now().Add(-90 * time.Second)))
	var out bytes.Buffer
	if err := NewTablePrinter(TableOptions{}).PrintObj(u, &out); err != nil {
		t.Fatal(err)
	}
	if want := "NAME   AGE\nw      90s\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestDecodeObjectDecodesServerTables(t *testing.T) {
	data := []byte(`{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"9"},
	"columnDefinitions":[{"name":"Name","type":"string","format":"name","description":"","priority":0},{"name":"Replicas","type":"integer","format":"","description":"","priority":0}],
	"rows":[{"cells":["web",1000000],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"web","namespace":"demo","labels":{"app":"web"}}}}]}`)
	obj, err := decodeObject(data)
	if err != nil {
		t.Fatal(err)
	}
	table, ok := obj.(*metav1.Table)
	if !ok {
		t.Fatalf("decoded %T, want a table", obj)
	}
	var out bytes.Buffer
	p := NewTablePrinter(TableOptions{WithNamespace: true, ShowLabels: true})
	if err := p.PrintObj(table, &out); err != nil {
		t.Fatal(err)
	}
	// Integers print as integers, not as float64's 1e+06.
	want := "NAMESPACE   NAME   REPLICAS   LABELS\ndemo        web    1000000    app=web\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func configMap(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetName(name)
	u.SetNamespace("demo")
	u.Object["data"] = map[string]any{"key": name + "-value"}
	return u
}

func TestNamePrinter(t *testing.T) {
	deploy := &unstructured.Unstructured{}
	deploy.SetAPIVersion("apps/v1")
	deploy.SetKind("Deployment")
	deploy.SetName("web")
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	list.Items = []unstructured.Unstructured{*configMap("a"), *deploy}
	tests := []struct {
		name  string
		flags PrintFlags
		obj   runtime.Object
		want  string
	}{
		{"apply prints the operation", PrintFlags{Operation: "created"}, deploy, "deployment.apps/web created\n"},
		{"a client dry run says so", PrintFlags{Operation: "configured", DryRun: DryRunClient}, deploy, "deployment.apps/web configured (dry run)\n"},
		{"a server dry run says so", PrintFlags{Operation: "unchanged", DryRun: DryRunServer}, configMap("a"), "configmap/a unchanged (server dry run)\n"},
		{"-o name prints the name only", PrintFlags{OutputFormat: "name", Operation: "created"}, deploy, "deployment.apps/web\n"},
		{"a list prints each item", PrintFlags{OutputFormat: "name"}, list, "configmap/a\ndeployment.apps/web\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.flags.ToPrinter()
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := p.PrintObj(tt.obj, &out); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got %q, want %q", out.String(), tt.want)
			}
		})
	}
}

func TestYAMLAndJSONPrinters(t *testing.T) {
	cm := configMap("a")
	cm.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate}})

	p, err := (&PrintFlags{OutputFormat: "yaml"}).ToPrinter()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := p.PrintObj(cm, &out); err != nil {
		t.Fatal(err)
	}
	if err := p.PrintObj(configMap("b"), &out); err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: v1
data:
  key: a-value
kind: ConfigMap
metadata:
  name: a
  namespace: demo
---
apiVersion: v1
data:
  key: b-value
kind: ConfigMap
metadata:
  name: b
  namespace: demo
`
	if out.String() != want {
		t.Errorf("yaml: got\n%s\nwant\n%s", out.String(), want)
	}
	if len(cm.GetManagedFields()) != 1 {
		t.Errorf("printing changed the object's managed fields")
	}

	p, err = (&PrintFlags{OutputFormat: "json"}).ToPrinter()
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := p.PrintObj(cm, &out); err != nil {
		t.Fatal(err)
	}
	want = `{
    "apiVersion": "v1",
    "data": {
        "key": "a-value"
    },
    "kind": "ConfigMap",
    "metadata": {
        "name": "a",
        "namespace": "demo"
    }
}
`
	if out.String() != want {
		t.Errorf("json: got\n%s\nwant\n%s", out.String(), want)
	}

	p, err = (&PrintFlags{OutputFormat: "yaml", ShowManagedFields: true}).ToPrinter()
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := p.PrintObj(cm, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "managedFields:") {
		t.Errorf("--show-managed-fields: managedFields missing from\n%s", out.String())
	}
}

func TestJSONPathAndCustomColumnsPrinters(t *testing.T) {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	a, b := configMap("a"), configMap("b")
	b.SetLabels(map[string]string{"app": "web"})
	b.Object["ports"] = []any{map[string]any{"port": int64(80)}, map[string]any{"port": int64(443)}}
	list.Items = []unstructured.Unstructured{*a, *b}

	tests := []struct {
		name  string
		flags PrintFlags
		want  string
	}{
		{"jsonpath prints the template", PrintFlags{OutputFormat: "jsonpath={.items[*].metadata.name}"}, "a b"},
		{"jsonpath takes --template", PrintFlags{OutputFormat: "jsonpath", Template: `{range .items[*]}{.metadata.name}{"\n"}{end}`}, "a\nb\n"},
		{"custom columns print missing values as <none>", PrintFlags{HumanReadable: true, OutputFormat: "custom-columns=NAME:.metadata.name,APP:.metadata.labels.app,PORTS:{.ports[*].port}"},
			"NAME   APP      PORTS\na      <none>   <none>\nb      web      80,443\n"},
		{"custom columns without headers", PrintFlags{HumanReadable: true, NoHeaders: true, OutputFormat: "custom-columns=NAME:metadata.name"}, "a\nb\n"},
		{"go-template runs over the list", PrintFlags{OutputFormat: `go-template={{.kind}}:{{range .items}} {{.metadata.name}}{{end}}`}, "List: a b"},
		{"template is go-template", PrintFlags{OutputFormat: `template={{len .items}}`}, "2"},
		{"--template without -o is a go-template", PrintFlags{HumanReadable: true, Template: `{{range .items}}{{.metadata.name}}{{end}}`}, "ab"},
		{"-o go-template takes --template", PrintFlags{OutputFormat: "go-template", Template: `{{(index .items 1).metadata.labels.app}}`}, "web"},
		{"integers stay integers", PrintFlags{OutputFormat: `go-template={{range .items}}{{range .ports}}{{printf "%T " .port}}{{end}}{{end}}`, AllowMissingTemplateKeys: true}, "int64 int64 "},
		{"a missing key prints <no value>", PrintFlags{OutputFormat: `go-template={{(index .items 1).metadata.labels.color}}`, AllowMissingTemplateKeys: true}, "<no value>"},
		{"exists walks keys and indexes", PrintFlags{OutputFormat: `go-template={{exists . "items" 1 "ports" 0 "port"}} {{exists . "items" 2}} {{exists . "items" 0 "ports"}} {{exists . "kind"}}`}, "true false false true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.flags.ToPrinter()
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := p.PrintObj(list, &out); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got %q, want %q", out.String(), tt.want)
			}
		})
	}
}

func TestPrintFlagsErrors(t *testing.T) {
	tests := []struct {
		name  string
		flags PrintFlags
		want  string
	}{
		{"an unknown format names the allowed ones", PrintFlags{HumanReadable: true, OutputFormat: "table"},
			`unable to match a printer suitable for the output format "table", allowed formats are: custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml`},
		{"apply has no tables", PrintFlags{OutputFormat: "wide"},
			`unable to match a printer suitable for the output format "wide", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,yaml`},
		{"jsonpath needs a template", PrintFlags{OutputFormat: "jsonpath"}, "template format specified but no template given"},
		{"custom columns need columns", PrintFlags{HumanReadable: true, OutputFormat: "custom-columns="}, "custom-columns format specified but no custom columns given"},
		{"custom columns need headers", PrintFlags{HumanReadable: true, OutputFormat: "custom-columns=.metadata.name"}, "unexpected custom-columns spec: .metadata.name, expected <header>:<json-path-expr>"},
		{"a bad jsonpath", PrintFlags{OutputFormat: "jsonpath={.items[}"}, "error parsing jsonpath {.items[}, unterminated array\n"},
		{"a bad go-template", PrintFlags{OutputFormat: "go-template={{.items"}, "error parsing template {{.items, template: output:1: unclosed action"},
		{"go-template needs a template", PrintFlags{OutputFormat: "go-template="}, "template format specified but no template given"},
		{"with --template, -o names a format only", PrintFlags{OutputFormat: "jsonpath={.kind}", Template: "{{.kind}}"},
			`unable to match a printer suitable for the output format "jsonpath={.kind}", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,yaml`},
		{"a missing template file", PrintFlags{OutputFormat: "go-template-file=testdata/none.tmpl"}, "error reading --template testdata/none.tmpl, open testdata/none.tmpl: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.flags.ToPrinter()
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestSortObject(t *testing.T) {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	for _, n := range []struct {
		name string
		size int64
		cpu  string
	}{{"web-10", 3, "1"}, {"web-9", 1, "250m"}, {"web-100", 2, "500m"}} {
		u := configMap(n.name)
		u.Object["size"] = n.size
		u.Object["cpu"] = n.cpu
		list.Items = append(list.Items, *u)
	}
	names := func() string {
		var s []string
		for _, i := range list.Items {
			s = append(s, i.GetName())
		}
		return strings.Join(s, " ")
	}
	for _, tt := range []struct{ by, want string }{
		{".metadata.name", "web-9 web-10 web-100"},
		{"{.size}", "web-9 web-100 web-10"},
		{"cpu", "web-9 web-100 web-10"},
	} {
		if err := sortObject(list, tt.by); err != nil {
			t.Fatal(err)
		}
		if got := names(); got != tt.want {
			t.Errorf("sort by %s: %s, want %s", tt.by, got, tt.want)
		}
	}
	if err := sortObject(list, ".nope"); err == nil || err.Error() != `couldn't find any field with path "{.nope}" in the list of objects` {
		t.Errorf("sort by a missing field: %v", err)
	}
}

func TestGoTemplatePrinterErrors(t *testing.T) {
	cm := configMap("a")
	t.Run("a missing key fails without --allow-missing-template-keys", func(t *testing.T) {
		p, err := (&PrintFlags{OutputFormat: "go-template={{.data.color}}"}).ToPrinter()
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err = p.PrintObj(cm, &out)
		want := `error executing template "{{.data.color}}": template: output:1:7: executing "output" at <.data.color>: map has no entry for key "color"`
		if err == nil || err.Error() != want {
			t.Errorf("err = %v, want %q", err, want)
		}
		if !strings.HasPrefix(out.String(), "Error executing template: ") || !strings.Contains(out.String(), "\ttemplate was:\n\t\t{{.data.color}}\n") {
			t.Errorf("no debugging output:\n%s", out.String())
		}
	})
	t.Run("base64decode reports bad input", func(t *testing.T) {
		p, err := (&PrintFlags{OutputFormat: "go-template={{.metadata.name | base64decode}}"}).ToPrinter()
		if err != nil {
			t.Fatal(err)
		}
		err = p.PrintObj(cm, io.Discard)
		if err == nil || !strings.HasSuffix(err.Error(), "error calling base64decode: base64 decode failed: illegal base64 data at input byte 0") {
			t.Errorf("err = %v", err)
		}
	})
}
