package runtime

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// testDNS is a cluster DNS server for the tests: a real miekg/dns server
// on a loopback port, over UDP and TCP, answering from a table.
type testDNS struct {
	mu      sync.Mutex
	records map[string][]dns.RR
	// hidden names answer NXDOMAIN for their first queries.
	hidden  map[string]int
	queries []string // "udp name" or "tcp name"
	port    int
}

func startTestDNS(t *testing.T, zone string) *testDNS {
	t.Helper()
	d := &testDNS{records: map[string][]dns.RR{}, hidden: map[string]int{}}
	for _, line := range strings.Split(strings.TrimSpace(zone), "\n") {
		rr, err := dns.NewRR(line)
		if err != nil {
			t.Fatalf("record %q: %v", line, err)
		}
		name := strings.ToLower(rr.Header().Name)
		d.records[name] = append(d.records[name], rr)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d.port = pc.LocalAddr().(*net.UDPAddr).Port
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(d.port))
	if err != nil {
		t.Fatalf("tcp on the UDP port: %v", err)
	}
	for _, s := range []*dns.Server{{PacketConn: pc, Handler: d}, {Listener: ln, Handler: d}} {
		started := make(chan struct{})
		s.NotifyStartedFunc = func() { close(started) }
		go func() { _ = s.ActivateAndServe() }()
		<-started
		t.Cleanup(func() { _ = s.Shutdown() })
	}
	return d
}

func (d *testDNS) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(r)
	q := r.Question[0]
	name := strings.ToLower(q.Name)
	d.mu.Lock()
	d.queries = append(d.queries, w.RemoteAddr().Network()+" "+name)
	rrs, ok := d.records[name]
	if d.hidden[name] > 0 {
		d.hidden[name]--
		ok = false
	}
	d.mu.Unlock()
	if !ok {
		m.Rcode = dns.RcodeNameError
	} else {
		m.Answer = rrs
	}
	if _, udp := w.RemoteAddr().(*net.UDPAddr); udp {
		m.Truncate(dns.MinMsgSize)
	}
	_ = w.WriteMsg(m)
}

func (d *testDNS) asked() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.queries...)
}

func TestNamesResolveAsAPodsLibcDoes(t *testing.T) {
	var big []string
	for i := 1; i <= 40; i++ {
		big = append(big, fmt.Sprintf("big.demo.svc.cluster.local. 30 IN A 10.0.0.%d", i))
	}
	d := startTestDNS(t, `
web.demo.svc.cluster.local. 30 IN A 127.0.0.1
db.demo.svc.cluster.local. 30 IN A 127.0.0.1
ext.demo.svc.cluster.local. 30 IN CNAME web.demo.svc.cluster.local.
`+strings.Join(big, "\n"))
	d.hidden["db.demo.svc.cluster.local."] = 3

	rt := New(Config{Speed: 1000, DNSPort: d.port})
	web, port := startEcho(t, rt, "hello from web")
	_ = web
	c, _ := startOn(t, rt, ContainerSpec{Image: "busybox", Command: []string{"sleep", "3600"},
		ResolvConf: []byte("search demo.svc.cluster.local svc.cluster.local cluster.local\nnameserver 127.0.0.1\noptions ndots:5\n"),
		Hosts:      []byte("127.0.0.1\tlocalhost\n10.1.2.3\tmyalias myalias.demo\n")})

	for _, tc := range []struct {
		name   string
		script string
		out    string
		code   int
	}{
		{"a Helm chart's test pod reaches its Service by name", "wget -qO- http://web:" + port, "hello from web\n", 0},
		{"curl follows the search list too", "curl -s http://web." + "demo:" + port + "/", "hello from web\n", 0},
		{"nslookup prints busybox's answer", "nslookup web",
			"Server:\t\t127.0.0.1\nAddress:\t127.0.0.1:" + strconv.Itoa(d.port) + "\n\nName:\tweb.demo.svc.cluster.local\nAddress: 127.0.0.1\n\n", 0},
		{"nslookup of a missing name is NXDOMAIN", "nslookup nope | tail -n 2",
			"** server can't find nope: NXDOMAIN\n\n", 0},
		{"wget of a missing name is a bad address", "wget -qO- http://nope/ 2>&1", "wget: bad address 'nope'\n", 1},
		{"curl of a missing name exits 6", "curl -sS http://nope/ 2>&1", "curl: (6) Could not resolve host: nope\n", 6},
		{"/etc/hosts comes first", "getent hosts myalias", "10.1.2.3        myalias\n", 0},
		{"a CNAME is followed", "getent hosts ext", "127.0.0.1       web.demo.svc.cluster.local\n", 0},
		{"a truncated answer is asked again over TCP", "getent hosts big | wc -l", "40\n", 0},
		{"getent of a missing name exits 2", "getent hosts nope", "", 2},
		{"nc -z reaches a name", "nc -z web " + port + " && echo open", "open\n", 0},
		{"an init container waits until the name resolves", "until nslookup db >/dev/null; do echo waiting; sleep 1; done; echo db is up",
			"waiting\nwaiting\nwaiting\ndb is up\n", 0},
		{"a fully qualified name is asked as is", "getent hosts web.demo.svc.cluster.local.", "127.0.0.1       web.demo.svc.cluster.local\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code, err := c.Exec(t.Context(), []string{"sh", "-c", tc.script})
			if err != nil || string(out) != tc.out || code != tc.code {
				t.Errorf("got %q exit %d (%v), want %q exit %d", out, code, err, tc.out, tc.code)
			}
		})
	}
	// The search list, in order, for a name with fewer dots than ndots.
	var nope []string
	var tcp bool
	for _, q := range d.asked() {
		if strings.HasPrefix(q, "udp nope") && len(nope) < 4 {
			nope = append(nope, strings.TrimPrefix(q, "udp "))
		}
		tcp = tcp || q == "tcp big.demo.svc.cluster.local."
	}
	if got := strings.Join(nope, " "); got != "nope.demo.svc.cluster.local. nope.svc.cluster.local. nope.cluster.local. nope." {
		t.Errorf("names asked for nope: %s", got)
	}
	if !tcp {
		t.Errorf("no TCP retry for a truncated answer: %q", d.asked())
	}
}

// startEcho starts an http-echo server on a free loopback port.
func startEcho(t *testing.T, rt *Runtime, text string) (*Container, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	c, _ := startOn(t, rt, ContainerSpec{Image: "hashicorp/http-echo:1.0", Args: []string{"-text=" + text, "-listen=:" + port}})
	return c, port
}

// TestDigAsTheDNSSpecsRunIt: the e2e suite's DNS probes run dig with the
// search list over UDP and TCP and write OK when it answers.
func TestDigAsTheDNSSpecsRunIt(t *testing.T) {
	d := startTestDNS(t, `
web.demo.svc.cluster.local. 30 IN A 127.0.0.7
`)
	rt := New(Config{Speed: 1000, DNSPort: d.port})
	c, _ := startOn(t, rt, ContainerSpec{Image: agnhostImage, Args: []string{"pause"},
		ResolvConf: []byte("search demo.svc.cluster.local svc.cluster.local cluster.local\nnameserver 127.0.0.1\noptions ndots:5\n")})
	for _, tc := range []struct{ name, script, out string }{
		{"over UDP with the search list", `mkdir -p /results; check="$(dig +notcp +noall +answer +search web A)" && test -n "$check" && echo OK > /results/udp@web; cat /results/udp@web; echo "$check"`,
			"OK\nweb.demo.svc.cluster.local.\t30\tIN\tA\t127.0.0.7\n"},
		{"over TCP", `dig +tcp +noall +answer +search web A`, "web.demo.svc.cluster.local.\t30\tIN\tA\t127.0.0.7\n"},
		{"short", `dig +short web.demo.svc.cluster.local`, "127.0.0.7\n"},
		{"a missing name answers nothing", `check="$(dig +notcp +noall +answer +search nope A)" && test -n "$check" && echo OK || echo missing`, "missing\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code, err := c.Exec(t.Context(), []string{"sh", "-c", tc.script})
			if err != nil || code != 0 || string(out) != tc.out {
				t.Fatalf("got %q exit %d (%v), want %q", out, code, err, tc.out)
			}
		})
	}
	var tcp bool
	for _, q := range d.asked() {
		tcp = tcp || q == "tcp web.demo.svc.cluster.local."
	}
	if !tcp {
		t.Errorf("dig +tcp asked over UDP: %q", d.asked())
	}
}
