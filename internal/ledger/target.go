package ledger

import (
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/scrape"
)

// target is the ledger's state of one scraped instance.
type target struct {
	info   engine.Target
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
	bytesTotal   uint64 // body bytes of every scrape that returned one
	samplesTotal uint64 // samples of every body read successfully
	failures     map[scrape.Reason]uint64
	resets       uint64
	// restarts counts the resets of the request and token counters, which a process
	// starting again zeroes; a float counter's jitter (a busy-seconds
	// counter read a hair lower) is a reset but no restart.
	restarts uint64
	notes    []string

	// maxNumSeqs is the LabelMaxNumSeqs label's batch limit, 0 if none.
	maxNumSeqs int
	// seriesN is the newest observation's series per counter: the ranks
	// whose busy or idle seconds add up.
	seriesN [engine.NumCounters]int

	series   map[seriesKey]*seriesState
	scrapes  uint64                      // successful scrapes ingested, the clock of seriesState.seen
	totals   [engine.NumCounters]float64 // reset-adjusted, per metric
	hasTotal [engine.NumCounters]bool
	// kvGlobal is how this target's KV bytes enter the global KV counter
	// (kvCounted decides, tick by tick, and a library target may change).
	kvGlobal kvShare
	hists    [engine.NumHistograms]histState

	samples []sample // ring, newest at (head-1)
	head    int
	n       int
}

// restartMetric says whether a reset of m means the process started
// again: its request and token counters are integers that only a new
// process zeroes.
func restartMetric(m engine.Metric) bool {
	switch m {
	case engine.Completed, engine.RouterRequests, engine.FrontendRequests, engine.PromptTokens, engine.GenerationTokens:
		return true
	}
	return false
}

type seriesKey struct {
	metric engine.Metric
	series uint64
}

// seriesState carries one source series across scrapes. adj starts at the
// first value seen and grows by every increase, the new value after a reset
// (Prometheus semantics), so it never decreases.
type seriesState struct {
	seen     uint64 // the scrape that last carried the series
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
	// Metrics whose value in this scrape was +Inf or NaN: absent, with
	// that reason, rather than a NaN that poisons every sum it enters.
	nonFinite      [engine.NumCounters]bool
	nonFiniteGauge [engine.NumGauges]bool
	// direct: the read was the target's own exposition (Scrape.Direct).
	direct bool
}

func newTarget(in engine.Target, interval, window time.Duration) *target {
	// Enough samples to cover the window plus the instant pair, with slack
	// for scrapes that land more often than the interval.
	n := int(window/interval)*2 + 4
	return &target{
		info:       in,
		maxNumSeqs: parseMaxNumSeqs(in.Labels),
		failures:   make(map[scrape.Reason]uint64),
		series:     make(map[seriesKey]*seriesState),
		samples:    make([]sample, n),
	}
}

func (t *target) has(m engine.Metric) bool { return t.hasTotal[m] }

// newSeries counts the counter series of o that t has no state for, to
// enforce the per-target series limit before anything is ingested.
func (t *target) newSeries(o *engine.Observation) int {
	n := 0
	for _, c := range o.Counters {
		if _, ok := t.series[seriesKey{c.Metric, c.Series}]; !ok {
			n++
		}
	}
	return n
}

func (t *target) ingest(at time.Time, o *engine.Observation, direct bool, log *slog.Logger, staleAfter uint64) {
	t.engine, t.role, t.model, t.schedulerMode = o.Engine, o.Role, o.Model, o.SchedulerMode
	t.notes = append(t.notes[:0], o.Notes...)
	t.scrapes++
	s := &t.samples[t.head]
	s.nonFinite = [engine.NumCounters]bool{}
	s.nonFiniteGauge = [engine.NumGauges]bool{}
	t.seriesN = [engine.NumCounters]int{}
	for _, c := range o.Counters {
		t.seriesN[c.Metric]++
		if !finite(c.Value) {
			// Leave the series' state alone: one +Inf would make the
			// reset-adjusted total +Inf for good.
			s.nonFinite[c.Metric] = true
			continue
		}
		k := seriesKey{c.Metric, c.Series}
		st, ok := t.series[k]
		if !ok {
			t.series[k] = &seriesState{seen: t.scrapes, last: c.Value, adj: c.Value}
			t.totals[c.Metric] += c.Value
			t.hasTotal[c.Metric] = true
			continue
		}
		st.seen = t.scrapes
		inc := c.Value - st.last
		if inc < 0 {
			inc = c.Value
			t.resets++
			if restartMetric(c.Metric) {
				t.restarts++
			}
			if at.Sub(st.lastWarn) >= time.Minute {
				st.lastWarn = at
				log.Warn("counter reset", "target", t.info.Name, "metric", c.Metric.String(), "from", st.last, "to", c.Value)
			}
		}
		st.last = c.Value
		st.adj += inc
		t.totals[c.Metric] += inc
	}
	t.evict(staleAfter)
	s.t, s.direct = at, direct
	s.totals = t.totals
	s.hasTotal = t.hasTotal
	s.gauges = o.Gauges
	s.hasGauge = o.HasGauges
	for i, v := range s.gauges {
		if s.hasGauge[i] && !finite(v) {
			s.hasGauge[i], s.nonFiniteGauge[i] = false, true
		}
	}
	for m := range s.nonFinite {
		if s.nonFinite[m] {
			t.notes = append(t.notes, fmt.Sprintf("%s: a series is +Inf or NaN; the value is absent", engine.Metric(m)))
		}
	}
	for i, ok := range s.nonFiniteGauge {
		if ok {
			t.notes = append(t.notes, fmt.Sprintf("%s: +Inf or NaN; the value is absent", engine.GaugeAt(i)))
		}
	}
	for i := range o.Histograms {
		h := &o.Histograms[i]
		if h.Present && !finiteHist(h) {
			t.notes = append(t.notes, fmt.Sprintf("histogram %d: +Inf or NaN counts; the histogram is absent", i))
			s.hists[i].present = false
			continue
		}
		t.hists[i].ingest(h, &s.hists[i], &t.resets)
	}
	t.head = (t.head + 1) % len(t.samples)
	if t.n < len(t.samples) {
		t.n++
	}
}

// evict forgets counter series not seen in the last staleAfter scrapes, as
// Prometheus' staleness ends a series that left the exposition: label
// values that churn cannot grow the state without bound. The totals keep
// what the evicted series added, so they never decrease.
func (t *target) evict(staleAfter uint64) {
	for k, st := range t.series {
		if t.scrapes-st.seen >= staleAfter {
			delete(t.series, k)
		}
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func finiteHist(h *engine.Histogram) bool {
	if !finite(h.Sum) || !finite(h.Count) {
		return false
	}
	for _, b := range h.Buckets {
		if !finite(b.Count) {
			return false
		}
	}
	return true
}

// at returns the i-th newest sample (0 = newest).
func (t *target) at(i int) *sample {
	return &t.samples[(t.head-1-i+2*len(t.samples))%len(t.samples)]
}
