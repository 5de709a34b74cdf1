package api_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/api"
	"minik/internal/testserver"
)

// The benchmarks compare the API server with raw etcd puts and gets of the
// same JSON at the same concurrency (b.RunParallel, GOMAXPROCS workers),
// so the ratio api/etcd is the cost of the API server itself: HTTPS,
// authentication, decoding, defaulting, validation, admission, encoding.

func benchConfigMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench", Labels: map[string]string{"app": "bench"}},
		Data:       map[string]string{"index.html": "<h1>hello from minik</h1>", "mode": "demo"},
	}
}

func benchJSON(b *testing.B, obj runtime.Object) []byte {
	data, err := runtime.Encode(api.Codecs.LegacyCodec(corev1.SchemeGroupVersion), obj)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func benchClient(b *testing.B, srv *testserver.Server, protobuf bool) kubernetes.Interface {
	c := rest.CopyConfig(srv.RESTConfig)
	c.QPS = -1
	// client-go's typed clients send and ask for protobuf unless told
	// otherwise: JSON has to be asked for.
	c.ContentType = "application/json"
	if protobuf {
		c.ContentType = "application/vnd.kubernetes.protobuf"
	}
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

func BenchmarkCreate(b *testing.B) {
	srv := testserver.Start(b)
	ctx := context.Background()
	cs := benchClient(b, srv, false)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	for _, enc := range []string{"json", "protobuf"} {
		b.Run("api-"+enc, func(b *testing.B) {
			cs := benchClient(b, srv, enc == "protobuf")
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					cm := benchConfigMap(fmt.Sprintf("api-%d", n.Add(1)))
					if _, err := cs.CoreV1().ConfigMaps("bench").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
	b.Run("etcd", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				name := fmt.Sprintf("raw-%d", n.Add(1))
				data := benchJSON(b, benchConfigMap(name))
				if _, err := srv.Etcd.Put(ctx, "/bench/configmaps/bench/"+name, string(data)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

func BenchmarkGet(b *testing.B) {
	srv := testserver.Start(b)
	ctx := context.Background()
	cs := benchClient(b, srv, false)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("bench").Create(ctx, benchConfigMap("web"), metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := srv.Etcd.Put(ctx, "/bench/configmaps/bench/web", string(benchJSON(b, benchConfigMap("web")))); err != nil {
		b.Fatal(err)
	}
	for _, enc := range []string{"json", "protobuf"} {
		b.Run("api-"+enc, func(b *testing.B) {
			cs := benchClient(b, srv, enc == "protobuf")
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := cs.CoreV1().ConfigMaps("bench").Get(ctx, "web", metav1.GetOptions{}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
	b.Run("etcd", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r, err := srv.Etcd.Get(ctx, "/bench/configmaps/bench/web")
				if err != nil || len(r.Kvs) != 1 {
					b.Errorf("get: %v", err)
					return
				}
			}
		})
	})
}

// BenchmarkList lists a collection of 100 ConfigMaps.
func BenchmarkList(b *testing.B) {
	srv := testserver.Start(b)
	ctx := context.Background()
	cs := benchClient(b, srv, false)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("cm-%03d", i)
		if _, err := cs.CoreV1().ConfigMaps("bench").Create(ctx, benchConfigMap(name), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		if _, err := srv.Etcd.Put(ctx, "/bench/configmaps/bench/"+name, string(benchJSON(b, benchConfigMap(name)))); err != nil {
			b.Fatal(err)
		}
	}
	for _, enc := range []string{"json", "protobuf"} {
		b.Run("api-"+enc, func(b *testing.B) {
			c := rest.CopyConfig(srv.RESTConfig)
			if enc == "protobuf" {
				c.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
			}
			cs, _ := kubernetes.NewForConfig(c)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					l, err := cs.CoreV1().ConfigMaps("bench").List(ctx, metav1.ListOptions{})
					if err != nil || len(l.Items) != 100 {
						b.Errorf("list: %v", err)
						return
					}
				}
			})
		})
	}
	b.Run("etcd", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r, err := srv.Etcd.Get(ctx, "/bench/configmaps/bench/", clientv3WithPrefix())
				if err != nil || len(r.Kvs) != 100 {
					b.Errorf("range: %v", err)
					return
				}
			}
		})
	})
}

func clientv3WithPrefix() clientv3.OpOption { return clientv3.WithPrefix() }
