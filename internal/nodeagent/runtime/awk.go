package runtime

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// uAwk is the part of awk that container scripts use in one-liners:
// -F and -v, BEGIN and END blocks, rules whose pattern is a regular
// expression (/re/, $N ~ /re/) or a comparison (NR==1, $3 > 10), and
// actions of print statements over fields ($1, $NF, $0), NR, NF,
// variables and string literals, concatenated or comma-separated. A
// program beyond that is refused with a message saying so and exit
// status 2, never run wrong.
func uAwk(c *call, argv []string) (int, error) {
	fs, vars := "", map[string]string{}
	args := argv[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		a := args[0]
		switch {
		case a == "-F" && len(args) > 1:
			fs, args = args[1], args[2:]
		case strings.HasPrefix(a, "-F"):
			fs, args = a[2:], args[1:]
		case a == "-v" && len(args) > 1:
			k, v, _ := strings.Cut(args[1], "=")
			vars[k], args = v, args[2:]
		default:
			fmt.Fprintf(c.stderr, "awk: unrecognized option '%s'\n", a)
			return 1, nil
		}
	}
	if len(args) == 0 {
		fmt.Fprintln(c.stderr, "Usage: awk [OPTIONS] [AWK_PROGRAM] [FILE]...")
		return 1, nil
	}
	prog, err := parseAwk(args[0])
	if err != nil {
		fmt.Fprintf(c.stderr, "awk: cmd. line:1: %v\n", err)
		return 2, nil
	}
	in, code := c.inputs("awk", args[1:])
	st := &awkState{vars: vars, fs: fs}
	for _, r := range prog.begin {
		st.run(c, r)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxInput)
	for sc.Scan() {
		st.setRecord(sc.Text())
		st.nr++
		for _, r := range prog.rules {
			if r.pattern == nil || r.pattern(st) {
				st.run(c, r)
			}
		}
	}
	for _, r := range prog.end {
		st.run(c, r)
	}
	return code, nil
}

// awkProgram is a parsed program: its BEGIN, main and END rules.
type awkProgram struct {
	begin, rules, end []awkRule
}

// awkRule is a pattern (nil matches every record) and its print
// statements (nil prints the record).
type awkRule struct {
	pattern func(*awkState) bool
	prints  [][]awkExpr
}

// awkExpr is one printed value: its terms, concatenated.
type awkExpr []func(*awkState) string

// awkState is the record being read and the program's variables.
type awkState struct {
	vars   map[string]string
	fs     string
	record string
	fields []string
	nr     int
}

func (st *awkState) setRecord(line string) {
	st.record = line
	switch {
	case st.fs == "" || st.fs == " ":
		st.fields = strings.Fields(line)
	case len(st.fs) == 1 && st.fs != "\\":
		st.fields = strings.Split(line, st.fs)
	default:
		if re, err := regexp.Compile(st.fs); err == nil {
			st.fields = re.Split(line, -1)
		} else {
			st.fields = strings.Split(line, st.fs)
		}
	}
	if line == "" {
		st.fields = nil
	}
}

func (st *awkState) field(i int) string {
	switch {
	case i == 0:
		return st.record
	case i > 0 && i <= len(st.fields):
		return st.fields[i-1]
	}
	return ""
}

func (st *awkState) run(c *call, r awkRule) {
	if r.prints == nil {
		fmt.Fprintln(c.stdout, st.record)
		return
	}
	for _, p := range r.prints {
		vals := make([]string, len(p))
		for i, e := range p {
			var b strings.Builder
			for _, t := range e {
				b.WriteString(t(st))
			}
			vals[i] = b.String()
		}
		if len(p) == 0 {
			vals = []string{st.record}
		}
		fmt.Fprintln(c.stdout, strings.Join(vals, " "))
	}
}

// awkToken splits a program into its tokens.
var awkToken = regexp.MustCompile(`\s*(BEGIN|END|/(?:[^/\\]|\\.)*/|"(?:[^"\\]|\\.)*"|\$NF|\$\d+|[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|==|!=|<=|>=|!~|[{}();,<>~])`)

// parseAwk parses the subset uAwk runs.
func parseAwk(src string) (*awkProgram, error) {
	var toks []string
	rest := strings.TrimSpace(src)
	for rest != "" {
		m := awkToken.FindStringSubmatchIndex(rest)
		if m == nil || m[0] != 0 {
			return nil, fmt.Errorf("minik's awk does not run this program: %q", src)
		}
		toks = append(toks, rest[m[2]:m[3]])
		rest = strings.TrimSpace(rest[m[1]:])
	}
	p := &awkProgram{}
	unsupported := fmt.Errorf("minik's awk does not run this program: %q", src)
	for i := 0; i < len(toks); {
		kind := ""
		if toks[i] == "BEGIN" || toks[i] == "END" {
			kind, i = toks[i], i+1
		}
		var r awkRule
		if i < len(toks) && toks[i] != "{" {
			j := i
			for j < len(toks) && toks[j] != "{" && toks[j] != ";" {
				j++
			}
			pat, err := awkPattern(toks[i:j])
			if err != nil {
				return nil, unsupported
			}
			r.pattern, i = pat, j
		}
		if i < len(toks) && toks[i] == "{" {
			j := i + 1
			for j < len(toks) && toks[j] != "}" {
				j++
			}
			if j == len(toks) {
				return nil, unsupported
			}
			prints, err := awkAction(toks[i+1 : j])
			if err != nil {
				return nil, unsupported
			}
			r.prints, i = prints, j+1
		}
		for i < len(toks) && toks[i] == ";" {
			i++
		}
		switch kind {
		case "BEGIN":
			p.begin = append(p.begin, r)
		case "END":
			p.end = append(p.end, r)
		default:
			p.rules = append(p.rules, r)
		}
	}
	return p, nil
}

// awkTerm is a value: a field, NR, NF, a variable or a literal.
func awkTerm(tok string) (func(*awkState) string, error) {
	switch {
	case tok == "$NF":
		return func(st *awkState) string { return st.field(len(st.fields)) }, nil
	case strings.HasPrefix(tok, "$"):
		n, err := strconv.Atoi(tok[1:])
		if err != nil {
			return nil, err
		}
		return func(st *awkState) string { return st.field(n) }, nil
	case tok == "NR":
		return func(st *awkState) string { return strconv.Itoa(st.nr) }, nil
	case tok == "NF":
		return func(st *awkState) string { return strconv.Itoa(len(st.fields)) }, nil
	case strings.HasPrefix(tok, `"`):
		s, err := strconv.Unquote(tok)
		if err != nil {
			return nil, err
		}
		return func(*awkState) string { return s }, nil
	case tok[0] >= '0' && tok[0] <= '9':
		return func(*awkState) string { return tok }, nil
	case tok[0] == '_' || tok[0] >= 'A' && tok[0] <= 'z':
		return func(st *awkState) string { return st.vars[tok] }, nil
	}
	return nil, fmt.Errorf("unexpected %q", tok)
}

// awkPattern is /re/, a term ~ /re/ (or !~), or a comparison of two terms.
func awkPattern(toks []string) (func(*awkState) bool, error) {
	regex := func(tok string) (*regexp.Regexp, error) {
		if len(tok) < 2 || tok[0] != '/' || tok[len(tok)-1] != '/' {
			return nil, fmt.Errorf("not a regular expression: %q", tok)
		}
		return regexp.Compile(tok[1 : len(tok)-1])
	}
	switch len(toks) {
	case 1:
		re, err := regex(toks[0])
		if err != nil {
			return nil, err
		}
		return func(st *awkState) bool { return re.MatchString(st.record) }, nil
	case 3:
		left, err := awkTerm(toks[0])
		if err != nil {
			return nil, err
		}
		if op := toks[1]; op == "~" || op == "!~" {
			re, err := regex(toks[2])
			if err != nil {
				return nil, err
			}
			return func(st *awkState) bool { return re.MatchString(left(st)) == (op == "~") }, nil
		}
		right, err := awkTerm(toks[2])
		if err != nil {
			return nil, err
		}
		op := toks[1]
		return func(st *awkState) bool { return awkCompare(left(st), op, right(st)) }, nil
	}
	return nil, fmt.Errorf("unsupported pattern")
}

// awkCompare compares as awk does: as numbers when both are, else as
// strings.
func awkCompare(a, op, b string) bool {
	c := strings.Compare(a, b)
	x, errA := strconv.ParseFloat(strings.TrimSpace(a), 64)
	y, errB := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if errA == nil && errB == nil {
		switch {
		case x < y:
			c = -1
		case x > y:
			c = 1
		default:
			c = 0
		}
	}
	switch op {
	case "==":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}

// awkAction parses print statements separated by semicolons.
func awkAction(toks []string) ([][]awkExpr, error) {
	prints := [][]awkExpr{}
	for i := 0; i < len(toks); {
		if toks[i] == ";" {
			i++
			continue
		}
		if toks[i] != "print" {
			return nil, fmt.Errorf("unsupported statement %q", toks[i])
		}
		i++
		var exprs []awkExpr
		var cur awkExpr
		for ; i < len(toks) && toks[i] != ";"; i++ {
			if toks[i] == "," {
				exprs, cur = append(exprs, cur), nil
				continue
			}
			t, err := awkTerm(toks[i])
			if err != nil {
				return nil, err
			}
			cur = append(cur, t)
		}
		if cur != nil {
			exprs = append(exprs, cur)
		}
		prints = append(prints, exprs)
	}
	return prints, nil
}
