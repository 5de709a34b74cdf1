package journey

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Formats are the output formats of Write.
var Formats = []string{"text", "mermaid", "json", "html"}

// Write renders j in format (one of Formats).
func Write(w io.Writer, j *Journey, format string) error {
	switch format {
	case "", "text":
		return Text(w, j)
	case "mermaid":
		return Mermaid(w, j)
	case "json":
		return JSON(w, j)
	case "html":
		return HTML(w, j)
	}
	return fmt.Errorf("unknown output format %q: one of %s", format, strings.Join(Formats, ", "))
}

// JSON writes j as indented JSON.
func JSON(w io.Writer, j *Journey) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

// title is the journey's first line.
func title(j *Journey) string {
	s := fmt.Sprintf("Journey of deployment/%s in namespace %s", j.Deployment, j.Namespace)
	if j.Revision > 0 {
		s += fmt.Sprintf(", revision %d", j.Revision)
	}
	if j.ReplicaSet != "" {
		s += fmt.Sprintf(" (replicaset %s)", j.ReplicaSet)
	}
	return s
}

// verdict is the journey's last line.
func verdict(j *Journey) string {
	if j.Converged {
		return fmt.Sprintf("Converged: %d/%d replicas ready and available.", j.Available, j.Replicas)
	}
	if j.Checkpoint == nil {
		return "Not converged."
	}
	return fmt.Sprintf("Not converged: stopped at stage %d (%s), checkpoint: %s.", j.Checkpoint.Stage, j.Checkpoint.Stage, j.Checkpoint.Name)
}

// since formats a step's time since the apply.
func since(d time.Duration) string {
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	return fmt.Sprintf("%s%.3fs", sign, d.Seconds())
}

// actorName is a step's actor with its node.
func actorName(s *Step) string {
	if s.Node != "" {
		return s.Actor + " " + s.Node
	}
	return s.Actor
}

// Text writes the journey as a timeline grouped by the seed's stages, one
// table per stage that has steps.
func Text(w io.Writer, j *Journey) error {
	fmt.Fprintln(w, title(j))
	fmt.Fprintf(w, "Applied at %s; steps from %s.\n", j.Start.UTC().Format(time.RFC3339Nano), sourceName(j))
	for _, n := range j.Notes {
		fmt.Fprintf(w, "Note: %s\n", n)
	}
	last := j.lastStage()
	for st := StageSubmit; st <= last; st++ {
		fmt.Fprintf(w, "\n%d. %s\n", st, st)
		var rows [][]string
		for i := range j.Steps {
			s := &j.Steps[i]
			if s.Stage != st {
				continue
			}
			result := s.Result
			if s.Failed {
				result = "✗ " + result
			}
			rows = append(rows, []string{since(s.Since), actorName(s), s.Action, result})
		}
		if len(rows) == 0 {
			fmt.Fprintln(w, "   (no step recorded)")
			continue
		}
		if err := table(w, []string{"Since apply", "Actor", "Action", "Result"}, rows); err != nil {
			return err
		}
	}
	if cp := j.Checkpoint; cp != nil {
		fmt.Fprintf(w, "\nStopped at stage %d (%s). Checkpoint: %s\n", cp.Stage, cp.Stage, cp.Name)
		for _, e := range cp.Evidence {
			fmt.Fprintf(w, "  - %s\n", e)
		}
	}
	fmt.Fprintf(w, "\n%s\n", verdict(j))
	return nil
}

// table lays rows out with tablewriter: a light grid, cells as given
// (no header capitals, no wrapping), so a long message stays one line.
func table(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleLight)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
	)
	t.Header(header)
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return fmt.Errorf("journey table: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("journey table: %w", err)
	}
	return nil
}

func sourceName(j *Journey) string {
	if j.Source == "trail" {
		return "minikd's write trail (trail.minik.dev)"
	}
	return "the objects (approximate)"
}

// lastStage is the last stage to show: the checkpoint's, or the last
// with steps.
func (j *Journey) lastStage() Stage {
	if j.Checkpoint != nil {
		return j.Checkpoint.Stage
	}
	last := StageSubmit
	for _, s := range j.Steps {
		last = max(last, s.Stage)
	}
	return last
}

// participant is one of the seed's participants in a diagram.
type participant struct{ id, name string }

// controlPlane and readiness are the participants of the seed's two
// diagrams (kubelets are added per node).
var (
	controlPlane = []participant{{"D", Developer}, {"K", Kubectl}, {"A", APIServer}, {"AD", AuthAdmission}, {"E", Etcd},
		{"DC", DeploymentCtrl}, {"RC", ReplicaSetCtrl}, {"S", Scheduler}}
	readiness = []participant{{"A", APIServer}, {"E", Etcd}, {"EP", EndpointSlices}, {"SD", ServiceDataPath}, {"IC", IngressCtrl}, {"PX", Proxy}}
)

// diagram is one sequence diagram's participants and messages.
type diagram struct {
	title        string
	participants []participant
	messages     []message
}

// message is one arrow (reply: dashed), with the step it shows.
type message struct {
	from, to string
	text     string
	reply    bool
	note     string
	step     *Step
}

// diagrams turns the journey into the seed's two diagrams: stages 1-4 on
// the control plane and nodes, 5-6 readiness and the request path. The
// API Server's persisting in etcd and its watch deliveries are drawn as
// the seed draws them; the trail records the writes they follow.
func diagrams(j *Journey) [2]*diagram {
	cp := &diagram{title: "Control plane and nodes", participants: append([]participant(nil), controlPlane...)}
	rd := &diagram{title: "Readiness and the request path", participants: append([]participant(nil), readiness...)}
	nodes := map[string]string{}
	idOf := func(d *diagram, s *Step, actor string) string {
		if actor == Kubelet {
			node := s.Node
			id, ok := nodes[node]
			if !ok {
				id = fmt.Sprintf("KL%d", len(nodes)+1)
				nodes[node] = id
			}
			if !d.has(id) {
				d.participants = append(d.participants, participant{id, strings.TrimSpace("kubelet " + node)})
				if d == cp && !d.has("CR") {
					d.participants = append(d.participants, participant{"CR", Runtime})
				}
			}
			return id
		}
		id := "K"
		if actor == Runtime {
			id = "CR"
		}
		for _, p := range append(controlPlane, readiness...) {
			if p.name == actor {
				id = p.id
			}
		}
		if !d.has(id) {
			name := actor
			if id == "K" {
				name = Kubectl
			}
			d.participants = append(d.participants, participant{id, name})
		}
		return id
	}
	lastActor := map[*diagram]string{}
	for i := range j.Steps {
		s := &j.Steps[i]
		d := cp
		if s.Stage >= StageTraffic {
			d = rd
		}
		from := idOf(d, s, s.Actor)
		to := idOf(d, s, s.Target)
		note := since(s.Since) + " " + s.Result
		if s.Stage == StageSubmit && from == "K" {
			d.messages = append(d.messages,
				message{from: "D", to: "K", text: "kubectl apply", step: s},
				message{from: "K", to: "A", text: s.Action, step: s},
				message{from: "A", to: "AD", text: "authenticate, authorize, admit", step: s},
				message{from: "AD", to: "A", text: allowOrReject(s), reply: true, step: s})
			if !s.Failed {
				d.messages = append(d.messages, message{from: "A", to: "E", text: "persist complete Deployment object", step: s})
			}
			d.messages = append(d.messages, message{from: "A", to: "K", text: s.Result, reply: true, note: note, step: s})
			continue
		}
		if to == "A" && from != "A" && lastActor[d] != from && from != "K" {
			text := "watch event"
			if at, ok := j.deliveredTo(s.User, s.At); ok {
				text += " " + since(at.Sub(j.Start))
			}
			d.messages = append(d.messages, message{from: "A", to: from, text: text, reply: true})
		}
		lastActor[d] = from
		d.messages = append(d.messages, message{from: from, to: to, text: s.Action, note: note, step: s})
		if to == "A" && !s.Failed {
			d.messages = append(d.messages, message{from: "A", to: "E", text: "persist", step: s})
		}
	}
	return [2]*diagram{cp, rd}
}

// deliveredTo is the last delivery to user's watch at or before t: the
// watch event that user's write at t followed.
func (j *Journey) deliveredTo(user string, t time.Time) (time.Time, bool) {
	var last time.Time
	if user == "" {
		return last, false
	}
	for i := range j.Steps {
		for _, d := range j.Steps[i].Deliveries {
			if d.User == user && !d.At.After(t) && d.At.After(last) {
				last = d.At
			}
		}
	}
	return last, !last.IsZero()
}

func (d *diagram) has(id string) bool {
	for _, p := range d.participants {
		if p.id == id {
			return true
		}
	}
	return false
}

func allowOrReject(s *Step) string {
	if s.Failed {
		return "reject"
	}
	return "allow"
}

// mermaidText makes a message safe in a Mermaid line (";" and "#" end or
// escape a statement there).
func mermaidText(s string) string {
	r := strings.NewReplacer(";", ",", "#", "", "\n", " ", "<", "‹", ">", "›")
	return r.Replace(s)
}

// Mermaid writes the journey as the seed's two sequenceDiagrams, the
// real messages in order, with times and results as notes.
func Mermaid(w io.Writer, j *Journey) error {
	fmt.Fprintf(w, "%%%% %s\n%%%% %s\n", title(j), verdict(j))
	for i, d := range diagrams(j) {
		if len(d.messages) == 0 {
			continue
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%%%% %s\nsequenceDiagram\n", d.title)
		for _, p := range d.participants {
			fmt.Fprintf(w, "  participant %s as %s\n", p.id, p.name)
		}
		for _, m := range d.messages {
			arrow := "->>"
			if m.reply {
				arrow = "-->>"
			}
			if m.step != nil && m.step.Failed && m.note != "" {
				arrow = "-x"
			}
			fmt.Fprintf(w, "  %s%s%s: %s\n", m.from, arrow, m.to, mermaidText(m.text))
			if m.note != "" {
				fmt.Fprintf(w, "  Note over %s: %s\n", m.from, mermaidText(m.note))
			}
		}
		if cp := j.Checkpoint; cp != nil && (i == 0) == (cp.Stage < StageTraffic) {
			fmt.Fprintf(w, "  Note over %s: stopped at stage %d, %s\n", d.participants[0].id, cp.Stage, mermaidText(cp.Name))
		}
	}
	return nil
}
