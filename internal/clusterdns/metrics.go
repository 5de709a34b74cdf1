package clusterdns

import (
	"net"
	"net/http"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are CoreDNS's request metrics, under its names, served on the
// kube-dns Service's metrics port (9153) as CoreDNS's prometheus plugin
// does. Label values are bounded: query types CoreDNS does not name are
// "other", zones are the cluster domain or ".".
type metrics struct {
	registry  *prometheus.Registry
	requests  *prometheus.CounterVec
	responses *prometheus.CounterVec
	duration  *prometheus.HistogramVec
}

// monitoredTypes are the query types counted under their own name, as
// CoreDNS's vars.monitorType.
var monitoredTypes = map[uint16]bool{
	dns.TypeA: true, dns.TypeAAAA: true, dns.TypeCNAME: true, dns.TypeMX: true, dns.TypeNS: true,
	dns.TypePTR: true, dns.TypeSOA: true, dns.TypeSRV: true, dns.TypeTXT: true, dns.TypeHTTPS: true,
	dns.TypeIXFR: true, dns.TypeAXFR: true, dns.TypeANY: true,
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "coredns", Subsystem: "dns", Name: "requests_total", Help: "Counter of DNS requests made per zone, protocol and family.",
		}, []string{"server", "zone", "view", "proto", "family", "type"}),
		responses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "coredns", Subsystem: "dns", Name: "responses_total", Help: "Counter of response status codes.",
		}, []string{"server", "zone", "view", "rcode", "plugin"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "coredns", Subsystem: "dns", Name: "request_duration_seconds", Help: "Histogram of the time (in seconds) each request took per zone.",
			Buckets: prometheus.ExponentialBuckets(0.00025, 2, 16),
		}, []string{"server", "zone", "view", "type"}),
	}
	m.registry.MustRegister(m.requests, m.responses, m.duration)
	return m
}

// observe records one answered query.
func (m *metrics) observe(server, zone string, w dns.ResponseWriter, q dns.Question, rcode int, plugin string, took time.Duration) {
	proto, family := "tcp", "1"
	if _, udp := w.RemoteAddr().(*net.UDPAddr); udp {
		proto = "udp"
	}
	if a, ok := w.RemoteAddr().(*net.UDPAddr); ok && a.IP.To4() == nil {
		family = "2"
	} else if a, ok := w.RemoteAddr().(*net.TCPAddr); ok && a.IP.To4() == nil {
		family = "2"
	}
	qtype := "other"
	if monitoredTypes[q.Qtype] {
		qtype = dns.TypeToString[q.Qtype]
	}
	rc, ok := dns.RcodeToString[rcode]
	if !ok {
		rc = "other"
	}
	m.requests.WithLabelValues(server, zone, "", proto, family, qtype).Inc()
	m.responses.WithLabelValues(server, zone, "", rc, plugin).Inc()
	m.duration.WithLabelValues(server, zone, "", qtype).Observe(took.Seconds())
}

// handler serves the metrics in Prometheus' text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{MaxRequestsInFlight: 4})
}
