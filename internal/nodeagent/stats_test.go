package nodeagent_test

import (
	"strings"
	"testing"

	"minik/internal/nodeagent/runtime"
)

// The usage rules, by example: what a container uses for its image and
// command line (before limits).
func TestContainersUseWhatTheirProgramDoes(t *testing.T) {
	rules := runtime.DefaultRules()
	const mi, ki = 1 << 20, 1 << 10
	for _, c := range []struct {
		name    string
		image   string
		command []string
		milli   uint64
		memory  uint64
	}{
		{"nginx idles at a millicore", "nginx:1.27", nil, 1, 6 * mi},
		{"redis idles a little busier", "redis:7", nil, 2, 8 * mi},
		{"the pause container uses nothing", "registry.k8s.io/pause:3.10", nil, 0, 256 * ki},
		{"an unknown image's program idles as a generic server", "example.com/app:v1", nil, 1, 16 * mi},
		{"sleep uses nothing", "busybox:1.36", []string{"sleep", "3600"}, 0, 256 * ki},
		{"an interactive shell waits", "busybox:1.36", []string{"sh"}, 0, 512 * ki},
		{"a loop that sleeps is idle", "busybox:1.36", []string{"sh", "-c", "while true; do date; sleep 5; done"}, 0, 512 * ki},
		{"a loop that never waits takes a core", "busybox:1.36", []string{"sh", "-c", "while :; do :; done"}, 1000, 576 * ki},
		{"until false spins too", "busybox:1.36", []string{"/bin/sh", "-c", "until false; do echo x; done"}, 1000, 576 * ki},
		{"a loop that counts to an end does not", "busybox:1.36", []string{"sh", "-c", "i=0; while [ $i -lt 3 ]; do i=$((i+1)); done"}, 0, 512 * ki},
		{"yes spins a core", "busybox:1.36", []string{"sh", "-c", "yes > /dev/null"}, 1000, 1 * mi},
		{"two spinners in the background, two cores", "busybox:1.36", []string{"sh", "-c", "md5sum /dev/zero & sha256sum /dev/zero & wait"}, 2000, 1536 * ki},
		{"dd from /dev/zero spins", "busybox:1.36", []string{"sh", "-c", "dd if=/dev/zero of=/dev/null bs=1M"}, 1000, 1536 * ki},
		{"stress: --cpu and --vm workers, --vm-bytes each", "polinux/stress", []string{"stress", "--cpu", "2", "--vm", "2", "--vm-bytes", "64M"}, 4000, 256*ki + 128*mi + mi},
		{"stress-ng: --cpu-load is a percentage of each worker", "alexeiled/stress-ng", []string{"stress-ng", "--cpu=4", "--cpu-load=50", "--timeout", "60s"}, 2000, 256*ki + mi},
		{"stress without --vm-bytes allocates 256M a worker", "polinux/stress", []string{"stress", "-m", "1"}, 1000, 256*ki + 256*mi + mi},
		{"a script that does not parse uses the shell alone", "busybox:1.36", []string{"sh", "-c", "while true; do"}, 0, 512 * ki},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := rules.DemandOf(runtime.ContainerSpec{Image: c.image, Command: c.command})
			if d.NanoCores != c.milli*1_000_000 || d.WorkingSetBytes != c.memory || d.RSSBytes > d.WorkingSetBytes {
				t.Errorf("%v: %dm, working set %d, rss %d; want %dm and %d", c.command, d.NanoCores/1_000_000, d.WorkingSetBytes, d.RSSBytes, c.milli, c.memory)
			}
		})
	}
	t.Run("limits cap the demand", func(t *testing.T) {
		d := runtime.Demand{NanoCores: 3_000_000_000, WorkingSetBytes: 512 * mi, RSSBytes: 400 * mi}.Capped(250_000_000, 128*mi)
		if d.NanoCores != 250_000_000 || d.WorkingSetBytes != 128*mi || d.RSSBytes != 128*mi {
			t.Errorf("capped: %+v", d)
		}
	})
}

func TestUsageAnnotation(t *testing.T) {
	o, err := runtime.ParseUsageOverrides("app=cpu:250m,memory:64Mi; sidecar=cpu:5m\n*=memory:1Gi")
	if err != nil {
		t.Fatal(err)
	}
	app := o["app"].Apply(runtime.Demand{NanoCores: 1, WorkingSetBytes: 1})
	side := o["sidecar"].Apply(runtime.Demand{NanoCores: 1, WorkingSetBytes: 7, RSSBytes: 7})
	if app.NanoCores != 250_000_000 || app.WorkingSetBytes != 64<<20 || side.NanoCores != 5_000_000 || side.WorkingSetBytes != 7 || o["*"].Memory.String() != "1Gi" {
		t.Errorf("overrides: app %+v sidecar %+v all %+v", app, side, o["*"])
	}
	for _, bad := range []struct{ value, err string }{
		{"app", `"app": want <container>=cpu:<quantity>,memory:<quantity>`},
		{"app=cpu", `"cpu": want cpu:<quantity> or memory:<quantity>`},
		{"app=cpu:lots", "app cpu: quantities must match the regular expression"},
		{"app=cpu:-1", "app cpu: must be greater than or equal to 0"},
		{"app=gpu:1", `app: unknown resource "gpu" (cpu, memory)`},
		{"app=cpu:100000", "app cpu: must be at most 65536"},
		{strings.Repeat("a=cpu:1;", 65), "more than 64 containers"},
	} {
		if _, err := runtime.ParseUsageOverrides(bad.value); err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("%q: %v, want %q", bad.value, err, bad.err)
		}
	}
}
