package etcd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEmbeddedMemberKeepsDataAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	start := time.Now()
	e, err := Start(ctx, Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ready after %s", time.Since(start))
	if _, err := e.Client.Put(ctx, "/k", "v"); err != nil {
		t.Fatal(err)
	}
	e.Close()
	e.Close()
	e, err = Start(ctx, Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r, err := e.Client.Get(ctx, "/k")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "v" {
		t.Fatalf("after restart got %v, want /k=v", r.Kvs)
	}
}

func TestEmbeddedMemberServesItsClientsOnASocketOrLoopback(t *testing.T) {
	for _, tc := range []struct {
		name, dir, scheme string
	}{
		{"a short data dir gets a unix socket", t.TempDir(), "unix://"},
		{"a data dir too long for a socket path gets a loopback port", filepath.Join(t.TempDir(), strings.Repeat("d", 110)), "http://127.0.0.1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e, err := Start(ctx, Config{DataDir: tc.dir})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if !strings.HasPrefix(e.ClientURL(), tc.scheme) {
				t.Fatalf("client URL %q, want one starting %q", e.ClientURL(), tc.scheme)
			}
			// Another client reaches the member at that URL, as a second
			// minikd given --etcd-servers does.
			other, err := Start(ctx, Config{Servers: []string{e.ClientURL()}})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			if _, err := e.Client.Put(ctx, "/k", "v"); err != nil {
				t.Fatal(err)
			}
			r, err := other.Client.Get(ctx, "/k")
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "v" {
				t.Fatalf("through %s got %v, want /k=v", e.ClientURL(), r.Kvs)
			}
		})
	}
}
