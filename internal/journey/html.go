package journey

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// HTML layout, in pixels.
const (
	svgAxis     = 90  // the time axis on the left
	svgColumn   = 170 // one participant's column
	svgHead     = 56  // the participants' boxes
	svgRow      = 30  // one message
	svgMaxLabel = 48  // characters of a message drawn on its arrow
)

// HTML writes one self-contained page (no script, style or font from the
// network) drawing the seed's two sequence diagrams as inline SVG, with a
// time axis on the left and each step's details (actor, identity, time,
// action, result) on hover, followed by the stages' table and the
// checkpoint.
func HTML(w io.Writer, j *Journey) error {
	var b strings.Builder
	esc := html.EscapeString
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%s</title>
<style>
body{font-family:sans-serif;margin:24px;color:#222}
svg text{font-family:sans-serif;font-size:12px}
.box{fill:#eef3fb;stroke:#4a6fa5}
.life{stroke:#9ab;stroke-dasharray:4 4}
.msg{stroke:#234;stroke-width:1.4}
.reply{stroke:#234;stroke-width:1.2;stroke-dasharray:5 3}
.failed{stroke:#c0392b;stroke-width:2}
.failedtext{fill:#c0392b}
.axis{fill:#667;font-size:11px}
g.step:hover line{stroke-width:3}
g.step:hover text{font-weight:bold}
table{border-collapse:collapse;margin:8px 0 16px}
td,th{border:1px solid #ccd;padding:3px 8px;font-size:13px;text-align:left}
.checkpoint{border:2px solid #c0392b;padding:8px 16px;background:#fdf1ef}
.converged{border:2px solid #27ae60;padding:8px 16px;background:#eefaf2}
</style></head><body>
<h1>%s</h1>
<p>Applied at %s; steps from %s.</p>
`, esc(title(j)), esc(title(j)), esc(j.Start.UTC().Format("2006-01-02T15:04:05.000Z07:00")), esc(sourceName(j)))
	for _, n := range j.Notes {
		fmt.Fprintf(&b, "<p><em>Note: %s</em></p>\n", esc(n))
	}
	class := "converged"
	if !j.Converged {
		class = "checkpoint"
	}
	fmt.Fprintf(&b, "<div class=%q id=\"verdict\"><strong>%s</strong>", class, esc(verdict(j)))
	if cp := j.Checkpoint; cp != nil {
		b.WriteString("<ul>")
		for _, e := range cp.Evidence {
			fmt.Fprintf(&b, "<li>%s</li>", esc(e))
		}
		b.WriteString("</ul>")
	}
	b.WriteString("</div>\n")
	for i, d := range diagrams(j) {
		fmt.Fprintf(&b, "<h2>%s</h2>\n", esc(d.title))
		svg(&b, d, fmt.Sprintf("diagram-%d", i+1))
	}
	b.WriteString("<h2>Stages</h2>\n")
	for st := StageSubmit; st <= j.lastStage(); st++ {
		fmt.Fprintf(&b, "<h3>%d. %s</h3>\n<table><tr><th>Since apply</th><th>Actor</th><th>Action</th><th>Result</th></tr>\n", st, esc(st.String()))
		for i := range j.Steps {
			s := &j.Steps[i]
			if s.Stage == st {
				cls := ""
				if s.Failed {
					cls = ` class="failedtext"`
				}
				fmt.Fprintf(&b, "<tr%s><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", cls, since(s.Since), esc(actorName(s)), esc(s.Action), esc(s.Result))
			}
		}
		b.WriteString("</table>\n")
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// svg draws one sequence diagram.
func svg(b *strings.Builder, d *diagram, id string) {
	esc := html.EscapeString
	col := map[string]int{}
	for i, p := range d.participants {
		col[p.id] = svgAxis + i*svgColumn + svgColumn/2
	}
	width := svgAxis + len(d.participants)*svgColumn + 20
	height := svgHead + (len(d.messages)+1)*svgRow + 10
	fmt.Fprintf(b, `<svg id=%q xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">
<defs><marker id="%s-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#234"/></marker></defs>
`, id, width, height, width, height, id)
	for _, p := range d.participants {
		x := col[p.id]
		fmt.Fprintf(b, `<rect class="box" x="%d" y="8" width="%d" height="32" rx="4"/><text x="%d" y="28" text-anchor="middle">%s</text>`+"\n",
			x-svgColumn/2+6, svgColumn-12, x, esc(p.name))
		fmt.Fprintf(b, `<line class="life" x1="%d" y1="40" x2="%d" y2="%d"/>`+"\n", x, x, height-6)
	}
	for i, m := range d.messages {
		y := svgHead + (i+1)*svgRow
		x1, x2 := col[m.from], col[m.to]
		cls := "msg"
		if m.reply {
			cls = "reply"
		}
		failed := m.step != nil && m.step.Failed && m.note != ""
		if failed {
			cls = "failed"
		}
		detail := m.text
		if s := m.step; s != nil {
			detail = fmt.Sprintf("%s %s → %s: %s\nresult: %s", since(s.Since), actorName(s), s.Target, s.Action, s.Result)
			if s.User != "" {
				detail += "\nas " + s.User
			}
		}
		fmt.Fprintf(b, `<g class="step"><title>%s</title>`, esc(detail))
		if m.note != "" && m.step != nil {
			fmt.Fprintf(b, `<text class="axis" x="4" y="%d">%s</text>`, y+4, since(m.step.Since))
		}
		if x1 == x2 {
			fmt.Fprintf(b, `<path class="%s" fill="none" d="M%d,%d h30 v10 h-30" marker-end="url(#%s-arrow)"/>`, cls, x1, y-6, id)
		} else {
			fmt.Fprintf(b, `<line class="%s" x1="%d" y1="%d" x2="%d" y2="%d" marker-end="url(#%s-arrow)"/>`, cls, x1, y, x2, y, id)
		}
		label := m.text
		if r := []rune(label); len(r) > svgMaxLabel {
			label = string(r[:svgMaxLabel-1]) + "…"
		}
		tcls := ""
		if failed {
			tcls = ` class="failedtext"`
		}
		fmt.Fprintf(b, `<text%s x="%d" y="%d" text-anchor="middle">%s</text></g>`+"\n", tcls, (x1+x2)/2+boolInt(x1 == x2)*40, y-4, esc(label))
	}
	b.WriteString("</svg>\n")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
