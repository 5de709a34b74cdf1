package clusterdns

import (
	"math"
	"net/netip"
	"strings"
	"sync/atomic"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/cache"
)

// maxRecords bounds the records one answer is built from (a headless
// Service with thousands of endpoints): the message is truncated to the
// transport's size afterwards anyway.
const maxRecords = 512

// maxChase bounds how many in-zone CNAMEs (ExternalName Services naming
// other Services) one answer follows.
const maxChase = 4

// Index names of the caches.
const (
	indexClusterIP = "clusterIP"
	indexService   = "service"
	indexAddress   = "address"
	indexPodIP     = "podIP"
)

// zone answers names of the cluster domain (and the reverse names of the
// addresses it knows) from the informers' caches, as CoreDNS's kubernetes
// plugin with `pods insecure` does.
type zone struct {
	// origin is the cluster domain as a lower-case FQDN ("cluster.local.").
	origin string
	ttl    uint32
	// nsIP is the DNS Service's address (ns.dns.<origin>).
	nsIP netip.Addr

	services cache.Indexer
	slices   cache.Indexer
	pods     cache.Indexer
	// serial is the SOA serial: the Unix time of the last change seen.
	serial atomic.Uint32
}

// answer is what a lookup found.
type answer struct {
	rcode  int
	answer []dns.RR
	extra  []dns.RR
	// authoritative: the name is in the zone (or a known reverse name).
	authoritative bool
}

// lookup answers q; ok is false for a name the zone does not hold (it is
// forwarded, or refused).
func (z *zone) lookup(q dns.Question) (answer, bool) {
	name := strings.ToLower(q.Name)
	if dns.IsSubDomain(z.origin, name) {
		return z.inZone(q, name), true
	}
	if q.Qtype == dns.TypePTR || q.Qtype == dns.TypeANY {
		if target, ok := z.reverse(name); ok {
			return answer{rcode: dns.RcodeSuccess, authoritative: true, answer: []dns.RR{
				&dns.PTR{Hdr: z.hdr(q.Name, dns.TypePTR), Ptr: target},
			}}, true
		}
	}
	return answer{}, false
}

// inZone answers a name of the cluster domain; a name that does not exist
// is NXDOMAIN and one without records of the type NODATA, both with the
// zone's SOA in the authority section.
func (z *zone) inZone(q dns.Question, name string) answer {
	a := answer{authoritative: true}
	rest := strings.TrimSuffix(strings.TrimSuffix(name, z.origin), ".")
	var labels []string
	if rest != "" {
		labels = strings.Split(rest, ".")
	}
	exists := z.records(&a, labels, q.Name, q.Qtype, 0)
	switch {
	case !exists:
		a.rcode = dns.RcodeNameError
	default:
		a.rcode = dns.RcodeSuccess
	}
	return a
}

// soa is the zone's SOA record, as CoreDNS builds it.
func (z *zone) soa() dns.RR {
	return &dns.SOA{
		Hdr: dns.RR_Header{Name: z.origin, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: z.ttl},
		Ns:  "ns.dns." + z.origin, Mbox: "hostmaster." + z.origin,
		Serial: z.serial.Load(), Refresh: 7200, Retry: 1800, Expire: 86400, Minttl: z.ttl,
	}
}

func (z *zone) hdr(owner string, t uint16) dns.RR_Header {
	return dns.RR_Header{Name: owner, Rrtype: t, Class: dns.ClassINET, Ttl: z.ttl}
}

// addrRR is an A or AAAA record of ip when qtype asks for its family.
func (z *zone) addrRR(owner string, qtype uint16, ip netip.Addr) dns.RR {
	switch {
	case ip.Is4() && (qtype == dns.TypeA || qtype == dns.TypeANY):
		return &dns.A{Hdr: z.hdr(owner, dns.TypeA), A: ip.AsSlice()}
	case ip.Is6() && (qtype == dns.TypeAAAA || qtype == dns.TypeANY):
		return &dns.AAAA{Hdr: z.hdr(owner, dns.TypeAAAA), AAAA: ip.AsSlice()}
	}
	return nil
}

// add appends rr to the answer while it has room.
func (a *answer) add(rr dns.RR) {
	if rr != nil && len(a.answer) < maxRecords {
		a.answer = append(a.answer, rr)
	}
}

func (a *answer) addExtra(rr dns.RR) {
	if rr != nil && len(a.extra) < maxRecords {
		a.extra = append(a.extra, rr)
	}
}

// records adds the records of the zone name labels (relative to the
// origin, most specific first) of type qtype, owned by owner, to a; it
// reports whether the name exists.
func (z *zone) records(a *answer, labels []string, owner string, qtype uint16, depth int) bool {
	n := len(labels)
	switch {
	case n == 0:
		switch qtype {
		case dns.TypeSOA:
			a.add(z.soa())
		case dns.TypeNS:
			a.add(&dns.NS{Hdr: z.hdr(owner, dns.TypeNS), Ns: "ns.dns." + z.origin})
			a.addExtra(z.addrRR("ns.dns."+z.origin, dns.TypeA, z.nsIP))
		}
		return true
	case n == 1 && labels[0] == "dns-version":
		if qtype == dns.TypeTXT || qtype == dns.TypeANY {
			a.add(&dns.TXT{Hdr: z.hdr(owner, dns.TypeTXT), Txt: []string{SchemaVersion}})
		}
		return true
	case n == 1 && labels[0] == "dns":
		return true
	case n == 2 && labels[0] == "ns" && labels[1] == "dns":
		if z.nsIP.IsValid() {
			a.add(z.addrRR(owner, qtype, z.nsIP))
		}
		return true
	case labels[n-1] == "svc":
		return z.serviceRecords(a, labels[:n-1], owner, qtype, depth)
	case labels[n-1] == "pod":
		return z.podRecords(a, labels[:n-1], owner, qtype)
	}
	return false
}

// podRecords answers <a-b-c-d>.<ns>.pod.<zone> with the address its name
// spells, whether a pod has it or not (CoreDNS's `pods insecure`, which
// kubeadm's Corefile uses).
func (z *zone) podRecords(a *answer, labels []string, owner string, qtype uint16) bool {
	switch len(labels) {
	case 0, 1:
		return true
	case 2:
		ip, ok := dashedIP(labels[0])
		if !ok {
			return false
		}
		a.add(z.addrRR(owner, qtype, ip))
		return true
	}
	return false
}

// serviceRecords answers the names under svc.<zone>: labels is what
// precedes "svc" (…, service, namespace).
func (z *zone) serviceRecords(a *answer, labels []string, owner string, qtype uint16, depth int) bool {
	n := len(labels)
	if n == 0 {
		return true
	}
	ns := labels[n-1]
	if n == 1 {
		keys, _ := z.services.IndexKeys(cache.NamespaceIndex, ns)
		return len(keys) > 0
	}
	svc := z.service(ns, labels[n-2])
	if svc == nil {
		return false
	}
	switch n {
	case 2:
		return z.serviceItself(a, svc, owner, qtype, depth)
	case 3:
		// <endpoint>.<svc>.<ns>.svc, or the node of an SRV name
		// _<proto>.<svc>.<ns>.svc.
		if proto, ok := strings.CutPrefix(labels[0], "_"); ok {
			for _, p := range svc.Spec.Ports {
				if strings.EqualFold(string(p.Protocol), proto) {
					return true
				}
			}
			return false
		}
		found := false
		z.endpoints(svc, func(host string, ip netip.Addr, _ *discoveryv1.EndpointSlice) bool {
			if host == labels[0] {
				found = true
				a.add(z.addrRR(owner, qtype, ip))
			}
			return len(a.answer) < maxRecords
		})
		return found
	case 4:
		port, okPort := strings.CutPrefix(labels[0], "_")
		proto, okProto := strings.CutPrefix(labels[1], "_")
		if !okPort || !okProto {
			return false
		}
		return z.srv(a, svc, owner, qtype, port, proto)
	}
	return false
}

// serviceItself answers <svc>.<ns>.svc.<zone>.
func (z *zone) serviceItself(a *answer, svc *corev1.Service, owner string, qtype uint16, depth int) bool {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		target := dns.Fqdn(strings.ToLower(svc.Spec.ExternalName))
		if _, ok := dns.IsDomainName(target); !ok || svc.Spec.ExternalName == "" {
			return true
		}
		a.add(&dns.CNAME{Hdr: z.hdr(owner, dns.TypeCNAME), Target: target})
		if qtype != dns.TypeCNAME && depth < maxChase && dns.IsSubDomain(z.origin, target) && target != z.origin {
			rest := strings.TrimSuffix(strings.TrimSuffix(target, z.origin), ".")
			z.records(a, strings.Split(rest, "."), target, qtype, depth+1)
		}
		return true
	}
	if qtype == dns.TypeSRV {
		return z.srv(a, svc, owner, qtype, "", "")
	}
	if headless(svc) {
		seen := map[netip.Addr]bool{}
		z.endpoints(svc, func(_ string, ip netip.Addr, _ *discoveryv1.EndpointSlice) bool {
			if !seen[ip] {
				seen[ip] = true
				a.add(z.addrRR(owner, qtype, ip))
			}
			return len(a.answer) < maxRecords
		})
		return true
	}
	for _, s := range clusterIPs(svc) {
		if ip, err := netip.ParseAddr(s); err == nil {
			a.add(z.addrRR(owner, qtype, ip))
		}
	}
	return true
}

// srv answers SRV records of svc's ports named port with protocol proto
// (both lower case; empty matches every port): for a Service with a
// ClusterIP one per port naming the Service, for a headless one one per
// endpoint naming the endpoint, each with its address as additional
// record. It reports whether such a port exists.
func (z *zone) srv(a *answer, svc *corev1.Service, owner string, qtype uint16, port, proto string) bool {
	base := svc.Name + "." + svc.Namespace + ".svc." + z.origin
	match := func(name string, p corev1.Protocol) bool {
		if p == "" {
			p = corev1.ProtocolTCP
		}
		if port == "" {
			return name != "" || proto == ""
		}
		return strings.EqualFold(name, port) && strings.EqualFold(string(p), proto)
	}
	found := false
	var srvs []*dns.SRV
	if !headless(svc) {
		for _, p := range svc.Spec.Ports {
			if match(p.Name, p.Protocol) {
				found = true
				srvs = append(srvs, &dns.SRV{Hdr: z.hdr(owner, dns.TypeSRV), Port: uint16(p.Port), Target: base})
			}
		}
		if found && (qtype == dns.TypeSRV || qtype == dns.TypeANY) {
			for _, s := range svc.Spec.ClusterIPs {
				if ip, err := netip.ParseAddr(s); err == nil {
					a.addExtra(z.addrRR(base, dns.TypeANY, ip))
				}
			}
		}
	} else {
		type key struct {
			target string
			port   int32
		}
		seen := map[key]bool{}
		z.endpoints(svc, func(host string, ip netip.Addr, slice *discoveryv1.EndpointSlice) bool {
			for _, p := range slice.Ports {
				if p.Port == nil || p.Name == nil {
					continue
				}
				pr := corev1.ProtocolTCP
				if p.Protocol != nil {
					pr = *p.Protocol
				}
				if !match(*p.Name, pr) {
					continue
				}
				found = true
				target := host + "." + base
				if len(srvs) >= maxRecords || seen[key{target, *p.Port}] {
					continue
				}
				seen[key{target, *p.Port}] = true
				srvs = append(srvs, &dns.SRV{Hdr: z.hdr(owner, dns.TypeSRV), Port: uint16(*p.Port), Target: target})
				if qtype == dns.TypeSRV || qtype == dns.TypeANY {
					a.addExtra(z.addrRR(target, dns.TypeANY, ip))
				}
			}
			return len(srvs) < maxRecords
		})
	}
	if qtype != dns.TypeSRV && qtype != dns.TypeANY {
		return found
	}
	// Equal priority, the weight shared out, as CoreDNS does.
	weight := uint16(100)
	if len(srvs) > 1 {
		weight = uint16(math.Floor(100.0 / float64(len(srvs))))
	}
	for _, s := range srvs {
		s.Weight = weight
		a.add(s)
	}
	return found
}

// endpoints calls fn with each ready endpoint address of svc (its name in
// DNS: the hostname, or the address with dashes), until fn returns false.
func (z *zone) endpoints(svc *corev1.Service, fn func(host string, ip netip.Addr, slice *discoveryv1.EndpointSlice) bool) {
	objs, _ := z.slices.ByIndex(indexService, svc.Namespace+"/"+svc.Name)
	for _, o := range objs {
		slice := o.(*discoveryv1.EndpointSlice)
		for i := range slice.Endpoints {
			ep := &slice.Endpoints[i]
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, s := range ep.Addresses {
				ip, err := netip.ParseAddr(s)
				if err != nil {
					continue
				}
				host := dashed(ip)
				if ep.Hostname != nil && *ep.Hostname != "" {
					host = strings.ToLower(*ep.Hostname)
				}
				if !fn(host, ip, slice) {
					return
				}
			}
		}
	}
}

// service is namespace/name from the cache, or nil.
func (z *zone) service(ns, name string) *corev1.Service {
	obj, ok, err := z.services.GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return nil
	}
	return obj.(*corev1.Service)
}

// reverse answers a PTR name (in-addr.arpa or ip6.arpa): a ClusterIP
// names its Service, an endpoint address its endpoint, a pod IP its pod
// record.
func (z *zone) reverse(name string) (string, bool) {
	ip, ok := reverseIP(name)
	if !ok {
		return "", false
	}
	s := ip.String()
	if objs, _ := z.services.ByIndex(indexClusterIP, s); len(objs) > 0 {
		svc := objs[0].(*corev1.Service)
		return svc.Name + "." + svc.Namespace + ".svc." + z.origin, true
	}
	if objs, _ := z.slices.ByIndex(indexAddress, s); len(objs) > 0 {
		slice := objs[0].(*discoveryv1.EndpointSlice)
		svcName := slice.Labels[discoveryv1.LabelServiceName]
		for _, ep := range slice.Endpoints {
			for _, addr := range ep.Addresses {
				if a, err := netip.ParseAddr(addr); err == nil && a == ip {
					host := dashed(ip)
					if ep.Hostname != nil && *ep.Hostname != "" {
						host = strings.ToLower(*ep.Hostname)
					}
					return host + "." + svcName + "." + slice.Namespace + ".svc." + z.origin, true
				}
			}
		}
	}
	if z.pods != nil {
		if objs, _ := z.pods.ByIndex(indexPodIP, s); len(objs) > 0 {
			pod := objs[0].(*corev1.Pod)
			return dashed(ip) + "." + pod.Namespace + ".pod." + z.origin, true
		}
	}
	return "", false
}

// headless reports whether svc has no cluster IP.
func headless(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP == corev1.ClusterIPNone
}

// clusterIPs are svc's cluster IPs (ClusterIP alone for objects written
// before dual-stack).
func clusterIPs(svc *corev1.Service) []string {
	if len(svc.Spec.ClusterIPs) > 0 {
		return svc.Spec.ClusterIPs
	}
	if svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		return []string{svc.Spec.ClusterIP}
	}
	return nil
}

// dashed writes ip with dashes for dots and colons (1-2-3-4), as endpoint
// and pod names in DNS do.
func dashed(ip netip.Addr) string {
	return strings.NewReplacer(".", "-", ":", "-").Replace(ip.String())
}

// dashedIP parses a dashed address label.
func dashedIP(label string) (netip.Addr, bool) {
	if strings.Count(label, "-") == 3 {
		ip, err := netip.ParseAddr(strings.ReplaceAll(label, "-", "."))
		return ip, err == nil && ip.Is4()
	}
	ip, err := netip.ParseAddr(strings.ReplaceAll(label, "-", ":"))
	return ip, err == nil && ip.Is6()
}

// reverseIP parses a reverse-lookup name.
func reverseIP(name string) (netip.Addr, bool) {
	name = strings.TrimSuffix(name, ".")
	if rest, ok := strings.CutSuffix(name, ".in-addr.arpa"); ok {
		parts := strings.Split(rest, ".")
		if len(parts) != 4 {
			return netip.Addr{}, false
		}
		for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
			parts[i], parts[j] = parts[j], parts[i]
		}
		ip, err := netip.ParseAddr(strings.Join(parts, "."))
		return ip, err == nil && ip.Is4()
	}
	if rest, ok := strings.CutSuffix(name, ".ip6.arpa"); ok {
		nibbles := strings.Split(rest, ".")
		if len(nibbles) != 32 {
			return netip.Addr{}, false
		}
		var b strings.Builder
		for i := len(nibbles) - 1; i >= 0; i-- {
			if len(nibbles[i]) != 1 {
				return netip.Addr{}, false
			}
			b.WriteString(nibbles[i])
			if i%4 == 0 && i > 0 {
				b.WriteByte(':')
			}
		}
		ip, err := netip.ParseAddr(b.String())
		return ip, err == nil && ip.Is6()
	}
	return netip.Addr{}, false
}
