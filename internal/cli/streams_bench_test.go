package cli

import (
	"context"
	"testing"
)

// BenchmarkExecCommand is one `minikctl exec shell -c app -- true`, in
// process, against a live minikd: pod lookup, the WebSocket session
// through the API server to the node agent, and the exit status.
func BenchmarkExecCommand(b *testing.B) {
	s := startStreamsServer(b)
	args := []string{"--kubeconfig", s.srv.KubeconfigPath, "exec", "shell", "-c", "app", "--", "true"}
	b.ResetTimer()
	for b.Loop() {
		streams, _, _, errOut := TestStreams()
		if code := Run(context.Background(), args, streams); code != 0 {
			b.Fatalf("exit %d: %s", code, errOut)
		}
	}
}
