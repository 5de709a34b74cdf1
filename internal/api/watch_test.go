package api_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"minik/internal/testserver"
)

// recorder records informer notifications in order.
type recorder struct {
	mu  sync.Mutex
	log []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, s)
}

func (r *recorder) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestInformerSeesEveryChangeInOrder(t *testing.T) {
	srv := testserver.Start(t)
	for _, enc := range []string{"json", "protobuf"} {
		t.Run("over "+enc, func(t *testing.T) {
			var cs kubernetes.Interface = srv.Client(t)
			if enc == "protobuf" {
				cs = protobufClient(t, srv.RESTConfig)
			}
			ns := "inf-" + enc
			namespace(t, cs, ns)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
			inf := f.Core().V1().ConfigMaps().Informer()
			rec := &recorder{}
			_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc: func(o interface{}) { rec.add("add " + o.(*corev1.ConfigMap).Name) },
				UpdateFunc: func(_, o interface{}) {
					cm := o.(*corev1.ConfigMap)
					rec.add("update " + cm.Name + "=" + cm.Data["v"])
				},
				DeleteFunc: func(o interface{}) {
					if cm, ok := o.(*corev1.ConfigMap); ok {
						rec.add("delete " + cm.Name)
					}
				},
			})
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			f.Start(ctx.Done())
			if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
				t.Fatal("informer never synced")
			}
			var want []string
			want = append(want, "add before")
			cms := cs.CoreV1().ConfigMaps(ns)
			for i := 0; i < 5; i++ {
				name := fmt.Sprintf("cm-%d", i)
				if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				want = append(want, "add "+name)
				cm, _ := cms.Get(ctx, name, metav1.GetOptions{})
				cm.Data = map[string]string{"v": strconv.Itoa(i)}
				if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				want = append(want, fmt.Sprintf("update %s=%d", name, i))
				if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				want = append(want, "delete "+name)
			}
			waitFor(t, "every notification", func() bool { return len(rec.snapshot()) >= len(want) })
			got := rec.snapshot()
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("notifications\n got %v\nwant %v", got, want)
			}
		})
	}
}

func TestWatchResumesFromResourceVersion(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	cs := srv.Client(t)
	namespace(t, cs, "w")
	cms := cs.CoreV1().ConfigMaps("w")
	first, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "one"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "two"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Run("a watch from a resourceVersion sends only later changes", func(t *testing.T) {
		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		ev := <-w.ResultChan()
		if ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "two" {
			t.Fatalf("first event %v %v", ev.Type, ev.Object)
		}
	})
	t.Run("a watch-list sends the initial state then the closing bookmark", func(t *testing.T) {
		w, err := cms.Watch(ctx, metav1.ListOptions{SendInitialEvents: ptrTo(true), AllowWatchBookmarks: true, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		var names []string
		for ev := range w.ResultChan() {
			if ev.Type == watch.Bookmark {
				cm := ev.Object.(*corev1.ConfigMap)
				if cm.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
					t.Fatalf("bookmark without the initial-events-end annotation: %v", cm.Annotations)
				}
				break
			}
			names = append(names, ev.Object.(*corev1.ConfigMap).Name)
		}
		if fmt.Sprint(names) != "[one two]" {
			t.Fatalf("initial events for %v", names)
		}
	})
	t.Run("a compacted resourceVersion answers 410 Gone", func(t *testing.T) {
		last, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "three"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rev, _ := strconv.ParseInt(last.ResourceVersion, 10, 64)
		if _, err := srv.Etcd.Compact(ctx, rev); err != nil {
			t.Fatal(err)
		}
		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		ev := <-w.ResultChan()
		if ev.Type != watch.Error {
			t.Fatalf("event %v, want ERROR", ev.Type)
		}
		if err := apierrors.FromObject(ev.Object); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			t.Fatalf("error event %v, want 410 Expired", err)
		}
	})
}

func ptrTo[T any](v T) *T { return &v }

// TestInformerResumesAndRelists drops the informer's watch every second
// (timeoutSeconds=1) and compacts etcd's history while it is away: the
// reflector must resume from its last resourceVersion and, once that is
// compacted, relist after the 410 — and its cache must end equal to the
// server's state.
func TestInformerResumesAndRelists(t *testing.T) {
	srv := testserver.Start(t)
	cs := srv.Client(t)
	namespace(t, cs, "rl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cms := cs.CoreV1().ConfigMaps("rl")
	var lists, watches atomic.Int32
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			lists.Add(1)
			return cms.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			watches.Add(1)
			if o.SendInitialEvents != nil && *o.SendInitialEvents {
				// client-go's watch-list: a list by other means.
				lists.Add(1)
			}
			o.TimeoutSeconds = ptrTo[int64](1)
			return cms.Watch(ctx, o)
		},
	}
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	r := cache.NewReflector(lw, &corev1.ConfigMap{}, store, 0)
	go r.Run(ctx.Done())

	write := func(i int) {
		name := fmt.Sprintf("cm-%d", i%4)
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"i": fmt.Sprint(i)}}, metav1.CreateOptions{})
		} else if err == nil {
			cm.Data = map[string]string{"i": fmt.Sprint(i)}
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	waitFor(t, "the watch to be dropped and resumed", func() bool { write(i); i++; time.Sleep(20 * time.Millisecond); return watches.Load() >= 3 })
	listsBefore := lists.Load()
	write(i)
	i++
	// Writes elsewhere move the revision on without the reflector seeing
	// them; compacting to it makes the reflector's resume point too old.
	for j := 0; j < 3; j++ {
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "bump-"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rev, err := srv.Etcd.Get(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Etcd.Compact(ctx, rev.Header.Revision); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a relist after 410", func() bool { return lists.Load() > listsBefore })
	write(i)
	want, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the cache to match the server", func() bool {
		for _, cm := range want.Items {
			got, ok, _ := store.GetByKey("rl/" + cm.Name)
			if !ok || got.(*corev1.ConfigMap).ResourceVersion != cm.ResourceVersion {
				return false
			}
		}
		return len(store.List()) == len(want.Items)
	})
}
