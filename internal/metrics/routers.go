package metrics

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

var (
	routerArrivalDesc = desc("ptd_router_arrival_requests_per_second",
		"Requests per second arriving at the routers of each pool, over the window (docs/pools.md#routers).", "pool", "window")
	routerRejectedDesc = desc("ptd_router_rejections_per_second",
		"Requests per second the routers of each pool answered with an error, over the window.", "pool", "window")
	routerDecisionDesc = desc("ptd_router_decisions_per_second",
		"Requests per second the routers of each pool sent to remote prefill or straight to decode (decision: remote_prefill, decode_only), where they export their P/D decision.", "pool", "decision", "window")
)

// RouterCollector exports each pool's routers: their arrival rate,
// rejections and P/D decisions. A pool without a router has none of them.
type RouterCollector struct {
	Ledger *ledger.Ledger
}

// Describe implements prometheus.Collector.
func (c *RouterCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- routerArrivalDesc
	ch <- routerRejectedDesc
	ch <- routerDecisionDesc
}

// Collect implements prometheus.Collector; absent values are left out.
func (c *RouterCollector) Collect(ch chan<- prometheus.Metric) {
	p, ok := c.Ledger.Latest()
	if !ok {
		return
	}
	w := ledger.WindowLabel(c.Ledger.Config().Window)
	emit := gaugeSender(ch)
	for _, r := range p.Routers {
		emit(routerArrivalDesc, r.Arrival, r.Pool, w)
		emit(routerRejectedDesc, r.Rejected, r.Pool, w)
		emit(routerDecisionDesc, r.RemotePrefill, r.Pool, "remote_prefill", w)
		emit(routerDecisionDesc, r.DecodeOnly, r.Pool, "decode_only", w)
	}
}

// gaugeSender returns a function that sends a value as a gauge of d with
// label values lv, leaving out an absent or non-finite one: no series
// rather than a 0.
func gaugeSender(ch chan<- prometheus.Metric) func(d *prometheus.Desc, n ledger.Num, lv ...string) {
	return func(d *prometheus.Desc, n ledger.Num, lv ...string) {
		if n.OK() && !math.IsInf(n.V, 0) && !math.IsNaN(n.V) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, n.V, lv...)
		}
	}
}
