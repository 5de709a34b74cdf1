package tables

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/runtime"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestGolden renders the table of every kind for representative objects and
// compares it with testdata/<kind>.golden. Run with -update to regenerate,
// then review the diff: the golden files are the reviewed truth of what
// "kubectl get -o wide" shows.
func TestGolden(t *testing.T) {
	for _, gc := range goldenCases() {
		t.Run(gc.file, func(t *testing.T) {
			got, err := render(gc.table.Convertor(clock), gc.objects)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", gc.file+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the output (run go test -update and review the diff):\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}

// TestGoldenFilesHaveCases keeps testdata free of files no case writes.
func TestGoldenFilesHaveCases(t *testing.T) {
	known := map[string]bool{}
	for _, gc := range goldenCases() {
		known[gc.file+".golden"] = true
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.golden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !known[filepath.Base(f)] {
			t.Errorf("%s has no golden case", f)
		}
	}
}

// render writes a convertor's column definitions, then its rows as
// "kubectl get -o wide" lays them out (upper-case headers, columns padded
// by three spaces), then any row conditions.
func render(c *TableConvertor, objs []runtime.Object) (string, error) {
	var b strings.Builder
	b.WriteString("# columns (name, type, format, priority: description)\n")
	for _, col := range c.Columns {
		fmt.Fprintf(&b, "%s, %s, %q, %d: %s\n", col.Name, col.Type, col.Format, col.Priority, col.Description)
	}

	b.WriteString("\n# kubectl get -o wide\n")
	var table bytes.Buffer
	w := tabwriter.NewWriter(&table, 6, 4, 3, ' ', 0)
	headers := make([]string, len(c.Columns))
	for i, col := range c.Columns {
		headers[i] = strings.ToUpper(col.Name)
	}
	fmt.Fprintln(w, strings.Join(headers, "\t"))
	var conditions []string
	if c.Order != nil {
		// A list's rows, in the table's order, as the API serves them.
		objs = slices.Clone(objs)
		slices.SortStableFunc(objs, c.Order)
	}
	for _, obj := range objs {
		cells, err := c.Row(obj)
		if err != nil {
			return "", err
		}
		if len(cells) != len(c.Columns) {
			return "", fmt.Errorf("row of %T has %d cells for %d columns", obj, len(cells), len(c.Columns))
		}
		texts := make([]string, len(cells))
		for i, cell := range cells {
			texts[i] = cellText(cell)
		}
		fmt.Fprintln(w, strings.Join(texts, "\t"))
		if c.Conditions != nil {
			for _, cond := range c.Conditions(obj) {
				name := texts[0]
				conditions = append(conditions, fmt.Sprintf("%s: %s=%s reason=%s message=%q", name, cond.Type, cond.Status, cond.Reason, cond.Message))
			}
		}
	}
	if err := w.Flush(); err != nil {
		return "", err
	}
	// tabwriter pads empty trailing cells; trim so the files survive editors.
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		b.WriteString(strings.TrimRight(strings.TrimSuffix(line, "\n"), " "))
		if strings.HasSuffix(line, "\n") {
			b.WriteString("\n")
		}
	}
	if len(conditions) > 0 {
		b.WriteString("\n# row conditions\n")
		b.WriteString(strings.Join(conditions, "\n") + "\n")
	}
	return b.String(), nil
}

// cellText prints a cell as kubectl does, marking non-string cells with
// their JSON type so the golden files show what goes on the wire.
func cellText(cell interface{}) string {
	switch v := cell.(type) {
	case string:
		return v
	case int64:
		return fmt.Sprintf("%d", v)
	case nil:
		return "<nil>"
	default:
		return fmt.Sprintf("%v(%T)", v, v)
	}
}

// An "integer" column must carry int64 cells (kube's "string" columns may
// carry numbers too, e.g. DATA and COUNT), and a "date" column strings.
func TestCellsMatchTheirColumnType(t *testing.T) {
	for _, gc := range goldenCases() {
		c := gc.table.Convertor(clock)
		for _, obj := range gc.objects {
			cells, err := c.Row(obj)
			if err != nil {
				t.Fatal(err)
			}
			for i, col := range c.Columns {
				switch col.Type {
				case "integer":
					if _, ok := cells[i].(int64); !ok {
						t.Errorf("%s column %q: cell %#v is not an int64", gc.file, col.Name, cells[i])
					}
				case "date":
					if _, ok := cells[i].(string); !ok {
						t.Errorf("%s column %q: cell %#v is not a string", gc.file, col.Name, cells[i])
					}
				}
			}
		}
	}
}
