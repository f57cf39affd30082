package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

var (
	phaseDesc = desc("ptd_pool_ttft_phase_seconds",
		"Mean seconds of each phase of the time to first token of each pool over the window (phase: router, queue, prefill, bootstrap, handover, kv_transfer, first_decode_step), from its engines' phase histograms (docs/pools.md#where-ttft-goes). A phase no engine of the pool times has no series.", "pool", "phase", "window")
	ttftDesc = desc("ptd_pool_ttft_seconds",
		"Mean time to first token each pool's instances measured over the window, beside its phases (docs/pools.md#where-ttft-goes).", "pool", "window")
	prefillLegDesc = desc("ptd_pool_router_prefill_leg_seconds",
		"Mean seconds of each pool's prefill leg as its routers time it over the window (the SGLang gateway's pd_prefill_duration_seconds): queue and prefill together, so no phase of its own (docs/pools.md#where-ttft-goes).", "pool", "window")
)

// PhaseCollector exports where each pool's time to first token goes: the
// mean of each phase and the TTFT measured. Absent values are left out, so
// a phase that is not timed is no series rather than a 0 stacked into the
// others.
type PhaseCollector struct {
	Ledger *ledger.Ledger
}

// Describe implements prometheus.Collector.
func (c *PhaseCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- phaseDesc
	ch <- ttftDesc
	ch <- prefillLegDesc
}

// Collect implements prometheus.Collector.
func (c *PhaseCollector) Collect(ch chan<- prometheus.Metric) {
	p, ok := c.Ledger.Latest()
	if !ok {
		return
	}
	w := ledger.WindowLabel(c.Ledger.Config().Window)
	emit := gaugeSender(ch)
	for i := range p.Pools {
		pp := &p.Pools[i]
		for k, name := range ledger.PhaseNames {
			emit(phaseDesc, *pp.Phases.Phase(k), pp.Name, strings.TrimSuffix(name, "_seconds"), w)
		}
		emit(ttftDesc, pp.Phases.TTFT, pp.Name, w)
		emit(prefillLegDesc, pp.Phases.PrefillLeg, pp.Name, w)
	}
}
