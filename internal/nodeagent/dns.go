package nodeagent

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"

	"minik/internal/nodeagent/runtime"
)

// The pod's /etc/resolv.conf and /etc/hosts, as the kubelet writes them
// (pkg/kubelet/network/dns and kubelet_pods.go of kube v1.37) and
// containerd formats the resolver file. Deliberate differences: options
// keep the order they first appear in (the kubelet merges them through a
// map, so its order varies), and a hostNetwork pod's hosts file starts
// from the simulated node's own (localhost and the node's address and
// name), not the host machine's.

// Limits of the resolver configuration, kube's validation's
// (MaxDNSNameservers, MaxDNSSearchPaths, MaxDNSSearchListChars).
const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
	// maxResolvConfBytes bounds the node's resolv.conf read.
	maxResolvConfBytes = 1 << 20
)

// Event reasons of the pod's DNS configuration, the kubelet's.
const (
	ReasonDNSConfigForming  = "DNSConfigForming"
	ReasonMissingClusterDNS = "MissingClusterDNS"
)

// dnsConfig is a resolver configuration: resolv.conf's three lines.
type dnsConfig struct {
	Servers, Searches, Options []string
}

// dnsEvent is a warning the kubelet records about the pod while forming
// the configuration; one with a nodeMessage is recorded on the Node too.
type dnsEvent struct {
	reason, message, nodeMessage string
}

// dnsEnv is what the configuration is formed from: the kubelet's
// --cluster-dns, --cluster-domain and the node's resolv.conf.
type dnsEnv struct {
	clusterDNS    []string
	clusterDomain string
	// host is the node's resolver configuration; hostSet false means the
	// kubelet has none (--resolv-conf="").
	host    dnsConfig
	hostSet bool
}

// podDNS forms pod's resolver configuration as the kubelet's GetPodDNS
// does, with the warnings it records.
func podDNS(env dnsEnv, pod *corev1.Pod) (dnsConfig, []dnsEvent) {
	var events []dnsEvent
	cfg := dnsConfig{
		Servers:  append([]string(nil), env.host.Servers...),
		Searches: append([]string(nil), env.host.Searches...),
		Options:  append([]string(nil), env.host.Options...),
	}
	policy := pod.Spec.DNSPolicy
	if policy == "" {
		policy = corev1.DNSClusterFirst
	}
	if policy == corev1.DNSClusterFirst && pod.Spec.HostNetwork {
		policy = corev1.DNSDefault
	}
	switch policy {
	case corev1.DNSNone:
		cfg = dnsConfig{}
	case corev1.DNSClusterFirst, corev1.DNSClusterFirstWithHostNet:
		if len(env.clusterDNS) > 0 {
			cfg.Servers = append([]string(nil), env.clusterDNS...)
			if env.clusterDomain != "" {
				cfg.Searches = omitDuplicates(append([]string{
					pod.Namespace + ".svc." + env.clusterDomain, "svc." + env.clusterDomain, env.clusterDomain,
				}, cfg.Searches...))
			}
			cfg.Options = []string{"ndots:5"}
			break
		}
		msg := fmt.Sprintf("kubelet does not have ClusterDNS IP configured and cannot create Pod using %q policy. Falling back to %q policy.", corev1.DNSClusterFirst, corev1.DNSDefault)
		events = append(events, dnsEvent{reason: ReasonMissingClusterDNS, nodeMessage: msg,
			message: fmt.Sprintf("pod: %q. %s", pod.Name+"_"+pod.Namespace+"("+string(pod.UID)+")", msg)})
		fallthrough
	default:
		if !env.hostSet {
			cfg.Servers = []string{"127.0.0.1"}
			cfg.Searches = []string{"."}
		}
	}
	if dc := pod.Spec.DNSConfig; dc != nil {
		cfg.Servers = omitDuplicates(append(cfg.Servers, dc.Nameservers...))
		cfg.Searches = omitDuplicates(append(cfg.Searches, dc.Searches...))
		cfg.Options = mergeDNSOptions(cfg.Options, dc.Options)
	}
	if len(cfg.Servers) > maxDNSNameservers {
		cfg.Servers = cfg.Servers[:maxDNSNameservers]
		events = append(events, dnsEvent{reason: ReasonDNSConfigForming, message: "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: " + strings.Join(cfg.Servers, " ")})
	}
	var exceeded bool
	if cfg.Searches, exceeded = searchFitsLimits(cfg.Searches); exceeded {
		events = append(events, dnsEvent{reason: ReasonDNSConfigForming, message: "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: " + strings.Join(cfg.Searches, " ")})
	}
	return cfg, events
}

// searchFitsLimits cuts the search list as the kubelet does: at most 32
// domains, none longer than 253 characters, the line at most 2048.
func searchFitsLimits(search []string) ([]string, bool) {
	exceeded := false
	if len(search) > maxDNSSearchPaths {
		search, exceeded = search[:maxDNSSearchPaths], true
	}
	kept := search[:0:0]
	for _, s := range search {
		if len(s) > utilvalidation.DNS1123SubdomainMaxLength {
			exceeded = true
			continue
		}
		kept = append(kept, s)
	}
	if line := len(strings.Join(kept, " ")); line > maxDNSSearchListChars {
		cut := 0
		for i := len(kept) - 1; i >= 0; i-- {
			line -= len(kept[i]) + 1
			cut++
			if line <= maxDNSSearchListChars {
				break
			}
		}
		kept, exceeded = kept[:len(kept)-cut], true
	}
	return kept, exceeded
}

func omitDuplicates(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// mergeDNSOptions merges the pod's options into existing ones; an option
// the pod names replaces the existing one of that name.
func mergeDNSOptions(existing []string, pod []corev1.PodDNSConfigOption) []string {
	var names []string
	values := map[string]string{}
	set := func(name, value string) {
		if _, ok := values[name]; !ok {
			names = append(names, name)
		}
		values[name] = value
	}
	for _, op := range existing {
		name, value, _ := strings.Cut(op, ":")
		set(name, value)
	}
	for _, op := range pod {
		value := ""
		if op.Value != nil {
			value = *op.Value
		}
		set(op.Name, value)
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		if values[n] != "" {
			out = append(out, n+":"+values[n])
		} else {
			out = append(out, n)
		}
	}
	return out
}

// parseResolvConf reads a resolv.conf as the kubelet does: nameservers
// accumulate, the last search line wins (without "." and trailing dots),
// options of the same name replace earlier ones.
func parseResolvConf(r io.Reader) (dnsConfig, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxResolvConfBytes+1))
	if err != nil {
		return dnsConfig{}, err
	}
	if len(data) > maxResolvConfBytes {
		return dnsConfig{}, fmt.Errorf("resolv.conf larger than %d bytes", maxResolvConfBytes)
	}
	var cfg dnsConfig
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "nameserver":
			if len(f) < 2 {
				return dnsConfig{}, fmt.Errorf("nameserver list is empty ")
			}
			cfg.Servers = append(cfg.Servers, f[1])
		case "search":
			cfg.Searches = nil
			for _, s := range f[1:] {
				if s != "." {
					cfg.Searches = append(cfg.Searches, strings.TrimSuffix(s, "."))
				}
			}
		case "options":
			cfg.Options = mergeDNSOptions(cfg.Options, nil)
			for _, op := range f[1:] {
				name, value, _ := strings.Cut(op, ":")
				cfg.Options = mergeDNSOptions(cfg.Options, []corev1.PodDNSConfigOption{{Name: name, Value: &value}})
			}
		}
	}
	return cfg, nil
}

// resolvConf formats cfg as containerd writes a sandbox's resolv.conf.
func (c dnsConfig) resolvConf() []byte {
	var b bytes.Buffer
	if len(c.Searches) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(c.Searches, " "))
	}
	for _, s := range c.Servers {
		fmt.Fprintf(&b, "nameserver %s\n", s)
	}
	if len(c.Options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(c.Options, " "))
	}
	return b.Bytes()
}

// podHostname returns the pod's host name and domain as the kubelet's
// GeneratePodHostNameAndDomain does: hostnameOverride, else
// spec.hostname, else the pod's name, cut to 63 characters; the domain
// <subdomain>.<ns>.svc.<cluster domain> when spec.subdomain is set.
func podHostname(pod *corev1.Pod, clusterDomain string) (string, string, error) {
	if o := pod.Spec.HostnameOverride; o != nil {
		if msgs := utilvalidation.IsDNS1123Subdomain(*o); len(msgs) != 0 {
			return "", "", fmt.Errorf("pod HostnameOverride %q is not a valid DNS subdomain: %s", *o, strings.Join(msgs, ";"))
		}
		return truncateHostname(*o), "", nil
	}
	hostname := pod.Name
	if h := pod.Spec.Hostname; h != "" {
		if msgs := utilvalidation.IsDNS1123Label(h); len(msgs) != 0 {
			return "", "", fmt.Errorf("pod Hostname %q is not a valid DNS label: %s", h, strings.Join(msgs, ";"))
		}
		hostname = h
	}
	domain := ""
	if sd := pod.Spec.Subdomain; sd != "" {
		if msgs := utilvalidation.IsDNS1123Label(sd); len(msgs) != 0 {
			return "", "", fmt.Errorf("pod Subdomain %q is not a valid DNS label: %s", sd, strings.Join(msgs, ";"))
		}
		domain = sd + "." + pod.Namespace + ".svc." + clusterDomain
	}
	return truncateHostname(hostname), domain, nil
}

// truncateHostname cuts a host name to 63 characters, and then any
// trailing '-' and '.', as the kubelet does.
func truncateHostname(h string) string {
	const hostnameMaxLen = 63
	if len(h) <= hostnameMaxLen {
		return h
	}
	return strings.TrimRight(h[:hostnameMaxLen], "-.")
}

// managedHosts is the kubelet's managed hosts file of a pod with its own
// network: the localhost lines, the pod's addresses with its host name
// (and FQDN when it has a domain), then the hostAliases.
func managedHosts(ips []string, hostname, domain string, aliases []corev1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString("# Kubernetes-managed hosts file.\n")
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	for _, ip := range ips {
		if domain != "" {
			fmt.Fprintf(&b, "%s\t%s.%s\t%s\n", ip, hostname, domain, hostname)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", ip, hostname)
		}
	}
	b.Write(hostAliasEntries(aliases))
	return b.Bytes()
}

// hostNetworkHosts is a hostNetwork pod's hosts file: the node's (here the
// simulated node's: localhost, its address and name) and the hostAliases.
func hostNetworkHosts(nodeIP, nodeName string, aliases []corev1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString("# Kubernetes-managed hosts file (host network).\n")
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	fmt.Fprintf(&b, "%s\t%s\n", nodeIP, nodeName)
	b.Write(hostAliasEntries(aliases))
	return b.Bytes()
}

func hostAliasEntries(aliases []corev1.HostAlias) []byte {
	if len(aliases) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("\n# Entries added by HostAliases.\n")
	for _, a := range aliases {
		fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
	}
	return b.Bytes()
}

// dnsEnv is the node's DNS environment from its configuration; the node's
// resolv.conf is read each time, as the kubelet reads its --resolv-conf.
func (n *node) dnsEnv() (dnsEnv, error) {
	env := dnsEnv{clusterDNS: n.cfg.ClusterDNS, clusterDomain: n.cfg.ClusterDomain}
	if n.cfg.ResolvConf == "" {
		return env, nil
	}
	f, err := os.Open(n.cfg.ResolvConf)
	if err != nil {
		return env, fmt.Errorf("open resolv.conf %s: %w", n.cfg.ResolvConf, err)
	}
	defer f.Close()
	host, err := parseResolvConf(f)
	if err != nil {
		return env, fmt.Errorf("Encountered error while parsing resolv conf file. Error: %w", err)
	}
	env.host, env.hostSet = host, true
	return env, nil
}

// podFiles fills rs's host name, /etc/resolv.conf and /etc/hosts for pod
// at ip, recording the kubelet's warnings about them.
func (w *podWorker) podFiles(pod *corev1.Pod, ip string, rs *runtime.ContainerSpec) {
	env, err := w.n.dnsEnv()
	if err != nil {
		w.event(pod, nil, corev1.EventTypeWarning, ReasonDNSConfigForming, err.Error())
	}
	cfg, events := podDNS(env, pod)
	for _, e := range events {
		w.event(pod, nil, corev1.EventTypeWarning, e.reason, e.message)
		if e.nodeMessage != "" {
			w.n.nodeEvent(corev1.EventTypeWarning, e.reason, e.nodeMessage)
		}
	}
	rs.ResolvConf = cfg.resolvConf()
	if pod.Spec.HostNetwork {
		rs.Hostname = w.n.name
		rs.Hosts = hostNetworkHosts(w.n.ip.String(), w.n.name, pod.Spec.HostAliases)
		return
	}
	hostname, domain, err := podHostname(pod, w.n.cfg.ClusterDomain)
	if err != nil {
		// Validation refuses such pods; one from before is served as it
		// was, under its name.
		w.event(pod, nil, corev1.EventTypeWarning, ReasonDNSConfigForming, err.Error())
		hostname, domain = truncateHostname(pod.Name), ""
	}
	rs.Hostname = hostname
	ips := []string{ip}
	for _, p := range pod.Status.PodIPs {
		if p.IP != ip {
			ips = append(ips, p.IP)
		}
	}
	rs.Hosts = managedHosts(ips, hostname, domain, pod.Spec.HostAliases)
}
