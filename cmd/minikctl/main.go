// Command minikctl is the kubectl twin of minik: it reads kubeconfig like
// kubectl and talks to minikd (or any Kubernetes API server).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"minik/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.StdStreams())
	stop()
	os.Exit(code)
}
