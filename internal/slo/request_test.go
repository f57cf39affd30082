package slo

import (
	"math"
	"math/rand/v2"
	"sort"
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
		b, err := SumBound(hx, hy, tt)
		if err != nil {
			t.Fatal(err)
		}
		for _, pair := range []func(i int) float64{
			func(i int) float64 { return x[i] + y[i] },
			func(i int) float64 { return x[i] + y[n-1-i] },
			func(i int) float64 { return x[i] + y[(i*7+3)%n] },
		} {
			in := 0.0
			for i := range n {
				if pair(i) <= tt {
					in++
				}
			}
			if f := in / float64(n); f < b.Min-1e-12 || f > b.Max+1e-12 {
				t.Fatalf("trial %d: true fraction %.4f outside [%.4f, %.4f] at t=%g", trial, f, b.Min, b.Max, tt)
			}
		}
	}
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
