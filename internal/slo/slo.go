// Package slo computes SLO attainment from the engines' latency histograms:
// the fraction of observations within a threshold (exact at a bucket bound,
// linearly interpolated inside a bucket, as PromQL's histogram_quantile
// reads buckets), goodput, and which phase's time dominates the misses
// (docs/advisor.md#slo-attainment). Pure functions over cumulative buckets.
package slo

import (
	"fmt"
	"math"
	"sort"
)

// Hist is a cumulative histogram over a window: the increase of each bucket
// (sorted by upper bound, the last one +Inf), and of _sum and _count.
type Hist struct {
	Bounds []float64
	Counts []float64
	Sum    float64
	Count  float64
}

// Total is the number of observations (the +Inf bucket).
func (h Hist) Total() float64 {
	if len(h.Counts) == 0 {
		return 0
	}
	return h.Counts[len(h.Counts)-1]
}

// Check reports a histogram the fraction cannot be read from.
func (h Hist) Check() error {
	n := len(h.Bounds)
	switch {
	case n == 0:
		return fmt.Errorf("no buckets")
	case len(h.Counts) != n:
		return fmt.Errorf("%d bounds but %d counts", n, len(h.Counts))
	case !math.IsInf(h.Bounds[n-1], 1):
		return fmt.Errorf("no +Inf bucket")
	}
	for i, c := range h.Counts {
		if c < 0 || math.IsNaN(c) || math.IsInf(c, 0) {
			return fmt.Errorf("count %g at le=%g", c, h.Bounds[i])
		}
	}
	for i := 1; i < n; i++ {
		if !(h.Bounds[i] > h.Bounds[i-1]) {
			return fmt.Errorf("bounds not increasing at %g", h.Bounds[i])
		}
		if h.Counts[i] < h.Counts[i-1] {
			return fmt.Errorf("counts not cumulative at le=%g", h.Bounds[i])
		}
	}
	return nil
}

// Within is the fraction of observations ≤ a threshold.
type Within struct {
	Fraction float64 `json:"fraction"`
	// Exact is true when the threshold is a bucket bound (or below zero);
	// otherwise the fraction is interpolated inside the bucket holding it.
	Exact bool `json:"exact"`
	// AtLeast is true when the threshold lies above the last finite bound:
	// the observations in the +Inf bucket cannot be placed, so the fraction
	// is that of the last finite bound, a lower bound.
	AtLeast bool    `json:"at_least,omitempty"`
	Total   float64 `json:"observations"`
}

// Fraction returns the fraction of h's observations ≤ t. Inside a bucket
// (lo, hi] the observations are taken as spread evenly, the assumption
// histogram_quantile makes; the first bucket's lower bound is 0 when its
// upper bound is positive. An empty histogram has no fraction.
func Fraction(h Hist, t float64) (Within, error) {
	if err := h.Check(); err != nil {
		return Within{}, err
	}
	if math.IsNaN(t) {
		return Within{}, fmt.Errorf("threshold is NaN")
	}
	total := h.Total()
	if total <= 0 {
		return Within{}, fmt.Errorf("no observations in the window")
	}
	w := Within{Total: total}
	n := len(h.Bounds)
	i := sort.SearchFloat64s(h.Bounds, t) // first bound ≥ t
	switch {
	case h.Bounds[i] == t:
		w.Fraction, w.Exact = h.Counts[i]/total, true
	case i == n-1:
		w.Fraction, w.AtLeast = h.Counts[n-2]/total, true
		if n == 1 {
			w.Fraction = 0
		}
	case i == 0 && (h.Bounds[0] <= 0 || t < 0):
		// Below the first bound, which has no lower bound to interpolate
		// from when it is not positive; nothing lies below 0.
		w.Exact = true
	default:
		lo, below := 0.0, 0.0
		if i > 0 {
			lo, below = h.Bounds[i-1], h.Counts[i-1]
		}
		hi := h.Bounds[i]
		w.Fraction = (below + (t-lo)/(hi-lo)*(h.Counts[i]-below)) / total
	}
	return w, nil
}

// FractionOf is the fraction within t over several instances: Σ of each
// one's observations within t (read in its own buckets) ÷ Σ of their
// observations, which is what summing the per-instance rates in PromQL
// gives. Instances without observations are left out; without any, there
// is no fraction.
func FractionOf(hs []Hist, t float64) (Within, error) {
	out := Within{Exact: true}
	var within float64
	for i, h := range hs {
		if h.Total() <= 0 {
			if err := h.Check(); err != nil {
				return Within{}, fmt.Errorf("instance %d: %w", i, err)
			}
			continue
		}
		w, err := Fraction(h, t)
		if err != nil {
			return Within{}, fmt.Errorf("instance %d: %w", i, err)
		}
		within += w.Fraction * w.Total
		out.Total += w.Total
		out.Exact = out.Exact && w.Exact
		out.AtLeast = out.AtLeast || w.AtLeast
	}
	if out.Total <= 0 {
		return Within{}, fmt.Errorf("no observations in the window")
	}
	out.Fraction = within / out.Total
	return out, nil
}

// Merge adds histograms of several instances over the union of their
// bounds. Where their bounds differ (vLLM's and SGLang's do), each one's
// cumulative count at a bound it lacks is its count at its largest bound
// below, so the sum stays cumulative; a plain sum by le, as in PromQL,
// would interleave the schemes into a non-monotone histogram. The ledger's
// stage quantiles merge instances with it too.
func Merge(hs ...Hist) Hist {
	var bounds []float64
	for _, h := range hs {
		for _, b := range h.Bounds {
			j := sort.SearchFloat64s(bounds, b)
			if j < len(bounds) && bounds[j] == b {
				continue
			}
			bounds = append(bounds, 0)
			copy(bounds[j+1:], bounds[j:])
			bounds[j] = b
		}
	}
	out := Hist{Bounds: bounds, Counts: make([]float64, len(bounds))}
	for _, h := range hs {
		k, have := 0, 0.0
		for i, u := range bounds {
			for k < len(h.Bounds) && h.Bounds[k] <= u {
				have = h.Counts[k]
				k++
			}
			out.Counts[i] += have
		}
		out.Sum += h.Sum
		out.Count += h.Count
	}
	return out
}
