package advice

import (
	"fmt"
	"math"
)

// stepFit is decode's step time against its batch over the horizon: a
// step reads the weights once and each running request's KV, so it grows
// about linearly with the batch, step = a + b × batch
// (docs/advisor.md#decode-batch).
type stepFit struct {
	a, b     float64
	lo, hi   float64 // the batches seen, per instance
	points   int     // the samples with a step time
	ok       bool    // the batches spread enough to fit a slope
	constant bool    // every step time the same: no growth, at any spread
}

// minStepSpread is the spread of the batches (highest − lowest, over their
// mean) a slope needs: below it the steps' noise is the slope.
const minStepSpread = 0.25

// fitSteps fits the samples' step times to their batches per instance by
// least squares.
func fitSteps(ss []sample) stepFit {
	var f stepFit
	var sx, sy, sxx, sxy float64
	f.lo, f.hi = math.Inf(1), math.Inf(-1)
	first, same := 0.0, true
	for _, s := range ss {
		if s.step <= 0 || s.up <= 0 {
			continue
		}
		x, y := s.work/float64(s.up), s.step
		if f.points == 0 {
			first = y
		}
		same = same && math.Abs(y-first) <= 1e-9*first
		f.points++
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
		f.lo, f.hi = min(f.lo, x), max(f.hi, x)
	}
	if f.points < minPoints {
		return f
	}
	n := float64(f.points)
	mean := sx / n
	if same {
		f.a, f.ok, f.constant = first, true, true
		return f
	}
	varX := sxx/n - mean*mean
	if mean <= 0 || (f.hi-f.lo)/mean < minStepSpread || varX <= 0 {
		return f
	}
	// A step cannot shrink as the batch grows: a negative slope is noise.
	f.b = max((sxy/n-mean*sy/n)/varX, 0)
	f.a = sy/n - f.b*mean
	f.ok = f.a+f.b*f.lo > 0
	return f
}

// slowdown is how much longer a step of the limit's batch is than one of
// the batch run now (at least 1), and how that is known.
func (f stepFit) slowdown(batch, limit float64) (float64, string) {
	switch {
	case f.points < minPoints:
		return 1, "step time not known: assumed not to grow with the batch"
	case f.constant:
		return 1, fmt.Sprintf("step %.1f ms at every batch seen (%.1f–%.1f)", 1e3*f.a, f.lo, f.hi)
	case !f.ok:
		return 1, fmt.Sprintf("steps seen at batches %.1f–%.1f only: assumed not to grow to %.0f", f.lo, f.hi, limit)
	}
	now, full := f.a+f.b*batch, f.a+f.b*limit
	return max(full/now, 1), fmt.Sprintf("step %.1f ms at batch %.1f growing %.2f ms a request (batches %.1f–%.1f): %.1f ms at %.0f",
		1e3*now, batch, 1e3*f.b, f.lo, f.hi, 1e3*full, limit)
}
