package tables

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// now is the fixed clock of every test.
var now = time.Date(2026, time.March, 14, 15, 9, 26, 0, time.UTC)

func clock() time.Time { return now }

func ptrTo[T any](v T) *T { return &v }

// ago returns the metav1.Time d before now.
func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func microAgo(d time.Duration) metav1.MicroTime { return metav1.NewMicroTime(now.Add(-d)) }

// objMeta is the metadata of a namespaced fixture created d ago.
func objMeta(name string, d time.Duration) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "demo", CreationTimestamp: ago(d)}
}

// clusterMeta is the metadata of a cluster-scoped fixture created d ago.
func clusterMeta(name string, d time.Duration) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, CreationTimestamp: ago(d)}
}

// Container states.

func running() corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(time.Hour)}}
}

func waiting(reason string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
}

func terminated(reason string, exitCode, signal int32, finished time.Duration) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: exitCode, Signal: signal, FinishedAt: ago(finished)}}
}

func condition(t corev1.PodConditionType, s corev1.ConditionStatus, reason string) corev1.PodCondition {
	return corev1.PodCondition{Type: t, Status: s, Reason: reason}
}

// podOf builds a pod created 10 minutes ago on node-1 with one container
// per status given; containers are named app, sidecar-1, ... in order.
func podOf(name string, phase corev1.PodPhase, ready bool, statuses ...corev1.ContainerStatus) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: objMeta(name, 10*time.Minute),
		Spec:       corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{
			Phase:  phase,
			PodIP:  "10.244.1.7",
			PodIPs: []corev1.PodIP{{IP: "10.244.1.7"}},
			Conditions: []corev1.PodCondition{
				condition(corev1.PodInitialized, corev1.ConditionTrue, ""),
				condition(corev1.PodScheduled, corev1.ConditionTrue, ""),
			},
		},
	}
	readyStatus := corev1.ConditionFalse
	if ready {
		readyStatus = corev1.ConditionTrue
	}
	p.Status.Conditions = append(p.Status.Conditions, condition(corev1.PodReady, readyStatus, ""))
	for i, s := range statuses {
		if s.Name == "" {
			s.Name = "app"
			if i > 0 {
				s.Name = "app-" + string(rune('1'+i-1))
			}
		}
		if s.Image == "" {
			s.Image = "nginx:1.27"
		}
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: s.Name, Image: s.Image})
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, s)
	}
	return p
}

// withInit adds init containers (sidecars when their RestartPolicy is set)
// and their statuses to a pod, and marks it not yet initialized unless all
// of them succeeded.
func withInit(p *corev1.Pod, initialized bool, inits []corev1.Container, statuses ...corev1.ContainerStatus) *corev1.Pod {
	p.Spec.InitContainers = inits
	p.Status.InitContainerStatuses = statuses
	if !initialized {
		p.Status.Conditions[0].Status = corev1.ConditionFalse
	}
	return p
}

func withDeletion(p *corev1.Pod) *corev1.Pod {
	t := ago(5 * time.Second)
	p.DeletionTimestamp = &t
	return p
}

// podFixtures covers every STATUS kubectl can show.
func podFixtures() []runtime.Object {
	pending := podOf("web-pending", corev1.PodPending, false, corev1.ContainerStatus{State: waiting("")})
	pending.Spec.NodeName = ""
	pending.Status.PodIP, pending.Status.PodIPs, pending.Status.ContainerStatuses = "", nil, nil
	pending.Status.Conditions = []corev1.PodCondition{condition(corev1.PodScheduled, corev1.ConditionFalse, "Unschedulable")}
	pending.Status.NominatedNodeName = "node-2"

	gated := podOf("web-gated", corev1.PodPending, false)
	gated.Spec.NodeName = ""
	gated.Status.PodIP, gated.Status.PodIPs = "", nil
	gated.Spec.Containers = []corev1.Container{{Name: "app", Image: "nginx:1.27"}}
	gated.Status.Conditions = []corev1.PodCondition{condition(corev1.PodScheduled, corev1.ConditionFalse, corev1.PodReasonSchedulingGated)}

	creating := podOf("web-creating", corev1.PodPending, false, corev1.ContainerStatus{State: waiting("ContainerCreating")})
	creating.Status.PodIP, creating.Status.PodIPs = "", nil

	gates := podOf("web-gates", corev1.PodRunning, true, corev1.ContainerStatus{State: running(), Ready: true})
	gates.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/lb-ready"}, {ConditionType: "example.com/dns-ready"}}
	gates.Status.Conditions = append(gates.Status.Conditions, corev1.PodCondition{Type: "example.com/lb-ready", Status: corev1.ConditionTrue})

	evicted := podOf("web-evicted", corev1.PodFailed, false, corev1.ContainerStatus{State: terminated("", 137, 0, time.Minute)})
	evicted.Status.Reason = "Evicted"
	evicted.Status.ContainerStatuses = nil

	lost := withDeletion(podOf("web-lost", corev1.PodRunning, true, corev1.ContainerStatus{State: running(), Ready: true}))
	lost.Status.Reason = "NodeLost"

	dualStack := podOf("web-dual-stack", corev1.PodRunning, true, corev1.ContainerStatus{State: running(), Ready: true})
	dualStack.Status.PodIPs = []corev1.PodIP{{IP: "fd00:10:244::7"}, {IP: "10.244.1.7"}}

	always := corev1.ContainerRestartPolicyAlways
	return []runtime.Object{
		podOf("web-running", corev1.PodRunning, true,
			corev1.ContainerStatus{State: running(), Ready: true},
			corev1.ContainerStatus{State: running(), Ready: true, Image: "envoy:1.30"}),
		podOf("web-crashloop", corev1.PodRunning, false,
			corev1.ContainerStatus{State: waiting("CrashLoopBackOff"), RestartCount: 5, LastTerminationState: terminated("Error", 1, 0, 40*time.Second)}),
		podOf("web-errimagepull", corev1.PodPending, false, corev1.ContainerStatus{State: waiting("ErrImagePull")}),
		podOf("web-imagepullbackoff", corev1.PodPending, false, corev1.ContainerStatus{State: waiting("ImagePullBackOff")}),
		podOf("web-configerror", corev1.PodPending, false, corev1.ContainerStatus{State: waiting("CreateContainerConfigError")}),
		pending,
		gated,
		creating,
		withDeletion(podOf("web-terminating", corev1.PodRunning, true, corev1.ContainerStatus{State: running(), Ready: true})),
		withDeletion(podOf("web-deleted-after-success", corev1.PodSucceeded, false, corev1.ContainerStatus{State: terminated("Completed", 0, 0, time.Minute)})),
		podOf("job-completed", corev1.PodSucceeded, false, corev1.ContainerStatus{State: terminated("Completed", 0, 0, 2*time.Minute)}),
		podOf("job-failed", corev1.PodFailed, false, corev1.ContainerStatus{State: terminated("Error", 2, 0, 2*time.Minute)}),
		podOf("web-oomkilled", corev1.PodRunning, false,
			corev1.ContainerStatus{State: terminated("OOMKilled", 137, 0, 3*time.Second), RestartCount: 1, LastTerminationState: terminated("OOMKilled", 137, 0, 5*time.Minute)}),
		podOf("web-signal", corev1.PodRunning, false, corev1.ContainerStatus{State: terminated("", 0, 9, time.Second)}),
		podOf("web-exitcode", corev1.PodRunning, false, corev1.ContainerStatus{State: terminated("", 3, 0, time.Second)}),
		podOf("web-notready", corev1.PodRunning, false,
			corev1.ContainerStatus{State: terminated("Completed", 0, 0, time.Minute)},
			corev1.ContainerStatus{State: running(), Ready: true}),
		podOf("web-one-done-one-ready", corev1.PodRunning, true,
			corev1.ContainerStatus{State: terminated("Completed", 0, 0, time.Minute)},
			corev1.ContainerStatus{State: running(), Ready: true}),
		podOf("web-one-failed-one-done", corev1.PodRunning, false,
			corev1.ContainerStatus{State: terminated("Completed", 0, 0, time.Minute)},
			corev1.ContainerStatus{State: terminated("Error", 1, 0, time.Minute)}),
		podOf("web-running-unready", corev1.PodRunning, false, corev1.ContainerStatus{State: running()}),
		withInit(podOf("web-init-running", corev1.PodPending, false, corev1.ContainerStatus{State: waiting("PodInitializing")}), false,
			[]corev1.Container{{Name: "migrate"}, {Name: "warm-cache"}},
			corev1.ContainerStatus{Name: "migrate", State: running()},
			corev1.ContainerStatus{Name: "warm-cache", State: waiting("PodInitializing")}),
		withInit(podOf("web-init-second", corev1.PodPending, false, corev1.ContainerStatus{State: waiting("PodInitializing")}), false,
			[]corev1.Container{{Name: "migrate"}, {Name: "warm-cache"}},
			corev1.ContainerStatus{Name: "migrate", State: terminated("Completed", 0, 0, time.Minute)},
			corev1.ContainerStatus{Name: "warm-cache", State: running()}),
		withInit(podOf("web-init-crashloop", corev1.PodPending, false, corev1.ContainerStatus{State: waiting("PodInitializing")}), false,
			[]corev1.Container{{Name: "migrate"}},
			corev1.ContainerStatus{Name: "migrate", State: waiting("CrashLoopBackOff"), RestartCount: 3, LastTerminationState: terminated("Error", 1, 0, 90*time.Second)}),
		withInit(podOf("web-init-error", corev1.PodPending, false, corev1.ContainerStatus{State: waiting("PodInitializing")}), false,
			[]corev1.Container{{Name: "migrate"}},
			corev1.ContainerStatus{Name: "migrate", State: terminated("Error", 1, 0, 10*time.Second)}),
		withInit(podOf("web-init-signal", corev1.PodPending, false, corev1.ContainerStatus{State: waiting("PodInitializing")}), false,
			[]corev1.Container{{Name: "migrate"}},
			corev1.ContainerStatus{Name: "migrate", State: terminated("", 137, 9, 10*time.Second)}),
		withInit(podOf("web-pod-initializing", corev1.PodPending, false, corev1.ContainerStatus{State: waiting("PodInitializing")}), true,
			[]corev1.Container{{Name: "migrate"}},
			corev1.ContainerStatus{Name: "migrate", State: terminated("Completed", 0, 0, 5*time.Second)}),
		withInit(podOf("web-with-sidecar", corev1.PodRunning, true, corev1.ContainerStatus{State: running(), Ready: true}), true,
			[]corev1.Container{{Name: "proxy", RestartPolicy: &always}},
			corev1.ContainerStatus{Name: "proxy", State: running(), Ready: true, Started: ptrTo(true), RestartCount: 2, LastTerminationState: terminated("Error", 1, 0, 4*time.Minute)}),
		withInit(podOf("web-sidecar-starting", corev1.PodPending, false, corev1.ContainerStatus{State: waiting("PodInitializing")}), false,
			[]corev1.Container{{Name: "proxy", RestartPolicy: &always}},
			corev1.ContainerStatus{Name: "proxy", State: running(), Started: ptrTo(false)}),
		gates,
		evicted,
		lost,
		dualStack,
	}
}

func tcpPort(name string, port, target int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(target)}
}

func serviceFixtures() []runtime.Object {
	web := &corev1.Service{
		ObjectMeta: objMeta("web", 3*time.Hour),
		Spec: corev1.ServiceSpec{
			Type:       corev1.ServiceTypeClusterIP,
			ClusterIP:  "10.96.12.34",
			ClusterIPs: []string{"10.96.12.34"},
			Selector:   map[string]string{"app": "web", "tier": "frontend"},
			Ports:      []corev1.ServicePort{tcpPort("http", 80, 8080), tcpPort("https", 443, 8443), {Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53}},
		},
	}
	headless := &corev1.Service{
		ObjectMeta: objMeta("web-headless", 3*time.Hour),
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "None", ClusterIPs: []string{"None"}, Selector: map[string]string{"app": "web"}},
	}
	nodePort := &corev1.Service{
		ObjectMeta: objMeta("web-nodeport", 26*time.Hour),
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.0.20", ClusterIPs: []string{"10.96.0.20"},
			ExternalIPs: []string{"192.0.2.10"},
			Ports:       []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080}},
		},
	}
	lbPending := &corev1.Service{
		ObjectMeta: objMeta("web-lb-pending", 90*time.Second),
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.96.0.21", ClusterIPs: []string{"10.96.0.21"},
			Ports: []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: 443, NodePort: 31443}},
		},
	}
	lb := lbPending.DeepCopy()
	lb.Name = "web-lb"
	lb.Spec.ExternalIPs = []string{"192.0.2.99"}
	lb.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.9"}, {Hostname: "lb.example.com"}, {IP: "203.0.113.9"}}
	external := &corev1.Service{
		ObjectMeta: objMeta("upstream", 400*24*time.Hour),
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "api.example.com"},
	}
	return []runtime.Object{web, headless, nodePort, lbPending, lb, external}
}

func nodeFixtures() []runtime.Object {
	ready := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", CreationTimestamp: ago(49 * time.Hour), Labels: map[string]string{
			"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/worker": "", "kubernetes.io/role": "ingress",
		}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "node-1"}, {Type: corev1.NodeInternalIP, Address: "172.18.0.2"}, {Type: corev1.NodeExternalIP, Address: "198.51.100.2"}},
			NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.37.2-minik", OSImage: "minik simulated", KernelVersion: "6.8.0", ContainerRuntimeVersion: "minik://0.1.0"},
		},
	}
	notReady := &corev1.Node{
		ObjectMeta: clusterMeta("node-2", 5*time.Hour),
		Spec:       corev1.NodeSpec{Unschedulable: true},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "172.18.0.3"}},
			NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.37.2-minik"},
		},
	}
	fresh := &corev1.Node{ObjectMeta: clusterMeta("node-3", 0)}
	return []runtime.Object{ready, notReady, fresh}
}

func coreEventFixtures() []runtime.Object {
	ref := corev1.ObjectReference{Kind: "Pod", Namespace: "demo", Name: "web-7d4b9c-x2x9q", FieldPath: "spec.containers{app}"}
	return []runtime.Object{
		&corev1.Event{
			ObjectMeta:     objMeta("web-7d4b9c-x2x9q.17c1", 5*time.Minute),
			InvolvedObject: ref, Reason: "BackOff", Type: corev1.EventTypeWarning,
			Message:        "Back-off restarting failed container app in pod web-7d4b9c-x2x9q_demo(1234)\n",
			Source:         corev1.EventSource{Component: "kubelet", Host: "node-1"},
			FirstTimestamp: ago(5 * time.Minute), LastTimestamp: ago(12 * time.Second), Count: 14,
		},
		&corev1.Event{
			ObjectMeta:     objMeta("web.17c2", time.Hour),
			InvolvedObject: corev1.ObjectReference{Kind: "Deployment", Namespace: "demo", Name: "web"},
			Reason:         "ScalingReplicaSet", Type: corev1.EventTypeNormal, Message: "Scaled up replica set web-7d4b9c from 0 to 3",
			ReportingController: "deployment-controller",
			EventTime:           microAgo(time.Hour),
		},
		&corev1.Event{
			ObjectMeta:     objMeta("web-7d4b9c-x2x9q.17c3", 20*time.Minute),
			InvolvedObject: ref, Reason: "Unhealthy", Type: corev1.EventTypeWarning, Message: "Readiness probe failed: HTTP probe failed with statuscode: 503",
			ReportingController: "kubelet", ReportingInstance: "node-1",
			EventTime: microAgo(20 * time.Minute),
			Series:    &corev1.EventSeries{Count: 7, LastObservedTime: microAgo(30 * time.Second)},
		},
		&corev1.Event{
			ObjectMeta:     objMeta("demo.17c4", 0),
			InvolvedObject: corev1.ObjectReference{Kind: "Namespace"},
			Reason:         "Odd", Type: corev1.EventTypeNormal, Message: "an event with no times and an unnamed object",
		},
	}
}

func eventsV1Fixtures() []runtime.Object {
	return []runtime.Object{
		&eventsv1.Event{
			ObjectMeta: objMeta("web-7d4b9c-x2x9q.17c5", 3*time.Minute),
			EventTime:  microAgo(3 * time.Minute),
			Regarding:  corev1.ObjectReference{Kind: "Pod", Namespace: "demo", Name: "web-7d4b9c-x2x9q", FieldPath: "spec.containers{app}"},
			Reason:     "Pulled", Type: corev1.EventTypeNormal, Note: "Successfully pulled image \"nginx:1.27\" in 812ms",
			Action:              "Pull",
			ReportingController: "kubelet", ReportingInstance: "node-1",
		},
		&eventsv1.Event{
			ObjectMeta: objMeta("web-7d4b9c-q8p2m.17c6", 30*time.Minute),
			EventTime:  microAgo(30 * time.Minute),
			Regarding:  corev1.ObjectReference{Kind: "Pod", Namespace: "demo", Name: "web-7d4b9c-q8p2m"},
			Reason:     "FailedScheduling", Type: corev1.EventTypeWarning,
			Note:                "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
			ReportingController: "default-scheduler",
			Series:              &eventsv1.EventSeries{Count: 9, LastObservedTime: microAgo(2 * time.Minute)},
		},
		&eventsv1.Event{
			ObjectMeta: objMeta("web.17c7", 2*time.Hour),
			Regarding:  corev1.ObjectReference{Kind: "Service", Namespace: "demo", Name: "web"},
			Reason:     "Legacy", Type: corev1.EventTypeNormal, Note: "written through the core API",
			DeprecatedSource:         corev1.EventSource{Component: "endpointslice-controller"},
			DeprecatedFirstTimestamp: ago(2 * time.Hour),
			DeprecatedLastTimestamp:  ago(time.Hour),
			DeprecatedCount:          3,
		},
	}
}

func podTemplate(containers ...corev1.Container) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: containers},
	}
}

func deploymentFixtures() []runtime.Object {
	sel := &metav1.LabelSelector{
		MatchLabels:      map[string]string{"app": "web"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "track", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"canary"}}},
	}
	return []runtime.Object{
		&appsv1.Deployment{
			ObjectMeta: objMeta("web", 7*time.Minute+30*time.Second),
			Spec: appsv1.DeploymentSpec{
				Replicas: ptrTo[int32](3), Selector: sel,
				Template: podTemplate(corev1.Container{Name: "app", Image: "nginx:1.28"}, corev1.Container{Name: "proxy", Image: "envoy:1.30"}),
			},
			Status: appsv1.DeploymentStatus{Replicas: 4, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2, UnavailableReplicas: 2},
		},
		&appsv1.Deployment{
			ObjectMeta: objMeta("api", 9*24*time.Hour),
			Spec: appsv1.DeploymentSpec{
				Replicas: ptrTo[int32](2), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}},
				Template: podTemplate(corev1.Container{Name: "api", Image: "ghcr.io/example/api:v2"}),
			},
			Status: appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2},
		},
		&appsv1.Deployment{
			ObjectMeta: objMeta("scaled-to-zero", time.Hour),
			Spec:       appsv1.DeploymentSpec{Replicas: ptrTo[int32](0), Selector: &metav1.LabelSelector{}},
		},
	}
}

func replicaSetFixtures() []runtime.Object {
	return []runtime.Object{
		&appsv1.ReplicaSet{
			ObjectMeta: objMeta("web-7d4b9c", 7*time.Minute),
			Spec: appsv1.ReplicaSetSpec{
				Replicas: ptrTo[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "pod-template-hash": "7d4b9c"}},
				Template: podTemplate(corev1.Container{Name: "app", Image: "nginx:1.28"}, corev1.Container{Name: "proxy", Image: "envoy:1.30"}),
			},
			Status: appsv1.ReplicaSetStatus{Replicas: 1, ReadyReplicas: 0},
		},
		&appsv1.ReplicaSet{
			ObjectMeta: objMeta("web-5f6a7b", 2*24*time.Hour),
			Spec: appsv1.ReplicaSetSpec{
				Replicas: ptrTo[int32](2),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "pod-template-hash": "5f6a7b"}},
				Template: podTemplate(corev1.Container{Name: "app", Image: "nginx:1.27"}),
			},
			Status: appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 3},
		},
		&appsv1.ReplicaSet{ObjectMeta: objMeta("no-selector", time.Minute)},
	}
}

func replicationControllerFixtures() []runtime.Object {
	web := podTemplate(corev1.Container{Name: "app", Image: "nginx:1.28"}, corev1.Container{Name: "proxy", Image: "envoy:1.30"})
	return []runtime.Object{
		&corev1.ReplicationController{
			ObjectMeta: objMeta("web", 7*time.Minute),
			Spec:       corev1.ReplicationControllerSpec{Replicas: ptrTo[int32](3), Selector: map[string]string{"app": "web"}, Template: &web},
			Status:     corev1.ReplicationControllerStatus{Replicas: 3, ReadyReplicas: 2},
		},
		&corev1.ReplicationController{ObjectMeta: objMeta("no-template", time.Minute)},
	}
}

func endpointSliceFixtures() []runtime.Object {
	ready := func(addrs ...string) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: addrs, Conditions: discoveryv1.EndpointConditions{Ready: ptrTo(true)}}
	}
	return []runtime.Object{
		&discoveryv1.EndpointSlice{
			ObjectMeta:  objMeta("web-abcde", time.Hour),
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptrTo("http"), Port: ptrTo[int32](8080)}, {Name: ptrTo("https"), Port: ptrTo[int32](8443)}},
			Endpoints:   []discoveryv1.Endpoint{ready("10.244.1.7"), ready("10.244.1.8"), ready("10.244.2.3"), ready("10.244.2.4"), ready("10.244.3.9")},
		},
		&discoveryv1.EndpointSlice{
			ObjectMeta:  objMeta("many-ports-fghij", time.Hour),
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports: []discoveryv1.EndpointPort{
				{Port: ptrTo[int32](80)}, {Name: ptrTo("metrics")}, {}, {Port: ptrTo[int32](9090)}, {Port: ptrTo[int32](9091)},
			},
			Endpoints: []discoveryv1.Endpoint{ready("10.244.1.7", "10.244.1.70"), ready("10.244.1.8")},
		},
		&discoveryv1.EndpointSlice{
			ObjectMeta:  objMeta("empty-klmno", 30*time.Second),
			AddressType: discoveryv1.AddressTypeIPv6,
		},
		&discoveryv1.EndpointSlice{
			ObjectMeta:  objMeta("exactly-three-pqrst", 30*time.Second),
			AddressType: discoveryv1.AddressTypeFQDN,
			Ports:       []discoveryv1.EndpointPort{{Port: ptrTo[int32](443)}},
			Endpoints:   []discoveryv1.Endpoint{ready("a.example.com"), ready("b.example.com"), ready("c.example.com")},
		},
	}
}

func ingressFixtures() []runtime.Object {
	rule := func(host string) networkingv1.IngressRule { return networkingv1.IngressRule{Host: host} }
	return []runtime.Object{
		&networkingv1.Ingress{
			ObjectMeta: objMeta("web", 6*time.Minute),
			Spec: networkingv1.IngressSpec{
				IngressClassName: ptrTo("minik"),
				Rules:            []networkingv1.IngressRule{rule("web.example.com"), rule("www.example.com")},
				TLS:              []networkingv1.IngressTLS{{Hosts: []string{"web.example.com"}, SecretName: "web-tls"}},
			},
			Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "127.0.0.1"}, {Hostname: "ingress.minik.local"}}}},
		},
		&networkingv1.Ingress{
			ObjectMeta: objMeta("catch-all", 6*time.Minute),
			Spec:       networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web"}}, Rules: []networkingv1.IngressRule{rule("")}},
		},
		&networkingv1.Ingress{
			ObjectMeta: objMeta("many-hosts", 6*time.Minute),
			Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{
				rule(""), rule("a.example.com"), rule("b.example.com"), rule("c.example.com"), rule("d.example.com"),
			}},
		},
	}
}

func priorityClassFixtures() []runtime.Object {
	lower := corev1.PreemptLowerPriority
	never := corev1.PreemptNever
	return []runtime.Object{
		&schedulingv1.PriorityClass{ObjectMeta: clusterMeta("system-node-critical", 3*24*time.Hour), Value: 2000001000, PreemptionPolicy: &lower},
		&schedulingv1.PriorityClass{ObjectMeta: clusterMeta("high-priority", 5*time.Minute), Value: 1000000, GlobalDefault: true, PreemptionPolicy: &lower},
		&schedulingv1.PriorityClass{ObjectMeta: clusterMeta("batch-nonpreempting", 90*time.Second), Value: -10, PreemptionPolicy: &never},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "no-policy"}, Value: 0},
	}
}

func ingressClassFixtures() []runtime.Object {
	return []runtime.Object{
		&networkingv1.IngressClass{
			ObjectMeta: clusterMeta("minik", 2*time.Hour),
			Spec:       networkingv1.IngressClassSpec{Controller: "minik.dev/ingress-proxy"},
		},
		&networkingv1.IngressClass{
			ObjectMeta: clusterMeta("external-lb", 2*time.Hour),
			Spec: networkingv1.IngressClassSpec{
				Controller: "example.com/ingress-controller",
				Parameters: &networkingv1.IngressClassParametersReference{APIGroup: ptrTo("k8s.example.com"), Kind: "IngressParameters", Name: "external-lb"},
			},
		},
		&networkingv1.IngressClass{
			ObjectMeta: clusterMeta("core-params", 2*time.Hour),
			Spec: networkingv1.IngressClassSpec{
				Controller: "example.com/ingress-controller",
				Parameters: &networkingv1.IngressClassParametersReference{Kind: "ConfigMap", Name: "ingress-params", Scope: ptrTo("Namespace"), Namespace: ptrTo("ingress")},
			},
		},
	}
}

func bindingSubjects() []rbacv1.Subject {
	return []rbacv1.Subject{
		{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"},
		{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"},
		{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "developers"},
		{Kind: rbacv1.ServiceAccountKind, Namespace: "demo", Name: "deployer"},
		{Kind: rbacv1.ServiceAccountKind, Namespace: "ci", Name: "runner"},
	}
}

// goldenCase is one golden file: a kind and the objects of its table.
type goldenCase struct {
	file    string
	table   Table
	objects []runtime.Object
}

func goldenCases() []goldenCase {
	return []goldenCase{
		{"namespace", Namespace, []runtime.Object{
			&corev1.Namespace{ObjectMeta: clusterMeta("default", 30*24*time.Hour), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
			&corev1.Namespace{ObjectMeta: clusterMeta("old-demo", 4*time.Minute), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "no-timestamp"}},
		}},
		{"pod", Pod, podFixtures()},
		{"service", Service, serviceFixtures()},
		{"configmap", ConfigMap, []runtime.Object{
			&corev1.ConfigMap{ObjectMeta: objMeta("kube-root-ca.crt", 3*time.Hour), Data: map[string]string{"ca.crt": "..."}},
			&corev1.ConfigMap{ObjectMeta: objMeta("web-config", 59*time.Second), Data: map[string]string{"a": "1", "b": "2"}, BinaryData: map[string][]byte{"logo.png": {0x89}}},
			&corev1.ConfigMap{ObjectMeta: objMeta("empty", 119*time.Second)},
		}},
		{"secret", Secret, []runtime.Object{
			&corev1.Secret{ObjectMeta: objMeta("web-tls", 8*24*time.Hour), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}},
			&corev1.Secret{ObjectMeta: objMeta("db-password", 2*time.Minute+5*time.Second), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"password": []byte("x")}, StringData: map[string]string{"password": "y", "user": "web"}},
		}},
		{"serviceaccount", ServiceAccount, []runtime.Object{
			&corev1.ServiceAccount{ObjectMeta: objMeta("default", 3*time.Hour)},
			&corev1.ServiceAccount{ObjectMeta: objMeta("deployer", 3*time.Hour+25*time.Minute), Secrets: []corev1.ObjectReference{{Name: "deployer-token"}}},
		}},
		{"event", CoreEvent, coreEventFixtures()},
		{"node", Node, nodeFixtures()},
		{"resourcequota", ResourceQuota, []runtime.Object{
			&corev1.ResourceQuota{
				ObjectMeta: objMeta("compute", 12*time.Minute),
				Status: corev1.ResourceQuotaStatus{
					Hard: corev1.ResourceList{"pods": resource.MustParse("10"), "requests.cpu": resource.MustParse("4"), "requests.memory": resource.MustParse("8Gi"), "limits.cpu": resource.MustParse("8"), "limits.memory": resource.MustParse("16Gi")},
					Used: corev1.ResourceList{"pods": resource.MustParse("3"), "requests.cpu": resource.MustParse("1500m"), "requests.memory": resource.MustParse("3Gi"), "limits.cpu": resource.MustParse("3")},
				},
			},
			&corev1.ResourceQuota{ObjectMeta: objMeta("not-yet-computed", 0), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"pods": resource.MustParse("10")}}},
		}},
		{"deployment", Deployment, deploymentFixtures()},
		{"replicaset", ReplicaSet, replicaSetFixtures()},
		{"replicationcontroller", ReplicationController, replicationControllerFixtures()},
		{"statefulset", StatefulSet, statefulSetFixtures()},
		{"daemonset", DaemonSet, daemonSetFixtures()},
		{"controllerrevision", ControllerRevision, controllerRevisionFixtures()},
		{"horizontalpodautoscaler", HorizontalPodAutoscaler, hpaFixtures()},
		{"job", Job, jobFixtures()},
		{"cronjob", CronJob, cronJobFixtures()},
		{"endpointslice", EndpointSlice, endpointSliceFixtures()},
		{"endpoints", Endpoints, endpointsFixtures()},
		{"podtemplate", PodTemplate, podTemplateFixtures()},
		{"componentstatus", ComponentStatus, componentStatusFixtures()},
		{"ingress", Ingress, ingressFixtures()},
		{"ingressclass", IngressClass, ingressClassFixtures()},
		{"networkpolicy", NetworkPolicy, networkPolicyFixtures()},
		{"ipaddress", IPAddress, ipAddressFixtures()},
		{"servicecidr", ServiceCIDR, serviceCIDRFixtures()},
		{"poddisruptionbudget", PodDisruptionBudget, podDisruptionBudgetFixtures()},
		{"priorityclass", PriorityClass, priorityClassFixtures()},
		{"persistentvolume", PersistentVolume, persistentVolumeFixtures()},
		{"persistentvolumeclaim", PersistentVolumeClaim, persistentVolumeClaimFixtures()},
		{"storageclass", StorageClass, storageClassFixtures()},
		{"csidriver", CSIDriver, csiDriverFixtures()},
		{"csinode", CSINode, csiNodeFixtures()},
		{"volumeattachment", VolumeAttachment, volumeAttachmentFixtures()},
		{"csistoragecapacity", CSIStorageCapacity, csiStorageCapacityFixtures()},
		{"volumeattributesclass", VolumeAttributesClass, volumeAttributesClassFixtures()},
		{"certificatesigningrequest", CertificateSigningRequest, csrFixtures()},
		{"clustertrustbundle", ClusterTrustBundle, clusterTrustBundleFixtures()},
		{"podcertificaterequest", PodCertificateRequest, podCertificateRequestFixtures()},
		{"runtimeclass", RuntimeClass, runtimeClassFixtures()},
		{"deviceclass", DeviceClass, deviceClassFixtures()},
		{"devicetaintrule", DeviceTaintRule, deviceTaintRuleFixtures()},
		{"resourceclaim", ResourceClaim, resourceClaimFixtures()},
		{"resourceclaimtemplate", ResourceClaimTemplate, resourceClaimTemplateFixtures()},
		{"resourceslice", ResourceSlice, resourceSliceFixtures()},
		{"apiservice", APIService, apiServiceFixtures()},
		{"role", CreatedAt, []runtime.Object{
			&rbacv1.Role{ObjectMeta: objMeta("pod-reader", 3*time.Hour), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}},
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "no-timestamp", Namespace: "demo"}},
		}},
		{"clusterrole", CreatedAt, []runtime.Object{
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cluster-admin", CreationTimestamp: metav1.NewTime(time.Date(2026, time.March, 1, 8, 30, 0, 0, time.FixedZone("CET", 3600)))}},
		}},
		{"rolebinding", RoleBinding, []runtime.Object{
			&rbacv1.RoleBinding{ObjectMeta: objMeta("read-pods", 3*time.Hour), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"}, Subjects: bindingSubjects()},
			&rbacv1.RoleBinding{ObjectMeta: objMeta("no-subjects", 3*time.Hour), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}},
		}},
		{"clusterrolebinding", ClusterRoleBinding, []runtime.Object{
			&rbacv1.ClusterRoleBinding{ObjectMeta: clusterMeta("cluster-admin", 30*24*time.Hour), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:masters"}}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: clusterMeta("deployers", time.Hour), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"}, Subjects: bindingSubjects()},
		}},
		{"lease", Lease, []runtime.Object{
			&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Namespace: "kube-node-lease", CreationTimestamp: ago(49 * time.Hour)}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptrTo("node-1"), LeaseDurationSeconds: ptrTo[int32](40)}},
			&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "minik-controllers", Namespace: "kube-system", CreationTimestamp: ago(49 * time.Hour)}},
		}},
		{"event.events.k8s.io", EventsV1Event, eventsV1Fixtures()},
		{"limitrange", CreatedAt, []runtime.Object{
			&corev1.LimitRange{ObjectMeta: objMeta("cpu-defaults", 75*time.Minute)},
		}},
		{"mutatingwebhookconfiguration", MutatingWebhookConfiguration, mutatingWebhookFixtures()},
		{"validatingwebhookconfiguration", ValidatingWebhookConfiguration, validatingWebhookFixtures()},
		{"validatingadmissionpolicy", ValidatingAdmissionPolicy, validatingAdmissionPolicyFixtures()},
		{"validatingadmissionpolicybinding", ValidatingAdmissionPolicyBinding, validatingAdmissionPolicyBindingFixtures()},
		{"mutatingadmissionpolicy", MutatingAdmissionPolicy, mutatingAdmissionPolicyFixtures()},
		{"mutatingadmissionpolicybinding", MutatingAdmissionPolicyBinding, mutatingAdmissionPolicyBindingFixtures()},
		{"flowschema", FlowSchema, flowSchemaFixtures()},
		{"prioritylevelconfiguration", PriorityLevelConfiguration, priorityLevelConfigurationFixtures()},
		{"storageversionmigration", StorageVersionMigration, storageVersionMigrationFixtures()},
		{"gatewayclass.gateway.networking.k8s.io", gatewayClassTable, gatewayClassFixtures()},
		{"gateway.gateway.networking.k8s.io", gatewayTable, gatewayFixtures()},
		{"httproute.gateway.networking.k8s.io", httpRouteTable, httpRouteFixtures()},
		{"referencegrant.gateway.networking.k8s.io", referenceGrantTable, []runtime.Object{
			&gatewayv1.ReferenceGrant{ObjectMeta: objMeta("allow-web", 26*time.Hour)},
		}},
	}
}
