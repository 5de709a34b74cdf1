package nodeagent

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// criTime is the timestamp format of CRI log files.
const criTime = "2006-01-02T15:04:05.000000000Z07:00"

// containerLog is one container run's log file, in the CRI format the
// kubelet reads: "<RFC 3339 time> <stdout|stderr> <F|P> <line>". It is the
// runtime's LogSink; followers wait on it for new lines.
type containerLog struct {
	path  string
	clock clock.PassiveClock

	mu      sync.Mutex
	f       *os.File
	closed  bool
	changed chan struct{}
}

func openLog(path string, clk clock.PassiveClock) (*containerLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create log dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o640)
	if err != nil {
		return nil, fmt.Errorf("create log file: %w", err)
	}
	return &containerLog{path: path, clock: clk, f: f, changed: make(chan struct{})}, nil
}

// Line implements runtime.LogSink.
func (l *containerLog) Line(stream, line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	ts := l.clock.Now().UTC().Format(criTime)
	_, _ = fmt.Fprintf(l.f, "%s %s F %s\n", ts, stream, line)
	close(l.changed)
	l.changed = make(chan struct{})
}

// close ends the log: followers stop at its end.
func (l *containerLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	_ = l.f.Close()
	close(l.changed)
}

// state returns whether the log is closed and a channel closed at its
// next change.
func (l *containerLog) state() (bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed, l.changed
}

func removeLog(l *containerLog) error {
	if l == nil {
		return nil
	}
	l.close()
	return os.Remove(l.path)
}

// tail returns the end of the log: its last lines (at most max bytes),
// for a termination message.
func (l *containerLog) tail(lines, maxBytes int) string {
	data, err := os.ReadFile(l.path)
	if err != nil {
		return ""
	}
	var out []string
	for _, raw := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if e, ok := parseCRILine([]byte(raw)); ok {
			out = append(out, string(e.content))
		}
	}
	if len(out) > lines {
		out = out[len(out)-lines:]
	}
	s := strings.Join(out, "\n")
	if len(s) > maxBytes {
		s = s[len(s)-maxBytes:]
	}
	return s
}

// logEntry is a parsed CRI log line.
type logEntry struct {
	ts      time.Time
	stream  string
	partial bool
	content []byte
}

func parseCRILine(b []byte) (logEntry, bool) {
	b = bytes.TrimSuffix(b, []byte("\n"))
	parts := bytes.SplitN(b, []byte(" "), 4)
	if len(parts) < 3 {
		return logEntry{}, false
	}
	ts, err := time.Parse(time.RFC3339Nano, string(parts[0]))
	if err != nil {
		return logEntry{}, false
	}
	e := logEntry{ts: ts, stream: string(parts[1]), partial: string(parts[2]) == "P"}
	if len(parts) == 4 {
		e.content = parts[3]
	}
	return e, true
}

// logOptions are the options of a log request (PodLogOptions).
type logOptions struct {
	follow     bool
	tail       int64 // -1: all
	since      time.Time
	timestamps bool
	limitBytes int64 // 0: no limit
}

// limitWriter stops after n bytes.
type limitWriter struct {
	w io.Writer
	n int64
}

var errLimit = fmt.Errorf("limit reached")

func (l *limitWriter) Write(b []byte) (int, error) {
	if l.n <= 0 {
		return 0, errLimit
	}
	if int64(len(b)) > l.n {
		k, _ := l.w.Write(b[:l.n])
		l.n = 0
		return k, errLimit
	}
	l.n -= int64(len(b))
	return l.w.Write(b)
}

// writeLog copies a container run's log to w as the kubelet's ReadLogs
// does: since, tail, timestamps, limitBytes and follow; a followed log
// ends when its container does (or ctx ends).
func writeLog(ctx context.Context, l *containerLog, o logOptions, w io.Writer, flush func()) error {
	if o.limitBytes > 0 {
		w = &limitWriter{w: w, n: o.limitBytes}
	}
	f, err := os.Open(l.path)
	if err != nil {
		return err
	}
	defer f.Close()
	emit := func(e logEntry) error {
		if !o.since.IsZero() && e.ts.Before(o.since) {
			return nil
		}
		var b bytes.Buffer
		if o.timestamps {
			b.WriteString(e.ts.Format(time.RFC3339Nano))
			b.WriteByte(' ')
		}
		b.Write(e.content)
		if !e.partial {
			b.WriteByte('\n')
		}
		_, err := w.Write(b.Bytes())
		return err
	}
	r := bufio.NewReader(f)
	var pending []byte
	// What is there now, with tail applied.
	closed, changed := l.state()
	var entries []logEntry
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			if e, ok := parseCRILine(line); ok && (o.since.IsZero() || !e.ts.Before(o.since)) {
				entries = append(entries, e)
			}
		} else {
			pending = line
		}
		if err != nil {
			break
		}
	}
	if o.tail >= 0 && int64(len(entries)) > o.tail {
		entries = entries[int64(len(entries))-o.tail:]
	}
	for _, e := range entries {
		if err := emit(e); err != nil {
			return nil
		}
	}
	if flush != nil {
		flush()
	}
	if !o.follow {
		return nil
	}
	for {
		if closed {
			// Whatever was written before the close is read, then the
			// follow ends.
			for {
				line, err := r.ReadBytes('\n')
				pending = append(pending, line...)
				if len(pending) > 0 && pending[len(pending)-1] == '\n' {
					if e, ok := parseCRILine(pending); ok {
						if emit(e) != nil {
							return nil
						}
					}
					pending = nil
				}
				if err != nil {
					if flush != nil {
						flush()
					}
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
		closed, changed = l.state()
		for {
			line, err := r.ReadBytes('\n')
			pending = append(pending, line...)
			if len(pending) > 0 && pending[len(pending)-1] == '\n' {
				if e, ok := parseCRILine(pending); ok {
					if emit(e) != nil {
						return nil
					}
				}
				pending = nil
			}
			if err != nil {
				break
			}
		}
		if flush != nil {
			flush()
		}
	}
}
