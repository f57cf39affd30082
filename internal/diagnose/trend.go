package diagnose

import (
	"math"

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

// trend is a least-squares line through a queue's samples.
type trend struct {
	Slope    float64 // per second
	Rise     float64 // slope × span: the growth the line explains
	Resid    float64 // standard deviation of the residuals
	From, To float64 // the line's values at the window's ends
	Level    float64 // mean of the newest samples
	N        int
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
		Slope: slope,
		Rise:  slope * (t1 - t0),
		Resid: math.Sqrt(ss / n),
		From:  mv + slope*(t0-mt),
		To:    mv + slope*(t1-mt),
		Level: s.tail(3),
		N:     s.n(),
	}, true
}

// growing tells a queue that builds up from one that only fluctuates: the
// line must climb by at least minRise requests, at minSlope per second, and
// by more than twice the scatter around it (so a burst that drains is not a
// trend).
func (tr trend) growing(th Thresholds) bool {
	return tr.N >= 3 && tr.Slope >= th.MinSlope && tr.Rise >= th.MinRise && tr.Rise >= 2*tr.Resid
}
