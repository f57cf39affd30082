package slo

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Where a whole request's latency comes from (Metric.Source), best first
// (docs/advisor.md#the-whole-requests-slo).
const (
	// SourceRouter: the router's histogram, the latency its clients see.
	SourceRouter = "router"
	// SourceArrival: decode instances that time the request from its
	// arrival (engine.Adapter.DecodeFromArrival).
	SourceArrival = "decode from arrival"
	// SourceDecode: ITL, whose every interval is on decode whatever leg
	// timing the engine uses.
	SourceDecode = "decode"
	// SourceLegs: the prefill leg and the decode leg, each timed by its
	// own instances, added as a bound.
	SourceLegs = "prefill leg + decode leg (bound)"
	// SourceRouterLegs: the router's own time (its queue, its
	// preprocessing, its hand-over between the legs) added to the two
	// legs, as a bound.
	SourceRouterLegs = "router phase + " + SourceLegs
	// SourceRouterArrival: the router's own time added to what the decode
	// instances time from the request's arrival at the engines, as a
	// bound.
	SourceRouterArrival = "router phase + " + SourceArrival + " (bound)"
)

// Latencies are the TTFT, ITL and E2E histograms of some instances, one
// per instance.
type Latencies struct {
	TTFT, ITL, E2E []Hist
}

// RequestInput is what a window holds about whole requests: the routers'
// histograms, the decode instances that time from the arrival, and the two
// legs of engines that split a request in two (a prefill leg, then a decode
// leg that starts at the hand-over).
type RequestInput struct {
	Router, Arrival       Latencies
	PrefillLeg, DecodeLeg Latencies
	// RouterTime is the routers' own time that lies outside both legs,
	// one entry per part (the queue before dispatch, preprocessing, the
	// hand-over between the legs), each one histogram per router
	// instance. It adds to the legs' TTFT and E2E.
	RouterTime [][]Hist
	// Rate is the requests/s completed in the window.
	Rate    float64
	Seconds float64
}

// Bound is what the legs' histograms say of the fraction of whole requests
// within a threshold: the legs are timed apart, so only the distribution of
// each is known, and the fraction of their sum lies between Min and Max
// whatever their dependence (Makarov's bounds) and however the
// observations spread inside a bucket (only the buckets' exact counts are
// used: a leg as steady as a decode of fixed length defeats the even
// spread that interpolation assumes). Time no component measures lowers
// the true fraction, so Max holds while Min may be a little high.
type Bound struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// Observations are the decode leg's: the requests that finished it.
	Observations float64 `json:"observations"`
}

// cdf is the fraction of h's observations ≤ s that the buckets prove: the
// count at the largest bound ≤ s; or, high, the fraction they allow: the
// count at the smallest bound ≥ s. Latencies are never negative.
func cdf(h Hist, s float64, high bool) float64 {
	if s < 0 {
		return 0
	}
	i := sort.SearchFloat64s(h.Bounds, s) // first bound ≥ s
	if !high && h.Bounds[i] != s {
		if i == 0 {
			return 0
		}
		i--
	}
	return h.Counts[i] / h.Total()
}

// SumBoundOf bounds the fraction of X₁ + … + Xₙ ≤ t from the histogram of
// each alone: for splits s₁ + … + sₙ = t, {every Xᵢ ≤ sᵢ} ⊂ {ΣXᵢ ≤ t} ⊂
// {some Xᵢ ≤ sᵢ}, so the fraction is at least ΣFᵢ(sᵢ) − (n−1) and at most
// ΣFᵢ(sᵢ). Any split gives a bound; sumBound tries those that give the
// best. Observations are the last part's.
func SumBoundOf(hs []Hist, t float64) (Bound, error) {
	if len(hs) == 0 {
		return Bound{}, fmt.Errorf("no histogram to add")
	}
	for _, h := range hs {
		if err := h.Check(); err != nil {
			return Bound{}, err
		}
		if h.Total() <= 0 {
			return Bound{}, fmt.Errorf("no observations in the window")
		}
	}
	if math.IsNaN(t) || math.IsInf(t, 0) || t < 0 {
		return Bound{}, fmt.Errorf("threshold %g: want a finite threshold ≥ 0", t)
	}
	// The splits tried are the product of every part's bounds but the
	// last's: the part with the most goes last.
	parts := slices.Clone(hs)
	most := 0
	for i, h := range parts {
		if len(h.Bounds) > len(parts[most].Bounds) {
			most = i
		}
	}
	parts[most], parts[len(parts)-1] = parts[len(parts)-1], parts[most]
	lo, hi := sumBound(parts, t)
	return Bound{Min: lo, Max: hi, Observations: hs[len(hs)-1].Total()}, nil
}

// sumBound is SumBoundOf's bounds, the first part split off the rest, s
// for the first and t−s for the rest. The proven fraction of the first is
// a step up at each of its bounds and the rest's lower bound does not fall
// as t−s grows, so the lower bound is best at the first's bounds; the
// allowed fraction of the first steps up just after each bound and the
// rest's upper bound does not fall as t−s grows, so the upper bound is
// best at the first's bounds and at t. Both are exact for the rest by
// induction, which keeps the splits to one part's bounds at a time.
func sumBound(hs []Hist, t float64) (lo, hi float64) {
	x := hs[0]
	if len(hs) == 1 {
		return cdf(x, t, false), cdf(x, t, true)
	}
	rest := hs[1:]
	// Latencies are not negative: the sum is within t only if the first
	// part is and the rest's sum is.
	rlo, rhi := sumBound(rest, t)
	lo = math.Max(0, cdf(x, 0, false)+rlo-1)
	hi = math.Min(cdf(x, t, true), rhi)
	for _, s := range x.Bounds {
		if s > t {
			break
		}
		rlo, rhi := sumBound(rest, t-s)
		lo = math.Max(lo, cdf(x, s, false)+rlo-1)
		hi = math.Min(hi, cdf(x, s, true)+rhi)
	}
	return lo, math.Min(1, hi)
}

// total is the number of observations over the instances.
func total(hs []Hist) float64 {
	n := 0.0
	for _, h := range hs {
		n += h.Total()
	}
	return n
}

// requestMetric is one SLO of the whole request, from the best source the
// window has; rt is the routers' own time (routerTime), which adds to the
// engines' TTFT and E2E.
func requestMetric(name string, t float64, in RequestInput, rt []Hist) Metric {
	pick := func(l Latencies) []Hist {
		switch name {
		case "ttft":
			return l.TTFT
		case "itl":
			return l.ITL
		}
		return l.E2E
	}
	m := Metric{Name: name, Threshold: t}
	measured := []struct {
		source string
		hs     []Hist
	}{{SourceRouter, pick(in.Router)}, {SourceArrival, pick(in.Arrival)}}
	if name == "itl" {
		measured = append(measured, struct {
			source string
			hs     []Hist
		}{SourceDecode, append(append([]Hist(nil), in.Arrival.ITL...), in.DecodeLeg.ITL...)})
	}
	for _, c := range measured {
		if total(c.hs) <= 0 {
			continue
		}
		if c.source == SourceArrival && name != "itl" && len(rt) > 0 {
			// The decode instances time from the request's arrival at the
			// engines, after the router's own time.
			return boundMetric(m, slices.Concat(rt, []Hist{Merge(c.hs...)}), SourceRouterArrival)
		}
		w, err := FractionOf(c.hs, t)
		if err != nil {
			m.Absent = fmt.Sprintf("%s %s histogram: %v", c.source, name, err)
			return m
		}
		m.Within, m.Source = &w, c.source
		return m
	}
	p, d := pick(in.PrefillLeg), pick(in.DecodeLeg)
	switch {
	case name == "itl":
		m.Absent = "no decode instance exports the ITL histogram, and no router does"
	case len(d) == 0 && len(p) == 0:
		m.Absent = fmt.Sprintf("no router and no engine exports the %s histogram", strings.ToUpper(name))
	case len(p) == 0:
		m.Absent = fmt.Sprintf("the decode instances time the decode leg only, and no prefill instance exports the %s histogram of the prefill leg", strings.ToUpper(name))
	case len(d) == 0:
		m.Absent = fmt.Sprintf("no decode instance exports the %s histogram of the decode leg", strings.ToUpper(name))
	default:
		if len(rt) > 0 {
			return boundMetric(m, slices.Concat(rt, []Hist{Merge(p...), Merge(d...)}), SourceRouterLegs)
		}
		return boundMetric(m, []Hist{Merge(p...), Merge(d...)}, SourceLegs)
	}
	return m
}

// routerTime is one histogram per part of the routers' own time that has
// observations in the window, each merged over the router instances.
func routerTime(in RequestInput) []Hist {
	var out []Hist
	for _, part := range in.RouterTime {
		if total(part) > 0 {
			out = append(out, Merge(part...))
		}
	}
	return out
}

// boundMetric is m bounded over parts added up, from source.
func boundMetric(m Metric, parts []Hist, source string) Metric {
	b, err := SumBoundOf(parts, m.Threshold)
	if err != nil {
		m.Absent = fmt.Sprintf("%s of %s: %v", strings.ToUpper(m.Name), source, err)
		return m
	}
	m.Bound, m.Source = &b, source
	return m
}

// AttainRequest is the attainment of th by whole requests: each SLO from
// the router where it measures it, else from decode instances that time
// from the arrival, else as a bound over the two legs. The decode leg alone
// is never taken for the request.
func AttainRequest(th Thresholds, in RequestInput) (Attainment, error) {
	if err := th.Check(); err != nil {
		return Attainment{}, err
	}
	a := Attainment{Rate: in.Rate}
	rt := routerTime(in) // merged once, for TTFT and E2E
	for _, x := range []struct {
		name string
		t    float64
	}{{"ttft", th.TTFT}, {"itl", th.ITL}, {"e2e", th.E2E}} {
		if x.t > 0 {
			a.Metrics = append(a.Metrics, requestMetric(x.name, x.t, in, rt))
		}
	}
	a.joint()
	return a, nil
}

// joint sets the joint fraction and goodput from the metrics: the
// independent product where every SLO is measured, and Fréchet's bounds
// over the metrics' own bounds (a measured fraction is its own bound).
func (a *Attainment) joint() {
	a.Joint, a.JointMin, a.JointMax, a.Bounded = 0, 0, 0, false
	a.Goodput, a.GoodputMin, a.GoodputMax = 0, 0, 0
	lo, hi, prod, sum := []float64{}, 1.0, 1.0, 0.0
	for _, m := range a.Metrics {
		switch {
		case m.Within != nil:
			lo = append(lo, m.Within.Fraction)
			hi = math.Min(hi, m.Within.Fraction)
			prod *= m.Within.Fraction
		case m.Bound != nil:
			lo = append(lo, m.Bound.Min)
			hi = math.Min(hi, m.Bound.Max)
			a.Bounded = true
		default:
			a.Absent = "goodput needs every SLO's fraction; some are absent"
			return
		}
	}
	a.Absent = ""
	for _, f := range lo {
		sum += f
	}
	a.JointMin, a.JointMax = math.Max(0, sum-float64(len(lo)-1)), hi
	a.GoodputMin, a.GoodputMax = a.Rate*a.JointMin, a.Rate*a.JointMax
	if !a.Bounded {
		a.Joint, a.Goodput = prod, a.Rate*prod
	}
}

// Mix is the attainment of several pools' requests taken together: each
// SLO's fraction (or bound) weighted by the pool's observations, and the
// goodput their sum. A pool where an SLO is absent leaves it absent, with
// the pool's name and reason; a pool that bounds it makes it a bound.
func Mix(names []string, parts []Attainment) Attainment {
	if len(parts) == 1 {
		return parts[0]
	}
	var out Attainment
	goodput, bounded := 0.0, false
	for _, p := range parts {
		out.Rate += p.Rate
		goodput += p.Goodput
		bounded = bounded || p.Bounded
	}
	if len(parts) == 0 {
		return out
	}
	for j, first := range parts[0].Metrics {
		out.Metrics = append(out.Metrics, mixMetric(names, parts, j, first))
	}
	out.joint()
	if out.Absent == "" && !bounded && !out.Bounded {
		out.Goodput = goodput
		if out.Rate > 0 {
			out.Joint = goodput / out.Rate
		}
	}
	return out
}

// mixMetric is SLO j over the pools, weighted by their observations.
func mixMetric(names []string, parts []Attainment, j int, first Metric) Metric {
	out := Metric{Name: first.Name, Threshold: first.Threshold}
	var lo, hi, n float64
	atLeast, bound := false, false
	var sources []string
	for i, p := range parts {
		if j >= len(p.Metrics) {
			out.Absent = fmt.Sprintf("pool %s: not evaluated", names[i])
			return out
		}
		m := p.Metrics[j]
		switch {
		case m.Within != nil:
			lo += m.Within.Fraction * m.Within.Total
			hi += m.Within.Fraction * m.Within.Total
			n += m.Within.Total
			atLeast = atLeast || m.Within.AtLeast
		case m.Bound != nil:
			lo += m.Bound.Min * m.Bound.Observations
			hi += m.Bound.Max * m.Bound.Observations
			n += m.Bound.Observations
			bound = true
		default:
			out.Absent = fmt.Sprintf("pool %s: %s", names[i], m.Absent)
			return out
		}
		if !slices.Contains(sources, m.Source) {
			sources = append(sources, m.Source)
		}
	}
	if n <= 0 {
		out.Absent = "no observations in the window"
		return out
	}
	sort.Strings(sources)
	out.Source = strings.Join(sources, ", ")
	if bound {
		out.Bound = &Bound{Min: lo / n, Max: hi / n, Observations: n}
	} else {
		out.Within = &Within{Fraction: lo / n, Total: n, AtLeast: atLeast}
	}
	return out
}
