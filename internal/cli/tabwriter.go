package cli

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Column layout of kubectl's tabwriter (minimum cell width 6 including
// padding, 3 spaces of padding): every column but the last is at least
// minColumnWidth wide and followed by columnGap spaces.
const (
	columnGap      = "   "
	minColumnWidth = 3
)

// TabWriter lays out tab-separated lines as kubectl's table output does:
// left-aligned columns, three spaces between them, upper-case headers as
// given, no borders, and no padding after the last cell. Lines are buffered
// until Flush, which renders them through tablewriter.
//
// Column widths are remembered across flushes and only grow, as with
// kubectl's tabwriter.RememberWidths, so rows printed one by one (watch)
// stay aligned with the header printed first. ResetWidths forgets them,
// for a new table.
type TabWriter struct {
	out    io.Writer
	buf    []byte
	widths []int
}

// NewTabWriter returns a TabWriter writing to out.
func NewTabWriter(out io.Writer) *TabWriter {
	return &TabWriter{out: out}
}

// Write buffers p; cells are separated by '\t', lines end with '\n'.
func (w *TabWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// ResetWidths forgets the remembered column widths.
func (w *TabWriter) ResetWidths() { w.widths = nil }

// Flush renders the buffered lines to the underlying writer.
func (w *TabWriter) Flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	text := string(w.buf)
	w.buf = w.buf[:0]
	text = strings.TrimSuffix(text, "\n")
	lines := strings.Split(text, "\n")
	rows := make([][]string, len(lines))
	for i, line := range lines {
		rows[i] = strings.Split(line, "\t")
	}

	// A column is as wide as its widest cell, ignoring last cells (which
	// are not part of a column), and never narrower than remembered.
	for _, row := range rows {
		for j := 0; j < len(row)-1; j++ {
			for len(w.widths) <= j {
				w.widths = append(w.widths, minColumnWidth)
			}
			if n := utf8.RuneCountInString(row[j]); n > w.widths[j] {
				w.widths[j] = n
			}
		}
	}

	// Consecutive rows with the same number of cells form one table.
	var out bytes.Buffer
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && len(rows[end]) == len(rows[start]) {
			end++
		}
		if err := w.render(&out, rows[start:end]); err != nil {
			return err
		}
		start = end
	}
	_, err := w.out.Write(out.Bytes())
	return err
}

// render writes rows that all have the same number of cells.
func (w *TabWriter) render(out *bytes.Buffer, rows [][]string) error {
	ncols := len(rows[0])
	if ncols == 1 {
		for _, row := range rows {
			out.WriteString(row[0])
			out.WriteByte('\n')
		}
		return nil
	}
	lead := 0 // the width of everything before the last cell
	for j := 0; j < ncols-1; j++ {
		lead += w.widths[j] + len(columnGap)
	}
	padding := make([]tw.Padding, ncols)
	for j := range padding {
		padding[j] = tw.Padding{Right: columnGap, Overwrite: true}
	}
	padding[ncols-1] = tw.PaddingNone

	var buf bytes.Buffer
	table := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.SeparatorsNone,
				Lines:      tw.LinesNone,
			},
		})),
		tablewriter.WithRowAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithRowPaddingPerColumn(padding),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithTrimTab(tw.Off),
		tablewriter.WithTrimLine(tw.Off),
		tablewriter.WithBehavior(tw.Behavior{AutoHide: tw.Off, TrimSpace: tw.Off, TrimTab: tw.Off, TrimLine: tw.Off}),
	)
	for _, row := range rows {
		cells := make([]string, ncols)
		for j, cell := range row {
			if j < ncols-1 {
				cell += strings.Repeat(" ", w.widths[j]-utf8.RuneCountInString(cell))
			}
			cells[j] = cell
		}
		if err := table.Append(cells); err != nil {
			return err
		}
	}
	if err := table.Render(); err != nil {
		return err
	}

	// tablewriter pads the last column to its width too: cut that, but
	// keep the padding of the other columns when the last cell is empty,
	// as kubectl's tabwriter does.
	rendered := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	for i, line := range rendered {
		line = strings.TrimRight(line, " ")
		if i < len(rows) {
			last := rows[i][ncols-1]
			if n := lead + utf8.RuneCountInString(last); utf8.RuneCountInString(line) < n {
				line += strings.Repeat(" ", n-utf8.RuneCountInString(line))
			}
		}
		out.WriteString(line)
		out.WriteByte('\n')
	}
	return nil
}
