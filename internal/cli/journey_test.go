package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"minik/internal/journey"
	"minik/internal/testserver"
)

var updateJourney = flag.Bool("update-journey", false, "rewrite the journey goldens in testdata/journey")

// journeyMasks hide what changes from run to run: times, generated
// names' suffixes, nodes, addresses, resource versions and counts.
var journeyMasks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "UID"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT[0-9:.]+Z`), "TIME"},
	{regexp.MustCompile(`-[0-9a-f]{8,10}-[a-z0-9]{5}_`), "-HASH-POD_"},
	{regexp.MustCompile(`[+-]\d+\.\d{3}s`), "+T"},
	{regexp.MustCompile(`(web|[a-z-]+)-[0-9a-f]{8,10}-[a-z0-9]{5}\b`), "$1-HASH-POD"},
	{regexp.MustCompile(`(web|[a-z-]+)-[0-9a-f]{8,10}\b`), "$1-HASH"},
	{regexp.MustCompile(`minik-node-\d`), "minik-node-N"},
	{regexp.MustCompile(`endpointslices/([a-z0-9-]+)-[a-z0-9]{5}\b`), "endpointslices/$1-XXXXX"},
	{regexp.MustCompile(`\b\d+\.\d+\.\d+\.\d+\b`), "IP"},
	{regexp.MustCompile(`\(x\d+\)`), "(xN)"},
	{regexp.MustCompile(`restarted \d+ times`), "restarted N times"},
	{regexp.MustCompile(`\(\d+ earlier lines left out\)`), "(N earlier lines left out)"},
	{regexp.MustCompile(`back-off \d+\w+`), "back-off D"},
	{regexp.MustCompile(`\d+(\.\d+)?m?s\b`), "D"},
}

// maskJourney masks a text journey and sorts, without duplicates, the
// rows of each stage's table: which pod a kubelet served first, and how
// often it wrote, depend on timing; which kinds of steps each stage has
// does not.
func maskJourney(out string) string {
	for _, m := range journeyMasks {
		out = m.re.ReplaceAllString(out, m.with)
	}
	var b strings.Builder
	var rows []string
	flush := func() {
		sort.Strings(rows)
		last := ""
		for _, r := range rows {
			if r != last {
				b.WriteString(r + "\n")
			}
			last = r
		}
		rows = nil
	}
	for _, line := range strings.Split(out, "\n") {
		isRow := strings.HasPrefix(line, "│") && !strings.Contains(line, "Since apply")
		if isRow {
			// Column widths follow the longest cell: squeeze them.
			cells := strings.Split(strings.Trim(line, "│"), "│")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			rows = append(rows, "│ "+strings.Join(cells, " │ ")+" │")
			continue
		}
		flush()
		if strings.HasPrefix(line, "├") || strings.HasPrefix(line, "┌") || strings.HasPrefix(line, "└") {
			continue
		}
		if strings.HasPrefix(line, "│") {
			line = "│ Since apply │ Actor │ Action │ Result │"
		}
		b.WriteString(line + "\n")
	}
	flush()
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// maskCheckpoint masks a journey's checkpoint section and sorts its
// evidence.
func maskCheckpoint(out string) string {
	out = maskJourney(out)
	var head, ev []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if strings.HasPrefix(l, "  - ") {
			ev = append(ev, l)
		} else {
			head = append(head, l)
		}
	}
	sort.Strings(ev)
	return strings.Join(append(head[:1], append(ev, head[1:]...)...), "\n") + "\n"
}

func readGolden(t *testing.T, name string) string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join("testdata", "journey", name+".golden"))
	return string(b)
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "journey", name+".golden")
	if *updateJourney {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-journey to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n%s", name, path, got)
	}
}

// journeyJSON runs journey -o json.
func journeyJSON(t *testing.T, kc, ns, name string) (*journey.Journey, result) {
	t.Helper()
	out, errOut, code := run(t, kc, "-n", ns, "journey", "deployment/"+name, "-o", "json")
	r := result{out, errOut, code}
	if out == "" {
		return nil, r
	}
	var j journey.Journey
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("journey -o json: %v\n%s", err, r)
	}
	return &j, r
}

// waitJourney polls the journey until done says it has reached the state
// the test wants.
func waitJourney(t *testing.T, kc, ns, name string, done func(*journey.Journey) bool) *journey.Journey {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		j, r := journeyJSON(t, kc, ns, name)
		if j != nil && done(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("journey of %s/%s did not reach the wanted state:\n%s", ns, name, r)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestJourneyOfTheWebRollout applies testdata/web.yaml and reads the
// journey of its rollout in every format.
func TestJourneyOfTheWebRollout(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"*"}, Scheduler: true, Nodes: 3})
	kc := srv.KubeconfigPath
	if out, errOut, code := run(t, kc, "apply", "-f", "../../testdata/web.yaml"); code != 0 {
		t.Fatalf("apply: %d %s%s", code, out, errOut)
	}
	if out, errOut, code := run(t, kc, "-n", "demo", "rollout", "status", "deployment/web", "--timeout=90s"); code != 0 {
		t.Fatalf("rollout status: %d %s%s", code, out, errOut)
	}
	// The last writes (EndpointSlices, the Deployment's status) reach the
	// trail just after their responses.
	j := waitJourney(t, kc, "demo", "web", func(j *journey.Journey) bool {
		return j.Converged && countSteps(j, journey.StageTraffic, "endpointslices") > 0 && countSteps(j, journey.StageTraffic, "Ready condition") == 3
	})
	if j.Source != "trail" {
		t.Errorf("source %q, want trail", j.Source)
	}
	for _, c := range []struct {
		stage journey.Stage
		what  string
		want  int
	}{
		{journey.StageSubmit, "create deployments/web", 1},
		{journey.StageControllers, "create replicasets/web-", 1},
		{journey.StageControllers, "create pods/web-", 3},
		{journey.StageSchedule, "bind pods/web-", 3},
		{journey.StageTraffic, "Ready condition", 3},
		{journey.StageConverged, "status", 1},
	} {
		if got := countSteps(j, c.stage, c.what); got != c.want {
			t.Errorf("stage %d: %d steps %q, want %d", c.stage, got, c.what, c.want)
		}
	}
	for i := 1; i < len(j.Steps); i++ {
		if j.Steps[i].Stage == j.Steps[i-1].Stage && j.Steps[i].At.Before(j.Steps[i-1].At) {
			t.Errorf("step %d is before step %d in stage %d", i, i-1, j.Steps[i].Stage)
		}
	}

	out, errOut, code := run(t, kc, "-n", "demo", "journey", "deployment/web")
	if code != 0 {
		t.Fatalf("journey: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("journey of web:\n%s", out)
	checkGolden(t, "web.txt", maskJourney(out))

	out, _, code = run(t, kc, "-n", "demo", "journey", "deploy", "web", "-o", "mermaid")
	t.Logf("mermaid:\n%s", out)
	if code != 0 || !strings.Contains(out, "sequenceDiagram\n  participant D as Developer\n  participant K as kubectl\n  participant A as API Server") ||
		!strings.Contains(out, "participant EP as EndpointSlice controller") || !regexp.MustCompile(`S->>A: bind pods/web-\S+ to minik-node-\d`).MatchString(out) {
		t.Errorf("mermaid: exit %d\n%s", code, out)
	}

	// --watch of a converged rollout prints it once and succeeds.
	watched, errOut, code := run(t, kc, "-n", "demo", "journey", "deployment/web", "--watch", "--timeout=30s")
	if code != 0 || errOut != "" || !strings.HasSuffix(watched, "Converged: 3/3 replicas ready and available.\n") || strings.Count(watched, "Journey of deployment/web") != 1 {
		t.Errorf("--watch: exit %d\n%s%s", code, watched, errOut)
	}

	out, _, code = run(t, kc, "-n", "demo", "journey", "deployment/web", "-o", "html")
	if code != 0 || strings.Count(out, "<svg ") != 2 || strings.Contains(out, "http://") && !strings.Contains(out, `xmlns="http://www.w3.org/2000/svg"`) ||
		strings.Contains(out, "<script src") || strings.Contains(out, "<link ") {
		t.Errorf("html: exit %d, want one page with two inline SVG and nothing from the network\n%s", code, out)
	}
}

func countSteps(j *journey.Journey, stage journey.Stage, what string) int {
	n := 0
	for _, s := range j.Steps {
		if s.Stage == stage && strings.Contains(s.Action, what) {
			n++
		}
	}
	return n
}

// failureCase is a failure manifest's pod, run as a one-replica
// Deployment of the same name, and the checkpoint its journey must end at.
type failureCase struct {
	name       string
	stage      journey.Stage
	checkpoint string
	evidence   string // a substring of the checkpoint's evidence
}

// deploymentOfPod turns a failure manifest's Pod into a Deployment of one
// replica with its spec.
func deploymentOfPod(t *testing.T, path, ns string) *appsv1.Deployment {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	if err := yaml.Unmarshal(raw, &pod); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	labels := map[string]string{"app": pod.Name}
	one := int32(1)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod.Spec},
		},
	}
}

// TestJourneyOfFailures runs failure manifests as Deployments, plus a
// quota, a rejected submission and a Service that selects nothing, and
// checks where each journey stops, with what evidence, and its exit code.
func TestJourneyOfFailures(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"*"}, Scheduler: true, Nodes: 3})
	kc := srv.KubeconfigPath
	cs := srv.Client(t)
	ctx := context.Background()
	cases := []failureCase{
		{"bad-image-tag", journey.StageContainers, journey.CheckpointRestarting, "ImagePullBackOff"},
		{"crash-loop", journey.StageContainers, journey.CheckpointRestarting, "last exit code 1"},
		{"insufficient-cpu", journey.StageSchedule, journey.CheckpointPending, "FailedScheduling: 0/3 nodes are available"},
		{"unsatisfiable-affinity", journey.StageSchedule, journey.CheckpointPending, "node affinity"},
		{"missing-configmap-env", journey.StageContainers, journey.CheckpointRestarting, "CreateContainerConfigError"},
		{"missing-configmap-volume", journey.StageContainers, journey.CheckpointRestarting, "FailedMount"},
		{"readiness-wrong-path", journey.StageTraffic, journey.CheckpointNotReady, "404"},
		{"readiness-wrong-port", journey.StageTraffic, journey.CheckpointNotReady, "connection refused"},
		// Available without a readiness probe, yet restarted by its
		// liveness probe: not converged all the same.
		{"liveness-failing", journey.StageContainers, journey.CheckpointRestarting, "last exit code 137"},
	}
	ns := func(name string) string { return "j-" + name }
	create := func(name string) {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns(name)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cases {
		create(c.name)
		d := deploymentOfPod(t, filepath.Join("../../testdata/failures", c.name+".yaml"), ns(c.name))
		if _, err := cs.AppsV1().Deployments(ns(c.name)).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// A quota of one pod for two replicas: the ReplicaSet falls short.
	create("quota")
	if _, err := cs.CoreV1().ResourceQuotas(ns("quota")).Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	quota := deploymentOfPod(t, "../../testdata/failures/readiness-wrong-path.yaml", ns("quota"))
	quota.Name, quota.Spec.Template.Spec.Containers[0].ReadinessProbe = "quota", nil
	two := int32(2)
	quota.Spec.Replicas = &two
	cases = append(cases, failureCase{"quota", journey.StageControllers, journey.CheckpointShort, "exceeded quota"})

	// A Service whose selector matches no pod of a Deployment that is
	// otherwise fine.
	create("no-endpoints")
	lonely := deploymentOfPod(t, "../../testdata/failures/readiness-wrong-path.yaml", ns("no-endpoints"))
	lonely.Name, lonely.Spec.Template.Spec.Containers[0].ReadinessProbe = "no-endpoints", nil
	if _, err := cs.CoreV1().Services(ns("no-endpoints")).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "no-endpoints"},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "no-endpoint"}, Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, failureCase{"no-endpoints", journey.StageTraffic, journey.CheckpointNoEndpoints, "selects app=no-endpoint"})
	for _, d := range []*appsv1.Deployment{quota, lonely} {
		if _, err := cs.AppsV1().Deployments(d.Namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// A submission the API server refuses: an invalid Deployment.
	create("rejected")
	bad := deploymentOfPod(t, "../../testdata/failures/readiness-wrong-path.yaml", ns("rejected"))
	bad.Name = "rejected"
	bad.Spec.Template.Labels = map[string]string{"app": "other"}
	manifest, _ := yaml.Marshal(bad)
	path := filepath.Join(t.TempDir(), "rejected.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: apps/v1\nkind: Deployment\n"+string(manifest)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, code := run(t, kc, "apply", "-f", path); code == 0 {
		t.Fatal("the invalid Deployment was accepted")
	}
	cases = append(cases, failureCase{"rejected", journey.StageSubmit, journey.CheckpointRejected, "Invalid"})

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkFailureJourney(t, kc, ns(c.name), c) })
	}
}

// checkFailureJourney waits until the journey of c's Deployment in ns
// stops at c's checkpoint, then until its masked checkpoint is the
// golden's, and checks the exit code and the error.
func checkFailureJourney(t *testing.T, kc, ns string, c failureCase) {
	t.Helper()
	waitJourney(t, kc, ns, c.name, func(j *journey.Journey) bool {
		return j.Checkpoint != nil && j.Checkpoint.Name == c.checkpoint && strings.Contains(strings.Join(j.Checkpoint.Evidence, "\n"), c.evidence)
	})
	// The state moves on (back-offs, retries): the journey is read
	// until its masked checkpoint is the golden's.
	golden := "failure-" + c.name + ".txt"
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, errOut, code := run(t, kc, "-n", ns, "journey", "deployment/"+c.name)
		wantErr := fmt.Sprintf("error: deployment %q has not converged: stopped at stage %d (%s): %s\n", c.name, c.stage, c.stage, c.checkpoint)
		i := strings.Index(out, "\nStopped at stage")
		got := ""
		if i >= 0 {
			got = maskCheckpoint(out[i+1:])
		}
		if code == 1 && errOut == wantErr && got != "" && (*updateJourney && strings.Contains(out, c.evidence) || got == readGolden(t, golden)) {
			t.Logf("journey of %s:\n%s", c.name, out)
			checkGolden(t, golden, got)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("journey of %s: exit %d (want 1), stderr %q (want %q), checkpoint:\n%s\nwant:\n%s\nwhole output:\n%s", c.name, code, errOut, wantErr, got, readGolden(t, golden), out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestJourneyOfAnUntoleratedTaint taints every node, waits until the
// scheduler has seen the taints (a canary pod per node that tolerates
// them and selects its node by a label put in the same write is bound),
// and checks that the journey of a Deployment without the toleration
// stops at scheduling. It has its own cluster: the taints would keep the
// other failures' pods from their nodes.
func TestJourneyOfAnUntoleratedTaint(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"*"}, Scheduler: true, Nodes: 3})
	kc := srv.KubeconfigPath
	cs := srv.Client(t)
	ctx := context.Background()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 3 {
		t.Fatalf("%d nodes, want 3", len(nodes.Items))
	}
	testserver.TaintNodes(t, cs, corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule})

	c := failureCase{"untolerated-taint", journey.StageSchedule, journey.CheckpointPending,
		"FailedScheduling: 0/3 nodes are available: 3 node(s) had untolerated taint(s)"}
	ns := "j-" + c.name
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d := deploymentOfPod(t, filepath.Join("../../testdata/failures", c.name+".yaml"), ns)
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	checkFailureJourney(t, kc, ns, c)
}

// TestJourneyBadInput checks the errors of an unknown object, a kind
// without a rollout, a revision that does not exist and a bad format.
func TestJourneyBadInput(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"*"}, Scheduler: true, Nodes: 1})
	kc := srv.KubeconfigPath
	if out, errOut, code := run(t, kc, "apply", "-f", "../../testdata/web.yaml"); code != 0 {
		t.Fatalf("apply: %d %s%s", code, out, errOut)
	}
	for _, c := range []struct {
		name string
		args []string
		want result
	}{
		{"an unknown deployment is kube's NotFound", []string{"-n", "demo", "journey", "deployment/nope"},
			result{"", "Error from server (NotFound): deployments.apps \"nope\" not found\n", 1}},
		{"a kind without a rollout names the kinds that have one", []string{"-n", "demo", "journey", "service/web"},
			result{"", "error: services \"web\" has no rollout: the kinds with a rollout are " + rolloutKindsNames + "\n", 1}},
		{"an unknown type is the server's", []string{"-n", "demo", "journey", "nothings/web"},
			result{"", "error: the server doesn't have a resource type \"nothings\"\n", 1}},
		{"a revision that does not exist", []string{"-n", "demo", "journey", "deployment/web", "--revision", "7"},
			result{"", "error: unable to find the specified revision 7 (revisions: 1)\n", 1}},
		{"an unknown format", []string{"-n", "demo", "journey", "deployment/web", "-o", "yaml"},
			result{"", "error: unable to match a printer suitable for the output format \"yaml\", allowed formats are: text,mermaid,json,html\n", 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The ReplicaSet of revision 1 appears just after the apply.
			deadline := time.Now().Add(30 * time.Second)
			for {
				out, errOut, code := run(t, kc, c.args...)
				got := result{out, errOut, code}
				if got == c.want {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("got\n%s\nwant\n%s", got, c.want)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

// BenchmarkJourneyLive is the time minikctl takes to produce the text
// journey of a converged rollout of 3 and of 100 replicas against a live
// minikd (reading the objects and the trail, building, printing), and
// the trail's size for that rollout (records and JSON bytes).
func BenchmarkJourneyLive(b *testing.B) {
	srv := testserver.StartWith(b, testserver.Options{Controllers: []string{"*"}, Scheduler: true, Nodes: 3})
	cs := srv.Client(b)
	ctx := context.Background()
	for _, n := range []int32{3, 100} {
		ns := fmt.Sprintf("bench-%d", n)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		labels := map[string]string{"app": "web"}
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec: appsv1.DeploymentSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}}}},
		}
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		streams, _, _, _ := TestStreams()
		flags := NewConfigFlags()
		flags.KubeConfig = srv.KubeconfigPath
		flags.Overrides.Context.Namespace = ns
		f := NewFactory(flags, streams)
		o := &JourneyOptions{Output: "text", Streams: streams}
		if err := o.Complete(f, &cobra.Command{}, []string{"deployment/web"}); err != nil {
			b.Fatal(err)
		}
		deadline := time.Now().Add(3 * time.Minute)
		for {
			j, err := o.Journey(ctx)
			if err == nil && j.Converged && countSteps(j, journey.StageConverged, "status") == 1 {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d replicas did not converge: %v", n, err)
			}
			time.Sleep(500 * time.Millisecond)
		}
		raw, err := o.trail.Get().Namespace(ns).Resource("records").DoRaw(ctx)
		if err != nil {
			b.Fatal(err)
		}
		in, err := o.Inputs(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			for b.Loop() {
				j, err := o.Journey(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := journey.Text(io.Discard, j); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(in.Records)), "records")
			b.ReportMetric(float64(len(raw)), "trail-bytes")
		})
	}
}

// TestJourneyWithoutTheTrailIsApproximate reads the journey as a user who
// may read the workload but not the trail: it is built from the objects
// and says so.
func TestJourneyWithoutTheTrailIsApproximate(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"*"}, Scheduler: true, Nodes: 1})
	kc := srv.KubeconfigPath
	cs := srv.Client(t)
	ctx := context.Background()
	if out, errOut, code := run(t, kc, "apply", "-f", "../../testdata/web.yaml"); code != 0 {
		t.Fatalf("apply: %d %s%s", code, out, errOut)
	}
	if _, err := cs.RbacV1().Roles("demo").Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "workload-reader"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"", "apps", "discovery.k8s.io", "networking.k8s.io"}, Resources: []string{"deployments", "replicasets", "pods", "services", "endpointslices", "ingresses", "events"}, Verbs: []string{"get", "list"}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().RoleBindings("demo").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bob"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "workload-reader"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "bob"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		out, errOut, code := run(t, kc, "--as", "bob", "-n", "demo", "journey", "deployment/web", "-o", "json")
		var j journey.Journey
		if code == 0 && json.Unmarshal([]byte(out), &j) == nil && j.Converged {
			if j.Source != "approximate" || len(j.Notes) == 0 || !strings.Contains(j.Notes[0], "you may not list the trail of demo") {
				t.Errorf("source %q, notes %q", j.Source, j.Notes)
			}
			for _, st := range []journey.Stage{journey.StageSubmit, journey.StageControllers, journey.StageSchedule, journey.StageTraffic, journey.StageConverged} {
				if countSteps(&j, st, "") == 0 {
					t.Errorf("stage %d (%s) has no step", st, st)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("journey as bob: exit %d\n%s%s", code, out, errOut)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
