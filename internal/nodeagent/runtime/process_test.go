package runtime

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// startOn creates and starts a container on a runtime.
func startOn(t *testing.T, rt *Runtime, spec ContainerSpec) (*Container, *logLines) {
	t.Helper()
	if _, err := rt.Pull(t.Context(), spec.Image); err != nil {
		t.Fatal(err)
	}
	logs := &logLines{}
	spec.Log, spec.Hostname, spec.Pod, spec.Node = logs, "web-1", "demo/web-1", "node-1"
	if spec.IP == "" {
		spec.IP = "127.0.0.1"
	}
	c, err := rt.Create(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	return c, logs
}

func waitDone(t *testing.T, c *Container) *Exit {
	t.Helper()
	select {
	case <-c.Done():
		return c.Exit()
	case <-time.After(10 * time.Second):
		t.Fatal("the container did not end")
	}
	return nil
}

func TestSleepFollowsTheClock(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	rt := New(Config{Clock: clk, Speed: 1, PullBandwidth: 1 << 62})
	c, logs := startOn(t, rt, ContainerSpec{Image: "busybox", Command: []string{"sh", "-c", "echo before; sleep 30; echo after"}})
	if got := logs.get(); len(got) != 1 || got[0] != "stdout: before" {
		t.Fatalf("before the clock moves: %q", got)
	}
	// The sleep waits on the fake clock: nothing happens until it steps.
	deadline := time.Now().Add(5 * time.Second)
	for !clk.HasWaiters() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	clk.Step(29 * time.Second)
	select {
	case <-c.Done():
		t.Fatal("ended before its sleep")
	default:
	}
	clk.Step(time.Second)
	if e := waitDone(t, c); e.Code != 0 || strings.Join(logs.get(), "|") != "stdout: before|stdout: after" {
		t.Fatalf("exit %+v, logs %q", e, logs.get())
	}
}

func TestStopping(t *testing.T) {
	rt := New(Config{Speed: 1000})
	t.Run("a shell ignores SIGTERM and is killed after the grace period", func(t *testing.T) {
		c, _ := startOn(t, rt, ContainerSpec{Image: "busybox", Command: []string{"sh", "-c", "while true; do sleep 1; done"}})
		c.Stop(context.Background(), 5*time.Second)
		if e := c.Exit(); e == nil || e.Code != 137 || e.Reason != "Error" {
			t.Fatalf("exit %+v", e)
		}
	})
	t.Run("a trapped SIGTERM runs its action", func(t *testing.T) {
		c, logs := startOn(t, rt, ContainerSpec{Image: "busybox", Command: []string{"sh", "-c", "trap 'echo bye; exit 0' TERM; while true; do sleep 1; done"}})
		c.Stop(context.Background(), time.Hour)
		if e := c.Exit(); e == nil || e.Code != 0 || strings.Join(logs.get(), "|") != "stdout: bye" {
			t.Fatalf("exit %+v, logs %q", c.Exit(), logs.get())
		}
	})
	t.Run("pause exits 0 on SIGTERM", func(t *testing.T) {
		c, _ := startOn(t, rt, ContainerSpec{Image: "registry.k8s.io/pause:3.10"})
		c.Stop(context.Background(), time.Hour)
		if e := c.Exit(); e == nil || e.Code != 0 || e.Reason != "Completed" {
			t.Fatalf("exit %+v", e)
		}
	})
}

func TestStartError(t *testing.T) {
	rt := New(Config{Speed: 1000})
	if _, err := rt.Pull(t.Context(), "busybox:1.36"); err != nil {
		t.Fatal(err)
	}
	c, err := rt.Create(ContainerSpec{Image: "busybox:1.36", Command: []string{"/app/server"}, IP: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err == nil {
		t.Fatal("no start error")
	}
	if e := c.Exit(); e.Code != 128 || e.Reason != "StartError" || !strings.Contains(e.Message, `exec: "/app/server": executable file not found in $PATH`) {
		t.Fatalf("exit %+v", e)
	}
}

func TestServersAnswerOnThePodIP(t *testing.T) {
	rt := New(Config{Speed: 1000})
	// A free port: a fixed one may be another program's (a minikd's
	// Ingress proxy listens on 127.0.0.1:18080).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	c, logs := startOn(t, rt, ContainerSpec{Image: "hashicorp/http-echo:1.0", Args: []string{"-text=hi there", "-listen=:" + port}, IP: "127.0.0.1"})
	resp, err := http.Get("http://127.0.0.1:" + port + "/anything")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hi there\n" {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	out, code, err := c.Exec(t.Context(), []string{"sh", "-c", "echo hi"})
	if err == nil || code != 0 || out != nil {
		t.Fatalf("an exec of sh in a shell-less image: %q %d %v", out, code, err)
	}
	c.Stop(context.Background(), time.Minute)
	if e := c.Exit(); e.Code != 0 {
		t.Fatalf("exit %+v", e)
	}
	lines := strings.Join(logs.get(), "\n")
	if !strings.Contains(lines, "server is listening on :"+port) || !strings.Contains(lines, `"GET /anything HTTP/1.1" 200 9`) {
		t.Fatalf("logs:\n%s", lines)
	}
	if _, err := http.Get("http://127.0.0.1:" + port + "/"); err == nil {
		t.Fatal("the server still answers after its container stopped")
	}
}

func TestExecSeesTheContainersFiles(t *testing.T) {
	rt := New(Config{Speed: 1000})
	vol := NewVolume(map[string][]byte{"app.conf": []byte("level=debug\n")}, true)
	c, _ := startOn(t, rt, ContainerSpec{Image: "busybox", Command: []string{"sh", "-c", "touch /tmp/healthy; sleep 3600"},
		Mounts: []Mount{{Path: "/etc/app", Volume: vol}}})
	for _, tc := range []struct {
		argv []string
		out  string
		code int
	}{
		{[]string{"cat", "/tmp/healthy"}, "", 0},
		{[]string{"cat", "/etc/app/app.conf"}, "level=debug\n", 0},
		{[]string{"cat", "/tmp/missing"}, "cat: can't open '/tmp/missing': No such file or directory\n", 1},
		{[]string{"sh", "-c", "echo x > /etc/app/other"}, "sh: can't create /etc/app/other: Read-only file system\n", 1},
		{[]string{"ls", "/etc/app"}, "app.conf\n", 0},
	} {
		out, code, err := c.Exec(t.Context(), tc.argv)
		if err != nil || string(out) != tc.out || code != tc.code {
			t.Errorf("%v: %q %d %v", tc.argv, out, code, err)
		}
	}
	_, _, err := c.Exec(t.Context(), []string{"frob"})
	if err == nil || !strings.Contains(err.Error(), `exec: "frob": executable file not found in $PATH`) {
		t.Errorf("exec of a missing executable: %v", err)
	}
}

func TestParseReference(t *testing.T) {
	for in, want := range map[string]string{
		"nginx":                           "docker.io/library/nginx:latest",
		"nginx:1.27":                      "docker.io/library/nginx:1.27",
		"library/nginx:1.27":              "docker.io/library/nginx:1.27",
		"docker.io/nginx":                 "docker.io/library/nginx:latest",
		"hashicorp/http-echo":             "docker.io/hashicorp/http-echo:latest",
		"registry.k8s.io/pause:3.10":      "registry.k8s.io/pause:3.10",
		"localhost:5000/app":              "localhost:5000/app:latest",
		"Registry.Example.com:5000/a/b:c": "Registry.Example.com:5000/a/b:c",
	} {
		ref, err := ParseReference(in)
		if err != nil || ref.String() != want {
			t.Errorf("%s: %v %v, want %s", in, ref, err, want)
		}
	}
	for _, bad := range []string{"", "Nginx", "nginx:", "nginx:-x", " nginx", "a//b"} {
		if _, err := ParseReference(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
