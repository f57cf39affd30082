package report

import (
	"slices"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Outlier is an instance that stood out from its peers during the steady
// span by the live instance table's rules (docs/web.md#outlier-rules).
type Outlier struct {
	Target string `json:"target"`
	Role   string `json:"role"`
	Engine string `json:"engine"`
	// Worst is the worst status it had; Seconds how long it was not ok,
	// and by status.
	Worst    string             `json:"worst"`
	Seconds  float64            `json:"seconds"`
	ByStatus map[string]float64 `json:"seconds_by_status"`
	// Share is Seconds over the steady span's length.
	Share float64 `json:"share"`
	// Flags are the rules it broke at its worst moment, with the numbers.
	Flags []string  `json:"flags"`
	At    time.Time `json:"at"`
}

// minOutlierShare leaves out an instance that stood out for less than this
// share of the span: a single slow window is noise, not an outlier.
const minOutlierShare = 0.05

// outliers classifies every point's instances and keeps those that were
// not ok for at least minOutlierShare of the span, worst first.
func outliers(pts []ledger.Point, window time.Duration) []Outlier {
	if len(pts) == 0 {
		return nil
	}
	byName := map[string]*Outlier{}
	rank := map[string]int{}
	for i := range pts {
		p := &pts[i]
		dt := 0.0
		if i > 0 {
			dt = p.Time.Sub(pts[i-1].Time).Seconds()
		} else if len(pts) > 1 {
			dt = pts[1].Time.Sub(p.Time).Seconds()
		}
		for j, s := range diagnose.ClassifyInstances(p.Instances, window.Seconds(), nil) {
			if s.Status == diagnose.StatusOK {
				continue
			}
			ip := &p.Instances[j]
			o := byName[ip.Target]
			if o == nil {
				o = &Outlier{Target: ip.Target, Role: ip.Role, Engine: ip.Engine, ByStatus: map[string]float64{}}
				byName[ip.Target], rank[ip.Target] = o, len(diagnose.StatusOrder)
			}
			o.Seconds += dt
			o.ByStatus[s.Status] += dt
			if s.Rank < rank[ip.Target] {
				rank[ip.Target], o.Worst, o.Flags, o.At = s.Rank, s.Status, s.Flags, p.Time
			}
		}
	}
	span := pts[len(pts)-1].Time.Sub(pts[0].Time).Seconds() + pts[min(1, len(pts)-1)].Time.Sub(pts[0].Time).Seconds()
	out := []Outlier{}
	for _, o := range byName {
		if span > 0 {
			o.Share = o.Seconds / span
		}
		if o.Share >= minOutlierShare {
			// Sample times carry the nanoseconds of real exchanges.
			o.Seconds = ms(o.Seconds)
			out = append(out, *o)
		}
	}
	slices.SortFunc(out, func(a, b Outlier) int {
		if rank[a.Target] != rank[b.Target] {
			return rank[a.Target] - rank[b.Target]
		}
		if a.Seconds != b.Seconds {
			if a.Seconds > b.Seconds {
				return -1
			}
			return 1
		}
		if a.Target < b.Target {
			return -1
		}
		return 1
	})
	return out
}
