package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestGroupCommandsFail checks that no command that only groups
// subcommands succeeds when given none (kubectl's DefaultSubCommandRun):
// it prints its help to stderr and exits 1, and an unknown subcommand is a
// usage error.
func TestGroupCommandsFail(t *testing.T) {
	var groups [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			p := append(append([]string(nil), path...), sub.Name())
			if sub.HasSubCommands() {
				groups = append(groups, p)
			}
			walk(sub, p)
		}
	}
	walk(NewRootCommand(IOStreams{}), nil)
	if len(groups) < 5 {
		t.Fatalf("found only %d group commands: %v", len(groups), groups)
	}
	for _, g := range groups {
		t.Run(strings.Join(g, " "), func(t *testing.T) {
			streams, _, stdout, stderr := TestStreams()
			if code := Run(context.Background(), g, streams); code != 1 {
				t.Errorf("%v: exit code %d, want 1", g, code)
			}
			if !strings.Contains(stdout.String()+stderr.String(), "Usage:") {
				t.Errorf("%v printed no help:\nstdout: %s\nstderr: %s", g, stdout, stderr)
			}
			streams, _, _, stderr = TestStreams()
			if code := Run(context.Background(), append(g, "no-such-verb"), streams); code != 1 {
				t.Errorf("%v no-such-verb: exit code %d, want 1", g, code)
			}
			msg := `unknown command "no-such-verb"`
			if g[0] == "create" && len(g) == 1 {
				msg = "Unexpected args: [no-such-verb]" // create takes -f
			}
			want := "error: " + msg + "\nSee 'minikctl " + strings.Join(g, " ") + " -h' for help and examples\n"
			if stderr.String() != want {
				t.Errorf("%v no-such-verb: stderr %q, want %q", g, stderr, want)
			}
		})
	}
}
