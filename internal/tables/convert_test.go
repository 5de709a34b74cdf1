package tables

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// headers returns a convertor's column names as kubectl prints them,
// "|" before the first wide column.
func headers(c *TableConvertor) string {
	var b strings.Builder
	wideStarted := false
	for i, col := range c.Columns {
		if col.Priority > 0 && !wideStarted {
			b.WriteString(" |")
			wideStarted = true
		}
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(strings.ToUpper(col.Name))
	}
	return b.String()
}

func TestTablesGiveKubectlColumns(t *testing.T) {
	tests := []struct {
		name  string
		table Table
		want  string
	}{
		{"namespaces show their phase", Namespace, "NAME STATUS AGE"},
		{"pods show readiness, status and restarts, and where they run when wide", Pod, "NAME READY STATUS RESTARTS AGE | IP NODE NOMINATED NODE READINESS GATES"},
		{"services show addresses and ports, and their selector when wide", Service, "NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE | SELECTOR"},
		{"config maps count their data", ConfigMap, "NAME DATA AGE"},
		{"secrets show their type and count their data", Secret, "NAME TYPE DATA AGE"},
		{"service accounts no longer show secrets", ServiceAccount, "NAME AGE"},
		{"core events lead with when they were last seen", CoreEvent, "LAST SEEN TYPE REASON OBJECT | SUBOBJECT SOURCE MESSAGE FIRST SEEN COUNT NAME"},
		{"nodes show status, roles and version, and system info when wide", Node, "NAME STATUS ROLES AGE VERSION | INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME"},
		{"resource quotas show requests then limits then age", ResourceQuota, "NAME REQUEST LIMIT AGE"},
		{"deployments show rollout progress", Deployment, "NAME READY UP-TO-DATE AVAILABLE AGE | CONTAINERS IMAGES SELECTOR"},
		{"replica sets show desired, current and ready counts", ReplicaSet, "NAME DESIRED CURRENT READY AGE | CONTAINERS IMAGES SELECTOR"},
		{"endpoint slices list ports and endpoints", EndpointSlice, "NAME ADDRESSTYPE PORTS ENDPOINTS AGE"},
		{"ingresses show class, hosts and address", Ingress, "NAME CLASS HOSTS ADDRESS PORTS AGE"},
		{"ingress classes show their controller", IngressClass, "NAME CONTROLLER PARAMETERS AGE"},
		{"roles use the generic created-at table", CreatedAt, "NAME CREATED AT"},
		{"cluster roles use the generic created-at table", CreatedAt, "NAME CREATED AT"},
		{"role bindings show the role, and subjects when wide", RoleBinding, "NAME ROLE AGE | USERS GROUPS SERVICEACCOUNTS"},
		{"cluster role bindings show the role, and subjects when wide", ClusterRoleBinding, "NAME ROLE AGE | USERS GROUPS SERVICEACCOUNTS"},
		{"leases show their holder", Lease, "NAME HOLDER AGE"},
		{"events.k8s.io events look like core events", EventsV1Event, "LAST SEEN TYPE REASON OBJECT | SUBOBJECT SOURCE MESSAGE FIRST SEEN COUNT NAME"},
		{"webhook configurations count their webhooks", MutatingWebhookConfiguration, "NAME WEBHOOKS AGE"},
		{"validating admission policies show validations and param kind", ValidatingAdmissionPolicy, "NAME VALIDATIONS PARAMKIND AGE"},
		{"policy bindings show the policy and the param", ValidatingAdmissionPolicyBinding, "NAME POLICYNAME PARAMREF AGE"},
		{"gateway classes show their CRD's columns, the description when wide", gatewayClassTable, "NAME CONTROLLER ACCEPTED AGE | DESCRIPTION"},
		{"gateways show their CRD's columns", gatewayTable, "NAME CLASS ADDRESS PROGRAMMED AGE"},
		{"HTTP routes show their hostnames", httpRouteTable, "NAME HOSTNAMES AGE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.table.Convertor(nil)
			if c == nil {
				t.Fatal("Convertor returned nil")
			}
			// Wide columns all come after the default ones: headers puts
			// a single "|" before the first.
			if got := headers(c); got != tt.want {
				t.Errorf("columns = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEveryNameColumnHasTheNameFormat(t *testing.T) {
	for name, table := range allTables {
		n := 0
		for _, col := range table.Convertor(nil).Columns {
			if col.Name == "Name" {
				n++
				if col.Format != "name" || col.Type != "string" {
					t.Errorf("%v: Name column is %+v", name, col)
				}
			}
			if col.Description == "" {
				t.Errorf("%v: column %q has no description", name, col.Name)
			}
		}
		if n != 1 {
			t.Errorf("%v has %d Name columns", name, n)
		}
	}
}

func TestConvertorsAreIndependentCopies(t *testing.T) {
	a := Pod.Convertor(nil)
	a.Columns[0].Name = "Mutated"
	if b := Pod.Convertor(nil); b.Columns[0].Name != "Name" {
		t.Errorf("mutating one convertor changed the next: %q", b.Columns[0].Name)
	}
	d := CreatedAt.Convertor(nil)
	d.Columns[0].Name = "Mutated"
	if CreatedAt.Convertor(nil).Columns[0].Name != "Name" {
		t.Errorf("mutating a CreatedAt convertor changed CreatedAt")
	}
}

func TestRowRejectsAnObjectOfAnotherKind(t *testing.T) {
	_, err := Pod.Convertor(nil).Row(&corev1.Service{})
	if err == nil || !strings.Contains(err.Error(), "*v1.Service") {
		t.Errorf("err = %v, want a wrong-type error naming *v1.Service", err)
	}
}

func TestTheClockIsReadForEachRow(t *testing.T) {
	at := now
	c := ConfigMap.Convertor(func() time.Time { return at })
	cm := &corev1.ConfigMap{ObjectMeta: objMeta("cm", 0)}
	first, _ := c.Row(cm)
	at = at.Add(3 * time.Hour)
	second, _ := c.Row(cm)
	if first[2] != "0s" || second[2] != "3h" {
		t.Errorf("ages = %v then %v, want 0s then 3h", first[2], second[2])
	}
}

func TestAge(t *testing.T) {
	tests := []struct {
		name    string
		created metav1.Time
		want    string
	}{
		{"an object without a creation timestamp has an unknown age", metav1.Time{}, "<unknown>"},
		{"an object created this instant is 0s old", ago(0), "0s"},
		{"a second of clock skew still reads as 0s", ago(-time.Second), "0s"},
		{"more clock skew than that is invalid", ago(-3 * time.Second), "<invalid>"},
		{"under two minutes counts seconds", ago(119 * time.Second), "119s"},
		{"under ten minutes shows minutes and seconds", ago(5*time.Minute + 3*time.Second), "5m3s"},
		{"under three hours counts minutes", ago(150 * time.Minute), "150m"},
		{"under eight hours shows hours and minutes", ago(7*time.Hour + 59*time.Minute), "7h59m"},
		{"under two days counts hours", ago(47 * time.Hour), "47h"},
		{"under eight days shows days and hours", ago(7*24*time.Hour + 23*time.Hour), "7d23h"},
		{"a year and more shows years and days", ago(400 * 24 * time.Hour), "400d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := age(tt.created, now); got != tt.want {
				t.Errorf("age = %q, want %q", got, tt.want)
			}
		})
	}
}

// podCells returns the READY, STATUS and RESTARTS cells of a pod.
func podCells(t *testing.T, pod *corev1.Pod) string {
	t.Helper()
	cells, err := Pod.Convertor(clock).Row(pod)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s %s %s", cells[1], cells[2], cells[3])
}

func TestPodReadyStatusAndRestarts(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	crashloop := podOf("p", corev1.PodRunning, false,
		corev1.ContainerStatus{State: waiting("CrashLoopBackOff"), RestartCount: 4, LastTerminationState: terminated("Error", 1, 0, 75*time.Second)},
		corev1.ContainerStatus{State: running(), Ready: true, RestartCount: 1, LastTerminationState: terminated("Error", 1, 0, time.Hour)})
	restartedWithoutTime := podOf("p", corev1.PodRunning, true, corev1.ContainerStatus{State: running(), Ready: true, RestartCount: 2})
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"a pod whose containers all run and are ready is Running", podOf("p", corev1.PodRunning, true,
			corev1.ContainerStatus{State: running(), Ready: true}, corev1.ContainerStatus{State: running(), Ready: true}), "2/2 Running 0"},
		{"a running container that is not ready does not count as ready", podOf("p", corev1.PodRunning, false,
			corev1.ContainerStatus{State: running()}), "0/1 Running 0"},
		{"a crash-looping container shows its back-off and how long ago it last died", crashloop, "1/2 CrashLoopBackOff 5 (75s ago)"},
		{"restarts without a termination time show no 'ago'", restartedWithoutTime, "1/1 Running 2"},
		{"a pod whose image cannot be pulled shows ErrImagePull", podOf("p", corev1.PodPending, false,
			corev1.ContainerStatus{State: waiting("ErrImagePull")}), "0/1 ErrImagePull 0"},
		{"a pod with a waiting container without a reason shows its phase", podOf("p", corev1.PodPending, false,
			corev1.ContainerStatus{State: waiting("")}), "0/1 Pending 0"},
		{"a pod being created shows ContainerCreating", podOf("p", corev1.PodPending, false,
			corev1.ContainerStatus{State: waiting("ContainerCreating")}), "0/1 ContainerCreating 0"},
		{"the first container's state wins over later ones", podOf("p", corev1.PodPending, false,
			corev1.ContainerStatus{State: waiting("ImagePullBackOff")}, corev1.ContainerStatus{State: waiting("CrashLoopBackOff")}), "0/2 ImagePullBackOff 0"},
		{"a succeeded pod is Completed", podOf("p", corev1.PodSucceeded, false,
			corev1.ContainerStatus{State: terminated("Completed", 0, 0, time.Minute)}), "0/1 Completed 0"},
		{"a completed container next to a running one is NotReady when the pod is not ready", podOf("p", corev1.PodRunning, false,
			corev1.ContainerStatus{State: terminated("Completed", 0, 0, time.Minute)}, corev1.ContainerStatus{State: running(), Ready: true}), "1/2 NotReady 0"},
		{"a completed container next to a running one is Running when the pod is ready", podOf("p", corev1.PodRunning, true,
			corev1.ContainerStatus{State: terminated("Completed", 0, 0, time.Minute)}, corev1.ContainerStatus{State: running(), Ready: true}), "1/2 Running 0"},
		{"a completed container next to a failed one shows the failure", podOf("p", corev1.PodRunning, false,
			corev1.ContainerStatus{State: terminated("Completed", 0, 0, time.Minute)}, corev1.ContainerStatus{State: terminated("Error", 1, 0, time.Minute)}), "0/2 Error 0"},
		{"a container killed by a signal without a reason shows the signal", podOf("p", corev1.PodRunning, false,
			corev1.ContainerStatus{State: terminated("", 137, 9, time.Minute)}), "0/1 Signal:9 0"},
		{"a container that exited without a reason shows the exit code", podOf("p", corev1.PodRunning, false,
			corev1.ContainerStatus{State: terminated("", 3, 0, time.Minute)}), "0/1 ExitCode:3 0"},
		{"a pod being deleted is Terminating", withDeletion(podOf("p", corev1.PodRunning, true,
			corev1.ContainerStatus{State: running(), Ready: true})), "1/1 Terminating 0"},
		{"a finished pod being deleted keeps its final status", withDeletion(podOf("p", corev1.PodFailed, false,
			corev1.ContainerStatus{State: terminated("Error", 1, 0, time.Minute)})), "0/1 Error 0"},
		{"a pod of a lost node being deleted is Unknown", func() *corev1.Pod {
			p := withDeletion(podOf("p", corev1.PodRunning, true, corev1.ContainerStatus{State: running(), Ready: true}))
			p.Status.Reason = "NodeLost"
			return p
		}(), "1/1 Unknown 0"},
		{"an evicted pod shows the eviction", func() *corev1.Pod {
			p := podOf("p", corev1.PodFailed, false)
			p.Spec.Containers = []corev1.Container{{Name: "app"}}
			p.Status.Reason = "Evicted"
			return p
		}(), "0/1 Evicted 0"},
		{"a pod held by scheduling gates is SchedulingGated", func() *corev1.Pod {
			p := podOf("p", corev1.PodPending, false)
			p.Spec.Containers = []corev1.Container{{Name: "app"}}
			p.Status.Conditions = []corev1.PodCondition{condition(corev1.PodScheduled, corev1.ConditionFalse, corev1.PodReasonSchedulingGated)}
			return p
		}(), "0/1 SchedulingGated 0"},
		{"a pod running its first init container shows Init:0/N", withInit(podOf("p", corev1.PodPending, false,
			corev1.ContainerStatus{State: waiting("PodInitializing")}), false,
			[]corev1.Container{{Name: "a"}, {Name: "b"}},
			corev1.ContainerStatus{Name: "a", State: running()}, corev1.ContainerStatus{Name: "b", State: waiting("PodInitializing")}), "0/1 Init:0/2 0"},
		{"a pod whose first init container succeeded shows Init:1/N", withInit(podOf("p", corev1.PodPending, false,
			corev1.ContainerStatus{State: waiting("PodInitializing")}), false,
			[]corev1.Container{{Name: "a"}, {Name: "b"}},
			corev1.ContainerStatus{Name: "a", State: terminated("Completed", 0, 0, time.Minute)}, corev1.ContainerStatus{Name: "b", State: running()}), "0/1 Init:1/2 0"},
		{"a crash-looping init container shows Init:CrashLoopBackOff and its restarts", withInit(podOf("p", corev1.PodPending, false,
			corev1.ContainerStatus{State: waiting("PodInitializing"), RestartCount: 9}), false,
			[]corev1.Container{{Name: "a"}},
			corev1.ContainerStatus{Name: "a", State: waiting("CrashLoopBackOff"), RestartCount: 3, LastTerminationState: terminated("Error", 1, 0, 10*time.Second)}), "0/1 Init:CrashLoopBackOff 3 (10s ago)"},
		{"a failed init container shows Init:<reason>", withInit(podOf("p", corev1.PodPending, false,
			corev1.ContainerStatus{State: waiting("PodInitializing")}), false,
			[]corev1.Container{{Name: "a"}},
			corev1.ContainerStatus{Name: "a", State: terminated("Error", 1, 0, time.Minute)}), "0/1 Init:Error 0"},
		{"a failed init container without a reason shows Init:ExitCode:N", withInit(podOf("p", corev1.PodPending, false,
			corev1.ContainerStatus{State: waiting("PodInitializing")}), false,
			[]corev1.Container{{Name: "a"}},
			corev1.ContainerStatus{Name: "a", State: terminated("", 2, 0, time.Minute)}), "0/1 Init:ExitCode:2 0"},
		{"app containers waiting after initialization show PodInitializing", withInit(podOf("p", corev1.PodPending, false,
			corev1.ContainerStatus{State: waiting("PodInitializing")}), true,
			[]corev1.Container{{Name: "a"}},
			corev1.ContainerStatus{Name: "a", State: terminated("Completed", 0, 0, time.Second)}), "0/1 PodInitializing 0"},
		{"a started sidecar counts toward ready and its restarts are kept", withInit(podOf("p", corev1.PodRunning, true,
			corev1.ContainerStatus{State: running(), Ready: true, RestartCount: 1, LastTerminationState: terminated("Error", 1, 0, 9*time.Minute)}), true,
			[]corev1.Container{{Name: "init"}, {Name: "proxy", RestartPolicy: &always}},
			corev1.ContainerStatus{Name: "init", State: terminated("Completed", 0, 0, 9*time.Minute), RestartCount: 7},
			corev1.ContainerStatus{Name: "proxy", State: running(), Ready: true, Started: ptrTo(true), RestartCount: 2, LastTerminationState: terminated("Error", 1, 0, 3*time.Minute)}), "2/2 Running 3 (3m ago)"},
		{"a sidecar that has not started holds initialization", withInit(podOf("p", corev1.PodPending, false,
			corev1.ContainerStatus{State: waiting("PodInitializing")}), false,
			[]corev1.Container{{Name: "proxy", RestartPolicy: &always}},
			corev1.ContainerStatus{Name: "proxy", State: running(), Started: ptrTo(false)}), "0/2 Init:0/1 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := podCells(t, tt.pod); got != tt.want {
				t.Errorf("READY STATUS RESTARTS = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOnlyFinishedPodRowsHaveConditions(t *testing.T) {
	c := Pod.Convertor(nil)
	tests := []struct {
		name  string
		phase corev1.PodPhase
		want  string
	}{
		{"a running pod has no row condition", corev1.PodRunning, ""},
		{"a succeeded pod is marked completed", corev1.PodSucceeded, "Completed True Succeeded"},
		{"a failed pod is marked completed", corev1.PodFailed, "Completed True Failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, cond := range c.Conditions(&corev1.Pod{Status: corev1.PodStatus{Phase: tt.phase}}) {
				got = append(got, fmt.Sprintf("%s %s %s", cond.Type, cond.Status, cond.Reason))
			}
			if strings.Join(got, ";") != tt.want {
				t.Errorf("conditions = %q, want %q", got, tt.want)
			}
		})
	}
	if Service.Convertor(nil).Conditions != nil {
		t.Error("services should have no row conditions")
	}
}

func TestEndpointSliceCells(t *testing.T) {
	port := func(p int32) discoveryv1.EndpointPort { return discoveryv1.EndpointPort{Port: &p} }
	endpoints := func(n int) []discoveryv1.Endpoint {
		var es []discoveryv1.Endpoint
		for i := range n {
			es = append(es, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.0.0.%d", i+1)}})
		}
		return es
	}
	tests := []struct {
		name  string
		slice discoveryv1.EndpointSlice
		want  string
	}{
		{"an empty slice shows <unset> ports and endpoints", discoveryv1.EndpointSlice{}, "<unset> <unset>"},
		{"three endpoints are all listed", discoveryv1.EndpointSlice{Endpoints: endpoints(3), Ports: []discoveryv1.EndpointPort{port(80)}}, "80 10.0.0.1,10.0.0.2,10.0.0.3"},
		{"a fourth endpoint becomes '+ 1 more...'", discoveryv1.EndpointSlice{Endpoints: endpoints(4)}, "<unset> 10.0.0.1,10.0.0.2,10.0.0.3 + 1 more..."},
		{"addresses of one endpoint count separately", discoveryv1.EndpointSlice{Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"a", "b", "c", "d", "e"}}}}, "<unset> a,b,c + 2 more..."},
		{"a port without a number shows its name, or * for all ports", discoveryv1.EndpointSlice{Ports: []discoveryv1.EndpointPort{{Name: ptrTo("http")}, {}}}, "http,* <unset>"},
		{"more than three ports are summarized", discoveryv1.EndpointSlice{Ports: []discoveryv1.EndpointPort{port(1), port(2), port(3), port(4), port(5), port(6)}}, "1,2,3 + 3 more... <unset>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cells, err := EndpointSlice.Convertor(nil).Row(&tt.slice)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%s %s", cells[2], cells[3]); got != tt.want {
				t.Errorf("PORTS ENDPOINTS = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestIngressHosts(t *testing.T) {
	rules := func(hosts ...string) []networkingv1.IngressRule {
		rs := make([]networkingv1.IngressRule, len(hosts))
		for i, h := range hosts {
			rs[i].Host = h
		}
		return rs
	}
	tests := []struct {
		name  string
		rules []networkingv1.IngressRule
		want  string
	}{
		{"no rules match every host", nil, "*"},
		{"rules without hosts match every host", rules("", ""), "*"},
		{"hosts are listed in rule order", rules("a", "", "b"), "a,b"},
		{"three hosts are all listed", rules("a", "b", "c"), "a,b,c"},
		{"rules after the third host count every rule beyond three", rules("", "a", "b", "c", "d"), "a,b,c + 2 more..."},
		{"hostless rules after the third host still count", rules("a", "b", "c", ""), "a,b,c + 1 more..."},
		{"many hostless rules before a host do not summarize", rules("", "", "", "", "a"), "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ingressHosts(tt.rules); got != tt.want {
				t.Errorf("HOSTS = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestServiceCells(t *testing.T) {
	tests := []struct {
		name string
		spec corev1.ServiceSpec
		lb   []corev1.LoadBalancerIngress
		want string
	}{
		{"a cluster IP service without external IPs shows <none>", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIPs: []string{"10.96.0.1"}}, nil, "10.96.0.1 <none> <none>"},
		{"only the first of a dual-stack service's cluster IPs is shown", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIPs: []string{"10.96.0.1", "fd00::1"}}, nil, "10.96.0.1 <none> <none>"},
		{"a service with only the legacy clusterIP field shows it", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.2"}, nil, "10.96.0.2 <none> <none>"},
		{"node ports follow the port", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}, {Port: 53, Protocol: corev1.ProtocolUDP}}}, nil, "<none> <none> 80:30080/TCP,53/UDP"},
		{"a load balancer without ingress points is pending", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}, nil, "<none> <pending> <none>"},
		{"load balancer ingress points are sorted and de-duplicated before external IPs", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ExternalIPs: []string{"1.1.1.1"}},
			[]corev1.LoadBalancerIngress{{IP: "9.9.9.9"}, {Hostname: "a.example"}, {IP: "9.9.9.9"}}, "<none> 9.9.9.9,a.example,1.1.1.1 <none>"},
		{"long load balancer addresses are not clipped", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
			[]corev1.LoadBalancerIngress{{Hostname: "a-very-long-load-balancer-name.elb.example.com"}}, "<none> a-very-long-load-balancer-name.elb.example.com <none>"},
		{"an external name service shows the name", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}, nil, "<none> db.example.com <none>"},
		{"a service without a type has an unknown external IP", corev1.ServiceSpec{}, nil, "<none> <unknown> <none>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &corev1.Service{Spec: tt.spec, Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: tt.lb}}}
			cells, err := Service.Convertor(nil).Row(svc)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%s %s %s", cells[2], cells[3], cells[4]); got != tt.want {
				t.Errorf("CLUSTER-IP EXTERNAL-IP PORT(S) = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEventCells(t *testing.T) {
	tests := []struct {
		name  string
		event runtime.Object
		want  string // LAST SEEN, OBJECT, SOURCE, MESSAGE, FIRST SEEN, COUNT
	}{
		{"a core event counts and dates from its timestamps", &corev1.Event{
			InvolvedObject: corev1.ObjectReference{Kind: "ReplicaSet", Name: "web-1"},
			Source:         corev1.EventSource{Component: "replicaset-controller"},
			Message:        "  Created pod: web-1-abc \n", FirstTimestamp: ago(time.Hour), LastTimestamp: ago(time.Minute), Count: 3,
		}, "60s|replicaset/web-1|replicaset-controller|Created pod: web-1-abc|60m|3"},
		{"a singleton event of the new API counts one and dates from its event time", &eventsv1.Event{
			Regarding: corev1.ObjectReference{Kind: "Node", Name: "node-1"}, ReportingController: "kubelet", ReportingInstance: "node-1",
			Note: "Starting kubelet.", EventTime: microAgo(4 * time.Minute),
		}, "4m|node/node-1|kubelet, node-1|Starting kubelet.|4m|1"},
		{"a series counts its occurrences and was last seen at its last observation", &eventsv1.Event{
			Regarding: corev1.ObjectReference{Kind: "Pod", Name: "p"}, ReportingController: "kubelet",
			EventTime: microAgo(10 * time.Minute), Series: &eventsv1.EventSeries{Count: 12, LastObservedTime: microAgo(8 * time.Second)},
		}, "8s|pod/p|kubelet||10m|12"},
		{"the deprecated source component wins over the reporting controller, the reporting instance fills in the host", &corev1.Event{
			Source: corev1.EventSource{Component: "kubelet"}, ReportingController: "other", ReportingInstance: "node-9",
		}, "<unknown>||kubelet, node-9||<unknown>|1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := CoreEvent
			if _, ok := tt.event.(*eventsv1.Event); ok {
				table = EventsV1Event
			}
			cells, err := table.Convertor(clock).Row(tt.event)
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%s|%s|%s|%s|%s|%d", cells[0], cells[3], cells[5], cells[6], cells[7], cells[8])
			if got != tt.want {
				t.Errorf("cells = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDeploymentReadyIsReadyOverDesired(t *testing.T) {
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptrTo[int32](5)}, Status: appsv1.DeploymentStatus{ReadyReplicas: 3, UpdatedReplicas: 4, AvailableReplicas: 2}}
	cells, err := Deployment.Convertor(nil).Row(d)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(cells[1:4]); got != "[3/5 4 2]" {
		t.Errorf("READY UP-TO-DATE AVAILABLE = %s, want [3/5 4 2]", got)
	}
}

// allTables are the package's tables, by name, for checks that hold for
// every one. Which kind uses which table is internal/registry's to say
// (and test).
var allTables = map[string]Table{
	"Namespace": Namespace, "Pod": Pod, "Service": Service, "ConfigMap": ConfigMap, "Secret": Secret,
	"ServiceAccount": ServiceAccount, "CoreEvent": CoreEvent, "Node": Node, "ResourceQuota": ResourceQuota,
	"PersistentVolume": PersistentVolume, "PersistentVolumeClaim": PersistentVolumeClaim,
	"Deployment": Deployment, "ReplicaSet": ReplicaSet, "StatefulSet": StatefulSet, "DaemonSet": DaemonSet,
	"ControllerRevision": ControllerRevision, "Job": Job, "CronJob": CronJob, "EndpointSlice": EndpointSlice,
	"Ingress": Ingress, "IngressClass": IngressClass, "PodDisruptionBudget": PodDisruptionBudget,
	"RoleBinding": RoleBinding, "ClusterRoleBinding": ClusterRoleBinding, "Lease": Lease,
	"EventsV1Event": EventsV1Event, "PriorityClass": PriorityClass, "StorageClass": StorageClass,
	"CreatedAt": CreatedAt, "MutatingWebhookConfiguration": MutatingWebhookConfiguration,
	"ValidatingWebhookConfiguration": ValidatingWebhookConfiguration, "ValidatingAdmissionPolicy": ValidatingAdmissionPolicy,
	"ValidatingAdmissionPolicyBinding": ValidatingAdmissionPolicyBinding,
}

// ExampleTable_Convertor shows the cells of a pod's row; the API layer wraps them
// in a metav1.TableRow with the object's metadata.
func ExampleTable_Convertor() {
	now := time.Date(2026, time.March, 14, 15, 0, 0, 0, time.UTC)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-7d4b9c-x2x9q", CreationTimestamp: metav1.NewTime(now.Add(-5 * time.Minute))},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
		Status: corev1.PodStatus{
			Phase:  corev1.PodRunning,
			PodIPs: []corev1.PodIP{{IP: "10.244.1.7"}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", RestartCount: 3,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: metav1.NewTime(now.Add(-40 * time.Second))}},
			}},
		},
	}
	c := Pod.Convertor(func() time.Time { return now })
	cells, err := c.Row(pod)
	if err != nil {
		panic(err)
	}
	for i, col := range c.Columns {
		fmt.Printf("%s=%v\n", strings.ToUpper(col.Name), cells[i])
	}
	// Output:
	// NAME=web-7d4b9c-x2x9q
	// READY=0/1
	// STATUS=CrashLoopBackOff
	// RESTARTS=3 (40s ago)
	// AGE=5m
	// IP=10.244.1.7
	// NODE=node-1
	// NOMINATED NODE=<none>
	// READINESS GATES=<none>
}
