package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
)

// DryRunStrategy is the value of --dry-run.
type DryRunStrategy int

// The --dry-run strategies.
const (
	// DryRunNone sends requests that persist.
	DryRunNone DryRunStrategy = iota
	// DryRunClient sends nothing that would change the server.
	DryRunClient
	// DryRunServer sends requests with dryRun=All.
	DryRunServer
)

// addDryRunFlag adds kubectl's --dry-run flag.
func addDryRunFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "dry-run", "none", `Must be "none", "server", or "client". If client strategy, only print the object that would be sent, without sending it. If server strategy, submit server-side request without persisting the resource.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "unchanged"
}

// parseDryRun parses the --dry-run value.
func parseDryRun(v string) (DryRunStrategy, error) {
	switch v {
	case "client":
		return DryRunClient, nil
	case "server":
		return DryRunServer, nil
	case "none":
		return DryRunNone, nil
	case "unchanged":
		return DryRunNone, fmt.Errorf(`--dry-run flag without a value was specified. A value must be set: "none", "server", or "client".`)
	default:
		return DryRunNone, fmt.Errorf(`Invalid dry-run value (%v). Must be "none", "server", or "client".`, v)
	}
}

// PrintFlags select and configure the printer of a command: the -o flag
// and the flags of the printers it names. Commands copy them and set the
// fields that are not flags (the operation of name output, the kind and
// namespace decoration of tables) before calling ToPrinter.
type PrintFlags struct {
	OutputFormat             string
	Template                 string
	NoHeaders                bool
	ShowLabels               bool
	ShowKind                 bool
	LabelColumns             []string
	SortBy                   string
	ShowManagedFields        bool
	AllowMissingTemplateKeys bool

	// Operation, when set and no -o is given, selects "kind/name operation"
	// output (apply's "created"); DryRun adds its suffix.
	Operation string
	DryRun    DryRunStrategy

	// HumanReadable allows table output ("" and "wide"), for get.
	HumanReadable bool
	// WithNamespace adds a NAMESPACE column to tables.
	WithNamespace bool
	// WithKind prefixes names with "kind.group/" in tables.
	WithKind bool
	// Kind is the kind of the objects a table shows.
	Kind schema.GroupKind
}

// AddFlags binds -o and the printer flags; get adds the table flags.
func (f *PrintFlags) AddFlags(cmd *cobra.Command) {
	formats := strings.Join(f.AllowedFormats(), ", ")
	cmd.Flags().StringVarP(&f.OutputFormat, "output", "o", f.OutputFormat, "Output format. One of: ("+formats+").")
	cmd.Flags().StringVar(&f.Template, "template", f.Template, "Template string or path to template file to use when -o=go-template, -o=go-template-file. The template format is golang templates [http://golang.org/pkg/text/template/#pkg-overview].")
	cmd.Flags().BoolVar(&f.ShowManagedFields, "show-managed-fields", f.ShowManagedFields, "If true, keep the managedFields when printing objects in JSON or YAML format.")
	cmd.Flags().BoolVar(&f.AllowMissingTemplateKeys, "allow-missing-template-keys", true, "If true, ignore any errors in templates when a field or map key is missing in the template. Only applies to golang and jsonpath output formats.")
	if f.HumanReadable {
		cmd.Flags().BoolVar(&f.NoHeaders, "no-headers", f.NoHeaders, "When using the default or custom-column output format, don't print headers (default print headers).")
		cmd.Flags().BoolVar(&f.ShowLabels, "show-labels", f.ShowLabels, "When printing, show all labels as the last column (default hide labels column)")
		cmd.Flags().BoolVar(&f.ShowKind, "show-kind", f.ShowKind, "If present, list the resource type for the requested object(s).")
		cmd.Flags().StringSliceVarP(&f.LabelColumns, "label-columns", "L", f.LabelColumns, "Accepts a comma separated list of labels that are going to be presented as columns. Names are case-sensitive. You can also use multiple flag options like -L label1 -L label2...")
		cmd.Flags().StringVar(&f.SortBy, "sort-by", f.SortBy, "If non-empty, sort list types using this field specification.  The field specification is expressed as a JSONPath expression (e.g. '{.metadata.name}'). The field in the API resource specified by this JSONPath expression must be an integer or a string.")
	}
}

// AllowedFormats lists the -o values the flags accept.
func (f *PrintFlags) AllowedFormats() []string {
	formats := []string{"json", "yaml", "name"}
	for format := range templateFormats {
		formats = append(formats, format)
	}
	if f.HumanReadable {
		formats = append(formats, "wide", "custom-columns", "custom-columns-file")
	}
	sort.Strings(formats)
	return formats
}

// outputFormat splits "-o jsonpath={.x}" into the format and its argument.
func (f *PrintFlags) outputFormat() (format, arg string) {
	format = f.OutputFormat
	if i := strings.Index(format, "="); i >= 0 {
		format, arg = format[:i], format[i+1:]
	}
	return format, arg
}

// IsHumanReadable reports whether the output is a table.
func (f *PrintFlags) IsHumanReadable() bool {
	format, _ := f.outputFormat()
	return f.HumanReadable && (format == "" && f.Template == "" || format == "wide")
}

// dryRunSuffix is added to the operation of name output.
func (f *PrintFlags) dryRunSuffix() string {
	switch f.DryRun {
	case DryRunClient:
		return " (dry run)"
	case DryRunServer:
		return " (server dry run)"
	}
	return ""
}

// ToPrinter returns the printer the flags select. As kubectl, a
// --template without -o means -o go-template.
func (f *PrintFlags) ToPrinter() (ResourcePrinter, error) {
	if p, ok, err := f.templatePrinter(); ok {
		return p, err
	}
	format, arg := f.outputFormat()
	var p ResourcePrinter
	switch format {
	case "":
		if f.HumanReadable {
			return NewTablePrinter(f.tableOptions(false)), nil
		}
		if f.Operation == "" {
			return &NamePrinter{ShortOutput: true}, nil
		}
		return &NamePrinter{Operation: f.Operation + f.dryRunSuffix()}, nil
	case "wide":
		if !f.HumanReadable {
			return nil, f.noCompatiblePrinter()
		}
		return NewTablePrinter(f.tableOptions(true)), nil
	case "name":
		return &NamePrinter{ShortOutput: true}, nil
	case "json", "yaml":
		if format == "json" {
			p = &printers.JSONPrinter{}
		} else {
			p = &printers.YAMLPrinter{}
		}
		// As kubectl's JSON and YAML printers (only those: templates
		// see every field).
		if !f.ShowManagedFields {
			p = &printers.OmitManagedFieldsPrinter{Delegate: p}
		}
		return p, nil
	case "custom-columns", "custom-columns-file":
		if !f.HumanReadable {
			return nil, f.noCompatiblePrinter()
		}
		spec := arg
		if format == "custom-columns-file" {
			data, err := readFileArg(arg)
			if err != nil {
				return nil, fmt.Errorf("error reading template %s, %v\n", arg, err)
			}
			return NewCustomColumnsPrinterFromTemplate(data, f.NoHeaders)
		}
		return NewCustomColumnsPrinterFromSpec(spec, f.NoHeaders)
	default:
		return nil, f.noCompatiblePrinter()
	}
}

// templateFormats are the -o values of the template printers, and whether
// each names a JSONPath (rather than a Go template) and a file (rather
// than the template itself).
var templateFormats = map[string]struct{ jsonPath, file bool }{
	"go-template":      {},
	"template":         {},
	"go-template-file": {file: true},
	"templatefile":     {file: true},
	"jsonpath":         {jsonPath: true},
	"jsonpath-as-json": {jsonPath: true},
	"jsonpath-file":    {jsonPath: true, file: true},
}

// templatePrinter returns the template printer the flags select; ok is
// false when they select another printer. The template is --template when
// given (then -o must be a bare format name, as in kubectl), else the part
// of -o after "=".
func (f *PrintFlags) templatePrinter() (p ResourcePrinter, ok bool, err error) {
	format, tmpl := f.OutputFormat, f.Template
	if format == "" && tmpl != "" {
		format = "go-template"
	}
	if tmpl == "" {
		format, tmpl, _ = strings.Cut(format, "=")
	}
	kind, ok := templateFormats[format]
	if !ok {
		return nil, false, nil
	}
	if tmpl == "" {
		return nil, true, fmt.Errorf("template format specified but no template given")
	}
	if kind.file {
		data, err := readFileArg(tmpl)
		if err != nil {
			return nil, true, fmt.Errorf("error reading --template %s, %v", tmpl, err)
		}
		tmpl = data
	}
	if kind.jsonPath {
		jp, err := printers.NewJSONPathPrinter(tmpl)
		if err != nil {
			return nil, true, fmt.Errorf("error parsing jsonpath %s, %v\n", tmpl, err)
		}
		jp.AllowMissingKeys(f.AllowMissingTemplateKeys)
		jp.EnableJSONOutput(format == "jsonpath-as-json")
		return jp, true, nil
	}
	gt, err := printers.NewGoTemplatePrinter([]byte(tmpl))
	if err != nil {
		return nil, true, fmt.Errorf("error parsing template %s, %v", tmpl, err)
	}
	gt.AllowMissingKeys(f.AllowMissingTemplateKeys)
	return gt, true, nil
}

func (f *PrintFlags) noCompatiblePrinter() error {
	format := f.OutputFormat
	return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: %s", format, strings.Join(f.AllowedFormats(), ","))
}

func (f *PrintFlags) tableOptions(wide bool) TableOptions {
	return TableOptions{
		NoHeaders:     f.NoHeaders,
		Wide:          wide,
		WithNamespace: f.WithNamespace,
		WithKind:      f.WithKind || f.ShowKind,
		Kind:          f.Kind,
		ShowLabels:    f.ShowLabels,
		ColumnLabels:  f.LabelColumns,
	}
}
