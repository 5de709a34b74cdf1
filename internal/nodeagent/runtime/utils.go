package runtime

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// utility runs one of the container's utilities (busybox's applets, or
// coreutils') and returns its exit status; its error is a kill or the
// exit of a TERM trap that ran meanwhile.
type utility func(c *call, argv []string) (int, error)

// utilities are what every shell image has besides the shell's own
// builtins (echo, printf, test, read, cd, ... are the interpreter's).
var utilities map[string]utility

func init() {
	sh := func(c *call, argv []string) (int, error) { return c.p.runShell(c, argv) }
	utilities = map[string]utility{
		"sleep": uSleep, "cat": uCat, "tee": uTee, "touch": uTouch, "rm": uRm, "mkdir": uMkdir, "ls": uLs,
		"env": uEnv, "printenv": uPrintenv, "hostname": uHostname, "date": uDate, "seq": uSeq, "expr": uExpr,
		"grep": uGrep, "wc": uWc, "head": uHead, "tail": uTail, "uname": uUname, "whoami": uWhoami, "id": uID,
		"basename": uBasename, "dirname": uDirname, "wget": uWget, "curl": uCurl, "nc": uNc, "kill": uKill,
		"yes": uYes, "which": uWhich, "ps": uPs, "tar": uTar, "nslookup": uNslookup, "getent": uGetent,
		"awk": uAwk,
		"sh":  sh, "bash": sh, "ash": sh, "dash": sh,
		// The shell's builtins exist as executables too (env true, xargs
		// echo, /bin/echo).
		"true":  func(*call, []string) (int, error) { return 0, nil },
		"false": func(*call, []string) (int, error) { return 1, nil },
		"echo":  uEcho,
	}
}

// maxInput bounds what a utility reads whole (wc, tail, sort-like work).
const maxInput = 16 << 20

// readAll reads a bounded input.
func readAll(r io.Reader) []byte {
	if r == nil {
		return nil
	}
	data, _ := io.ReadAll(io.LimitReader(r, maxInput))
	return data
}

// inputs opens the files named, or stdin ("-" or none), one after the
// other.
func (c *call) inputs(tool string, files []string) (io.Reader, int) {
	if len(files) == 0 || len(files) == 1 && files[0] == "-" {
		if c.stdin == nil {
			return strings.NewReader(""), 0
		}
		return c.stdin, 0
	}
	var rs []io.Reader
	code := 0
	for _, f := range files {
		if f == "-" {
			if c.stdin != nil {
				rs = append(rs, c.stdin)
			}
			continue
		}
		if f == "/dev/null" {
			continue
		}
		data, err := c.p.fs.read(c.abs(f))
		if err != nil {
			fmt.Fprintf(c.stderr, "%s: can't open '%s': %v\n", tool, f, err)
			code = 1
			continue
		}
		rs = append(rs, bytes.NewReader(data))
	}
	return io.MultiReader(rs...), code
}

func uEcho(c *call, argv []string) (int, error) {
	args := argv[1:]
	nl := true
	if len(args) > 0 && args[0] == "-n" {
		nl, args = false, args[1:]
	}
	s := strings.Join(args, " ")
	if nl {
		s += "\n"
	}
	_, _ = io.WriteString(c.stdout, s)
	return 0, nil
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
	if err != nil || f < 0 || math.IsNaN(f) {
		return 0, false
	}
	if f*float64(mult) >= math.MaxInt64 {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(f * float64(mult)), true
}

func uSleep(c *call, argv []string) (int, error) {
	if len(argv) < 2 {
		fmt.Fprintln(c.stderr, "sleep: missing operand")
		return 1, nil
	}
	var total time.Duration
	for _, a := range argv[1:] {
		d, ok := parseDuration(a)
		if !ok {
			fmt.Fprintf(c.stderr, "sleep: invalid number '%s'\n", a)
			return 1, nil
		}
		if d == time.Duration(math.MaxInt64) || total+d < total {
			total = time.Duration(math.MaxInt64)
			break
		}
		total += d
	}
	return 0, c.p.sleep(c, total)
}

func uCat(c *call, argv []string) (int, error) {
	var files []string
	for _, a := range argv[1:] {
		if a == "-" || !strings.HasPrefix(a, "-") {
			files = append(files, a)
		}
	}
	r, code := c.inputs("cat", files)
	_, _ = io.Copy(c.stdout, r)
	return code, nil
}

func uTee(c *call, argv []string) (int, error) {
	appendTo := false
	var files []string
	for _, f := range argv[1:] {
		if strings.HasPrefix(f, "-") {
			appendTo = appendTo || strings.Contains(f, "a")
			continue
		}
		files = append(files, c.abs(f))
		if !appendTo {
			_ = c.p.fs.write(c.abs(f), nil, false)
		}
	}
	ws := []io.Writer{c.stdout}
	for _, f := range files {
		ws = append(ws, &fileWriter{fs: c.p.fs, path: f})
	}
	if c.stdin != nil {
		_, _ = io.Copy(io.MultiWriter(ws...), c.stdin)
	}
	return 0, nil
}

func uTouch(c *call, argv []string) (int, error) {
	code := 0
	for _, f := range argv[1:] {
		if strings.HasPrefix(f, "-") {
			continue
		}
		if _, err := c.p.fs.statInfo(c.abs(f)); err == nil {
			continue
		}
		if err := c.p.fs.write(c.abs(f), nil, false); err != nil {
			fmt.Fprintf(c.stderr, "touch: %s: %v\n", f, err)
			code = 1
		}
	}
	return code, nil
}

func uRm(c *call, argv []string) (int, error) {
	force := false
	code := 0
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			force = force || strings.Contains(a, "f")
			continue
		}
		if err := c.p.fs.remove(c.abs(a)); err != nil {
			if err == errNotExist && force {
				continue
			}
			fmt.Fprintf(c.stderr, "rm: can't remove '%s': %v\n", a, err)
			code = 1
		}
	}
	return code, nil
}

func uMkdir(c *call, argv []string) (int, error) {
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if err := c.p.fs.mkdir(c.abs(a)); err != nil {
			fmt.Fprintf(c.stderr, "mkdir: can't create directory '%s': %v\n", a, err)
			return 1, nil
		}
	}
	return 0, nil
}

func uLs(c *call, argv []string) (int, error) {
	var paths []string
	for _, a := range argv[1:] {
		if !strings.HasPrefix(a, "-") {
			paths = append(paths, a)
		}
	}
	if len(paths) == 0 {
		paths = []string{c.dir}
	}
	code := 0
	for _, p := range paths {
		names, err := c.p.fs.list(c.abs(p))
		if err != nil {
			fmt.Fprintf(c.stderr, "ls: %s: %v\n", p, err)
			code = 1
			continue
		}
		if len(paths) > 1 {
			fmt.Fprintf(c.stdout, "%s:\n", p)
		}
		for _, n := range names {
			if n != dirMarker {
				fmt.Fprintln(c.stdout, n)
			}
		}
	}
	return code, nil
}

func uEnv(c *call, argv []string) (int, error) {
	args := argv[1:]
	var extra []string
	for len(args) > 0 && strings.Contains(args[0], "=") {
		extra = append(extra, args[0])
		args = args[1:]
	}
	pairs := append(c.environ(), extra...)
	if len(args) == 0 {
		env := expand.ListEnviron(pairs...)
		for name, vr := range env.Each {
			fmt.Fprintf(c.stdout, "%s=%s\n", name, vr.String())
		}
		return 0, nil
	}
	c2 := *c
	c2.env = expand.ListEnviron(pairs...)
	return c.p.dispatch(&c2, args, false)
}

func uPrintenv(c *call, argv []string) (int, error) {
	if len(argv) == 1 {
		return uEnv(c, argv[:1])
	}
	code := 0
	for _, name := range argv[1:] {
		vr := c.env.Get(name)
		if !vr.IsSet() || !vr.Exported {
			code = 1
			continue
		}
		fmt.Fprintln(c.stdout, vr.String())
	}
	return code, nil
}

// uHostname prints the host name, or with -i the pod's address.
func uHostname(c *call, argv []string) (int, error) {
	if len(argv) > 1 && (argv[1] == "-i" || argv[1] == "-I") {
		fmt.Fprintln(c.stdout, c.p.spec.IP)
		return 0, nil
	}
	fmt.Fprintln(c.stdout, c.p.spec.Hostname)
	return 0, nil
}

func uDate(c *call, argv []string) (int, error) {
	now := c.p.clock.Now().UTC()
	if len(argv) > 1 && strings.HasPrefix(argv[1], "+") {
		r := strings.NewReplacer("%s", strconv.FormatInt(now.Unix(), 10), "%Y", now.Format("2006"), "%m", now.Format("01"),
			"%d", now.Format("02"), "%H", now.Format("15"), "%M", now.Format("04"), "%S", now.Format("05"),
			"%T", now.Format("15:04:05"), "%F", now.Format("2006-01-02"), "%Z", "UTC", "%z", "+0000", "%N", fmt.Sprintf("%09d", now.Nanosecond()), "%%", "%")
		fmt.Fprintln(c.stdout, r.Replace(argv[1][1:]))
		return 0, nil
	}
	fmt.Fprintln(c.stdout, now.Format("Mon Jan _2 15:04:05 UTC 2006"))
	return 0, nil
}

// maxSeq bounds what seq prints.
const maxSeq = 1 << 20

func uSeq(c *call, argv []string) (int, error) {
	nums := make([]int64, 0, 3)
	for _, a := range argv[1:] {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			fmt.Fprintf(c.stderr, "seq: invalid number '%s'\n", a)
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
		fmt.Fprintln(c.stderr, "seq: missing operand")
		return 1, nil
	}
	w := bufio.NewWriter(c.stdout)
	defer w.Flush()
	for i, n := first, 0; (step > 0 && i <= last || step < 0 && i >= last) && n < maxSeq; i, n = i+step, n+1 {
		if _, err := fmt.Fprintln(w, i); err != nil {
			break
		}
	}
	return 0, nil
}

// uExpr evaluates integer expressions (expr 1 + 2, expr $i \< 3) with the
// interpreter's arithmetic.
func uExpr(c *call, argv []string) (int, error) {
	args := append([]string(nil), argv[1:]...)
	if len(args) == 2 && args[0] == "length" {
		fmt.Fprintln(c.stdout, len(args[1]))
		return 0, nil
	}
	for i, a := range args {
		switch a {
		case "=":
			args[i] = "=="
		case "&":
			args[i] = "&&"
		case "|":
			args[i] = "||"
		}
	}
	src := strings.Join(args, " ")
	e, err := syntax.NewParser().Arithmetic(strings.NewReader(src))
	var n int
	if err == nil {
		n, err = expand.Arithm(&expand.Config{Env: c.env}, e)
	}
	if err != nil {
		fmt.Fprintln(c.stderr, "expr: syntax error")
		return 2, nil
	}
	fmt.Fprintln(c.stdout, n)
	if n == 0 {
		return 1, nil
	}
	return 0, nil
}

func uGrep(c *call, argv []string) (int, error) {
	quiet, invert, count, fold, fixed, extended := false, false, false, false, false, false
	var rest []string
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") && len(a) > 1 && len(rest) == 0 {
			quiet = quiet || strings.Contains(a, "q")
			invert = invert || strings.Contains(a, "v")
			count = count || strings.Contains(a, "c")
			fold = fold || strings.Contains(a, "i")
			fixed = fixed || strings.Contains(a, "F")
			extended = extended || strings.Contains(a, "E")
			continue
		}
		rest = append(rest, a)
	}
	_ = extended // Go's regular expressions are extended ones
	if len(rest) == 0 {
		fmt.Fprintln(c.stderr, "grep: no pattern")
		return 2, nil
	}
	pat := rest[0]
	if fixed {
		pat = regexp.QuoteMeta(pat)
	}
	if fold {
		pat = "(?i)" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		re = regexp.MustCompile(regexp.QuoteMeta(rest[0]))
	}
	in, code := c.inputs("grep", rest[1:])
	matched := 0
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if re.MatchString(sc.Text()) != invert {
			matched++
			if quiet {
				break
			}
			if !count {
				fmt.Fprintln(c.stdout, sc.Text())
			}
		}
	}
	if count {
		fmt.Fprintln(c.stdout, matched)
	}
	if code != 0 {
		return 2, nil
	}
	if matched == 0 {
		return 1, nil
	}
	return 0, nil
}

func uWc(c *call, argv []string) (int, error) {
	var files []string
	mode := ""
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") {
			mode = a
			continue
		}
		files = append(files, a)
	}
	in, code := c.inputs("wc", files)
	data := readAll(in)
	lines, words := bytes.Count(data, []byte("\n")), len(strings.Fields(string(data)))
	// A file's counts are followed by its name, as busybox prints them.
	name := ""
	if len(files) == 1 && files[0] != "-" {
		name = " " + files[0]
	}
	switch mode {
	case "-l":
		fmt.Fprintf(c.stdout, "%d%s\n", lines, name)
	case "-w":
		fmt.Fprintf(c.stdout, "%d%s\n", words, name)
	case "-c":
		fmt.Fprintf(c.stdout, "%d%s\n", len(data), name)
	default:
		fmt.Fprintf(c.stdout, "%7d %7d %7d%s\n", lines, words, len(data), name)
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

// uHead prints the first lines and stops reading: `yes | head` ends.
func uHead(c *call, argv []string) (int, error) {
	n, files := headTailArgs(argv)
	in, code := c.inputs("head", files)
	br := bufio.NewReader(in)
	for i := 0; i < n; i++ {
		line, err := br.ReadString('\n')
		if line != "" {
			_, _ = io.WriteString(c.stdout, line)
		}
		if err != nil {
			break
		}
	}
	return code, nil
}

func uTail(c *call, argv []string) (int, error) {
	// tail -f (-F, --follow) prints what is there, then waits until
	// killed, as following a file that no one appends to does.
	follow := false
	kept := argv[:1:1]
	for _, a := range argv[1:] {
		if a == "-f" || a == "-F" || a == "--follow" {
			follow = true
			continue
		}
		kept = append(kept, a)
	}
	code, err := tailOnce(c, kept)
	if err != nil || !follow {
		return code, err
	}
	return code, c.p.sleep(c, time.Duration(math.MaxInt64))
}

// tailOnce is tail without -f.
func tailOnce(c *call, argv []string) (int, error) {
	// tail -c +N (kubectl cp's resumed copy) and -c N count bytes.
	for i := 1; i < len(argv); i++ {
		spec, ok := strings.CutPrefix(argv[i], "-c")
		if !ok {
			continue
		}
		if spec == "" && i+1 < len(argv) {
			spec = argv[i+1]
			argv = append(argv[:i:i], argv[i+2:]...)
		} else {
			argv = append(argv[:i:i], argv[i+1:]...)
		}
		n, err := strconv.Atoi(strings.TrimPrefix(spec, "+"))
		if err != nil || n < 0 {
			fmt.Fprintf(c.stderr, "tail: invalid number '%s'\n", spec)
			return 1, nil
		}
		in, code := c.inputs("tail", argv[1:])
		if strings.HasPrefix(spec, "+") {
			_, _ = io.CopyN(io.Discard, in, int64(max(n-1, 0)))
			_, _ = io.Copy(c.stdout, in)
			return code, nil
		}
		data := readAll(in)
		_, _ = c.stdout.Write(data[max(0, len(data)-n):])
		return code, nil
	}
	n, files := headTailArgs(argv)
	in, code := c.inputs("tail", files)
	s := strings.TrimSuffix(string(readAll(in)), "\n")
	if s == "" {
		return code, nil
	}
	lines := strings.Split(s, "\n")
	for i := max(0, len(lines)-n); i < len(lines); i++ {
		fmt.Fprintln(c.stdout, lines[i])
	}
	return code, nil
}

func uUname(c *call, argv []string) (int, error) {
	if len(argv) > 1 && argv[1] == "-a" {
		fmt.Fprintf(c.stdout, "Linux %s 6.8.0-minik #1 SMP x86_64 GNU/Linux\n", c.p.spec.Hostname)
		return 0, nil
	}
	fmt.Fprintln(c.stdout, "Linux")
	return 0, nil
}

func uBasename(c *call, argv []string) (int, error) {
	if len(argv) > 1 {
		b := baseName(strings.TrimSuffix(argv[1], "/"))
		if len(argv) > 2 {
			b = strings.TrimSuffix(b, argv[2])
		}
		fmt.Fprintln(c.stdout, b)
	}
	return 0, nil
}

func uDirname(c *call, argv []string) (int, error) {
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
		fmt.Fprintln(c.stdout, p)
	}
	return 0, nil
}

// uKill accepts kill's forms; signals between a container's processes are
// not simulated.
func uKill(*call, []string) (int, error) { return 0, nil }

// uYes prints y (or its argument) until its reader goes away.
func uYes(c *call, argv []string) (int, error) {
	line := "y\n"
	if len(argv) > 1 {
		line = strings.Join(argv[1:], " ") + "\n"
	}
	chunk := []byte(strings.Repeat(line, max(1, 4096/len(line))))
	for {
		if c.ctx.Err() != nil {
			return 0, errKilled
		}
		if _, err := c.stdout.Write(chunk); err != nil {
			return 1, nil
		}
	}
}

func uWhich(c *call, argv []string) (int, error) {
	code := 0
	for _, a := range argv[1:] {
		if c.p.knows(a) {
			fmt.Fprintln(c.stdout, "/bin/"+baseName(a))
		} else {
			code = 1
		}
	}
	return code, nil
}

func uPs(c *call, _ []string) (int, error) {
	fmt.Fprintln(c.stdout, "PID   USER     TIME  COMMAND")
	fmt.Fprintf(c.stdout, "%5d %-8s %5s %s\n", 1, "root", "0:00", c.p.cmdline)
	fmt.Fprintf(c.stdout, "%5d %-8s %5s %s\n", 7, "root", "0:00", "ps")
	return 0, nil
}

// wget, curl and nc reach the pod network: real connections, to other
// pods and Services on loopback, names resolved as the pod's libc does
// (resolve.go).

// httpGet fetches a URL for wget and curl.
func (c *call) httpGet(tool, rawURL string, header http.Header, timeout time.Duration) (*http.Response, []byte, error) {
	if !strings.Contains(rawURL, "://") {
		rawURL = "http://" + rawURL
	}
	req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", tool)
	}
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := contextWithTimeout(c.ctx, timeout)
	defer cancel()
	resp, err := c.p.httpClient().Do(req.WithContext(ctx))
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxInput))
	return resp, body, err
}

func uWget(c *call, argv []string) (int, error) {
	quiet, toStdout, spider := false, false, false
	out, url := "", ""
	var timeout time.Duration
	header := http.Header{}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-O" && i+1 < len(argv):
			out = argv[i+1]
			i++
		case a == "--header" && i+1 < len(argv):
			if k, v, ok := strings.Cut(argv[i+1], ":"); ok {
				header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
			}
			i++
		case a == "-T" && i+1 < len(argv):
			if n, err := strconv.Atoi(argv[i+1]); err == nil && n > 0 {
				timeout = time.Duration(n) * time.Second
			}
			i++
		case a == "-U" && i+1 < len(argv):
			header.Set("User-Agent", argv[i+1])
			i++
		case a == "--spider":
			spider = true
		case a == "-q" || a == "--quiet":
			quiet = true
		case strings.HasPrefix(a, "--"):
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
		fmt.Fprintln(c.stderr, "wget: missing URL")
		return 1, nil
	}
	if !quiet {
		fmt.Fprintf(c.stderr, "Connecting to %s\n", strings.TrimPrefix(strings.TrimPrefix(url, "http://"), "https://"))
	}
	resp, body, err := c.httpGet("Wget", url, header, timeout)
	if err != nil {
		if c.ctx.Err() != nil {
			return 0, errKilled
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
			fmt.Fprintln(c.stderr, "wget: download timed out")
			return 1, nil
		}
		fmt.Fprintf(c.stderr, "wget: %s\n", netErrorText(err, "wget"))
		return 1, nil
	}
	if resp.StatusCode >= 400 {
		fmt.Fprintf(c.stderr, "wget: server returned error: HTTP/1.1 %s\n", resp.Status)
		return 1, nil
	}
	switch {
	case spider:
	case toStdout:
		_, _ = c.stdout.Write(body)
	default:
		if out == "" {
			out = "index.html"
		}
		if err := c.p.fs.write(c.abs(out), body, false); err != nil {
			fmt.Fprintf(c.stderr, "wget: can't open '%s': %v\n", out, err)
			return 1, nil
		}
	}
	return 0, nil
}

func uCurl(c *call, argv []string) (int, error) {
	fail, silent, showErr := false, false, false
	out, url := "", ""
	header := http.Header{}
	var timeout time.Duration
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case (a == "-o" || a == "--output") && i+1 < len(argv):
			out = argv[i+1]
			i++
		case (a == "-H" || a == "--header") && i+1 < len(argv):
			if k, v, ok := strings.Cut(argv[i+1], ":"); ok {
				header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
			}
			i++
		case (a == "-m" || a == "--max-time" || a == "--connect-timeout") && i+1 < len(argv):
			if secs, err := strconv.ParseFloat(argv[i+1], 64); err == nil && secs > 0 {
				timeout = time.Duration(secs * float64(time.Second))
			}
			i++
		case (a == "-w" || a == "-X") && i+1 < len(argv):
			i++
		case strings.HasPrefix(a, "--"):
			fail = fail || a == "--fail"
			silent = silent || a == "--silent"
			showErr = showErr || a == "--show-error"
		case strings.HasPrefix(a, "-") && len(a) > 1:
			fail = fail || strings.Contains(a, "f")
			silent = silent || strings.Contains(a, "s")
			showErr = showErr || strings.Contains(a, "S")
		default:
			url = a
		}
	}
	if url == "" {
		fmt.Fprintln(c.stderr, "curl: no URL specified")
		return 2, nil
	}
	loud := !silent || showErr
	start := time.Now()
	resp, body, err := c.httpGet("curl/8.5.0", url, header, timeout)
	if err != nil {
		if c.ctx.Err() != nil {
			return 0, errKilled
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
			if loud {
				fmt.Fprintf(c.stderr, "curl: (28) Connection timed out after %d milliseconds\n", time.Since(start).Milliseconds())
			}
			return 28, nil
		}
		var nf *notFoundErr
		if asNotFound(err, &nf) {
			if loud {
				fmt.Fprintf(c.stderr, "curl: (6) Could not resolve host: %s\n", nf.name)
			}
			return 6, nil
		}
		if loud {
			fmt.Fprintf(c.stderr, "curl: (7) %s\n", netErrorText(err, "curl"))
		}
		return 7, nil
	}
	if fail && resp.StatusCode >= 400 {
		if loud {
			fmt.Fprintf(c.stderr, "curl: (22) The requested URL returned error: %d\n", resp.StatusCode)
		}
		return 22, nil
	}
	if out != "" && out != "-" {
		if err := c.p.fs.write(c.abs(out), body, false); err != nil {
			fmt.Fprintf(c.stderr, "curl: (23) Failure writing output to destination\n")
			return 23, nil
		}
		return 0, nil
	}
	_, _ = c.stdout.Write(body)
	return 0, nil
}

func uNc(c *call, argv []string) (int, error) {
	var rest []string
	zero := false
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-w" && i+1 < len(argv):
			i++
		case strings.HasPrefix(a, "-"):
			zero = zero || strings.Contains(a, "z")
		default:
			rest = append(rest, a)
		}
	}
	if len(rest) < 2 {
		fmt.Fprintln(c.stderr, "nc: usage: nc [-z] HOST PORT")
		return 1, nil
	}
	ctx, cancel := contextWithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	conn, err := c.p.dialContext(ctx, "tcp", net.JoinHostPort(rest[0], rest[1]))
	if err != nil {
		if c.ctx.Err() != nil {
			return 0, errKilled
		}
		if !zero {
			fmt.Fprintf(c.stderr, "nc: %s\n", netErrorText(err, "nc"))
		}
		return 1, nil
	}
	defer conn.Close()
	if zero {
		return 0, nil
	}
	// Send stdin, print the answer until the peer closes.
	go func() {
		if c.stdin != nil {
			_, _ = io.Copy(conn, c.stdin)
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}()
	go func() { <-ctx.Done(); conn.Close() }()
	_, _ = io.Copy(c.stdout, io.LimitReader(conn, maxInput))
	return 0, nil
}
