package apf

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	"k8s.io/client-go/kubernetes"
)

// ConsumerFieldManager is the field manager of the FlowSchema status
// writes of FlowControl's config controller, as kube-apiserver's.
const ConsumerFieldManager = utilflowcontrol.ConfigConsumerAsFieldManager

// DefaultInterval is how often kube-apiserver ensures the bootstrap
// configuration again once it has been ensured at start.
const DefaultInterval = time.Minute

// Maintainer keeps the bootstrap configuration: Ensure at start, then
// every interval, as kube-apiserver's APF config producer.
type Maintainer struct {
	client   kubernetes.Interface
	interval time.Duration
	log      *slog.Logger
}

// New returns a maintainer that writes through cs, ensuring the
// bootstrap configuration every interval (DefaultInterval if 0).
func New(cs kubernetes.Interface, interval time.Duration, log *slog.Logger) *Maintainer {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Maintainer{client: cs, interval: interval, log: log}
}

// Run ensures the bootstrap configuration (retrying each second until
// it succeeds, as kube-apiserver's post-start hook does), calls ready,
// then ensures it every interval until ctx is done.
func (m *Maintainer) Run(ctx context.Context, ready func()) error {
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		if err := Ensure(ctx, m.client); err != nil {
			m.log.Error("APF bootstrap configuration", "err", err)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("apf bootstrap configuration: %w", err)
	}
	ready()
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := Ensure(ctx, m.client); err != nil && ctx.Err() == nil {
			m.log.Error("APF bootstrap configuration", "err", err)
		}
	}, m.interval)
	return nil
}
