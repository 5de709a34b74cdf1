package cli

import (
	"io"

	"github.com/liggitt/tabwriter"
	"k8s.io/cli-runtime/pkg/printers"
)

// TabWriter lays out tab-separated lines as kubectl's table output does:
// it is kubectl's own tabwriter (cli-runtime's GetNewTabWriter: minimum
// cell width 6, padding 3, spaces, widths remembered across flushes), so
// rows printed one by one (watch) stay aligned with the header printed
// first. ResetWidths forgets the widths, for a new table.
//
// github.com/olekukonko/tablewriter is not the layout engine: it lays out
// a rectangular grid, padding every row to every column and the last
// column too, while kubectl's elastic tabstops make a column of each run
// of consecutive lines that have a cell there (a line with fewer cells
// ends the column above it, as in describe's output), leave the last cell
// of a line unpadded, and keep widths across flushes. The earlier wrapper
// had to pre-pad every cell and trim tablewriter's output to get those
// bytes, so it laid out nothing.
type TabWriter struct {
	out io.Writer
	w   *tabwriter.Writer
}

// NewTabWriter returns a TabWriter writing to out.
func NewTabWriter(out io.Writer) *TabWriter {
	return &TabWriter{out: out, w: printers.GetNewTabWriter(out)}
}

// Write buffers p; cells are separated by '\t', lines end with '\n'.
func (w *TabWriter) Write(p []byte) (int, error) { return w.w.Write(p) }

// ResetWidths forgets the remembered column widths (after a Flush).
func (w *TabWriter) ResetWidths() { w.w = printers.GetNewTabWriter(w.out) }

// Flush writes the buffered lines to the underlying writer.
func (w *TabWriter) Flush() error { return w.w.Flush() }
