package api_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minik/internal/testserver"
)

// BenchmarkUpdate replaces ConfigMaps (each worker its own, so no write
// loses a race) and compares with raw etcd puts of the same JSON.
func BenchmarkUpdate(b *testing.B) {
	srv := testserver.Start(b)
	ctx := context.Background()
	cs := benchClient(b, srv, false)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	var worker atomic.Int64
	for _, enc := range []string{"json", "protobuf"} {
		b.Run("api-"+enc, func(b *testing.B) {
			cs := benchClient(b, srv, enc == "protobuf")
			b.RunParallel(func(pb *testing.PB) {
				cm := benchConfigMap(fmt.Sprintf("upd-%d", worker.Add(1)))
				cur, err := cs.CoreV1().ConfigMaps("bench").Create(ctx, cm, metav1.CreateOptions{})
				if err != nil {
					b.Error(err)
					return
				}
				for i := 0; pb.Next(); i++ {
					cur.Data["mode"] = fmt.Sprintf("demo-%d", i)
					if cur, err = cs.CoreV1().ConfigMaps("bench").Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
	b.Run("etcd", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			cm := benchConfigMap(fmt.Sprintf("raw-upd-%d", worker.Add(1)))
			for i := 0; pb.Next(); i++ {
				cm.Data["mode"] = fmt.Sprintf("demo-%d", i)
				if _, err := srv.Etcd.Put(ctx, "/bench/configmaps/bench/"+cm.Name, string(benchJSON(b, cm))); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
