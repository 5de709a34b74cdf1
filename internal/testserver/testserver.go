// Package testserver starts a real minikd for tests: embedded etcd in a
// temporary directory, the API server on a free loopback port.
package testserver

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/server"
)

// Server is a running minikd.
type Server struct {
	// KubeconfigPath is the admin kubeconfig (context "minik").
	KubeconfigPath string
	// RESTConfig is the admin's client configuration.
	RESTConfig *rest.Config
	// DataDir is the server's data dir.
	DataDir string
	// Addr is the API server's host:port.
	Addr string
	// Etcd is a client of the server's etcd.
	Etcd *clientv3.Client

	stop func()
}

// Options choose what runs beside the API server.
type Options struct {
	// DataDir is the data dir; empty means a new temporary one.
	DataDir string
	// Controllers selects controllers as minikd's --controllers does; nil
	// runs none, so that tests of the API alone see only their own writes.
	Controllers []string
}

// Start starts minikd (the API server, no controllers) on a new temporary
// data dir and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, Options{})
}

// StartIn starts minikd on dataDir and stops it when the test ends (or
// when Stop is called).
func StartIn(t testing.TB, dataDir string) *Server {
	t.Helper()
	return StartWith(t, Options{DataDir: dataDir})
}

// StartWith starts minikd with options and stops it when the test ends (or
// when Stop is called).
func StartWith(t testing.TB, o Options) *Server {
	t.Helper()
	dataDir := o.DataDir
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	s, err := server.New(server.Config{
		DataDir: dataDir, Listen: "127.0.0.1:0", ShutdownTimeout: 5 * time.Second,
		Controllers: o.Controllers, NoControllers: o.Controllers == nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	select {
	case <-s.Ready():
	case err := <-done:
		cancel()
		t.Fatalf("minikd did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("minikd not ready after 60s")
	}
	ts := &Server{KubeconfigPath: s.KubeconfigPath(), RESTConfig: s.RESTConfig(), DataDir: dataDir, Addr: s.Addr(), Etcd: s.Etcd()}
	stopped := false
	ts.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("minikd stopped with: %v", err)
		}
	}
	t.Cleanup(ts.Stop)
	return ts
}

// Stop stops the server and waits for it to release its data dir.
func (s *Server) Stop() { s.stop() }

// Client returns an admin clientset.
func (s *Server) Client(t testing.TB) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(s.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
