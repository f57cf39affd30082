package reqfeed

import "github.com/prometheus/client_golang/prometheus"

// Collector exposes what the pollers did on /metrics, by source (the URL
// or the file glob).
type Collector struct{ Pollers []*Poller }

var (
	descPolls = prometheus.NewDesc("ptd_trtllm_perf_metrics_polls_total",
		"Polls of TensorRT-LLM's per-request perf metrics (otlp.trtllm_perf_metrics).", []string{"source"}, nil)
	descErrors = prometheus.NewDesc("ptd_trtllm_perf_metrics_errors_total",
		"Polls of TensorRT-LLM's per-request perf metrics that failed.", []string{"source"}, nil)
	descRecords = prometheus.NewDesc("ptd_trtllm_perf_metrics_records_total",
		"TensorRT-LLM per-request records filed in the request ledger.", []string{"source"}, nil)
	descSkipped = prometheus.NewDesc("ptd_trtllm_perf_metrics_skipped_total",
		"TensorRT-LLM per-request records or lines skipped: malformed, or not placeable on the wall clock.", []string{"source"}, nil)
)

// Describe implements prometheus.Collector.
func (c Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPolls, descErrors, descRecords, descSkipped} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c Collector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.Pollers {
		src := p.URL
		if p.Files != "" {
			src = p.Files
		}
		s := p.Stats()
		for d, v := range map[*prometheus.Desc]int64{descPolls: s.Polls, descErrors: s.Errors, descRecords: s.Records, descSkipped: s.Skipped} {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), src)
		}
	}
}
