package metrics

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ptdmon/ptdmon/internal/advice"
)

var (
	recommendedDesc = desc("ptd_recommended_instances", "Smallest number of instances of a stage (prefill, decode) whose capacity (learned while the stage was saturated, or estimated below saturation) carries the observed arrival rate with the configured headroom (docs/advisor.md). Absent while the capacity is unknown.", "stage")
	capacityDesc    = desc(NameStageCapacity, "Requests per second a stage (prefill, kv, decode) sustains with the instances up now; basis says what it rests on: saturated, busy (rate over busy time), batch (decode's rate carried to its batch limit) (docs/advisor.md#capacity-below-saturation). Absent while unknown; a capacity known only as a bound is not exported.", "stage", "basis")
	utilisationDesc = desc(NameStageUtilisation, "Share of a stage's capacity its load used over the last minute (0..1); basis as ptd_stage_capacity_requests_per_second's, transfer_time for the KV link, whose capacity is known only as at least one transfer's speed: its utilisation is at most this (docs/advisor.md#capacity-below-saturation).", "stage", "basis")
	kvNeedDesc      = desc("ptd_recommended_kv_bytes_per_second", "KV bandwidth that carries the observed arrival rate with the configured headroom: arrival rate × B_request ÷ (1 − headroom).")
)

// AdviceCollector exports the advisor's capacities and recommendations
// for the observed arrival rate. Unknown values are left out, never 0.
type AdviceCollector struct {
	Tracker *advice.Tracker
	Logger  *slog.Logger
	// Headroom of the recommendations (<0: advice.DefaultHeadroom).
	Headroom float64
}

// Describe implements prometheus.Collector.
func (c *AdviceCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- recommendedDesc
	ch <- capacityDesc
	ch <- utilisationDesc
	ch <- kvNeedDesc
}

// Collect implements prometheus.Collector.
func (c *AdviceCollector) Collect(ch chan<- prometheus.Metric) {
	a, err := c.Tracker.Advise(advice.Query{Headroom: c.Headroom})
	if err != nil {
		if c.Logger != nil {
			c.Logger.Warn("advice", "err", err)
		}
		return
	}
	for _, s := range []advice.StageAdvice{a.Prefill, a.Decode} {
		if s.Instances.OK() {
			ch <- prometheus.MustNewConstMetric(recommendedDesc, prometheus.GaugeValue, s.Instances.V, string(s.Stage))
		}
	}
	for _, cp := range a.Capacities {
		if cp.Total.OK() {
			ch <- prometheus.MustNewConstMetric(capacityDesc, prometheus.GaugeValue, cp.Total.V, string(cp.Stage), cp.Basis)
		}
		if cp.Utilisation.OK() {
			ch <- prometheus.MustNewConstMetric(utilisationDesc, prometheus.GaugeValue, cp.Utilisation.V, string(cp.Stage), cp.Basis)
		}
	}
	if a.KV.BytesPerSecond.OK() {
		ch <- prometheus.MustNewConstMetric(kvNeedDesc, prometheus.GaugeValue, a.KV.BytesPerSecond.V)
	}
}
