// Package leaderelect runs a component only while it holds a Lease in
// kube-system, as kube-controller-manager and kube-scheduler do with
// --leader-elect, so that several minikd can share one etcd: one runs the
// component, the others wait to take over.
package leaderelect

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Timing is leader election's timing, as kube's --leader-elect-lease-duration,
// --leader-elect-renew-deadline and --leader-elect-retry-period. A holder
// killed without a word is replaced about LeaseDuration plus RetryPeriod
// later; one that stops cleanly releases its Lease at once.
type Timing struct {
	// LeaseDuration is how long candidates wait after the holder's last
	// renewal they saw; zero means 15 seconds.
	LeaseDuration time.Duration
	// RenewDeadline is how long the holder keeps trying to renew before it
	// stops leading; zero means 10 seconds.
	RenewDeadline time.Duration
	// RetryPeriod is how often candidates try and the holder renews; zero
	// means 2 seconds.
	RetryPeriod time.Duration
}

// WithDefaults fills the zero fields with kube's defaults.
func (t Timing) WithDefaults() Timing {
	if t.LeaseDuration <= 0 {
		t.LeaseDuration = 15 * time.Second
	}
	if t.RenewDeadline <= 0 {
		t.RenewDeadline = 10 * time.Second
	}
	if t.RetryPeriod <= 0 {
		t.RetryPeriod = 2 * time.Second
	}
	return t
}

// Validate says whether the timing can work (client-go's own rules).
func (t Timing) Validate() error {
	t = t.WithDefaults()
	if t.LeaseDuration <= t.RenewDeadline {
		return fmt.Errorf("leader election: lease duration %s must be longer than the renew deadline %s", t.LeaseDuration, t.RenewDeadline)
	}
	if float64(t.RenewDeadline) <= 1.2*float64(t.RetryPeriod) {
		return fmt.Errorf("leader election: renew deadline %s must be longer than 1.2 × the retry period %s", t.RenewDeadline, t.RetryPeriod)
	}
	return nil
}

// Run runs run while this identity holds the Lease kube-system/<name>,
// again each time it wins it back, until ctx is done; it returns once run
// has returned. The Lease is released when ctx is done.
func Run(ctx context.Context, cs kubernetes.Interface, name, identity string, t Timing, log *slog.Logger, run func(ctx context.Context) error) error {
	t = t.WithDefaults()
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, "kube-system", name,
		cs.CoreV1(), cs.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: identity})
	if err != nil {
		return fmt.Errorf("leader lock %s: %w", name, err)
	}
	for ctx.Err() == nil {
		// started and finished bracket this term's run.
		started, finished := make(chan struct{}), make(chan struct{})
		leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   t.LeaseDuration,
			RenewDeadline:   t.RenewDeadline,
			RetryPeriod:     t.RetryPeriod,
			ReleaseOnCancel: true,
			Name:            name,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					close(started)
					defer close(finished)
					log.Info("took the lease", "lease", name, "identity", identity)
					if err := run(ctx); err != nil && ctx.Err() == nil {
						log.Error("stopped", "lease", name, "err", err)
					}
				},
				OnStoppedLeading: func() { log.Info("lost the lease", "lease", name, "identity", identity) },
			},
		})
		// RunOrDie returns when leading stops (client-go starts the run
		// before it first renews): wait for the run to finish before
		// competing again, so that two runs never overlap in this process.
		select {
		case <-started:
			<-finished
		default:
		}
	}
	return nil
}
