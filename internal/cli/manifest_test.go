package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func kinds(objs []ManifestObject) string {
	var s []string
	for _, o := range objs {
		s = append(s, o.Object.GetKind()+"/"+o.Object.GetName())
	}
	return strings.Join(s, " ")
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadManifests(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"stream.json": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`,
		"list.yaml":         "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: d\n",
		"empty-docs.yaml":   "---\n# only a comment\n---\nnull\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: e\n---\n",
		"dir/a.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dir-a\n",
		"dir/b.yml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dir-b\n",
		"dir/readme.md":     "not a manifest",
		"dir/sub/c.json":    `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dir-sub-c"}}`,
		"broken.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: before\n---\nkind: [\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: after\n",
		"no-kind.yaml":      "apiVersion: v1\nmetadata:\n  name: nokind\n",
		"explicit.txt":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: txt\n",
		"list-no-kind.json": `{"apiVersion":"v1","kind":"List","items":[{"metadata":{"name":"x"}}]}`,
	})
	p := func(name string) string { return filepath.Join(dir, name) }

	tests := []struct {
		name      string
		opts      FilenameOptions
		stdin     string
		want      string
		wantErrs  []string
		wantFirst string // source of the first object
	}{
		{name: "the seed's multi-document manifest gives its four objects in order",
			opts: FilenameOptions{Filenames: []string{"../../testdata/web.yaml"}},
			want: "Namespace/demo Deployment/web Service/web Ingress/web", wantFirst: "../../testdata/web.yaml"},
		{name: "a stream of JSON objects gives each object",
			opts: FilenameOptions{Filenames: []string{p("stream.json")}}, want: "ConfigMap/a ConfigMap/b"},
		{name: "a List is flattened into its items",
			opts: FilenameOptions{Filenames: []string{p("list.yaml")}}, want: "ConfigMap/c Deployment/d"},
		{name: "empty and null documents are skipped",
			opts: FilenameOptions{Filenames: []string{p("empty-docs.yaml")}}, want: "Service/e"},
		{name: "a directory gives its manifest files but not its subdirectories",
			opts: FilenameOptions{Filenames: []string{p("dir")}}, want: "ConfigMap/dir-a ConfigMap/dir-b"},
		{name: "a directory with -R gives its subdirectories too",
			opts: FilenameOptions{Filenames: []string{p("dir")}, Recursive: true}, want: "ConfigMap/dir-a ConfigMap/dir-b ConfigMap/dir-sub-c"},
		{name: "a file named explicitly is read whatever its extension",
			opts: FilenameOptions{Filenames: []string{p("explicit.txt")}}, want: "ConfigMap/txt"},
		{name: "stdin is read for - and named STDIN",
			opts: FilenameOptions{Filenames: []string{"-"}}, stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: in\n",
			want: "ConfigMap/in", wantFirst: "STDIN"},
		{name: "several -f are read in order",
			opts: FilenameOptions{Filenames: []string{p("stream.json"), p("explicit.txt")}}, want: "ConfigMap/a ConfigMap/b ConfigMap/txt"},
		{name: "a document that does not parse ends its file, keeping what came before",
			opts: FilenameOptions{Filenames: []string{p("broken.yaml"), p("explicit.txt")}}, want: "ConfigMap/before ConfigMap/txt",
			wantErrs: []string{"error parsing " + p("broken.yaml") + ": error converting YAML to JSON: yaml: line 1: did not find expected node content"}},
		{name: "an object without kind is an error",
			opts:     FilenameOptions{Filenames: []string{p("no-kind.yaml")}},
			wantErrs: []string{`unable to decode "` + p("no-kind.yaml") + `": Object 'Kind' is missing in '{"apiVersion":"v1","metadata":{"name":"nokind"}}'`}},
		{name: "a list item without kind is an error",
			opts:     FilenameOptions{Filenames: []string{p("list-no-kind.json")}},
			wantErrs: []string{`unable to decode "` + p("list-no-kind.json") + `": Object 'Kind' is missing in '{"apiVersion":"v1","kind":"","metadata":{"name":"x"}}'`}},
		{name: "a path that does not exist fails everything",
			opts:     FilenameOptions{Filenames: []string{p("stream.json"), "nope.yaml"}},
			wantErrs: []string{`the path "nope.yaml" does not exist`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, errs := ReadManifests(tt.opts, strings.NewReader(tt.stdin))
			if got := kinds(objs); got != tt.want {
				t.Errorf("objects = %q, want %q", got, tt.want)
			}
			var gotErrs []string
			for _, err := range errs {
				gotErrs = append(gotErrs, err.Error())
			}
			if strings.Join(gotErrs, "\n") != strings.Join(tt.wantErrs, "\n") {
				t.Errorf("errors = %q, want %q", gotErrs, tt.wantErrs)
			}
			if tt.wantFirst != "" && (len(objs) == 0 || objs[0].Source != tt.wantFirst) {
				t.Errorf("first source = %v, want %q", objs, tt.wantFirst)
			}
		})
	}
}

func TestResolveManifests(t *testing.T) {
	manifest := `apiVersion: v1
kind: Namespace
metadata:
  name: demo
  namespace: ignored
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: defaulted
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: elsewhere
  namespace: other
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: demo
`
	objs, errs := decodeManifest(strings.NewReader(manifest), "m.yaml")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	mapper := fakeMapper(t)

	t.Run("without -n, objects keep their namespace and the others get the default", func(t *testing.T) {
		objs, _ := decodeManifest(strings.NewReader(manifest), "m.yaml")
		infos, errs := ResolveManifests(objs, mapper, "demo", false)
		var got []string
		for _, info := range infos {
			got = append(got, info.ObjectName()+"@"+info.Namespace+"@"+info.Object.(interface{ GetNamespace() string }).GetNamespace())
		}
		want := "namespaces/demo@@ configmaps/defaulted@demo@demo configmaps/elsewhere@other@other"
		if strings.Join(got, " ") != want {
			t.Errorf("infos = %q, want %q", strings.Join(got, " "), want)
		}
		if len(errs) != 1 || errs[0].Error() != `resource mapping not found for name: "w" namespace: "demo" from "m.yaml": no matches for kind "Widget" in version "example.com/v1"`+"\nensure CRDs are installed first" {
			t.Errorf("errors = %v", errs)
		}
	})

	t.Run("with -n, an object of another namespace is an error", func(t *testing.T) {
		infos, errs := ResolveManifests(objs[:3], mapper, "demo", true)
		if len(infos) != 2 {
			t.Errorf("got %d infos, want 2", len(infos))
		}
		want := `the namespace from the provided object "other" does not match the namespace "demo". You must pass '--namespace=other' to perform this operation.`
		if len(errs) != 1 || errs[0].Error() != want {
			t.Errorf("errors = %v, want %q", errs, want)
		}
	})
}
