package slo

import (
	"fmt"
	"math"
	"sort"
)

// Thresholds are the SLO bounds in seconds; 0 leaves an SLO out.
type Thresholds struct {
	TTFT float64 `yaml:"ttft" json:"ttft_seconds,omitempty"`
	ITL  float64 `yaml:"itl" json:"itl_seconds,omitempty"`
	E2E  float64 `yaml:"e2e" json:"e2e_seconds,omitempty"`
}

// Check rejects negative or non-finite thresholds and an empty set.
func (t Thresholds) Check() error {
	for _, x := range []struct {
		name string
		v    float64
	}{{"ttft", t.TTFT}, {"itl", t.ITL}, {"e2e", t.E2E}} {
		if x.v < 0 || math.IsNaN(x.v) || math.IsInf(x.v, 0) {
			return fmt.Errorf("slo %s: %g s: want a finite threshold ≥ 0", x.name, x.v)
		}
	}
	if t.TTFT == 0 && t.ITL == 0 && t.E2E == 0 {
		return fmt.Errorf("slo: no threshold set (ttft, itl, e2e)")
	}
	return nil
}

// Input is one window of the histograms of a stage's instances.
type Input struct {
	// TTFT, ITL and E2E hold one histogram per instance.
	TTFT, ITL, E2E []Hist
	// Phases are the per-phase histograms, by name: "queue", "prefill",
	// "kv_transfer", "decode" (any may be missing).
	Phases map[string]Hist
	// Rate is the requests/s the window completed (the E2E histogram's
	// _count increase ÷ the window when not given).
	Rate    float64
	Seconds float64 // the window's length
}

// Metric is the attainment of one SLO.
type Metric struct {
	Name      string  `json:"slo"`
	Threshold float64 `json:"threshold_seconds"`
	Within    *Within `json:"within,omitempty"`
	// Bound is set instead of Within where only a bound is known (the
	// whole request's SLO from its two legs, AttainRequest).
	Bound *Bound `json:"bound,omitempty"`
	// Source says what timed the latency, for the whole request's SLO
	// (SourceRouter, SourceArrival, SourceDecode, SourceLegs).
	Source string `json:"source,omitempty"`
	Absent string `json:"absent,omitempty"`
}

// Attainment is every SLO's fraction, the goodput and the misses' phases.
type Attainment struct {
	Metrics []Metric `json:"slos"`
	// Joint is the fraction within every SLO, assuming the metrics are
	// independent (the histograms are marginal: which request was slow in
	// TTFT and which in E2E is not recorded). JointMin and JointMax are
	// the bounds that hold whatever the dependence (Fréchet):
	// max(0, Σf − (k−1)) ≤ joint ≤ min f.
	Joint    float64 `json:"joint_fraction_independent"`
	JointMin float64 `json:"joint_fraction_min"`
	JointMax float64 `json:"joint_fraction_max"`
	// Goodput is Rate × Joint (req/s within all SLOs), with its bounds.
	Rate       float64 `json:"requests_per_second"`
	Goodput    float64 `json:"goodput_requests_per_second"`
	GoodputMin float64 `json:"goodput_min_requests_per_second"`
	GoodputMax float64 `json:"goodput_max_requests_per_second"`
	// Bounded: some SLO is only bounded (Metric.Bound), so Joint and
	// Goodput are not estimated; JointMin/JointMax and GoodputMin/
	// GoodputMax bound them.
	Bounded bool `json:"bounded,omitempty"`
	// Misses says which phase's time dominates the slowest requests.
	Misses *Misses `json:"misses,omitempty"`
	Absent string  `json:"absent,omitempty"`
}

// Attain computes the attainment of th over in.
func Attain(th Thresholds, in Input) (Attainment, error) {
	if err := th.Check(); err != nil {
		return Attainment{}, err
	}
	var a Attainment
	fs := []float64{}
	for _, m := range []struct {
		name string
		t    float64
		h    []Hist
	}{{"ttft", th.TTFT, in.TTFT}, {"itl", th.ITL, in.ITL}, {"e2e", th.E2E, in.E2E}} {
		if m.t == 0 {
			continue
		}
		mt := Metric{Name: m.name, Threshold: m.t}
		w, err := FractionOf(m.h, m.t)
		if err != nil {
			mt.Absent = fmt.Sprintf("%s histogram: %v", m.name, err)
		} else {
			mt.Within = &w
			fs = append(fs, w.Fraction)
		}
		a.Metrics = append(a.Metrics, mt)
	}
	a.Rate = in.Rate
	if a.Rate == 0 && in.Seconds > 0 {
		for _, h := range in.E2E {
			a.Rate += h.Total() / in.Seconds
		}
	}
	if len(fs) < len(a.Metrics) {
		a.Absent = "goodput needs every SLO's fraction; some are absent"
	} else {
		a.Joint, a.JointMin, a.JointMax = 1, 0, 1
		sum := 0.0
		for _, f := range fs {
			a.Joint *= f
			a.JointMax = math.Min(a.JointMax, f)
			sum += f
		}
		a.JointMin = math.Max(0, sum-float64(len(fs)-1))
		a.Goodput, a.GoodputMin, a.GoodputMax = a.Rate*a.Joint, a.Rate*a.JointMin, a.Rate*a.JointMax
	}
	if th.E2E > 0 && len(in.Phases) > 0 {
		if w, err := FractionOf(in.E2E, th.E2E); err == nil && w.Fraction < 1 {
			// The median of the misses, not their edge: at an attainment
			// near 0 the q-quantile would be the fastest request's phases.
			m := Dominant(in.Phases, (1+w.Fraction)/2)
			a.Misses = &m
		}
	}
	return a, nil
}

// Phase is one phase's time as the slowest requests see it.
type Phase struct {
	Name string `json:"phase"`
	// Tail is the phase's q-quantile (histogram_quantile), q being the
	// fraction of requests within the E2E SLO: the phase time of the
	// requests at the edge of the misses.
	Tail float64 `json:"tail_seconds"`
	// Mean is _sum ÷ _count over the window.
	Mean  float64 `json:"mean_seconds"`
	Share float64 `json:"share_of_tail"`
}

// Misses names the phase that dominates the slowest requests.
type Misses struct {
	Quantile float64 `json:"quantile"`
	Dominant string  `json:"dominant"`
	Phases   []Phase `json:"phases"`
	Note     string  `json:"note"`
}

// Dominant compares the phases at quantile q (the E2E attainment): the
// phase with the largest q-quantile dominates the misses. The histograms
// are marginal, so this takes the slowest requests to be slow in each
// phase alike (co-monotone phases), which the Note says.
func Dominant(phases map[string]Hist, q float64) Misses {
	m := Misses{Quantile: q, Note: "phase histograms are per phase, not per request: the misses are taken to be the slowest requests of every phase"}
	names := make([]string, 0, len(phases))
	for n := range phases {
		names = append(names, n)
	}
	sort.Strings(names)
	sum := 0.0
	for _, n := range names {
		h := phases[n]
		if h.Check() != nil || h.Total() <= 0 {
			continue
		}
		p := Phase{Name: n, Tail: Quantile(q, h)}
		if h.Count > 0 {
			p.Mean = h.Sum / h.Count
		}
		sum += p.Tail
		m.Phases = append(m.Phases, p)
	}
	best := -1.0
	for i := range m.Phases {
		if sum > 0 {
			m.Phases[i].Share = m.Phases[i].Tail / sum
		}
		if m.Phases[i].Tail > best {
			best, m.Dominant = m.Phases[i].Tail, m.Phases[i].Name
		}
	}
	return m
}

// Quantile is PromQL's histogram_quantile over h: linear inside the bucket,
// 0 as the first bucket's lower bound when its upper bound is positive, and
// the last finite bound for a rank in the +Inf bucket.
func Quantile(q float64, h Hist) float64 {
	n := len(h.Bounds)
	total := h.Total()
	if n < 2 || total <= 0 {
		return math.NaN()
	}
	rank := q * total
	i := sort.Search(n, func(i int) bool { return h.Counts[i] >= rank })
	if i == n-1 {
		return h.Bounds[n-2]
	}
	if i == 0 && h.Bounds[0] <= 0 {
		return h.Bounds[0]
	}
	lo, below := 0.0, 0.0
	if i > 0 {
		lo, below = h.Bounds[i-1], h.Counts[i-1]
	}
	in := h.Counts[i] - below
	if in <= 0 {
		return h.Bounds[i]
	}
	return lo + (h.Bounds[i]-lo)*(rank-below)/in
}
