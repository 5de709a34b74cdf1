package storage

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// The cache's reads against the same reads of etcd in the same run: a get
// of one 2 KiB object and a list of 100. "cache" is a consistent read
// (resourceVersion ""): one point read of etcd's revision, then the
// cache; "cache-stale" is resourceVersion "0" (the cache alone).

func benchValue() []byte {
	v := make([]byte, 2048)
	for i := range v {
		v[i] = 'a' + byte(i%26)
	}
	return v
}

func BenchmarkCacheGet(b *testing.B) {
	s, c, _ := newCacheTest(b, CacheConfig{})
	ctx := context.Background()
	key := Key("things", "bench", "web")
	if _, err := s.Create(ctx, key, benchValue()); err != nil {
		b.Fatal(err)
	}
	b.Run("cache", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := c.Get(ctx, root, key); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("etcd", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.Get(ctx, key); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

func BenchmarkCacheList100(b *testing.B) {
	s, c, _ := newCacheTest(b, CacheConfig{})
	ctx := context.Background()
	for i := range 100 {
		if _, err := s.Create(ctx, Key("things", "bench", fmt.Sprintf("cm-%03d", i)), benchValue()); err != nil {
			b.Fatal(err)
		}
	}
	prefix := Key("things", "bench", "")
	for _, sub := range []struct {
		name string
		list func() (ListResult, error)
	}{
		{"cache", func() (ListResult, error) { return c.List(ctx, root, prefix, ListOptions{}) }},
		{"cache-stale", func() (ListResult, error) { return c.List(ctx, root, prefix, ListOptions{Stale: true}) }},
		{"etcd", func() (ListResult, error) { return s.List(ctx, prefix, ListOptions{}) }},
	} {
		b.Run(sub.name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if res, err := sub.list(); err != nil || len(res.Items) != 100 {
						b.Errorf("list: %d items, %v", len(res.Items), err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkCacheWatchFanout: 1,000 watchers of one resource, one etcd
// watch; each iteration writes one object and waits until every watcher
// has it. p99-ms is the 99th percentile, over all watchers and
// iterations, of the time from the write's start to a watcher's receipt.
func BenchmarkCacheWatchFanout(b *testing.B) {
	s, c, _ := newCacheTest(b, CacheConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const watchers = 1000
	var start atomic.Int64 // the write's start, in Unix nanoseconds
	got := make(chan time.Duration, watchers)
	for range watchers {
		ch := c.Watch(ctx, root, root, 0)
		go func() {
			for ev := range ch {
				if ev.Type == Put {
					got <- time.Duration(time.Now().UnixNano() - start.Load())
				}
			}
		}()
	}
	value := benchValue()
	lat := make([]time.Duration, 0, b.N*watchers)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start.Store(time.Now().UnixNano())
		if _, err := s.Create(ctx, Key("things", "bench", fmt.Sprint(i)), value); err != nil {
			b.Fatal(err)
		}
		for range watchers {
			lat = append(lat, <-got)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}
