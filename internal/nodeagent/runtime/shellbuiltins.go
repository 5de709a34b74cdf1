package runtime

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// builtin runs a utility of the simulated shell and returns its exit
// status.
type builtin func(sh *shell, argv []string) (int, error)

// builtins are the utilities every shell image has (busybox's applets,
// or coreutils'): what scripts in manifests use.
var builtins map[string]builtin

func init() {
	builtins = map[string]builtin{
		"echo": biEcho, "printf": biPrintf, "sleep": biSleep, "exit": biExit,
		"true": biTrue, ":": biTrue, "false": biFalse, "test": biTest, "[": biTest,
		"cat": biCat, "touch": biTouch, "rm": biRm, "mkdir": biMkdir, "ls": biLs,
		"env": biEnv, "printenv": biPrintenv, "hostname": biHostname, "date": biDate,
		"export": biExport, "unset": biUnset, "cd": biTrue, "pwd": biPwd, "wait": biTrue,
		"trap": biTrap, "exec": biExec, "seq": biSeq, "expr": biExpr, "grep": biGrep,
		"wc": biWc, "head": biHead, "tail": biTail, "uname": biUname, "whoami": biWhoami,
		"id": biID, "basename": biBasename, "dirname": biDirname, "read": biRead,
		"wget": biWget, "curl": biCurl, "nc": biNc, "break": biBreak, "continue": biContinue,
		"sh": biSh, "bash": biSh, "ash": biSh, "dash": biSh, "tee": biTee, "kill": biTrue,
		"yes": biYes, "set": biSet,
	}
}

func biTrue(*shell, []string) (int, error)  { return 0, nil }
func biFalse(*shell, []string) (int, error) { return 1, nil }

func biEcho(sh *shell, argv []string) (int, error) {
	args := argv[1:]
	newline, escapes := true, false
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
		if strings.Contains(args[0], "n") {
			newline = false
		}
		if strings.Contains(args[0], "e") {
			escapes = true
		}
		args = args[1:]
	}
	s := strings.Join(args, " ")
	if escapes {
		s = unescape(s)
	}
	if newline {
		s += "\n"
	}
	_, _ = io.WriteString(sh.stdout, s)
	return 0, nil
}

func unescape(s string) string {
	r := strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`, `\r`, "\r", `\e`, "\x1b", `\033`, "\x1b")
	return r.Replace(s)
}

func biPrintf(sh *shell, argv []string) (int, error) {
	if len(argv) < 2 {
		fmt.Fprintln(sh.stderr, "printf: usage: printf FORMAT [ARGUMENT]...")
		return 1, nil
	}
	format, args := unescape(argv[1]), argv[2:]
	for {
		var out strings.Builder
		used := 0
		for i := 0; i < len(format); i++ {
			c := format[i]
			if c != '%' || i+1 >= len(format) {
				out.WriteByte(c)
				continue
			}
			j := i + 1
			for j < len(format) && strings.ContainsRune("-+ 0#.0123456789", rune(format[j])) {
				j++
			}
			if j >= len(format) {
				out.WriteString(format[i:])
				break
			}
			spec, verb := format[i+1:j], format[j]
			i = j
			if verb == '%' {
				out.WriteByte('%')
				continue
			}
			arg := ""
			if used < len(args) {
				arg = args[used]
			}
			used++
			switch verb {
			case 'd', 'i':
				n, _ := strconv.ParseInt(arg, 10, 64)
				fmt.Fprintf(&out, "%"+spec+"d", n)
			case 'f':
				f, _ := strconv.ParseFloat(arg, 64)
				fmt.Fprintf(&out, "%"+spec+"f", f)
			default:
				fmt.Fprintf(&out, "%"+spec+"s", arg)
			}
		}
		_, _ = io.WriteString(sh.stdout, out.String())
		if used == 0 || used >= len(args) {
			return 0, nil
		}
		args = args[used:]
	}
}

// parseDuration reads sleep's arguments: seconds with an optional s, m,
// h or d suffix, or "infinity".
func parseDuration(s string) (time.Duration, bool) {
	if s == "infinity" || s == "inf" {
		return time.Duration(math.MaxInt64), true
	}
	mult := time.Second
	switch {
	case strings.HasSuffix(s, "s"):
		s = strings.TrimSuffix(s, "s")
	case strings.HasSuffix(s, "m"):
		s, mult = strings.TrimSuffix(s, "m"), time.Minute
	case strings.HasSuffix(s, "h"):
		s, mult = strings.TrimSuffix(s, "h"), time.Hour
	case strings.HasSuffix(s, "d"):
		s, mult = strings.TrimSuffix(s, "d"), 24*time.Hour
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return 0, false
	}
	return time.Duration(f * float64(mult)), true
}

func biSleep(sh *shell, argv []string) (int, error) {
	if len(argv) < 2 {
		fmt.Fprintln(sh.stderr, "sleep: missing operand")
		return 1, nil
	}
	var total time.Duration
	for _, a := range argv[1:] {
		d, ok := parseDuration(a)
		if !ok {
			fmt.Fprintf(sh.stderr, "sleep: invalid number '%s'\n", a)
			return 1, nil
		}
		if d == time.Duration(math.MaxInt64) {
			total = d
			break
		}
		total += d
	}
	if err := sh.p.sleep(sh, total); err != nil {
		return 0, err
	}
	return 0, nil
}

func biExit(sh *shell, argv []string) (int, error) {
	code := sh.status
	if len(argv) > 1 {
		n, err := strconv.Atoi(argv[1])
		if err != nil {
			fmt.Fprintf(sh.stderr, "sh: exit: Illegal number: %s\n", argv[1])
			return 0, exitError{2}
		}
		code = n & 0xff
	}
	return 0, exitError{code}
}

func biBreak(_ *shell, argv []string) (int, error) {
	n := 1
	if len(argv) > 1 {
		n, _ = strconv.Atoi(argv[1])
	}
	return 0, loopControl{brk: true, n: max(n, 1)}
}

func biContinue(_ *shell, argv []string) (int, error) {
	n := 1
	if len(argv) > 1 {
		n, _ = strconv.Atoi(argv[1])
	}
	return 0, loopControl{n: max(n, 1)}
}

func biTest(sh *shell, argv []string) (int, error) {
	args := argv[1:]
	if argv[0] == "[" {
		if len(args) == 0 || args[len(args)-1] != "]" {
			fmt.Fprintln(sh.stderr, "sh: [: missing ]")
			return 2, nil
		}
		args = args[:len(args)-1]
	}
	ok, err := sh.evalTest(args)
	if err != nil {
		fmt.Fprintf(sh.stderr, "sh: %s: %v\n", argv[0], err)
		return 2, nil
	}
	if ok {
		return 0, nil
	}
	return 1, nil
}

func (sh *shell) evalTest(args []string) (bool, error) {
	// -o binds looser than -a, which binds looser than !.
	for i := len(args) - 1; i > 0; i-- {
		if args[i] == "-o" && i < len(args)-1 {
			l, err := sh.evalTest(args[:i])
			if err != nil {
				return false, err
			}
			r, err := sh.evalTest(args[i+1:])
			return l || r, err
		}
	}
	for i := len(args) - 1; i > 0; i-- {
		if args[i] == "-a" && i < len(args)-1 {
			l, err := sh.evalTest(args[:i])
			if err != nil {
				return false, err
			}
			r, err := sh.evalTest(args[i+1:])
			return l && r, err
		}
	}
	if len(args) > 0 && args[0] == "!" {
		ok, err := sh.evalTest(args[1:])
		return !ok, err
	}
	switch len(args) {
	case 0:
		return false, nil
	case 1:
		return args[0] != "", nil
	case 2:
		op, x := args[0], args[1]
		switch op {
		case "-z":
			return x == "", nil
		case "-n":
			return x != "", nil
		case "-e", "-r", "-w", "-x":
			exists, _ := sh.p.fs.stat(x)
			return exists, nil
		case "-f":
			exists, dir := sh.p.fs.stat(x)
			return exists && !dir, nil
		case "-d":
			exists, dir := sh.p.fs.stat(x)
			return exists && dir, nil
		case "-s":
			data, err := sh.p.fs.read(x)
			return err == nil && len(data) > 0, nil
		}
		return false, fmt.Errorf("%s: unknown operand", op)
	case 3:
		a, op, b := args[0], args[1], args[2]
		switch op {
		case "=", "==":
			return a == b, nil
		case "!=":
			return a != b, nil
		case "-eq", "-ne", "-lt", "-le", "-gt", "-ge":
			x, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
			y, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
			if err1 != nil {
				return false, fmt.Errorf("%s: bad number", a)
			}
			if err2 != nil {
				return false, fmt.Errorf("%s: bad number", b)
			}
			switch op {
			case "-eq":
				return x == y, nil
			case "-ne":
				return x != y, nil
			case "-lt":
				return x < y, nil
			case "-le":
				return x <= y, nil
			case "-gt":
				return x > y, nil
			}
			return x >= y, nil
		}
	}
	return false, fmt.Errorf("syntax error")
}

// input returns the contents of the files named, or stdin.
func (sh *shell) input(name string, files []string) ([]byte, int) {
	if len(files) == 0 || len(files) == 1 && files[0] == "-" {
		return sh.stdin, 0
	}
	var buf bytes.Buffer
	code := 0
	for _, f := range files {
		data, err := sh.p.fs.read(f)
		if err != nil {
			fmt.Fprintf(sh.stderr, "%s: can't open '%s': %v\n", name, f, err)
			code = 1
			continue
		}
		buf.Write(data)
	}
	return buf.Bytes(), code
}

func biCat(sh *shell, argv []string) (int, error) {
	data, code := sh.input("cat", argv[1:])
	_, _ = sh.stdout.Write(data)
	return code, nil
}

func biTee(sh *shell, argv []string) (int, error) {
	_, _ = sh.stdout.Write(sh.stdin)
	for _, f := range argv[1:] {
		if strings.HasPrefix(f, "-") {
			continue
		}
		_ = sh.p.fs.write(f, sh.stdin, false)
	}
	return 0, nil
}

func biTouch(sh *shell, argv []string) (int, error) {
	code := 0
	for _, f := range argv[1:] {
		if strings.HasPrefix(f, "-") {
			continue
		}
		if exists, _ := sh.p.fs.stat(f); exists {
			continue
		}
		if err := sh.p.fs.write(f, nil, false); err != nil {
			fmt.Fprintf(sh.stderr, "touch: %s: %v\n", f, err)
			code = 1
		}
	}
	return code, nil
}

func biRm(sh *shell, argv []string) (int, error) {
	force := false
	code := 0
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			force = force || strings.Contains(a, "f")
			continue
		}
		if err := sh.p.fs.remove(a); err != nil {
			if err == errNotExist && force {
				continue
			}
			fmt.Fprintf(sh.stderr, "rm: can't remove '%s': %v\n", a, err)
			code = 1
		}
	}
	return code, nil
}

// dirMarker keeps an empty directory made by mkdir; ls hides it.
const dirMarker = "\x00dir"

func biMkdir(sh *shell, argv []string) (int, error) {
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if err := sh.p.fs.write(strings.TrimSuffix(a, "/")+"/"+dirMarker, nil, false); err != nil {
			fmt.Fprintf(sh.stderr, "mkdir: can't create directory '%s': %v\n", a, err)
			return 1, nil
		}
	}
	return 0, nil
}

func biLs(sh *shell, argv []string) (int, error) {
	paths := []string{}
	for _, a := range argv[1:] {
		if !strings.HasPrefix(a, "-") {
			paths = append(paths, a)
		}
	}
	if len(paths) == 0 {
		paths = []string{"/"}
	}
	code := 0
	for _, p := range paths {
		names, err := sh.p.fs.list(p)
		if err != nil {
			fmt.Fprintf(sh.stderr, "ls: %s: %v\n", p, err)
			code = 1
			continue
		}
		for _, n := range names {
			if n != dirMarker {
				fmt.Fprintln(sh.stdout, n)
			}
		}
	}
	return code, nil
}

func biEnv(sh *shell, argv []string) (int, error) {
	if len(argv) > 1 {
		return sh.exec(argv[1:], false)
	}
	for _, kv := range sh.environ() {
		fmt.Fprintln(sh.stdout, kv)
	}
	return 0, nil
}

func biPrintenv(sh *shell, argv []string) (int, error) {
	if len(argv) == 1 {
		return biEnv(sh, argv[:1])
	}
	code := 0
	for _, name := range argv[1:] {
		v, ok := sh.vars[name]
		if !ok {
			code = 1
			continue
		}
		fmt.Fprintln(sh.stdout, v)
	}
	return code, nil
}

func biHostname(sh *shell, _ []string) (int, error) {
	fmt.Fprintln(sh.stdout, sh.p.spec.Hostname)
	return 0, nil
}

func biDate(sh *shell, argv []string) (int, error) {
	now := sh.p.clock.Now().UTC()
	if len(argv) > 1 && strings.HasPrefix(argv[1], "+") {
		r := strings.NewReplacer("%s", strconv.FormatInt(now.Unix(), 10), "%Y", now.Format("2006"), "%m", now.Format("01"),
			"%d", now.Format("02"), "%H", now.Format("15"), "%M", now.Format("04"), "%S", now.Format("05"),
			"%T", now.Format("15:04:05"), "%F", now.Format("2006-01-02"), "%Z", "UTC", "%z", "+0000", "%N", fmt.Sprintf("%09d", now.Nanosecond()), "%%", "%")
		fmt.Fprintln(sh.stdout, r.Replace(argv[1][1:]))
		return 0, nil
	}
	fmt.Fprintln(sh.stdout, now.Format("Mon Jan _2 15:04:05 UTC 2006"))
	return 0, nil
}

func biExport(sh *shell, argv []string) (int, error) {
	for _, a := range argv[1:] {
		if name, v, ok := strings.Cut(a, "="); ok {
			sh.vars[name] = v
		}
	}
	return 0, nil
}

func biUnset(sh *shell, argv []string) (int, error) {
	for _, a := range argv[1:] {
		delete(sh.vars, a)
	}
	return 0, nil
}

func biPwd(sh *shell, _ []string) (int, error) {
	fmt.Fprintln(sh.stdout, "/")
	return 0, nil
}

// biTrap records the actions of TERM, INT and EXIT; a trapped SIGTERM
// runs its action instead of being ignored.
func biTrap(sh *shell, argv []string) (int, error) {
	if len(argv) < 3 {
		return 0, nil
	}
	action := argv[1]
	for _, sig := range argv[2:] {
		sig = strings.TrimPrefix(strings.ToUpper(sig), "SIG")
		switch sig {
		case "15":
			sig = "TERM"
		case "2":
			sig = "INT"
		case "0":
			sig = "EXIT"
		}
		if action == "-" {
			delete(sh.traps, sig)
		} else {
			sh.traps[sig] = action
		}
	}
	return 0, nil
}

func biExec(sh *shell, argv []string) (int, error) {
	if len(argv) == 1 {
		return 0, nil
	}
	code, err := sh.exec(argv[1:], true)
	if err != nil {
		return 0, err
	}
	return 0, exitError{code}
}

func biSh(sh *shell, argv []string) (int, error) {
	return sh.p.runShell(sh, argv)
}

func biSeq(sh *shell, argv []string) (int, error) {
	nums := make([]int64, 0, 3)
	for _, a := range argv[1:] {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			fmt.Fprintf(sh.stderr, "seq: invalid number '%s'\n", a)
			return 1, nil
		}
		nums = append(nums, n)
	}
	first, step, last := int64(1), int64(1), int64(0)
	switch len(nums) {
	case 1:
		last = nums[0]
	case 2:
		first, last = nums[0], nums[1]
	case 3:
		first, step, last = nums[0], nums[1], nums[2]
	default:
		fmt.Fprintln(sh.stderr, "seq: missing operand")
		return 1, nil
	}
	for i := first; step > 0 && i <= last || step < 0 && i >= last; i += step {
		fmt.Fprintln(sh.stdout, i)
	}
	return 0, nil
}

func biExpr(sh *shell, argv []string) (int, error) {
	n, err := sh.arith(strings.Join(argv[1:], " "))
	if err != nil {
		fmt.Fprintf(sh.stderr, "expr: syntax error\n")
		return 2, nil
	}
	fmt.Fprintln(sh.stdout, n)
	if n == 0 {
		return 1, nil
	}
	return 0, nil
}

func biGrep(sh *shell, argv []string) (int, error) {
	quiet, invert, count, fold := false, false, false, false
	var rest []string
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") && len(a) > 1 && len(rest) == 0 {
			quiet = quiet || strings.Contains(a, "q")
			invert = invert || strings.Contains(a, "v")
			count = count || strings.Contains(a, "c")
			fold = fold || strings.Contains(a, "i")
			continue
		}
		rest = append(rest, a)
	}
	if len(rest) == 0 {
		fmt.Fprintln(sh.stderr, "grep: no pattern")
		return 2, nil
	}
	pat := rest[0]
	if fold {
		pat = "(?i)" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		re = regexp.MustCompile(regexp.QuoteMeta(rest[0]))
	}
	data, code := sh.input("grep", rest[1:])
	matched := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if re.MatchString(sc.Text()) != invert {
			matched++
			if !quiet && !count {
				fmt.Fprintln(sh.stdout, sc.Text())
			}
		}
	}
	if count {
		fmt.Fprintln(sh.stdout, matched)
	}
	if code != 0 {
		return 2, nil
	}
	if matched == 0 {
		return 1, nil
	}
	return 0, nil
}

func biWc(sh *shell, argv []string) (int, error) {
	var files []string
	mode := ""
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") {
			mode = a
			continue
		}
		files = append(files, a)
	}
	data, code := sh.input("wc", files)
	lines, words := bytes.Count(data, []byte("\n")), len(strings.Fields(string(data)))
	switch mode {
	case "-l":
		fmt.Fprintln(sh.stdout, lines)
	case "-w":
		fmt.Fprintln(sh.stdout, words)
	case "-c":
		fmt.Fprintln(sh.stdout, len(data))
	default:
		fmt.Fprintf(sh.stdout, "%7d %7d %7d\n", lines, words, len(data))
	}
	return code, nil
}

func headTailArgs(argv []string) (int, []string) {
	n := 10
	var files []string
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-n" && i+1 < len(argv):
			n, _ = strconv.Atoi(argv[i+1])
			i++
		case strings.HasPrefix(a, "-n"):
			n, _ = strconv.Atoi(a[2:])
		case strings.HasPrefix(a, "-") && isDigits(a[1:]):
			n, _ = strconv.Atoi(a[1:])
		default:
			files = append(files, a)
		}
	}
	return n, files
}

func splitLines(data []byte) []string {
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func biHead(sh *shell, argv []string) (int, error) {
	n, files := headTailArgs(argv)
	data, code := sh.input("head", files)
	lines := splitLines(data)
	for i := 0; i < n && i < len(lines); i++ {
		fmt.Fprintln(sh.stdout, lines[i])
	}
	return code, nil
}

func biTail(sh *shell, argv []string) (int, error) {
	n, files := headTailArgs(argv)
	data, code := sh.input("tail", files)
	lines := splitLines(data)
	for i := max(0, len(lines)-n); i < len(lines); i++ {
		fmt.Fprintln(sh.stdout, lines[i])
	}
	return code, nil
}

func biUname(sh *shell, argv []string) (int, error) {
	if len(argv) > 1 && argv[1] == "-a" {
		fmt.Fprintf(sh.stdout, "Linux %s 6.8.0-minik #1 SMP x86_64 GNU/Linux\n", sh.p.spec.Hostname)
		return 0, nil
	}
	fmt.Fprintln(sh.stdout, "Linux")
	return 0, nil
}

func biWhoami(sh *shell, _ []string) (int, error) {
	fmt.Fprintln(sh.stdout, "root")
	return 0, nil
}

func biID(sh *shell, _ []string) (int, error) {
	fmt.Fprintln(sh.stdout, "uid=0(root) gid=0(root) groups=0(root)")
	return 0, nil
}

func biBasename(sh *shell, argv []string) (int, error) {
	if len(argv) > 1 {
		fmt.Fprintln(sh.stdout, baseName(strings.TrimSuffix(argv[1], "/")))
	}
	return 0, nil
}

func biDirname(sh *shell, argv []string) (int, error) {
	if len(argv) > 1 {
		p := strings.TrimSuffix(argv[1], "/")
		i := strings.LastIndex(p, "/")
		switch {
		case i < 0:
			p = "."
		case i == 0:
			p = "/"
		default:
			p = p[:i]
		}
		fmt.Fprintln(sh.stdout, p)
	}
	return 0, nil
}

func biRead(sh *shell, argv []string) (int, error) {
	if len(sh.stdin) == 0 {
		return 1, nil
	}
	line, rest, _ := bytes.Cut(sh.stdin, []byte("\n"))
	sh.stdin = rest
	names := []string{}
	for _, a := range argv[1:] {
		if !strings.HasPrefix(a, "-") {
			names = append(names, a)
		}
	}
	if len(names) == 0 {
		names = []string{"REPLY"}
	}
	fields := strings.Fields(string(line))
	for i, n := range names {
		switch {
		case i == len(names)-1 && i < len(fields):
			sh.vars[n] = strings.Join(fields[i:], " ")
		case i < len(fields):
			sh.vars[n] = fields[i]
		default:
			sh.vars[n] = ""
		}
	}
	return 0, nil
}

func biYes(sh *shell, argv []string) (int, error) {
	fmt.Fprintf(sh.stderr, "yes: not supported by minik's simulated shell\n")
	return 1, nil
}

// httpGet fetches a URL for wget and curl: a real request, so that a pod
// can call another pod (or a Service's address) on loopback. Names other
// than IP addresses and localhost do not resolve.
func (sh *shell) httpGet(tool, rawURL string) (*http.Response, []byte, error) {
	if !strings.Contains(rawURL, "://") {
		rawURL = "http://" + rawURL
	}
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, nil, err
	}
	host := req.URL.Hostname()
	if net.ParseIP(host) == nil && host != "localhost" {
		return nil, nil, fmt.Errorf("bad address '%s'", host)
	}
	if host == "localhost" {
		req.URL.Host = strings.Replace(req.URL.Host, "localhost", sh.p.spec.IP, 1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		select {
		case <-sh.p.killC:
			cancel()
		case <-ctx.Done():
		}
	}()
	req = req.WithContext(ctx)
	req.Header.Set("User-Agent", tool)
	resp, err := sh.p.httpClient().Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp, body, err
}

func biWget(sh *shell, argv []string) (int, error) {
	quiet, toStdout, spider := false, false, false
	out, url := "", ""
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-O" && i+1 < len(argv):
			out = argv[i+1]
			i++
		case a == "--spider":
			spider = true
		case a == "-q" || a == "--quiet":
			quiet = true
		case strings.HasPrefix(a, "-") && strings.Contains(a, "O"):
			quiet = quiet || strings.Contains(a, "q")
			if strings.HasSuffix(a, "O-") {
				toStdout = true
			} else if i+1 < len(argv) {
				out = argv[i+1]
				i++
			}
		case strings.HasPrefix(a, "-"):
			quiet = quiet || strings.Contains(a, "q")
		default:
			url = a
		}
	}
	if out == "-" {
		toStdout = true
	}
	if url == "" {
		fmt.Fprintln(sh.stderr, "wget: missing URL")
		return 1, nil
	}
	if !quiet {
		fmt.Fprintf(sh.stderr, "Connecting to %s\n", strings.TrimPrefix(strings.TrimPrefix(url, "http://"), "https://"))
	}
	resp, body, err := sh.httpGet("Wget", url)
	if err != nil {
		fmt.Fprintf(sh.stderr, "wget: %v\n", shortNetError(err))
		return 1, nil
	}
	if resp.StatusCode >= 400 {
		fmt.Fprintf(sh.stderr, "wget: server returned error: HTTP/1.1 %s\n", resp.Status)
		return 1, nil
	}
	switch {
	case spider:
	case toStdout:
		_, _ = sh.stdout.Write(body)
	default:
		if out == "" {
			out = "index.html"
		}
		_ = sh.p.fs.write(out, body, false)
	}
	return 0, nil
}

func biCurl(sh *shell, argv []string) (int, error) {
	fail, silent := false, false
	out, url := "", ""
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-o" && i+1 < len(argv):
			out = argv[i+1]
			i++
		case strings.HasPrefix(a, "--"):
			fail = fail || a == "--fail"
			silent = silent || a == "--silent"
		case strings.HasPrefix(a, "-"):
			fail = fail || strings.Contains(a, "f")
			silent = silent || strings.Contains(a, "s")
		default:
			url = a
		}
	}
	if url == "" {
		fmt.Fprintln(sh.stderr, "curl: no URL specified")
		return 2, nil
	}
	resp, body, err := sh.httpGet("curl/8.5.0", url)
	if err != nil {
		if !silent {
			fmt.Fprintf(sh.stderr, "curl: (7) %v\n", shortNetError(err))
		}
		if strings.Contains(err.Error(), "bad address") {
			return 6, nil
		}
		return 7, nil
	}
	if fail && resp.StatusCode >= 400 {
		if !silent {
			fmt.Fprintf(sh.stderr, "curl: (22) The requested URL returned error: %d\n", resp.StatusCode)
		}
		return 22, nil
	}
	if out != "" && out != "-" {
		_ = sh.p.fs.write(out, body, false)
		return 0, nil
	}
	_, _ = sh.stdout.Write(body)
	return 0, nil
}

func shortNetError(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": dial tcp "); i >= 0 {
		return s[i+2:]
	}
	return s
}

func biNc(sh *shell, argv []string) (int, error) {
	var rest []string
	for _, a := range argv[1:] {
		if !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
		}
	}
	if len(rest) < 2 {
		fmt.Fprintln(sh.stderr, "nc: usage: nc -z HOST PORT")
		return 1, nil
	}
	host := rest[0]
	if host == "localhost" {
		host = sh.p.spec.IP
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, rest[1]), 2*time.Second)
	if err != nil {
		return 1, nil
	}
	conn.Close()
	return 0, nil
}

// arith evaluates $((...)): integers, variables, + - * / % and
// comparisons, with parentheses.
func (sh *shell) arith(expr string) (int64, error) {
	a := &arithParser{sh: sh, s: expr}
	n, err := a.parse(0)
	if err != nil {
		return 0, err
	}
	a.space()
	if a.i < len(a.s) {
		return 0, fmt.Errorf("arithmetic syntax error: %q", expr)
	}
	return n, nil
}

type arithParser struct {
	sh *shell
	s  string
	i  int
}

var arithOps = []struct {
	op   string
	prec int
}{
	{"||", 1}, {"&&", 2}, {"==", 3}, {"!=", 3}, {"<=", 4}, {">=", 4}, {"<", 4}, {">", 4},
	{"+", 5}, {"-", 5}, {"*", 6}, {"/", 6}, {"%", 6},
}

func (a *arithParser) space() {
	for a.i < len(a.s) && (a.s[a.i] == ' ' || a.s[a.i] == '\t' || a.s[a.i] == '\n') {
		a.i++
	}
}

func (a *arithParser) parse(minPrec int) (int64, error) {
	left, err := a.unary()
	if err != nil {
		return 0, err
	}
	for {
		a.space()
		matched := false
		for _, o := range arithOps {
			if o.prec <= minPrec || !strings.HasPrefix(a.s[a.i:], o.op) {
				continue
			}
			a.i += len(o.op)
			right, err := a.parse(o.prec)
			if err != nil {
				return 0, err
			}
			if left, err = arithApply(o.op, left, right); err != nil {
				return 0, err
			}
			matched = true
			break
		}
		if !matched {
			return left, nil
		}
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func arithApply(op string, l, r int64) (int64, error) {
	switch op {
	case "+":
		return l + r, nil
	case "-":
		return l - r, nil
	case "*":
		return l * r, nil
	case "/", "%":
		if r == 0 {
			return 0, fmt.Errorf("division by zero")
		}
		if op == "/" {
			return l / r, nil
		}
		return l % r, nil
	case "==":
		return b2i(l == r), nil
	case "!=":
		return b2i(l != r), nil
	case "<":
		return b2i(l < r), nil
	case "<=":
		return b2i(l <= r), nil
	case ">":
		return b2i(l > r), nil
	case ">=":
		return b2i(l >= r), nil
	case "&&":
		return b2i(l != 0 && r != 0), nil
	}
	return b2i(l != 0 || r != 0), nil
}

func (a *arithParser) unary() (int64, error) {
	a.space()
	if a.i >= len(a.s) {
		return 0, fmt.Errorf("arithmetic syntax error")
	}
	switch c := a.s[a.i]; {
	case c == '-':
		a.i++
		n, err := a.unary()
		return -n, err
	case c == '+':
		a.i++
		return a.unary()
	case c == '!':
		a.i++
		n, err := a.unary()
		return b2i(n == 0), err
	case c == '(':
		a.i++
		n, err := a.parse(0)
		if err != nil {
			return 0, err
		}
		a.space()
		if a.i >= len(a.s) || a.s[a.i] != ')' {
			return 0, fmt.Errorf("arithmetic syntax error: missing )")
		}
		a.i++
		return n, nil
	case c >= '0' && c <= '9':
		j := a.i
		for j < len(a.s) && a.s[j] >= '0' && a.s[j] <= '9' {
			j++
		}
		n, err := strconv.ParseInt(a.s[a.i:j], 10, 64)
		a.i = j
		return n, err
	case c == '$' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		if c == '$' {
			a.i++
		}
		j := a.i
		for j < len(a.s) && (a.s[j] == '_' || a.s[j] >= 'a' && a.s[j] <= 'z' || a.s[j] >= 'A' && a.s[j] <= 'Z' || a.s[j] >= '0' && a.s[j] <= '9') {
			j++
		}
		name := a.s[a.i:j]
		a.i = j
		v := strings.TrimSpace(a.sh.param(name))
		if v == "" {
			return 0, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: bad number", v)
		}
		return n, nil
	}
	return 0, fmt.Errorf("arithmetic syntax error")
}

// biSet understands set -e, set -x and their + forms; other options are
// accepted and ignored.
func biSet(sh *shell, argv []string) (int, error) {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		on := strings.HasPrefix(a, "-")
		if !on && !strings.HasPrefix(a, "+") {
			continue
		}
		if a[1:] == "o" && i+1 < len(argv) {
			if argv[i+1] == "errexit" {
				sh.errexit = on
			}
			i++
			continue
		}
		if strings.Contains(a, "e") {
			sh.errexit = on
		}
		if strings.Contains(a, "x") {
			sh.xtrace = on
		}
	}
	return 0, nil
}
