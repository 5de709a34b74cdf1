package cli

import (
	"io"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
)

// ResourcePrinter prints objects: single objects, lists and (for the table
// printer) server-side tables.
type ResourcePrinter interface {
	PrintObj(obj runtime.Object, w io.Writer) error
}

// NamePrinter is cli-runtime's: "kind.group/name", followed by the
// operation when one is set ("deployment.apps/web created").
type NamePrinter = printers.NamePrinter

func readFileArg(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return string(data), nil
}
