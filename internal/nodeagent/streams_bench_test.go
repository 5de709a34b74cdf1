package nodeagent_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/remotecommand"
)

// BenchmarkExec measures an exec round trip through the API server and
// the node agent (`exec … -- true`: upgrade, streams, command, exit
// status), with client-go's executors:
//
//	go test -run '^$' -bench 'Exec|PortForward' ./internal/nodeagent/
func BenchmarkExec(b *testing.B) {
	srv, cs, _ := streamsCluster(b, "bench-exec")
	for _, kind := range []executorKind{viaWebSocket, viaSPDY} {
		b.Run(string(kind), func(b *testing.B) {
			u := execURL(cs, "bench-exec", "app", []string{"true"}, false, false)
			for b.Loop() {
				ex := executor(b, srv.RESTConfig, kind, u)
				if err := ex.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: io.Discard, Stderr: io.Discard}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPortForward measures port-forward throughput (MB/s, client to
// pod) against a simulated server: each iteration opens a connection
// through the forward to a redis container, sends 4 MiB of lines and a
// PING, and waits for its +PONG.
func BenchmarkPortForward(b *testing.B) {
	srv, cs, _ := streamsCluster(b, "bench-fwd-base")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-redis", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: "minik-node-1", Containers: []corev1.Container{{
			Name: "redis", Image: "redis:7", Ports: []corev1.ContainerPort{{ContainerPort: 6379}},
		}}},
	}
	if _, err := cs.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := cs.CoreV1().Pods("default").Get(context.Background(), "bench-redis", metav1.GetOptions{})
		if err == nil && isReady(p) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("redis not ready: %s", statusSummary(p))
		}
		time.Sleep(20 * time.Millisecond)
	}
	line := strings.Repeat("x", 1023) + "\n"
	payload := bytes.Repeat([]byte(line), 4096) // 4 MiB
	for _, kind := range []executorKind{viaSPDY, viaWebSocket} {
		b.Run(string(kind), func(b *testing.B) {
			ports, stop := forward(b, srv.RESTConfig, cs, "bench-redis", kind, "0:6379")
			defer stop()
			addr := fmt.Sprintf("127.0.0.1:%d", ports[0].Local)
			b.SetBytes(int64(len(payload)))
			for b.Loop() {
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := conn.Write(payload); err != nil {
					b.Fatal(err)
				}
				if _, err := io.WriteString(conn, "PING\r\n"); err != nil {
					b.Fatal(err)
				}
				reply, err := bufio.NewReader(conn).ReadString('\n')
				if err != nil || reply != "+PONG\r\n" {
					b.Fatalf("reply %q, %v", reply, err)
				}
				conn.Close()
			}
		})
	}
}
