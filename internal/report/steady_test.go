package report

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// synthetic returns points whose three windowed rates follow f(second).
func synthetic(n int, f func(i int) float64) []ledger.Point {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pts := make([]ledger.Point, n)
	for i := range pts {
		v := ledger.Val(f(i))
		pts[i] = ledger.Point{Time: t0.Add(time.Duration(i) * time.Second),
			Prefill: ledger.StagePoint{Instant: v, Window: v}, KV: ledger.KVPoint{Instant: v, Window: v},
			Decode: ledger.StagePoint{Instant: v, Window: v}}
	}
	return pts
}

func TestFindSteadyTrimsRampAndDrain(t *testing.T) {
	f := func(name string, n int, rate func(int) float64, wantFound bool, fromAtLeast, toAtMost int) {
		t.Helper()
		pts := synthetic(n, rate)
		lo, hi, st := findSteady(pts, time.Second)
		if st.Found != wantFound {
			t.Fatalf("%s: found %v (%s), want %v", name, st.Found, st.Why, wantFound)
		}
		if !wantFound {
			if lo != 0 || hi != n-1 {
				t.Errorf("%s: not found should cover the whole range, got [%d, %d]", name, lo, hi)
			}
			return
		}
		if lo < fromAtLeast || hi > toAtMost {
			t.Errorf("%s: steady [%d, %d], want inside [%d, %d]", name, lo, hi, fromAtLeast, toAtMost)
		}
		if hi-lo < (toAtMost-fromAtLeast)/2 {
			t.Errorf("%s: steady [%d, %d] is too short for the flat part [%d, %d]", name, lo, hi, fromAtLeast, toAtMost)
		}
		if st.TrimmedStart != float64(lo) || st.TrimmedEnd != float64(n-1-hi) {
			t.Errorf("%s: trimmed %g and %g, want %d and %d", name, st.TrimmedStart, st.TrimmedEnd, lo, n-1-hi)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	noisy := func(v float64) float64 { return v * (1 + 0.1*rng.NormFloat64()) }
	// A ramp up over 60 s, 300 s flat at 10 req/s, a drain over 60 s: the
	// span lies in the flat part (the smoothing may eat into its ends, the
	// ramp's last values are within the band).
	f("ramp-flat-drain", 420, func(i int) float64 {
		switch {
		case i < 60:
			return noisy(10 * float64(i) / 60)
		case i < 360:
			return noisy(10)
		default:
			return noisy(10 * float64(420-i) / 60)
		}
	}, true, 50, 370)
	// A load that doubles halfway: the longer half is the steady span.
	f("step", 300, func(i int) float64 {
		if i < 100 {
			return noisy(5)
		}
		return noisy(10)
	}, true, 100, 299)
	// A run shorter than the smoothing span has no steady span; it is
	// still reported, over its whole range.
	f("too short", 20, func(int) float64 { return 5 }, false, 0, 0)
}

// TestBatchMeansCoverAutocorrelated checks the interval's coverage on an
// AR(1) series with strong correlation (φ = 0.9, as a windowed rate's
// neighbours share most of their window): the batch-means interval holds
// the true mean about 95% of the time, while the interval that treats the
// samples as independent would miss it far more often.
func TestBatchMeansCoverAutocorrelated(t *testing.T) {
	const (
		runs = 400
		n    = 600
		phi  = 0.9
		mean = 7.0
	)
	rng := rand.New(rand.NewPCG(3, 4))
	covered, naive := 0, 0
	for range runs {
		xs := make([]float64, n)
		x := 0.0
		for i := range xs {
			x = phi*x + rng.NormFloat64()
			xs[i] = mean + x
		}
		e := batchMeans(xs, 10, 1)
		if e.CI95 == nil {
			t.Fatalf("no interval: %s", e.Absent)
		}
		if e.CI95[0] <= mean && mean <= e.CI95[1] {
			covered++
		}
		m, sd := meanSD(xs)
		if h := 1.96 * sd / math.Sqrt(n); m-h <= mean && mean <= m+h {
			naive++
		}
	}
	cov := float64(covered) / runs
	t.Logf("coverage: batch means %.3f, independent samples %.3f", cov, float64(naive)/runs)
	if cov < 0.90 || cov > 0.99 {
		t.Errorf("batch-means coverage %.3f, want about 0.95", cov)
	}
	if nv := float64(naive) / runs; nv > 0.8 {
		t.Errorf("the naive interval covers %.3f: the series is not correlated enough to test anything", nv)
	}
}

func TestTQuantile(t *testing.T) {
	for _, c := range []struct{ df, want float64 }{{1, 12.706}, {9, 2.262}, {19, 2.093}, {29, 2.045}, {40, 2.021}, {60, 2.000}, {120, 1.980}, {1e9, 1.960}} {
		if got := tQuantile975(c.df); math.Abs(got-c.want) > 0.002 {
			t.Errorf("t(%g) = %.4f, want %.3f", c.df, got, c.want)
		}
	}
}
