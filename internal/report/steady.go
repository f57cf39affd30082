package report

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// Steady-state detection: a run starts with its pipeline filling (decode
// completes nothing until the first requests have been prefilled and moved)
// and may end with the load generator draining. Each stage's windowed rate
// is smoothed with a centred moving mean over smoothSpan; a point is in
// band when every stage's smoothed rate lies within bandRel of that stage's
// median over the run, or within bandSigmas Poisson standard deviations of
// it when the rate is small (sqrt(median ÷ smoothSpan)). The steady span is
// the longest run of consecutive points in band.
const (
	smoothSpan = 30 * time.Second
	bandRel    = 0.15
	bandSigmas = 3.0
	// presentShare of a smoothing window's points must carry a rate for
	// its mean to count.
	presentShare = 0.8
)

// Steady is the span the stage means are taken over.
type Steady struct {
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	Seconds float64   `json:"seconds"`
	// Found is false when no point was in band: the span is then the whole
	// range, and Why says why.
	Found bool   `json:"found"`
	Why   string `json:"why,omitempty"`
	// TrimmedStart and TrimmedEnd are the seconds left out before and
	// after the span (warm-up and drain).
	TrimmedStart float64 `json:"trimmed_start_seconds"`
	TrimmedEnd   float64 `json:"trimmed_end_seconds"`
	// Medians and Bands are each stage's median smoothed rate and the
	// half-width of its band, req/s (null: the stage had no rate).
	// Gaps is the number of gaps in the range (Events); the span never
	// crosses one.
	Gaps    int                 `json:"gaps_in_range"`
	Medians map[string]*float64 `json:"medians"`
	Bands   map[string]*float64 `json:"bands"`
	Method  string              `json:"method"`
}

// Method is the steady-state rule in words, as the report states it.
var Method = fmt.Sprintf("the longest run of consecutive points, not across a gap of more than two intervals, where every stage's windowed rate, smoothed over a centred %v, stays within ±%.0f%% of its median over the run (or ±%.0f Poisson standard deviations of the smoothed mean, if wider); stages with no rate at all are left out",
	smoothSpan, bandRel*100, bandSigmas)

// stageRate is a stage's windowed rate at a point. A partial sum (an
// instance down) counts: it is what the deployment did, and an instance
// that stays down for the whole run must not hide its steady state; a
// restart shows as a dip the band then judges.
func stageRate(p *ledger.Point, s int) (float64, bool) {
	switch s {
	case 0:
		return p.Prefill.Window.V, p.Prefill.Window.OK()
	case 1:
		return p.KV.Window.V, p.KV.Window.OK()
	default:
		return p.Decode.Window.V, p.Decode.Window.OK()
	}
}

// findSteady returns the steady span of pts (oldest first, equally spaced
// by interval) as indices [lo, hi] and its description.
func findSteady(pts []ledger.Point, interval time.Duration) (int, int, Steady) {
	st := Steady{Method: Method, Medians: map[string]*float64{}, Bands: map[string]*float64{}}
	n := len(pts)
	for i := 1; i < n; i++ {
		if isGap(pts[i-1].Time, pts[i].Time, interval) {
			st.Gaps++
		}
	}
	whole := func(why string) (int, int, Steady) {
		st.Found, st.Why = false, why
		if st.Gaps > 0 {
			st.Why += fmt.Sprintf("; the whole range crosses %d gap(s), listed under what happened", st.Gaps)
		}
		if n > 0 {
			st.From, st.To = pts[0].Time, pts[n-1].Time
			st.Seconds = st.To.Sub(st.From).Seconds()
		}
		return 0, n - 1, st
	}
	if n == 0 {
		return whole("no points")
	}
	half := max(1, int(smoothSpan/interval/2))
	var smooth [3][]float64 // NaN: not enough complete rates around the point
	var used []int
	for s := range 3 {
		raw := make([]float64, n)
		any := false
		for i := range pts {
			if v, ok := stageRate(&pts[i], s); ok {
				raw[i], any = v, true
			} else {
				raw[i] = math.NaN()
			}
		}
		name := string(stage.All[s])
		st.Medians[name], st.Bands[name] = nil, nil
		if !any {
			continue
		}
		used = append(used, s)
		smooth[s] = centred(raw, half)
		var ok []float64
		for _, v := range smooth[s] {
			if !math.IsNaN(v) {
				ok = append(ok, v)
			}
		}
		if len(ok) == 0 {
			continue
		}
		slices.Sort(ok)
		med := ok[len(ok)/2]
		if len(ok)%2 == 0 {
			med = (ok[len(ok)/2-1] + ok[len(ok)/2]) / 2
		}
		band := math.Max(bandRel*med, bandSigmas*math.Sqrt(med/smoothSpan.Seconds()))
		st.Medians[name], st.Bands[name] = &med, &band
	}
	if len(used) == 0 {
		return whole("no stage has a windowed rate")
	}
	bestLo, bestLen, lo := -1, 0, -1
	for i := range n {
		if i > 0 && isGap(pts[i-1].Time, pts[i].Time, interval) {
			lo = -1 // a span starts again after a gap: the rates before and after are two runs
		}
		in := true
		for _, s := range used {
			v, med, band := smooth[s][i], st.Medians[string(stage.All[s])], st.Bands[string(stage.All[s])]
			if math.IsNaN(v) || med == nil || math.Abs(v-*med) > *band {
				in = false
				break
			}
		}
		switch {
		case in && lo < 0:
			lo = i
		case !in:
			lo = -1
		}
		if in && i-lo+1 > bestLen {
			bestLo, bestLen = lo, i-lo+1
		}
	}
	if bestLo < 0 {
		return whole("no point had every stage's smoothed rate within its band: the load never settled")
	}
	hi := bestLo + bestLen - 1
	st.Found = true
	st.From, st.To = pts[bestLo].Time, pts[hi].Time
	st.Seconds = st.To.Sub(st.From).Seconds()
	st.TrimmedStart = st.From.Sub(pts[0].Time).Seconds()
	st.TrimmedEnd = pts[n-1].Time.Sub(st.To).Seconds()
	return bestLo, hi, st
}

// centred is the moving mean of xs over i-half..i+half, NaN where fewer
// than presentShare of that window's values are present, or where the
// window does not fit inside xs (the ends of the run are never steady by
// smoothing alone).
func centred(xs []float64, half int) []float64 {
	out := make([]float64, len(xs))
	for i := range xs {
		out[i] = math.NaN()
		if i-half < 0 || i+half >= len(xs) {
			continue
		}
		var sum float64
		var k int
		for _, x := range xs[i-half : i+half+1] {
			if !math.IsNaN(x) {
				sum += x
				k++
			}
		}
		if float64(k) >= presentShare*float64(2*half+1) {
			out[i] = sum / float64(k)
		}
	}
	return out
}
