package ledger

import (
	"log/slog"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// target is the ledger's state of one scraped instance.
type target struct {
	info   TargetInfo
	engine engine.Engine
	role   engine.Role
	model  string

	schedulerMode string

	up           bool
	lastErr      string
	lastAttempt  time.Time
	lastSuccess  time.Time
	lastDuration time.Duration
	lastBytes    int
	failures     map[string]uint64
	resets       uint64
	notes        []string

	series   map[seriesKey]*seriesState
	totals   [engine.NumCounters]float64 // reset-adjusted, per metric
	hasTotal [engine.NumCounters]bool
	hists    [engine.NumHistograms]histState

	samples []sample // ring, newest at (head-1)
	head    int
	n       int
}

type seriesKey struct {
	metric engine.Metric
	series uint64
}

// seriesState carries one source series across scrapes. adj starts at the
// first value seen and grows by every increase, the new value after a reset
// (Prometheus semantics), so it never decreases.
type seriesState struct {
	last     float64
	adj      float64
	lastWarn time.Time
}

// sample is one successful scrape, with the adjusted counters at its time.
type sample struct {
	t        time.Time
	totals   [engine.NumCounters]float64
	hasTotal [engine.NumCounters]bool
	gauges   [engine.NumGauges]float64
	hasGauge [engine.NumGauges]bool
	hists    [engine.NumHistograms]histSnap
}

func newTarget(in TargetInfo, interval, window time.Duration) *target {
	// Enough samples to cover the window plus the instant pair, with slack
	// for scrapes that land more often than the interval.
	n := int(window/interval)*2 + 4
	return &target{
		info:     in,
		failures: make(map[string]uint64),
		series:   make(map[seriesKey]*seriesState),
		samples:  make([]sample, n),
	}
}

func (t *target) has(m engine.Metric) bool { return t.hasTotal[m] }

func (t *target) ingest(at time.Time, o *engine.Observation, log *slog.Logger) {
	t.engine, t.role, t.model, t.schedulerMode = o.Engine, o.Role, o.Model, o.SchedulerMode
	t.notes = append(t.notes[:0], o.Notes...)
	for _, c := range o.Counters {
		k := seriesKey{c.Metric, c.Series}
		st, ok := t.series[k]
		if !ok {
			t.series[k] = &seriesState{last: c.Value, adj: c.Value}
			t.totals[c.Metric] += c.Value
			t.hasTotal[c.Metric] = true
			continue
		}
		inc := c.Value - st.last
		if inc < 0 {
			inc = c.Value
			t.resets++
			if at.Sub(st.lastWarn) >= time.Minute {
				st.lastWarn = at
				log.Warn("counter reset", "target", t.info.Name, "metric", c.Metric.String(), "from", st.last, "to", c.Value)
			}
		}
		st.last = c.Value
		st.adj += inc
		t.totals[c.Metric] += inc
	}
	s := &t.samples[t.head]
	s.t = at
	s.totals = t.totals
	s.hasTotal = t.hasTotal
	s.gauges = o.Gauges
	s.hasGauge = o.HasGauges
	for i := range o.Histograms {
		t.hists[i].ingest(&o.Histograms[i], &s.hists[i], &t.resets)
	}
	t.head = (t.head + 1) % len(t.samples)
	if t.n < len(t.samples) {
		t.n++
	}
}

// at returns the i-th newest sample (0 = newest).
func (t *target) at(i int) *sample {
	return &t.samples[(t.head-1-i+2*len(t.samples))%len(t.samples)]
}
