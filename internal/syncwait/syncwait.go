// Package syncwait waits for informer caches to sync with a short poll
// period. client-go's cache.WaitForCacheSync polls every 100 ms, which on
// a local control plane whose caches fill in a few milliseconds would be
// most of minikd's start-up.
package syncwait

import (
	"context"
	"time"

	"k8s.io/client-go/tools/cache"
)

// Period is how often the caches are checked.
const Period = 2 * time.Millisecond

// Synced blocks until every cache has synced (true) or ctx is done
// (false).
func Synced(ctx context.Context, synced ...cache.InformerSynced) bool {
	t := time.NewTicker(Period)
	defer t.Stop()
	for {
		all := true
		for _, s := range synced {
			if !s() {
				all = false
				break
			}
		}
		if all {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}
