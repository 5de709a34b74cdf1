package runtime

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Name resolution inside a container, as a pod's libc does it: the
// container's /etc/hosts first, then the nameservers of its
// /etc/resolv.conf (written from ContainerSpec.ResolvConf), with its
// search list and ndots, over UDP with a TCP retry when the answer is
// truncated. A container without a resolv.conf resolves IP addresses and
// localhost only.

// notFoundErr is a name that does not resolve: NXDOMAIN for every name
// tried, or no name server (server true) that answered.
type notFoundErr struct {
	name   string
	server bool
}

func (e *notFoundErr) Error() string {
	if e.server {
		return fmt.Sprintf("lookup %s: no name server answered", e.name)
	}
	return fmt.Sprintf("lookup %s: no such host", e.name)
}

func asNotFound(err error, target **notFoundErr) bool { return errors.As(err, target) }

// maxLookup bounds one lookup: every name and server tried.
const maxLookup = 15 * time.Second

// resolvConf reads the container's /etc/resolv.conf; nil when it has
// none.
func (p *process) resolvConf() *dns.ClientConfig {
	data, err := p.fs.read("/etc/resolv.conf")
	if err != nil {
		return nil
	}
	cc, err := dns.ClientConfigFromReader(bytes.NewReader(data))
	if err != nil || len(cc.Servers) == 0 {
		return nil
	}
	cc.Timeout = min(max(cc.Timeout, 1), 5)
	cc.Attempts = min(max(cc.Attempts, 1), 3)
	return cc
}

// hostsLookup finds a name in the container's /etc/hosts.
func (p *process) hostsLookup(name string) []net.IP {
	data, err := p.fs.read("/etc/hosts")
	if err != nil {
		return nil
	}
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	var out []net.IP
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		ip := net.ParseIP(f[0])
		if ip == nil {
			continue
		}
		for _, n := range f[1:] {
			if strings.ToLower(n) == name {
				out = append(out, ip)
				break
			}
		}
	}
	return out
}

// lookup resolves a host name to its addresses and canonical name.
func (p *process) lookup(ctx context.Context, host string) ([]net.IP, string, error) {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}, host, nil
	}
	if ips := p.hostsLookup(host); len(ips) > 0 {
		return ips, host, nil
	}
	if strings.EqualFold(host, "localhost") {
		return []net.IP{net.ParseIP(p.spec.IP)}, host, nil
	}
	cc := p.resolvConf()
	if cc == nil {
		return nil, "", &notFoundErr{name: host}
	}
	ctx, cancel := context.WithTimeout(ctx, maxLookup)
	defer cancel()
	answered := false
	for _, name := range cc.NameList(host) {
		ips, cname, rcode, err := p.query(ctx, cc, name)
		if err != nil {
			if ctx.Err() != nil {
				return nil, "", err
			}
			continue
		}
		answered = true
		if rcode == dns.RcodeSuccess && len(ips) > 0 {
			return ips, strings.TrimSuffix(cname, "."), nil
		}
	}
	return nil, "", &notFoundErr{name: host, server: !answered}
}

// query asks the servers in turn for the A records of a fully qualified
// name, following CNAMEs, and returns the addresses, the canonical name
// and the answer's rcode.
func (p *process) query(ctx context.Context, cc *dns.ClientConfig, name string) ([]net.IP, string, int, error) {
	canonical := name
	for hops := 0; hops < 8; hops++ {
		in, err := p.exchange(ctx, cc, canonical)
		if err != nil {
			return nil, "", 0, err
		}
		if in.Rcode != dns.RcodeSuccess {
			return nil, "", in.Rcode, nil
		}
		var ips []net.IP
		next := ""
		for _, rr := range in.Answer {
			switch rr := rr.(type) {
			case *dns.A:
				ips = append(ips, rr.A)
			case *dns.CNAME:
				next = rr.Target
			}
		}
		if len(ips) > 0 || next == "" {
			return ips, canonical, dns.RcodeSuccess, nil
		}
		canonical = next
	}
	return nil, "", dns.RcodeServerFailure, nil
}

// exchange sends one question to the servers of the resolv.conf, each
// for its attempts, over UDP, again over TCP when the answer is
// truncated.
func (p *process) exchange(ctx context.Context, cc *dns.ClientConfig, name string) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeA)
	m.RecursionDesired = true
	port := "53"
	if p.dnsPort > 0 {
		port = strconv.Itoa(p.dnsPort)
	}
	timeout := time.Duration(cc.Timeout) * time.Second
	var last error = errors.New("no name server")
	for attempt := 0; attempt < cc.Attempts; attempt++ {
		for _, s := range cc.Servers {
			addr := net.JoinHostPort(s, port)
			in, _, err := (&dns.Client{Net: "udp", Timeout: timeout}).ExchangeContext(ctx, m, addr)
			if err == nil && in.Truncated {
				in, _, err = (&dns.Client{Net: "tcp", Timeout: timeout}).ExchangeContext(ctx, m, addr)
			}
			if err == nil {
				return in, nil
			}
			last = err
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
	}
	return nil, last
}

// dialContext dials an address whose host is resolved in the container.
func (p *process) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, _, err := p.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	var last error
	for _, ip := range ips {
		dst, ok := netip.AddrFromSlice(ip)
		if !ok {
			continue
		}
		dst = dst.Unmap()
		if !p.allowed(ctx, network, dst, port) {
			last = dropped(ctx, network, dst, port)
			continue
		}
		conn, err := p.dialer(network, dst).DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		last = err
	}
	return nil, last
}

// netErrorText words a network error as busybox's tools do: "bad address
// 'x'" for a name that does not resolve, the system call's error
// otherwise.
func netErrorText(err error, tool string) string {
	var nf *notFoundErr
	if errors.As(err, &nf) {
		return fmt.Sprintf("bad address '%s'", nf.name)
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": dial tcp "); i >= 0 {
		s = s[i+2:]
	}
	if tool == "wget" {
		if i := strings.LastIndex(s, ": "); i >= 0 && strings.Contains(s, "connect: ") {
			return "can't connect to remote host: " + capitalize(s[i+2:])
		}
	}
	return s
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func contextWithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

// uNslookup is busybox's nslookup NAME [SERVER].
func uNslookup(c *call, argv []string) (int, error) {
	var args []string
	for _, a := range argv[1:] {
		if !strings.HasPrefix(a, "-") {
			args = append(args, a)
		}
	}
	if len(args) == 0 {
		fmt.Fprintln(c.stderr, "BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: nslookup [-type=QUERY_TYPE] [-debug] HOST [DNS_SERVER]")
		return 1, nil
	}
	name := args[0]
	cc := c.p.resolvConf()
	if len(args) > 1 {
		cc = &dns.ClientConfig{Servers: []string{args[1]}, Ndots: 1, Timeout: 5, Attempts: 2}
	}
	if cc == nil {
		fmt.Fprintln(c.stderr, "nslookup: can't resolve nameserver: no servers in /etc/resolv.conf")
		return 1, nil
	}
	port := "53"
	if c.p.dnsPort > 0 {
		port = strconv.Itoa(c.p.dnsPort)
	}
	fmt.Fprintf(c.stdout, "Server:\t\t%s\nAddress:\t%s\n\n", cc.Servers[0], net.JoinHostPort(cc.Servers[0], port))
	if ip := net.ParseIP(name); ip != nil {
		fmt.Fprintf(c.stdout, "Name:\t%s\nAddress: %s\n\n", name, ip)
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(c.ctx, maxLookup)
	defer cancel()
	answered := false
	for _, fq := range cc.NameList(name) {
		ips, canonical, rcode, err := c.p.query(ctx, cc, fq)
		if err != nil {
			if c.ctx.Err() != nil {
				return 0, errKilled
			}
			continue
		}
		answered = true
		if rcode == dns.RcodeSuccess && len(ips) > 0 {
			for _, ip := range ips {
				fmt.Fprintf(c.stdout, "Name:\t%s\nAddress: %s\n", strings.TrimSuffix(canonical, "."), ip)
			}
			fmt.Fprintln(c.stdout)
			return 0, nil
		}
	}
	if !answered {
		fmt.Fprintf(c.stdout, ";; connection timed out; no servers could be reached\n\n")
		return 1, nil
	}
	fmt.Fprintf(c.stdout, "** server can't find %s: NXDOMAIN\n\n", name)
	return 1, nil
}

// uGetent answers `getent hosts NAME...` (and ahosts) as glibc's does:
// exit 2 when a name is not found.
func uGetent(c *call, argv []string) (int, error) {
	if len(argv) < 2 {
		fmt.Fprintln(c.stderr, "getent: wrong number of arguments")
		return 1, nil
	}
	if db := argv[1]; db != "hosts" && db != "ahosts" && db != "ahostsv4" {
		fmt.Fprintf(c.stderr, "Unknown database: %s\n", db)
		return 1, nil
	}
	code := 0
	for _, name := range argv[2:] {
		ips, canonical, err := c.p.lookup(c.ctx, name)
		if err != nil {
			if c.ctx.Err() != nil {
				return 0, errKilled
			}
			code = 2
			continue
		}
		for _, ip := range ips {
			fmt.Fprintf(c.stdout, "%-15s %s\n", ip, canonical)
		}
	}
	return code, nil
}
