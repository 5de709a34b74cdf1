package etcd

import (
	"context"
	"slices"
	"testing"
	"time"
)

// BenchmarkStartEmbedded measures a fresh embedded member's start up to
// its first write through Client; the median is reported as median-ms.
func BenchmarkStartEmbedded(b *testing.B) {
	var times []time.Duration
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		start := time.Now()
		e, err := Start(context.Background(), Config{DataDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Client.Put(context.Background(), "/k", "v"); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
		e.Close()
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
}
