package registry

import (
	"context"
	"log/slog"
	"net/netip"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/utils/clock"

	"minik/internal/storage"
)

// Allocator reserves, outside an object's own key, values the object
// holds exclusively across the cluster (a Service's cluster IPs and node
// ports). The generic write path calls it around its writes.
type Allocator interface {
	// Allocate reserves what obj needs beyond what old (nil on create)
	// already holds and fills the allocated values into obj. It runs
	// after the strategy's validation and before validating admission.
	// undo releases exactly what this call reserved; the caller runs it
	// when the write does not happen. With dryRun nothing is reserved.
	Allocate(ctx context.Context, obj, old runtime.Object, dryRun bool) (undo func(), err error)
	// Release frees what old holds and obj (nil once old is deleted) does
	// not. It runs after the write succeeded.
	Release(ctx context.Context, old, obj runtime.Object)
	// Repair releases reservations no object holds and restores those an
	// object holds but lacks.
	Repair(ctx context.Context) error
}

// AllocatorConfig is what an allocator is made from.
type AllocatorConfig struct {
	// Store is where reservations live.
	Store *storage.Store
	// ServiceClusterIPRange is where Services' cluster IPs come from.
	ServiceClusterIPRange netip.Prefix
	// ServiceNodePortRange is where node ports come from.
	ServiceNodePortRange utilnet.PortRange
	// Clock tells the time.
	Clock clock.PassiveClock
	// Logger logs.
	Logger *slog.Logger
}

// Maintenance is one piece of the API server's own upkeep of a
// resource's objects (the default/kubernetes Service, allocation repair).
type Maintenance struct {
	// Name says what it keeps, for logs.
	Name string
	// Interval is how often it runs after the first time.
	Interval time.Duration
	// Required makes the server's start wait for its first run and fail
	// with it; otherwise a failed run is logged.
	Required bool
	// Run runs it once.
	Run func(ctx context.Context, env Env) error
}
