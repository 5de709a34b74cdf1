package nodeagent

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The expectations are kube's documented outputs (the DNS for Services and
// Pods page, the kubelet's dns_test.go and kubelet_pods_test.go).
func TestPodResolvConf(t *testing.T) {
	host := dnsConfig{Servers: []string{"192.0.2.53"}, Searches: []string{"corp.example"}, Options: []string{"edns0"}}
	cluster := dnsEnv{clusterDNS: []string{"10.96.0.10"}, clusterDomain: "cluster.local", host: host, hostSet: true}
	pod := func(policy corev1.DNSPolicy, hostNet bool, dc *corev1.PodDNSConfig) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo", UID: "u1"},
			Spec: corev1.PodSpec{DNSPolicy: policy, HostNetwork: hostNet, DNSConfig: dc}}
	}
	long := strings.Repeat("a", 254)
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("d%d.example", i))
	}
	cases := []struct {
		name   string
		env    dnsEnv
		pod    *corev1.Pod
		want   string
		events []string
	}{
		{"ClusterFirst names the cluster DNS with the namespace's search path and ndots:5", cluster, pod(corev1.DNSClusterFirst, false, nil),
			"search demo.svc.cluster.local svc.cluster.local cluster.local corp.example\nnameserver 10.96.0.10\noptions ndots:5\n", nil},
		{"an empty policy is ClusterFirst", cluster, pod("", false, nil),
			"search demo.svc.cluster.local svc.cluster.local cluster.local corp.example\nnameserver 10.96.0.10\noptions ndots:5\n", nil},
		{"ClusterFirst with hostNetwork falls back to Default", cluster, pod(corev1.DNSClusterFirst, true, nil),
			"search corp.example\nnameserver 192.0.2.53\noptions edns0\n", nil},
		{"ClusterFirstWithHostNet keeps the cluster DNS", cluster, pod(corev1.DNSClusterFirstWithHostNet, true, nil),
			"search demo.svc.cluster.local svc.cluster.local cluster.local corp.example\nnameserver 10.96.0.10\noptions ndots:5\n", nil},
		{"Default is the node's resolv.conf", cluster, pod(corev1.DNSDefault, false, nil),
			"search corp.example\nnameserver 192.0.2.53\noptions edns0\n", nil},
		{"Default without a node resolv.conf names localhost", dnsEnv{clusterDNS: []string{"10.96.0.10"}}, pod(corev1.DNSDefault, false, nil),
			"search .\nnameserver 127.0.0.1\n", nil},
		{"None with a dnsConfig is the dnsConfig alone", cluster, pod(corev1.DNSNone, false, &corev1.PodDNSConfig{
			Nameservers: []string{"192.0.2.1"}, Searches: []string{"ns1.svc.cluster-domain.example", "my.dns.search.suffix"},
			Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}, {Name: "edns0"}}}),
			"search ns1.svc.cluster-domain.example my.dns.search.suffix\nnameserver 192.0.2.1\noptions ndots:2 edns0\n", nil},
		{"a dnsConfig is merged into ClusterFirst: its option replaces ndots", cluster, pod(corev1.DNSClusterFirst, false, &corev1.PodDNSConfig{
			Nameservers: []string{"10.96.0.10", "192.0.2.2"}, Searches: []string{"svc.cluster.local", "extra.example"},
			Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("1")}, {Name: "single-request"}}}),
			"search demo.svc.cluster.local svc.cluster.local cluster.local corp.example extra.example\nnameserver 10.96.0.10\nnameserver 192.0.2.2\noptions ndots:1 single-request\n", nil},
		{"without a cluster DNS ClusterFirst falls back to Default with MissingClusterDNS", dnsEnv{host: host, hostSet: true}, pod(corev1.DNSClusterFirst, false, nil),
			"search corp.example\nnameserver 192.0.2.53\noptions edns0\n",
			[]string{`MissingClusterDNS: pod: "web_demo(u1)". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`}},
		{"more than three nameservers are cut", cluster, pod(corev1.DNSNone, false, &corev1.PodDNSConfig{Nameservers: []string{"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"}}),
			"nameserver 192.0.2.1\nnameserver 192.0.2.2\nnameserver 192.0.2.3\n",
			[]string{"DNSConfigForming: Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 192.0.2.1 192.0.2.2 192.0.2.3"}},
		{"a search domain over 253 characters is left out", cluster, pod(corev1.DNSNone, false, &corev1.PodDNSConfig{Searches: []string{"a.example", long}}),
			"search a.example\n",
			[]string{"DNSConfigForming: Search Line limits were exceeded, some search paths have been omitted, the applied search line is: a.example"}},
		{"at most 32 search domains", cluster, pod(corev1.DNSNone, false, &corev1.PodDNSConfig{Searches: many}),
			"search " + strings.Join(many[:32], " ") + "\n",
			[]string{"DNSConfigForming: Search Line limits were exceeded, some search paths have been omitted, the applied search line is: " + strings.Join(many[:32], " ")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, events := podDNS(c.env, c.pod)
			if got := string(cfg.resolvConf()); got != c.want {
				t.Errorf("resolv.conf\n%s\nwant\n%s", got, c.want)
			}
			var got []string
			for _, e := range events {
				got = append(got, e.reason+": "+e.message)
			}
			if !slices.Equal(got, c.events) {
				t.Errorf("events %q, want %q", got, c.events)
			}
		})
	}
}

func TestSearchLineLength(t *testing.T) {
	var search []string
	for i := range 30 {
		search = append(search, fmt.Sprintf("%s%02d.example", strings.Repeat("x", 90), i))
	}
	got, exceeded := searchFitsLimits(search)
	if !exceeded || len(strings.Join(got, " ")) > maxDNSSearchListChars || len(got) != 20 {
		t.Fatalf("%d domains, %d characters, exceeded %v", len(got), len(strings.Join(got, " ")), exceeded)
	}
}

func TestParseResolvConf(t *testing.T) {
	in := "# comment\nnameserver 192.0.2.1\nsearch old.example\nnameserver 192.0.2.2\nsearch a.example. . b.example\noptions ndots:2 timeout:1\noptions ndots:3\n"
	cfg, err := parseResolvConf(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := dnsConfig{Servers: []string{"192.0.2.1", "192.0.2.2"}, Searches: []string{"a.example", "b.example"}, Options: []string{"ndots:3", "timeout:1"}}
	if !slices.Equal(cfg.Servers, want.Servers) || !slices.Equal(cfg.Searches, want.Searches) || !slices.Equal(cfg.Options, want.Options) {
		t.Fatalf("got %+v, want %+v", cfg, want)
	}
	if _, err := parseResolvConf(strings.NewReader("nameserver\n")); err == nil {
		t.Fatal("an empty nameserver line was accepted")
	}
}

func TestPodHosts(t *testing.T) {
	const header = "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n"
	cases := []struct {
		name string
		pod  corev1.PodSpec
		want string
	}{
		{"a pod's name and address", corev1.PodSpec{}, header + "127.1.0.5\tweb-0\n"},
		{"hostname and subdomain give the FQDN", corev1.PodSpec{Hostname: "db-0", Subdomain: "db"},
			header + "127.1.0.5\tdb-0.db.demo.svc.cluster.local\tdb-0\n"},
		{"hostAliases follow", corev1.PodSpec{HostAliases: []corev1.HostAlias{{IP: "127.0.0.1", Hostnames: []string{"foo.local", "bar.local"}}, {IP: "10.1.2.3", Hostnames: []string{"foo.remote"}}}},
			header + "127.1.0.5\tweb-0\n\n# Entries added by HostAliases.\n127.0.0.1\tfoo.local\tbar.local\n10.1.2.3\tfoo.remote\n"},
		{"hostnameOverride wins and has no domain", corev1.PodSpec{HostnameOverride: ptr.To("custom.host"), Subdomain: "db"},
			header + "127.1.0.5\tcustom.host\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "demo"}, Spec: c.pod}
			h, d, err := podHostname(pod, "cluster.local")
			if err != nil {
				t.Fatal(err)
			}
			if got := string(managedHosts([]string{"127.1.0.5"}, h, d, pod.Spec.HostAliases)); got != c.want {
				t.Errorf("hosts\n%s\nwant\n%s", got, c.want)
			}
		})
	}
	t.Run("a long pod name is cut to 63 characters without a trailing dash", func(t *testing.T) {
		name := strings.Repeat("a", 62) + "-b"
		h, _, err := podHostname(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}, "cluster.local")
		if err != nil || h != strings.Repeat("a", 62) {
			t.Fatalf("got %q, %v", h, err)
		}
	})
	t.Run("a hostNetwork pod gets the node's file", func(t *testing.T) {
		got := string(hostNetworkHosts("127.1.0.1", "minik-node-1", nil))
		want := "# Kubernetes-managed hosts file (host network).\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.1.0.1\tminik-node-1\n"
		if got != want {
			t.Errorf("hosts\n%s\nwant\n%s", got, want)
		}
	})
}
