package advice

import (
	"math"
	"strings"
	"testing"
)

func TestStepSlowdown(t *testing.T) {
	// samples at batches xs (one instance up) with steps step(x).
	samples := func(xs []float64, step func(x float64) float64) []sample {
		ss := make([]sample, len(xs))
		for i, x := range xs {
			ss[i] = sample{work: x, up: 1, step: step(x)}
		}
		return ss
	}
	spread := []float64{2, 3, 4, 5, 6, 3, 4, 5, 2, 6, 4, 3}
	narrow := []float64{10, 10.2, 10.1, 9.9, 10, 10.3, 9.8, 10, 10.1, 10, 9.9, 10.2}
	f := func(name string, ss []sample, batch, limit, want float64, says string) {
		t.Helper()
		got, how := fitSteps(ss).slowdown(batch, limit)
		if math.Abs(got-want) > 1e-6 || !strings.Contains(how, says) {
			t.Errorf("%s: slowdown %.6f (%s), want %.6f saying %q", name, got, how, want, says)
		}
	}
	f("12 ms + 1 ms a request: 16 ms at 4, 28 ms at 16", samples(spread, func(x float64) float64 { return 0.012 + 0.001*x }), 4, 16, 28.0/16, "growing 1.00 ms a request")
	f("one step at every batch", samples(spread, func(float64) float64 { return 0.03 }), 4, 16, 1, "at every batch seen")
	f("one step, batches the same", samples(narrow, func(float64) float64 { return 0.03 }), 10, 16, 1, "at every batch seen")
	f("steps shrinking with the batch: noise", samples(spread, func(x float64) float64 { return 0.03 - 0.001*x }), 4, 16, 1, "growing 0.00 ms")
	f("batches too close to fit", samples(narrow, func(x float64) float64 { return 0.012 + 0.001*x }), 10, 16, 1, "assumed not to grow to 16")
	f("too few points", samples(spread[:5], func(x float64) float64 { return 0.012 + 0.001*x }), 4, 16, 1, "step time not known")
	f("no step time", samples(spread, func(float64) float64 { return 0 }), 4, 16, 1, "step time not known")
}
