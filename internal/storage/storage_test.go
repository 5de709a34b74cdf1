package storage_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"minik/internal/etcd"
	"minik/internal/storage"
)

func newStore(t *testing.T) (*storage.Store, *etcd.Etcd) {
	t.Helper()
	e, err := etcd.Start(context.Background(), etcd.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return storage.New(e.Client), e
}

func TestKeysFollowKubeApiserversLayout(t *testing.T) {
	for _, c := range []struct{ res, ns, name, want string }{
		{"pods", "demo", "web", "/registry/pods/demo/web"},
		{"nodes", "", "n1", "/registry/nodes/n1"},
		{"pods", "demo", "", "/registry/pods/demo/"},
		{"pods", "", "", "/registry/pods/"},
	} {
		if got := storage.Key(c.res, c.ns, c.name); got != c.want {
			t.Errorf("Key(%q,%q,%q) = %q, want %q", c.res, c.ns, c.name, got, c.want)
		}
	}
}

func TestWritesCompareRevisions(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	rev, err := s.Create(ctx, "/registry/x/a", []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a second create finds the key", func(t *testing.T) {
		if _, err := s.Create(ctx, "/registry/x/a", []byte("2")); !errors.Is(err, storage.ErrExists) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("an update at the current revision succeeds and one at an old revision conflicts", func(t *testing.T) {
		rev2, err := s.Update(ctx, "/registry/x/a", rev, []byte("2"))
		if err != nil || rev2 <= rev {
			t.Fatalf("update: rev %d err %v", rev2, err)
		}
		if _, err := s.Update(ctx, "/registry/x/a", rev, []byte("3")); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("stale update err = %v", err)
		}
		kv, err := s.Get(ctx, "/registry/x/a")
		if err != nil || string(kv.Value) != "2" || kv.Revision != rev2 {
			t.Fatalf("get = %+v, %v", kv, err)
		}
		if _, err := s.Delete(ctx, "/registry/x/a", rev); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("stale delete err = %v", err)
		}
		if _, err := s.Delete(ctx, "/registry/x/a", rev2); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a missing key is not found for get, update and delete", func(t *testing.T) {
		if _, err := s.Get(ctx, "/registry/x/a"); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("get err = %v", err)
		}
		if _, err := s.Update(ctx, "/registry/x/a", 1, nil); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("update err = %v", err)
		}
		if _, err := s.Delete(ctx, "/registry/x/a", 1); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("delete err = %v", err)
		}
	})
}

func TestListPagesShareOneRevision(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		if _, err := s.Create(ctx, fmt.Sprintf("/registry/x/%d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	first, err := s.List(ctx, "/registry/x/", storage.ListOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Items) != 2 || first.Continue == "" || first.Remaining != 3 {
		t.Fatalf("first page %+v", first)
	}
	// A later write does not show in the pages that follow.
	if _, err := s.Create(ctx, "/registry/x/9", []byte("v")); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range first.Items {
		keys = append(keys, kv.Key)
	}
	next := first
	for next.Continue != "" {
		next, err = s.List(ctx, "/registry/x/", storage.ListOptions{Limit: 2, Continue: next.Continue})
		if err != nil {
			t.Fatal(err)
		}
		if next.Revision != first.Revision {
			t.Fatalf("page revision %d, first %d", next.Revision, first.Revision)
		}
		for _, kv := range next.Items {
			keys = append(keys, kv.Key)
		}
	}
	if fmt.Sprint(keys) != "[/registry/x/0 /registry/x/1 /registry/x/2 /registry/x/3 /registry/x/4]" {
		t.Fatalf("keys %v", keys)
	}
	if _, err := s.List(ctx, "/registry/x/", storage.ListOptions{Continue: "garbage"}); !errors.Is(err, storage.ErrBadContinue) {
		t.Fatalf("bad continue err = %v", err)
	}
}

func TestWatchStreamsChangesAndReportsCompaction(t *testing.T) {
	s, e := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rev, _ := s.Create(ctx, "/registry/x/a", []byte("1"))
	ch := s.Watch(ctx, "/registry/x/", rev-1)
	rev2, _ := s.Update(ctx, "/registry/x/a", rev, []byte("2"))
	if _, err := s.Delete(ctx, "/registry/x/a", rev2); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 3 {
		ev := <-ch
		if ev.Type == storage.Progress {
			continue
		}
		got = append(got, fmt.Sprintf("%d:%s:%v", ev.Type, ev.Object.Value, ev.Created))
	}
	if fmt.Sprint(got) != "[0:1:true 0:2:false 1:2:false]" {
		t.Fatalf("events %v", got)
	}
	cur, _ := s.CurrentRevision(ctx)
	if _, err := e.Client.Compact(ctx, cur); err != nil {
		t.Fatal(err)
	}
	ev := <-s.Watch(ctx, "/registry/x/", 1)
	if ev.Type != storage.Error || !errors.Is(ev.Err, storage.ErrCompacted) {
		t.Fatalf("watch from a compacted revision: %+v", ev)
	}
}
