package metrics

import "github.com/prometheus/client_golang/prometheus"

var (
	poolBottleneckDesc = desc(NamePoolBottleneckStage,
		"Info metric: 1 for the stage the bottleneck verdict names now for each pool (docs/pools.md).", "pool", "stage")
	targetPoolDesc = desc("ptd_target_pool",
		"Info metric: 1 for the pool a target's label names (pool: on the target, ptd_pool or pool in file_sd; docs/pools.md), which the generated rules of the ptdmon path join on target.", "target", "pool")
)

// PoolCollector exports each pool's verdict: ptd_pool_bottleneck_stage,
// for alerts and dashboards per pool beside ptd_bottleneck_stage, the
// deployment's.
type PoolCollector struct {
	// Stages returns each pool's verdict stage by pool name.
	Stages func() map[string]string
	// Targets, if set, returns each target's pool by target name.
	Targets func() map[string]string
}

// Describe implements prometheus.Collector.
func (c *PoolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- poolBottleneckDesc
	ch <- targetPoolDesc
}

// Collect implements prometheus.Collector.
func (c *PoolCollector) Collect(ch chan<- prometheus.Metric) {
	for pool, st := range c.Stages() {
		ch <- prometheus.MustNewConstMetric(poolBottleneckDesc, prometheus.GaugeValue, 1, pool, st)
	}
	if c.Targets == nil {
		return
	}
	for target, pool := range c.Targets() {
		ch <- prometheus.MustNewConstMetric(targetPoolDesc, prometheus.GaugeValue, 1, target, pool)
	}
}
