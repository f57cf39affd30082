package slo

import (
	"math"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

var inf = math.Inf(1)

// h builds a histogram from per-bucket (not cumulative) counts.
func h(bounds []float64, per ...float64) Hist {
	c := make([]float64, len(per))
	s := 0.0
	for i, v := range per {
		s += v
		c[i] = s
	}
	return Hist{Bounds: bounds, Counts: c, Count: s}
}

func TestFraction(t *testing.T) {
	b := []float64{0.1, 0.5, 1, inf}
	hist := h(b, 10, 20, 30, 40) // 100 observations
	f := func(th, want float64, exact, atLeast bool) {
		t.Helper()
		w, err := Fraction(hist, th)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(w.Fraction-want) > 1e-12 || w.Exact != exact || w.AtLeast != atLeast {
			t.Errorf("≤ %g: %+v, want %g exact=%v atLeast=%v", th, w, want, exact, atLeast)
		}
	}
	f(0.1, 0.10, true, false)              // a bound: exact
	f(0.5, 0.30, true, false)              // a bound: exact
	f(0.05, 0.05, false, false)            // first bucket, from 0
	f(0.3, (10+20*0.5)/100, false, false)  // halfway through (0.1, 0.5]
	f(0.75, (30+30*0.5)/100, false, false) // halfway through (0.5, 1]
	f(5, 0.60, false, true)                // past the last finite bound: at least
	f(-1, 0, true, false)                  // nothing is negative
	f(0, 0, false, false)                  // from 0 by interpolation
}

// Fraction inverts Quantile (PromQL's histogram_quantile) wherever the
// threshold lies in a bucket with observations.
func TestFractionInvertsQuantile(t *testing.T) {
	hist := h([]float64{0.001, 0.01, 0.02, 0.1, 0.25, 1, 2.5, inf}, 1, 7, 3, 11, 5, 2, 9, 4)
	for _, th := range []float64{0.0004, 0.003, 0.015, 0.05, 0.2, 0.7, 2} {
		w, err := Fraction(hist, th)
		if err != nil {
			t.Fatal(err)
		}
		if q := Quantile(w.Fraction, hist); math.Abs(q-th) > 1e-12*th {
			t.Errorf("≤ %g: fraction %g, histogram_quantile of it %g", th, w.Fraction, q)
		}
	}
}

func TestFractionErrors(t *testing.T) {
	f := func(hist Hist, want string) {
		t.Helper()
		if _, err := Fraction(hist, 1); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", hist, err, want)
		}
	}
	f(Hist{}, "no buckets")
	f(Hist{Bounds: []float64{1, 2}, Counts: []float64{1, 2}}, "no +Inf")
	f(Hist{Bounds: []float64{1, inf}, Counts: []float64{1}}, "2 bounds but 1 counts")
	f(Hist{Bounds: []float64{2, 1, inf}, Counts: []float64{1, 2, 3}}, "not increasing")
	f(Hist{Bounds: []float64{1, 2, inf}, Counts: []float64{3, 2, 4}}, "not cumulative")
	f(Hist{Bounds: []float64{1, inf}, Counts: []float64{0, 0}}, "no observations")
}

// FractionOf adds each instance's within-count read in its own buckets, as
// summing per-instance rates in PromQL does; Merge then Fraction would
// interpolate over the union of bounds instead.
func TestFractionOf(t *testing.T) {
	a := h([]float64{1, 2, inf}, 10, 10, 0)     // 20 observations
	b := h([]float64{0.5, 4, inf}, 5, 30, 5)    // 40
	empty := h([]float64{0.5, 4, inf}, 0, 0, 0) // left out
	w, err := FractionOf([]Hist{a, b, empty}, 1.5)
	if err != nil {
		t.Fatal(err)
	}
	want := (15 + (5 + 30*(1.0/3.5))) / 60
	if math.Abs(w.Fraction-want) > 1e-12 || w.Total != 60 || w.Exact {
		t.Errorf("%+v, want %g of 60", w, want)
	}
	if _, err := FractionOf([]Hist{empty}, 1); err == nil {
		t.Error("no observations: want an error")
	}
}

func TestMerge(t *testing.T) {
	f := func(name string, in []Hist, want Hist) {
		t.Helper()
		got := Merge(in...)
		if !slices.Equal(got.Bounds, want.Bounds) || !slices.Equal(got.Counts, want.Counts) || got.Sum != want.Sum || got.Count != want.Count {
			t.Errorf("%s: got %+v, want %+v", name, got, want)
		}
		if len(want.Bounds) > 0 {
			if err := got.Check(); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
	f("none", nil, Hist{Counts: []float64{}})
	f("one is itself",
		[]Hist{{Bounds: []float64{0.5, 1, inf}, Counts: []float64{2, 5, 6}, Sum: 4, Count: 6}},
		Hist{Bounds: []float64{0.5, 1, inf}, Counts: []float64{2, 5, 6}, Sum: 4, Count: 6})
	f("same bounds add by le",
		[]Hist{
			{Bounds: []float64{1, inf}, Counts: []float64{1, 3}, Sum: 2, Count: 3},
			{Bounds: []float64{1, inf}, Counts: []float64{4, 4}, Sum: 1, Count: 4},
		},
		Hist{Bounds: []float64{1, inf}, Counts: []float64{5, 7}, Sum: 3, Count: 7})
	// A bound one side lacks takes that side's count at its largest bound
	// below: 1.5 has a's 1 (le=1) and b's 2; 2 has a's 2 and b's 2.
	f("interleaved bounds stay cumulative",
		[]Hist{
			{Bounds: []float64{1, 2, inf}, Counts: []float64{1, 2, 3}, Count: 3},
			{Bounds: []float64{1.5, inf}, Counts: []float64{2, 4}, Count: 4},
		},
		Hist{Bounds: []float64{1, 1.5, 2, inf}, Counts: []float64{1, 3, 4, 7}, Count: 7})
	// Below a side's first bound, that side has nothing to add.
	f("bound below every bound of the other",
		[]Hist{
			{Bounds: []float64{10, inf}, Counts: []float64{5, 6}, Count: 6},
			{Bounds: []float64{0.1, 0.2, inf}, Counts: []float64{1, 1, 1}, Count: 1},
		},
		Hist{Bounds: []float64{0.1, 0.2, 10, inf}, Counts: []float64{1, 1, 6, 7}, Count: 7})
	// vLLM's and SGLang's TTFT buckets in part: the union has every bound
	// of both, and the +Inf bucket is the total.
	f("three schemes",
		[]Hist{
			{Bounds: []float64{0.001, 0.005, inf}, Counts: []float64{1, 1, 2}, Count: 2},
			{Bounds: []float64{0.005, 0.01, inf}, Counts: []float64{0, 3, 3}, Count: 3},
			{Bounds: []float64{inf}, Counts: []float64{4}, Count: 4},
		},
		Hist{Bounds: []float64{0.001, 0.005, 0.01, inf}, Counts: []float64{1, 1, 4, 9}, Count: 9})
	f("empty part adds nothing",
		[]Hist{{Bounds: []float64{1, inf}, Counts: []float64{1, 2}, Count: 2}, {}},
		Hist{Bounds: []float64{1, inf}, Counts: []float64{1, 2}, Count: 2})
}

func TestAttain(t *testing.T) {
	ttft := h([]float64{0.5, 1, inf}, 80, 10, 10) // 0.8 within 0.5 s
	e2e := h([]float64{5, 10, inf}, 60, 30, 10)   // 0.6 within 5 s
	in := Input{
		TTFT: []Hist{ttft}, E2E: []Hist{e2e}, Seconds: 10,
		Phases: map[string]Hist{
			"queue":   h([]float64{0.1, 1, 10, inf}, 50, 45, 5, 0),
			"prefill": h([]float64{0.1, 1, 10, inf}, 0, 100, 0, 0),
			"decode":  h([]float64{0.1, 1, 10, inf}, 0, 10, 90, 0),
		},
	}
	a, err := Attain(Thresholds{TTFT: 0.5, E2E: 5}, in)
	if err != nil {
		t.Fatal(err)
	}
	if a.Rate != 10 || math.Abs(a.Joint-0.48) > 1e-12 || math.Abs(a.JointMin-0.4) > 1e-12 || a.JointMax != 0.6 {
		t.Errorf("rate %g joint %g [%g, %g], want 10, 0.48 [0.4, 0.6]", a.Rate, a.Joint, a.JointMin, a.JointMax)
	}
	if math.Abs(a.Goodput-4.8) > 1e-12 || math.Abs(a.GoodputMin-4) > 1e-12 || a.GoodputMax != 6 {
		t.Errorf("goodput %g [%g, %g], want 4.8 [4, 6]", a.Goodput, a.GoodputMin, a.GoodputMax)
	}
	if a.Misses == nil || a.Misses.Dominant != "decode" {
		t.Fatalf("misses %+v, want decode dominant", a.Misses)
	}
	// Without the E2E histogram the SLO is absent and so is goodput.
	a, err = Attain(Thresholds{TTFT: 0.5, E2E: 5}, Input{TTFT: []Hist{ttft}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Metrics[1].Within != nil || a.Metrics[1].Absent == "" || a.Absent == "" || a.Goodput != 0 {
		t.Errorf("no E2E histogram: %+v", a)
	}
	if _, err := Attain(Thresholds{}, in); err == nil {
		t.Error("no thresholds: want an error")
	}
	if _, err := Attain(Thresholds{ITL: math.NaN()}, in); err == nil {
		t.Error("NaN threshold: want an error")
	}
}

func FuzzFraction(f *testing.F) {
	f.Add(0.3, 1.0, 2.0, 3.0)
	f.Fuzz(func(t *testing.T, th, a, b, c float64) {
		hist := Hist{Bounds: []float64{0.1, 1, inf}, Counts: []float64{a, a + math.Abs(b), a + math.Abs(b) + math.Abs(c)}}
		w, err := Fraction(hist, th)
		if err != nil {
			return
		}
		if w.Fraction < -1e-9 || w.Fraction > 1+1e-9 {
			t.Errorf("fraction %g outside [0, 1] for %+v ≤ %g", w.Fraction, hist, th)
		}
	})
}

// TestThresholdsYAML: seconds or durations; a typo or a word is one error
// with its line.
func TestThresholdsYAML(t *testing.T) {
	f := func(doc string, want Thresholds, wantErr string) {
		t.Helper()
		var got struct {
			SLO Thresholds `yaml:"slo"`
		}
		err := yaml.Unmarshal([]byte(doc), &got)
		switch {
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%q: error %v, want %q", doc, err, wantErr)
		case wantErr == "" && (err != nil || got.SLO != want):
			t.Errorf("%q: %+v, %v; want %+v", doc, got.SLO, err, want)
		}
	}
	f("slo: {ttft: 0.5, itl: 0.05, e2e: 10}", Thresholds{TTFT: 0.5, ITL: 0.05, E2E: 10}, "")
	f("slo: {ttft: 500ms, itl: 50ms, e2e: 1m}", Thresholds{TTFT: 0.5, ITL: 0.05, E2E: 60}, "")
	f("slo:\n  ttft: fast\n", Thresholds{}, `line 2: slo.ttft "fast": want seconds (0.5) or a duration (500ms)`)
	f("slo:\n  ttf: 0.5\n", Thresholds{}, "line 2: slo.ttf: unknown key (want ttft, itl or e2e)")
}
