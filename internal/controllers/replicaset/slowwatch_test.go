package replicaset_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/replicaset"
	"minik/internal/testserver"
)

// delayedWatch delivers each event of a watch delay after it arrived.
type delayedWatch struct {
	in   watch.Interface
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

func delayed(in watch.Interface, delay time.Duration) watch.Interface {
	d := &delayedWatch{in: in, out: make(chan watch.Event), stop: make(chan struct{})}
	type arrival struct {
		ev watch.Event
		at time.Time
	}
	// A goroutine stamps events as they arrive; another hands each on
	// once its time has come, in order.
	pending := make(chan arrival, 1024)
	go func() {
		defer close(pending)
		for ev := range in.ResultChan() {
			select {
			case pending <- arrival{ev, time.Now()}:
			case <-d.stop:
				return
			}
		}
	}()
	go func() {
		defer close(d.out)
		for a := range pending {
			select {
			case <-time.After(time.Until(a.at.Add(delay))):
			case <-d.stop:
				return
			}
			select {
			case d.out <- a.ev:
			case <-d.stop:
				return
			}
		}
	}()
	return d
}

func (d *delayedWatch) ResultChan() <-chan watch.Event { return d.out }

func (d *delayedWatch) Stop() {
	d.once.Do(func() {
		close(d.stop)
		d.in.Stop()
	})
}

// runWithSlowPodWatch runs the ReplicaSet controller in the test process,
// as minikd would, except that its pod informer sees every pod event
// delay late. It returns the controller's pod informer.
func runWithSlowPodWatch(t *testing.T, cfg *rest.Config, delay time.Duration) cache.SharedIndexInformer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 200, 400
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	podInformer := factory.InformerFor(&corev1.Pod{}, func(c kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return c.CoreV1().Pods("").List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				w, err := c.CoreV1().Pods("").Watch(ctx, o)
				if err != nil {
					return nil, err
				}
				return delayed(w, delay), nil
			},
		}
		return cache.NewSharedIndexInformer(lw, &corev1.Pod{}, resync, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	})
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	cc := &controllers.Context{
		Client:    cs,
		Informers: factory,
		Recorder: func(component string) record.EventRecorder {
			return broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component})
		},
		Clock:   clock.RealClock{},
		Workers: 5,
		Logger:  slog.Default(),
	}
	ctrl, err := replicaset.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctrl.Run(ctx, cc.Workers)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		factory.Shutdown()
		broadcaster.Shutdown()
	})
	return podInformer
}

func TestNoDoubleCreationUnderSlowWatch(t *testing.T) {
	const delay = 2 * time.Second
	srv := testserver.Start(t)
	cs, ctx := srv.Client(t), t.Context()
	const ns = "rs-slow-watch"
	createNamespace(ctx, t, cs, ns)
	podInformer := runWithSlowPodWatch(t, srv.RESTConfig, delay)
	cached := func() int {
		n := 0
		_ = cache.ListAllByNamespace(podInformer.GetIndexer(), ns, labels.Everything(), func(interface{}) { n++ })
		return n
	}

	created := countCreations(ctx, t, cs, ns)
	if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, newRS("web", 5, map[string]string{"app": "web"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Until the delayed events arrive, the controller's cache shows fewer
	// pods than exist. Keep waking the ReplicaSet meanwhile: each update is
	// a sync that, without expectations, would create the "missing" pods
	// again.
	var syncsWhileBehind, pokes int
	ctrltest.Wait(t, "the controller's cache to show 5 pods", func() bool {
		pokes++
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"poke":"%d"}}}`, pokes)
		if _, err := cs.AppsV1().ReplicaSets(ns).Patch(ctx, "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if created.count() == 5 && cached() < 5 {
			syncsWhileBehind++
		}
		return cached() >= 5
	})
	ctrltest.Wait(t, "status replicas 5", func() bool { return getRS(ctx, t, cs, ns, "web").Status.Replicas == 5 })
	if syncsWhileBehind == 0 {
		t.Fatal("the controller's cache was never behind the API: the delay did not bite")
	}
	if n, c := created.count(), cached(); n != 5 || c != 5 {
		t.Errorf("%d pods created (%d in the controller's cache) for 5 replicas, after %d updates while the cache was %v behind", n, c, syncsWhileBehind, delay)
	}
	t.Logf("%d ReplicaSet updates while the pod cache lagged; %d pods created", syncsWhileBehind, created.count())
}
