package runtime

import (
	"fmt"
	"strings"
)

// The simulated /bin/sh understands a documented subset of the POSIX
// shell, enough for the scripts people put in manifests:
//
//   - lists with ";", "&" (run in order, not in the background), newlines,
//     "&&", "||", "!" and pipelines ("|", run one after the other);
//   - while/until ... do ... done, for NAME in ...; do ... done,
//     if/elif/else/fi, { ...; } and ( ... ), break and continue;
//   - words with '...', "...", backslashes, $VAR, ${VAR}, ${VAR:-x},
//     ${VAR-x}, ${VAR:=x}, ${#VAR}, $?, $$, $#, $0..$9, $@, $*,
//     $(command) and $((arithmetic));
//   - redirections >, >>, <, 2>, 2>&1, >&2, &> to files of the
//     container (volumes included) and /dev/null;
//   - the builtins and utilities of shellbuiltins.go.
//
// Anything else (functions, case, here-documents, globbing) is refused:
// the script fails with exit code 2 and says what it did not understand.

type tokKind int

const (
	tWord tokKind = iota
	tOp
	tNewline
	tEOF
)

type token struct {
	kind tokKind
	val  string
}

// lex splits a script into words (kept raw, quotes included: they are
// expanded when run) and operators.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i += 2
		case c == '\n':
			toks = append(toks, token{kind: tNewline})
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.ContainsRune(";&|()<>", rune(c)):
			op := string(c)
			for _, two := range []string{"&&", "||", ";;", ">>", ">&", "&>", "<<"} {
				if strings.HasPrefix(src[i:], two) {
					op = two
					break
				}
			}
			if op == "<<" || op == ";;" {
				return nil, fmt.Errorf("%q is not supported", op)
			}
			toks = append(toks, token{kind: tOp, val: op})
			i += len(op)
		default:
			j, err := scanWord(src, i)
			if err != nil {
				return nil, err
			}
			w := src[i:j]
			// An fd number glued to a redirection: 2>, 2>>, 1>&2.
			if j < len(src) && (src[j] == '>' || src[j] == '<') && isDigits(w) {
				op := string(src[j])
				if strings.HasPrefix(src[j:], ">>") || strings.HasPrefix(src[j:], ">&") {
					op = src[j : j+2]
				}
				toks = append(toks, token{kind: tOp, val: w + op})
				i = j + len(op)
				continue
			}
			toks = append(toks, token{kind: tWord, val: w})
			i = j
		}
	}
	return append(toks, token{kind: tEOF}), nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// scanWord returns the end of the word starting at i.
func scanWord(src string, i int) (int, error) {
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || strings.ContainsRune(";&|()<>", rune(c)):
			return i, nil
		case c == '\\':
			i += 2
		case c == '\'':
			j := strings.IndexByte(src[i+1:], '\'')
			if j < 0 {
				return 0, fmt.Errorf("unterminated quoted string")
			}
			i += j + 2
		case c == '"':
			j, err := scanDouble(src, i+1)
			if err != nil {
				return 0, err
			}
			i = j + 1
		case c == '$' && i+1 < len(src) && (src[i+1] == '(' || src[i+1] == '{'):
			j, err := scanDollar(src, i)
			if err != nil {
				return 0, err
			}
			i = j
		case c == '`':
			return 0, fmt.Errorf("backquotes are not supported, use $(...)")
		default:
			i++
		}
	}
	if i > len(src) {
		i = len(src)
	}
	return i, nil
}

// scanDouble returns the index of the closing double quote of a string
// starting after the opening one at i.
func scanDouble(src string, i int) (int, error) {
	for i < len(src) {
		switch c := src[i]; {
		case c == '\\':
			i += 2
		case c == '"':
			return i, nil
		case c == '$' && i+1 < len(src) && (src[i+1] == '(' || src[i+1] == '{'):
			j, err := scanDollar(src, i)
			if err != nil {
				return 0, err
			}
			i = j
		default:
			i++
		}
	}
	return 0, fmt.Errorf("unterminated quoted string")
}

// scanDollar returns the end of a $(...), $((...)) or ${...} starting at i.
func scanDollar(src string, i int) (int, error) {
	open, closing := src[i+1], byte(')')
	if open == '{' {
		closing = '}'
	}
	depth := 0
	j := i + 1
	for j < len(src) {
		c := src[j]
		switch {
		case c == '\\':
			j += 2
			continue
		case c == '\'' && open == '(':
			k := strings.IndexByte(src[j+1:], '\'')
			if k < 0 {
				return 0, fmt.Errorf("unterminated quoted string")
			}
			j += k + 2
			continue
		case c == '"' && open == '(':
			k, err := scanDouble(src, j+1)
			if err != nil {
				return 0, err
			}
			j = k + 1
			continue
		case c == open:
			depth++
		case c == closing:
			depth--
			if depth == 0 {
				return j + 1, nil
			}
		}
		j++
	}
	return 0, fmt.Errorf("missing %q", string(closing))
}

// The syntax tree.

type list struct{ items []*andOr }

type andOr struct {
	first *pipeline
	ops   []string // "&&" or "||", one per rest
	rest  []*pipeline
}

type pipeline struct {
	negate bool
	cmds   []command
}

type command interface{ isCommand() }

type redirect struct {
	fd     int
	op     string // ">", ">>", "<", ">&"
	target string // raw word
}

type simpleCmd struct {
	assigns []string
	words   []string
	redirs  []redirect
}

type loopCmd struct {
	until  bool
	cond   *list
	body   *list
	redirs []redirect
}

type forCmd struct {
	name   string
	words  []string
	hasIn  bool
	body   *list
	redirs []redirect
}

type ifCmd struct {
	conds  []*list
	bodies []*list
	orElse *list
	redirs []redirect
}

type groupCmd struct {
	body     *list
	subshell bool
	redirs   []redirect
}

func (*simpleCmd) isCommand() {}
func (*loopCmd) isCommand()   {}
func (*forCmd) isCommand()    {}
func (*ifCmd) isCommand()     {}
func (*groupCmd) isCommand()  {}

type parser struct {
	toks []token
	pos  int
}

// parseScript parses a script into a list.
func parseScript(src string) (*list, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	l, err := p.list(nil)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, fmt.Errorf("syntax error: unexpected %q", t.text())
	}
	return l, nil
}

func (t token) text() string {
	switch t.kind {
	case tNewline:
		return "newline"
	case tEOF:
		return "end of file"
	}
	return t.val
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *parser) isWord(w string) bool {
	t := p.peek()
	return t.kind == tWord && t.val == w
}

func (p *parser) skipNewlines() {
	for p.peek().kind == tNewline {
		p.next()
	}
}

var reserved = map[string]bool{"then": true, "elif": true, "else": true, "fi": true, "do": true, "done": true, "}": true}

// list parses and-or lists until EOF, a closing parenthesis or one of the
// reserved words that end a compound command.
func (p *parser) list(stop map[string]bool) (*list, error) {
	l := &list{}
	for {
		p.skipNewlines()
		t := p.peek()
		if t.kind == tEOF || (t.kind == tOp && t.val == ")") || (t.kind == tWord && (reserved[t.val] || stop[t.val])) {
			return l, nil
		}
		ao, err := p.andOr()
		if err != nil {
			return nil, err
		}
		l.items = append(l.items, ao)
		t = p.peek()
		if t.kind == tOp && (t.val == ";" || t.val == "&") {
			p.next()
		}
	}
}

func (p *parser) andOr() (*andOr, error) {
	first, err := p.pipeline()
	if err != nil {
		return nil, err
	}
	ao := &andOr{first: first}
	for {
		t := p.peek()
		if t.kind != tOp || (t.val != "&&" && t.val != "||") {
			return ao, nil
		}
		p.next()
		p.skipNewlines()
		next, err := p.pipeline()
		if err != nil {
			return nil, err
		}
		ao.ops = append(ao.ops, t.val)
		ao.rest = append(ao.rest, next)
	}
}

func (p *parser) pipeline() (*pipeline, error) {
	pl := &pipeline{}
	if p.isWord("!") {
		p.next()
		pl.negate = true
	}
	for {
		c, err := p.command()
		if err != nil {
			return nil, err
		}
		pl.cmds = append(pl.cmds, c)
		if t := p.peek(); t.kind == tOp && t.val == "|" {
			p.next()
			p.skipNewlines()
			continue
		}
		return pl, nil
	}
}

func (p *parser) expectWord(w string) error {
	p.skipNewlines()
	if !p.isWord(w) {
		return fmt.Errorf("syntax error: unexpected %q (expecting %q)", p.peek().text(), w)
	}
	p.next()
	return nil
}

func (p *parser) command() (command, error) {
	t := p.peek()
	if t.kind == tOp && t.val == "(" {
		p.next()
		body, err := p.list(nil)
		if err != nil {
			return nil, err
		}
		if t := p.next(); t.kind != tOp || t.val != ")" {
			return nil, fmt.Errorf("syntax error: unexpected %q (expecting \")\")", t.text())
		}
		g := &groupCmd{body: body, subshell: true}
		return g, p.redirects(&g.redirs)
	}
	if t.kind != tWord {
		return nil, fmt.Errorf("syntax error: unexpected %q", t.text())
	}
	switch t.val {
	case "while", "until":
		p.next()
		cond, err := p.list(map[string]bool{"do": true})
		if err != nil {
			return nil, err
		}
		if err := p.expectWord("do"); err != nil {
			return nil, err
		}
		body, err := p.list(nil)
		if err != nil {
			return nil, err
		}
		if err := p.expectWord("done"); err != nil {
			return nil, err
		}
		c := &loopCmd{until: t.val == "until", cond: cond, body: body}
		return c, p.redirects(&c.redirs)
	case "for":
		p.next()
		name := p.next()
		if name.kind != tWord {
			return nil, fmt.Errorf("syntax error: bad for loop variable")
		}
		c := &forCmd{name: name.val}
		if p.isWord("in") {
			p.next()
			c.hasIn = true
			for p.peek().kind == tWord {
				c.words = append(c.words, p.next().val)
			}
		}
		if t := p.peek(); t.kind == tOp && t.val == ";" {
			p.next()
		}
		if err := p.expectWord("do"); err != nil {
			return nil, err
		}
		body, err := p.list(nil)
		if err != nil {
			return nil, err
		}
		if err := p.expectWord("done"); err != nil {
			return nil, err
		}
		c.body = body
		return c, p.redirects(&c.redirs)
	case "if":
		p.next()
		c := &ifCmd{}
		for {
			cond, err := p.list(nil)
			if err != nil {
				return nil, err
			}
			if err := p.expectWord("then"); err != nil {
				return nil, err
			}
			body, err := p.list(nil)
			if err != nil {
				return nil, err
			}
			c.conds, c.bodies = append(c.conds, cond), append(c.bodies, body)
			p.skipNewlines()
			if p.isWord("elif") {
				p.next()
				continue
			}
			break
		}
		if p.isWord("else") {
			p.next()
			orElse, err := p.list(nil)
			if err != nil {
				return nil, err
			}
			c.orElse = orElse
		}
		if err := p.expectWord("fi"); err != nil {
			return nil, err
		}
		return c, p.redirects(&c.redirs)
	case "{":
		p.next()
		body, err := p.list(nil)
		if err != nil {
			return nil, err
		}
		if err := p.expectWord("}"); err != nil {
			return nil, err
		}
		g := &groupCmd{body: body}
		return g, p.redirects(&g.redirs)
	case "case", "function", "select":
		return nil, fmt.Errorf("%q is not supported", t.val)
	}
	return p.simple()
}

func (p *parser) simple() (command, error) {
	c := &simpleCmd{}
	for {
		t := p.peek()
		switch {
		case t.kind == tWord:
			p.next()
			if len(c.words) == 0 && isAssignment(t.val) {
				c.assigns = append(c.assigns, t.val)
				continue
			}
			if len(c.words) == 0 && p.peek().kind == tOp && p.peek().val == "(" {
				return nil, fmt.Errorf("shell functions are not supported")
			}
			c.words = append(c.words, t.val)
		case t.kind == tOp && isRedirectOp(t.val):
			if err := p.redirect(&c.redirs); err != nil {
				return nil, err
			}
		default:
			if len(c.words) == 0 && len(c.assigns) == 0 && len(c.redirs) == 0 {
				return nil, fmt.Errorf("syntax error: unexpected %q", t.text())
			}
			return c, nil
		}
	}
}

func isRedirectOp(op string) bool {
	op = strings.TrimLeft(op, "0123456789")
	switch op {
	case ">", ">>", "<", ">&", "&>":
		return true
	}
	return false
}

func (p *parser) redirects(rs *[]redirect) error {
	for {
		t := p.peek()
		if t.kind != tOp || !isRedirectOp(t.val) {
			return nil
		}
		if err := p.redirect(rs); err != nil {
			return err
		}
	}
}

func (p *parser) redirect(rs *[]redirect) error {
	t := p.next()
	digits := strings.TrimRight(t.val, "<>&")
	op := t.val[len(digits):]
	fd := 1
	if op == "<" {
		fd = 0
	}
	if digits != "" {
		fmt.Sscan(digits, &fd)
	}
	target := p.next()
	if target.kind != tWord {
		return fmt.Errorf("syntax error: unexpected %q", target.text())
	}
	if op == "&>" {
		*rs = append(*rs, redirect{fd: 1, op: ">", target: target.val}, redirect{fd: 2, op: ">&", target: "1"})
		return nil
	}
	*rs = append(*rs, redirect{fd: fd, op: op, target: target.val})
	return nil
}

// isAssignment tells whether a raw word is NAME=value.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	return ok && isName(name)
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return true
}
