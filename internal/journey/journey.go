// Package journey tells the story of one Deployment rollout as the seed
// (../shared/seed) draws it: two sequence diagrams and six stages, each
// step with its actor, its time since the apply and its result, ending,
// when the rollout has not converged, at the stage where it stopped with
// the seed's failure checkpoint and its evidence.
//
// Build works on what a client read from the API (Inputs): the Deployment,
// its ReplicaSets, the revision's Pods, Services, EndpointSlices,
// Ingresses and Events, and, when the cluster serves it, minikd's write
// trail (internal/trail), which says who wrote what and when to the
// microsecond. Without the trail, the steps come from what every cluster
// keeps (managedFields' times, conditions' transitions, Events,
// ownerReferences) and the journey says it is approximate. Build does no
// I/O; the renderers (text, mermaid, json, html) write a Journey.
package journey

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	trail "minik/internal/trail/v1alpha1"
)

// Stage is one of the seed's six stages, numbered from 1.
type Stage int

// The seed's stages.
const (
	StageSubmit Stage = iota + 1
	StageControllers
	StageSchedule
	StageContainers
	StageTraffic
	StageConverged
)

// stageNames are the stages' titles, in the seed's order.
var stageNames = [...]string{"", "Submit the object", "Controllers create the workload", "Schedule to nodes", "Node creates containers", "Ready, then traffic", "Rollout converged"}

// String is the stage's title.
func (s Stage) String() string {
	if s < StageSubmit || s > StageConverged {
		return "stage " + strconv.Itoa(int(s))
	}
	return stageNames[s]
}

// The seed's failure checkpoints.
const (
	CheckpointRejected     = "API Server rejected the request"
	CheckpointShort        = "ReplicaSet short of replicas"
	CheckpointPending      = "Pod stays Pending"
	CheckpointRestarting   = "Containers restart or do not start"
	CheckpointNotReady     = "Pod not Ready"
	CheckpointNoEndpoints  = "Service without endpoints"
	CheckpointProgressing  = "Rollout still progressing"
	revisionAnnotation     = "deployment.kubernetes.io/revision"
	controllerManagerUser  = "system:kube-controller-manager"
	deploymentCtrlUser     = "system:serviceaccount:kube-system:deployment-controller"
	controllerUserPrefix   = "system:serviceaccount:kube-system:"
	schedulerUser          = "system:kube-scheduler"
	nodeUserPrefix         = "system:node:"
	maxEvidencePerCategory = 5
)

// The participants of the seed's diagrams.
const (
	Developer       = "Developer"
	Kubectl         = "kubectl"
	APIServer       = "API Server"
	AuthAdmission   = "auth / admission"
	Etcd            = "etcd"
	DeploymentCtrl  = "Deployment controller"
	ReplicaSetCtrl  = "ReplicaSet controller"
	Scheduler       = "Scheduler"
	Kubelet         = "kubelet"
	Runtime         = "Container runtime"
	EndpointSlices  = "EndpointSlice controller"
	ServiceDataPath = "Service data plane"
	IngressCtrl     = "Ingress / Gateway controller"
	Proxy           = "proxy"
)

// Step is one thing that happened.
type Step struct {
	Stage Stage `json:"stage"`
	// At is when it happened; Since is At minus the journey's start.
	At    time.Time     `json:"at"`
	Since time.Duration `json:"-"`
	// SinceSeconds is Since for scripts.
	SinceSeconds float64 `json:"sinceApplySeconds"`
	// Actor is the seed's participant that acted ("kubelet" steps name
	// their node in Node); User is the identity it wrote as.
	Actor string `json:"actor"`
	Node  string `json:"node,omitempty"`
	User  string `json:"user,omitempty"`
	// Target is the participant the step is sent to (API Server for
	// writes, Container runtime for the kubelet's work).
	Target string `json:"target"`
	// Action says what was done; Result how it ended.
	Action string `json:"action"`
	Result string `json:"result"`
	// Failed marks a step that did not succeed.
	Failed bool `json:"failed,omitempty"`
	// Deliveries are the watches the step's write was sent to (from the
	// trail), first per identity.
	Deliveries []Delivery `json:"deliveries,omitempty"`
}

// Delivery is a write sent to an identity's watch.
type Delivery struct {
	User string    `json:"user"`
	At   time.Time `json:"at"`
}

// deliveriesOf are a record's deliveries.
func deliveriesOf(r *trail.Record) []Delivery {
	if len(r.Deliveries) == 0 {
		return nil
	}
	out := make([]Delivery, len(r.Deliveries))
	for i, d := range r.Deliveries {
		out[i] = Delivery{User: d.User, At: d.Time.Time}
	}
	return out
}

// Checkpoint is where a rollout that has not converged stopped.
type Checkpoint struct {
	Stage    Stage    `json:"stage"`
	Name     string   `json:"name"`
	Evidence []string `json:"evidence"`
}

// Journey is the story of one rollout.
type Journey struct {
	Namespace  string `json:"namespace"`
	Deployment string `json:"deployment"`
	Revision   int64  `json:"revision"`
	ReplicaSet string `json:"replicaSet,omitempty"`
	// Start is the apply that began the revision.
	Start time.Time `json:"start"`
	// Source is "trail" (minikd's write trail) or "approximate".
	Source string `json:"source"`
	// Notes qualify the journey (approximate, trail incomplete).
	Notes []string `json:"notes,omitempty"`
	Steps []Step   `json:"steps"`
	// Converged is rollout status's success; otherwise Checkpoint says
	// where it stopped.
	Converged  bool        `json:"converged"`
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	// Replicas, Ready and Available are the revision's counts at the end.
	Replicas  int32 `json:"replicas"`
	Ready     int32 `json:"ready"`
	Available int32 `json:"available"`
}

// Inputs is what a client read from the API for one Deployment.
type Inputs struct {
	// Name and Namespace of the Deployment asked for.
	Namespace, Name string
	// Deployment is nil when it does not exist (then Records may tell
	// that its submission was rejected).
	Deployment     *appsv1.Deployment
	ReplicaSets    []appsv1.ReplicaSet
	Pods           []corev1.Pod
	Services       []corev1.Service
	EndpointSlices []discoveryv1.EndpointSlice
	Ingresses      []networkingv1.Ingress
	Events         []corev1.Event
	// PreviousLogs holds the last lines of the previous run of restarted
	// containers, keyed by PreviousLogKey; absent when not read.
	PreviousLogs map[string]string
	// Records is the namespace's write trail, oldest first; nil when the
	// cluster does not serve trail.minik.dev.
	Records []trail.Record
	// NoTrail says why Records is nil when the cluster serves a trail
	// (the user may not read it).
	NoTrail string
	// Now is when the inputs were read.
	Now time.Time
}

// PreviousLogKey keys Inputs.PreviousLogs: a pod's container.
func PreviousLogKey(pod, container string) string { return pod + "/" + container }

// PreviousLogLines is how many of a restarted container's last log lines
// the journey shows as evidence.
const PreviousLogLines = 3

// ErrNotFound is returned when neither the Deployment nor a rejected
// submission of it is known.
var ErrNotFound = errors.New("deployment not found")

// RevisionError is a revision the Deployment does not have.
type RevisionError struct {
	Revision int64
	Have     []int64
}

func (e *RevisionError) Error() string {
	have := make([]string, len(e.Have))
	for i, r := range e.Have {
		have[i] = strconv.FormatInt(r, 10)
	}
	return fmt.Sprintf("unable to find the specified revision %d (revisions: %s)", e.Revision, strings.Join(have, ", "))
}

// Build tells the journey of revision (0: the current one) of in's
// Deployment.
func Build(in *Inputs, revision int64) (*Journey, error) {
	j := &Journey{Namespace: in.Namespace, Deployment: in.Name, Source: "trail"}
	if in.Records == nil {
		j.Source = "approximate"
		why := "the cluster serves no write trail (trail.minik.dev)"
		if in.NoTrail != "" {
			why = in.NoTrail
		}
		j.Notes = append(j.Notes, "approximate: "+why+"; steps come from managedFields, conditions, Events and ownerReferences, to the second")
	}
	if in.Deployment == nil {
		return rejected(j, in)
	}
	d := in.Deployment
	rs, err := replicaSetOf(in, revision)
	if err != nil {
		return nil, err
	}
	j.Revision = revision
	if rs != nil {
		j.ReplicaSet = rs.Name
		j.Revision, _ = strconv.ParseInt(rs.Annotations[revisionAnnotation], 10, 64)
	}
	b := &builder{in: in, j: j, d: d, rs: rs}
	b.pods = podsOf(in.Pods, rs)
	b.start()
	b.submit()
	b.controllers()
	b.schedule()
	b.containers()
	b.traffic()
	b.converge()
	finish(j)
	return j, nil
}

// finish orders the steps by stage, then time, and sets their times
// since the start.
func finish(j *Journey) {
	sort.SliceStable(j.Steps, func(i, k int) bool {
		if j.Steps[i].Stage != j.Steps[k].Stage {
			return j.Steps[i].Stage < j.Steps[k].Stage
		}
		return j.Steps[i].At.Before(j.Steps[k].At)
	})
	for i := range j.Steps {
		j.Steps[i].Since = j.Steps[i].At.Sub(j.Start)
		j.Steps[i].SinceSeconds = j.Steps[i].Since.Seconds()
	}
}

// rejected is the journey of a Deployment that does not exist: its
// submission's failures, if the trail holds any.
func rejected(j *Journey, in *Inputs) (*Journey, error) {
	var fails []trail.Record
	for _, r := range in.Records {
		if r.ObjectRef.Resource == "deployments" && r.ObjectRef.Name == in.Name && r.ObjectRef.Subresource == "" && r.Code >= 400 {
			fails = append(fails, r)
		}
	}
	if len(fails) == 0 {
		return nil, ErrNotFound
	}
	j.Start = fails[0].Time.Time
	cp := &Checkpoint{Stage: StageSubmit, Name: CheckpointRejected}
	for _, r := range fails {
		j.Steps = append(j.Steps, Step{
			Stage: StageSubmit, At: r.Time.Time, Since: r.Time.Sub(j.Start), Actor: actorOfClient(r.UserAgent), User: r.User,
			Target: APIServer, Action: r.Verb + " deployments/" + r.ObjectRef.Name, Result: resultOf(&r), Failed: true,
		})
		cp.Evidence = append(cp.Evidence, fmt.Sprintf("%s %s deployments/%s as %s: %d %s: %s", r.Time.UTC().Format(time.RFC3339), r.Verb, r.ObjectRef.Name, r.User, r.Code, r.Reason, r.Message))
	}
	cp.Evidence = tail(cp.Evidence, maxEvidencePerCategory)
	j.Checkpoint = cp
	finish(j)
	return j, nil
}

// replicaSetOf is the Deployment's ReplicaSet of revision (0: the
// newest).
func replicaSetOf(in *Inputs, revision int64) (*appsv1.ReplicaSet, error) {
	var have []int64
	var best *appsv1.ReplicaSet
	var bestRev int64 = -1
	for i := range in.ReplicaSets {
		rs := &in.ReplicaSets[i]
		if !ownedBy(rs.OwnerReferences, in.Deployment.UID) {
			continue
		}
		r, err := strconv.ParseInt(rs.Annotations[revisionAnnotation], 10, 64)
		if err != nil {
			continue
		}
		have = append(have, r)
		if revision == 0 && r > bestRev || revision != 0 && r == revision {
			best, bestRev = rs, r
		}
	}
	if revision != 0 && best == nil {
		slices.Sort(have)
		return nil, &RevisionError{Revision: revision, Have: have}
	}
	return best, nil
}

func ownedBy(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, r := range refs {
		if r.Controller != nil && *r.Controller && r.UID == uid {
			return true
		}
	}
	return false
}

func podsOf(pods []corev1.Pod, rs *appsv1.ReplicaSet) []*corev1.Pod {
	if rs == nil {
		return nil
	}
	var out []*corev1.Pod
	for i := range pods {
		if ownedBy(pods[i].OwnerReferences, rs.UID) {
			out = append(out, &pods[i])
		}
	}
	sort.Slice(out, func(i, k int) bool {
		return out[i].CreationTimestamp.Before(&out[k].CreationTimestamp) || out[i].CreationTimestamp.Equal(&out[k].CreationTimestamp) && out[i].Name < out[k].Name
	})
	return out
}

// builder gathers the steps of one journey.
type builder struct {
	in   *Inputs
	j    *Journey
	d    *appsv1.Deployment
	rs   *appsv1.ReplicaSet
	pods []*corev1.Pod
	// lastStatus are the times of the kubelets' last status write of
	// each pod, by name.
	lastStatus map[string]time.Time
	// byName are the pods by name, once built.
	byName map[string]*corev1.Pod
	// eventTimes are events' creation times in the trail, by name.
	eventTimes map[string]time.Time
}

func (b *builder) add(s Step) { b.j.Steps = append(b.j.Steps, s) }

// eventAt is when an event was first written: its create in the trail (to
// the microsecond), else its own time (to the second, for most).
func (b *builder) eventAt(e *corev1.Event) time.Time {
	if b.eventTimes == nil {
		b.eventTimes = map[string]time.Time{}
		for _, r := range b.in.Records {
			if r.ObjectRef.Resource == "events" && r.Verb == "create" && r.Code < 300 {
				if _, seen := b.eventTimes[r.ObjectRef.Name]; !seen {
					b.eventTimes[r.ObjectRef.Name] = r.Time.Time
				}
			}
		}
	}
	if t, ok := b.eventTimes[e.Name]; ok && e.Count <= 1 {
		return t
	}
	return eventTime(e)
}

// podNames are the revision's pods by name.
func (b *builder) podNames() map[string]*corev1.Pod {
	if b.byName != nil {
		return b.byName
	}
	m := make(map[string]*corev1.Pod, len(b.pods))
	for _, p := range b.pods {
		m[p.Name] = p
	}
	b.byName = m
	return m
}

// start finds the apply that began the revision: the last write of the
// Deployment by a client (not a controller) at or before the
// ReplicaSet's creation (or its first write at all).
func (b *builder) start() {
	var limit time.Time
	if b.rs != nil {
		limit = b.rs.CreationTimestamp.Add(time.Second)
	}
	if b.in.Records != nil {
		for _, r := range b.in.Records {
			if !b.isDeployment(&r) || r.Code >= 300 || r.ObjectRef.Subresource != "" || isController(r.User) {
				continue
			}
			if !limit.IsZero() && r.Time.Time.After(limit) {
				break
			}
			b.j.Start = r.Time.Time
		}
		if !b.j.Start.IsZero() {
			return
		}
		if b.d.CreationTimestamp.Time.Before(b.firstRecord()) {
			b.j.Notes = append(b.j.Notes, fmt.Sprintf("the trail is complete from %s only (it was pruned, or minikd recorded none before): earlier steps come from the objects, to the second", b.firstRecord().UTC().Format(time.RFC3339)))
		}
	}
	for _, mf := range b.d.ManagedFields {
		if mf.Subresource != "" || mf.Time == nil || isControllerManager(mf.Manager) {
			continue
		}
		if (limit.IsZero() || !mf.Time.Time.After(limit)) && mf.Time.Time.After(b.j.Start) {
			b.j.Start = mf.Time.Time
		}
	}
	if b.j.Start.IsZero() {
		b.j.Start = b.d.CreationTimestamp.Time
	}
}

func (b *builder) firstRecord() time.Time {
	if len(b.in.Records) == 0 {
		return b.in.Now
	}
	return b.in.Records[0].Time.Time
}

func isControllerManager(manager string) bool {
	return strings.Contains(manager, "controller")
}

func (b *builder) isDeployment(r *trail.Record) bool {
	return r.ObjectRef.Resource == "deployments" && r.ObjectRef.APIGroup == "apps" &&
		(r.ObjectRef.UID == b.d.UID || r.ObjectRef.UID == "" && r.ObjectRef.Name == b.d.Name)
}

// inWindow tells whether a record belongs to this revision's rollout.
func (b *builder) inWindow(t time.Time) bool {
	return !t.Before(b.j.Start)
}

// submit is stage 1: the client's writes of the Deployment.
func (b *builder) submit() {
	before := len(b.j.Steps)
	if b.in.Records != nil {
		for _, r := range b.in.Records {
			if !b.isDeployment(&r) || r.ObjectRef.Subresource != "" || isController(r.User) || !b.inWindow(r.Time.Time) {
				continue
			}
			if b.rs != nil && r.Time.Time.After(b.rs.CreationTimestamp.Add(time.Second)) && r.Code < 300 {
				break
			}
			b.add(Step{Stage: StageSubmit, At: r.Time.Time, Actor: actorOfClient(r.UserAgent), User: r.User, Target: APIServer,
				Action: r.Verb + " deployments/" + r.ObjectRef.Name + " (authenticated, authorized, admitted, persisted)", Result: resultOf(&r), Failed: r.Code >= 300, Deliveries: deliveriesOf(&r)})
		}
		if len(b.j.Steps) > before {
			return
		}
	}
	b.add(Step{Stage: StageSubmit, At: b.j.Start, Actor: Kubectl, Target: APIServer, Action: "apply deployments/" + b.d.Name + " (authenticated, authorized, admitted, persisted)", Result: "accepted, generation " + strconv.FormatInt(b.d.Generation, 10)})
}

// controllers is stage 2: the ReplicaSet and its Pods.
func (b *builder) controllers() {
	if b.rs == nil {
		return
	}
	pods := b.podNames()
	if b.in.Records != nil {
		for _, r := range b.in.Records {
			if !b.inWindow(r.Time.Time) {
				continue
			}
			switch {
			case r.ObjectRef.Resource == "replicasets" && r.ObjectRef.Name == b.rs.Name && r.ObjectRef.Subresource == "":
				action := r.Verb + " replicasets/" + r.ObjectRef.Name
				if r.Verb == "create" {
					action += fmt.Sprintf(" (revision %d)", b.j.Revision)
				}
				b.add(Step{Stage: StageControllers, At: r.Time.Time, Actor: DeploymentCtrl, User: r.User, Target: APIServer, Action: action, Result: resultOf(&r), Failed: r.Code >= 300, Deliveries: deliveriesOf(&r)})
			case r.ObjectRef.Resource == "pods" && r.Verb == "create" && r.ObjectRef.Subresource == "" &&
				(r.Owner != nil && r.Owner.UID == b.rs.UID || r.Code >= 300 && isController(r.User) && strings.HasPrefix(r.ObjectRef.Name, b.rs.Name+"-")):
				b.add(Step{Stage: StageControllers, At: r.Time.Time, Actor: ReplicaSetCtrl, User: r.User, Target: APIServer, Action: "create pods/" + r.ObjectRef.Name, Result: resultOf(&r), Failed: r.Code >= 300, Deliveries: deliveriesOf(&r)})
			}
		}
	} else {
		b.add(Step{Stage: StageControllers, At: b.rs.CreationTimestamp.Time, Actor: DeploymentCtrl, Target: APIServer, Action: fmt.Sprintf("create replicasets/%s (revision %d)", b.rs.Name, b.j.Revision), Result: "created"})
		for _, p := range b.pods {
			if _, ok := pods[p.Name]; ok {
				b.add(Step{Stage: StageControllers, At: p.CreationTimestamp.Time, Actor: ReplicaSetCtrl, Target: APIServer, Action: "create pods/" + p.Name, Result: "created"})
			}
		}
	}
	for _, e := range b.eventsOf("ReplicaSet", b.rs.Name, b.rs.UID) {
		if e.Reason == "FailedCreate" {
			b.add(Step{Stage: StageControllers, At: b.eventAt(&e), Actor: ReplicaSetCtrl, Target: APIServer, Action: "create pod", Result: e.Reason + ": " + e.Message, Failed: true})
		}
	}
}

// schedule is stage 3: the scheduler binds each pod.
func (b *builder) schedule() {
	pods := b.podNames()
	bound := map[string]bool{}
	if b.in.Records != nil {
		for _, r := range b.in.Records {
			if r.ObjectRef.Resource != "pods" || r.ObjectRef.Subresource != "binding" || pods[r.ObjectRef.Name] == nil || !b.inWindow(r.Time.Time) {
				continue
			}
			p := pods[r.ObjectRef.Name]
			bound[p.Name] = r.Code < 300
			b.add(Step{Stage: StageSchedule, At: r.Time.Time, Actor: Scheduler, User: r.User, Target: APIServer,
				Action: fmt.Sprintf("bind pods/%s to %s", p.Name, orUnknown(p.Spec.NodeName)), Result: resultOf(&r), Failed: r.Code >= 300, Deliveries: deliveriesOf(&r)})
		}
	}
	for _, p := range b.pods {
		c := condition(p, corev1.PodScheduled)
		if b.in.Records == nil && c != nil && c.Status == corev1.ConditionTrue {
			b.add(Step{Stage: StageSchedule, At: c.LastTransitionTime.Time, Actor: Scheduler, Target: APIServer, Action: fmt.Sprintf("bind pods/%s to %s", p.Name, p.Spec.NodeName), Result: "bound"})
		}
		for _, e := range b.eventsOf("Pod", p.Name, p.UID) {
			if e.Reason == "FailedScheduling" {
				b.add(Step{Stage: StageSchedule, At: b.eventAt(&e), Actor: Scheduler, Target: APIServer, Action: "schedule pods/" + p.Name, Result: e.Reason + ": " + e.Message, Failed: true})
			}
		}
	}
}

// kubeletEvents are the kubelet's event reasons that are the runtime's
// work (sent to the Container runtime in the diagram).
var runtimeReasons = map[string]bool{"Pulling": true, "Pulled": true, "Created": true, "Started": true, "Killing": true, "BackOff": true, "Failed": true, "FailedMount": true, "SandboxChanged": true}

// containers is stage 4: the kubelet's work and status writes.
func (b *builder) containers() {
	pods := b.podNames()
	if b.in.Records != nil {
		for _, r := range b.in.Records {
			if r.ObjectRef.Resource != "pods" || r.ObjectRef.Subresource != "status" || pods[r.ObjectRef.Name] == nil || !b.inWindow(r.Time.Time) {
				continue
			}
			if !strings.HasPrefix(r.User, nodeUserPrefix) {
				continue
			}
			p := pods[r.ObjectRef.Name]
			stage := StageContainers
			if b.readyAt(p, r.Time.Time) {
				stage = StageTraffic
				b.add(Step{Stage: stage, At: r.Time.Time, Actor: Kubelet, Node: strings.TrimPrefix(r.User, nodeUserPrefix), User: r.User, Target: APIServer,
					Action: "update pods/" + p.Name + " Ready condition (readiness probe passed)", Result: resultOf(&r), Failed: r.Code >= 300, Deliveries: deliveriesOf(&r)})
				continue
			}
			b.add(Step{Stage: stage, At: r.Time.Time, Actor: Kubelet, Node: strings.TrimPrefix(r.User, nodeUserPrefix), User: r.User, Target: APIServer,
				Action: "update pods/" + p.Name + " status", Result: resultOf(&r), Failed: r.Code >= 300, Deliveries: deliveriesOf(&r)})
		}
	}
	for _, p := range b.pods {
		for _, e := range b.eventsOf("Pod", p.Name, p.UID) {
			if e.Source.Component != "kubelet" && e.ReportingController != "kubelet" {
				continue
			}
			stage, target := StageContainers, Runtime
			if e.Reason == "Unhealthy" && !strings.HasPrefix(e.Message, "Liveness probe") && !strings.HasPrefix(e.Message, "Startup probe") {
				// Readiness gates traffic; liveness and startup
				// probes restart containers.
				stage = StageTraffic
			}
			if !runtimeReasons[e.Reason] {
				target = APIServer
			}
			failed := e.Type == corev1.EventTypeWarning
			b.add(Step{Stage: stage, At: b.eventAt(&e), Actor: Kubelet, Node: p.Spec.NodeName, Target: target, Action: e.Reason + " " + shortPod(p.Name), Result: countSuffix(e.Message, e.Count), Failed: failed})
		}
		if b.in.Records == nil {
			if ready := condition(p, corev1.PodReady); ready != nil && ready.Status == corev1.ConditionTrue {
				b.add(Step{Stage: StageTraffic, At: ready.LastTransitionTime.Time, Actor: Kubelet, Node: p.Spec.NodeName, Target: APIServer, Action: "update pods/" + p.Name + " Ready condition (readiness probe passed)", Result: "Ready"})
			}
		}
	}
}

// readyAt tells whether the kubelet's status write at t is the one that
// made p Ready: the last of its status writes at or after the Ready
// condition's transition (which has only seconds). The kubelet writes a
// pod's status when it changes, so once Ready the pod's status rests.
func (b *builder) readyAt(p *corev1.Pod, t time.Time) bool {
	ready := condition(p, corev1.PodReady)
	if ready == nil || ready.Status != corev1.ConditionTrue || t.Before(ready.LastTransitionTime.Time) {
		return false
	}
	if b.lastStatus == nil {
		b.lastStatus = map[string]time.Time{}
		for _, r := range b.in.Records {
			if r.ObjectRef.Resource == "pods" && r.ObjectRef.Subresource == "status" && strings.HasPrefix(r.User, nodeUserPrefix) && r.Code < 300 {
				b.lastStatus[r.ObjectRef.Name] = r.Time.Time
			}
		}
	}
	return t.Equal(b.lastStatus[p.Name])
}

// services are the Services that select the revision's pods' template.
func (b *builder) services() []*corev1.Service {
	var out []*corev1.Service
	tmpl := labels.Set(b.d.Spec.Template.Labels)
	for i := range b.in.Services {
		s := &b.in.Services[i]
		if len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(tmpl) {
			out = append(out, s)
		}
	}
	return out
}

// traffic is stage 5: EndpointSlices and the Ingress/Gateway routes.
func (b *builder) traffic() {
	for _, svc := range b.services() {
		slices := map[string]*discoveryv1.EndpointSlice{}
		for i := range b.in.EndpointSlices {
			es := &b.in.EndpointSlices[i]
			if es.Labels[discoveryv1.LabelServiceName] == svc.Name {
				slices[es.Name] = es
			}
		}
		var trailLast time.Time
		if b.in.Records != nil {
			for _, r := range b.in.Records {
				if r.ObjectRef.Resource != "endpointslices" || !b.inWindow(r.Time.Time) || (r.Owner == nil || r.Owner.UID != svc.UID) {
					continue
				}
				trailLast = r.Time.Time
				b.add(Step{Stage: StageTraffic, At: r.Time.Time, Actor: EndpointSlices, User: r.User, Target: APIServer,
					Action: fmt.Sprintf("%s endpointslices/%s for service %s", r.Verb, r.ObjectRef.Name, svc.Name), Result: resultOf(&r), Failed: r.Code >= 300, Deliveries: deliveriesOf(&r)})
			}
		}
		ready, total := 0, 0
		last := trailLast
		for _, es := range slices {
			for _, ep := range es.Endpoints {
				if ep.TargetRef == nil || b.podNames()[ep.TargetRef.Name] == nil {
					continue
				}
				total++
				if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
					ready++
				}
			}
			if t := sliceTime(es); trailLast.IsZero() && t.After(last) {
				last = t
			}
		}
		if b.in.Records == nil && !last.IsZero() {
			b.add(Step{Stage: StageTraffic, At: last, Actor: EndpointSlices, Target: APIServer, Action: "update endpointslices for service " + svc.Name, Result: fmt.Sprintf("%d/%d endpoints ready", ready, total)})
		}
		for _, ing := range b.ingressesOf(svc.Name) {
			at := last
			if at.Before(ing.CreationTimestamp.Time) {
				at = ing.CreationTimestamp.Time
			}
			b.add(Step{Stage: StageTraffic, At: at, Actor: IngressCtrl, Target: Proxy,
				Action: fmt.Sprintf("configure ingresses/%s route → service %s, ready endpoints only", ing.Name, svc.Name), Result: fmt.Sprintf("%d ready endpoints", ready)})
		}
	}
}

func (b *builder) ingressesOf(service string) []*networkingv1.Ingress {
	var out []*networkingv1.Ingress
	for i := range b.in.Ingresses {
		ing := &b.in.Ingresses[i]
		if ingressRoutesTo(ing, service) {
			out = append(out, ing)
		}
	}
	return out
}

func ingressRoutesTo(ing *networkingv1.Ingress, service string) bool {
	if be := ing.Spec.DefaultBackend; be != nil && be.Service != nil && be.Service.Name == service {
		return true
	}
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for _, p := range rule.HTTP.Paths {
			if p.Backend.Service != nil && p.Backend.Service.Name == service {
				return true
			}
		}
	}
	return false
}

// converge is stage 6, or the checkpoint where the rollout stopped.
func (b *builder) converge() {
	d := b.d
	j := b.j
	current := b.rs != nil && j.Revision == currentRevision(d)
	if b.rs != nil {
		j.Replicas = b.rs.Status.Replicas
		j.Ready = b.rs.Status.ReadyReplicas
		j.Available = b.rs.Status.AvailableReplicas
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	converged := current && d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == want &&
		d.Status.Replicas == d.Status.UpdatedReplicas && d.Status.AvailableReplicas == d.Status.UpdatedReplicas
	if b.rs != nil && !current {
		// An older revision: it converged if it became available once.
		converged = false
		j.Notes = append(j.Notes, fmt.Sprintf("revision %d is not the current one (%d): it was replaced", j.Revision, currentRevision(d)))
	}
	if converged {
		// Traffic is the journey's end: a Service meant for the pods
		// (it selects them, or has the Deployment's name or app label)
		// must have ready endpoints.
		if cp := b.noEndpoints(); cp != nil {
			j.Checkpoint = cp
			return
		}
		// rollout status counts a pod available once Ready for
		// minReadySeconds; without a readiness probe a container that
		// its liveness probe kills again and again still counts. The
		// seed's checkpoint "restarts" is named all the same: a
		// rollout whose containers restart has not settled.
		if ev := b.containerTrouble(); len(ev) > 0 {
			ev = append(ev, fmt.Sprintf("deployments/%s reports %d/%d updated replicas available (rollout status succeeds), yet its containers restart", d.Name, d.Status.AvailableReplicas, want))
			j.Checkpoint = &Checkpoint{Stage: StageContainers, Name: CheckpointRestarting, Evidence: ev}
			return
		}
		j.Converged = true
		at := b.convergedAt()
		b.add(Step{Stage: StageConverged, At: at, Actor: DeploymentCtrl, User: deploymentCtrlUser, Target: APIServer,
			Action: "update deployments/" + d.Name + " status", Result: fmt.Sprintf("successfully rolled out: %d/%d updated, ready and available", d.Status.UpdatedReplicas, want)})
		return
	}
	if !current && b.rs != nil {
		return
	}
	j.Checkpoint = b.checkpoint(want)
}

func currentRevision(d *appsv1.Deployment) int64 {
	r, _ := strconv.ParseInt(d.Annotations[revisionAnnotation], 10, 64)
	return r
}

// convergedAt is when the Deployment became available: the trail's last
// status write of it, or its Available condition's transition.
func (b *builder) convergedAt() time.Time {
	var at time.Time
	if b.in.Records != nil {
		for _, r := range b.in.Records {
			if b.isDeployment(&r) && r.ObjectRef.Subresource == "status" && r.Code < 300 && b.inWindow(r.Time.Time) {
				at = r.Time.Time
			}
		}
	}
	if at.IsZero() {
		for _, c := range b.d.Status.Conditions {
			if c.Type == appsv1.DeploymentProgressing || c.Type == appsv1.DeploymentAvailable {
				if c.LastUpdateTime.Time.After(at) {
					at = c.LastUpdateTime.Time
				}
			}
		}
	}
	return at
}

// checkpoint names where a rollout that has not converged stopped, from
// the first stage that is short.
func (b *builder) checkpoint(want int32) *Checkpoint {
	// Stage 2: the ReplicaSet and its pods.
	if b.rs == nil {
		return &Checkpoint{Stage: StageControllers, Name: CheckpointShort, Evidence: append(b.deploymentConditions(), "no ReplicaSet for the Deployment's template yet")}
	}
	if int32(len(b.pods)) < want || b.rs.Status.Replicas < ptrOr(b.rs.Spec.Replicas, 1) {
		ev := []string{fmt.Sprintf("replicasets/%s has %d of %d replicas", b.rs.Name, b.rs.Status.Replicas, ptrOr(b.rs.Spec.Replicas, 1))}
		ev = append(ev, lastWarnings(b.eventsOf("ReplicaSet", b.rs.Name, b.rs.UID))...)
		ev = append(ev, b.deploymentConditions()...)
		return &Checkpoint{Stage: StageControllers, Name: CheckpointShort, Evidence: tail(ev, 2*maxEvidencePerCategory)}
	}
	// Stage 3: pods not scheduled.
	var ev []string
	for _, p := range b.pods {
		if p.Spec.NodeName != "" {
			continue
		}
		msg := "not scheduled"
		if c := condition(p, corev1.PodScheduled); c != nil && c.Message != "" {
			msg = c.Reason + ": " + c.Message
		}
		for _, e := range b.eventsOf("Pod", p.Name, p.UID) {
			if e.Reason == "FailedScheduling" {
				msg = "FailedScheduling: " + e.Message
			}
		}
		ev = append(ev, fmt.Sprintf("pods/%s Pending: %s", p.Name, msg))
	}
	if len(ev) > 0 {
		return &Checkpoint{Stage: StageSchedule, Name: CheckpointPending, Evidence: tail(ev, maxEvidencePerCategory)}
	}
	// Stage 4: containers waiting or restarting.
	if ev := b.containerTrouble(); len(ev) > 0 {
		return &Checkpoint{Stage: StageContainers, Name: CheckpointRestarting, Evidence: ev}
	}
	// Stage 5: pods running but not Ready, then Services without ready
	// endpoints.
	for _, p := range b.pods {
		if c := condition(p, corev1.PodReady); c == nil || c.Status != corev1.ConditionTrue {
			line := fmt.Sprintf("pods/%s not Ready", p.Name)
			for _, e := range b.eventsOf("Pod", p.Name, p.UID) {
				if e.Reason == "Unhealthy" {
					line += ": " + countSuffix(e.Message, e.Count)
				}
			}
			ev = append(ev, line)
		}
	}
	if len(ev) > 0 {
		return &Checkpoint{Stage: StageTraffic, Name: CheckpointNotReady, Evidence: tail(ev, maxEvidencePerCategory)}
	}
	if cp := b.noEndpoints(); cp != nil {
		return cp
	}
	return &Checkpoint{Stage: StageConverged, Name: CheckpointProgressing, Evidence: append([]string{
		fmt.Sprintf("%d of %d updated replicas are available (observed generation %d of %d)", b.d.Status.AvailableReplicas, want, b.d.Status.ObservedGeneration, b.d.Generation),
	}, b.deploymentConditions()...)}
}

// containerTrouble is the evidence of the revision's containers that
// wait (other than for their creation) or have restarted: their state,
// restart count and last exit code, the FailedMount warnings, and the
// failures of the probes that restart a container (liveness, startup).
func (b *builder) containerTrouble() []string {
	var ev []string
	for _, p := range b.pods {
		for _, cs := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			var parts []string
			if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
				parts = append(parts, w.Reason)
				if w.Message != "" {
					parts = append(parts, w.Message)
				}
			}
			if cs.RestartCount > 0 {
				r := fmt.Sprintf("restarted %d times", cs.RestartCount)
				if t := cs.LastTerminationState.Terminated; t != nil {
					r += fmt.Sprintf(", last exit code %d (%s)", t.ExitCode, t.Reason)
				}
				parts = append(parts, r)
			}
			if len(parts) > 0 {
				ev = append(ev, fmt.Sprintf("pods/%s container %s: %s", p.Name, cs.Name, strings.Join(parts, "; ")))
			}
			if l := strings.TrimRight(b.in.PreviousLogs[PreviousLogKey(p.Name, cs.Name)], "\n"); cs.RestartCount > 0 && l != "" {
				ev = append(ev, fmt.Sprintf("pods/%s container %s, last log lines before the restart: %s", p.Name, cs.Name, strings.ReplaceAll(l, "\n", " | ")))
			}
		}
		for _, e := range lastWarnings(b.eventsOf("Pod", p.Name, p.UID)) {
			if strings.HasPrefix(e, "FailedMount") || strings.HasPrefix(e, "Unhealthy: Liveness probe failed") || strings.HasPrefix(e, "Unhealthy: Startup probe failed") {
				ev = append(ev, fmt.Sprintf("pods/%s %s", p.Name, e))
			}
		}
	}
	if len(ev) == 0 {
		return nil
	}
	return tail(dedupe(ev), 2*maxEvidencePerCategory)
}

// noEndpoints is the checkpoint of Services meant for the pods that have
// no ready endpoint, or nil.
func (b *builder) noEndpoints() *Checkpoint {
	var ev []string
	for _, svc := range b.in.Services {
		if !b.serviceMeantForPods(&svc) || b.readyEndpoints(svc.Name) > 0 {
			continue
		}
		ev = append(ev, fmt.Sprintf("services/%s selects %s; the pods are labelled %s: no ready endpoint", svc.Name, labels.Set(svc.Spec.Selector), labels.Set(b.d.Spec.Template.Labels)))
	}
	if len(ev) == 0 {
		return nil
	}
	return &Checkpoint{Stage: StageTraffic, Name: CheckpointNoEndpoints, Evidence: ev}
}

// serviceMeantForPods tells a Service that names the Deployment (its name
// or the app label) or selects its pods.
func (b *builder) serviceMeantForPods(svc *corev1.Service) bool {
	if len(svc.Spec.Selector) > 0 && labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(b.d.Spec.Template.Labels)) {
		return true
	}
	return svc.Name == b.d.Name || svc.Labels["app"] != "" && svc.Labels["app"] == b.d.Labels["app"]
}

func (b *builder) readyEndpoints(service string) int {
	n := 0
	for _, es := range b.in.EndpointSlices {
		if es.Labels[discoveryv1.LabelServiceName] != service {
			continue
		}
		for _, ep := range es.Endpoints {
			if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
				n++
			}
		}
	}
	return n
}

func (b *builder) deploymentConditions() []string {
	var out []string
	for _, c := range b.d.Status.Conditions {
		if c.Status != corev1.ConditionTrue || c.Type == appsv1.DeploymentReplicaFailure {
			out = append(out, fmt.Sprintf("Deployment condition %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	return out
}

// lastWarnings are the warning events' last message of each reason,
// with the number of times the reason was reported.
func lastWarnings(events []corev1.Event) []string {
	var order []string
	last := map[string]string{}
	count := map[string]int32{}
	for _, e := range events {
		if e.Type != corev1.EventTypeWarning {
			continue
		}
		if _, seen := last[e.Reason]; !seen {
			order = append(order, e.Reason)
		}
		last[e.Reason] = strings.TrimPrefix(e.Message, "(combined from similar events): ")
		count[e.Reason] += max(e.Count, 1)
	}
	out := make([]string, 0, len(order))
	for _, r := range order {
		out = append(out, countSuffix(r+": "+last[r], count[r]))
	}
	return out
}

// eventsOf are the events about one object, oldest first.
func (b *builder) eventsOf(kind, name string, uid types.UID) []corev1.Event {
	var out []corev1.Event
	for _, e := range b.in.Events {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name && (e.InvolvedObject.UID == "" || e.InvolvedObject.UID == uid) {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, k int) bool { return eventTime(&out[i]).Before(eventTime(&out[k])) })
	return out
}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

func sliceTime(es *discoveryv1.EndpointSlice) time.Time {
	var t time.Time
	for _, mf := range es.ManagedFields {
		if mf.Time != nil && mf.Time.Time.After(t) {
			t = mf.Time.Time
		}
	}
	if t.IsZero() {
		t = es.CreationTimestamp.Time
	}
	return t
}

func condition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// isController tells whether user is the controller manager's: its own
// identity, or a controller's ServiceAccount in kube-system (minikd runs
// each controller with its own, as kube-controller-manager's
// --use-service-account-credentials).
func isController(user string) bool {
	return user == controllerManagerUser || strings.HasPrefix(user, controllerUserPrefix)
}

// actorOfClient names the client of a user's write.
func actorOfClient(userAgent string) string {
	ua := strings.ToLower(userAgent)
	if strings.HasPrefix(ua, "kubectl") || strings.HasPrefix(ua, "minikctl") || ua == "" {
		return Kubectl
	}
	if i := strings.IndexAny(userAgent, "/ "); i > 0 {
		return userAgent[:i]
	}
	return userAgent
}

// resultOf is a write's answer: "201 Created" or "403 Forbidden: message".
func resultOf(r *trail.Record) string {
	s := fmt.Sprintf("%d %s", r.Code, httpText(int(r.Code)))
	if r.Code >= 300 && r.Message != "" {
		s += ": " + r.Message
	}
	return s
}

func httpText(code int) string {
	switch code {
	case 200:
		return "OK"
	case 201:
		return "Created"
	case 202:
		return "Accepted"
	case 400:
		return "BadRequest"
	case 401:
		return "Unauthorized"
	case 403:
		return "Forbidden"
	case 404:
		return "NotFound"
	case 409:
		return "Conflict"
	case 422:
		return "Invalid"
	case 429:
		return "TooManyRequests"
	case 500:
		return "InternalError"
	}
	return ""
}

func countSuffix(msg string, count int32) string {
	if count > 1 {
		return fmt.Sprintf("%s (x%d)", msg, count)
	}
	return msg
}

// shortPod is the pod name's generated suffix, for lines that already
// name the stage's pods.
func shortPod(name string) string { return "pods/" + name }

func orUnknown(s string) string {
	if s == "" {
		return "a node"
	}
	return s
}

func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

func tail(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append([]string{fmt.Sprintf("(%d earlier lines left out)", len(s)-n)}, s[len(s)-n:]...)
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
