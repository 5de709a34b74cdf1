package nodeagent

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsHandler is the node's /metrics, as the kubelet's: what the e2e
// suite and monitoring scrape through nodes/proxy. It reports the
// kubelet's gauges minik's node knows: kubelet_node_name and
// kubelet_running_pods.
func (n *node) metricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "kubelet_node_name", Help: "[ALPHA] The node's name. The count is always 1.",
			ConstLabels: prometheus.Labels{"node": n.name},
		}, func() float64 { return 1 }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "kubelet_running_pods", Help: "[ALPHA] Number of pods that have a running pod sandbox",
		}, func() float64 {
			n.mu.Lock()
			defer n.mu.Unlock()
			return float64(len(n.workers))
		}),
	)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
