package report

import (
	"fmt"
	"math"
)

// Batch means (docs/report.md#the-report):
// consecutive samples of a rate are correlated (a windowed rate shares most
// of its window with its neighbour's, a queue drains over seconds), so the
// spread of single samples understates the uncertainty of their mean.
// Cutting the span into a few long batches makes the batch means nearly
// independent; the interval is then Student's t over them.
const (
	maxBatches = 10
	minBatches = 5
)

// Estimate is a mean with its 95% confidence interval from batch means.
type Estimate struct {
	Mean float64 `json:"-"` // shown by the owner, absent when Samples is 0
	// CI95 is [low, high]; absent (null) when the span holds too few
	// batches.
	CI95         *[2]float64 `json:"ci95"`
	Batches      []float64   `json:"batch_means,omitempty"`
	BatchSeconds float64     `json:"batch_seconds,omitempty"`
	Samples      int         `json:"samples"`
	Absent       string      `json:"absent,omitempty"`
}

// batchMeans estimates the mean of xs (one value per interval, equally
// spaced) with batches at least minLen samples long: minLen covers the
// samples' correlation (the rate window W in intervals, at least).
func batchMeans(xs []float64, minLen int, interval float64) Estimate {
	e := Estimate{Samples: len(xs)}
	if len(xs) == 0 {
		e.Absent = "no sample in the span"
		return e
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	e.Mean = sum / float64(len(xs))
	minLen = max(minLen, 1)
	b := min(maxBatches, len(xs)/minLen)
	if b < minBatches {
		e.Absent = fmt.Sprintf("%d samples make fewer than %d batches of %d: the span is too short for an interval", len(xs), minBatches, minLen)
		return e
	}
	size := len(xs) / b
	// The newest samples that do not fill a batch stay in the mean only.
	for i := 0; i < b; i++ {
		var s float64
		for _, x := range xs[i*size : (i+1)*size] {
			s += x
		}
		e.Batches = append(e.Batches, s/float64(size))
	}
	e.BatchSeconds = float64(size) * interval
	m, sd := meanSD(e.Batches)
	h := tQuantile975(float64(b-1)) * sd / math.Sqrt(float64(b))
	// The interval is centred on the batches' mean, which is the mean of
	// the samples they cover.
	e.CI95 = &[2]float64{m - h, m + h}
	return e
}

func meanSD(xs []float64) (float64, float64) {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	if len(xs) < 2 {
		return m, math.NaN()
	}
	return m, math.Sqrt(ss / float64(len(xs)-1))
}

// tTable is Student's t 0.975 quantile for 1..30 degrees of freedom.
var tTable = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// tQuantile975 is Student's t 0.975 quantile for df degrees of freedom (df
// may be fractional, as Welch's is): the table, interpolated linearly, and
// beyond 30 the expansion z + (z³+z)/(4df) + (5z⁵+16z³+3z)/(96df²).
func tQuantile975(df float64) float64 {
	if df < 1 || math.IsNaN(df) {
		return math.NaN()
	}
	if df < 30 {
		i := int(df)
		f := df - float64(i)
		return tTable[i-1] + f*(tTable[i]-tTable[i-1])
	}
	const z = 1.959964
	z3, z5 := z*z*z, z*z*z*z*z
	return z + (z3+z)/(4*df) + (5*z5+16*z3+3*z)/(96*df*df)
}

// Welch is Welch's two-sample t test on two sets of batch means.
type Welch struct {
	T  float64 `json:"t"`
	DF float64 `json:"df"`
	// Significant: |T| exceeds the 0.975 quantile, the two means differ
	// beyond the runs' noise at the 5% level.
	Significant bool `json:"significant"`
}

// welch tests whether the means of a and b differ; false when either has
// fewer than two batches.
func welch(a, b []float64) (Welch, bool) {
	if len(a) < 2 || len(b) < 2 {
		return Welch{}, false
	}
	ma, sa := meanSD(a)
	mb, sb := meanSD(b)
	va, vb := sa*sa/float64(len(a)), sb*sb/float64(len(b))
	if va+vb == 0 {
		return Welch{T: 0, DF: float64(len(a) + len(b) - 2), Significant: ma != mb}, true
	}
	w := Welch{T: (mb - ma) / math.Sqrt(va+vb)}
	w.DF = (va + vb) * (va + vb) / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
	w.Significant = math.Abs(w.T) > tQuantile975(w.DF)
	return w, true
}
