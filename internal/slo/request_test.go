package slo

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// hist buckets samples into bounds (+Inf added).
func hist(bounds, samples []float64) Hist {
	h := Hist{Bounds: append(append([]float64(nil), bounds...), math.Inf(1))}
	h.Counts = make([]float64, len(h.Bounds))
	for _, x := range samples {
		for i, b := range h.Bounds {
			if x <= b {
				h.Counts[i]++
			}
		}
		h.Sum += x
		h.Count++
	}
	return h
}

// TestSumBoundHoldsWhateverTheCoupling draws two legs' latencies, pairs
// them into requests three ways (slowest with slowest, slowest with
// fastest, at random) and requires the true fraction of requests within t
// to lie inside the bound that the two legs' histograms alone give, for
// coarse and fine buckets and thresholds on and off a bound.
func TestSumBoundHoldsWhateverTheCoupling(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	coarse := []float64{0.5, 1, 2.5, 5, 10, 20}
	fine := []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.5, 2, 3, 4, 6, 8, 10, 15}
	for trial := range 300 {
		n := 20 + rng.IntN(200)
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i] = rng.ExpFloat64() * (0.2 + 3*rng.Float64())
			y[i] = 5 + rng.NormFloat64()
			if y[i] < 0 {
				y[i] = 0
			}
		}
		bx, by := coarse, fine
		if trial%2 == 1 {
			bx, by = fine, coarse
		}
		hx, hy := hist(bx, x), hist(by, y)
		sort.Float64s(x)
		sort.Float64s(y)
		tt := []float64{1, 2.5, 6, 7.3, 10, 30}[trial%6]
		// within fails unless every coupling's true fraction of sums
		// within tt lies in b.
		within := func(parts string, b Bound, couplings ...func(i int) float64) {
			for _, sum := range couplings {
				in := 0.0
				for i := range n {
					if sum(i) <= tt {
						in++
					}
				}
				if f := in / float64(n); f < b.Min-1e-12 || f > b.Max+1e-12 {
					t.Fatalf("trial %d: true fraction of %s %.4f outside [%.4f, %.4f] at t=%g", trial, parts, f, b.Min, b.Max, tt)
				}
			}
		}
		b, err := SumBoundOf([]Hist{hx, hy}, tt)
		if err != nil {
			t.Fatal(err)
		}
		within("two parts", b,
			func(i int) float64 { return x[i] + y[i] },
			func(i int) float64 { return x[i] + y[n-1-i] },
			func(i int) float64 { return x[i] + y[(i*7+3)%n] })
		// A third part, a router's queue in its own buckets: the sums of
		// three, coupled three ways, within SumBoundOf's bound.
		z := make([]float64, n)
		for i := range z {
			z[i] = rng.ExpFloat64() * 0.4
		}
		sort.Float64s(z)
		three := []Hist{hist([]float64{0.05, 0.1, 0.25, 0.5, 1, 2.5}, z), hx, hy}
		b3, err := SumBoundOf(three, tt)
		if err != nil {
			t.Fatal(err)
		}
		within("three parts", b3,
			func(i int) float64 { return z[i] + x[i] + y[i] },
			func(i int) float64 { return z[n-1-i] + x[i] + y[n-1-i] },
			func(i int) float64 { return z[(i*5+1)%n] + x[i] + y[(i*7+3)%n] })
		// The splits SumBoundOf tries give what every split of every
		// part's bounds gives.
		for _, c := range []struct {
			hs []Hist
			b  Bound
		}{{[]Hist{hx, hy}, b}, {three, b3}} {
			if lo, hi := everySplit(c.hs, tt); math.Abs(lo-c.b.Min) > 1e-12 || math.Abs(hi-c.b.Max) > 1e-12 {
				t.Fatalf("trial %d: bound of %d parts [%.4f, %.4f], every split gives [%.4f, %.4f]", trial, len(c.hs), c.b.Min, c.b.Max, lo, hi)
			}
		}
		if b3.Max > b.Max+1e-12 {
			t.Fatalf("trial %d: a third part raises the bound's max from %.4f to %.4f", trial, b.Max, b3.Max)
		}
	}
}

// everySplit is the sum's bound over every split at any part's bounds
// (and 0 and t), each part against the rest's bound.
func everySplit(hs []Hist, t float64) (lo, hi float64) {
	if len(hs) == 1 {
		return cdf(hs[0], t, false), cdf(hs[0], t, true)
	}
	splits := []float64{0, t}
	for _, h := range hs {
		for _, b := range h.Bounds {
			if b <= t {
				splits = append(splits, b, t-b)
			}
		}
	}
	_, rhi := everySplit(hs[1:], t)
	hi = math.Min(cdf(hs[0], t, true), rhi)
	for _, s := range splits {
		rlo, rhi := everySplit(hs[1:], t-s)
		lo = math.Max(lo, cdf(hs[0], s, false)+rlo-1)
		hi = math.Min(hi, cdf(hs[0], s, true)+rhi)
	}
	return lo, hi
}

// TestAttainRequestSources: the router first, then decode from the
// arrival, then the legs' bound; ITL from decode whatever the legs; the
// decode leg alone never stands for the request.
func TestAttainRequestSources(t *testing.T) {
	fast := hist([]float64{0.5, 1, 2}, []float64{0.1, 0.2, 0.3, 0.4})
	slow := hist([]float64{0.5, 1, 2}, []float64{5, 6, 7, 8})
	th := Thresholds{TTFT: 1, ITL: 1, E2E: 2}
	f := func(name string, in RequestInput, want map[string]string) {
		t.Helper()
		a, err := AttainRequest(th, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range a.Metrics {
			got := m.Source
			if m.Absent != "" {
				got = "absent"
			}
			if got != want[m.Name] {
				t.Errorf("%s: %s from %q (%s), want %q", name, m.Name, got, m.Absent, want[m.Name])
			}
		}
	}
	legs := RequestInput{PrefillLeg: Latencies{TTFT: []Hist{slow}, E2E: []Hist{slow}}, DecodeLeg: Latencies{TTFT: []Hist{fast}, ITL: []Hist{fast}, E2E: []Hist{fast}}}
	f("legs", legs, map[string]string{"ttft": SourceLegs, "itl": SourceDecode, "e2e": SourceLegs})
	routed := legs
	routed.Router = Latencies{TTFT: []Hist{slow}}
	f("router", routed, map[string]string{"ttft": SourceRouter, "itl": SourceDecode, "e2e": SourceLegs})
	f("decode leg alone", RequestInput{DecodeLeg: legs.DecodeLeg}, map[string]string{"ttft": "absent", "itl": SourceDecode, "e2e": "absent"})
	f("from arrival", RequestInput{Arrival: legs.DecodeLeg}, map[string]string{"ttft": SourceArrival, "itl": SourceArrival, "e2e": SourceArrival})
	// A router's own time (a queue of 0.6–0.9 s) adds to the legs and to
	// what decode times from the arrival, never to ITL, and never to a
	// TTFT the router measures itself.
	queue := hist([]float64{0.5, 1, 2}, []float64{0.6, 0.7, 0.8, 0.9})
	queued := legs
	queued.RouterTime = [][]Hist{{queue}, nil}
	f("legs behind a queue", queued, map[string]string{"ttft": SourceRouterLegs, "itl": SourceDecode, "e2e": SourceRouterLegs})
	queued.Router = routed.Router
	f("router's TTFT behind a queue", queued, map[string]string{"ttft": SourceRouter, "itl": SourceDecode, "e2e": SourceRouterLegs})
	arrival := RequestInput{Arrival: legs.DecodeLeg, RouterTime: [][]Hist{{queue}}}
	f("from arrival behind a queue", arrival, map[string]string{"ttft": SourceRouterArrival, "itl": SourceArrival, "e2e": SourceRouterArrival})
	// Decode times every request within 0.5 s of its arrival at the
	// engines; after a queue the buckets put in (0.75 s, 1 s], and decode's
	// above 0.25 s, none is within 1 s of the arrival at the router.
	late := RequestInput{Arrival: Latencies{TTFT: []Hist{hist([]float64{0.25, 0.5, 1}, []float64{0.3, 0.35, 0.4, 0.45})}},
		RouterTime: [][]Hist{{hist([]float64{0.25, 0.5, 0.75, 1, 2}, []float64{0.8, 0.85, 0.9, 0.95})}}}
	if a, err := AttainRequest(Thresholds{TTFT: 1}, late); err != nil {
		t.Fatal(err)
	} else if ttft := a.Metrics[0]; ttft.Bound == nil || ttft.Bound.Max != 0 {
		t.Errorf("TTFT of 0.25–0.5 s behind a queue of 0.75–1 s within 1 s: %+v, want a bound of at most 0", ttft)
	}

	a, err := AttainRequest(th, legs)
	if err != nil {
		t.Fatal(err)
	}
	if ttft := a.Metrics[0]; ttft.Bound == nil || ttft.Bound.Max != 0 {
		t.Errorf("a prefill leg of 5–8 s leaves no request within 1 s: %+v", ttft)
	}
	if !a.Bounded || a.Goodput != 0 || a.GoodputMax != 0 {
		t.Errorf("goodput: %+v", a)
	}
}

// TestMixWeighsPools: two pools' fractions and bounds add by their
// observations, and a bound in one makes the whole a bound.
func TestMixWeighsPools(t *testing.T) {
	a := Attainment{Rate: 3, Metrics: []Metric{{Name: "ttft", Threshold: 1, Source: SourceArrival, Within: &Within{Fraction: 1, Total: 30}}}}
	a.joint()
	b := Attainment{Rate: 1, Metrics: []Metric{{Name: "ttft", Threshold: 1, Source: SourceLegs, Bound: &Bound{Min: 0, Max: 0.5, Observations: 10}}}}
	b.joint()
	m := Mix([]string{"a", "b"}, []Attainment{a, b})
	got := m.Metrics[0]
	if got.Bound == nil || math.Abs(got.Bound.Min-0.75) > 1e-12 || math.Abs(got.Bound.Max-0.875) > 1e-12 || got.Bound.Observations != 40 {
		t.Fatalf("mixed: %+v %+v", got, got.Bound)
	}
	if m.Rate != 4 || !m.Bounded || math.Abs(m.GoodputMin-3) > 1e-12 || math.Abs(m.GoodputMax-3.5) > 1e-12 {
		t.Errorf("goodput: %+v", m)
	}
	c := Attainment{Rate: 1, Metrics: []Metric{{Name: "ttft", Threshold: 1, Absent: "no router"}}}
	if m := Mix([]string{"a", "c"}, []Attainment{a, c}); m.Metrics[0].Absent != "pool c: no router" {
		t.Errorf("absent: %+v", m.Metrics[0])
	}
}

// SumBoundOf refuses what it cannot bound, with the reason, and never
// panics on it.
func TestSumBoundOfRefuses(t *testing.T) {
	ok := hist([]float64{0.5, 1}, []float64{0.2, 0.7})
	f := func(hs []Hist, th float64, want string) {
		t.Helper()
		if _, err := SumBoundOf(hs, th); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SumBoundOf(%d parts, %g): %v, want an error with %q", len(hs), th, err, want)
		}
	}
	f(nil, 1, "no histogram")
	f([]Hist{ok, {Bounds: []float64{1}, Counts: []float64{1}}}, 1, "no +Inf bucket")
	f([]Hist{ok, hist([]float64{1}, nil)}, 1, "no observations")
	for _, th := range []float64{math.Inf(1), math.NaN(), -1} {
		f([]Hist{ok, ok}, th, "want a finite threshold")
	}
}
