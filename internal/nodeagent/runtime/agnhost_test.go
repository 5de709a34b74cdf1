package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	iofs "io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"k8s.io/klog/v2"
)

const agnhostImage = "registry.k8s.io/e2e-test-images/agnhost:2.66.1"

// get fetches a URL and returns its status and body.
func get(t *testing.T, rawURL string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", rawURL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// udpAsk sends one datagram and returns the answer.
func udpAsk(t *testing.T, addr, msg string) string {
	t.Helper()
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2048)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("udp %q to %s: %v", msg, addr, err)
	}
	return string(buf[:n])
}

// hasLine tells whether some log line contains s.
func hasLine(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

func TestAgnhostNetexec(t *testing.T) {
	rt := New(Config{Speed: 1000})
	httpPort, udpPort := freePort(t), freePort(t)
	c, logs := startOn(t, rt, ContainerSpec{Image: agnhostImage, Args: []string{"netexec", "--http-port=" + httpPort, "--udp-port=" + udpPort},
		Env: []EnvVar{{Name: "POD_FLAVOUR", Value: "vanilla"}}})
	base := "http://127.0.0.1:" + httpPort
	cases := []struct {
		path       string
		wantStatus int
		wantBody   string
	}{
		{"/hostname", 200, "web-1"},
		{"/hostName", 200, "web-1"},
		{"/echo?msg=poststart", 200, "poststart"},
		{"/echo?msg=teapot&code=418", 418, "teapot"},
		{"/serverport", 200, httpPort},
		{"/header?key=X-Missing", 200, ""},
		{"/envvar?var=POD_FLAVOUR", 200, "vanilla"},
		{"/envvar?var=NOPE", 500, "env var \"NOPE\" is not set\n"},
		{"/healthz", 200, ""},
		{"/readyz", 200, "ok"},
		{"/shell?cmd=" + url.QueryEscape("echo hi; hostname"), 200, `{"output":"hi\nweb-1\n"}`},
		{"/shell?cmd=" + url.QueryEscape("exit 3"), 200, `{"error":"exit status 3"}`},
		{"/shell?cmd=" + url.QueryEscape("hostname -i"), 200, `{"output":"127.0.0.1\n"}`},
		{"/dial?request=hostname&host=127.0.0.1&port=" + httpPort + "&protocol=http&tries=2", 200, `{"responses":["web-1","web-1"]}`},
		{"/dial?request=hostname&host=127.0.0.1&port=" + udpPort + "&protocol=udp", 200, `{"responses":["web-1"]}`},
		{"/dial?request=echo%20hello&host=127.0.0.1&port=" + udpPort + "&protocol=udp", 200, `{"responses":["hello"]}`},
		{"/dial?host=127.0.0.1&port=1", 400, "request parameter not specified. <nil>\n"},
		{"/dial?request=x&host=127.0.0.1&port=1&protocol=ftp", 400, "unsupported protocol. ftp\n"},
	}
	for _, tc := range cases {
		t.Run("GET "+tc.path+" answers as netexec does", func(t *testing.T) {
			status, body := get(t, base+tc.path)
			if status != tc.wantStatus || body != tc.wantBody {
				t.Fatalf("got %d %q, want %d %q", status, body, tc.wantStatus, tc.wantBody)
			}
		})
	}
	t.Run("/clientip is the caller's address", func(t *testing.T) {
		_, body := get(t, base+"/clientip")
		if host, _, err := net.SplitHostPort(body); err != nil || host != "127.0.0.1" {
			t.Fatalf("clientip %q", body)
		}
	})
	t.Run("/dial to a port nobody serves reports the error", func(t *testing.T) {
		_, body := get(t, base+"/dial?request=hostname&host=127.0.0.1&protocol=http&port="+freePort(t))
		var out map[string][]string
		if err := json.Unmarshal([]byte(body), &out); err != nil || len(out["errors"]) != 1 || !strings.Contains(out["errors"][0], "connection refused") {
			t.Fatalf("body %q", body)
		}
	})
	t.Run("the UDP server answers its commands", func(t *testing.T) {
		addr := "127.0.0.1:" + udpPort
		if got := udpAsk(t, addr, "hostname"); got != "web-1" {
			t.Fatalf("hostname: %q", got)
		}
		if got := udpAsk(t, addr, "echo Hello"); got != "hello" {
			t.Fatalf("echo: %q", got) // netexec lower-cases what it echoes
		}
		if got := udpAsk(t, addr, "envvar POD_FLAVOUR"); got != "vanilla" {
			t.Fatalf("envvar: %q", got)
		}
		if got := udpAsk(t, addr, "serverport"); got != udpPort {
			t.Fatalf("serverport: %q", got)
		}
	})
	t.Run("requests are logged as netexec logs them", func(t *testing.T) {
		lines := logs.get()
		for _, want := range []string{"Started HTTP server on port " + httpPort, "Started UDP server on port  " + udpPort, "GET /echo?msg=poststart&code="} {
			if !hasLine(lines, want) {
				t.Fatalf("no log line with %q in %q", want, lines)
			}
		}
	})
	t.Run("/exit ends the process with its code", func(t *testing.T) {
		status, _ := get(t, base+"/exit?code=3&timeout=1s")
		if status != 200 {
			t.Fatalf("status %d", status)
		}
		if e := waitDone(t, c); e.Code != 3 || e.Reason != "Error" {
			t.Fatalf("exit %+v", e)
		}
	})
}

func TestAgnhostNetexecStopsOnSIGTERM(t *testing.T) {
	rt := New(Config{Speed: 1000})
	c, _ := startOn(t, rt, ContainerSpec{Image: agnhostImage, Args: []string{"netexec", "--http-port=" + freePort(t), "--udp-port=-1"}})
	c.Stop(t.Context(), 30*time.Second)
	if e := c.Exit(); e == nil || e.Code != 0 || e.Reason != "Completed" {
		t.Fatalf("exit %+v", e)
	}
}

func TestAgnhostServers(t *testing.T) {
	rt := New(Config{Speed: 1000})
	t.Run("serve-hostname answers its host name", func(t *testing.T) {
		port := freePort(t)
		startOn(t, rt, ContainerSpec{Image: agnhostImage, Args: []string{"serve-hostname", "--port=" + port}})
		if status, body := get(t, "http://127.0.0.1:"+port+"/"); status != 200 || body != "web-1" {
			t.Fatalf("got %d %q", status, body)
		}
	})
	t.Run("serve-hostname over UDP", func(t *testing.T) {
		port := freePort(t)
		startOn(t, rt, ContainerSpec{Image: agnhostImage, Args: []string{"serve-hostname", "--udp", "--http=false", "--port=" + port}})
		if got := udpAsk(t, "127.0.0.1:"+port, "x"); got != "web-1" {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("test-webserver serves the container's files", func(t *testing.T) {
		port := freePort(t)
		startOn(t, rt, ContainerSpec{Image: agnhostImage, Args: []string{"test-webserver", "--port=" + port}})
		if status, body := get(t, "http://127.0.0.1:"+port+"/etc/hostname"); status != 200 || body != "web-1\n" {
			t.Fatalf("got %d %q", status, body)
		}
		if status, body := get(t, "http://127.0.0.1:"+port+"/nope"); status != 404 || body != "404 page not found\n" {
			t.Fatalf("got %d %q", status, body)
		}
	})
	t.Run("porter serves TLS with the image's localhost certificate", func(t *testing.T) {
		port := freePort(t)
		startOn(t, rt, ContainerSpec{Image: agnhostImage, Args: []string{"porter"}, Env: []EnvVar{{Name: "SERVE_TLS_PORT_" + port, Value: "tls foo"}}})
		status, body, _ := getTLS(t, "https://127.0.0.1:"+port+"/")
		if status != 200 || body != "tls foo" {
			t.Fatalf("got %d %q", status, body)
		}
	})
	t.Run("porter serves its variables' values", func(t *testing.T) {
		port := freePort(t)
		startOn(t, rt, ContainerSpec{Image: agnhostImage, Args: []string{"porter"}, Env: []EnvVar{{Name: "SERVE_PORT_" + port, Value: "foo"}}})
		if status, body := get(t, "http://127.0.0.1:"+port+"/"); status != 200 || body != "foo" {
			t.Fatalf("got %d %q", status, body)
		}
	})
}

func TestAgnhostPauseExitsTwoOnSIGTERM(t *testing.T) {
	rt := New(Config{Speed: 1000})
	c, logs := startOn(t, rt, ContainerSpec{Image: agnhostImage, Args: []string{"pause"}})
	c.Stop(t.Context(), 30*time.Second)
	e := c.Exit()
	if e == nil || e.Code != 2 {
		t.Fatalf("exit %+v", e)
	}
	msg, err := c.ReadFile("/dev/termination-log")
	if want := "exiting because of signal \"terminated\"\n"; err != nil || string(msg) != want {
		t.Fatalf("termination message %q (%v)", msg, err)
	}
	if got := strings.Join(logs.get(), "|"); got != `stdout: Paused|stdout: Signals registered|stdout: exiting because of signal "terminated"` {
		t.Fatalf("logs %q", got)
	}
}

func TestAgnhostLivenessFailsAfterTenSeconds(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	rt := New(Config{Clock: clk, Speed: 1, PullBandwidth: 1 << 62})
	startOn(t, rt, ContainerSpec{Image: agnhostImage, Args: []string{"liveness"}, IP: "127.0.0.2"})
	if status, body := get(t, "http://127.0.0.2:8080/healthz"); status != 200 || body != "ok" {
		t.Fatalf("at start: %d %q", status, body)
	}
	clk.Step(10 * time.Second)
	if status, body := get(t, "http://127.0.0.2:8080/healthz"); status != 200 {
		t.Fatalf("at 10s: %d %q", status, body)
	}
	clk.Step(time.Second)
	if status, body := get(t, "http://127.0.0.2:8080/healthz"); status != 500 || body != "error: 11" {
		t.Fatalf("at 11s: %d %q", status, body)
	}
	if status, body := get(t, "http://127.0.0.2:8080/started"); status != 200 || body != "11s" {
		t.Fatalf("/started: %d %q", status, body)
	}
}

func TestIDFollowsTheSecurityContext(t *testing.T) {
	fsGroup := int64(2000)
	cases := []struct {
		name string
		user *User
		argv string
		want string
	}{
		{"root by default", nil, "id", "uid=0(root) gid=0(root) groups=0(root)"},
		{"runAsUser, runAsGroup and fsGroup", &User{UID: 1000, GID: 3000, Groups: []int64{4000}, FSGroup: &fsGroup}, "id", "uid=1000 gid=3000 groups=2000,3000,4000"},
		{"id -u prints the uid", &User{UID: 65534, GID: 65534}, "id -u", "65534"},
		{"id -g prints the gid", &User{UID: 1001, GID: 0}, "id -g", "0"},
		{"the shell's UID", &User{UID: 1234, GID: 1234}, "echo $UID", "1234"},
	}
	rt := New(Config{Speed: 1000})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, logs := startOn(t, rt, ContainerSpec{Image: "busybox:1.37", Command: []string{"sh", "-c", tc.argv}, User: tc.user})
			if e := waitDone(t, c); e.Code != 0 {
				t.Fatalf("exit %+v: %q", e, logs.get())
			}
			if got := logs.get(); len(got) != 1 || got[0] != "stdout: "+tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMounttestReportsVolumeModes(t *testing.T) {
	vol := NewVolume(map[string][]byte{"data-1": []byte("value-1")}, true)
	vol.SetModes(map[string]iofs.FileMode{"data-1": 0o400})
	empty := NewVolume(nil, false)
	empty.SetRoot(iofs.ModeDir|iofs.ModeSticky|0o777, "tmpfs")
	rt := New(Config{Speed: 1000})
	c, logs := startOn(t, rt, ContainerSpec{Image: agnhostImage, Args: []string{"mounttest",
		"--file_content=/etc/cm/data-1", "--file_perm=/etc/cm/data-1", "--fs_type=/test-volume", "--file_mode=/test-volume"},
		Mounts: []Mount{{Path: "/etc/cm", Volume: vol}, {Path: "/test-volume", Volume: empty}}})
	if e := waitDone(t, c); e.Code != 0 {
		t.Fatalf("exit %+v: %q", e, logs.get())
	}
	want := []string{
		`stdout: mount type of "/test-volume": tmpfs`,
		`stdout: mode of file "/test-volume": dtrwxrwxrwx`,
		`stdout: perms of file "/etc/cm/data-1": -r--------`,
		`stdout: content of file "/etc/cm/data-1": value-1`,
	}
	if got := logs.get(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestStatefulSetProbeControls is what the suite's StatefulSet specs do
// to agnhost test-webserver pods: the readiness probe's /localhost.crt
// is moved away (the probe fails) and back, and dd writes the file an
// exec probe tests.
func TestStatefulSetProbeControls(t *testing.T) {
	rt := New(Config{Speed: 1000})
	port := freePort(t)
	c, _ := startOn(t, rt, ContainerSpec{Image: "registry.k8s.io/e2e-test-images/agnhost:2.55", Args: []string{"test-webserver", "--port=" + port}})
	url := "http://127.0.0.1:" + port + "/localhost.crt"
	if status, body := get(t, url); status != 200 || !strings.HasPrefix(body, "-----BEGIN CERTIFICATE-----") {
		t.Fatalf("before: %d %q", status, body)
	}
	exec := func(cmd, wantOut string, wantCode int) {
		t.Helper()
		out, code, err := c.Exec(t.Context(), []string{"/bin/sh", "-c", cmd})
		if err != nil || code != wantCode || string(out) != wantOut {
			t.Fatalf("%s: %d %v %q, want %d %q", cmd, code, err, out, wantCode, wantOut)
		}
	}
	exec("mv -v /localhost.crt /tmp/ || true", "'/localhost.crt' -> '/tmp/localhost.crt'\n", 0)
	if status, _ := get(t, url); status != 404 {
		t.Fatalf("moved away: %d", status)
	}
	exec("mv -v /localhost.crt /tmp/ || true", "mv: can't stat '/localhost.crt': No such file or directory\n", 0)
	exec("mv -v /tmp/localhost.crt / || true", "'/tmp/localhost.crt' -> '/localhost.crt'\n", 0)
	if status, _ := get(t, url); status != 200 {
		t.Fatalf("moved back: %d", status)
	}
	exec("test -f /data/statefulset-continue", "", 1)
	exec("mkdir -p /data; dd if=/dev/zero of=/data/statefulset-continue bs=1 count=1 conv=fsync", "1+0 records in\n1+0 records out\n", 0)
	exec("test -f /data/statefulset-continue && wc -c < /data/statefulset-continue", "1\n", 0)
	exec("cp /localhost.crt /tmp/copy && chmod 600 /tmp/copy && ls /tmp", "copy\n", 0)
	exec("printf 'b\\n10\\na\\n9\\na\\n' > /tmp/l; sort -u /tmp/l; sort -n /tmp/l | head -n 3 | sort -r", "10\n9\na\nb\nb\na\na\n", 0) // -n: words are 0
	exec("stat -c '%a %n' /tmp/copy; chmod g+r /tmp/copy; stat -c %A /tmp/copy", "600 /tmp/copy\n-rw-r-----\n", 0)
}

// TestAgnhostGuestbook is the kubectl conformance spec's guestbook: a
// frontend proxies sets to the primary and gets to a replica, which
// registered with the primary and receives its sets.
func TestAgnhostGuestbook(t *testing.T) {
	rt := New(Config{Speed: 1000})
	backend, front := freePort(t), freePort(t)
	hosts := []byte("127.0.0.3\tagnhost-primary\n127.0.0.4\tagnhost-replica\n")
	_, primaryLogs := startOn(t, rt, ContainerSpec{Image: agnhostImage, IP: "127.0.0.3", Hosts: hosts, Args: []string{"guestbook", "--http-port", backend, "--backend-port", backend}})
	_, replicaLogs := startOn(t, rt, ContainerSpec{Image: agnhostImage, IP: "127.0.0.4", Hosts: hosts, Args: []string{"guestbook", "--replicaof", "agnhost-primary", "--http-port", backend, "--backend-port", backend}})
	startOn(t, rt, ContainerSpec{Image: agnhostImage, IP: "127.0.0.5", Hosts: hosts, Args: []string{"guestbook", "--backend-port", backend, "--http-port", front}})
	deadline := time.Now().Add(10 * time.Second)
	for !hasLine(primaryLogs.get(), "Node '127.0.0.4' registered.") {
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not register: %q %q", primaryLogs.get(), replicaLogs.get())
		}
		time.Sleep(10 * time.Millisecond)
	}
	base := "http://127.0.0.5:" + front + "/guestbook?key=messages&cmd="
	for _, step := range []struct{ query, want string }{
		{"get&value=", `{"data":""}`},
		{"set&value=TestEntry", `{"message":"Updated"}`},
		{"get&value=", `{"data":"TestEntry"}`},
	} {
		if status, body := get(t, base+step.query); status != 200 || body != step.want {
			t.Fatalf("cmd=%s: %d %q, want %q", step.query, status, body, step.want)
		}
	}
	if status, body := get(t, base+"drop"); status != 400 || body != "unsupported cmd: 'drop'\n" {
		t.Fatalf("cmd=drop: %d %q", status, body)
	}
}

func TestReadOnlyRootFilesystem(t *testing.T) {
	rt := New(Config{Speed: 1000})
	scratch := NewVolume(nil, false)
	c, logs := startOn(t, rt, ContainerSpec{Image: "busybox:1.37", ReadOnlyRootFS: true, Mounts: []Mount{{Path: "/scratch", Volume: scratch}},
		Command: []string{"/bin/sh", "-c", "echo hi > /file; echo $?; echo ok > /scratch/file && cat /scratch/file; echo msg > /dev/termination-log && echo written"}})
	if e := waitDone(t, c); e.Code != 0 {
		t.Fatalf("exit %+v: %q", e, logs.get())
	}
	// busybox's ash names itself as it was run.
	want := []string{"stderr: /bin/sh: can't create /file: Read-only file system", "stdout: 1", "stdout: ok", "stdout: written"}
	if got := logs.get(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// BenchmarkNetexecDial is one /dial of netexec to another netexec's
// /hostname over HTTP (two hops on loopback), as the suite's granular
// network checks make by the thousand.
//
//	go test ./internal/nodeagent/runtime -run '^$' -bench NetexecDial
func BenchmarkNetexecDial(b *testing.B) {
	rt := New(Config{Speed: 1000})
	var ports []string
	for _, ip := range []string{"127.0.0.8", "127.0.0.9"} {
		l, err := net.Listen("tcp", ip+":0")
		if err != nil {
			b.Fatal(err)
		}
		port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		ports = append(ports, port)
		if _, err := rt.Pull(b.Context(), agnhostImage); err != nil {
			b.Fatal(err)
		}
		c, err := rt.Create(ContainerSpec{Image: agnhostImage, IP: ip, Hostname: "netserver-" + ip, Pod: "default/p", Node: "n",
			Args: []string{"netexec", "--http-port=" + port, "--udp-port=-1"}})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(c.Kill)
	}
	url := "http://127.0.0.8:" + ports[0] + "/dial?request=hostname&protocol=http&host=127.0.0.9&port=" + ports[1] + "&tries=1"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	for b.Loop() {
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != `{"responses":["netserver-127.0.0.9"]}` {
			b.Fatalf("dial answered %s", body)
		}
	}
}

// The e2e suite starts agnhost with klog's flags (the sample webhook
// Deployment runs `agnhost webhook … -v=4`): agnhost's root command
// accepts them for every command.
func TestAgnhostAcceptsKlogFlags(t *testing.T) {
	for _, argv := range [][]string{
		{"agnhost", "webhook", "--tls-cert-file=/c", "--tls-private-key-file=/k", "-v=4"},
		{"agnhost", "netexec", "--http-port=8080", "--v", "2", "--logtostderr"},
	} {
		if d := describeAgnhost(argv); strings.Contains(d, "exit 1") {
			t.Errorf("%q: %s", argv, d)
		}
	}
	if d := describeAgnhost([]string{"agnhost", "netexec", "--no-such-flag"}); !strings.Contains(d, "exit 1") {
		t.Errorf("an unknown flag is accepted: %s", d)
	}
	if klog.V(4).Enabled() {
		t.Error("parsing agnhost's -v=4 changed this process's verbosity")
	}
}
