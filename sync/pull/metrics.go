package pull

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// Metrics are a pull-through mirror's Prometheus metrics, in a registry of
// their own (with the Go runtime's and the process's). A nil *Metrics
// counts nothing.
type Metrics struct {
	reg                        *prometheus.Registry
	requests                   *prometheus.CounterVec
	latency                    *prometheus.HistogramVec
	hits, misses               prometheus.Counter
	upstreamReqs, upstreamErrs prometheus.Counter
	fetches                    *prometheus.CounterVec
	fetchBytes                 prometheus.Counter
	servedBytes                *prometheus.CounterVec
	verifyFailures             prometheus.Counter
	refused                    prometheus.Counter
	refusedHits                prometheus.Counter
	clients                    *prometheus.CounterVec
	inFlight                   prometheus.Gauge
	moduleFetches              *prometheus.CounterVec
	moduleBytes                prometheus.Counter
	moduleInFlight             prometheus.Gauge
}

// NewMetrics makes the metrics and their registry.
func NewMetrics() *Metrics {
	const ns = "tfmirror_pull"
	reg := prometheus.NewRegistry()
	f := promauto.With(reg)
	counter := func(name, help string) prometheus.Counter {
		return f.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help})
	}
	counterVec := func(name, help string, labels ...string) *prometheus.CounterVec {
		return f.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help}, labels)
	}
	gauge := func(name, help string) prometheus.Gauge {
		return f.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: name, Help: help})
	}
	m := &Metrics{
		reg: reg,
		requests: counterVec("requests_total",
			"Requests answered, by kind (index, version, archive, other) and status code.", "kind", "code"),
		latency: f.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "request_duration_seconds",
			Help: "Time to answer a request, by kind.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"kind"}),
		hits:   counter("cache_hits_total", "Archives served from the cache."),
		misses: counter("cache_misses_total", "Archives served from a fetch (started or joined)."),
		upstreamReqs: counter("upstream_listings_total",
			"Listings asked of the upstream (versions, or one version's archives)."),
		upstreamErrs: counter("upstream_errors_total", "Upstream listings and fetches that failed."),
		fetches: counterVec("fetches_total",
			"Archives fetched from the upstream, by outcome (landed, failed, unlisted).", "outcome"),
		fetchBytes: counter("upstream_bytes_total", "Bytes of archives fetched from the upstream and landed."),
		servedBytes: counterVec("served_bytes_total",
			"Bytes of responses sent to clients, by kind (an archive answered with a redirect sends none).", "kind"),
		verifyFailures: counter("verification_failures_total", "Fetched archives that did not match their hashes."),
		refused:        counter("policy_refusals_total", "Requests answered 404 because the policy refuses them."),
		refusedHits: counter("refused_archive_hits_total",
			"Archive requests answered from memory as refused (they did not match their hashes lately), not fetched again."),
		clients: counterVec("client_requests_total",
			"Requests by the name of the token or client certificate that made them (serve --auth, --client-ca; never the token) and status code; \"\" without one.", "client", "code"),
		inFlight: gauge("fetches_in_flight", "Fetches running."),
		moduleFetches: counterVec("module_fetches_total",
			"Module packages fetched from where their registry says they live, by outcome (landed, failed).", "outcome"),
		moduleBytes:    counter("module_bytes_total", "Bytes of module packages fetched and landed."),
		moduleInFlight: gauge("module_fetches_in_flight", "Module fetches running."),
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

func (m *Metrics) hit(ok bool) {
	if m != nil && ok {
		m.hits.Inc()
	}
}

func (m *Metrics) miss() {
	if m != nil {
		m.misses.Inc()
	}
}

func (m *Metrics) upstreamRequest() {
	if m != nil {
		m.upstreamReqs.Inc()
	}
}

func (m *Metrics) upstreamError() {
	if m != nil {
		m.upstreamErrs.Inc()
	}
}

func (m *Metrics) client(name string, code int) {
	if m != nil {
		m.clients.WithLabelValues(name, strconv.Itoa(code)).Inc()
	}
}

// Denied counts a request the server's authorization refused (401, 403),
// by the client's name where it presented a known token.
func (m *Metrics) Denied(code int, client string) {
	if m != nil {
		m.requests.WithLabelValues("denied", strconv.Itoa(code)).Inc()
		m.client(client, code)
	}
}

func (m *Metrics) refusedHit() {
	if m != nil {
		m.refusedHits.Inc()
	}
}

func (m *Metrics) fetchStarted() {
	if m != nil {
		m.inFlight.Inc()
	}
}

func (m *Metrics) fetchEnded(done *engine.JobDone, failed error) {
	if m == nil {
		return
	}
	m.inFlight.Dec()
	switch {
	case done != nil && failed == nil:
		m.fetches.WithLabelValues("landed").Inc()
		m.fetchBytes.Add(float64(done.Bytes))
	case done != nil:
		m.fetches.WithLabelValues("unlisted").Inc()
	default:
		m.fetches.WithLabelValues("failed").Inc()
		m.upstreamErrs.Inc()
		if errors.Is(failed, hashing.ErrHashMismatch) {
			m.verifyFailures.Inc()
		}
	}
}

func (m *Metrics) moduleFetchStarted() {
	if m != nil {
		m.moduleInFlight.Inc()
	}
}

// moduleFetchEnded counts a module fetch that landed size bytes, or
// failed; a failure counts as the upstream's, as an archive's does.
func (m *Metrics) moduleFetchEnded(size int64, failed error) {
	if m == nil {
		return
	}
	m.moduleInFlight.Dec()
	if failed != nil {
		m.moduleFetches.WithLabelValues("failed").Inc()
		m.upstreamErrs.Inc()
		return
	}
	m.moduleFetches.WithLabelValues("landed").Inc()
	m.moduleBytes.Add(float64(size))
}

func (m *Metrics) request(kind string, code int, bytes int64, elapsed time.Duration, refused bool) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(kind, strconv.Itoa(code)).Inc()
	m.latency.WithLabelValues(kind).Observe(elapsed.Seconds())
	m.servedBytes.WithLabelValues(kind).Add(float64(bytes))
	if refused {
		m.refused.Inc()
	}
}
