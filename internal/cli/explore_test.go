package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"minik/internal/testserver"
)

func TestExplore(t *testing.T) {
	s := testserver.Start(t)
	run := func(stdin string, args ...string) {
		streams, in, out, errOut := TestStreams()
		in.WriteString(stdin)
		code := Run(context.Background(), append([]string{"--kubeconfig", s.KubeconfigPath}, args...), streams)
		fmt.Printf("$ minikctl %v\n%s--stderr--\n%s--rc=%d\n\n", args, out.String(), errOut.String(), code)
	}
	web, _ := os.ReadFile("../../testdata/web.yaml")
	run("", "apply", "-f", "../../testdata/web.yaml")
	run(strings.Replace(string(web), "replicas: 3", "replicas: 5", 1), "apply", "-f", "-")
	run(strings.Replace(string(web), "replicas: 3", "replicas: 6", 1), "apply", "-f", "-", "--dry-run=server")
	run(strings.Replace(string(web), "replicas: 3", "replicas: 6", 1), "apply", "-f", "-", "--dry-run=client")
	run("", "-n", "demo", "get", "deploy", "web", "-o", "jsonpath={.spec.replicas}")
	run("", "-n", "other", "apply", "-f", "../../testdata/web.yaml")
	run("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: nope\ndata:\n  a: b\n", "apply", "-f", "-")
	run("apiVersion: v1\nkind: Foo\nmetadata:\n  name: c\n", "apply", "-f", "-")
	run("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: 1\n  b: [\n", "apply", "-f", "-")
	run("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: bad\nspec:\n  replicas: -1\n", "-n", "demo", "apply", "-f", "-")
	run("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\nfoo: bar\n", "-n", "demo", "apply", "-f", "-")
	run("", "-n", "demo", "get", "cm")
	run("", "-n", "demo", "get", "deploy", "web", "nope", "-o", "name")
	run("", "-n", "demo", "get", "deploy", "web", "nope")
	run("", "-n", "demo", "get", "foo")
	run("", "-n", "demo", "get", "deploy", "--field-selector", "foo=bar")
	run("", "-n", "demo", "get", "deploy", "-l", "app=web")
	run("", "-n", "demo", "get", "deploy", "-l", "app=nope")
	run("", "-n", "demo", "get", "deploy", "-o", "json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	go func() {
		time.Sleep(500 * time.Millisecond)
		run(strings.Replace(string(web), "replicas: 3", "replicas: 2", 1), "apply", "-f", "-")
	}()
	streams, _, out, errOut := TestStreams()
	code := Run(ctx, []string{"--kubeconfig", s.KubeconfigPath, "-n", "demo", "get", "deploy", "-w"}, streams)
	fmt.Printf("$ watch\n%s--stderr--\n%s--rc=%d\n\n", out.String(), errOut.String(), code)
}
