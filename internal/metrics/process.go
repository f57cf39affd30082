package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ptdmon/ptdmon/internal/buildinfo"
)

// process are the collectors of ptdmon's own cost and build, exported with
// the ledger so one scrape of /metrics shows what watching the targets
// costs: the standard go_* and process_* families and ptd_build_info.
var process = []prometheus.Collector{
	collectors.NewGoCollector(),
	collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	buildInfo(),
}

func buildInfo() prometheus.Collector {
	i := buildinfo.Get()
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ptd_build_info",
		Help: "Always 1; the labels name the running build of ptdmon.",
		ConstLabels: prometheus.Labels{
			"version":   i.Version,
			"revision":  i.Revision,
			"goversion": i.GoVersion,
		},
	}, func() float64 { return 1 })
}
