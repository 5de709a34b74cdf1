package runtime

import (
	"bytes"
	"io"
	"sync"
)

// A simulated terminal: what the kernel's line discipline does between a
// terminal and the process reading it (the defaults of a pty kubectl's
// -t asks for: icanon, echo, icrnl, onlcr).

// ttyWriter is a terminal's output side: "\n" becomes "\r\n" (onlcr).
type ttyWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (t *ttyWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if bytes.IndexByte(b, '\n') < 0 {
		return t.w.Write(b)
	}
	out := make([]byte, 0, len(b)+8)
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			out = append(out, '\r')
		}
		out = append(out, c)
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// maxTTYLine bounds a line being edited, as a terminal's buffer does
// (4096 bytes on Linux).
const maxTTYLine = 4096

// lineDiscipline copies what a client types (raw keystrokes) to a
// process's input one edited line at a time: it echoes each key to the
// terminal, turns Enter ("\r") into "\n", erases with backspace, drops
// the line on ^C, interrupting the foreground command (SIGINT), and ends
// the input on ^D at the start of a line. It returns when in ends or the
// process's input is closed.
func lineDiscipline(in io.Reader, toProc io.WriteCloser, echo io.Writer, interrupt func() bool) {
	defer toProc.Close()
	var line []byte
	buf := make([]byte, 512)
	for {
		n, err := in.Read(buf)
		for _, c := range buf[:n] {
			switch c {
			case '\r', '\n':
				_, _ = echo.Write([]byte("\r\n"))
				line = append(line, '\n')
				if _, err := toProc.Write(line); err != nil {
					return
				}
				line = line[:0]
			case 0x7f, '\b':
				if len(line) > 0 {
					line = line[:len(line)-1]
					_, _ = echo.Write([]byte("\b \b"))
				}
			case 0x03: // ^C
				_, _ = echo.Write([]byte("^C\r\n"))
				line = line[:0]
				if interrupt != nil && interrupt() {
					continue
				}
				// At the prompt: the shell prompts again.
				if _, err := toProc.Write([]byte("\n")); err != nil {
					return
				}
			case 0x04: // ^D
				if len(line) == 0 {
					return
				}
				if _, err := toProc.Write(line); err != nil {
					return
				}
				line = line[:0]
			case 0x15: // ^U
				for range line {
					_, _ = echo.Write([]byte("\b \b"))
				}
				line = line[:0]
			default:
				if len(line) < maxTTYLine {
					line = append(line, c)
					_, _ = echo.Write([]byte{c})
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// maxCommandLine bounds a command line a shell reads from a stream.
const maxCommandLine = 1 << 20

// readsCommands tells whether argv is a shell reading its commands from
// stdin (no -c, no script file).
func readsCommands(argv []string) bool {
	switch baseName(argv[0]) {
	case "sh", "bash", "ash", "dash":
	default:
		return false
	}
	o, bad := parseShellArgs(argv)
	return bad == "" && !o.hasCmd && !o.fromFile
}

// lineLimiter ends a stream (EOF) at a line longer than max.
type lineLimiter struct {
	r    io.Reader
	max  int
	line int
}

func (l *lineLimiter) Read(b []byte) (int, error) {
	n, err := l.r.Read(b)
	for i, c := range b[:n] {
		if c == '\n' {
			l.line = 0
			continue
		}
		l.line++
		if l.line > l.max {
			return i, io.EOF
		}
	}
	return n, err
}
