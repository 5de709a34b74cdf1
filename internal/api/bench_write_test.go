package api_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"minik/internal/testserver"
)

// writeBenchClients are the concurrencies the write benchmarks compare at:
// one client waiting for each answer, and sixteen sharing one client-go
// transport (one HTTP/2 connection), as a controller manager's workers do.
var writeBenchClients = []int{1, 16}

// writeBenchRounds is how many times a write benchmark alternates
// between the API server and raw etcd, so that both see the same load of
// a machine shared with other work.
const writeBenchRounds = 10

// writePhase is one side of a write benchmark: op does the i-th write of
// a worker.
type writePhase struct {
	name string
	op   func(ctx context.Context, worker, i int) error
}

// benchWrites runs b.N writes of each phase with clients concurrent
// workers, alternating between the phases in writeBenchRounds rounds,
// and reports each phase's writes per second and each phase's ratio to
// the last one (the raw etcd baseline), and the process's CPU time per
// write of each phase.
func benchWrites(b *testing.B, clients int, phases []writePhase) {
	ctx := context.Background()
	elapsed := make([]time.Duration, len(phases))
	cpu := make([]time.Duration, len(phases))
	done := make([]int, len(phases))
	next := make([]int, clients) // per worker: the index of its next write
	b.ResetTimer()
	for round := 0; round < writeBenchRounds; round++ {
		n := b.N / writeBenchRounds
		if round < b.N%writeBenchRounds {
			n++
		}
		if n == 0 {
			continue
		}
		for p, ph := range phases {
			var claimed atomic.Int64
			var wg sync.WaitGroup
			start, cpu0 := time.Now(), processCPU(b)
			for w := 0; w < clients; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for claimed.Add(1) <= int64(n) {
						i := next[w]
						next[w]++
						if err := ph.op(ctx, w, i); err != nil {
							b.Errorf("%s: %v", ph.name, err)
							return
						}
					}
				}(w)
			}
			wg.Wait()
			elapsed[p] += time.Since(start)
			cpu[p] += processCPU(b) - cpu0
			done[p] += n
		}
	}
	b.StopTimer()
	base := float64(done[len(phases)-1]) / elapsed[len(phases)-1].Seconds()
	for p, ph := range phases {
		rate := float64(done[p]) / elapsed[p].Seconds()
		b.ReportMetric(rate, ph.name+"-writes/s")
		b.ReportMetric(float64(cpu[p].Microseconds())/float64(done[p]), ph.name+"-cpu-us/write")
		if p < len(phases)-1 {
			b.ReportMetric(rate/base, ph.name+"/etcd")
		}
	}
	b.ReportMetric(0, "ns/op") // the per-phase rates say it; ns/op would mix them
}

// processCPU is the CPU time the process (the server, etcd and the
// benchmark's clients) has used: per write, it tells what a change saves
// however busy the machine is with other work.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// storedValue returns the bytes the server stored for a ConfigMap it
// created, so that the raw etcd baseline writes exactly those.
func storedValue(b *testing.B, srv *testserver.Server, name string) string {
	r, err := srv.Etcd.Get(context.Background(), "/registry/configmaps/bench/"+name)
	if err != nil || len(r.Kvs) != 1 {
		b.Fatalf("read the stored %s: %v", name, err)
	}
	return string(r.Kvs[0].Value)
}

// BenchmarkCreateVsEtcd creates ConfigMaps through the API server (JSON and
// protobuf, from client-go) and compares with raw etcd doing what the
// server's storage does for a create: the compare-and-put transaction
// (create revision 0) of the same bytes, over the server's own etcd
// client. The api-*/etcd metrics are the share of etcd's rate the API
// server keeps.
func BenchmarkCreateVsEtcd(b *testing.B) {
	srv := testserver.Start(b)
	ctx := context.Background()
	admin := benchClient(b, srv, false)
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := admin.CoreV1().ConfigMaps("bench").Create(ctx, benchConfigMap("template"), metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	value := storedValue(b, srv, "template")
	var seq atomic.Int64
	for _, clients := range writeBenchClients {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			jsonc, pbc := benchClient(b, srv, false), benchClient(b, srv, true)
			create := func(c interface {
				Create(context.Context, *corev1.ConfigMap, metav1.CreateOptions) (*corev1.ConfigMap, error)
			}) func(ctx context.Context, _, _ int) error {
				return func(ctx context.Context, _, _ int) error {
					_, err := c.Create(ctx, benchConfigMap(fmt.Sprintf("api-%d", seq.Add(1))), metav1.CreateOptions{})
					return err
				}
			}
			benchWrites(b, clients, []writePhase{
				{"api-json", create(jsonc.CoreV1().ConfigMaps("bench"))},
				{"api-protobuf", create(pbc.CoreV1().ConfigMaps("bench"))},
				{"etcd", func(ctx context.Context, _, _ int) error {
					key := fmt.Sprintf("/registry/configmaps/bench/raw-%d", seq.Add(1))
					r, err := srv.Etcd.Txn(ctx).
						If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
						Then(clientv3.OpPut(key, value)).
						Commit()
					if err == nil && !r.Succeeded {
						err = fmt.Errorf("%s exists", key)
					}
					return err
				}},
			})
		})
	}
}

// BenchmarkUpdateVsEtcd replaces ConfigMaps (each worker its own, so no
// write loses a race), and patches them with a strategic merge patch of
// one field, and compares with raw etcd's part of an update: the
// compare-and-put transaction (mod revision unchanged) of the same bytes.
func BenchmarkUpdateVsEtcd(b *testing.B) {
	srv := testserver.Start(b)
	ctx := context.Background()
	admin := benchClient(b, srv, false)
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := admin.CoreV1().ConfigMaps("bench").Create(ctx, benchConfigMap("template"), metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	value := storedValue(b, srv, "template")
	var runs atomic.Int64 // the testing package runs each sub-benchmark more than once
	for _, clients := range writeBenchClients {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			run := int(runs.Add(1))
			cs := benchClient(b, srv, false)
			cms := cs.CoreV1().ConfigMaps("bench")
			current := make([]*corev1.ConfigMap, clients)
			rawRev := make([]int64, clients) // each raw key's mod revision
			for w := range current {
				cm, err := cms.Create(ctx, benchConfigMap(fmt.Sprintf("upd-%d-%d", run, w)), metav1.CreateOptions{})
				if err != nil {
					b.Fatal(err)
				}
				current[w] = cm
				r, err := srv.Etcd.Put(ctx, rawUpdateKey(run, w), value)
				if err != nil {
					b.Fatal(err)
				}
				rawRev[w] = r.Header.Revision
			}
			benchWrites(b, clients, []writePhase{
				{"api-update", func(ctx context.Context, w, i int) error {
					cm := current[w]
					cm.Data["mode"] = fmt.Sprintf("demo-%d", i)
					cm, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
					if err == nil {
						current[w] = cm
					}
					return err
				}},
				{"api-patch", func(ctx context.Context, w, i int) error {
					patch := fmt.Sprintf(`{"data":{"mode":"patched-%d"}}`, i)
					cm, err := cms.Patch(ctx, current[w].Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
					if err == nil {
						current[w] = cm
					}
					return err
				}},
				{"etcd", func(ctx context.Context, w, i int) error {
					key := rawUpdateKey(run, w)
					r, err := srv.Etcd.Txn(ctx).
						If(clientv3.Compare(clientv3.ModRevision(key), "=", rawRev[w])).
						Then(clientv3.OpPut(key, value)).
						Else(clientv3.OpGet(key, clientv3.WithKeysOnly())).
						Commit()
					if err == nil && !r.Succeeded {
						err = fmt.Errorf("%s changed", key)
					}
					if err == nil {
						rawRev[w] = r.Header.Revision
					}
					return err
				}},
			})
		})
	}
}

func rawUpdateKey(run, w int) string {
	return fmt.Sprintf("/registry/configmaps/bench/raw-upd-%d-%d", run, w)
}
