package apf

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/client-go/tools/cache"
)

// BenchmarkClassify measures the per-request cost of the headers: a
// user's request that only the next-to-last bootstrap schema
// (global-default) matches, so that every schema before it is tried.
func BenchmarkClassify(b *testing.B) {
	fsStore := cache.NewStore(cache.MetaNamespaceKeyFunc)
	plStore := cache.NewStore(cache.MetaNamespaceKeyFunc)
	for _, pl := range append(bootstrap.MandatoryPriorityLevelConfigurations, bootstrap.SuggestedPriorityLevelConfigurations...) {
		c := pl.DeepCopy()
		c.UID = types.UID("pl-" + pl.Name)
		_ = plStore.Add(c)
	}
	for _, fs := range append(bootstrap.MandatoryFlowSchemas, bootstrap.SuggestedFlowSchemas...) {
		c := fs.DeepCopy()
		c.UID = types.UID("fs-" + fs.Name)
		_ = fsStore.Add(c)
	}
	c := &Classifier{fs: storeInformer{fsStore}, pl: storeInformer{plStore}}
	c.rebuild()
	r := &Request{User: "alice", Groups: []string{"system:authenticated"}, IsResource: true, Verb: "create",
		Resource: "configmaps", Namespace: "bench"}
	if fs, _, _ := c.Classify(r); fs != "fs-global-default" {
		b.Fatalf("classified as %s", fs)
	}
	b.ReportAllocs()
	for b.Loop() {
		c.Classify(r)
	}
}

// storeInformer is an informer reduced to its store.
type storeInformer struct{ s cache.Store }

func (i storeInformer) GetStore() cache.Store { return i.s }
