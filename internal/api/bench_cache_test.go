package api_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/testserver"
)

// BenchmarkCachedReads compares, in one run, gets of one ConfigMap and
// lists of 100 through the API from the watch cache ("cache": consistent,
// resourceVersion ""; "cache-rv0": resourceVersion "0"), through the API
// from etcd ("nocache": minikd --watch-cache=false) and raw etcd gets and
// ranges of the same keys and bytes ("etcd").
func BenchmarkCachedReads(b *testing.B) {
	ctx := context.Background()
	servers := map[string]*testserver.Server{
		"cache":   testserver.Start(b),
		"nocache": testserver.StartWith(b, testserver.Options{NoWatchCache: true}),
	}
	for _, srv := range servers {
		cs := benchClient(b, srv, false)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		for i := range 100 {
			name := fmt.Sprintf("cm-%03d", i)
			if _, err := cs.CoreV1().ConfigMaps("bench").Create(ctx, benchConfigMap(name), metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			if _, err := srv.Etcd.Put(ctx, "/bench/configmaps/bench/"+name, string(benchJSON(b, benchConfigMap(name)))); err != nil {
				b.Fatal(err)
			}
		}
	}
	type run struct {
		name, server, rv string
	}
	runs := []run{{"cache", "cache", ""}, {"cache-rv0", "cache", "0"}, {"nocache", "nocache", ""}}
	for _, r := range runs {
		b.Run("get/"+r.name, func(b *testing.B) {
			cs := benchClient(b, servers[r.server], false)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := cs.CoreV1().ConfigMaps("bench").Get(ctx, "cm-000", metav1.GetOptions{ResourceVersion: r.rv}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
	b.Run("get/etcd", func(b *testing.B) {
		e := servers["cache"].Etcd
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if r, err := e.Get(ctx, "/bench/configmaps/bench/cm-000"); err != nil || len(r.Kvs) != 1 {
					b.Errorf("get: %v", err)
					return
				}
			}
		})
	})
	for _, r := range runs {
		b.Run("list100/"+r.name, func(b *testing.B) {
			c := rest.CopyConfig(servers[r.server].RESTConfig)
			c.QPS = -1
			cs, _ := kubernetes.NewForConfig(c)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if l, err := cs.CoreV1().ConfigMaps("bench").List(ctx, metav1.ListOptions{ResourceVersion: r.rv}); err != nil || len(l.Items) != 100 {
						b.Errorf("list: %v", err)
						return
					}
				}
			})
		})
	}
	b.Run("list100/etcd", func(b *testing.B) {
		e := servers["cache"].Etcd
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if r, err := e.Get(ctx, "/bench/configmaps/bench/", clientv3WithPrefix()); err != nil || len(r.Kvs) != 100 {
					b.Errorf("range: %v", err)
					return
				}
			}
		})
	})
}

// BenchmarkWatchFanout: 1,000 watches of one resource through the API
// (HTTPS, client-go, over 8 connections as Go's HTTP/2 server allows 250
// streams on one), served from the watch cache's one etcd watch; each
// iteration updates one ConfigMap and waits until every watcher has the
// event. p99-ms: the 99th percentile over watchers and iterations of the
// time from the update's start to a watcher's receipt.
func BenchmarkWatchFanout(b *testing.B) {
	srv := testserver.Start(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs := benchClient(b, srv, false)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps("bench").Create(ctx, benchConfigMap("web"), metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	const watchers, conns = 1000, 8
	var start atomic.Int64
	got := make(chan time.Duration, watchers)
	clients := make([]kubernetes.Interface, conns)
	for i := range clients {
		clients[i] = benchClient(b, srv, false) // a transport, so a connection, each
	}
	for i := range watchers {
		w, err := clients[i%conns].CoreV1().ConfigMaps("bench").Watch(ctx, metav1.ListOptions{ResourceVersion: cm.ResourceVersion})
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			for ev := range w.ResultChan() {
				if ev.Type == watch.Modified {
					got <- time.Duration(time.Now().UnixNano() - start.Load())
				}
			}
		}()
	}
	lat := make([]time.Duration, 0, b.N*watchers)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cm.Data["i"] = fmt.Sprint(i)
		start.Store(time.Now().UnixNano())
		if cm, err = cs.CoreV1().ConfigMaps("bench").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
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
