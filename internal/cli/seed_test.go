package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"minik/internal/testserver"
)

// run runs one minikctl command line against kubeconfig and returns its
// stdout, stderr and exit code.
func run(t *testing.T, kubeconfig string, args ...string) (string, string, int) {
	t.Helper()
	streams, _, out, errOut := TestStreams()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code := Run(ctx, append([]string{"--kubeconfig", kubeconfig}, args...), streams)
	return out.String(), errOut.String(), code
}

// TestSeedJourney runs the seed's command sequence, stages one to six,
// against a fresh minikd with testdata/web.yaml, as a person would type
// it, and checks each command's output.
func TestSeedJourney(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"*"}, Scheduler: true, Nodes: 3})
	kc := srv.KubeconfigPath
	web, err := os.ReadFile("../../testdata/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	manifest := filepath.Join(dir, "web.yaml")
	if err := os.WriteFile(manifest, web, 0o644); err != nil {
		t.Fatal(err)
	}
	const ns = "demo"
	step := func(name string, want *regexp.Regexp, args ...string) string {
		t.Helper()
		out, errOut, code := run(t, kc, args...)
		if code != 0 {
			t.Fatalf("%s: minikctl %s: exit %d\n%s%s", name, strings.Join(args, " "), code, out, errOut)
		}
		if want != nil && !want.MatchString(out) {
			t.Fatalf("%s: minikctl %s: output does not match %s:\n%s", name, strings.Join(args, " "), want, out)
		}
		return out
	}

	// Stage one: submit the objects.
	step("stage 1", regexp.MustCompile(`(?s)namespace/demo created\ndeployment.apps/web created\nservice/web created\ningress.networking.k8s.io/web created\n`), "apply", "-f", manifest)

	// Stage two: controllers create the workload.
	step("stage 2", regexp.MustCompile(`deployment.apps/web`), "-n", ns, "get", "deployment,replicaset,pod")
	step("stage 2", regexp.MustCompile(`(?s)Name:\s+web\n.*Replicas:\s+3 desired \| \d+ updated \| \d+ total \| \d+ available \| \d+ unavailable\n.*StrategyType:\s+RollingUpdate`), "-n", ns, "describe", "deployment", "web")

	// Stage six first waits, so that the middle stages see a settled state.
	step("stage 6", regexp.MustCompile(`deployment "web" successfully rolled out\n$`), "-n", ns, "rollout", "status", "deployment/web", "--timeout=120s")

	// Stage three: scheduled to nodes.
	wide := step("stage 3", regexp.MustCompile(`NODE`), "-n", ns, "get", "pod", "-o", "wide")
	if strings.Count(wide, "Running") != 3 {
		t.Fatalf("stage 3: want 3 running pods:\n%s", wide)
	}
	pods := step("stage 3", regexp.MustCompile(`(?s)Name:\s+web-.*Node:\s+\S+/\S+.*Status:\s+Running.*Controlled By:\s+ReplicaSet/web-`), "-n", ns, "describe", "pod", "-l", "app=web")
	if strings.Count(pods, "\nName:") != 2 || !strings.HasPrefix(pods, "Name:") {
		t.Fatalf("stage 3: want three pods described one after another:\n%s", pods)
	}

	// Stage four: every replica's log lines, prefixed.
	logs := step("stage 4", nil, "logs", "deployment/web", "--all-pods=true", "--all-containers=true", "--prefix=true", "--namespace", ns)
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		m := regexp.MustCompile(`^\[pod/(web-[a-z0-9]+-[a-z0-9]+)/nginx\] `).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("stage 4: line without prefix: %q", line)
		}
		seen[m[1]] = true
	}
	if len(seen) != 3 {
		t.Fatalf("stage 4: want lines from 3 replicas, got %v:\n%s", seen, logs)
	}
	step("stage 4", regexp.MustCompile(`Ready:\s+True`), "-n", ns, "describe", "pod", "-l", "app=web")

	// Stage five: endpoints and the service.
	step("stage 5", regexp.MustCompile(`(?s)endpointslice.discovery.k8s.io/web-`), "-n", ns, "get", "pod,endpointslice,service")
	step("stage 5", regexp.MustCompile(`Endpoints:\s+\S+:80,\S+:80,\S+:80\n`), "-n", ns, "describe", "service", "web")

	// Stage six: converged.
	step("stage 6", regexp.MustCompile(`deployment "web" successfully rolled out\n$`), "-n", ns, "rollout", "status", "deployment/web", "--timeout=120s")
	step("stage 6", regexp.MustCompile(`(?s)readyReplicas: 3`), "-n", ns, "get", "deployment", "web", "-o", "yaml")
}

// TestCompletion checks that completion scripts are generated for bash,
// zsh and fish, and kubectl's error for other shells.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell+" gets a script naming minikctl", func(t *testing.T) {
			streams, _, out, _ := TestStreams()
			if code := Run(context.Background(), []string{"completion", shell}, streams); code != 0 {
				t.Fatalf("exit %d", code)
			}
			if !strings.Contains(out.String(), "minikctl") {
				t.Fatalf("script does not mention minikctl:\n%.300s", out.String())
			}
		})
	}
	t.Run("an unknown shell is a usage error", func(t *testing.T) {
		streams, _, _, errOut := TestStreams()
		if code := Run(context.Background(), []string{"completion", "tcsh"}, streams); code != 1 {
			t.Fatalf("exit %d", code)
		}
		if want := "error: Unsupported shell type \"tcsh\".\nSee 'minikctl completion -h' for help and examples\n"; errOut.String() != want {
			t.Fatalf("got %q, want %q", errOut.String(), want)
		}
	})
}

// TestAuthCanI checks can-i against the server's SelfSubjectAccessReview.
func TestAuthCanI(t *testing.T) {
	srv := testserver.Start(t)
	out, errOut, code := run(t, srv.KubeconfigPath, "auth", "can-i", "get", "pods")
	if code != 0 || out != "yes\n" {
		t.Fatalf("admin can-i get pods: exit %d, %q %q", code, out, errOut)
	}
	if _, _, code := run(t, srv.KubeconfigPath, "auth", "can-i", "get", "pods", "-q"); code != 0 {
		t.Fatalf("-q: exit %d", code)
	}
}
