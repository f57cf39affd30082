package otlp

import "github.com/prometheus/client_golang/prometheus"

// Collector exposes what a receiver did on /metrics.
type Collector struct{ R *Receiver }

var (
	descExports = prometheus.NewDesc("ptd_otlp_exports_total",
		"OTLP trace exports received, by outcome (accepted, invalid, too_large, refused: over the byte budget, retryable).",
		[]string{"outcome"}, nil)
	descSpans = prometheus.NewDesc("ptd_otlp_spans_total",
		"Spans of the accepted OTLP exports.", nil, nil)
	descForward = prometheus.NewDesc("ptd_otlp_forwarded_exports_total",
		"Accepted exports sent on to otlp.forward, by result (sent, failed, dropped: its queue was full).",
		[]string{"result"}, nil)
)

// Describe implements prometheus.Collector.
func (c Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descExports
	ch <- descSpans
	ch <- descForward
}

// Collect implements prometheus.Collector.
func (c Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.R.Stats()
	for outcome, v := range map[string]int64{"accepted": s.Exports, "invalid": s.Invalid, "too_large": s.TooLarge, "refused": s.Refused} {
		ch <- prometheus.MustNewConstMetric(descExports, prometheus.CounterValue, float64(v), outcome)
	}
	ch <- prometheus.MustNewConstMetric(descSpans, prometheus.CounterValue, float64(s.Spans))
	if c.R.fwd != nil {
		for result, v := range map[string]int64{"sent": s.Forwarded, "failed": s.ForwardFailed, "dropped": s.ForwardDropped} {
			ch <- prometheus.MustNewConstMetric(descForward, prometheus.CounterValue, float64(v), result)
		}
	}
}
