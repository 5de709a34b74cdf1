package runtime

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// syncBuffer is a buffer written by one goroutine and read by another.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	ch chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{ch: make(chan struct{}, 1)} }

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Write(p)
	select {
	case s.ch <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until the output contains want, or fails the test.
func (s *syncBuffer) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for !strings.Contains(s.String(), want) {
		select {
		case <-s.ch:
		case <-deadline.C:
			t.Fatalf("output never contained %q; got %q", want, s.String())
		}
	}
}

func TestExecStreamIsAnInteractiveShell(t *testing.T) {
	rt := New(Config{Speed: 1000})
	c, _ := startOn(t, rt, ContainerSpec{Image: "busybox", Command: []string{"sleep", "infinity"}})

	t.Run("with a TTY: prompt, echo, one line at a time, exit code", func(t *testing.T) {
		inR, inW := io.Pipe()
		out := newSyncBuffer()
		resize := make(chan TerminalSize, 1)
		resize <- TerminalSize{Width: 120, Height: 40}
		result := make(chan int, 1)
		go func() {
			code, err := c.ExecStream(t.Context(), ExecOptions{Argv: []string{"sh"}, Stdin: inR, Stdout: out, TTY: true, Resize: resize})
			if err != nil {
				t.Errorf("exec: %v", err)
			}
			result <- code
		}()
		out.waitFor(t, "/ # ")
		// The shell has not read past the first line: the second command
		// sees the first one's effect.
		_, _ = io.WriteString(inW, "cd /tmp; echo hi > f\r")
		out.waitFor(t, "cd /tmp; echo hi > f\r\n/tmp # ")
		_, _ = io.WriteString(inW, "cat f; exit 3\r")
		select {
		case code := <-result:
			if code != 3 {
				t.Fatalf("exit code %d, want 3", code)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the shell did not exit")
		}
		if got := out.String(); got != "/ # cd /tmp; echo hi > f\r\n/tmp # cat f; exit 3\r\nhi\r\n" {
			t.Fatalf("terminal shows %q", got)
		}
	})

	t.Run("with a TTY, ^C interrupts the foreground command", func(t *testing.T) {
		clk := testingclock.NewFakeClock(time.Now())
		c, _ := startOn(t, New(Config{Clock: clk, PullBandwidth: 1 << 62}), ContainerSpec{Image: "busybox", Command: []string{"sleep", "infinity"}})
		inR, inW := io.Pipe()
		out := newSyncBuffer()
		result := make(chan int, 1)
		go func() {
			code, _ := c.ExecStream(t.Context(), ExecOptions{Argv: []string{"sh"}, Stdin: inR, Stdout: out, TTY: true})
			result <- code
		}()
		out.waitFor(t, "/ # ")
		_, _ = io.WriteString(inW, "sleep 100000\r")
		// The sleep has begun when it waits on the clock.
		for deadline := time.Now().Add(10 * time.Second); !clk.HasWaiters(); {
			if time.Now().After(deadline) {
				t.Fatal("the sleep never began")
			}
			select {
			case <-out.ch:
			case <-time.After(time.Millisecond):
			}
		}
		_, _ = io.WriteString(inW, "\x03")
		out.waitFor(t, "^C\r\n/ # ")
		_, _ = io.WriteString(inW, "echo status $?; exit\r")
		if code := <-result; code != 0 {
			t.Fatalf("exit code %d", code)
		}
		if got := out.String(); !strings.HasSuffix(got, "echo status $?; exit\r\nstatus 130\r\n") {
			t.Fatalf("terminal shows %q", got)
		}
	})

	t.Run("bash prompts as bash does", func(t *testing.T) {
		// The input is typed once bash prompts: typed earlier, the
		// terminal would echo it before the prompt.
		inR, inW := io.Pipe()
		out := newSyncBuffer()
		type result struct {
			code int
			err  error
		}
		done := make(chan result, 1)
		go func() {
			code, err := c.ExecStream(t.Context(), ExecOptions{Argv: []string{"bash"}, Stdin: inR, Stdout: out, TTY: true})
			done <- result{code, err}
		}()
		out.waitFor(t, "root@web-1:/# ")
		_, _ = io.WriteString(inW, "exit 5\r")
		r := <-done
		_ = inW.Close()
		if r.err != nil || r.code != 5 || out.String() != "root@web-1:/# exit 5\r\n" {
			t.Fatalf("%d %v %q", r.code, r.err, out.String())
		}
	})

	t.Run("without a TTY: stdin is read as it streams", func(t *testing.T) {
		inR, inW := io.Pipe()
		out := newSyncBuffer()
		result := make(chan int, 1)
		go func() {
			code, _ := c.ExecStream(t.Context(), ExecOptions{Argv: []string{"sh"}, Stdin: inR, Stdout: out, Stderr: out})
			result <- code
		}()
		_, _ = io.WriteString(inW, "echo one\n")
		out.waitFor(t, "one\n")
		_, _ = io.WriteString(inW, "nope\n")
		out.waitFor(t, "sh: nope: not found\n")
		inW.Close()
		if code := <-result; code != 127 {
			t.Fatalf("exit code %d, want 127 (the last command's)", code)
		}
	})

	t.Run("a command line longer than a shell holds ends its input", func(t *testing.T) {
		in := io.MultiReader(strings.NewReader("echo before\n"), strings.NewReader(strings.Repeat("x", maxCommandLine+1)), strings.NewReader("\necho after\n"))
		var out bytes.Buffer
		code, err := c.ExecStream(t.Context(), ExecOptions{Argv: []string{"sh"}, Stdin: in, Stdout: &out, Stderr: &out})
		if err != nil || strings.Contains(out.String(), "after") || !strings.HasPrefix(out.String(), "before\n") {
			t.Fatalf("%d %v %q", code, err, out.String()[:min(200, out.Len())])
		}
	})

	t.Run("the context ends a waiting exec", func(t *testing.T) {
		inR, _ := io.Pipe()
		ctx, cancel := context.WithCancel(t.Context())
		result := make(chan error, 1)
		go func() {
			_, err := c.ExecStream(ctx, ExecOptions{Argv: []string{"sh"}, Stdin: inR, Stdout: io.Discard})
			result <- err
		}()
		cancel()
		select {
		case err := <-result:
			if err == nil {
				t.Fatal("no error from a cancelled exec")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the exec did not end with its context")
		}
	})
}

func TestInteractiveContainerWaitsForItsAttachedClient(t *testing.T) {
	rt := New(Config{Speed: 1000})
	c, logs := startOn(t, rt, ContainerSpec{Image: "busybox", Command: []string{"sh"}, Stdin: true, StdinOnce: true, TTY: true})
	select {
	case <-c.Done():
		t.Fatalf("an interactive sh exited at once: %+v", c.Exit())
	default:
	}
	inR, inW := io.Pipe()
	out := newSyncBuffer()
	attached := make(chan error, 1)
	go func() { attached <- c.Attach(t.Context(), AttachOptions{Stdin: inR, Stdout: out, TTY: true}) }()
	_, _ = io.WriteString(inW, "echo attached $((6*7))\r")
	out.waitFor(t, "attached 42\r\n")
	_, _ = io.WriteString(inW, "exit 4\r")
	if e := waitDone(t, c); e.Code != 4 {
		t.Fatalf("exit %+v", e)
	}
	if err := <-attached; err != nil {
		t.Fatalf("attach: %v", err)
	}
	if !strings.Contains(strings.Join(logs.get(), "\n"), "attached 42") {
		t.Fatalf("logs %q", logs.get())
	}
	if err := c.Attach(t.Context(), AttachOptions{Stdout: io.Discard}); err != ErrNotRunning {
		t.Fatalf("attach to an ended container: %v", err)
	}
}

func TestStdinOnceClosesStdinWhenTheClientDetaches(t *testing.T) {
	rt := New(Config{Speed: 1000})
	c, logs := startOn(t, rt, ContainerSpec{Image: "busybox", Command: []string{"sh", "-c", "while read l; do echo got $l; done; echo eof"}, Stdin: true, StdinOnce: true})
	ctx, detach := context.WithCancel(t.Context())
	out := newSyncBuffer()
	done := make(chan error, 1)
	inR, inW := io.Pipe()
	go func() { done <- c.Attach(ctx, AttachOptions{Stdin: inR, Stdout: out, Stderr: out}) }()
	_, _ = io.WriteString(inW, "a\n")
	out.waitFor(t, "got a\n")
	detach()
	<-done
	if e := waitDone(t, c); e.Code != 0 || !strings.HasSuffix(strings.Join(logs.get(), "|"), "stdout: got a|stdout: eof") {
		t.Fatalf("exit %+v, logs %q", e, logs.get())
	}
}

func TestTarMakesAndReadsRealArchives(t *testing.T) {
	rt := New(Config{Speed: 1000})
	vol := NewVolume(map[string][]byte{"app.conf": []byte("level=debug\n"), "sub/x.json": []byte("{}")}, true)
	c, _ := startOn(t, rt, ContainerSpec{Image: "busybox", Command: []string{"sleep", "3600"}, Mounts: []Mount{{Path: "/etc/app", Volume: vol}}})

	// kubectl cp pod:/etc/app dir
	var archive bytes.Buffer
	var stderr bytes.Buffer
	code, err := c.ExecStream(t.Context(), ExecOptions{Argv: []string{"tar", "cf", "-", "/etc/app"}, Stdout: &archive, Stderr: &stderr})
	if err != nil || code != 0 || stderr.String() != "tar: removing leading '/' from member names\n" {
		t.Fatalf("tar cf: %d %v %q", code, err, stderr.String())
	}
	tr := tar.NewReader(&archive)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	if got := strings.Join(names, " "); got != "etc/app/ etc/app/app.conf etc/app/sub/ etc/app/sub/x.json" {
		t.Fatalf("members %q", got)
	}

	// kubectl cp file pod:/tmp/in/
	var in bytes.Buffer
	tw := tar.NewWriter(&in)
	_ = tw.WriteHeader(&tar.Header{Name: "report.txt", Mode: 0o644, Size: 6, Typeflag: tar.TypeReg})
	_, _ = tw.Write([]byte("hello\n"))
	_ = tw.WriteHeader(&tar.Header{Name: "../../escape.txt", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
	_, _ = tw.Write([]byte("x"))
	_ = tw.Close()
	if out, code, err := c.Exec(t.Context(), []string{"mkdir", "-p", "/tmp/in"}); err != nil || code != 0 {
		t.Fatalf("mkdir: %q %d %v", out, code, err)
	}
	code, err = c.ExecStream(t.Context(), ExecOptions{Argv: []string{"tar", "--no-same-permissions", "--no-same-owner", "-xmf", "-", "-C", "/tmp/in"}, Stdin: &in, Stdout: &stderr, Stderr: &stderr})
	if err != nil || code != 0 {
		t.Fatalf("tar xf: %d %v %q", code, err, stderr.String())
	}
	for path, want := range map[string]string{"/tmp/in/report.txt": "hello\n", "/tmp/in/escape.txt": "x"} {
		if got, err := c.ReadFile(path); err != nil || string(got) != want {
			t.Errorf("%s: %q %v", path, got, err)
		}
	}
	// Into a read-only volume: tar's error, exit 1.
	in.Reset()
	tw = tar.NewWriter(&in)
	_ = tw.WriteHeader(&tar.Header{Name: "f", Size: 0, Typeflag: tar.TypeReg})
	_ = tw.Close()
	stderr.Reset()
	code, _ = c.ExecStream(t.Context(), ExecOptions{Argv: []string{"tar", "xf", "-", "-C", "/etc/app"}, Stdin: &in, Stderr: &stderr})
	if code != 1 || stderr.String() != "tar: can't create 'f': Read-only file system\n" {
		t.Fatalf("tar into a read-only volume: %d %q", code, stderr.String())
	}
}
