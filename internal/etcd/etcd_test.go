package etcd

import (
	"context"
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
