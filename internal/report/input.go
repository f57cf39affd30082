// Package report turns the points of one load-test run into a report: what
// ran, the steady-state span, each stage's mean rate with a confidence
// interval, the verdict timeline, learned capacity and advice, SLO
// attainment, KV bytes and failures and the outlier instances
// (docs/report.md). It is a pure function of its Input: a recording, a
// TSDB or a test supplies the points.
package report

import (
	"github.com/ptdmon/ptdmon/internal/advice"
	"time"

	"github.com/ptdmon/ptdmon/internal/benchresult"
	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// Target is one instance of the run as it was configured or discovered.
type Target struct {
	Name   string `json:"name"`
	Role   string `json:"role"`
	Engine string `json:"engine"`
	Model  string `json:"model,omitempty"`
}

// Annotation is a marked moment of the run (start, stop, a benchmark's
// start and end).
type Annotation struct {
	Time time.Time `json:"time"`
	Text string    `json:"text"`
}

// Loss is a part of the run's source that could not be read: the file,
// why, and the span it held when known. The report is of the rest.
type Loss struct {
	File   string    `json:"file"`
	Reason string    `json:"reason"`
	From   time.Time `json:"from,omitzero"`
	To     time.Time `json:"to,omitzero"`
}

// Meta is what ran.
type Meta struct {
	// Name is the run's name (a recording's directory), the report's title.
	Name string `json:"name,omitempty"`
	// RunID names the recording's run: two reports with one id are of one
	// run, and are not compared.
	RunID       string         `json:"run_id,omitempty"`
	Targets     []Target       `json:"targets"`
	BRequest    kvsize.Request `json:"b_request"`
	ConfigHash  string         `json:"config_hash,omitempty"`
	Version     string         `json:"version,omitempty"`
	Interval    time.Duration  `json:"-"`
	Window      time.Duration  `json:"-"`
	Annotations []Annotation   `json:"annotations,omitempty"`
	// SLO are the thresholds attainment is judged against (none: no
	// attainment in the report).
	SLO slo.Thresholds `json:"slo_thresholds,omitzero"`
	// PoolRequests are the pools' own B_request the run was configured
	// with (docs/pools.md); the points carry each pool's.
	PoolRequests map[string]kvsize.Request `json:"pool_requests,omitempty"`
	// Lost are the parts of the source that could not be read.
	Lost []Loss `json:"lost,omitempty"`
	// Processes are the recording processes (a restart adds one) and
	// TargetSets the target sets in force, each from its time on.
	Processes  []Process   `json:"processes,omitempty"`
	TargetSets []TargetSet `json:"target_sets,omitempty"`
}

// Input is one run: its description and the ledger's points, oldest first.
type Input struct {
	Meta   Meta
	Points []ledger.Point
	// Buckets, when the source keeps histograms, returns their increases
	// between two instants, for SLO attainment over the steady span, or
	// why it cannot; nil leaves attainment absent.
	Buckets func(from, to time.Time) (Latencies, error)
	// Bench is the load generator's own result (docs/bench.md), nil
	// without one; Command the wrapped command's span (zero: taken from
	// record's annotations, if any).
	Bench   *benchresult.Result
	Command benchresult.Span
	// Journeys are the engines' traced requests, joined with the
	// benchmark's requests by id (none: no join).
	Journeys []journey.Record
}

// Options choose the part of the run to report and the advice's headroom.
type Options struct {
	From, To time.Time // zero: the run's first and last points
	// Headroom is the capacity the advice leaves unused (<0 or unset with
	// HeadroomSet false: advice.DefaultHeadroom).
	Headroom    float64
	HeadroomSet bool
	// Prior, if set, is an earlier run's capacities, which the report's
	// capacities start from (docs/advisor.md#capacities-across-runs).
	Prior *advice.Prior
}

// Latencies are the latency histograms' increases over a span, as the
// live ledger reads its window: the deployment's, and each pool's own
// (ledger.PoolBuckets) where the span's end has two pools or more.
type Latencies struct {
	Whole ledger.Buckets
	Pools map[string]ledger.Buckets
}
