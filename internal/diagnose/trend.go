package diagnose

import (
	"math"
	"slices"
	"sort"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// series is one signal over the window: present samples only, with their
// times in seconds from the first point of the window.
type series struct {
	t, v []float64
}

func collect(pts []ledger.Point, get func(*ledger.Point) ledger.Num) series {
	var s series
	if len(pts) == 0 {
		return s
	}
	t0 := pts[0].Time
	for i := range pts {
		n := get(&pts[i])
		if !n.OK() || math.IsNaN(n.V) || math.IsInf(n.V, 0) {
			continue
		}
		s.t = append(s.t, pts[i].Time.Sub(t0).Seconds())
		s.v = append(s.v, n.V)
	}
	return s
}

func (s series) n() int { return len(s.v) }

func (s series) span() float64 {
	if len(s.t) < 2 {
		return 0
	}
	return s.t[len(s.t)-1] - s.t[0]
}

func (s series) mean() float64 {
	var sum float64
	for _, v := range s.v {
		sum += v
	}
	return sum / float64(len(s.v))
}

// tail is the mean of the newest k samples: the current level, steadier
// than the newest sample alone.
func (s series) tail(k int) float64 {
	if k > len(s.v) {
		k = len(s.v)
	}
	var sum float64
	for _, v := range s.v[len(s.v)-k:] {
		sum += v
	}
	return sum / float64(k)
}

// quantile is the q-quantile of the samples (nearest rank).
func (s series) quantile(q float64) float64 {
	if len(s.v) == 0 {
		return 0
	}
	v := append([]float64(nil), s.v...)
	sort.Float64s(v)
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[max(0, min(i, len(v)-1))]
}

// MinSegment is the span (seconds) a run of samples after a gap must reach
// before its trend replaces the one before the gap.
const MinSegment = 15

// sinceGap returns the samples a trend should be fitted to: a gap in a
// signal (its instances down, scrapes failing) usually comes with a reset
// (a restarted process has empty queues), and a line across the reset
// measures the restart, not the queue. So the newest run of samples after a
// gap is used once it spans MinSegment; until then, the run before the gap
// stands.
func (s series) sinceGap() series {
	if len(s.t) < 3 {
		return s
	}
	// A gap is a spacing over twice the median spacing and over 1.5 s.
	d := make([]float64, len(s.t)-1)
	for i := range d {
		d[i] = s.t[i+1] - s.t[i]
	}
	sd := append([]float64(nil), d...)
	sort.Float64s(sd)
	limit := max(2*sd[len(sd)/2], 1.5)
	end := len(s.t)
	for i := len(d) - 1; i >= 0; i-- {
		if d[i] <= limit {
			continue
		}
		if s.t[end-1]-s.t[i+1] >= MinSegment {
			return series{t: s.t[i+1 : end], v: s.v[i+1 : end]}
		}
		end = i + 1 // too short: look at the run before the gap
	}
	return series{t: s.t[:end], v: s.v[:end]}
}

// trend is a least-squares line through a queue's samples.
type trend struct {
	Slope float64 // per second
	Rise  float64 // slope × span: the growth the line explains
	Resid float64 // standard deviation of the residuals
	// From and To are the line's values at the window's ends, held within
	// the samples' range: the evidence says what was seen, and a line
	// fitted to a queue that jumped ends beyond its largest sample.
	From, To float64
	Level    float64 // mean of the newest samples
	N        int
	// FirstHigh is the upper quartile of the oldest third of the samples,
	// LastLow the lower quartile of the newest third.
	FirstHigh, LastLow float64
}

func fit(s series) (trend, bool) {
	n := float64(s.n())
	if s.n() < 3 || s.span() <= 0 {
		return trend{}, false
	}
	var st, sv float64
	for i := range s.v {
		st += s.t[i]
		sv += s.v[i]
	}
	mt, mv := st/n, sv/n
	var stt, stv float64
	for i := range s.v {
		dt := s.t[i] - mt
		stt += dt * dt
		stv += dt * (s.v[i] - mv)
	}
	if stt == 0 {
		return trend{}, false
	}
	slope := stv / stt
	var ss float64
	for i := range s.v {
		r := s.v[i] - (mv + slope*(s.t[i]-mt))
		ss += r * r
	}
	t0, t1 := s.t[0], s.t[len(s.t)-1]
	return trend{
		Slope:     slope,
		Rise:      slope * (t1 - t0),
		Resid:     math.Sqrt(ss / n),
		From:      min(max(mv+slope*(t0-mt), slices.Min(s.v)), slices.Max(s.v)),
		To:        min(max(mv+slope*(t1-mt), slices.Min(s.v)), slices.Max(s.v)),
		Level:     s.tail(3),
		N:         s.n(),
		FirstHigh: series{v: s.v[:len(s.v)/3]}.quantile(0.75),
		LastLow:   series{v: s.v[len(s.v)-len(s.v)/3:]}.quantile(0.25),
	}, true
}

// growing tells a queue that builds up from one that only fluctuates: the
// line must climb by at least minRise requests, at minSlope per second, and
// by more than twice the scatter around it (so a burst that drains is not a
// trend); and the newest third of the samples must sit above the oldest
// third (so bursts that come and go, caught rising at the window's end,
// are not a trend either).
func (tr trend) growing(th Thresholds) bool {
	return tr.N >= 3 && tr.Slope >= th.MinSlope && tr.Rise >= th.MinRise && tr.Rise >= 2*tr.Resid && tr.persists()
}

func (tr trend) persists() bool { return tr.N < 6 || tr.LastLow > tr.FirstHigh }
