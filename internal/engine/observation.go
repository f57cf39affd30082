package engine

import (
	"encoding/json"
	"math"
	"strconv"
)

// Observation is the canonical content of one successful scrape of one
// instance. The Reader that returned it reuses it on its next call.
type Observation struct {
	Engine Engine
	Role   Role
	Model  string
	// SchedulerMode is the engine's scheduler mode when it reports one
	// (TensorRT-LLM: "overlap" or "non_overlap"): in overlap mode one
	// iteration's latency spans about two loops.
	SchedulerMode string

	// Counters holds one value per source series (after rank selection), so
	// the ledger can detect a reset on the series where it happens.
	Counters []CounterValue
	// Gauges are aggregated over the instance's DP groups; Has tells which
	// were present in the exposition.
	Gauges    [NumGauges]float64
	HasGauges [NumGauges]bool
	// Histograms are summed over the instance's series, bucket by bucket.
	Histograms [NumHistograms]Histogram

	// Samples is the number of samples in the body read, used or not.
	Samples int

	// Notes explain inputs that were present but could not be used.
	Notes []string
	// Ignored lists the families that were skipped, with the reason; filled
	// only when the Reader explains itself (ptdmon inspect).
	Ignored []Ignored
}

// CounterValue is the current value of one source series of a counter.
type CounterValue struct {
	Metric Metric
	Series uint64 // identity of the source series within the instance
	Value  float64
}

// Histogram is a cumulative histogram of one instance. Buckets are sorted by
// upper bound; the last one is +Inf when the engine exported it.
type Histogram struct {
	Buckets []Bucket
	Sum     float64
	Count   float64
	// HasSum and HasCount tell whether _sum and _count were exported;
	// without _count, Count is the +Inf bucket's.
	HasSum   bool
	HasCount bool
	Present  bool
}

// Bucket is one cumulative histogram bucket.
type Bucket struct {
	UpperBound float64 `json:"le"`
	Count      float64 `json:"count"`
}

// Ignored is a family the adapter skipped, and why.
type Ignored struct {
	Family string `json:"family"`
	Reason string `json:"reason"`
}

// Gauge returns the value of gauge m and whether the instance exported it.
func (o *Observation) Gauge(m Metric) (float64, bool) {
	i := m.GaugeIndex()
	return o.Gauges[i], o.HasGauges[i]
}

// CounterSum adds the current values of every source series of counter m.
func (o *Observation) CounterSum(m Metric) (float64, bool) {
	var sum float64
	found := false
	for _, c := range o.Counters {
		if c.Metric == m {
			sum += c.Value
			found = true
		}
	}
	return sum, found
}

func (o *Observation) reset() {
	o.Engine, o.Role, o.Model, o.SchedulerMode = EngineAuto, RoleUnknown, "", ""
	o.Counters = o.Counters[:0]
	o.Gauges = [NumGauges]float64{}
	o.HasGauges = [NumGauges]bool{}
	for i := range o.Histograms {
		h := &o.Histograms[i]
		h.Buckets = h.Buckets[:0]
		h.Sum, h.Count, h.Present, h.HasSum, h.HasCount = 0, 0, false, false, false
	}
	o.Samples = 0
	o.Notes = o.Notes[:0]
	o.Ignored = o.Ignored[:0]
}

// MarshalJSON writes le as Prometheus does ("+Inf"), since JSON has no infinity.
func (b Bucket) MarshalJSON() ([]byte, error) {
	le := strconv.FormatFloat(b.UpperBound, 'g', -1, 64)
	if math.IsInf(b.UpperBound, 1) {
		le = "+Inf"
	}
	return json.Marshal(struct {
		LE    string  `json:"le"`
		Count float64 `json:"count"`
	}{le, b.Count})
}
