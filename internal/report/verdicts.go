package report

import (
	"maps"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Span is a run of consecutive points with the same verdict, as
// /api/v1/series' timeline has it, with the evidence and notes of the
// verdict at the span's last point (the one with the most data behind it).
type Span struct {
	From     time.Time                 `json:"from"`
	To       time.Time                 `json:"to"`
	Class    diagnose.Class            `json:"stage"`
	Headline string                    `json:"headline"`
	Groups   map[string]diagnose.Class `json:"groups,omitempty"`
	Evidence []string                  `json:"evidence,omitempty"`
	Notes    []string                  `json:"notes,omitempty"`
}

// Modal is the verdict held longest over the steady span.
type Modal struct {
	Class    diagnose.Class `json:"stage"`
	Headline string         `json:"headline"`
	// Share is the fraction of the steady span's points with that
	// verdict.
	Share float64 `json:"share"`
	// Evidence is that of the longest span of the class inside the
	// steady span.
	Evidence []string `json:"evidence,omitempty"`
}

// diagnoseConfig is the live service's (diagnose.Config.ForRates): the
// verdict judges the pools the points carry.
func diagnoseConfig(window time.Duration) diagnose.Config {
	return diagnose.Config{}.ForRates(window)
}

// timeline judges every point from the points before it, as the live
// service does: two verdict windows and an interval back, so a verdict is
// held across a restart inside the newest window. Besides the
// deployment's spans and class at each point it gives each pool's.
func timeline(pts []ledger.Point, dc diagnose.Config, interval time.Duration) ([]Span, []diagnose.Class, map[string]*poolVerdicts) {
	back := dc.Lookback(interval)
	var out []Span
	classes := make([]diagnose.Class, len(pts))
	pools := map[string]*poolVerdicts{}
	lo := 0
	for i := range pts {
		t := pts[i].Time
		for lo < i && t.Sub(pts[lo].Time) > back {
			lo++
		}
		v := diagnose.Diagnose(pts[lo:i+1], dc)
		classes[i] = v.Class
		for _, g := range v.Groups {
			pv := pools[g.Group]
			if pv == nil {
				pv = &poolVerdicts{}
				pools[g.Group] = pv
			}
			pv.add(i, len(pts), t, g)
		}
		var groups map[string]diagnose.Class
		if v.Class == diagnose.Mixed {
			groups = make(map[string]diagnose.Class, len(v.Groups))
			for _, g := range v.Groups {
				groups[g.Group] = g.Class
			}
		}
		if n := len(out); n > 0 && out[n-1].Class == v.Class && maps.Equal(out[n-1].Groups, groups) {
			out[n-1].To, out[n-1].Evidence, out[n-1].Notes = t, v.Evidence, v.Notes
			continue
		}
		out = append(out, Span{From: t, To: t, Class: v.Class, Headline: v.Headline, Groups: groups,
			Evidence: v.Evidence, Notes: v.Notes})
	}
	return out, classes, pools
}

// modal is the class held at most of the steady span's points (classes,
// one per point), ties to the earlier class in diagnose.Classes, with the
// evidence of its longest span inside [from, to].
func modal(classes []diagnose.Class, spans []Span, from, to time.Time) Modal {
	n := map[diagnose.Class]int{}
	for _, c := range classes {
		n[c]++
	}
	best := diagnose.Insufficient
	for _, c := range diagnose.Classes {
		if n[c] > n[best] {
			best = c
		}
	}
	m := Modal{Class: best, Headline: diagnose.Headline(best)}
	if len(classes) > 0 {
		m.Share = float64(n[best]) / float64(len(classes))
	}
	var longest time.Duration = -1
	for _, s := range spans {
		if s.Class != best || s.To.Before(from) || s.From.After(to) {
			continue
		}
		if d := s.To.Sub(s.From); d > longest {
			// The span's headline names the pool it is about, where the
			// verdict does (as the timeline shows it).
			longest, m.Evidence, m.Headline = d, s.Evidence, s.Headline
		}
	}
	return m
}
