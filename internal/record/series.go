//go:build !norecord

package record

import (
	"strconv"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/metrics"
)

// The recorded series. Samples read from an engine are named ptd_read_*
// after the canonical metric (docs/runs.md#what-is-recorded); the ledger's
// ticks are ptd_record_tick; the derived series keep the names of
// /metrics, so the generated Grafana dashboards read a recording too.
const (
	prefixRead     = "ptd_read_"
	nameScrape     = "ptd_read_scrape"        // {target, engine, role, model, scheduler_mode}: a successful read
	nameFailed     = "ptd_read_scrape_failed" // {target, reason}: a failed one (its text: ErrorsFile)
	nameOrder      = "ptd_read_scrape_order"  // {target}: ns from the last tick before it reached the ledger
	nameDuration   = "ptd_read_scrape_duration_seconds"
	nameBytes      = "ptd_read_scrape_bytes"
	nameSamples    = "ptd_read_scrape_samples"
	nameTick       = "ptd_record_tick"
	nameRun        = "ptd_record_run" // {run_id}: 1 at every tick; whose the samples are
	labelRunID     = "run_id"
	labelTarget    = "target"
	labelSeries    = "series"
	labelReason    = "reason"
	labelError     = "error" // a failure's text, in recordings of earlier versions
	labelEngine    = "engine"
	labelRole      = "role"
	labelModel     = "model"
	labelMode      = "scheduler_mode"
	labelStage     = "stage"
	labelWindow    = "window"
	labelQueue     = "queue"
	suffixBucket   = "_bucket"
	suffixSum      = "_sum"
	suffixCount    = "_count"
	suffixCounter  = "_total"
	nameStageRate  = metrics.NameStageRequests
	nameKVBytesPS  = metrics.NameKVBytesPerSecond
	nameQueue      = metrics.NameQueueRequests
	nameRunning    = "ptd_stage_requests_running"
	nameWaiting    = "ptd_stage_requests_waiting"
	nameKVRequestB = metrics.NameKVRequestBytes
)

// The value of a ptd_read_* name without its prefix: a metric and what of
// it the series holds.
type part uint8

const (
	partCounter part = iota
	partGauge
	partBucket
	partSum
	partCount
)

type readName struct {
	metric engine.Metric
	part   part
}

// readNames maps each ptd_read_* sample name to its metric; built once.
var readNames = func() map[string]readName {
	m := make(map[string]readName, engine.NumMetrics*3)
	for i := 0; i < engine.NumMetrics; i++ {
		mt := engine.Metric(i)
		switch mt.Kind() {
		case engine.KindCounter:
			m[counterName(mt)] = readName{mt, partCounter}
		case engine.KindGauge:
			m[gaugeName(mt)] = readName{mt, partGauge}
		default:
			base := prefixRead + mt.String()
			m[base+suffixBucket] = readName{mt, partBucket}
			m[base+suffixSum] = readName{mt, partSum}
			m[base+suffixCount] = readName{mt, partCount}
		}
	}
	return m
}()

func counterName(m engine.Metric) string { return prefixRead + m.String() + suffixCounter }
func gaugeName(m engine.Metric) string   { return prefixRead + m.String() }

func seriesID(s uint64) string { return strconv.FormatUint(s, 16) }

func formatLE(le float64) string { return strconv.FormatFloat(le, 'g', -1, 64) }

func parseLE(s string) (float64, error) {
	if s == "+Inf" {
		return strconv.ParseFloat("+Inf", 64)
	}
	return strconv.ParseFloat(s, 64)
}

// lbls builds a label set from name and label pairs.
func lbls(name string, kv ...string) labels.Labels {
	b := labels.NewScratchBuilder(len(kv)/2 + 1)
	b.Add(labels.MetricName, name)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			b.Add(kv[i], kv[i+1])
		}
	}
	b.Sort()
	return b.Labels()
}
