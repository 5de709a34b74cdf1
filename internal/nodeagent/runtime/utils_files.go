package runtime

import (
	"crypto/rand"
	"fmt"
	iofs "io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// The file utilities that move bytes between the container's files and
// tell about them: mv, cp, dd, chmod, stat and sort (and sysctl), with
// busybox's wording.

func init() {
	utilities["mv"] = uMv
	utilities["cp"] = uCp
	utilities["dd"] = uDd
	utilities["chmod"] = uChmod
	utilities["stat"] = uStat
	utilities["sysctl"] = uSysctl
	utilities["sort"] = uSort
}

// splitFlags separates an applet's flags (-v, -rf) from its operands.
func splitFlags(args []string) (flags string, operands []string) {
	for i, a := range args {
		if a == "--" {
			return flags, append(operands, args[i+1:]...)
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			flags += a[1:]
			continue
		}
		operands = append(operands, a)
	}
	return flags, operands
}

// copyTree copies src (a file, or a directory and what it holds) to dst;
// with move, src is removed after.
func (c *call) copyTree(tool, src, dst string, move, verbose bool) bool {
	from, to := c.abs(src), c.abs(dst)
	fi, err := c.p.fs.statInfo(from)
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: can't stat '%s': %v\n", tool, src, err)
		return false
	}
	if st, err := c.p.fs.statInfo(to); err == nil && st.IsDir() {
		to = path.Join(to, path.Base(from))
	}
	if fi.IsDir() && !move && !strings.ContainsAny(tool, "R") {
		// cp without -r (the caller adds R for -r and -R).
		fmt.Fprintf(c.stderr, "cp: omitting directory '%s'\n", src)
		return false
	}
	ok := true
	_ = c.p.fs.walk(from, func(abs string, fi iofs.FileInfo) error {
		target := path.Join(to, strings.TrimPrefix(abs, from))
		if fi.IsDir() {
			if err := c.p.fs.mkdir(target); err != nil {
				fmt.Fprintf(c.stderr, "%s: can't create directory '%s': %v\n", strings.TrimSuffix(tool, "R"), target, err)
				ok = false
			}
			return nil
		}
		data, err := c.p.fs.read(abs)
		if err == nil {
			err = c.p.fs.write(target, data, false)
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "%s: can't create '%s': %v\n", strings.TrimSuffix(tool, "R"), target, err)
			ok = false
			return nil
		}
		c.p.fs.chmod(target, fi.Mode().Perm())
		return nil
	})
	if !ok {
		return false
	}
	if move {
		if err := c.p.fs.remove(from); err != nil {
			fmt.Fprintf(c.stderr, "mv: can't remove '%s': %v\n", src, err)
			return false
		}
	}
	if verbose {
		fmt.Fprintf(c.stdout, "'%s' -> '%s'\n", src, to)
	}
	return true
}

// uMv is mv [-fv] SRC... DST.
func uMv(c *call, argv []string) (int, error) {
	return moveOrCopy(c, "mv", argv, true)
}

// uCp is cp [-rRfpv] SRC... DST.
func uCp(c *call, argv []string) (int, error) {
	return moveOrCopy(c, "cp", argv, false)
}

func moveOrCopy(c *call, tool string, argv []string, move bool) (int, error) {
	flags, ops := splitFlags(argv[1:])
	if len(ops) < 2 {
		fmt.Fprintf(c.stderr, "BusyBox v1.37.0 multi-call binary.\n\nUsage: %s [-fv] SOURCE DEST\n", tool)
		return 1, nil
	}
	dst := ops[len(ops)-1]
	if len(ops) > 2 {
		if st, err := c.p.fs.statInfo(c.abs(dst)); err != nil || !st.IsDir() {
			fmt.Fprintf(c.stderr, "%s: '%s' is not a directory\n", tool, dst)
			return 1, nil
		}
	}
	name := tool
	if strings.ContainsAny(flags, "rRa") {
		name += "R"
	}
	code := 0
	for _, src := range ops[:len(ops)-1] {
		if !c.copyTree(name, src, dst, move, strings.Contains(flags, "v")) {
			code = 1
		}
	}
	return code, nil
}

// uDd is dd if= of= bs= count=: /dev/zero and /dev/urandom read as
// devices, other names as files; without of= it writes to stdout.
func uDd(c *call, argv []string) (int, error) {
	in, out, bs, count := "", "", 512, -1
	for _, a := range argv[1:] {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "if":
			in = v
		case "of":
			out = v
		case "bs":
			n, err := parseSize(v)
			if err != nil || n <= 0 {
				fmt.Fprintf(c.stderr, "dd: invalid number '%s'\n", v)
				return 1, nil
			}
			bs = n
		case "count":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				fmt.Fprintf(c.stderr, "dd: invalid number '%s'\n", v)
				return 1, nil
			}
			count = n
		case "conv", "status", "iflag", "oflag", "seek", "skip":
		default:
			fmt.Fprintf(c.stderr, "dd: unknown operand %s\n", a)
			return 1, nil
		}
	}
	var data []byte
	switch in {
	case "/dev/zero", "/dev/urandom":
		if count < 0 || int64(count)*int64(bs) > maxInput {
			fmt.Fprintf(c.stderr, "dd: writing: No space left on device\n")
			return 1, nil
		}
		data = make([]byte, count*bs)
		if in == "/dev/urandom" {
			_, _ = rand.Read(data)
		}
	case "":
		data = readAll(c.stdin)
	default:
		d, err := c.p.fs.read(c.abs(in))
		if err != nil {
			fmt.Fprintf(c.stderr, "dd: can't open '%s': %v\n", in, err)
			return 1, nil
		}
		data = d
	}
	if count >= 0 && len(data) > count*bs {
		data = data[:count*bs]
	}
	if out == "" {
		_, _ = c.stdout.Write(data)
	} else if err := c.p.fs.write(c.abs(out), data, false); err != nil {
		fmt.Fprintf(c.stderr, "dd: can't open '%s': %v\n", out, err)
		return 1, nil
	}
	full, part := len(data)/bs, 0
	if len(data)%bs != 0 {
		part = 1
	}
	fmt.Fprintf(c.stderr, "%d+%d records in\n%d+%d records out\n", full, part, full, part)
	return 0, nil
}

// parseSize reads dd's sizes: N, Nk, NM, NG (and KB, MB: powers of 1000).
func parseSize(s string) (int, error) {
	mult := 1
	for _, u := range []struct {
		suffix string
		mult   int
	}{{"kB", 1000}, {"KB", 1000}, {"MB", 1000 * 1000}, {"k", 1 << 10}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.Atoi(s)
	return n * mult, err
}

// uChmod is chmod [-R] MODE FILE...; MODE is octal, or u/g/o/a±rwx.
func uChmod(c *call, argv []string) (int, error) {
	_, ops := splitFlags(argv[1:])
	if len(ops) < 2 {
		fmt.Fprintf(c.stderr, "BusyBox v1.37.0 multi-call binary.\n\nUsage: chmod [-Rcvf] MODE[,MODE]... FILE...\n")
		return 1, nil
	}
	code := 0
	for _, f := range ops[1:] {
		fi, err := c.p.fs.statInfo(c.abs(f))
		if err != nil {
			fmt.Fprintf(c.stderr, "chmod: %s: %v\n", f, err)
			code = 1
			continue
		}
		mode, ok := chmodMode(ops[0], fi.Mode().Perm())
		if !ok {
			fmt.Fprintf(c.stderr, "chmod: invalid mode '%s'\n", ops[0])
			return 1, nil
		}
		c.p.fs.chmod(c.abs(f), mode)
	}
	return code, nil
}

// chmodMode applies an octal or symbolic mode to old.
func chmodMode(spec string, old iofs.FileMode) (iofs.FileMode, bool) {
	if n, err := strconv.ParseUint(spec, 8, 32); err == nil {
		return iofs.FileMode(n).Perm(), true
	}
	mode := old
	for _, clause := range strings.Split(spec, ",") {
		i := strings.IndexAny(clause, "+-=")
		if i < 0 {
			return 0, false
		}
		who, op, perms := clause[:i], clause[i], clause[i+1:]
		if who == "" || who == "a" {
			who = "ugo"
		}
		var bits iofs.FileMode
		for _, p := range perms {
			for _, w := range who {
				shift := map[rune]uint{'u': 6, 'g': 3, 'o': 0}[w]
				switch p {
				case 'r':
					bits |= 4 << shift
				case 'w':
					bits |= 2 << shift
				case 'x':
					bits |= 1 << shift
				default:
					return 0, false
				}
			}
		}
		switch op {
		case '+':
			mode |= bits
		case '-':
			mode &^= bits
		case '=':
			var mask iofs.FileMode
			for _, w := range who {
				mask |= 7 << map[rune]uint{'u': 6, 'g': 3, 'o': 0}[w]
			}
			mode = mode&^mask | bits
		}
	}
	return mode, true
}

// uStat is stat [-c FORMAT] FILE...: %a (octal mode), %A (mode), %n
// (name), %s (size), %F (type), %u and %g (owner); without -c, busybox's
// summary lines.
func uStat(c *call, argv []string) (int, error) {
	format := ""
	var files []string
	for i := 1; i < len(argv); i++ {
		switch a := argv[i]; {
		case a == "-c" && i+1 < len(argv):
			i++
			format = argv[i]
		case strings.HasPrefix(a, "-c"):
			format = a[2:]
		case strings.HasPrefix(a, "-") && len(a) > 1:
		default:
			files = append(files, a)
		}
	}
	code := 0
	for _, f := range files {
		fi, err := c.p.fs.statInfo(c.abs(f))
		if err != nil {
			fmt.Fprintf(c.stderr, "stat: can't stat '%s': %v\n", f, err)
			code = 1
			continue
		}
		uid, gid := c.p.owner(c.abs(f))
		mode := fi.Mode()
		octal := uint32(mode.Perm())
		if mode&iofs.ModeSticky != 0 {
			octal |= 0o1000
		}
		if mode&iofs.ModeSetgid != 0 {
			octal |= 0o2000
		}
		kind := "regular file"
		if fi.IsDir() {
			kind = "directory"
		}
		if format == "" {
			fmt.Fprintf(c.stdout, "  File: %s\n  Size: %d\n%s\nAccess: (%04o/%s)  Uid: (%d)  Gid: (%d)\n", f, fi.Size(), kind, octal, mode, uid, gid)
			continue
		}
		fmt.Fprintln(c.stdout, strings.NewReplacer(
			"%a", strconv.FormatUint(uint64(octal), 8), "%A", mode.String(), "%n", f,
			"%s", strconv.FormatInt(fi.Size(), 10), "%F", kind,
			"%u", strconv.FormatInt(uid, 10), "%g", strconv.FormatInt(gid, 10), "%%", "%",
		).Replace(format))
	}
	return code, nil
}

// sysctlDefaults are the values of the namespaced sysctls a pod did not
// set.
var sysctlDefaults = map[string]string{
	"kernel.shm_rmid_forced":              "0",
	"net.ipv4.ip_local_port_range":        "32768\t60999",
	"net.ipv4.tcp_syncookies":             "1",
	"net.ipv4.ping_group_range":           "0\t2147483647",
	"net.ipv4.ip_unprivileged_port_start": "0",
	"net.ipv4.tcp_keepalive_time":         "7200",
	"net.ipv4.tcp_fin_timeout":            "60",
}

// uSysctl is sysctl NAME...: the pod's sysctls (securityContext.sysctls),
// else the defaults; names take dots or slashes.
func uSysctl(c *call, argv []string) (int, error) {
	code := 0
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		name := a
		if strings.Contains(name, "/") {
			name = strings.ReplaceAll(name, "/", ".")
		}
		v, ok := c.p.spec.Sysctls[name]
		if !ok {
			v, ok = sysctlDefaults[name]
		}
		if !ok {
			fmt.Fprintf(c.stderr, "sysctl: error: '%s' is an unknown key\n", a)
			code = 1
			continue
		}
		fmt.Fprintf(c.stdout, "%s = %s\n", name, v)
	}
	return code, nil
}

// uSort is sort [-rnu] [FILE...]: lines in byte order (numeric with -n),
// reversed with -r, unique with -u.
func uSort(c *call, argv []string) (int, error) {
	flags, files := splitFlags(argv[1:])
	in, code := c.inputs("sort", files)
	text := string(readAll(in))
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		lines = nil
	}
	num := func(s string) float64 {
		f, _ := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return f
	}
	less := func(a, b string) bool { return a < b }
	if strings.Contains(flags, "n") {
		less = func(a, b string) bool {
			if na, nb := num(a), num(b); na != nb {
				return na < nb
			}
			return a < b
		}
	}
	slices.SortStableFunc(lines, func(a, b string) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	})
	if strings.Contains(flags, "r") {
		slices.Reverse(lines)
	}
	if strings.Contains(flags, "u") {
		lines = slices.Compact(lines)
	}
	for _, l := range lines {
		fmt.Fprintln(c.stdout, l)
	}
	return code, nil
}
