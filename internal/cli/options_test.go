package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// A kubeconfig with two contexts; its server is never contacted.
const testKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:1
contexts:
- name: minik
  context: {cluster: local, user: admin, namespace: team}
- name: other
  context: {cluster: local, user: admin}
current-context: minik
users:
- name: admin
  user: {token: secret}
`

func writeKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// parse runs a command line through a root command holding only the
// command newCmd builds, which captures the completed options.
func parse(args []string, newCmd func(f *Factory, streams IOStreams) *cobra.Command) error {
	streams, _, _, _ := TestStreams()
	flags := NewConfigFlags()
	root := &cobra.Command{Use: "minikctl", SilenceErrors: true, SilenceUsage: true}
	flags.AddFlags(root.PersistentFlags())
	root.AddCommand(newCmd(NewFactory(flags, streams), streams))
	root.SetArgs(args)
	return root.ExecuteContext(context.Background())
}

func parseGet(t *testing.T, args ...string) (*GetOptions, error) {
	t.Helper()
	var got *GetOptions
	err := parse(args, func(f *Factory, streams IOStreams) *cobra.Command {
		return newCmdGet(f, streams, func(_ context.Context, o *GetOptions) error { got = o; return nil })
	})
	return got, err
}

func parseApply(t *testing.T, args ...string) (*ApplyOptions, error) {
	t.Helper()
	var got *ApplyOptions
	err := parse(args, func(f *Factory, streams IOStreams) *cobra.Command {
		return newCmdApply(f, streams, func(_ context.Context, o *ApplyOptions) error { got = o; return nil })
	})
	return got, err
}

func TestGetOptions(t *testing.T) {
	kc := writeKubeconfig(t)
	t.Run("the context's namespace is the default", func(t *testing.T) {
		o, err := parseGet(t, "--kubeconfig", kc, "get", "deploy")
		if err != nil {
			t.Fatal(err)
		}
		if o.Namespace != "team" || o.ExplicitNamespace {
			t.Errorf("namespace %q explicit %v, want team, false", o.Namespace, o.ExplicitNamespace)
		}
	})
	t.Run("-n is explicit and flags follow the verb", func(t *testing.T) {
		o, err := parseGet(t, "--kubeconfig", kc, "get", "deployment,service", "-n", "demo", "-o", "wide", "-l", "app=web", "--field-selector", "metadata.name=web", "--show-labels", "--no-headers")
		if err != nil {
			t.Fatal(err)
		}
		if o.Namespace != "demo" || !o.ExplicitNamespace || o.LabelSelector != "app=web" || o.FieldSelector != "metadata.name=web" ||
			o.PrintFlags.OutputFormat != "wide" || !o.PrintFlags.ShowLabels || !o.PrintFlags.NoHeaders || strings.Join(o.Args, " ") != "deployment,service" {
			t.Errorf("options %+v", o)
		}
		if !o.PrintFlags.IsHumanReadable() {
			t.Errorf("-o wide is a table")
		}
	})
	t.Run("-A is not an explicit namespace", func(t *testing.T) {
		o, err := parseGet(t, "--kubeconfig", kc, "-n", "demo", "get", "pods", "-A", "-w")
		if err != nil {
			t.Fatal(err)
		}
		if !o.AllNamespaces || o.ExplicitNamespace || !o.Watch {
			t.Errorf("options %+v", o)
		}
	})
	t.Run("--context picks the context and KUBECONFIG is read", func(t *testing.T) {
		t.Setenv("KUBECONFIG", kc)
		o, err := parseGet(t, "--context", "other", "get", "pods", "--request-timeout", "5s")
		if err != nil {
			t.Fatal(err)
		}
		if o.Namespace != "default" {
			t.Errorf("namespace %q, want default", o.Namespace)
		}
	})
	t.Run("show-labels only goes with tables", func(t *testing.T) {
		_, err := parseGet(t, "--kubeconfig", kc, "get", "pods", "--show-labels", "-o", "yaml")
		if err == nil || err.Error() != "--show-labels option cannot be used with yaml printer" {
			t.Errorf("err = %v", err)
		}
	})
}

func TestApplyOptions(t *testing.T) {
	kc := writeKubeconfig(t)
	o, err := parseApply(t, "--kubeconfig", kc, "apply", "-f", "a.yaml", "-f", "b.yaml,c.yaml", "-R", "--dry-run=server")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.Filenames.Filenames, " ") != "a.yaml b.yaml c.yaml" || !o.Filenames.Recursive ||
		o.DryRun != DryRunServer || o.FieldManager != "kubectl-client-side-apply" || o.FieldValidation != "Strict" ||
		o.Namespace != "team" || o.EnforceNamespace || o.BaseName != "minikctl" {
		t.Errorf("options %+v", o)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"apply"}, "must specify one of -f and -k"},
		{[]string{"apply", "-f", "a.yaml", "--dry-run"}, `--dry-run flag without a value was specified. A value must be set: "none", "server", or "client".`},
		{[]string{"apply", "-f", "a.yaml", "--validate=sometimes"}, `invalid - validate option "sometimes"; must be one of: strict (or true), warn, ignore (or false)`},
		{[]string{"apply", "-f", "a.yaml", "-o", "wide"}, `unable to match a printer suitable for the output format "wide", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,yaml`},
	} {
		_, err := parseApply(t, append([]string{"--kubeconfig", kc}, tt.args...)...)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%v: err = %v, want %q", tt.args, err, tt.want)
		}
	}
}

func TestRunReportsUsageErrors(t *testing.T) {
	streams, _, out, errOut := TestStreams()
	code := Run(context.Background(), []string{"get", "--nope"}, streams)
	if code != 1 || out.Len() != 0 || errOut.String() != "Error: unknown flag: --nope\nSee 'minikctl get --help' for usage.\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}
