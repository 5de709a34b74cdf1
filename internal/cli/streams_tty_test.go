package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestExecOnATerminal runs the minikctl binary with its stdin and stdout
// on a pseudo-terminal, as a user's shell does: exec -it puts the
// terminal in raw mode and asks for a TTY (one output stream, no "Unable
// to use a TTY" notice), and the remote exit code is still the process's.
func TestExecOnATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds minikctl")
	}
	s := startStreamsServer(t)
	if !s.streamingRuntime(t) {
		t.Skip("the runtime reads a session's whole stdin before it runs the command (it has no streaming exec yet)")
	}
	bin := filepath.Join(t.TempDir(), "minikctl")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "minik/cmd/minikctl").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--kubeconfig", s.srv.KubeconfigPath, "exec", "-it", "shell", "-c", "app", "--", "sh", "-c", "echo on stderr >&2; exit 5")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&out, tty); close(copied) }()
	err = cmd.Wait()
	tty.Close()
	<-copied
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 5 {
		t.Errorf("exit: %v, want 5; terminal %q stderr %q", err, out.String(), stderr.String())
	}
	if !strings.Contains(out.String(), "on stderr") {
		t.Errorf("the remote stderr is not on the terminal: %q", out.String())
	}
	if strings.Contains(out.String()+stderr.String(), "Unable to use a TTY") {
		t.Errorf("no TTY on a terminal: %q %q", out.String(), stderr.String())
	}
	if stderr.String() != "command terminated with exit code 5\n" {
		t.Errorf("stderr %q", stderr.String())
	}
}
