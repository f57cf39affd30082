package diagnose

import (
	"testing"
)

// A trend's ends, which the verdict's evidence prints, lie within the
// samples seen: a queue that holds 10 and jumps to its most, 64, fits a
// line that would end beyond 64 and start below 0.
func TestTrendEndsWithinTheSamples(t *testing.T) {
	f := func(name string, v []float64) {
		t.Run(name, func(t *testing.T) {
			s := series{}
			for i, x := range v {
				s.t = append(s.t, float64(i))
				s.v = append(s.v, x)
			}
			tr, ok := fit(s)
			if !ok {
				t.Fatal("no fit")
			}
			lo, hi := v[0], v[0]
			for _, x := range v {
				lo, hi = min(lo, x), max(hi, x)
			}
			if tr.From < lo || tr.From > hi || tr.To < lo || tr.To > hi {
				t.Errorf("ends %.3g → %.3g outside the samples' %.3g – %.3g", tr.From, tr.To, lo, hi)
			}
		})
	}
	f("jump to the most seen", []float64{10, 10, 10, 10, 10, 10, 12, 30, 64, 64})
	f("KV cache filling fast", []float64{0.45, 0.46, 0.47, 0.5, 0.6, 0.75, 0.9, 1.0})
	f("draining", []float64{64, 64, 60, 30, 5, 0, 0, 0})
	f("steady line", []float64{1, 2, 3, 4, 5, 6})
}
