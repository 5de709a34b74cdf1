package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// stdinSource is the source name of manifests read from "-".
const stdinSource = "STDIN"

// manifestExtensions are the file extensions read from directories.
var manifestExtensions = []string{".json", ".yaml", ".yml"}

// FilenameOptions are the -f/--filename and -R/--recursive flags.
type FilenameOptions struct {
	Filenames []string
	// Kustomize is the kustomization directory of -k.
	Kustomize string
	Recursive bool
}

// AddFlags binds the flags; usage completes "Filename, directory, or URL to
// files ".
func (o *FilenameOptions) AddFlags(cmd *cobra.Command, usage string) {
	cmd.Flags().StringSliceVarP(&o.Filenames, "filename", "f", o.Filenames, "Filename, directory, or URL to files "+usage)
	cmd.Flags().StringVarP(&o.Kustomize, "kustomize", "k", o.Kustomize, "Process the kustomization directory. This flag can't be used together with -f or -R.")
	cmd.Flags().BoolVarP(&o.Recursive, "recursive", "R", o.Recursive, "Process the directory used in -f, --filename recursively. Useful when you want to manage related manifests organized within the same directory.")
}

// Empty reports whether no file was given.
func (o *FilenameOptions) Empty() bool { return len(o.Filenames) == 0 && o.Kustomize == "" }

// ManifestObject is one object read from a manifest, with the name of the
// file it came from ("STDIN" for standard input).
type ManifestObject struct {
	Source string
	Object *unstructured.Unstructured
}

// ReadManifests reads every object the -f arguments name, in order:
// files, directories (their .json, .yaml and .yml files, recursively with
// -R) and "-" (stdin). Documents may be multi-document YAML or JSON; List
// kinds are flattened into their items; empty documents are skipped.
//
// A path that does not exist fails the whole read (as in kubectl, nothing
// is returned). Other errors — a document that does not parse (the rest of
// its file is skipped), an object without apiVersion or kind — are returned
// alongside the objects that could be read.
func ReadManifests(o FilenameOptions, stdin io.Reader) ([]ManifestObject, []error) {
	type input struct {
		source string
		stdin  bool
	}
	if o.Kustomize != "" {
		var errs []error
		if len(o.Filenames) > 0 {
			errs = append(errs, errors.New("only one of -f or -k can be specified"))
		}
		if o.Recursive {
			errs = append(errs, errors.New("the -k flag can't be used with -f or -R"))
		}
		if len(errs) > 0 {
			return nil, errs
		}
		return kustomizeManifests(o.Kustomize)
	}
	var inputs []input
	for _, name := range o.Filenames {
		if name == "-" {
			inputs = append(inputs, input{source: stdinSource, stdin: true})
			continue
		}
		if _, err := os.Stat(name); err != nil {
			if os.IsNotExist(err) {
				return nil, []error{fmt.Errorf("the path %q does not exist", name)}
			}
			return nil, []error{fmt.Errorf("the path %q cannot be accessed: %v", name, err)}
		}
		paths, err := expandPath(name, o.Recursive)
		if err != nil {
			return nil, []error{err}
		}
		for _, p := range paths {
			inputs = append(inputs, input{source: p})
		}
	}

	var objs []ManifestObject
	var errs []error
	for _, in := range inputs {
		var r io.Reader
		if in.stdin {
			r = stdin
		} else {
			f, err := os.Open(in.source)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			data, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				errs = append(errs, err)
				continue
			}
			r = bytes.NewReader(data)
		}
		o, e := decodeManifest(r, in.source)
		objs = append(objs, o...)
		errs = append(errs, e...)
	}
	return objs, errs
}

// expandPath lists the files a -f path stands for: the file itself, or the
// manifest files of a directory in lexical order (descending into
// subdirectories only when recursive).
func expandPath(root string, recursive bool) ([]string, error) {
	var paths []string
	err := filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() {
			if path != root && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if path != root && !hasManifestExtension(path) {
			return nil
		}
		paths = append(paths, path)
		return nil
	})
	return paths, err
}

func hasManifestExtension(path string) bool {
	ext := filepath.Ext(path)
	for _, e := range manifestExtensions {
		if ext == e {
			return true
		}
	}
	return false
}

// decodeManifest decodes the YAML or JSON documents of one source.
func decodeManifest(r io.Reader, source string) ([]ManifestObject, []error) {
	var objs []ManifestObject
	var errs []error
	d := yaml.NewYAMLOrJSONDecoder(r, 4096)
	for {
		ext := runtime.RawExtension{}
		if err := d.Decode(&ext); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, errs
			}
			return objs, append(errs, fmt.Errorf("error parsing %s: %v", source, err))
		}
		raw := bytes.TrimSpace(ext.Raw)
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue
		}
		obj, _, err := unstructured.UnstructuredJSONScheme.Decode(raw, nil, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("unable to decode %q: %v", source, err))
			continue
		}
		items, err := flattenObject(obj)
		if err != nil {
			errs = append(errs, fmt.Errorf("unable to decode %q: %v", source, err))
			continue
		}
		for _, item := range items {
			objs = append(objs, ManifestObject{Source: source, Object: item})
		}
	}
}

// flattenObject returns the items of a List (recursively), or the object.
func flattenObject(obj runtime.Object) ([]*unstructured.Unstructured, error) {
	if list, ok := obj.(*unstructured.UnstructuredList); ok {
		var out []*unstructured.Unstructured
		for i := range list.Items {
			item := &list.Items[i]
			if item.IsList() {
				inner, err := item.ToList()
				if err != nil {
					return nil, err
				}
				sub, err := flattenObject(inner)
				if err != nil {
					return nil, err
				}
				out = append(out, sub...)
				continue
			}
			if item.GetKind() == "" {
				return nil, fmt.Errorf("Object 'Kind' is missing in '%s'", mustJSON(item))
			}
			out = append(out, item)
		}
		return out, nil
	}
	if meta.IsListType(obj) {
		return nil, fmt.Errorf("unsupported list type %T", obj)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("unexpected object type %T", obj)
	}
	return []*unstructured.Unstructured{u}, nil
}

func mustJSON(u *unstructured.Unstructured) string {
	data, err := u.MarshalJSON()
	if err != nil {
		return err.Error()
	}
	return string(bytes.TrimSpace(data))
}
