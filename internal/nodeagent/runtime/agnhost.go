package runtime

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
)

// agnhost is the Kubernetes e2e suite's test image
// (registry.k8s.io/e2e-test-images/agnhost): one binary whose subcommands
// the conformance specs run. Each subcommand here does what the real one
// does on the wire — same flags and defaults, same paths, bodies, status
// codes and log lines — on the pod's IP, in simulated time. Subcommands
// the simulation does not have fail as an unknown one does (exit 1).

// agnhostCmd is one subcommand: it parses its flags from fl after define
// has declared them, then runs.
type agnhostCmd struct {
	// define declares the flags; run runs with them parsed.
	define func(fl *pflag.FlagSet) func(a *agnhostRun) (int, error)
}

// agnhostCommands are the simulated subcommands, by name.
var agnhostCommands map[string]agnhostCmd

func init() {
	agnhostCommands = map[string]agnhostCmd{
		"netexec":           {defineNetexec},
		"serve-hostname":    {defineServeHostname},
		"test-webserver":    {defineTestWebserver},
		"liveness":          {defineLiveness},
		"porter":            {definePorter},
		"pause":             {definePause},
		"entrypoint-tester": {defineEntrypointTester},
		"mounttest":         {defineMounttest},
		"logs-generator":    {defineLogsGenerator},
		"dns-suffix":        {defineDNSSuffix},
		"dns-server-list":   {defineDNSServerList},
		"etc-hosts":         {defineEtcHosts},
		"fake-gitserver":    {defineFakeGitserver},
		"guestbook":         {defineGuestbook}, // agnhost_guestbook.go
		// agnhost_webhook.go
		"webhook":                {defineWebhook},
		"crd-conversion-webhook": {defineConversionWebhook},
	}
}

// agnhostRun is one run of a subcommand: the process, the call it runs
// as, its argv and the channel through which a handler ends the process
// (netexec's /exit and /shutdown).
type agnhostRun struct {
	p       *process
	c       *call
	argv    []string
	execing bool
	exitC   chan int
	mu      sync.Mutex // serializes log lines
}

// logf logs a line as Go's standard logger does (stderr, date and time).
func (a *agnhostRun) logf(format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	line := fmt.Sprintf(format, args...)
	fmt.Fprintf(a.c.stderr, "%s %s\n", a.p.clock.Now().UTC().Format("2006/01/02 15:04:05"), strings.TrimSuffix(line, "\n"))
}

// exit asks the process to exit with code, once.
func (a *agnhostRun) exit(code int) {
	select {
	case a.exitC <- code:
	default:
	}
}

// runAgnhost runs argv, /agnhost SUBCOMMAND [flags]: the subcommand, or
// cobra's answers for none (the usage, exit 0) and an unknown one.
func (p *process) runAgnhost(c *call, argv []string, execing bool) (int, error) {
	if len(argv) < 2 || argv[1] == "help" || argv[1] == "--help" || argv[1] == "-h" {
		fmt.Fprintln(c.stdout, "agnhost is a test image for the Kubernetes e2e suite (simulated by minik).")
		fmt.Fprintln(c.stdout, "")
		fmt.Fprintln(c.stdout, "Usage:")
		fmt.Fprintln(c.stdout, "  agnhost [command]")
		fmt.Fprintln(c.stdout, "")
		fmt.Fprintln(c.stdout, "Available Commands:")
		for _, n := range agnhostNames() {
			fmt.Fprintf(c.stdout, "  %s\n", n)
		}
		return 0, nil
	}
	name := argv[1]
	cmd, ok := agnhostCommands[name]
	if !ok {
		fmt.Fprintf(c.stderr, "Error: unknown command %q for %q\nRun '%s --help' for usage.\n", name, "agnhost", "agnhost")
		return 1, nil
	}
	fl := agnhostFlags(name)
	run := cmd.define(fl)
	if err := fl.Parse(argv[2:]); err != nil {
		fmt.Fprintf(c.stderr, "Error: %v\n", err)
		return 1, nil
	}
	a := &agnhostRun{p: p, c: c, argv: argv, execing: execing, exitC: make(chan int, 1)}
	return run(a)
}

// agnhostFlags is the flag set of an agnhost command: as agnhost's root
// command adds klog's flags to every command (-v=4, --logtostderr, …),
// they are accepted everywhere.
// The flags are agnhost's own, unbound: parsing them must not change
// the logging of the process that simulates it.
func agnhostFlags(name string) *pflag.FlagSet {
	fl := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fl.SetOutput(io.Discard)
	klogFlagNames().VisitAll(func(f *flag.Flag) {
		shorthand := ""
		if len(f.Name) == 1 {
			shorthand = f.Name
		}
		fl.StringP(f.Name, shorthand, f.DefValue, f.Usage)
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			fl.Lookup(f.Name).NoOptDefVal = "true"
		}
	})
	return fl
}

// klogFlagNames are klog's flags, registered on a set that is never
// parsed, for their names, defaults and kinds.
var klogFlagNames = sync.OnceValue(func() *flag.FlagSet {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	return fs
})

func agnhostNames() []string {
	names := make([]string, 0, len(agnhostCommands))
	for n := range agnhostCommands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// wait blocks until the process ends: SIGKILL, an exit a handler asked
// for, or SIGTERM, which onTerm answers with the exit code (false: the
// signal is ignored). A subcommand run from a shell leaves SIGTERM to the
// shell's trap, as block does.
func (a *agnhostRun) wait(onTerm func() (int, bool, error)) (int, error) {
	p, c := a.p, a.c
	p.signalStarted()
	term := p.termFor(c)
	for {
		select {
		case <-c.ctx.Done():
			return 0, errKilled
		case code := <-a.exitC:
			return code, nil
		case <-term:
			term = nil
			if !p.takeTerm() {
				continue
			}
			if a.execing && c.pid1 {
				code, exit, err := onTerm()
				if err != nil || exit {
					return code, err
				}
				continue
			}
			if c.sh != nil {
				if err := c.sh.onTerm(c); err != nil {
					return 0, err
				}
			}
		}
	}
}

// sleep waits d of simulated time, or until the process is killed. It
// is a wait of the process (Start returns).
func (a *agnhostRun) sleep(d time.Duration) error {
	a.p.signalStarted()
	if d <= 0 {
		return nil
	}
	t := a.p.clock.NewTimer(a.p.scale(d))
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-a.c.ctx.Done():
		return errKilled
	}
}

// since is the simulated time elapsed since t.
func (a *agnhostRun) since(t time.Time) time.Duration {
	return time.Duration(float64(a.p.clock.Since(t)) * a.p.speed)
}

// listenHTTP serves h on the pod's IP and port (over TLS with cfg); the
// listener is closed by the function returned.
func (a *agnhostRun) listenHTTP(port int, cfg *tls.Config, h http.Handler) (func(), error) {
	ln, err := a.p.listenTCP(port)
	if err != nil {
		return nil, fmt.Errorf("listen tcp :%d: bind: %w", port, errors.Unwrap(errors.Unwrap(err)))
	}
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: discardLog}
	go func() { _ = hs.Serve(ln) }()
	return func() { _ = hs.Close() }, nil
}

// listenUDP answers each datagram on the pod's IP and port with what
// answer returns (nothing when it returns false).
func (a *agnhostRun) listenUDP(port int, answer func(msg string, from net.Addr) (string, bool)) (func(), error) {
	pc, err := net.ListenPacket("udp", net.JoinHostPort(a.p.spec.IP, strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("listen udp :%d: bind: %w", port, errors.Unwrap(errors.Unwrap(err)))
	}
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if out, ok := answer(string(buf[:n]), from); ok {
				_, _ = pc.WriteTo([]byte(out), from)
			}
		}
	}()
	return func() { _ = pc.Close() }, nil
}

// fatal ends the process as log.Fatal does: the message, exit 1.
func (a *agnhostRun) fatal(err error) (int, error) {
	a.logf("%v", err)
	return 1, nil
}

// closers closes what a subcommand listens on.
type closers []func()

func (cs closers) close() {
	for _, c := range cs {
		c()
	}
}

// ---- netexec

func defineNetexec(fl *pflag.FlagSet) func(a *agnhostRun) (int, error) {
	httpPort := fl.Int("http-port", 8080, "HTTP Listen Port")
	certFile := fl.String("tls-cert-file", "", "File containing an x509 certificate for HTTPS")
	keyFile := fl.String("tls-private-key-file", "", "File containing an x509 private key matching --tls-cert-file")
	udpPort := fl.Int("udp-port", 8081, "UDP Listen Port")
	sctpPort := fl.Int("sctp-port", -1, "SCTP Listen Port")
	override := fl.String("http-override", "", "Override the HTTP handler to always respond as if it were a GET with this path & params")
	udpAddrs := fl.String("udp-listen-addresses", "", "A comma separated list of ip addresses the udp servers listen from")
	delay := fl.Int("delay-shutdown", 0, "Number of seconds to delay shutdown when receiving SIGTERM.")
	return func(a *agnhostRun) (int, error) {
		n := &netexec{a: a, httpPort: *httpPort, udpPort: *udpPort, termC: make(chan struct{})}
		var cs closers
		defer func() { cs.close() }()
		if *sctpPort != -1 {
			return a.fatal(fmt.Errorf("Error occurred: failed to create listener for SCTP address :%d: SCTP is not simulated", *sctpPort))
		}
		if *udpPort != -1 {
			for _, addr := range strings.Split(*udpAddrs, ",") {
				if addr != "" && net.ParseIP(addr) == nil {
					return a.fatal(fmt.Errorf("parseAddress: invalid address %s", addr))
				}
			}
			closeUDP, err := a.listenUDP(*udpPort, n.udp)
			if err != nil {
				return a.fatal(fmt.Errorf("Error occurred: failed to create listener for UDP address :%d:%w", *udpPort, err))
			}
			cs = append(cs, closeUDP)
			a.logf("Started UDP server on port %s %d", "", *udpPort)
			n.ready = true
		}
		var cfg *tls.Config
		if *certFile != "" {
			var err error
			if cfg, err = a.p.loadCert(*certFile, *keyFile); err != nil {
				return a.fatal(err)
			}
		}
		var h http.Handler = n.mux()
		if *override != "" {
			mux := h
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				or, err := http.NewRequestWithContext(r.Context(), http.MethodGet, *override, nil)
				if err != nil {
					http.Error(w, fmt.Sprintf("override request failed: %v", err), http.StatusInternalServerError)
					return
				}
				or.RemoteAddr, or.Host, or.Header = r.RemoteAddr, r.Host, r.Header
				mux.ServeHTTP(w, or)
			})
		}
		a.logf("Started HTTP server on port %d", *httpPort)
		closeHTTP, err := a.listenHTTP(*httpPort, cfg, h)
		if err != nil {
			return a.fatal(err)
		}
		cs = append(cs, closeHTTP)
		return a.wait(func() (int, bool, error) {
			close(n.termC)
			if *delay > 0 {
				a.logf("Sleeping %d seconds before terminating...", *delay)
				if err := a.sleep(time.Duration(*delay) * time.Second); err != nil {
					return 0, true, err
				}
			}
			return 0, true, nil
		})
	}
}

// netexec is agnhost's netexec server.
type netexec struct {
	a                 *agnhostRun
	httpPort, udpPort int
	// ready is set once the UDP server listens (healthz and readyz).
	ready bool
	// termC is closed by SIGTERM (readyz answers 503).
	termC chan struct{}
}

func (n *netexec) mux() *http.ServeMux {
	a := n.a
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		a.logf("GET /")
		fmt.Fprintf(w, "NOW: %v", a.p.clock.Now())
	})
	mux.HandleFunc("/clientip", func(w http.ResponseWriter, r *http.Request) {
		a.logf("GET /clientip")
		fmt.Fprint(w, r.RemoteAddr)
	})
	mux.HandleFunc("/serverport", func(w http.ResponseWriter, r *http.Request) {
		a.logf("GET /serverport")
		fmt.Fprint(w, n.httpPort)
	})
	mux.HandleFunc("/header", func(w http.ResponseWriter, r *http.Request) {
		key := r.FormValue("key")
		if key != "" {
			a.logf("GET /header?key=%s", key)
			fmt.Fprint(w, r.Header.Get(key))
			return
		}
		a.logf("GET /header")
		data, _ := json.Marshal(r.Header)
		fmt.Fprint(w, string(data))
	})
	mux.HandleFunc("/dial", n.dial)
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		msg, codeString := r.FormValue("msg"), r.FormValue("code")
		a.logf("GET /echo?msg=%s&code=%s", msg, codeString)
		if codeString != "" {
			code, err := strconv.Atoi(codeString)
			if err != nil {
				fmt.Fprintf(w, "argument 'code' must be an integer or empty, got %q\n", codeString)
				return
			}
			w.WriteHeader(code)
		}
		fmt.Fprint(w, msg)
	})
	mux.HandleFunc("/exit", n.exitHandler)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		a.logf("GET /healthz")
		if !n.ready {
			w.WriteHeader(http.StatusPreconditionFailed)
		}
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		a.logf("GET /readyz")
		select {
		case <-n.termC:
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("shutting down"))
			return
		default:
		}
		if !n.ready {
			w.WriteHeader(http.StatusPreconditionFailed)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	hostname := func(path string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			a.logf("GET %s", path)
			fmt.Fprint(w, a.p.spec.Hostname)
		}
	}
	mux.HandleFunc("/hostname", hostname("/hostname"))
	mux.HandleFunc("/hostName", hostname("/hostName"))
	mux.HandleFunc("/envvar", func(w http.ResponseWriter, r *http.Request) {
		name := r.FormValue("var")
		if name == "" {
			http.Error(w, "'var' query parameter is required", http.StatusBadRequest)
			return
		}
		a.logf("GET /envvar?var=%s", name)
		v := a.c.env.Get(name)
		if !v.IsSet() {
			http.Error(w, fmt.Sprintf("env var %q is not set", name), http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, v.String())
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		location, codeString := r.FormValue("location"), r.FormValue("code")
		a.logf("%s /redirect?msg=%s&code=%s", r.Method, location, codeString)
		code := http.StatusFound
		if codeString != "" {
			var err error
			if code, err = strconv.Atoi(codeString); err != nil {
				fmt.Fprintf(w, "argument 'code' must be an integer or empty, got %q\n", codeString)
				return
			}
		}
		http.Redirect(w, r, location, code)
	})
	mux.HandleFunc("/shell", n.shell)
	mux.HandleFunc("/upload", n.upload)
	mux.HandleFunc("/shutdown", func(w http.ResponseWriter, r *http.Request) {
		a.logf("GET /shutdown")
		a.exit(0)
	})
	return mux
}

func (n *netexec) exitHandler(w http.ResponseWriter, r *http.Request) {
	a := n.a
	waitString, timeoutString, codeString := r.FormValue("wait"), r.FormValue("timeout"), r.FormValue("code")
	a.logf("GET /exit?code=%s&timeout=%s&wait=%s", codeString, timeoutString, waitString)
	timeout, err := time.ParseDuration(timeoutString)
	if err != nil && timeoutString != "" {
		fmt.Fprintf(w, "argument 'timeout' must be a valid golang duration or empty, got %q\n", timeoutString)
		return
	}
	wait, err := time.ParseDuration(waitString)
	if err != nil && waitString != "" {
		fmt.Fprintf(w, "argument 'wait' must be a valid golang duration or empty, got %q\n", waitString)
		return
	}
	code, err := strconv.Atoi(codeString)
	if err != nil && codeString != "" {
		fmt.Fprintf(w, "argument 'code' must be an integer [0-127] or empty, got %q\n", codeString)
		return
	}
	a.logf("Will begin shutdown in %s, allowing %s for connections to close, then will exit with %d", wait, timeout, code)
	if err := a.sleep(wait); err != nil {
		return
	}
	// The process exits: with a timeout, once this request is answered
	// (a graceful shutdown), without one at once, the request unanswered.
	if timeout == 0 {
		a.exit(code)
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
			}
		}
		return
	}
	defer a.exit(code)
}

func (n *netexec) dial(w http.ResponseWriter, r *http.Request) {
	a := n.a
	q := r.URL.Query()
	host, port, request, protocol, tryParam := q.Get("host"), q.Get("port"), q.Get("request"), q.Get("protocol"), q.Get("tries")
	a.logf("GET /dial?host=%s&protocol=%s&port=%s&request=%s&tries=%s", host, protocol, port, request, tryParam)
	tries := 1
	var err error
	if tryParam != "" {
		tries, err = strconv.Atoi(tryParam)
	}
	if err != nil {
		http.Error(w, fmt.Sprintf("tries parameter is invalid. %v", err), http.StatusBadRequest)
		return
	}
	if request == "" {
		http.Error(w, fmt.Sprintf("request parameter not specified. %v", err), http.StatusBadRequest)
		return
	}
	hostPort := net.JoinHostPort(host, port)
	var dialer func(ctx context.Context, request, addr string) (string, error)
	switch strings.ToLower(protocol) {
	case "", "http":
		dialer = n.dialHTTP
		_, err = net.ResolveTCPAddr("tcp", hostPort)
	case "udp":
		dialer = n.dialUDP
		_, err = net.ResolveUDPAddr("udp", hostPort)
	case "sctp":
		http.Error(w, "host and/or port param are invalid. SCTP is not simulated", http.StatusBadRequest)
		return
	default:
		http.Error(w, fmt.Sprintf("unsupported protocol. %s", protocol), http.StatusBadRequest)
		return
	}
	if err != nil {
		http.Error(w, fmt.Sprintf("host and/or port param are invalid. %v", err), http.StatusBadRequest)
		return
	}
	errs, responses := []string{}, []string{}
	var response string
	for i := 0; i < tries; i++ {
		response, err = dialer(r.Context(), request, hostPort)
		if err != nil {
			errs = append(errs, err.Error())
		} else {
			responses = append(responses, response)
		}
	}
	out := map[string][]string{}
	if response != "" {
		out["responses"] = responses
	}
	if len(errs) > 0 {
		out["errors"] = errs
	}
	data, _ := json.Marshal(out)
	fmt.Fprint(w, string(data))
}

// dialTimeout bounds one try of /dial, as netexec's client does.
const dialTimeout = 5 * time.Second

func (n *netexec) dialHTTP(ctx context.Context, request, addr string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/%s", addr, request), nil)
	if err != nil {
		return "", err
	}
	resp, err := n.a.p.httpClient().Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxInput))
	if err != nil {
		return "", err
	}
	return string(body), nil
}

func (n *netexec) dialUDP(ctx context.Context, request, addr string) (string, error) {
	conn, err := n.a.p.dialContext(ctx, "udp", addr)
	if err != nil {
		return "", fmt.Errorf("udp dial failed. err:%v", err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(request)); err != nil {
		return "", fmt.Errorf("udp connection write failed. err:%v", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(dialTimeout))
	buf := make([]byte, 2048)
	count, err := conn.Read(buf)
	if err != nil || count == 0 {
		return "", fmt.Errorf("reading from udp connection failed. err:'%v'", err)
	}
	return string(buf[:count]), nil
}

// shell runs a command with the image's /bin/sh, as netexec does.
func (n *netexec) shell(w http.ResponseWriter, r *http.Request) {
	a := n.a
	cmd := r.FormValue("shellCommand")
	if cmd == "" {
		cmd = r.FormValue("cmd")
	}
	a.logf("GET /shell?cmd=%s", cmd)
	out, code, err := a.command(r.Context(), []string{"/bin/sh", "-c", cmd})
	output := map[string]string{}
	if len(out) > 0 {
		output["output"] = string(out)
	}
	switch {
	case err != nil:
		output["error"] = err.Error()
	case code != 0:
		output["error"] = fmt.Sprintf("exit status %d", code)
	}
	a.logf("Output: %s", fmt.Sprint(output))
	data, _ := json.Marshal(output)
	fmt.Fprint(w, string(data))
}

// command runs argv in the container, as a child of the process, and
// returns its combined output and exit code.
func (a *agnhostRun) command(ctx context.Context, argv []string) ([]byte, int, error) {
	var out bytes.Buffer
	w := &syncWriter{w: &out}
	p := a.p
	child := &process{
		rules: p.rules, image: p.image, spec: p.spec, fs: p.fs, clock: p.clock, speed: p.speed,
		dnsPort: p.dnsPort, network: p.network, cmdline: p.cmdline, procs: p.procs, forks: p.forks,
		stdout: w, stderr: w, termC: make(chan struct{}), killC: make(chan struct{}), started: make(chan struct{}),
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-a.c.ctx.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	cl := &call{ctx: ctx, p: child, stdout: w, stderr: w, env: a.c.env, dir: "/"}
	code, err := child.dispatch(cl, argv, false)
	return w.bytes(), code, err
}

// upload writes a posted file under /uploads, as netexec does.
func (n *netexec) upload(w http.ResponseWriter, r *http.Request) {
	a := n.a
	a.logf("GET /upload")
	result := map[string]string{}
	reply := func(status int) {
		data, _ := json.Marshal(result)
		if status != 0 {
			w.WriteHeader(status)
		}
		fmt.Fprint(w, string(data))
	}
	file, _, err := r.FormFile("file")
	if err != nil {
		result["error"] = "Unable to upload file."
		a.logf("Unable to upload file: %s", err)
		reply(0)
		return
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, maxInput))
	name := fmt.Sprintf("/uploads/upload%d", rand.Uint32())
	if err == nil {
		err = a.p.fs.write(name, data, false)
	}
	if err != nil {
		result["error"] = "Unable to write file."
		a.logf("Unable to write file: %s", err)
		reply(0)
		return
	}
	a.logf("Wrote upload to %s", name)
	result["output"] = name
	reply(http.StatusCreated)
}

// udp answers netexec's UDP commands.
func (n *netexec) udp(raw string, from net.Addr) (string, bool) {
	a := n.a
	rawText := strings.TrimSpace(raw)
	text := strings.ToLower(rawText)
	switch {
	case text == "hostname":
		a.logf("Sending udp hostName response")
		return a.p.spec.Hostname, true
	case strings.HasPrefix(text, "envvar "):
		name := strings.TrimSpace(strings.SplitN(rawText, " ", 2)[1])
		a.logf("Sending UDP envvar response for %s", name)
		return a.c.env.Get(name).String(), true
	case strings.HasPrefix(text, "echo "):
		msg := strings.SplitN(text, " ", 2)[1]
		a.logf("Echoing %v to UDP client %s", msg, from)
		return msg, true
	case text == "clientip":
		a.logf("Sending clientip back to UDP client %s", from)
		return from.String(), true
	case text == "serverport":
		a.logf("Sending server port to UDP client %d", n.udpPort)
		return strconv.Itoa(n.udpPort), true
	case text != "":
		a.logf("Unknown UDP command received from %s: %v", from, text)
	}
	return "", false
}

// ---- serve-hostname

func defineServeHostname(fl *pflag.FlagSet) func(a *agnhostRun) (int, error) {
	doTCP := fl.Bool("tcp", false, "Serve raw over TCP.")
	doUDP := fl.Bool("udp", false, "Serve raw over UDP.")
	doHTTP := fl.Bool("http", true, "Serve HTTP.")
	doClose := fl.Bool("close", false, "Close connection per each HTTP request.")
	port := fl.Int("port", 9376, "Port number.")
	return func(a *agnhostRun) (int, error) {
		if *doHTTP && (*doTCP || *doUDP) {
			return a.fatal(errors.New("Can't server TCP/UDP mode and HTTP mode at the same time"))
		}
		hostname := a.p.spec.Hostname
		var cs closers
		defer func() { cs.close() }()
		if *doTCP {
			ln, err := a.p.listenTCP(*port)
			if err != nil {
				return a.fatal(fmt.Errorf("Error from net.Listen(): %w", err))
			}
			cs = append(cs, func() { _ = ln.Close() })
			go func() {
				for {
					conn, err := ln.Accept()
					if err != nil {
						return
					}
					a.logf("TCP request from %s", conn.RemoteAddr())
					_, _ = conn.Write([]byte(hostname))
					_ = conn.Close()
				}
			}()
		}
		if *doUDP {
			closeUDP, err := a.listenUDP(*port, func(_ string, from net.Addr) (string, bool) {
				a.logf("UDP request from %s", from)
				return hostname, true
			})
			if err != nil {
				return a.fatal(fmt.Errorf("Error from ListenUDP(): %w", err))
			}
			cs = append(cs, closeUDP)
		}
		if *doHTTP {
			closeHTTP, err := a.listenHTTP(*port, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				a.logf("HTTP request from %s", r.RemoteAddr)
				if *doClose {
					w.Header().Add("Connection", "close")
				}
				fmt.Fprint(w, hostname)
			}))
			if err != nil {
				return a.fatal(err)
			}
			cs = append(cs, closeHTTP)
		}
		a.logf("Serving on port %d.", *port)
		return a.wait(func() (int, bool, error) {
			a.logf("Shutting down after receiving signal: terminated.")
			a.logf("Awaiting pod deletion.")
			if err := a.sleep(60 * time.Second); err != nil {
				return 0, true, err
			}
			return 0, true, nil
		})
	}
}

// ---- test-webserver

func defineTestWebserver(fl *pflag.FlagSet) func(a *agnhostRun) (int, error) {
	port := fl.Int("port", 80, "Port number.")
	return func(a *agnhostRun) (int, error) {
		closeHTTP, err := a.listenHTTP(*port, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("Cache-Control", "private")
			h.Set("Access-Control-Allow-Origin", "*")
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "DNT,X-Mx-ReqToken,Keep-Alive,User-Agent,X-Requested-With,Cache-Control,Content-Type")
			a.serveFile(w, r)
		}))
		if err != nil {
			return a.fatal(err)
		}
		defer closeHTTP()
		return a.wait(func() (int, bool, error) { return 0, false, nil })
	}
}

// serveFile serves a file of the container's file system, as Go's
// http.FileServer rooted at / does: the file, a directory's listing, or
// "404 page not found".
func (a *agnhostRun) serveFile(w http.ResponseWriter, r *http.Request) {
	name := path.Clean("/" + r.URL.Path)
	fi, err := a.p.fs.statInfo(name)
	if err != nil {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	if fi.IsDir() {
		names, _ := a.p.fs.list(name)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintln(w, "<!doctype html>\n<meta name=\"viewport\" content=\"width=device-width\">\n<pre>")
		for _, n := range names {
			if n == dirMarker {
				continue
			}
			u := url.URL{Path: n}
			fmt.Fprintf(w, "<a href=\"%s\">%s</a>\n", u.String(), n)
		}
		fmt.Fprintln(w, "</pre>")
		return
	}
	data, err := a.p.fs.read(name)
	if err != nil {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
}

// ---- liveness

func defineLiveness(*pflag.FlagSet) func(a *agnhostRun) (int, error) {
	return func(a *agnhostRun) (int, error) {
		started := a.p.clock.Now()
		mux := http.NewServeMux()
		mux.HandleFunc("/started", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(a.since(started).String()))
		})
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
			d := a.since(started)
			if d.Seconds() > 10 {
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprintf(w, "error: %v", d.Seconds())
				return
			}
			_, _ = w.Write([]byte("ok"))
		})
		mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
			loc, err := url.QueryUnescape(r.URL.Query().Get("loc"))
			if err != nil {
				http.Error(w, fmt.Sprintf("invalid redirect: %q", r.URL.Query().Get("loc")), http.StatusBadRequest)
				return
			}
			http.Redirect(w, r, loc, http.StatusFound)
		})
		closeHTTP, err := a.listenHTTP(8080, nil, mux)
		if err != nil {
			return a.fatal(err)
		}
		defer closeHTTP()
		return a.wait(func() (int, bool, error) { return 0, false, nil })
	}
}

// ---- porter

func definePorter(fl *pflag.FlagSet) func(a *agnhostRun) (int, error) {
	jsonResponse := fl.Bool("json-response", false, "Responds to requests with a json response that includes the default value with the http.Request Method")
	return func(a *agnhostRun) (int, error) {
		var cs closers
		defer func() { cs.close() }()
		handler := func(value string) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body := value
				if *jsonResponse {
					j, _ := json.Marshal(struct{ Method, Body string }{r.Method, value})
					w.Header().Set("Content-Type", "application/json")
					body = string(j)
				}
				fmt.Fprint(w, body)
			})
		}
		for _, kv := range a.c.environ() {
			key, value, _ := strings.Cut(kv, "=")
			var (
				closeFn func()
				err     error
			)
			switch {
			case strings.HasPrefix(key, "SERVE_PORT_"), strings.HasPrefix(key, "SERVE_TCP_PORT_"):
				port, _ := strconv.Atoi(key[strings.LastIndex(key, "_")+1:])
				closeFn, err = a.listenHTTP(port, nil, handler(value))
			case strings.HasPrefix(key, "SERVE_TLS_PORT_"):
				port, _ := strconv.Atoi(strings.TrimPrefix(key, "SERVE_TLS_PORT_"))
				// The image's localhost.crt and .key, or the files of
				// CERT_FILE and KEY_FILE.
				cert, key := a.c.getenv("CERT_FILE"), a.c.getenv("KEY_FILE")
				if cert == "" {
					cert = "localhost.crt"
				}
				if key == "" {
					key = "localhost.key"
				}
				var cfg *tls.Config
				cfg, err = a.p.loadCert(a.c.abs(cert), a.c.abs(key))
				if err == nil {
					closeFn, err = a.listenHTTP(port, cfg, handler(value))
				}
			case strings.HasPrefix(key, "SERVE_UDP_PORT_"):
				port, _ := strconv.Atoi(strings.TrimPrefix(key, "SERVE_UDP_PORT_"))
				closeFn, err = a.listenUDP(port, func(string, net.Addr) (string, bool) { return value, true })
				if err == nil {
					a.logf("Started UDP server on port %d", port)
				}
			default:
				continue
			}
			if err != nil {
				a.logf("server on port %q failed: %v", key, err)
				continue
			}
			cs = append(cs, closeFn)
		}
		return a.wait(func() (int, bool, error) { return 0, false, nil })
	}
}

// ---- pause

func definePause(*pflag.FlagSet) func(a *agnhostRun) (int, error) {
	return func(a *agnhostRun) (int, error) {
		fmt.Fprintln(a.c.stdout, "Paused")
		fmt.Fprintln(a.c.stdout, "Signals registered")
		return a.wait(func() (int, bool, error) {
			msg := fmt.Sprintf("exiting because of signal %q\n", "terminated")
			where := a.c.getenv("TERMINATION_MESSAGE_PATH")
			if where == "" {
				where = "/dev/termination-log"
			}
			_ = a.p.fs.write(where, []byte(msg), false)
			fmt.Fprint(a.c.stdout, msg)
			return 2, true, nil
		})
	}
}

// ---- entrypoint-tester

func defineEntrypointTester(fl *pflag.FlagSet) func(a *agnhostRun) (int, error) {
	fl.ParseErrorsAllowlist.UnknownFlags = true
	return func(a *agnhostRun) (int, error) {
		fmt.Fprintf(a.c.stdout, "%v\n", a.argv)
		return 0, nil
	}
}

// ---- mounttest

// mounttestContent is what mounttest writes in the files it creates.
const mounttestContent = "mount-tester new file\n"

func defineMounttest(fl *pflag.FlagSet) func(a *agnhostRun) (int, error) {
	fsType := fl.String("fs_type", "", "Path to print the fs type for")
	fileMode := fl.String("file_mode", "", "Path to print the mode bits of")
	filePerm := fl.String("file_perm", "", "Path to print the perms of")
	fileOwner := fl.String("file_owner", "", "Path to print the owning UID and GID of")
	newFiles := []struct {
		path *string
		perm iofs.FileMode
	}{
		{fl.String("new_file_0644", "", "Path to write to and read from with perm 0644"), 0o644},
		{fl.String("new_file_0666", "", "Path to write to and read from with perm 0666"), 0o666},
		{fl.String("new_file_0660", "", "Path to write to and read from with perm 0660"), 0o660},
		{fl.String("new_file_0777", "", "Path to write to and read from with perm 0777"), 0o777},
	}
	content := fl.String("file_content", "", "Path to read the file content from")
	contentInLoop := fl.String("file_content_in_loop", "", "Path to read the file content in loop from")
	retry := fl.Int("retry_time", 180, "Retry time during the loop")
	breakOnExpected := fl.Bool("break_on_expected_content", true, "Break out of loop on expected content")
	return func(a *agnhostRun) (int, error) {
		out := a.c.stdout
		failed := false
		readContent := func(p string) bool {
			data, err := a.p.fs.read(p)
			if err != nil {
				fmt.Fprintf(out, "error reading file content for %q: open %s: %v\n", p, p, strings.ToLower(err.Error()[:1])+err.Error()[1:])
				return false
			}
			fmt.Fprintf(out, "content of file %q: %v\n", p, string(data))
			return true
		}
		stat := func(what, p string, show func(fi iofs.FileInfo)) {
			if p == "" {
				return
			}
			fi, err := a.p.fs.statInfo(p)
			if err != nil {
				// statfs and stat fail with the bare errno, Stat with the path.
				msg := lowerFirst(err.Error())
				if what == "Stat" {
					msg = "stat " + p + ": " + msg
				}
				fmt.Fprintf(out, "error from %s(%q): %s\n", what, p, msg)
				failed = true
				return
			}
			show(fi)
		}
		if *fsType != "" {
			stat("statfs", *fsType, func(iofs.FileInfo) { fmt.Fprintf(out, "mount type of %q: %s\n", *fsType, a.p.fs.fsType(*fsType)) })
		}
		for _, nf := range newFiles {
			if *nf.path == "" {
				continue
			}
			if err := a.p.fs.write(*nf.path, []byte(mounttestContent), false); err != nil {
				fmt.Fprintf(out, "error writing new file %q: open %s: %s\n", *nf.path, *nf.path, lowerFirst(err.Error()))
				failed = true
				continue
			}
			a.p.fs.chmod(*nf.path, nf.perm)
			if !readContent(*nf.path) {
				failed = true
			}
		}
		stat("Stat", *fileMode, func(fi iofs.FileInfo) { fmt.Fprintf(out, "mode of file %q: %v\n", *fileMode, fi.Mode()) })
		stat("Stat", *filePerm, func(fi iofs.FileInfo) { fmt.Fprintf(out, "perms of file %q: %v\n", *filePerm, fi.Mode().Perm()) })
		stat("stat", *fileOwner, func(iofs.FileInfo) {
			uid, gid := a.p.owner(*fileOwner)
			fmt.Fprintf(out, "owner UID of %q: %v\n", *fileOwner, uid)
			fmt.Fprintf(out, "owner GID of %q: %v\n", *fileOwner, gid)
		})
		if *content != "" && !readContent(*content) {
			failed = true
		}
		if p := *contentInLoop; p != "" {
			start := a.p.clock.Now()
			ok := false
			for a.since(start) < time.Duration(*retry)*time.Second {
				data, err := a.p.fs.read(p)
				if err != nil {
					fmt.Fprintf(out, "Error reading file %s: open %s: %s, retrying\n", p, p, lowerFirst(err.Error()))
				} else {
					fmt.Fprintf(out, "content of file %q: %v\n", p, string(data))
					ok = true
					if !*breakOnExpected || string(data) == mounttestContent {
						if *breakOnExpected {
							break
						}
					} else {
						fmt.Fprintf(out, "Unexpected content. Expected: %s. Retrying\n", mounttestContent)
					}
				}
				if err := a.sleep(2 * time.Second); err != nil {
					return 0, err
				}
			}
			if !ok {
				failed = true
			}
		}
		if failed {
			return 1, nil
		}
		return 0, nil
	}
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// ---- logs-generator

func defineLogsGenerator(fl *pflag.FlagSet) func(a *agnhostRun) (int, error) {
	total := fl.IntP("log-lines-total", "t", 0, "Total lines that should be generated by the end of the run")
	duration := fl.DurationP("run-duration", "d", 0, "Total duration of the run")
	return func(a *agnhostRun) (int, error) {
		klogf := func(sev byte, format string, args ...any) {
			fmt.Fprintf(a.c.stderr, "%c%s       1 logs_generator.go:67] %s\n", sev, a.p.clock.Now().UTC().Format("0102 15:04:05.000000"), fmt.Sprintf(format, args...))
		}
		if *total <= 0 {
			klogf('F', "Invalid total number of lines: %d", *total)
			return 255, nil
		}
		if *duration <= 0 {
			klogf('F', "Invalid duration: %v", *duration)
			return 255, nil
		}
		a.p.signalStarted()
		delay := *duration / time.Duration(*total)
		methods, namespaces := []string{"GET", "POST", "PUT"}, []string{"kube-system", "default", "ns"}
		const letters = "bcdfghjklmnpqrstvwxz2456789"
		for id := 0; id < *total; id++ {
			name := make([]byte, 3+rand.IntN(2))
			for i := range name {
				name[i] = letters[rand.IntN(len(letters))]
			}
			klogf('I', "%d %s /api/v1/namespaces/%s/pods/%s %d", id, methods[rand.IntN(3)], namespaces[rand.IntN(3)], name, 200+rand.IntN(400))
			if err := a.sleep(delay); err != nil {
				return 0, err
			}
		}
		return 0, nil
	}
}

// ---- dns-suffix, dns-server-list, etc-hosts

func defineDNSSuffix(*pflag.FlagSet) func(a *agnhostRun) (int, error) {
	return func(a *agnhostRun) (int, error) {
		var search []string
		if cc := a.p.resolvConf(); cc != nil {
			search = cc.Search
		}
		fmt.Fprintln(a.c.stdout, strings.Join(search, ","))
		return 0, nil
	}
}

func defineDNSServerList(*pflag.FlagSet) func(a *agnhostRun) (int, error) {
	return func(a *agnhostRun) (int, error) {
		var servers []string
		if cc := a.p.resolvConf(); cc != nil {
			servers = cc.Servers
		}
		fmt.Fprintln(a.c.stdout, strings.Join(servers, ","))
		return 0, nil
	}
}

func defineEtcHosts(*pflag.FlagSet) func(a *agnhostRun) (int, error) {
	return func(a *agnhostRun) (int, error) {
		data, _ := a.p.fs.read("/etc/hosts")
		fmt.Fprintln(a.c.stdout, string(data))
		return 0, nil
	}
}

// ---- fake-gitserver

func defineFakeGitserver(*pflag.FlagSet) func(a *agnhostRun) (int, error) {
	return func(a *agnhostRun) (int, error) {
		closeHTTP, err := a.listenHTTP(8000, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "I am a fake git server")
		}))
		if err != nil {
			return a.fatal(err)
		}
		defer closeHTTP()
		return a.wait(func() (int, bool, error) { return 0, false, nil })
	}
}

// agnhostSummaries say what each subcommand does, for Describe; {flag}
// is the flag's value.
var agnhostSummaries = map[string]string{
	"netexec":                "serves netexec's HTTP API on :{http-port} and its UDP commands on :{udp-port}",
	"serve-hostname":         "serves its host name on :{port}",
	"test-webserver":         "serves the container's files over HTTP on :{port}",
	"liveness":               "serves /healthz on :8080, failing after 10s",
	"porter":                 "serves the values of its SERVE_*_PORT_* variables",
	"pause":                  "runs until stopped (exit 2 on SIGTERM)",
	"entrypoint-tester":      "prints its argv and exits",
	"mounttest":              "prints what its flags ask about files and exits",
	"logs-generator":         "logs {log-lines-total} lines over {run-duration} and exits",
	"dns-suffix":             "prints its DNS search list and exits",
	"dns-server-list":        "prints its nameservers and exits",
	"etc-hosts":              "prints /etc/hosts and exits",
	"fake-gitserver":         "serves a fake git server on :8000",
	"guestbook":              "serves the guestbook app on :{http-port} (backends on :{backend-port})",
	"webhook":                "serves admission reviews over HTTPS on :{port}",
	"crd-conversion-webhook": "serves conversion reviews over HTTPS on :{port}",
}

// describeAgnhost says what an agnhost command line does.
func describeAgnhost(argv []string) string {
	if len(argv) < 2 {
		return "agnhost: prints its usage and exits"
	}
	cmd, ok := agnhostCommands[argv[1]]
	if !ok {
		return fmt.Sprintf("agnhost: unknown command %q (exit 1)", argv[1])
	}
	fl := agnhostFlags(argv[1])
	cmd.define(fl)
	if err := fl.Parse(argv[2:]); err != nil {
		return fmt.Sprintf("agnhost %s: %v (exit 1)", argv[1], err)
	}
	s := agnhostSummaries[argv[1]]
	fl.VisitAll(func(f *pflag.Flag) {
		s = strings.ReplaceAll(s, "{"+f.Name+"}", f.Value.String())
	})
	return "agnhost " + argv[1] + ": " + s
}
