package runtime

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"syscall"
	"testing"
	"time"
)

// BenchmarkThousandContainers runs 1,000 containers at once, half of them
// shell loops (`while true; do sleep 5; done`), half HTTP servers on
// their own loopback IPs, and reports what they cost the node while they
// run: goroutines, heap, open file descriptors, and CPU time per simulated
// minute (at speed 60, so that a real second is a simulated minute).
//
//	go test ./internal/nodeagent/runtime -run '^$' -bench ThousandContainers -benchtime 1x
func BenchmarkThousandContainers(b *testing.B) {
	const n, speed, window = 1000, 60.0, 2 * time.Second
	rt := New(Config{Speed: speed, PullBandwidth: 1 << 62})
	for _, im := range []string{"busybox:1.36", "hashicorp/http-echo:1.0"} {
		if _, err := rt.Pull(b.Context(), im); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		g0, fd0 := goruntime.NumGoroutine(), openFDs(b)
		var cs []*Container
		for i := range n {
			spec := ContainerSpec{Name: "c", Image: "busybox:1.36", Command: []string{"sh", "-c", "while true; do sleep 5; done"}}
			if i%2 == 1 {
				spec = ContainerSpec{Name: "web", Image: "hashicorp/http-echo:1.0", Args: []string{"-text=hi", "-listen=:5678"}}
			}
			spec.IP = fmt.Sprintf("127.77.%d.%d", i/250, 1+i%250)
			spec.Hostname, spec.Pod, spec.Node = "p", "default/p", "node-1"
			c, err := rt.Create(spec)
			if err != nil {
				b.Fatal(err)
			}
			if err := c.Start(); err != nil {
				b.Fatal(err)
			}
			cs = append(cs, c)
		}
		goruntime.GC()
		var ms goruntime.MemStats
		goruntime.ReadMemStats(&ms)
		var u0, u1 syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u0)
		t := time.NewTimer(window)
		<-t.C
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u1)
		cpu := time.Duration(u1.Utime.Nano()+u1.Stime.Nano()-u0.Utime.Nano()-u0.Stime.Nano()) * time.Nanosecond
		b.ReportMetric(float64(goruntime.NumGoroutine()-g0), "goroutines")
		b.ReportMetric(float64(openFDs(b)-fd0), "fds")
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		b.ReportMetric(float64(cpu.Milliseconds())/(window.Seconds()*speed/60), "cpu-ms/sim-min")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		for _, c := range cs {
			c.Kill()
		}
		for _, c := range cs {
			select {
			case <-c.Done():
			case <-ctx.Done():
				b.Fatal("containers did not end")
			}
		}
		cancel()
	}
}

func openFDs(b *testing.B) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	return len(ents)
}
