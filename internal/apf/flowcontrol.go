package apf

import (
	"context"
	"fmt"
	"math"
	"sync"

	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	fcmetrics "k8s.io/apiserver/pkg/util/flowcontrol/metrics"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
)

// Unlimited is the server concurrency limit NewFlowControl takes for "no
// limit" (minikd's --max-requests-inflight=0
// --max-mutating-requests-inflight=0, which kube-apiserver refuses with
// APF): so many seats that no request ever waits, while requests are
// still classified and the configuration still digested.
const Unlimited = math.MaxInt32 / 4

// registerMetrics registers kube's apiserver_flowcontrol_* metrics in
// component-base's legacy registry once per process (promstats serves
// them beside its own).
var registerMetrics sync.Once

// FlowControl runs kube-apiserver's API Priority and Fairness dispatcher
// (k8s.io/apiserver/pkg/util/flowcontrol), fed by informers of the
// cluster's FlowSchemas and PriorityLevelConfigurations: the Dispatcher's Handle
// classifies a request and queues, executes or rejects it by its priority
// level's seats, and its config controller digests every change of the
// configuration (also user-defined objects) without restart and writes
// the FlowSchemas' Dangling conditions, field manager
// ConsumerFieldManager. Until its informers have synced it knows the
// mandatory objects only (exempt, catch-all), as kube's.
type FlowControl struct {
	// Dispatcher is what the API server's handler chain calls
	// (api.Config.FlowControl).
	Dispatcher utilflowcontrol.Interface
	factory    informers.SharedInformerFactory
}

// NewFlowControl returns the dispatcher sharing serverConcurrencyLimit
// seats (kube: --max-requests-inflight + --max-mutating-requests-inflight)
// among the Limited priority levels by their nominalConcurrencyShares,
// lending and borrowing as kube does. cs must be served as exempt (a
// system:masters client), as kube-apiserver's loopback client.
func NewFlowControl(cs kubernetes.Interface, serverConcurrencyLimit int) (*FlowControl, error) {
	if serverConcurrencyLimit <= 0 {
		return nil, fmt.Errorf("apf: server concurrency limit %d: must be positive", serverConcurrencyLimit)
	}
	registerMetrics.Do(fcmetrics.Register)
	f := informers.NewSharedInformerFactory(cs, 0)
	return &FlowControl{
		Dispatcher: utilflowcontrol.New(f, cs.FlowcontrolV1(), serverConcurrencyLimit),
		factory:    f,
	}, nil
}

// Run starts the informers and the config controller and blocks until ctx
// is done, then stops them. Requests may be handled before and after.
func (fc *FlowControl) Run(ctx context.Context) error {
	fc.factory.Start(ctx.Done())
	defer fc.factory.Shutdown()
	// It returns an error only when stopped before its informers synced.
	if err := fc.Dispatcher.Run(ctx.Done()); err != nil && ctx.Err() == nil {
		return fmt.Errorf("apf config controller: %w", err)
	}
	return nil
}
