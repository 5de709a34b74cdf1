package runtime

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// dig asks the container's nameservers (or @server) as bind's dig does:
// dig [@server] [+[no]tcp] [+[no]search] [+short] [+noall] [+answer]
// [-x addr] name [type]. The e2e suite's DNS specs run it in agnhost.

func init() {
	utilities["dig"] = uDig
}

func uDig(c *call, argv []string) (int, error) {
	var (
		server, name string
		qtype        = dns.TypeA
		tcp, search  bool
		short        bool
		all          = true
		answer       = true
	)
	args := argv[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "@"):
			server = a[1:]
		case a == "-x" && i+1 < len(args):
			i++
			rev, err := dns.ReverseAddr(args[i])
			if err != nil {
				fmt.Fprintf(c.stderr, "Invalid IP address %s\n", args[i])
				return 1, nil
			}
			name, qtype = rev, dns.TypePTR
		case strings.HasPrefix(a, "+"):
			opt := strings.ToLower(a[1:])
			on := !strings.HasPrefix(opt, "no")
			switch strings.TrimPrefix(opt, "no") {
			case "tcp", "vc":
				tcp = on
			case "search":
				search = on
			case "short":
				short = on
			case "all":
				all = on
				answer = on
			case "answer":
				answer = on
			}
		default:
			if t, ok := dns.StringToType[strings.ToUpper(a)]; ok && name != "" {
				qtype = t
				continue
			}
			name = a
		}
	}
	if name == "" {
		name, qtype = ".", dns.TypeNS
	}
	cc := c.p.resolvConf()
	if cc == nil {
		cc = &dns.ClientConfig{Ndots: 1, Timeout: 5, Attempts: 3}
	}
	servers := cc.Servers
	port := "53"
	if c.p.dnsPort > 0 {
		port = strconv.Itoa(c.p.dnsPort)
	}
	if server != "" {
		servers, port = []string{server}, "53"
	}
	if len(servers) == 0 {
		fmt.Fprintln(c.stdout, ";; connection timed out; no servers could be reached")
		return 9, nil
	}
	names := []string{dns.Fqdn(name)}
	if search && !strings.HasSuffix(name, ".") {
		names = cc.NameList(name)
	}
	netw := "udp"
	if tcp {
		netw = "tcp"
	}
	ctx, cancel := context.WithTimeout(c.ctx, maxLookup)
	defer cancel()
	var resp *dns.Msg
	for _, n := range names {
		m := new(dns.Msg)
		m.SetQuestion(n, qtype)
		m.RecursionDesired = true
		in, err := digExchange(ctx, m, netw, servers, port, time.Duration(max(cc.Timeout, 1))*time.Second)
		if err != nil {
			if c.ctx.Err() != nil {
				return 0, errKilled
			}
			fmt.Fprintln(c.stdout, ";; connection timed out; no servers could be reached")
			return 9, nil
		}
		resp = in
		if in.Rcode == dns.RcodeSuccess && len(in.Answer) > 0 {
			break
		}
	}
	switch {
	case short:
		for _, rr := range resp.Answer {
			fields := strings.Split(rr.String(), "\t")
			fmt.Fprintln(c.stdout, fields[len(fields)-1])
		}
	case answer:
		if all {
			fmt.Fprintf(c.stdout, ";; ->>HEADER<<- opcode: QUERY, status: %s, id: %d\n", dns.RcodeToString[resp.Rcode], resp.Id)
			if len(resp.Answer) > 0 {
				fmt.Fprintln(c.stdout, ";; ANSWER SECTION:")
			}
		}
		for _, rr := range resp.Answer {
			fmt.Fprintln(c.stdout, rr.String())
		}
	}
	return 0, nil
}

// digExchange asks the servers in turn.
func digExchange(ctx context.Context, m *dns.Msg, netw string, servers []string, port string, timeout time.Duration) (*dns.Msg, error) {
	var last error
	for _, s := range servers {
		in, _, err := (&dns.Client{Net: netw, Timeout: timeout}).ExchangeContext(ctx, m, net.JoinHostPort(s, port))
		if err == nil {
			return in, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, last
}
