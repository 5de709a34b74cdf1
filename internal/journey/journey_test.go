package journey

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	trail "minik/internal/trail/v1alpha1"
)

var t0 = time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func ctrl(kind, name string, uid types.UID) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{Kind: kind, Name: name, UID: uid, Controller: &yes}}
}

// rollout is a converged rollout of n replicas of web in demo, as the
// API would show it, with its trail when withTrail.
func rollout(n int, withTrail bool) *Inputs {
	replicas := int32(n)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo", UID: "d-uid", Generation: 1, CreationTimestamp: metav1.NewTime(t0),
			Annotations: map[string]string{revisionAnnotation: "1"}, Labels: map[string]string{"app": "web"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, Time: &metav1.Time{Time: t0}}}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, LastUpdateTime: metav1.NewTime(at(3000))}}},
	}
	rs := appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-abc123", Namespace: "demo", UID: "rs-uid", CreationTimestamp: metav1.NewTime(t0),
			Annotations: map[string]string{revisionAnnotation: "1"}, OwnerReferences: ctrl("Deployment", "web", "d-uid")},
		Spec:   appsv1.ReplicaSetSpec{Replicas: &replicas},
		Status: appsv1.ReplicaSetStatus{Replicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas},
	}
	in := &Inputs{Namespace: "demo", Name: "web", Deployment: d, ReplicaSets: []appsv1.ReplicaSet{rs}, Now: at(5000)}
	in.Services = []corev1.Service{{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo", UID: "svc-uid"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}}}}
	es := discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-xyz", Namespace: "demo", Labels: map[string]string{discoveryv1.LabelServiceName: "web"},
		OwnerReferences: ctrl("Service", "web", "svc-uid"), ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "endpointslice-controller", Time: &metav1.Time{Time: at(2000)}}}}}
	rec := func(ms int, user, verb, resource, sub, name string, code int32, owner *metav1.OwnerReference, uid types.UID) {
		if !withTrail {
			return
		}
		in.Records = append(in.Records, trail.Record{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%012d", len(in.Records)+1), Namespace: "demo"},
			User:       user, UserAgent: "kubectl/v1.37.0", Verb: verb, Code: code, Time: metav1.NewMicroTime(at(ms)), Owner: owner,
			ObjectRef: trail.ObjectRef{APIGroup: groupOf(resource), Resource: resource, Subresource: sub, Namespace: "demo", Name: name, UID: uid},
		})
	}
	if withTrail {
		in.Records = []trail.Record{}
	}
	rec(0, "minik-admin", "create", "deployments", "", "web", 201, nil, "d-uid")
	rec(20, controllerManagerUser, "create", "replicasets", "", "web-abc123", 201, &ctrl("Deployment", "web", "d-uid")[0], "rs-uid")
	ready := true
	for i := range n {
		name := fmt.Sprintf("web-abc123-p%04d", i)
		node := fmt.Sprintf("minik-node-%d", i%3+1)
		uid := types.UID("pod-" + name)
		pod := corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "demo", UID: uid, CreationTimestamp: metav1.NewTime(t0), Labels: map[string]string{"app": "web"},
				OwnerReferences: ctrl("ReplicaSet", "web-abc123", "rs-uid")},
			Spec: corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at(100))},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at(1000))},
			}},
		}
		in.Pods = append(in.Pods, pod)
		rec(40+i, controllerManagerUser, "create", "pods", "", name, 201, &ctrl("ReplicaSet", "web-abc123", "rs-uid")[0], uid)
		if withTrail {
			last := &in.Records[len(in.Records)-1]
			last.Deliveries = []trail.Delivery{{User: schedulerUser, Time: metav1.NewMicroTime(at(250 + i))}}
		}
		rec(300+i, schedulerUser, "create", "pods", "binding", name, 201, nil, "")
		for k, reason := range []string{"Pulling", "Pulled", "Created", "Started"} {
			ev := corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%d", name, k)}, Reason: reason, Message: reason + " nginx", Type: corev1.EventTypeNormal,
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: name, UID: uid}, Source: corev1.EventSource{Component: "kubelet", Host: node},
				FirstTimestamp: metav1.NewTime(t0), Count: 1}
			in.Events = append(in.Events, ev)
			rec(500+10*k+i, nodeUserPrefix+node, "create", "events", "", ev.Name, 201, nil, "")
		}
		rec(600+i, nodeUserPrefix+node, "update", "pods", "status", name, 200, nil, uid)
		rec(1200+i, nodeUserPrefix+node, "update", "pods", "status", name, 200, nil, uid)
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{Conditions: discoveryv1.EndpointConditions{Ready: &ready}, TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: name}})
	}
	rec(2000, controllerManagerUser, "update", "endpointslices", "", "web-xyz", 200, &ctrl("Service", "web", "svc-uid")[0], "es-uid")
	rec(3000, controllerManagerUser, "update", "deployments", "status", "web", 200, nil, "d-uid")
	in.EndpointSlices = []discoveryv1.EndpointSlice{es}
	in.Ingresses = []networkingv1.Ingress{{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo", CreationTimestamp: metav1.NewTime(t0)},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web"}}}}}
	return in
}

func groupOf(resource string) string {
	switch resource {
	case "deployments", "replicasets":
		return "apps"
	case "endpointslices":
		return "discovery.k8s.io"
	}
	return ""
}

func stepsOf(j *Journey, stage Stage) []Step {
	var out []Step
	for _, s := range j.Steps {
		if s.Stage == stage {
			out = append(out, s)
		}
	}
	return out
}

func TestBuildFromTheTrailTellsEveryStageToTheMillisecond(t *testing.T) {
	j, err := Build(rollout(3, true), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !j.Converged || j.Checkpoint != nil || j.Source != "trail" || len(j.Notes) != 0 || j.Revision != 1 || j.ReplicaSet != "web-abc123" {
		t.Fatalf("journey: converged %v, checkpoint %v, source %s, notes %v, revision %d (%s)", j.Converged, j.Checkpoint, j.Source, j.Notes, j.Revision, j.ReplicaSet)
	}
	want := map[Stage]int{StageSubmit: 1, StageControllers: 4, StageSchedule: 3, StageContainers: 3*4 + 3, StageTraffic: 3 + 1 + 1, StageConverged: 1}
	for st, n := range want {
		if got := len(stepsOf(j, st)); got != n {
			t.Errorf("stage %d (%s): %d steps, want %d: %+v", st, st, got, n, stepsOf(j, st))
		}
	}
	binds := stepsOf(j, StageSchedule)
	if binds[0].Since != 300*time.Millisecond || binds[0].Actor != Scheduler || binds[0].Action != "bind pods/web-abc123-p0000 to minik-node-1" {
		t.Errorf("first binding: %+v", binds[0])
	}
	// A kubelet's event is placed at its write in the trail, not at its
	// second.
	if s := stepsOf(j, StageContainers)[0]; s.Since != 500*time.Millisecond || s.Node != "minik-node-1" || s.Target != Runtime {
		t.Errorf("first container step: %+v", s)
	}
	if s := stepsOf(j, StageConverged)[0]; s.Since != 3*time.Second {
		t.Errorf("converged at %v, want 3s", s.Since)
	}
}

func TestBuildWithoutTheTrailIsApproximate(t *testing.T) {
	j, err := Build(rollout(2, false), 0)
	if err != nil {
		t.Fatal(err)
	}
	if j.Source != "approximate" || len(j.Notes) != 1 || !strings.Contains(j.Notes[0], "approximate") || !j.Converged {
		t.Fatalf("source %s, notes %v, converged %v", j.Source, j.Notes, j.Converged)
	}
	for _, st := range []Stage{StageSubmit, StageControllers, StageSchedule, StageContainers, StageTraffic, StageConverged} {
		if len(stepsOf(j, st)) == 0 {
			t.Errorf("stage %d (%s) has no step", st, st)
		}
	}
}

func TestBuildSaysWhenTheTrailWasPruned(t *testing.T) {
	in := rollout(2, true)
	// The Deployment's create and the ReplicaSet's have left the ring.
	in.Records = in.Records[2:]
	j, err := Build(in, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Notes) != 1 || !strings.Contains(j.Notes[0], "the trail is complete from 2026-12-02T04:00:00Z only") {
		t.Errorf("notes %v, want the time from which the trail is complete", j.Notes)
	}
	if s := stepsOf(j, StageSubmit); len(s) != 1 || s[0].At != t0 {
		t.Errorf("the apply comes from managedFields: %+v", s)
	}
}

func TestBuildStopsAtTheCheckpoint(t *testing.T) {
	for _, c := range []struct {
		name     string
		breakIt  func(in *Inputs)
		stage    Stage
		point    string
		evidence string
	}{
		{"a pod without a node is Pending", func(in *Inputs) {
			p := &in.Pods[1]
			p.Spec.NodeName = ""
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available"}}
			in.Events = append(in.Events, corev1.Event{Reason: "FailedScheduling", Message: "0/3 nodes are available: 3 Insufficient cpu.", Type: corev1.EventTypeWarning,
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: p.Name, UID: p.UID}})
			in.Deployment.Status.AvailableReplicas--
		}, StageSchedule, CheckpointPending, "FailedScheduling: 0/3 nodes are available: 3 Insufficient cpu."},
		{"a crashing container restarts", func(in *Inputs) {
			p := &in.Pods[0]
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", RestartCount: 4,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"}}}}
			in.Deployment.Status.AvailableReplicas--
		}, StageContainers, CheckpointRestarting, "CrashLoopBackOff; restarted 4 times, last exit code 2 (Error)"},
		{"a rollout available while a liveness probe restarts its container", func(in *Inputs) {
			p := &in.Pods[1]
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", RestartCount: 1, Ready: true,
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}}}}
			in.Events = append(in.Events, corev1.Event{Reason: "Unhealthy", Message: "Liveness probe failed: cat: can't open '/tmp/healthy'", Type: corev1.EventTypeWarning, Count: 3,
				Source: corev1.EventSource{Component: "kubelet"}, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: p.Name, UID: p.UID}})
		}, StageContainers, CheckpointRestarting, "Unhealthy: Liveness probe failed: cat: can't open '/tmp/healthy' (x3)"},
		{"a pod that is not Ready", func(in *Inputs) {
			p := &in.Pods[2]
			p.Status.Conditions[1].Status = corev1.ConditionFalse
			in.Events = append(in.Events, corev1.Event{Reason: "Unhealthy", Message: "Readiness probe failed: 404", Type: corev1.EventTypeWarning, Count: 7,
				Source: corev1.EventSource{Component: "kubelet"}, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: p.Name, UID: p.UID}})
			in.Deployment.Status.AvailableReplicas--
		}, StageTraffic, CheckpointNotReady, "Readiness probe failed: 404 (x7)"},
		{"a Service without ready endpoints", func(in *Inputs) {
			in.Services[0].Spec.Selector = map[string]string{"app": "wbe"}
			in.EndpointSlices = nil
		}, StageTraffic, CheckpointNoEndpoints, "services/web selects app=wbe"},
		{"a ReplicaSet short of pods", func(in *Inputs) {
			in.Pods = in.Pods[:1]
			in.ReplicaSets[0].Status.Replicas = 1
			in.Events = append(in.Events, corev1.Event{Reason: "FailedCreate", Message: "pods \"web-abc123-zz\" is forbidden: exceeded quota", Type: corev1.EventTypeWarning, Count: 3,
				InvolvedObject: corev1.ObjectReference{Kind: "ReplicaSet", Name: "web-abc123", UID: "rs-uid"}})
			in.Deployment.Status.AvailableReplicas = 1
		}, StageControllers, CheckpointShort, "FailedCreate: pods \"web-abc123-zz\" is forbidden: exceeded quota (x3)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := rollout(3, true)
			c.breakIt(in)
			j, err := Build(in, 0)
			if err != nil {
				t.Fatal(err)
			}
			if j.Converged || j.Checkpoint == nil || j.Checkpoint.Stage != c.stage || j.Checkpoint.Name != c.point ||
				!strings.Contains(strings.Join(j.Checkpoint.Evidence, "\n"), c.evidence) {
				t.Fatalf("checkpoint %+v, want stage %d %q with %q", j.Checkpoint, c.stage, c.point, c.evidence)
			}
			var out bytes.Buffer
			if err := Text(&out, j); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out.String(), fmt.Sprintf("\n%d. ", c.stage+1)) {
				t.Errorf("the text goes on past stage %d:\n%s", c.stage, out.String())
			}
		})
	}
}

func TestBuildBadInput(t *testing.T) {
	in := rollout(1, true)
	if _, err := Build(in, 4); err == nil || err.Error() != "unable to find the specified revision 4 (revisions: 1)" {
		t.Errorf("revision 4: %v", err)
	}
	in.Deployment = nil
	in.Records = nil
	if _, err := Build(in, 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("no deployment: %v, want ErrNotFound", err)
	}
	in.Records = []trail.Record{{User: "alice", Verb: "create", Code: 403, Reason: metav1.StatusReasonForbidden,
		Message: `deployments.apps is forbidden: User "alice" cannot create resource "deployments"`, Time: metav1.NewMicroTime(t0),
		ObjectRef: trail.ObjectRef{APIGroup: "apps", Resource: "deployments", Namespace: "demo", Name: "web"}}}
	j, err := Build(in, 0)
	if err != nil || j.Checkpoint == nil || j.Checkpoint.Name != CheckpointRejected || !strings.Contains(j.Steps[0].Result, "403 Forbidden: deployments.apps is forbidden") {
		t.Fatalf("rejected: %v %+v", err, j)
	}
}

func TestRenderers(t *testing.T) {
	j, err := Build(rollout(2, true), 0)
	if err != nil {
		t.Fatal(err)
	}
	var m bytes.Buffer
	if err := Mermaid(&m, j); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"sequenceDiagram\n  participant D as Developer\n  participant K as kubectl\n  participant A as API Server\n  participant AD as auth / admission\n  participant E as etcd\n  participant DC as Deployment controller\n  participant RC as ReplicaSet controller\n  participant S as Scheduler\n",
		"  D->>K: kubectl apply\n  K->>A: create deployments/web (authenticated, authorized, admitted, persisted)\n  A->>AD: authenticate, authorize, admit\n  AD-->>A: allow\n  A->>E: persist complete Deployment object\n  A-->>K: 201 Created\n",
		"  A-->>S: watch event +0.251s\n  S->>A: bind pods/web-abc123-p0000 to minik-node-1\n  Note over S: +0.300s 201 Created\n",
		"participant KL1 as kubelet minik-node-1", "participant CR as Container runtime", "KL1->>CR: Pulling pods/web-abc123-p0000",
		"participant EP as EndpointSlice controller", "participant IC as Ingress / Gateway controller",
	} {
		if !strings.Contains(m.String(), want) {
			t.Errorf("mermaid lacks %q:\n%s", want, m.String())
		}
	}
	if strings.Count(m.String(), "sequenceDiagram") != 2 {
		t.Errorf("mermaid: want the seed's two diagrams:\n%s", m.String())
	}
	var h bytes.Buffer
	if err := HTML(&h, j); err != nil {
		t.Fatal(err)
	}
	page := h.String()
	if strings.Count(page, "<svg ") != 2 || !strings.Contains(page, "<title>+0.300s Scheduler → API Server: bind pods/web-abc123-p0000 to minik-node-1") ||
		strings.Contains(page, "src=") || strings.Contains(page, "href=\"http") {
		t.Errorf("html: want two inline SVG with hover details and nothing from the network:\n%s", page)
	}
	if got := mermaidText("a; b #1 <x>"); got != "a, b 1 ‹x›" {
		t.Errorf("mermaidText: %q", got)
	}
	if err := Write(io.Discard, j, "yaml"); err == nil {
		t.Error("format yaml: no error")
	}
}

// BenchmarkJourney builds and prints (text) the journey of a converged
// rollout of 3 and of 100 replicas from its trail (about 10 records per
// pod), as minikctl does once it has read the objects.
func BenchmarkJourney(b *testing.B) {
	for _, n := range []int{3, 100} {
		in := rollout(n, true)
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				j, err := Build(in, 0)
				if err != nil {
					b.Fatal(err)
				}
				if err := Text(io.Discard, j); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(in.Records)), "records")
		})
	}
}

// TestHTMLRendersInChromium renders the page in headless Chromium (Debian's
// chromium package, which .ci/run installs): the DOM it builds has both
// diagrams with their arrows, and the screenshot is a real picture.
func TestHTMLRendersInChromium(t *testing.T) {
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("no chromium on PATH (apt-get install chromium): the HTML is not rendered")
	}
	j, err := Build(rollout(3, true), 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "journey.html")
	var buf bytes.Buffer
	if err := HTML(&buf, j); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--user-data-dir=" + filepath.Join(dir, "profile")}
	dom, err := exec.CommandContext(ctx, bin, append(flags, "--dump-dom", "file://"+page)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	for _, want := range []string{`<svg id="diagram-1"`, `<svg id="diagram-2"`, "bind pods/web-abc123-p0000 to minik-node-1", "Converged: 3/3"} {
		if !bytes.Contains(dom, []byte(want)) {
			t.Errorf("the DOM lacks %q", want)
		}
	}
	shot := filepath.Join(dir, "shot.png")
	if out, err := exec.CommandContext(ctx, bin, append(flags, "--screenshot="+shot, "--window-size=1600,1200", "file://"+page)...).CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	// Not blank: the boxes' fill colour is drawn somewhere.
	colours := map[color.RGBA]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 255}] = true
		}
	}
	if !colours[color.RGBA{0xee, 0xf3, 0xfb, 255}] || len(colours) < 8 {
		t.Errorf("the screenshot does not show the diagrams' boxes (%d colours)", len(colours))
	}
}
