package server_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"minik/internal/clusterdns"
	"minik/internal/testserver"
)

// TestClusterDNS: the kube-dns Service exists as kubeadm makes it, minikd
// answers DNS on its ClusterIP port 53 over UDP and TCP (the Service
// proxy leaving 53/TCP to it), and pods' resolv.conf and hosts name it.
func TestClusterDNS(t *testing.T) {
	ts := testserver.StartWith(t, testserver.Options{
		DNS: true, DataPlane: true, Nodes: 1, Scheduler: true,
		Controllers: []string{"endpointslice", "serviceaccount"},
	})
	cs := ts.Client(t)
	ctx := context.Background()
	dnsIP, err := clusterdns.ClusterIP(netip.MustParsePrefix(ts.ServiceClusterIPRange))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("kube-dns is in kube-system as kubeadm has it", func(t *testing.T) {
		svc, err := cs.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if svc.Spec.ClusterIP != dnsIP.String() || svc.Labels["k8s-app"] != "kube-dns" || svc.Labels["kubernetes.io/name"] != "CoreDNS" {
			t.Fatalf("clusterIP %s (want %s), labels %v", svc.Spec.ClusterIP, dnsIP, svc.Labels)
		}
		var ports []string
		for _, p := range svc.Spec.Ports {
			ports = append(ports, p.Name+"/"+string(p.Protocol)+"/"+net.JoinHostPort("", p.TargetPort.String()))
		}
		if got := strings.Join(ports, " "); got != "dns/UDP/:53 dns-tcp/TCP/:53 metrics/TCP/:9153" {
			t.Fatalf("ports %s", got)
		}
	})

	t.Run("its EndpointSlice names the DNS server on port 53 and its metrics on 9153", func(t *testing.T) {
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			s, err := cs.DiscoveryV1().EndpointSlices("kube-system").Get(ctx, clusterdns.EndpointSliceName, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			ok := len(s.Endpoints) == 1 && s.Endpoints[0].Addresses[0] == dnsIP.String() && *s.Endpoints[0].Conditions.Ready &&
				len(s.Ports) == 3 && *s.Ports[0].Port == 53 && *s.Ports[1].Port == 53 && *s.Ports[2].Port == 9153
			return ok, nil
		})
		if err != nil {
			t.Fatalf("no kube-dns endpoint on %s:53: %v", dnsIP, err)
		}
	})

	web, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, proto := range []string{"udp", "tcp"} {
		t.Run("a Service's name resolves at the kube-dns ClusterIP over "+proto, func(t *testing.T) {
			c := &dns.Client{Net: proto, Timeout: 2 * time.Second}
			m := new(dns.Msg)
			m.SetQuestion("web.default.svc.cluster.local.", dns.TypeA)
			var last error
			err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
				r, _, err := c.Exchange(m, net.JoinHostPort(dnsIP.String(), "53"))
				if err != nil {
					last = err
					return false, nil
				}
				return len(r.Answer) == 1 && r.Answer[0].(*dns.A).A.String() == web.Spec.ClusterIP, nil
			})
			if err != nil {
				t.Fatalf("no answer: %v (last error %v)", err, last)
			}
		})
	}

	t.Run("the metrics port gives CoreDNS's request counters", func(t *testing.T) {
		wants := []string{
			`coredns_dns_requests_total{family="1",proto="udp",server="dns://:53",type="A",view="",zone="cluster.local."}`,
			`coredns_dns_requests_total{family="1",proto="tcp",server="dns://:53",type="A",view="",zone="cluster.local."}`,
			`coredns_dns_responses_total{plugin="kubernetes",rcode="NOERROR",server="dns://:53",view="",zone="cluster.local."}`,
		}
		// A query is counted once answered, as CoreDNS counts it: the
		// client may read the counters before the server has.
		var body []byte
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			resp, err := http.Get("http://" + net.JoinHostPort(dnsIP.String(), "9153") + "/metrics")
			if err != nil {
				return false, err
			}
			defer resp.Body.Close()
			body, _ = io.ReadAll(resp.Body)
			for _, want := range wants {
				if !strings.Contains(string(body), want) {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil {
			for _, want := range wants {
				if !strings.Contains(string(body), want) {
					t.Errorf("no %s in\n%s", want, body)
				}
			}
			t.Fatal(err)
		}
	})

	t.Run("a pod's resolv.conf and hosts are the kubelet's", func(t *testing.T) {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "files"}, Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Hostname: "db-0", Subdomain: "db",
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"cat", "/etc/resolv.conf", "/etc/hosts"}}},
		}}
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
			return err == nil, nil // the default ServiceAccount may not exist yet
		})
		if err != nil {
			t.Fatal(err)
		}
		var p *corev1.Pod
		err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			p, err = cs.CoreV1().Pods("default").Get(ctx, "files", metav1.GetOptions{})
			return err == nil && p.Status.Phase == corev1.PodSucceeded, nil
		})
		if err != nil {
			t.Fatalf("pod did not succeed: %v (%v)", err, p.Status)
		}
		logs, err := cs.CoreV1().Pods("default").GetLogs("files", &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := "search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver " + dnsIP.String() + "\noptions ndots:5\n" +
			"# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n" +
			p.Status.PodIP + "\tdb-0.db.default.svc.cluster.local\tdb-0\n"
		if string(logs) != want {
			t.Fatalf("files\n%s\nwant\n%s", logs, want)
		}
	})
}
